"""Truncated series over F_p with fast multiplication (python-flint ``nmod_poly``).

A tensor of :class:`PolySeries` is a NumPy object array of the tensor's shape whose
entries are ``flint.nmod_poly`` truncated mod ``t^order``: each product is one
``nmod_poly.mul_low`` (FLINT chooses Karatsuba, Kronecker substitution or FFT by
size), each reciprocal one Newton ``inverse_series_trunc``. The coefficient-array
:class:`~symattn.core.algebras.SeriesAlgebra` multiplies in ``O(N^2)`` with one
NumPy operation per coefficient; this algebra costs ``O(N log N)`` per entry and
one Python call per entry, so it wins at long truncations and small tensors (the
column proof of a deep narrow stack) and loses at short truncations and wide
tensors.

The prime may be any prime below ``2^62`` (a machine word; the coefficient arrays
of :meth:`PolySeries.coefficients` are int64): at that size a prime carries 62 bits,
almost three times the 23 of :class:`~symattn.core.algebras.PrimeField`, for about
twice the time of a product, so a multimodular proof needs a third of the primes.

What a result mod p proves is that of any modular computation: it is the reduction
of the rational one when every denominator met is a unit mod p (else
:class:`~symattn.core.algebras.UnluckyPrime` is raised), see :mod:`symattn.core.certify`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

import flint
import numpy as np

from symattn.core.algebras.base import Algebra
from symattn.core.algebras.modular import UnluckyPrime
from symattn.core.algebras.series import Field, SeriesAlgebra, polynomial
from symattn.core.errors import SymattnError

__all__ = ["PolySeries", "WordPrimeField", "WORD_PRIME_BOUND"]

#: Primes of :class:`PolySeries` are below this bound (residues fit int64).
WORD_PRIME_BOUND = 2**62


class WordPrimeField(Field):
    """F_p for a prime ``p < 2^62``: residues in int64 arrays (no vectorised products:
    only conversion, zeros and zero tests, as the coefficient arrays of
    :class:`PolySeries` need).

    >>> F = WordPrimeField(2**61 - 1)
    >>> F.convert([Fraction(1, 2)]).tolist() == [2**60]
    True
    """

    dtype = np.int64

    def __init__(self, p: int):
        if not 2 < p < WORD_PRIME_BOUND:
            raise SymattnError(f"word-size series need a prime 2 < p < 2^62, got {p}")
        self.p = int(p)
        self.name = f"GF({p})"

    def residue(self, v: Any) -> int:
        """The residue of the rational ``v`` mod p (:class:`UnluckyPrime` if its
        denominator is divisible by p)."""
        if isinstance(v, (int, np.integer)):
            return int(v) % self.p
        if hasattr(v, "p") and hasattr(v, "q") and not isinstance(v, float):
            n, d = int(v.p), int(v.q)
        else:
            q = v if isinstance(v, Fraction) else Fraction(v)
            n, d = q.numerator, q.denominator
        if d % self.p == 0:
            raise UnluckyPrime(f"the rational {n}/{d} has a denominator divisible by p = {self.p}; "
                               "choose another prime")
        return n * pow(d, -1, self.p) % self.p

    def convert(self, values: Any) -> np.ndarray:
        arr = np.asarray(values, dtype=object)
        out = np.zeros(arr.shape, dtype=np.int64)
        for idx, v in np.ndenumerate(arr):
            if v != 0:
                out[idx] = self.residue(v)
        return out


def _ufunc(f, nin: int):
    g = np.frompyfunc(f, nin, 1)
    return lambda *args: _array(g(*args))


def _array(r: Any) -> np.ndarray:
    """``r`` as an object array (NumPy returns a bare element for 0-d operands)."""
    if isinstance(r, np.ndarray):
        return r
    out = np.empty((), dtype=object)
    out[()] = r
    return out


class PolySeries(Algebra):
    """Truncated series mod ``t^order`` over F_p (``p < 2^62`` prime), one
    ``flint.nmod_poly`` per tensor entry.

    Examples
    --------
    >>> A = PolySeries(7, 4)
    >>> x = A.series([[0], [1]])                        # the tensor (t,)
    >>> A.coefficients(A.reciprocal(A.sub(A.const([1]), x)))[:, 0].tolist()   # 1/(1 - t)
    [1, 1, 1, 1]
    >>> y = A.mul(A.add(A.const([1]), x), A.add(A.const([1]), x))            # (1 + t)^2
    >>> A.coefficients(y)[:, 0].tolist(), A.valuation(A.sub(y, A.const([1]))).tolist()
    ([1, 2, 1, 0], [1])
    """

    exactness = "exact"

    def __init__(self, p: int, order: int):
        if order < 1:
            raise SymattnError(f"series order must be at least 1, got {order}")
        self.field = WordPrimeField(p)
        self.p, self.order = self.field.p, int(order)
        N, p = self.order, self.p
        self._zero = flint.nmod_poly([], p)
        self._mul = _ufunc(lambda a, b: a.mul_low(b, N), 2)
        self._inverse = _ufunc(lambda a: a.inverse_series_trunc(N), 1)
        self._last_phi: tuple | None = None

    def __repr__(self) -> str:
        return f"PolySeries({self.field.name}, order={self.order})"

    def with_order(self, order: int) -> "PolySeries":
        """The same prime at another truncation."""
        return PolySeries(self.p, order)

    # -- construction -------------------------------------------------------
    def _poly(self, residues: Sequence[int]) -> flint.nmod_poly:
        return flint.nmod_poly(list(residues), self.p)

    def const(self, values: Any) -> np.ndarray:
        arr = np.asarray(values, dtype=object)
        out = np.empty(arr.shape, dtype=object)
        for idx, v in np.ndenumerate(arr):
            out[idx] = self._poly([self.field.residue(v)]) if v != 0 else self._zero
        return out

    def series(self, coefficients: Sequence[Any]) -> np.ndarray:
        """The tensor ``sum_j coefficients[j] t^j`` (arrays of one shape)."""
        cs = [self.field.convert(c) for c in coefficients[: self.order]]
        out = np.empty(cs[0].shape, dtype=object)
        for idx in np.ndindex(*cs[0].shape):
            out[idx] = self._poly([int(c[idx]) for c in cs])
        return out

    def zeros(self, shape: tuple[int, ...]) -> np.ndarray:
        out = np.empty(shape, dtype=object)
        out.fill(self._zero)
        return out

    def coefficients(self, x: np.ndarray) -> np.ndarray:
        """The int64 coefficient array ``(order, *shape)`` (the layout of
        :class:`~symattn.core.algebras.SeriesAlgebra`)."""
        out = np.zeros((self.order,) + x.shape, dtype=np.int64)
        for idx, f in np.ndenumerate(x):
            cs = [int(c) for c in f.coeffs()[: self.order]]
            out[(slice(0, len(cs)),) + idx] = cs
        return out

    def shape(self, x: np.ndarray) -> tuple[int, ...]:
        return tuple(x.shape)

    def valuation(self, x: np.ndarray) -> np.ndarray:
        """Elementwise t-adic valuation; ``order`` where zero to this precision."""
        out = np.full(x.shape, self.order, dtype=np.int64)
        for idx, f in np.ndenumerate(x):
            out[idx] = next((j for j, c in enumerate(f.coeffs()) if int(c)), self.order)
        return out

    # -- ring operations ----------------------------------------------------
    def add(self, x, y):
        return _array(np.add(x, y, dtype=object))

    def sub(self, x, y):
        return _array(np.subtract(x, y, dtype=object))

    def neg(self, x):
        return _array(np.negative(x, dtype=object))

    def mul(self, x, y):
        return self._mul(x, y)

    def matmul(self, x, y):
        if y.shape[-2] != x.shape[-1]:
            raise ValueError(f"matmul: shapes {x.shape} and {y.shape} do not contract")
        return _array(np.sum(self._mul(x[..., :, :, None], y[..., None, :, :]), axis=-2))

    def sum(self, x, axis: int):
        if axis >= 0:
            raise ValueError("axis must be negative")
        return _array(np.sum(x, axis=axis, keepdims=True))

    # tensors are NumPy arrays whose last axes are the tensor's: the same axis operations
    transpose = SeriesAlgebra.transpose
    expand = SeriesAlgebra.expand

    def scale(self, x, c: Any) -> np.ndarray:
        """Multiply by the scalar constant ``c``."""
        return self._mul(x, _array(self._poly([self.field.residue(c)])))

    def reciprocal(self, x):
        """``1/x`` entrywise by Newton iteration (FLINT ``inverse_series_trunc``)."""
        if any(int(f[0]) == 0 for f in x.reshape(-1)):
            raise SymattnError("series reciprocal of a non-unit (zero constant term)")
        return self._inverse(x)

    def phi(self, x, normalizer, derivative: int = 0, layer: int = 0):
        """Composition with the exact Taylor polynomial (Paterson-Stockmeyer,
        :func:`~symattn.core.algebras.series.polynomial`); ``x`` must have zero constant term."""
        flat = x.reshape(-1)
        if any(int(f[0]) for f in flat):
            raise SymattnError(
                "the normalizer is applied to a series with nonzero constant term; "
                "exact and modular series expand around score 0 only")
        coeffs = normalizer.rational_phi_derivative_taylor(self.order - 1, derivative)
        v = min((int(j) for j in self.valuation(x).reshape(-1)), default=self.order)
        top = (self.order - 1) // v if v < self.order else 0
        residues = [self.field.residue(c) for c in coeffs[: top + 1]]
        last = self._last_phi  # phi and phi' at the same x (the exponential): computed once
        if last is not None and last[0] is x and last[1] == residues:
            return last[2]
        result = self.add(self.zeros(x.shape), polynomial(self, residues, x))
        self._last_phi = (x, residues, result)
        return result
