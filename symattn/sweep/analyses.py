"""The analyses a sweep can run: one adapter each, from a case's architecture to its JSON result.

Each :class:`Analysis` calls the one implementation of its analysis
(:func:`~symattn.analyses.spectrum.native_spectrum`,
:func:`~symattn.analyses.jets.sharp_degree`,
:func:`~symattn.analyses.dimension.neuromanifold_dimension`,
:func:`~symattn.analyses.bank.least_bank`,
:func:`~symattn.analyses.dimension.float32_rank_near_collapse`); the formula columns come
from the statements (:mod:`symattn.theorems.statements`). Adding an analysis is adding
an entry to :data:`ANALYSES`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from symattn.core.provenance import dimension_kind, jet_kind, numerical_kind, spectrum_kind

__all__ = ["ANALYSES", "Analysis", "build_architecture"]


def build_architecture(arch: dict):
    """The :class:`~symattn.model.architecture.Architecture` of a case's architecture: its canonical
    dict with ``normalizer_specs`` (ranks ``None`` mean one per layer).

    >>> build_architecture({"depth": 1, "widths": [2, 2], "ranks": None, "tokens": 2,
    ...                     "normalizer_specs": ["cosh"]}).native_size
    8
    """
    from symattn.model.architecture import Architecture
    from symattn.model.normalizer import normalizers

    ranks = arch.get("ranks") or [1] * arch["depth"]
    out = Architecture(tuple(arch["widths"]), tuple(ranks), arch["tokens"],
                       normalizers(list(arch["normalizer_specs"]), arch["depth"]))
    if arch.get("family"):  # a family of symattn.analyses.conjectures.FAMILY_KINDS
        from symattn.analyses.conjectures import FAMILY_KINDS

        out = out.with_layers(**FAMILY_KINDS[arch["family"]])
    from symattn.analyses.conjectures import family_of

    if family_of(out) != arch.get("family"):  # the case's key names the stack it computes
        from symattn.core.errors import InternalError

        raise InternalError(f"the case names family {arch.get('family')!r} but its stack is of family "
                            f"{family_of(out)!r}; please report this bug")
    return out


def _blocks(arch) -> bool:
    """A transformer-block stack (biases, LayerNorm, MLP: the tiers below the exact one apply)."""
    return any(layer.has_block_parts for layer in arch.layers)


def _spectrum(arch, seed: int, options: dict) -> dict:
    """The spectrum (for a transformer block by the constants route of
    :func:`~symattn.analyses.spectrum.native_spectrum` where the modular series refuse it); where
    that is undecided, the numerical tier of :mod:`symattn.analyses.numerical_spectrum`
    (``exactness: numerical``, the reason in ``notes``)."""
    from symattn.analyses.spectrum import native_spectrum
    from symattn.core.errors import Undecided

    try:
        return native_spectrum(arch, bank=options["bank"], seed=seed, values=options["values"],
                               method=options["method"], order=options["order"]).to_json()
    except Undecided as exc:  # the exact series refuse it, or the constants route was undecided
        if not _blocks(arch):
            raise
        from symattn.analyses.numerical_spectrum import numerical_path_spectrum

        out = numerical_path_spectrum(arch, seed=seed).to_json()
        out["notes"].insert(0, f"the exact tier refused this stack: {exc}")
        return out


def _spectrum_kind(result: dict) -> str:
    return "numerical" if result.get("exactness") == "numerical" else spectrum_kind(result)


def _jet(arch, seed: int, options: dict) -> dict:
    from symattn.analyses.jets import generic_effective, sharp_degree
    from symattn.core.errors import Undecided
    from symattn.theorems import statements

    covered = statements.THEOREM_3.covers(arch)
    formula = statements.THEOREM_3.closed_form(arch) if covered else None
    eta = None if _blocks(arch) else generic_effective(arch, seed)  # a block has no score model
    try:
        res = sharp_degree(arch, eta, seed=seed, method=options["method"], max_degree=options["max_degree"],
                           hint=formula).label_generic(formula, given=False).to_json()  # eta: the seeded draw
    except Undecided as exc:
        if not _blocks(arch):
            raise
        # no jet from X = 0 in exact series (nonzero scores or irrational constants there): undecided
        return {"sharp_degree": None, "immersion": False, "lower_jets_independent_of_last": None,
                "undecided": str(exc), "theorem": None, "formula": None,
                "formula_source": f"none ({statements.NO_THEOREM})", "notes": [f"undecided: {exc}"]}
    res.pop("profile")
    res.update(formula=formula, formula_source="Prop. C.1" if covered else f"none ({statements.NO_THEOREM})")
    return res


def _dimension(arch, seed: int, options: dict) -> dict:
    """The dimension; a transformer block the exact series refuse gets the ball tier
    (:func:`~symattn.analyses.dimension.ball_dimension`, its ``tier`` says so)."""
    from symattn.analyses.dimension import neuromanifold_dimension
    from symattn.core.errors import Undecided

    try:
        return neuromanifold_dimension(arch, seed=seed, method=options["method"]).to_json()
    except Undecided:
        if not _blocks(arch):
            raise
        return neuromanifold_dimension(arch, seed=seed, method="numerical").to_json()


def _dimension_kind(result: dict) -> str:
    ball = result.get("tier", "exact") != "exact"
    return ("certified" if result.get("certified") else "none") if ball else dimension_kind(result)


def _bank(arch, seed: int, options: dict) -> dict:
    """Least size of the seeded bank that separates (:func:`symattn.analyses.bank.least_bank`, the
    family ``random`` of the seed: the divided frame E(0) of App. D.3 where a statement gives it).

    Banks of one seed are nested (``random_bank``'s first inputs do not depend on the size),
    so separation is monotone in the size, and the least size is searched upward from the
    counting bound ``ceil(visible / (d n))``, which holds for every bank. Separation is
    decided by a rank mod p (full rank mod p proves it).
    """
    from symattn.analyses.bank import least_bank

    result = least_bank(arch, "random", trials=1, seed=seed, values=options["values"]).to_json()
    notes = [f"separation decided by the rank mod p of E(0) on seeded nested banks (seed {seed}); "
             "a full rank proves separation, a deficient one mod p is not a proof over Q"] + result["notes"]
    return {**result, "threshold": result["least_size"], "per_input": arch.d * arch.tokens, "notes": notes}


def _float32(arch, seed: int, options: dict) -> dict:
    from symattn.analyses.dimension import float32_rank_near_collapse

    start = time.perf_counter()
    rows = float32_rank_near_collapse(arch, options["scales"], bank=options["bank"], seed=seed)
    return {"rows": rows, "bank": options["bank"], "seconds": round(time.perf_counter() - start, 3),
            "notes": ["exact_rank: rank mod p of the native jet Jacobian at the rational point "
                      "(exact lower bound); numerical_rank: float32 Jacobian on standard normal "
                      "inputs, thresholded as numpy.linalg.matrix_rank (numerical)"]}


def _bank_kind(result: dict) -> str:
    return "exact" if result["threshold"] == result["counting_bound"] else "none"


def _equal_widths(arch) -> str | None:
    if len(set(arch.widths)) != 1:
        return "needs equal widths"
    if any(r > arch.widths[0] for r in arch.ranks):
        return "needs r_i <= d"
    return None


@dataclass(frozen=True)
class Analysis:
    """One kind of case a sweep can run.

    ``run(arch, seed, options) -> dict`` is the library call (its JSON result);
    ``kind(result) -> str`` its exactness kind; ``options`` the defaults and the
    allowed values (a tuple of choices, or a type); ``uses_ranks`` whether the
    query/key widths enter (else they are left out of the store key);
    ``applicable(arch)`` a reason the architecture is out of scope, or None;
    ``cost_weight(order)`` scales the rough cost (native parameters times the deepest
    divisibility order plus one) that orders the submission, largest first;
    ``rational(options)`` whether these options compute with exact or modular series (the spec
    then refuses a normalizer with an irrational Taylor coefficient before any case runs).
    """

    name: str
    run: Callable[[Any, int, dict], dict]
    kind: Callable[[dict], str]
    options: dict[str, tuple[Any, Any]]
    uses_ranks: bool = True
    applicable: Callable[[Any], "str | None"] = lambda arch: None
    description: str = ""
    cost_weight: Callable[[int], int] = lambda order: 1
    rational: Callable[[dict], bool] = lambda options: True


#: Every analysis a sweep spec may name; adding one is adding an entry here.
ANALYSES: dict[str, Analysis] = {a.name: a for a in [
    Analysis("spectrum", _spectrum, _spectrum_kind,
             {"bank": ("auto", "bank"), "values": ("identity", ("identity", "random")),
              "method": ("modular", ("modular", "exact")), "order": (None, "order")},
             applicable=_equal_widths, description="native contact spectrum (Theorem 4, Prop. D.1)",
             # the column proof evaluates the Jacobian to order b modulo about b/3 primes (height
             # bounds grow by some 8 bits per power of u): its work grows like the square of the order
             cost_weight=lambda order: 1 + order // 32),
    Analysis("jet", _jet, jet_kind,
             {"method": ("modular", ("modular", "exact")), "max_degree": (200, "order")},
             uses_ranks=False, description="sharp zero-input jet degree (Theorem 3, Prop. C.1)",
             # its lower-jet check runs over Q (rational series to the sharp degree): on
             # benchmarks/sweep-heavy.toml a jet took 2-12x the spectrum of the same architecture
             cost_weight=lambda order: 4),
    Analysis("dimension", _dimension, _dimension_kind, {"method": ("modular", ("modular", "exact", "numerical"))},
             description="certified neuromanifold dimension (HMK)",
             rational=lambda options: options["method"] != "numerical"),
    Analysis("float32", _float32, lambda result: numerical_kind(7),
             {"scales": (["1", "1/10", "1/100", "1/1000"], "scales"), "bank": (250, "count")},
             description="float32 Jacobian rank (as NeuroDim estimates it) beside the exact rank, "
                         "near collapse Q, K -> s Q, s K"),
    Analysis("bank", _bank, _bank_kind, {"values": ("identity", ("identity", "random"))},
             applicable=_equal_widths, description="least separating seeded bank (App. D.3)"),
]}


