"""Truncated power series in one variable, vectorised over tensors.

A tensor of :class:`SeriesAlgebra` is a NumPy array of shape ``(N, *shape)``:
axis 0 holds the coefficients of ``1, t, ..., t^(N-1)`` and the algebra owns
the precision ``N`` (every product is truncated mod ``t^N``). The coefficients
live in a :class:`Field`; :mod:`.rational` supplies Q (exact, python-flint
``fmpq``) and :mod:`.modular` supplies F_p (int64, vectorised). Products are
convolutions over axis 0 made of whole-array NumPy operations, so a depth-3
bank Jacobian is a few hundred array operations, not millions of scalar ones.

The normalizer is applied by composition with its exact Taylor polynomial, so
its argument must have zero constant term (the expansions of the paper are all
around score 0: collapse paths, input rays, line probes through zero).
"""

from __future__ import annotations

import contextlib
from typing import Any, Sequence

import numpy as np

from ..errors import SymattnError
from .base import Algebra

__all__ = ["Field", "SeriesAlgebra"]


class Field:
    """Coefficient field of a series algebra (vectorised over NumPy arrays)."""

    name = "field"
    dtype: Any = object
    #: How many products of reduced elements may be summed before a reduction
    #: is needed (``None``: unlimited, e.g. exact rationals).
    capacity: int | None = None

    def convert(self, values: Any) -> np.ndarray:
        """Embed an array-like of rationals."""
        raise NotImplementedError

    def zeros(self, shape: tuple[int, ...]) -> np.ndarray:
        """An array of zeros of the field, of ``shape``."""
        out = np.zeros(shape, dtype=self.dtype)
        if self.dtype is object:
            out.fill(self.convert(0)[()])
        return out

    def reduce(self, x: np.ndarray) -> np.ndarray:
        """Canonical representatives after a ring operation."""
        return x

    def inverse(self, x: np.ndarray) -> np.ndarray:
        """Elementwise inverse of nonzero elements."""
        raise NotImplementedError

    def is_zero(self, x: np.ndarray) -> np.ndarray:
        """Elementwise test for zero."""
        return x == 0

    def working(self) -> contextlib.AbstractContextManager:
        """Context setting the field's working precision (a no-op for exact fields)."""
        return contextlib.nullcontext()


class SeriesAlgebra(Algebra):
    """Truncated series mod ``t^order`` with coefficients in ``field``."""

    exactness = "exact"

    def __init__(self, field: Field, order: int):
        if order < 1:
            raise SymattnError(f"series order must be at least 1, got {order}")
        self.field = field
        self.order = int(order)

    def __repr__(self) -> str:
        return f"SeriesAlgebra({self.field.name}, order={self.order})"

    # -- construction -------------------------------------------------------
    def const(self, values: Any) -> np.ndarray:
        c = self.field.convert(values)
        out = self.field.zeros((self.order,) + c.shape)
        out[0] = c
        return out

    def series(self, coefficients: Sequence[Any]) -> np.ndarray:
        """The tensor ``sum_j coefficients[j] t^j`` (all of one shape)."""
        cs = [self.field.convert(c) for c in coefficients]
        out = self.const(np.zeros(cs[0].shape, dtype=int))
        for j, c in enumerate(cs[: self.order]):
            out[j] = c
        return out

    def coefficients(self, x: np.ndarray) -> np.ndarray:
        """The coefficient array, shape ``(order, *shape)``."""
        return x

    def shape(self, x: np.ndarray) -> tuple[int, ...]:
        return tuple(x.shape[1:])

    def valuation(self, x: np.ndarray) -> np.ndarray:
        """Elementwise t-adic valuation; ``order`` where zero to this precision."""
        nz = ~self.field.is_zero(x)
        return np.where(nz.any(axis=0), nz.argmax(axis=0), self.order)

    # -- ring operations ----------------------------------------------------
    def _align(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = max(x.ndim, y.ndim)
        x = x.reshape((x.shape[0],) + (1,) * (r - x.ndim) + x.shape[1:])
        y = y.reshape((y.shape[0],) + (1,) * (r - y.ndim) + y.shape[1:])
        return x, y

    def add(self, x, y):
        x, y = self._align(x, y)
        return self.field.reduce(x + y)

    def sub(self, x, y):
        x, y = self._align(x, y)
        return self.field.reduce(x - y)

    def _convolve(self, x, y, product, terms: int = 1) -> np.ndarray:
        """Truncated Cauchy product; ``product`` multiplies coefficient arrays
        and sums ``terms`` products per entry (the contraction length)."""
        x, y = self._align(x, y)
        N, field = self.order, self.field
        first = product(x[0], y[0])
        out = field.zeros((N,) + first.shape).astype(first.dtype, copy=False)
        nonzero = [not field.is_zero(y[j]).all() for j in range(N)]
        lo = nonzero.index(True) if any(nonzero) else N
        pending = 0
        for i in range(N - lo):
            if field.is_zero(x[i]).all():
                continue
            if field.capacity is not None and pending + terms > field.capacity:
                out = field.reduce(out)
                pending = 0
            out[i + lo:] += product(x[i][None], y[lo:N - i])
            pending += terms
        return field.reduce(out)

    def mul(self, x, y):
        return self._convolve(x, y, lambda a, b: a * b)

    def matmul(self, x, y):
        terms = x.shape[-1]
        if self.field.capacity is not None and terms > self.field.capacity:
            raise SymattnError(f"matrix products contracting {terms} terms exceed what int64 holds mod p")
        return self._convolve(x, y, np.matmul, terms)

    def sum(self, x, axis: int):
        if axis >= 0:
            raise ValueError("axis must be negative")
        return self.field.reduce(np.sum(x, axis=axis, keepdims=True))

    def transpose(self, x):
        return np.swapaxes(x, -1, -2)

    def expand(self, x, axis: int):
        if axis >= 0:
            raise ValueError("axis must be negative")
        return np.expand_dims(x, axis)

    def scale(self, x, c: Any) -> np.ndarray:
        """Multiply by the scalar constant ``c``."""
        return self.field.reduce(x * self.field.convert(c)[()])

    def reciprocal(self, x):
        if self.field.is_zero(x[0]).any():
            raise SymattnError("series reciprocal of a non-unit (zero constant term)")
        w0 = self.field.inverse(x[0])
        out = np.empty_like(x)
        out[0] = w0
        for k in range(1, self.order):
            acc = self.field.reduce(x[1] * out[k - 1])
            for j in range(2, k + 1):
                acc = self.field.reduce(acc + x[j] * out[k - j])
            out[k] = self.field.reduce(-acc * w0)
        return out

    def phi(self, x, normalizer, derivative: int = 0, layer: int = 0):
        if not self.field.is_zero(x[0]).all():
            raise SymattnError(
                "the normalizer is applied to a series with nonzero constant term; "
                "exact and modular series expand around score 0 only "
                "(use the mpmath or symbolic algebra away from zero)")
        coeffs = normalizer.rational_phi_derivative_taylor(self.order - 1, derivative)
        v = int(self.valuation(x).min()) if x.size else self.order
        top = (self.order - 1) // v if v < self.order else 0
        result = self.add(self.zeros(self.shape(x)), self.const(coeffs[top]))
        for j in range(top - 1, -1, -1):
            result = self.add(self.mul(result, x), self.const(coeffs[j]))
        return result
