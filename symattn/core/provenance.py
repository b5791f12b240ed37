"""Provenance of a JSON result: what produced it, how sure it is, which symattn.

Every command's ``--json`` output and every row of a sweep store carries a
``provenance`` object (:func:`provenance`):

``inputs``
    the inputs that produced the result (architecture, bank, seed, method, ...),
    exactly as the computation used them;
``kind``
    how the result is known, on the exactness ladder of the paper's
    companion: ``"exact"`` (rational or modular arithmetic with a proof),
    ``"certified"`` (ball arithmetic, or a proof that needs no theorem),
    ``"conditional"`` (certified assuming a bound the paper proves),
    ``"numerical at N digits"``, or ``"none"`` (undecided, or only a bound);
``symattn``
    the version of symattn that computed it.

The kind of each analysis is decided by one function here (:func:`spectrum_kind`,
:func:`jet_kind`, :func:`dimension_kind`), used by the commands and by
:mod:`symattn.sweep.run` alike.

Examples
--------
>>> p = provenance("exact", {"depth": 2, "seed": 0})
>>> p["kind"], p["inputs"], p["symattn"] == __import__("symattn").__version__
('exact', {'depth': 2, 'seed': 0}, True)
"""

from __future__ import annotations

from typing import Any

from symattn.core.errors import InternalError

__all__ = ["KINDS", "provenance", "architecture_inputs", "spectrum_kind", "jet_kind", "dimension_kind",
           "numerical_kind"]

#: The kinds a result may have (``numerical`` carries its digits, see :func:`numerical_kind`).
KINDS = ("exact", "certified", "conditional", "numerical", "none")


def numerical_kind(digits: int) -> str:
    """The kind of a numerical result at ``digits`` significant digits.

    >>> numerical_kind(16)
    'numerical at 16 digits'
    """
    return f"numerical at {int(digits)} digits"


def provenance(kind: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """The ``provenance`` object of a JSON result (see the module docstring)."""
    from symattn import __version__

    if kind.split(" ")[0] not in KINDS:
        raise InternalError(f"unknown kind {kind!r}; one of {KINDS}")
    return {"inputs": inputs, "kind": kind, "symattn": __version__}


def architecture_inputs(arch) -> dict[str, Any]:
    """The inputs that name an :class:`~symattn.model.architecture.Architecture`: depth,
    widths, ranks, tokens, the normalizers as given and, for layers beyond the paper's
    model, ``layers`` (:meth:`~symattn.model.architecture.Architecture.describe`).

    >>> from symattn.model.architecture import Architecture
    >>> architecture_inputs(Architecture.uniform(2, 3, 1, 2, "exp"))
    {'depth': 2, 'widths': [3, 3, 3], 'ranks': [1, 1], 'tokens': 2, 'normalizers': ['exp', 'exp']}
    >>> architecture_inputs(Architecture.uniform(1, 3, 1, 2, "exp", heads=2))["layers"]
    'layer 1: skip none, mask none, 2 heads r = [1, 1]'
    """
    out = {"depth": arch.depth, "widths": list(arch.widths), "ranks": list(arch.ranks),
           "tokens": arch.tokens, "normalizers": [phi.name for phi in arch.normalizers]}
    if arch.parts():
        out["layers"] = arch.describe()
    return out


def spectrum_kind(result: dict[str, Any]) -> str:
    """Kind of a spectrum's JSON: its ``certificate`` when it has one; else
    ``exact`` for a complete Smith form over Q, ``conditional`` for modular
    orders matching the proven divisibility bounds of App. D.2, ``none`` otherwise.

    >>> spectrum_kind({"method": "modular", "certified": True, "undecided": 0})
    'conditional'
    """
    if result.get("certificate") in KINDS:
        return result["certificate"]
    if result.get("undecided"):
        return "none"
    if result.get("method") == "exact":
        return "exact"
    return "conditional" if result.get("certified") else "none"


def jet_kind(result: dict[str, Any]) -> str:
    """Kind of a sharp jet degree: ``exact`` when ``D T_N`` is injective (a full
    rank, mod p or over Q, is a proof) and the lower jets are shown, exactly
    over Q, to miss the last score; ``numerical at N digits`` for a decided
    degree of the numerical tier (``method: numerical``); ``none`` otherwise.

    >>> jet_kind({"sharp_degree": 7, "immersion": True, "lower_jets_independent_of_last": True})
    'exact'
    >>> jet_kind({"sharp_degree": 3, "immersion": True, "method": "numerical", "digits": 300})
    'numerical at 300 digits'
    """
    decided = result.get("sharp_degree") is not None and result.get("immersion")
    if result.get("method") == "numerical":  # the numerical jet tier: never exact
        return numerical_kind(result["digits"]) if decided else "none"
    return "exact" if decided and result.get("lower_jets_independent_of_last") else "none"


def dimension_kind(result: dict[str, Any]) -> str:
    """Kind of a neuromanifold dimension: ``exact`` when its exact lower bound
    (a rank mod p or over Q) meets its exact upper bound, else ``none``.

    >>> dimension_kind({"certified": True}), dimension_kind({"certified": False})
    ('exact', 'none')
    """
    return "exact" if result.get("certified") else "none"
