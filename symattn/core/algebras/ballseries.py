"""Truncated power series with python-flint ``arb`` coefficients (certified enclosures).

:func:`ball_series` is a :class:`~symattn.core.algebras.series.SeriesAlgebra` over :class:`BallField`:
each coefficient is a ball that contains the exact coefficient of the series computed (LayerNorm's
``1/sqrt``, ``tanh``, GELU expanded around the actual value of their argument, each derivative
evaluated in balls from its sympy expression, :meth:`~symattn.core.algebras.functions.Elementwise.numeric`).
A ball that excludes 0 proves a coefficient nonzero; a coefficient is *zero* only where the
computation gives the exact ball 0 (a product with an exact zero), never because a ball contains 0.
Use it inside :func:`~symattn.core.algebras.balls.precision` (python-flint's precision is
process-wide); the field's ``digits`` set that precision in :meth:`BallField.working`.

>>> A = ball_series(3, 30)
>>> from symattn.core.algebras.functions import Elementwise
>>> with A.field.working():
...     x = A.series([[4], [1]])                     # 4 + t
...     [c[0].mid().str(8, radius=False) for c in A.fn(x, Elementwise("rsqrt"))]   # 1/2 - t/16 + 3 t^2/256
['0.50000000', '-0.062500000', '0.011718750']
"""

from __future__ import annotations

from typing import Any

import flint
import numpy as np

from symattn.core.algebras.balls import digits_to_bits, precision, to_arb
from symattn.core.algebras.series import Field, SeriesAlgebra, numeric_jets
from symattn.core.errors import SymattnError, Undecided

__all__ = ["BallField", "ball_series"]


class BallField(Field):
    """Real numbers as python-flint ``arb`` balls at ``digits`` digits (certified enclosures)."""

    dtype = object

    def __init__(self, digits: int = 60) -> None:
        if not isinstance(digits, int) or isinstance(digits, bool) or not 15 <= digits <= 2000:
            raise SymattnError(f"digits must be an integer in [15, 2000], got {digits!r}")
        self.digits = digits
        self.name = f"arb{digits}"

    def working(self):
        return precision(digits_to_bits(self.digits))

    def convert(self, values: Any) -> np.ndarray:
        arr = np.asarray(values, dtype=object)
        out = np.full(arr.shape, flint.arb(0), dtype=object)
        for idx, v in np.ndenumerate(arr):
            if isinstance(v, flint.arb):  # kept whole (a ball around 0 is not the exact 0)
                out[idx] = v
            elif v != 0:
                out[idx] = to_arb(v)
        return out

    def inverse(self, x: np.ndarray) -> np.ndarray:
        out = np.empty(x.shape, dtype=object)
        for idx, v in np.ndenumerate(x):
            if v.contains(0):
                raise Undecided("a ball series divides by a ball that contains 0: undecided at these digits")
            out[idx] = 1 / v
        return out

    def is_zero(self, x: np.ndarray) -> np.ndarray:
        """Exactly zero (the exact ball 0), not merely a ball that contains 0."""
        return np.vectorize(lambda v: bool(v.is_exact() and v == 0), otypes=[bool])(x) if np.size(x) else \
            np.zeros(np.shape(x), dtype=bool)

    def jets(self, function: Any, c: np.ndarray, count: int) -> list[np.ndarray]:
        """``[f^(k)(c)/k! for k < count]`` in balls at the entries of ``c``."""
        if function.name == "poly":  # exact Taylor shift in ball arithmetic
            return function.jets(self, c, count)
        return numeric_jets(self, function, c, count, "arb")


def ball_series(order: int, digits: int = 60) -> SeriesAlgebra:
    """Series with ``arb`` coefficients at ``digits`` digits, truncated mod ``t^order`` (certified)."""
    algebra = SeriesAlgebra(BallField(digits), order)
    algebra.exactness = "certified"
    return algebra
