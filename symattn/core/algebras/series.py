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
import math
from typing import Any, Sequence

import numpy as np

from symattn.core.errors import SymattnError
from symattn.core.algebras.base import Algebra

__all__ = ["Field", "SeriesAlgebra", "polynomial"]


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

    def add(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Canonical sum of canonical elements (broadcasting)."""
        return self.reduce(x + y)

    def sub(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Canonical difference of canonical elements (broadcasting)."""
        return self.reduce(x - y)

    def matmul(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Batched matrix product of coefficient arrays (unreduced)."""
        return np.matmul(x, y)

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
        self._last_phi: tuple | None = None  # (x, coefficients, phi(x)) of the last phi

    def __repr__(self) -> str:
        return f"SeriesAlgebra({self.field.name}, order={self.order})"

    def with_order(self, order: int) -> "SeriesAlgebra":
        """The same field at another truncation."""
        return SeriesAlgebra(self.field, order)

    # -- construction -------------------------------------------------------
    def const(self, values: Any) -> np.ndarray:
        c = self.field.convert(values)
        out = self.field.zeros((self.order,) + c.shape)
        out[0, ...] = c  # (a 0-d object array is copied by element, not held as an entry)
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
        return self.field.add(x, y)

    def sub(self, x, y):
        x, y = self._align(x, y)
        return self.field.sub(x, y)

    def neg(self, x):
        return self.field.sub(np.zeros_like(x[:1]), x)

    def _support(self, x: np.ndarray) -> np.ndarray:
        """Indices of the coefficients of ``x`` that are not zero in every entry."""
        flat = x.reshape(x.shape[0], -1)
        if not flat.shape[1]:
            return np.arange(0)
        if flat.dtype.kind in "iu":  # residues: zero is 0, one pass without a temporary
            return np.flatnonzero(flat.any(axis=1))
        return np.flatnonzero(~self.field.is_zero(flat).all(axis=1))

    def _convolve(self, x, y, product, shape: tuple[int, ...], terms: int = 1) -> np.ndarray:
        """Truncated Cauchy product; ``product`` multiplies coefficient arrays
        and sums ``terms`` products per entry (the contraction length) into
        entries of ``shape``.

        Only the coefficients of ``x`` and ``y`` that are nonzero somewhere take
        part; the loop runs over the operand with fewer of them (a constant
        times a series is one product)."""
        x, y = self._align(x, y)
        N, field = self.order, self.field
        out = field.zeros((N,) + tuple(shape))
        sx, sy = self._support(x), self._support(y)
        if not len(sx) or not len(sy):
            return out
        if len(sy) < len(sx):  # loop over the operand with fewer nonzero coefficients
            x, y, sx, sy, product = y, x, sy, sx, (lambda a, b, f=product: f(b, a))
        lo, hi = int(sy[0]), int(sy[-1]) + 1
        pending = 0
        for i in sx:
            if i + lo >= N:
                break
            if field.capacity is not None and pending + terms > field.capacity:
                out = field.reduce(out)
                pending = 0
            out[i + lo: i + hi] += product(x[i][None], y[lo: min(hi, N - i)])
            pending += terms
        return field.reduce(out)

    def mul(self, x, y):
        return self._convolve(x, y, lambda a, b: a * b, np.broadcast_shapes(x.shape[1:], y.shape[1:]))

    def matmul(self, x, y):
        terms = x.shape[-1]
        if self.field.capacity is not None and terms > self.field.capacity:
            raise SymattnError(f"matrix products contracting {terms} terms exceed what int64 holds mod p")
        if y.shape[-2] != terms:
            raise ValueError(f"matmul: shapes {x.shape[1:]} and {y.shape[1:]} do not contract")
        shape = np.broadcast_shapes(x.shape[1:-2], y.shape[1:-2]) + (x.shape[-2], y.shape[-1])
        return self._convolve(x, y, self.field.matmul, shape, terms)

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
        """``1/x`` by the recurrence ``w_k = -w_0 sum_{j=1..k} x_j w_{k-j}``, one
        vectorised sum per coefficient (over the nonzero coefficients of ``x``)."""
        if self.field.is_zero(x[0]).any():
            raise SymattnError("series reciprocal of a non-unit (zero constant term)")
        field = self.field
        w0 = field.inverse(x[0])
        out = np.empty_like(x)
        out[0] = w0
        support = [int(j) for j in self._support(x) if j > 0]
        if field.capacity is not None and len(support) > field.capacity:
            raise SymattnError(f"a series with {len(support)} nonzero coefficients exceeds what int64 "
                               "holds mod p")  # pragma: no cover - orders are far below 2^17
        for k in range(1, self.order):
            js = [j for j in support if j <= k]
            if not js:
                out[k] = field.zeros(())[()]
                continue
            acc = field.reduce((x[js] * out[[k - j for j in js]]).sum(axis=0))
            out[k] = field.reduce(-acc * w0)
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
        # the tangent rule asks for phi and phi' at the same x; when their Taylor
        # coefficients agree (the exponential) the first result is the second (compared
        # by value: a copy of the argument is kept)
        last = self._last_phi
        if (last is not None and last[1] == coeffs[: top + 1] and last[0].shape == x.shape
                and np.array_equal(last[0], x)):
            return last[2].copy()
        result = self.add(self.zeros(self.shape(x)), polynomial(self, coeffs[: top + 1], x))
        self._last_phi = (x.copy(), coeffs[: top + 1], result.copy())
        return result

    def fn(self, x, function, derivative: int = 0):
        """``f^(derivative)(c + y) = sum_k a_k y^k`` with ``c`` the constant term of ``x`` and
        ``a_k`` its Taylor coefficients at ``c`` (Horner's rule in the series). Over Q and F_p
        they must be exact (:class:`~symattn.core.algebras.functions.NotRational` otherwise)."""
        c = x[0]
        y = self.sub(x, self.const_array(c))
        y[0] = self.field.zeros(np.shape(c))  # exactly (a ball minus itself is not the exact ball 0)
        v = int(self.valuation(y).min()) if y.size else self.order
        top = 0 if v >= self.order else (self.order - 1) // v  # the degree of y that reaches t^(N-1)
        jets = _field_jets(self.field, function, c, top + 1 + derivative)
        jets = [self.field.reduce(jets[k + derivative] * math.perm(k + derivative, derivative))
                for k in range(top + 1)]
        result = self.const_array(jets[top])
        for k in range(top - 1, -1, -1):
            result = self.add(self.mul(y, result), self.const_array(jets[k]))
        return result

    def const_array(self, c: np.ndarray) -> np.ndarray:
        """The series with constant term ``c`` (an array of field elements) and no other terms."""
        out = self.field.zeros((self.order,) + np.shape(c))
        out[0] = c
        return out


def _field_jets(field: Field, function, c: np.ndarray, count: int) -> list[np.ndarray]:
    """``f^(k)(c)/k!`` for ``k < count`` in ``field``: exact over Q and F_p
    (:meth:`~symattn.core.algebras.functions.Elementwise.jets`), else float64 values
    of the derivatives (numerical), or the field's own numerical jets where it has them
    (:class:`~symattn.core.algebras.mpseries.MPField`: mpmath at its digits)."""
    own = getattr(field, "jets", None)
    if own is not None:
        return own(function, c, count)
    if field.dtype is object or np.dtype(field.dtype).kind in "iu":
        return function.jets(field, c, count)
    return [function.numeric(c, k, "numpy") / math.factorial(k) for k in range(count)]


def numeric_jets(field: Field, function, c: np.ndarray, count: int, backend: str, ctx: Any = None) -> list[np.ndarray]:
    """``[f^(k)(c)/k! for k < count]`` of an analytic elementwise function in a numerical field
    (``backend`` of :meth:`~symattn.core.algebras.functions.Elementwise.numeric`: ``"mpmath"``,
    ``"arb"``), each derivative converted into ``field`` before the division."""
    from symattn.core.errors import SymattnError

    if not function.analytic:
        raise SymattnError(f"{function} is not analytic: no Taylor series (the float64 tier evaluates it)")
    return [field.convert(function.numeric(c, k, backend, ctx)) / math.factorial(k) for k in range(count)]


def polynomial(ring, coeffs: Sequence[Any], x):
    """``sum_j coeffs[j] x^j`` in ``ring`` by Paterson and Stockmeyer's scheme.

    Uses only ``ring.const``, ``ring.add`` and ``ring.mul``: about ``2 sqrt(n)``
    products of two ring elements for ``n`` coefficients (Horner's rule needs
    ``n``); the other products are by constants. ``ring`` is a
    :class:`SeriesAlgebra` or any ring with those three methods (e.g. the dual
    series of :func:`symattn.model.network.series_derivative_check`).

    >>> from symattn.core.algebras import modular_series
    >>> A = modular_series(4, p=7)
    >>> polynomial(A, [1, 1, 1, 1], A.series([[0], [1]]))[:, 0].tolist()   # 1 + t + t^2 + t^3
    [1, 1, 1, 1]
    """
    n = len(coeffs)
    m = math.isqrt(max(n - 1, 0)) + 1  # ceil(sqrt(n)) blocks of m coefficients
    powers = [None, x]  # powers[i] = x^i; index 0 stands for the constant 1
    for _ in range(2, m + 1):
        powers.append(ring.mul(powers[-1], x))

    def block(start: int):
        """``sum_{i < m} coeffs[start + i] x^i``."""
        acc = ring.const(coeffs[start])
        for i in range(1, m):
            if start + i < n and coeffs[start + i] != 0:
                acc = ring.add(acc, ring.mul(ring.const(coeffs[start + i]), powers[i]))
        return acc

    starts = list(range(0, n, m))
    result = block(starts[-1])
    for start in reversed(starts[:-1]):
        result = ring.add(ring.mul(result, powers[m]), block(start))
    return result
