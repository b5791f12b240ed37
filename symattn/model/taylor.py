"""The two Taylor backends of a normalizer expression: python-flint power series and ``sympy.series``.

:func:`taylor` gives the exact Taylor coefficients ``c_0..c_order`` of an
expression in ``s`` at ``s = 0``, under a time budget: python-flint's
``fmpq_series`` (:func:`flint_taylor` of :func:`flint_eval`) when every node has a
rational expansion (exp, log, trigonometric and hyperbolic functions, rational
powers of a unit), Fractions, fast and without sympy's series; else
``sympy.series`` from both sides of 0 (:func:`sympy_taylor`), which also refuses a
non-analytic expression. sympy is imported only when an expression needs it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING

import flint

from symattn.core.errors import SymattnError
from symattn.core.limits import NORMALIZER_SECONDS, time_budget

if TYPE_CHECKING:
    import sympy

__all__ = ["symbol", "taylor", "flint_eval", "flint_taylor", "sympy_taylor", "exact", "is_nonzero",
           "NotRationalSeries"]


@functools.cache
def symbol() -> sympy.Symbol:
    """The symbol ``s`` of every normalizer expression."""
    import sympy

    return sympy.Symbol("s")


@functools.cache
def _flint_functions() -> dict:
    """The sympy functions python-flint's ``fmpq_series`` evaluates, by method name."""
    import sympy

    return {sympy.exp: "exp", sympy.log: "log", sympy.sin: "sin", sympy.cos: "cos",
            sympy.tan: "tan", sympy.sinh: "sinh", sympy.cosh: "cosh", sympy.tanh: "tanh",
            sympy.asin: "asin", sympy.atan: "atan", sympy.asinh: "asinh", sympy.atanh: "atanh"}


def exact(c: Fraction | sympy.Expr) -> sympy.Expr:
    """A coefficient as sympy: a Fraction becomes a ``sympy.Rational``.

    Parameters
    ----------
    c : Fraction or sympy.Expr
        A Taylor coefficient.

    Returns
    -------
    sympy.Expr
    """
    if isinstance(c, Fraction):
        import sympy

        return sympy.Rational(c.numerator, c.denominator)
    return c


class NotRationalSeries(Exception):
    """Internal: the flint fast path does not apply; use ``sympy.series``."""


def flint_eval(node: sympy.Expr) -> flint.fmpq_series:
    """Evaluate an expression tree over ``fmpq_series`` (at the current ``flint.ctx.cap``).

    Parameters
    ----------
    node : sympy.Expr
        An expression in ``s``.

    Returns
    -------
    flint.fmpq_series

    Raises
    ------
    NotRationalSeries
        A function or constant python-flint cannot expand over Q (the caller uses sympy).
    """
    import sympy

    if node == symbol():
        return flint.fmpq_series([0, 1])
    if node.is_Rational:
        return flint.fmpq_series([flint.fmpq(int(node.p), int(node.q))])
    if node.is_Add or node.is_Mul:
        terms = [flint_eval(arg) for arg in node.args]
        result = terms[0]
        for term in terms[1:]:
            result = result + term if node.is_Add else result * term
        return result
    if node.is_Pow and node.exp.is_Rational:
        base, exponent = flint_eval(node.base), node.exp
        if exponent.is_Integer:
            return base ** int(exponent) if exponent >= 0 else base.inv() ** int(-exponent)
        c0 = (base.coeffs() or [flint.fmpq(0)])[0]
        factor = sympy.Rational(int(c0.p), int(c0.q)) ** exponent if c0 > 0 else None
        if factor is None or not factor.is_Rational:
            raise NotRationalSeries
        unit_log = (base * (1 / c0)).log()  # type: ignore[operator]  # flint's stubs: series * fmpq
        return (unit_log * flint.fmpq(int(exponent.p), int(exponent.q))).exp() * flint.fmpq(
            int(factor.p), int(factor.q))
    functions = _flint_functions()
    if node.func in functions and len(node.args) == 1:
        return getattr(flint_eval(node.args[0]), functions[node.func])()
    raise NotRationalSeries


