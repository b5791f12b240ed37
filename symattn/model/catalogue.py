"""The catalogue of named normalizers, and the validation of a normalizer given as text or sympy.

:data:`CATALOGUE` maps the names (``exp``, ``cosh``, ``gauss``, ...) to one
:class:`Entry` each: the expression in ``s`` and the same function as a python-flint power
series, so a catalogue normalizer's Taylor data need no sympy (checked against the
expression where used). :func:`catalogue_of` recognises an expression that *is* a catalogue
entry (``exp(s)``, ``exp(1*s)`` are ``exp``): a normalizer is known by what it computes. :func:`parse`
turns any other string into an expression through the whitelist parser
:func:`symattn.core.parse.parse_expression` (never ``eval``), or validates a
sympy expression, and refuses unknown names, unknown functions and other free
symbols with one line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import flint

from symattn.core.errors import SymattnError
from symattn.model.taylor import symbol

if TYPE_CHECKING:
    import sympy

__all__ = ["CATALOGUE", "Entry", "parse", "catalogue_key", "catalogue_of"]


@dataclass(frozen=True)
class Entry:
    """One catalogue normalizer: its expression in ``s`` (``text``) and the same function as a
    python-flint power series (``series``, an ``fmpq_series -> fmpq_series`` map). The series is
    data checked where it is used (:func:`symattn.model.expansion.catalogue_check`, against an
    expansion of ``text``); every property of the normalizer is derived from ``text``
    (:class:`~symattn.model.normalizer.Normalizer`), none is stated here."""

    text: str
    series: Callable[[flint.fmpq_series], flint.fmpq_series]


#: The catalogue: one entry per name (a new normalizer is one line here).
CATALOGUE: dict[str, Entry] = {
    "exp": Entry("exp(s)", lambda s: s.exp()),
    "cosh": Entry("cosh(s)", lambda s: s.cosh()),
    "gauss": Entry("exp(s^2)", lambda s: (s * s).exp()),
    "1+s^2": Entry("1 + s^2", lambda s: 1 + s * s),
    "exp(s^2+s^3)": Entry("exp(s^2 + s^3)", lambda s: (s * s + s * s * s).exp()),
    "exp(s^3)": Entry("exp(s^3)", lambda s: (s * s * s).exp()),
    "logistic": Entry("1 + tanh(s)/2", lambda s: 1 + s.tanh() / 2),
}


def parse(spec: str | sympy.Expr) -> tuple[str, sympy.Expr]:
    """Return ``(name, expression in s)`` for a string (not a catalogue name) or expression.

    Parameters
    ----------
    spec : str or sympy.Expr
        An expression in ``s`` (text, read by the whitelist parser, never ``eval``) or a sympy expression.

    Returns
    -------
    tuple
        ``(name, expression)``: the name shown (the catalogue name when ``spec`` equals an entry).

    Raises
    ------
    SymattnError
        An empty text, an unknown name, or an expression in other symbols or undefined functions.
    """
    import sympy
    from sympy.core.function import AppliedUndef

    from symattn.core.parse import parse_expression

    S = symbol()
    names = ", ".join(CATALOGUE)
    if isinstance(spec, str):
        name = spec.strip()
        if not name:
            raise SymattnError(f"empty normalizer; give a catalogue name ({names}) "
                               "or an expression in s")
        if name.isidentifier() and name not in ("s", "pi", "E"):
            raise SymattnError(f"unknown normalizer {name!r}; use a catalogue name "
                               f"({names}) or an expression in s")
        try:
            expr = parse_expression(name)
        except SymattnError as exc:
            raise SymattnError(f"normalizer: {exc}; or give a catalogue name ({names})") from None
    else:
        try:
            expr = sympy.sympify(spec, strict=True)
        except sympy.SympifyError:
            raise SymattnError(f"a normalizer must be a string or a sympy expression in s, "
                               f"not {type(spec).__name__}") from None
        if not isinstance(expr, sympy.Expr):
            raise SymattnError(f"a normalizer must be a sympy expression in s, not {expr!r}")
        name = str(expr)
        expr = expr.subs({x: S for x in expr.free_symbols if x.name == "s"})
    unknown = sorted(str(f.func) for f in expr.atoms(AppliedUndef))
    if unknown:
        raise SymattnError(f"normalizer {name!r} uses unknown function(s) {', '.join(unknown)}; "
                           "use sympy functions such as exp, cosh, tanh")
    others = sorted(str(x) for x in expr.free_symbols - {S})
    if others:
        raise SymattnError(f"normalizer {name!r} depends on {', '.join(others)} besides s; "
                           "write phi as an expression in s alone (constants as numbers, pi, E)")
    return name, expr


def catalogue_key(spec) -> str | None:
    """The catalogue name ``spec`` stands for (spaces ignored), or None.

    Parameters
    ----------
    spec : object
        A normalizer's spelling (anything: only a string can name an entry).

    Returns
    -------
    str or None
    """
    if isinstance(spec, str):
        key = spec.strip().replace(" ", "")
        if key in CATALOGUE:
            return key
    return None


@cache
def _catalogue_expressions() -> dict:
    from symattn.core.parse import parse_expression

    return {name: parse_expression(entry.text) for name, entry in CATALOGUE.items()}


def catalogue_of(expr: sympy.Expr) -> str | None:
    """The catalogue name whose expression equals ``expr`` identically (sympy's canonical form,
    then ``simplify`` of the difference for candidates whose Taylor coefficients agree), or None.

    Parameters
    ----------
    expr : sympy.Expr
        An expression in ``s``.

    Returns
    -------
    str or None
        The catalogue name, or None when no entry equals ``expr`` provably.

    Examples
    --------
    >>> from symattn.core.parse import parse_expression
    >>> catalogue_of(parse_expression("exp(1*s)")), catalogue_of(parse_expression("exp(2*s)"))
    ('exp', None)
    >>> catalogue_of(parse_expression("(exp(s) + exp(-s))/2"))
    'cosh'
    >>> catalogue_of(parse_expression("exp(s) + s^7")) is None   # equal Taylor data to order 6 is no proof
    True
    """
    import sympy

    from symattn.model.taylor import taylor

    known = _catalogue_expressions()
    for name, e in known.items():
        if e == expr:
            return name
    mine = None
    for name, e in known.items():
        if mine is None:
            mine = taylor(expr, 6)
        if taylor(e, 6) == mine and sympy.simplify(e - expr) == 0:
            return name
    return None
