"""Algebras whose tensors are plain NumPy arrays of scalars.

:class:`ArrayAlgebra` implements every operation of :class:`~.base.Algebra`
with NumPy broadcasting; its subclasses only say how numbers are embedded and
how the normalizer is applied (float64, mpmath, sympy/symengine expressions).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symattn.core.algebras.base import Algebra

__all__ = ["ArrayAlgebra"]


class ArrayAlgebra(Algebra):
    """Elementwise arrays; subclasses define :meth:`embed` and :meth:`phi`."""

    dtype: Any = object

    def embed(self, value: Any) -> Any:
        """Convert one number to a scalar of this algebra."""
        return value

    def const(self, values: Any) -> np.ndarray:
        arr = np.asarray(values, dtype=object)
        out = np.empty(arr.shape, dtype=self.dtype)
        for idx, v in np.ndenumerate(arr):
            out[idx] = self.embed(v)
        return out

    def shape(self, x: np.ndarray) -> tuple[int, ...]:
        return tuple(np.shape(x))

    def add(self, x, y):
        return np.add(x, y)

    def sub(self, x, y):
        return np.subtract(x, y)

    def mul(self, x, y):
        return np.multiply(x, y)

    def matmul(self, x, y):
        return np.matmul(x, y)

    def sum(self, x, axis: int):
        return np.sum(x, axis=axis, keepdims=True)

    def transpose(self, x):
        return np.swapaxes(x, -1, -2)

    def expand(self, x, axis: int):
        return np.expand_dims(x, axis)

    def reciprocal(self, x):
        return self.const(1) / x if self.dtype is object else 1.0 / x

    def phi(self, x, normalizer, derivative: int = 0, layer: int = 0):  # pragma: no cover - abstract
        raise NotImplementedError