def flint_taylor(build: Callable[[], flint.fmpq_series], order: int) -> list[Fraction]:
    """Exact rational Taylor coefficients c_0..c_order of the series ``build()`` makes
    (at ``flint.ctx.cap = order + 1``), or raise ``NotRationalSeries``.

    Parameters
    ----------
    build : callable
        Makes the series (called under the precision ``order + 1``).
    order : int
        The highest degree.

    Returns
    -------
    list of Fraction
        ``c_0..c_order``.

    Raises
    ------
    NotRationalSeries
        The series has irrational coefficients or cannot be built over Q.
    """
    saved = flint.ctx.cap
    flint.ctx.cap = order + 1
    try:
        raw = build().coeffs()
    except (ValueError, ZeroDivisionError, OverflowError):
        # a constant term that is not 0 (exp, sin, ...), not 1 (log) or 0 (inv)
        raise NotRationalSeries from None
    finally:
        flint.ctx.cap = saved
    coeffs = [Fraction(int(c.p), int(c.q)) for c in raw]
    return coeffs + [Fraction(0)] * (order + 1 - len(coeffs))


def sympy_taylor(expr: sympy.Expr, order: int) -> list[sympy.Expr]:
    """Taylor coefficients c_0..c_order by ``sympy.series`` from both sides of 0.

    Parameters
    ----------
    expr : sympy.Expr
        An expression in ``s``.
    order : int
        The highest degree.

    Returns
    -------
    list of sympy.Expr
        ``c_0..c_order``.

    Raises
    ------
    SymattnError
        sympy cannot expand ``expr``, or ``expr`` is not analytic at 0 (a non-integer or negative power,
        or expansions from the two sides that differ); a time budget that ran out is passed on.
    """
    import sympy

    S = symbol()
    sides = []
    for direction in "+-":
        try:
            poly = sympy.expand(sympy.series(expr, S, 0, order + 1, dir=direction).removeO())
        except SymattnError:  # a time budget ran out: say so, not that phi cannot be expanded
            raise
        except Exception as exc:
            raise SymattnError(
                f"sympy cannot expand phi = {expr} at s = 0 ({type(exc).__name__}); give a "
                "normalizer analytic at 0 built from standard functions") from None
        coeffs = [sympy.S.Zero] * (order + 1)
        for term in sympy.Add.make_args(poly):
            coeff, power = term.as_coeff_exponent(S)
            if coeff.has(S) or not (power.is_Integer and power >= 0):
                raise SymattnError(
                    f"phi = {expr} is not analytic at s = 0 (its expansion has the term "
                    f"{term}); give a normalizer with a convergent Taylor series at 0")
            if power <= order:
                coeffs[int(power)] += coeff
        sides.append([c if c.is_Rational else sympy.simplify(c) for c in coeffs])
    if any(sympy.simplify(a - b) != 0 for a, b in zip(*sides)):
        raise SymattnError(f"phi = {expr} is not analytic at s = 0 (its expansions from the "
                           "left and from the right differ); give an analytic normalizer")
    return sides[0]


def taylor(expr: sympy.Expr, order: int) -> list[Fraction | sympy.Expr]:
    """Exact Taylor coefficients c_0..c_order of ``expr`` at s = 0, under a time budget:
    Fractions when python-flint expands it, else sympy numbers.

    Parameters
    ----------
    expr : sympy.Expr
        An expression in ``s``.
    order : int
        The highest degree.

    Returns
    -------
    list
        ``c_0..c_order`` (Fractions, or sympy numbers where python-flint cannot expand).

    Raises
    ------
    SymattnError
        The expansion fails (:func:`sympy_taylor`) or takes longer than its time budget.
    """
    with time_budget(NORMALIZER_SECONDS, f"the Taylor expansion of {str(expr)[:60]} to order {order}"):
        try:
            return flint_taylor(lambda: flint_eval(expr), order)
        except NotRationalSeries:
            return sympy_taylor(expr, order)


def is_nonzero(c: Fraction | sympy.Expr) -> bool:
    """Whether a Taylor coefficient is nonzero, decided exactly.

    Parameters
    ----------
    c : Fraction or sympy.Expr
        A Taylor coefficient.

    Returns
    -------
    bool

    Raises
    ------
    SymattnError
        sympy cannot decide whether ``c`` is zero.
    """
    if isinstance(c, Fraction):
        return c != 0
    if c.is_zero is None:
        raise SymattnError(f"cannot decide whether the Taylor coefficient {c} is zero; "
                           "rewrite phi in a simpler closed form")
    return not c.is_zero
