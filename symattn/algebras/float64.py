"""Float64 NumPy algebra: what practitioners' frameworks see (numerical)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .arrays import ArrayAlgebra

__all__ = ["Float64"]


class Float64(ArrayAlgebra):
    """Ordinary binary64 arithmetic.

    Examples
    --------
    >>> from symattn.algebras import Float64
    >>> from symattn.normalizer import Normalizer
    >>> A = Float64()
    >>> float(A.phi(Normalizer("exp"), A.const([0.0]))[0])
    1.0
    """

    kind = "numerical"
    dtype = np.float64

    def embed(self, value):
        return float(Fraction(value)) if not isinstance(value, float) else value

    def const(self, values):
        arr = np.asarray(values, dtype=object)
        return np.vectorize(self.embed, otypes=[np.float64])(arr) if arr.size else arr.astype(np.float64)

    def reciprocal(self, x):
        return 1.0 / x

    def phi(self, normalizer, x, derivative: int = 0):
        return normalizer.evaluate_float(np.asarray(x, dtype=np.float64), derivative)
