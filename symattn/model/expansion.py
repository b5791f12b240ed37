"""An independent expansion of a normalizer's expression, and the check of the catalogue's data.

A catalogue normalizer takes its Taylor data from a python-flint builder
(:data:`symattn.model.catalogue.CATALOGUE_SERIES`), not from the expression shown
beside it. :func:`independent_taylor` expands the expression's *text* a second
way (a whitelist walk of Python's syntax tree, never ``eval``, and naive
Fraction power series); :func:`catalogue_check` compares the builder's
coefficients with it wherever they are used (:class:`~symattn.model.normalizer.Normalizer`
calls it on every expansion of a catalogue entry) and raises
:class:`~symattn.core.errors.CheckFailed` on a difference. The naive
reference evaluation of the layers (:mod:`symattn.model.reference`) takes its
normalizer coefficients from here too.
"""

from __future__ import annotations

import ast
from fractions import Fraction
from typing import Any, Sequence

from symattn.core.errors import CheckFailed, SymattnError

__all__ = ["independent_taylor", "catalogue_check"]

_TAYLOR: dict[str, list[Fraction]] = {}


def independent_taylor(expr, order: int) -> list[Fraction]:
    """Taylor coefficients ``c_0..c_order`` of a normalizer expression at ``s = 0``, cached.

    ``expr`` is the expression's text (or a sympy expression, read through its text); it is
    parsed by a whitelist walk of Python's syntax tree (never ``eval``) and expanded naively
    over Fractions: sums, products, quotients, integer powers, ``exp``, ``log``, ``cosh``,
    ``sinh`` and ``tanh`` by their power-series recurrences. A second expansion that shares
    nothing with python-flint or sympy; an expression with other functions falls back to
    ``sympy.series``.

    Parameters
    ----------
    expr : str or sympy.Expr
        The normalizer's expression in ``s``.
    order : int
        The highest degree.

    Returns
    -------
    list of Fraction
        ``c_0..c_order``.

    Examples
    --------
    >>> independent_taylor("1 + tanh(s)/2", 5)
    [Fraction(1, 1), Fraction(1, 2), Fraction(0, 1), Fraction(-1, 6), Fraction(0, 1), Fraction(1, 15)]
    """
    text = str(expr)
    cached = _TAYLOR.get(text, [])
    if len(cached) > order:
        return cached[: order + 1]
    want = max(order + 1, 2 * len(cached), 9)
    try:
        out = _Naive(want).walk(ast.parse(text.replace("^", "**"), mode="eval").body)
    except _Unsupported:
        out = _sympy_taylor(expr, want)
    _TAYLOR[text] = out
    return out[: order + 1]


class _Unsupported(Exception):
    """Internal: the naive expander does not cover this expression."""


class _Naive:
    """Power series mod ``s^N`` as lists of Fractions."""

    def __init__(self, N: int):
        self.N = N

    def const(self, c) -> list[Fraction]:
        return [Fraction(c)] + [Fraction(0)] * (self.N - 1)

    def mul(self, a, b):
        return [sum((a[i] * b[k - i] for i in range(k + 1) if a[i] and b[k - i]), Fraction(0))
                for k in range(self.N)]

    def inv(self, a):
        if a[0] == 0:
            raise _Unsupported
        r = [1 / a[0]]
        for k in range(1, self.N):
            r.append(-sum((a[j] * r[k - j] for j in range(1, k + 1) if a[j]), Fraction(0)) / a[0])
        return r

    def exp(self, f):
        if f[0] != 0:
            raise _Unsupported
        e = [Fraction(1)]
        for k in range(1, self.N):
            e.append(sum((j * f[j] * e[k - j] for j in range(1, k + 1) if f[j]), Fraction(0)) / k)
        return e

    def log(self, f):
        if f[0] != 1:
            raise _Unsupported
        h = [Fraction(0)] * self.N  # h' f = f'
        for m in range(self.N - 1):
            acc = sum(((j + 1) * h[j + 1] * f[m - j] for j in range(m) if h[j + 1]), Fraction(0))
            h[m + 1] = ((m + 1) * f[m + 1] - acc) / (m + 1)
        return h

    def walk(self, node) -> list[Fraction]:
        if isinstance(node, ast.Name) and node.id == "s":
            return [Fraction(0), Fraction(1)] + [Fraction(0)] * (self.N - 2)
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return self.const(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            x = self.walk(node.operand)
            return [-c for c in x] if isinstance(node.op, ast.USub) else x
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Pow):
                if not (isinstance(node.right, ast.Constant) and isinstance(node.right.value, int)):
                    raise _Unsupported
                base, k = self.walk(node.left), node.right.value
                if not 0 <= k <= 1000:
                    raise _Unsupported
                out = self.const(1)
                for _ in range(k):
                    out = self.mul(out, base)
                return out
            a, b = self.walk(node.left), self.walk(node.right)
            if isinstance(node.op, ast.Add):
                return [x + y for x, y in zip(a, b)]
            if isinstance(node.op, ast.Sub):
                return [x - y for x, y in zip(a, b)]
            if isinstance(node.op, ast.Mult):
                return self.mul(a, b)
            if isinstance(node.op, ast.Div):
                return self.mul(a, self.inv(b))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1 \
                and not node.keywords:
            x = self.walk(node.args[0])
            name = node.func.id
            if name in ("exp", "log"):
                return getattr(self, name)(x)
            if name in ("cosh", "sinh", "tanh"):
                e, m = self.exp(x), self.exp([-c for c in x])
                cosh = [(a + b) / 2 for a, b in zip(e, m)]
                sinh = [(a - b) / 2 for a, b in zip(e, m)]
                return cosh if name == "cosh" else sinh if name == "sinh" else self.mul(sinh, self.inv(cosh))
        raise _Unsupported


