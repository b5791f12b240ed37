"""What a normalizer expression does on the whole real line: bounds, positivity, analyticity.

The theorems need phi only near 0; some analyses need more (the path rank evaluates the
network at ``t = 1``, so every normalizer must be positive and real-analytic on all of ``R``).
Those properties are *derived from the expression*, never looked up by a name:
:func:`real_line` walks the sympy tree of ``phi(s)`` with ``s`` ranging over ``R`` and
propagates closed intervals (mpmath numbers at 50 digits, each endpoint moved outward by a
relative ``10^-40``, infinite endpoints allowed). A node is *analytic on R* when its
function is (``exp``, ``sin``, ``cos``, ``sinh``, ``cosh``, ``tanh``, ``atan``, ``asinh``, ``erf``,
polynomials) or when its argument's interval avoids its singular set (a reciprocal or negative
power of an interval without 0, ``log``, ``sqrt`` and rational powers of an interval above 0).
Unknown functions decide nothing (not analytic, positivity unknown). Positivity holds when the
interval's lower end is above 0, or sympy's own assumptions prove ``phi(x) > 0`` for real ``x``
(``exp`` of anything real: its infimum may be 0 while every value is positive).

>>> from symattn.core.parse import parse_expression
>>> line = real_line(parse_expression("1 + tanh(s)/2"))
>>> line.positive, line.analytic, 0.49 < line.lower < 0.5
(True, True, True)
>>> real_line(parse_expression("1/(1 - s)")).analytic
False
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import mpmath

from symattn.model.taylor import symbol

if TYPE_CHECKING:
    import sympy

__all__ = ["RealLine", "real_line"]

_DIGITS = 50
_SLACK = mpmath.mpf(10) ** -40
_INF = mpmath.inf


@dataclass(frozen=True)
class RealLine:
    """``phi`` on ``R``: an enclosure ``[lower, upper]`` of its values, whether it is real-analytic
    on all of ``R`` (proved, else False) and whether ``phi(x) > 0`` for every real ``x`` (proved,
    else False)."""

    lower: mpmath.mpf
    upper: mpmath.mpf
    analytic: bool
    positive: bool


def _out(lo, hi) -> tuple:
    """``[lo, hi]`` widened outward by the slack (infinite ends stay)."""
    lo = lo - abs(lo) * _SLACK - _SLACK if mpmath.isfinite(lo) else lo
    hi = hi + abs(hi) * _SLACK + _SLACK if mpmath.isfinite(hi) else hi
    return lo, hi


def _times(a, b):
    """``a b`` with ``0 * inf = 0`` (an interval end times an exact zero factor)."""
    if a == 0 or b == 0:
        return mpmath.mpf(0)
    return a * b


def _mul(x: tuple, y: tuple) -> tuple:
    ends = [_times(a, b) for a in x for b in y]
    return _out(min(ends), max(ends))


def _monotone(f: Callable, x: tuple) -> tuple:
    return _out(f(x[0]), f(x[1]))


def _contains_zero(x: tuple) -> bool:
    return x[0] <= 0 <= x[1]


def _power(x: tuple, n: int) -> tuple:
    """``x^n`` for an integer ``n`` (``0`` not in ``x`` when ``n < 0``)."""
    if n == 0:
        return (mpmath.mpf(1), mpmath.mpf(1))
    if n < 0:
        lo, hi = _power(x, -n)
        return _out(1 / hi if hi != 0 else _INF, 1 / lo if lo != 0 else _INF) if lo > 0 else \
            _out(1 / hi if hi != 0 else -_INF, 1 / lo if lo != 0 else -_INF)
    ends = [x[0] ** n, x[1] ** n]
    if n % 2 == 0 and _contains_zero(x):
        return _out(mpmath.mpf(0), max(ends))
    return _out(min(ends), max(ends))


_WHOLE = (-_INF, _INF)


def _walk(e) -> tuple[tuple, bool]:
    """``(interval, analytic)`` of the sympy node ``e`` over ``s`` in ``R``."""
    import sympy

    if e == symbol():
        return _WHOLE, True
    if e.is_Number or e in (sympy.pi, sympy.E) or (e.is_number and e.is_real):
        v = mpmath.mpf(sympy.N(e, _DIGITS + 5))
        return _out(v, v), True
    if e.is_Add or e.is_Mul:
        parts = [_walk(a) for a in e.args]
        acc = parts[0][0]
        for x, _ in parts[1:]:
            acc = _out(acc[0] + x[0], acc[1] + x[1]) if e.is_Add else _mul(acc, x)
        return acc, all(a for _, a in parts)
    if e.is_Pow:
        base, exponent = e.args
        if exponent.is_Integer:
            x, analytic = _walk(base)
            n = int(exponent)
            if n < 0 and _contains_zero(x):
                return _WHOLE, False
            return _power(x, n), analytic
        if exponent.is_number:  # a rational or real power: the base must stay above 0
            x, analytic = _walk(base)
            if x[0] <= 0:
                return _WHOLE, False
            p = mpmath.mpf(sympy.N(exponent, _DIGITS + 5))
            return _out(*sorted((x[0] ** p, x[1] ** p))), analytic
        if base.is_number and base.is_positive:  # c^f = exp(f log c)
            return _walk(sympy.exp(exponent * sympy.log(base)))
        return _WHOLE, False
    if isinstance(e, sympy.Function) and len(e.args) == 1:
        x, analytic = _walk(e.args[0])
        f = type(e)
        if f in (sympy.exp, sympy.sinh, sympy.tanh, sympy.atan, sympy.asinh, sympy.erf):
            fn = {sympy.exp: mpmath.exp, sympy.sinh: mpmath.sinh, sympy.tanh: mpmath.tanh,
                  sympy.atan: mpmath.atan, sympy.asinh: mpmath.asinh, sympy.erf: mpmath.erf}[f]
            return _monotone(fn, x), analytic
        if f is sympy.cosh:
            ends = [mpmath.cosh(x[0]), mpmath.cosh(x[1])]
            return _out(mpmath.mpf(1) if _contains_zero(x) else min(ends), max(ends)), analytic
        if f is sympy.sech:
            ends = [mpmath.sech(x[0]), mpmath.sech(x[1])]
            return _out(min(ends), mpmath.mpf(1) if _contains_zero(x) else max(ends)), analytic
        if f in (sympy.sin, sympy.cos):
            return _out(mpmath.mpf(-1), mpmath.mpf(1)), analytic
        if f in (sympy.log, sympy.sqrt) or (f is sympy.acosh and x[0] > 1):
            if x[0] <= 0:
                return _WHOLE, False
            fn = {sympy.log: mpmath.log, sympy.acosh: mpmath.acosh}.get(f, mpmath.sqrt)
            return _monotone(fn, x), analytic
        if f is sympy.Abs and (x[0] > 0 or x[1] < 0):
            return _out(*sorted((abs(x[0]), abs(x[1])))), analytic
        return _WHOLE, False
    return _WHOLE, False


def real_line(expr: sympy.Expr) -> RealLine:
    """Derive what ``phi = expr`` (an expression in ``s``) does on all of ``R`` (module docstring).

    Parameters
    ----------
    expr : sympy.Expr
        The normalizer's expression in the symbol ``s``.

    Returns
    -------
    RealLine
        The enclosure of its values and the two derived properties.

    Examples
    --------
    >>> from symattn.core.parse import parse_expression
    >>> [real_line(parse_expression(t)).positive for t in ("exp(s)", "cosh(s)", "1 + s", "1 + s^2")]
    [True, True, False, True]
    """
    import sympy

    with mpmath.workdps(_DIGITS):
        (lo, hi), analytic = _walk(expr)
        positive = bool(lo > 0)
    if not positive and analytic:
        x = sympy.Symbol("x", real=True)
        positive = bool(expr.subs(symbol(), x).is_positive)
    return RealLine(lo, hi, analytic, positive)
