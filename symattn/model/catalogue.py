"""The catalogue of named normalizers, and the validation of a normalizer given as text or sympy.

:data:`CATALOGUE` maps the names (``exp``, ``cosh``, ``gauss``, ...) to their
expressions in ``s``; :data:`CATALOGUE_SERIES` gives each as a python-flint power
series, so a catalogue normalizer's Taylor data need no sympy
(``tests/test_normalizer.py`` checks each against its expression). :func:`parse`
turns any other string into an expression through the whitelist parser
:func:`symattn.core.parse.parse_expression` (never ``eval``), or validates a
sympy expression, and refuses unknown names, unknown functions and other free
symbols with one line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import flint

from symattn.core.errors import SymattnError
from symattn.model.taylor import symbol

if TYPE_CHECKING:
    import sympy

__all__ = ["CATALOGUE", "CATALOGUE_SERIES", "parse", "catalogue_key"]


#: Catalogue names and the expressions they stand for.
CATALOGUE = {
    "exp": "exp(s)",
    "cosh": "cosh(s)",
    "gauss": "exp(s^2)",
    "1+s^2": "1 + s^2",
    "exp(s^2+s^3)": "exp(s^2 + s^3)",
    "exp(s^3)": "exp(s^3)",
    "logistic": "1 + tanh(s)/2",
}


#: The same catalogue expressions as python-flint power series in ``s`` (an
#: ``fmpq_series``): the Taylor data of a catalogue normalizer, without sympy.
#: ``tests/test_normalizer.py`` checks each against the expression in :data:`CATALOGUE`.
CATALOGUE_SERIES: dict[str, Callable[[flint.fmpq_series], flint.fmpq_series]] = {
    "exp": lambda s: s.exp(),
    "cosh": lambda s: s.cosh(),
    "gauss": lambda s: (s * s).exp(),
    "1+s^2": lambda s: 1 + s * s,
    "exp(s^2+s^3)": lambda s: (s * s + s * s * s).exp(),
    "exp(s^3)": lambda s: (s * s * s).exp(),
    "logistic": lambda s: 1 + s.tanh() / 2,
}


def parse(spec: str | sympy.Expr) -> tuple[str, sympy.Expr]:
    """Return ``(name, expression in s)`` for a string (not a catalogue name) or expression."""
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
    """The catalogue name ``spec`` stands for (spaces ignored), or None."""
    if isinstance(spec, str):
        key = spec.strip().replace(" ", "")
        if key in CATALOGUE:
            return key
    return None