def _sympy_taylor(expr, want: int) -> list[Fraction]:
    import sympy

    s = sympy.Symbol("s")
    terms = sympy.expand(sympy.series(sympy.sympify(expr) if isinstance(expr, str) else expr,
                                      s, 0, want).removeO())
    out = [Fraction(0)] * want
    for term in sympy.Add.make_args(terms):
        coeff, power = term.as_coeff_exponent(s)
        if coeff.has(s) or not power.is_Integer or power < 0 or not coeff.is_Rational:
            raise SymattnError(f"the independent expansion of phi = {expr} has the term {term}; "
                               "it needs a normalizer with rational Taylor coefficients")
        if power < want:
            out[int(power)] += Fraction(int(coeff.p), int(coeff.q))
    return out


def catalogue_check(name: str, which: str, coefficients: Sequence[Any]) -> None:
    """Compare a catalogue normalizer's fast Taylor data with an independent expansion of its
    expression, to the order given; raise :class:`~symattn.core.errors.CheckFailed` on a difference.

    ``which = "phi"``: the coefficients of ``phi`` against :func:`independent_taylor` of the
    expression; ``which = "h"``: those of ``h = log phi`` against the identity ``h' phi = phi'``
    with that independent ``phi`` (and ``h_0 = 0``).

    Parameters
    ----------
    name : str
        The catalogue entry.
    which : str
        ``"phi"`` or ``"h"``.
    coefficients : sequence
        The fast Taylor coefficients from degree 0.

    Raises
    ------
    CheckFailed
        A coefficient differs from the independent expansion.

    Examples
    --------
    >>> catalogue_check("cosh", "phi", [1, 0, Fraction(1, 2)])
    >>> catalogue_check("cosh", "h", [0, 0, Fraction(1, 2), 0])
    >>> catalogue_check("cosh", "phi", [1, 0, Fraction(1, 3)])
    Traceback (most recent call last):
    ...
    symattn.core.errors.CheckFailed: the python-flint series of the catalogue normalizer cosh disagrees with its expression cosh(s) at s^2 (phi: 1/3, expected 1/2)
    """
    from symattn.model.catalogue import CATALOGUE

    order = len(coefficients) - 1
    phi = independent_taylor(CATALOGUE[name].text, order)
    got = [Fraction(int(c.p), int(c.q)) if hasattr(c, "q") else Fraction(c) for c in coefficients]  # no str:
    # a Taylor coefficient of order above ~1700 has more than 4300 digits (Python's limit on int <-> str)
    if which == "phi":
        want = phi
    else:  # h' phi = phi', h_0 = 0: h_(m+1) = (phi_(m+1) (m+1) - sum_(j<m) (j+1) h_(j+1) phi_(m-j)) / (m+1)
        want = [Fraction(0)] * (order + 1)
        for m in range(order):
            acc = sum((j + 1) * want[j + 1] * phi[m - j] for j in range(m))
            want[m + 1] = ((m + 1) * phi[m + 1] - acc) / ((m + 1) * phi[0])
    for j, (a, b) in enumerate(zip(got, want)):
        if a != b:
            raise CheckFailed(f"the python-flint series of the catalogue normalizer {name} disagrees with its "
                              f"expression {CATALOGUE[name].text.replace(' ', '')} at s^{j} ({which}: {a}, expected {b})")
