"""Symbolic algebra: arrays of sympy expressions (exact, symbolic)."""

from __future__ import annotations

import numpy as np
import sympy

from .arrays import ArrayAlgebra

__all__ = ["Symbolic"]


class Symbolic(ArrayAlgebra):
    """Arrays of sympy expressions; ``phi`` substitutes into the normalizer.

    With ``taylor=N`` the normalizer is replaced by its degree-``N`` Taylor
    polynomial (useful for exact order computations on generic symbols).

    Examples
    --------
    >>> import sympy
    >>> from symattn.algebras import Symbolic
    >>> from symattn.normalizer import Normalizer
    >>> A = Symbolic()
    >>> A.phi(Normalizer("exp"), A.const([sympy.Symbol("x")]))[0]
    exp(x)
    """

    kind = "exact"

    def __init__(self, taylor: int | None = None):
        self.taylor = taylor

    def embed(self, value):
        return sympy.sympify(value)

    def reciprocal(self, x):
        return self._map(lambda v: 1 / v, x)

    @staticmethod
    def _map(f, x):
        out = np.empty(np.shape(x), dtype=object)
        for idx, v in np.ndenumerate(np.asarray(x, dtype=object)):
            out[idx] = f(v)
        return out

    def phi(self, normalizer, x, derivative: int = 0):
        s = normalizer.s
        if self.taylor is None:
            expr = sympy.diff(normalizer.expr, s, derivative)
        else:
            coeffs = normalizer.phi_taylor(self.taylor + derivative)
            poly = sum(c * s**j for j, c in enumerate(coeffs))
            expr = sympy.diff(poly, s, derivative)
        return self._map(lambda v: expr.subs(s, v), x)
