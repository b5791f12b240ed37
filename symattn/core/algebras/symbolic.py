"""Symbolic algebra: arrays of sympy (or symengine) expressions (exact).

``Symbolic()`` works with sympy expressions, for derivations and LaTeX;
``Symbolic(backend="symengine")`` uses symengine's C++ expressions, much faster
for large expansions (convert back with ``sympy.sympify``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from symattn.core.errors import SymattnError
from symattn.core.algebras.arrays import ArrayAlgebra

__all__ = ["Symbolic"]


class Symbolic(ArrayAlgebra):
    """Arrays of symbolic expressions; ``phi`` substitutes into the normalizer.

    With ``taylor=N`` the normalizer is replaced by its degree-``N`` Taylor
    polynomial (useful for exact order computations on generic symbols).

    Examples
    --------
    >>> import sympy
    >>> from symattn.core.algebras import Symbolic
    >>> from symattn.model.normalizer import Normalizer
    >>> A = Symbolic()
    >>> A.phi(A.const([sympy.Symbol("x")]), Normalizer("exp"))[0]
    exp(x)
    >>> B = Symbolic(backend="symengine", taylor=2)
    >>> sympy.sympify(B.phi(B.const([sympy.Symbol("x")]), Normalizer("exp"))[0])
    x**2/2 + x + 1
    """

    exactness = "exact"

    def __init__(self, taylor: int | None = None, backend: str = "sympy"):
        if backend not in ("sympy", "symengine"):
            raise SymattnError(f"backend must be 'sympy' or 'symengine', got {backend!r}")
        import sympy

        self.taylor = taylor
        self.backend = backend
        if backend == "symengine":
            import symengine

            self._sympify = symengine.sympify
        else:
            self._sympify = sympy.sympify

    def embed(self, value):
        if isinstance(value, Fraction):  # symengine does not read Fractions
            import sympy

            value = sympy.Rational(value.numerator, value.denominator)
        return self._sympify(value)

    def reciprocal(self, x):
        return self._map(lambda v: 1 / v, x)

    @staticmethod
    def _map(f, x):
        out = np.empty(np.shape(x), dtype=object)
        for idx, v in np.ndenumerate(np.asarray(x, dtype=object)):
            out[idx] = f(v)
        return out

    def phi(self, x, normalizer, derivative: int = 0, layer: int = 0):
        import sympy

        s = normalizer.s
        if self.taylor is None:
            expr = sympy.diff(normalizer.expr, s, derivative)
        else:
            coeffs = normalizer.phi_taylor(self.taylor + derivative)
            expr = sympy.diff(sum(c * s**j for j, c in enumerate(coeffs)), s, derivative)
        expr, s = self._sympify(expr), self._sympify(s)
        return self._map(lambda v: expr.subs({s: v}), x)

    def fn(self, x, function, derivative: int = 0):
        import sympy

        expr, s = self._sympify(function.expr(derivative)), self._sympify(sympy.Symbol("s"))
        return self._map(lambda v: expr.subs({s: v}), x)
