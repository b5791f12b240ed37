"""Truncated series with fast multiplication: one python-flint polynomial per tensor entry.

A tensor of :class:`PolySeries` (over F_p) or :class:`RationalPolySeries` (over Q) is
a NumPy object array of the tensor's shape whose entries are polynomials truncated
mod ``t^order`` (``flint.nmod_poly``, ``flint.fmpq_poly``): each product is one
``mul_low`` (FLINT chooses Karatsuba, Kronecker substitution or FFT by size), each
reciprocal one Newton iteration. The coefficient-array
:class:`~symattn.core.algebras.SeriesAlgebra` multiplies in ``O(N^2)`` with one NumPy
operation per coefficient; these algebras cost ``O(N log N)`` per entry and one Python
call per entry, so they win at long truncations and small tensors (the column proof
of a deep narrow stack) and lose at short truncations and wide tensors.

Over F_p the prime may be any prime below ``2^62`` (a machine word; the coefficient
arrays of :meth:`PolySeries.coefficients` are int64): at that size a prime carries 62
bits, almost three times the 23 of :class:`~symattn.core.algebras.PrimeField`, for
about twice the time of a product, so a multimodular proof needs a third of the primes.
What a result mod p proves is that of any modular computation: it is the reduction of
the rational one when every denominator met is a unit mod p (else
:class:`~symattn.core.algebras.UnluckyPrime` is raised), see :mod:`symattn.core.certify`.

Over Q (``fmpq_poly``, kept reduced by FLINT) every coefficient is exact: a coefficient
read as zero *is* zero, with no height bound and no prime; the exponential and the
reciprocal are FLINT's own series functions there, and over F_p :func:`_exp_newton` and
``nmod_poly.inverse_series_trunc``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

import flint
import numpy as np

from symattn.core.algebras.base import Algebra
from symattn.core.algebras.modular import UnluckyPrime
from symattn.core.algebras.rational import Rationals, to_fmpq
from symattn.core.algebras.series import Field, SeriesAlgebra, polynomial
from symattn.core.errors import SymattnError

__all__ = ["PolySeries", "RationalPolySeries", "WordPrimeField", "WORD_PRIME_BOUND"]

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


class _FlintSeries(Algebra):
    """The operations shared by the flint-polynomial series (subclasses give the
    coefficient ring: :meth:`_poly`, :meth:`_scalar`, :meth:`_read`, ``field``)."""

    exactness = "exact"
    #: the coefficient field (set by the subclass before ``__init__``)
    field: Field

    def __init__(self, order: int):
        if order < 1:
            raise SymattnError(f"series order must be at least 1, got {order}")
        self.order = N = int(order)
        self._zero = self._poly([])
        self._mul = _ufunc(lambda a, b: a.mul_low(b, N), 2)
        self._last_phi: tuple | None = None

    def _poly(self, coefficients: Sequence[Any]):
        """The polynomial with these (already converted) coefficients."""
        raise NotImplementedError

    def _scalar(self, v: Any) -> Any:
        """The rational ``v`` as a coefficient of the ring."""
        raise NotImplementedError

    def _read(self, f) -> list:
        """The coefficients of the polynomial ``f`` (the field's representatives)."""
        raise NotImplementedError

    # -- construction -------------------------------------------------------
    def const(self, values: Any) -> np.ndarray:
        arr = np.asarray(values, dtype=object)
        out = np.empty(arr.shape, dtype=object)
        for idx, v in np.ndenumerate(arr):
            out[idx] = self._poly([self._scalar(v)]) if v != 0 else self._zero
        return out

    def series(self, coefficients: Sequence[Any]) -> np.ndarray:
        """The tensor ``sum_j coefficients[j] t^j`` (arrays of one shape)."""
        cs = [np.asarray(c, dtype=object) for c in coefficients[: self.order]]
        out = np.empty(cs[0].shape, dtype=object)
        for idx in np.ndindex(*cs[0].shape):
            out[idx] = self._poly([self._scalar(c[idx]) for c in cs])
        return out

    def zeros(self, shape: tuple[int, ...]) -> np.ndarray:
        out = np.empty(shape, dtype=object)
        out.fill(self._zero)
        return out

    def coefficients(self, x: np.ndarray) -> np.ndarray:
        """The coefficient array ``(order, *shape)`` in the field's dtype (the layout
        of :class:`~symattn.core.algebras.SeriesAlgebra`)."""
        out = self.field.zeros((self.order,) + x.shape)
        for idx, f in np.ndenumerate(x):
            cs = self._read(f)[: self.order]
            out[(slice(0, len(cs)),) + idx] = cs
        return out

    def shape(self, x: np.ndarray) -> tuple[int, ...]:
        return tuple(x.shape)

    def valuation(self, x: np.ndarray) -> np.ndarray:
        """Elementwise t-adic valuation; ``order`` where zero to this precision."""
        out = np.full(x.shape, self.order, dtype=np.int64)
        for idx, f in np.ndenumerate(x):
            # coefficient by coefficient from t^0: the normalizer asks for the valuation of its
            # argument, whose long coefficients need not be read (over Q they are large)
            out[idx] = next((j for j in range(min(len(f), self.order)) if f[j] != 0), self.order)
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
        return self._mul(x, _array(self._poly([self._scalar(c)])))

    def _constant_terms(self, x: np.ndarray) -> list:
        return [f[0] for f in x.reshape(-1)]

    def _inverse(self, x: np.ndarray) -> np.ndarray:
        """``1/x`` entrywise (every constant term a unit)."""
        raise NotImplementedError

    def _exponential(self, scalars: list) -> bool:
        """Whether the Taylor data ``scalars`` (in the coefficient ring) are those of
        ``c exp(s)``: ``k c_k = c_(k-1)`` for every ``k``, checked in the ring itself, so that
        ``c exp(x)`` is the same truncated polynomial as ``sum_k c_k x^k``; and whether the
        ring divides by ``1, ..., order - 1`` (the integral in :func:`_exp_newton`)."""
        raise NotImplementedError

    def _exp(self, f):
        """``exp(f) mod t^order`` of one entry with ``f(0) = 0`` (:meth:`_exponential` holds)."""
        return _exp_newton(f, self.order)

    def reciprocal(self, x):
        """``1/x`` entrywise by Newton iteration."""
        if any(c == 0 for c in self._constant_terms(x)):
            raise SymattnError("series reciprocal of a non-unit (zero constant term)")
        return self._inverse(x)

    def phi(self, x, normalizer, derivative: int = 0, layer: int = 0):
        """Composition with the exact Taylor polynomial (Paterson-Stockmeyer,
        :func:`~symattn.core.algebras.series.polynomial`); ``x`` must have zero constant term."""
        if any(c != 0 for c in self._constant_terms(x)):
            raise SymattnError(
                "the normalizer is applied to a series with nonzero constant term; "
                "exact and modular series expand around score 0 only")
        coeffs = normalizer.rational_phi_derivative_taylor(self.order - 1, derivative)
        v = min((int(j) for j in self.valuation(x).reshape(-1)), default=self.order)
        top = (self.order - 1) // v if v < self.order else 0
        scalars = [self._scalar(c) for c in coeffs[: top + 1]]
        last = self._last_phi  # phi and phi' at the same x (the exponential): computed once
        if last is not None and last[0] is x and last[1] == scalars:
            return last[2]
        if self._exponential(scalars):  # c exp(x): Newton's iteration, about 10 products, not 2 sqrt(N)
            c = scalars[0]
            result = _array(np.frompyfunc(lambda f: self._exp(f) * c, 1, 1)(x))
        else:
            result = self.add(self.zeros(x.shape), polynomial(self, scalars, x))
        self._last_phi = (x, scalars, result)
        return result


class PolySeries(_FlintSeries):
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

    def __init__(self, p: int, order: int):
        self.field = WordPrimeField(p)
        self.p = self.field.p
        super().__init__(order)
        N = self.order
        self._invert = _ufunc(lambda a: a.inverse_series_trunc(N), 1)

    def __repr__(self) -> str:
        return f"PolySeries({self.field.name}, order={self.order})"

    def with_order(self, order: int) -> "PolySeries":
        """The same prime at another truncation."""
        return PolySeries(self.p, order)

    def _poly(self, coefficients):
        return flint.nmod_poly(list(coefficients), self.p)

    def _scalar(self, v):
        return self.field.residue(v)

    def _read(self, f):
        return [int(c) for c in f.coeffs()]

    def _constant_terms(self, x):
        return [int(f[0]) for f in x.reshape(-1)]

    def _inverse(self, x):
        return self._invert(x)

    def _exponential(self, scalars):
        p = self.p
        return len(scalars) > 2 and self.order < p and all(
            (k * scalars[k] - scalars[k - 1]) % p == 0 for k in range(1, len(scalars)))


class RationalPolySeries(_FlintSeries):
    """Truncated series mod ``t^order`` over Q, one ``flint.fmpq_poly`` per tensor entry
    (exact; the coefficient arrays are ``flint.fmpq``).

    Examples
    --------
    >>> A = RationalPolySeries(4)
    >>> x = A.series([[0], [1]])                        # the tensor (t,)
    >>> [str(c) for c in A.coefficients(A.reciprocal(A.sub(A.const([2]), x)))[:, 0]]  # 1/(2 - t)
    ['1/2', '1/4', '1/8', '1/16']
    >>> y = A.mul(A.add(A.const([1]), x), A.add(A.const([1]), x))            # (1 + t)^2
    >>> A.valuation(A.sub(y, A.const([1]))).tolist()
    [1]
    """

    def __init__(self, order: int):
        self.field = Rationals()
        super().__init__(order)
        N = self.order
        self._invert = _ufunc(lambda a: _fmpq_series(a, N, "inv"), 1)

    def __repr__(self) -> str:
        return f"RationalPolySeries(QQ, order={self.order})"

    def with_order(self, order: int) -> "RationalPolySeries":
        """Series over Q at another truncation."""
        return RationalPolySeries(order)

    def _poly(self, coefficients):
        return flint.fmpq_poly(list(coefficients))

    def _scalar(self, v):
        return to_fmpq(v)

    def _read(self, f):
        return f.coeffs()

    def _inverse(self, x):
        return self._invert(x)

    def _exponential(self, scalars):
        return len(scalars) > 2 and all(k * scalars[k] == scalars[k - 1] for k in range(1, len(scalars)))

    def _exp(self, f):
        return _fmpq_series(f, self.order, "exp")


def _exp_newton(f, n: int):
    """``exp(f) mod t^n`` for a polynomial ``f`` with ``f(0) = 0`` by Newton's iteration
    ``g <- g (1 + f - log g)`` (Brent; Hanrot and Zimmermann), each step doubling the precision
    ``m -> k = 2m``: ``log g = integral(w)`` with ``w = q + h (g' - g q)``, ``q = f'``, from
    ``h = 1/g mod t^m`` carried along by one Newton step ``h <- h (2 - g h)`` (``g' - g q`` is
    ``O(t^(m-1))``, so ``h`` to half the precision suffices). About four products of length ``k``
    a step. Over F_p it needs ``p >= n`` (the integral divides by ``1, ..., n - 1``). The unique
    series with ``g(0) = 1`` and ``g' = f' g``, so over F_p the reduction of the rational one.

    >>> [str(c) for c in _exp_newton(flint.fmpq_poly([0, 1]), 5).coeffs()]
    ['1', '1', '1/2', '1/6', '1/24']
    >>> _exp_newton(flint.nmod_poly([0, 1], 7), 5).coeffs()
    [1, 1, 4, 6, 5]
    """
    g = h = f * 0 + 1
    q_full = f.derivative()
    m = 1
    while m < n:
        k = min(2 * m, n)
        h = h.mul_low(2 - g.mul_low(h, m), m)  # 1/g mod t^m from 1/g mod t^(m/2)
        q = q_full.truncate(k - 1)
        w = q + h.mul_low(g.derivative() - g.mul_low(q, k - 1), k - 1)
        g = g + g.mul_low(f.truncate(k) - w.integral(), k)
        m = k
    return g


def _fmpq_series(f: flint.fmpq_poly, n: int, function: str) -> flint.fmpq_poly:
    """``exp(f)`` (``function="exp"``, ``f(0) = 0``) or ``1/f`` (``"inv"``, ``f(0) != 0``) mod ``t^n``,
    exact over Q, by FLINT's own series functions (``fmpq_poly_exp_series``, ``fmpq_poly_inv_series``:
    Newton iterations in C, 1.5 to 3.5 times faster than the same iteration written with
    ``mul_low`` calls at the lengths of the column proof).

    >>> [str(c) for c in _fmpq_series(flint.fmpq_poly([0, 1]), 5, "exp").coeffs()]
    ['1', '1', '1/2', '1/6', '1/24']
    >>> str(_fmpq_series(flint.fmpq_poly([1, -1]), 5, "inv"))
    'x^4 + x^3 + x^2 + x + 1'
    """
    saved, flint.ctx.cap = flint.ctx.cap, n  # python-flint's process-wide series precision, restored
    try:
        g = getattr(flint.fmpq_series(f), function)()
    finally:
        flint.ctx.cap = saved
    return flint.fmpq_poly(flint.fmpz_poly(g.numer().coeffs()), g.denom())
