"""Float64 NumPy algebra: what practitioners' frameworks see (numerical)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from symattn.core.algebras.arrays import ArrayAlgebra
from symattn.core.algebras.series import Field, SeriesAlgebra

__all__ = ["Float64", "FloatField", "float_series"]


class Float64(ArrayAlgebra):
    """Ordinary binary64 arithmetic.

    Examples
    --------
    >>> from symattn.core.algebras import Float64
    >>> from symattn.model.normalizer import Normalizer
    >>> A = Float64()
    >>> float(A.phi(A.const([0.0]), Normalizer("exp"))[0])
    1.0
    """

    exactness = "numerical"
    dtype = np.float64

    def embed(self, value):
        return float(Fraction(value)) if not isinstance(value, float) else value

    def const(self, values):
        arr = np.asarray(values, dtype=object)
        return np.vectorize(self.embed, otypes=[np.float64])(arr) if arr.size else arr.astype(np.float64)

    def reciprocal(self, x):
        return 1.0 / x

    def phi(self, x, normalizer, derivative: int = 0, layer: int = 0):
        return normalizer.evaluate_float(np.asarray(x, dtype=np.float64), derivative)

    def fn(self, x, function, derivative: int = 0):
        return function.numeric(x, derivative, "numpy")


class FloatField(Field):
    """Binary64 coefficients for series whose *numerical* values are wanted
    (e.g. leading coefficients for plots); never used to decide an order."""

    name = "float64"
    dtype = np.float64

    def convert(self, values):
        return Float64().const(values)

    def inverse(self, x):
        return 1.0 / x


def float_series(order: int) -> SeriesAlgebra:
    """Series with float64 coefficients truncated mod ``t^order`` (numerical).

    >>> A = float_series(3)
    >>> A.reciprocal(A.series([[2.0], [1.0]]))[:, 0].tolist()
    [0.5, -0.25, 0.125]
    """
    return SeriesAlgebra(FloatField(), order)
