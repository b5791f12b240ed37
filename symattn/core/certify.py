"""What a modular computation proves, and majorant bounds for the lower bounds.

The certificates symattn relies on (MATH.md, "exactness ladder"):

* a matrix of rationals reduced mod a prime ``p`` (no denominator divisible by
  ``p``) has ``rank_p <= rank_Q``: a nonzero minor mod p is a nonzero rational
  minor, so a full modular rank is an exact lower bound;
* for a matrix of power series the t-adic valuation of every minor can only
  rise under reduction mod p and under a constant left multiplication
  (Cauchy-Binet), so modular Smith orders are *upper bounds* on the cumulative
  orders over Q[[t]]; they are exact when they meet a proven lower bound
  (the divisibility of App. D.2) or a separated divided frame (App. D.3);
* a lower bound proved from the model itself (:func:`proved_vanishing`): a
  rational number ``c`` with ``D c`` an integer, ``|c| <= H``, that vanishes
  mod primes whose product exceeds ``2 D H`` is zero. :class:`Majorant`
  supplies ``D`` and ``H`` for every series coefficient of a graph's outputs
  by majorant arithmetic on the same graph (a-priori, without computing the
  coefficient).

The ranks, null spaces and Smith orders themselves are computed in
:mod:`symattn.core.linalg`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

import flint
import numpy as np

from symattn.core.algebras.base import Algebra
from symattn.core.algebras.modular import PrimeField
from symattn.core.algebras.rational import to_fmpq
from symattn.core.algebras.series import polynomial
from symattn.core.errors import InternalError, SymattnError

__all__ = ["HEIGHT_SHIFT", "height_bound", "Majorant", "MajorantSeries", "primes_below", "proved_vanishing",
           "LowerBound", "settle", "WidePrimeField", "WIDE_PRIME_BITS"]


@dataclass
class Majorant:
    """A tensor of dual series ``x + delta x'`` (``delta^2 = 0``, series in ``u``)
    known only through bounds, uniformly over its entries.

    For every entry, every part ``e`` (0: ``x``, 1: ``x'``) and every power
    ``j``: the coefficient ``c`` of ``delta^e u^j`` satisfies
    ``|c| <= height[e][j] / 2^HEIGHT_SHIFT`` (fixed point, rounded up) and
    ``denominator[e][j] * c`` is an integer, where ``denominator[e][j]`` is the
    product of ``primes[l] ** exponents[e, l, j]`` (denominators are kept as
    exponent arrays over a basis of primes, so that the lcm of products under a
    convolution is a max-plus convolution of integer arrays).
    ``constant`` is the exact constant term of ``x`` when it is the same
    rational in every entry (``None`` when unknown or not uniform).
    ``rows[e][j]`` and ``cols[e][j]``, when known, bound (scaled the same way)
    the sums of ``|c|`` along every row (the last axis) and every column (the
    second-to-last axis) of every matrix of the tensor; ``None`` when only the
    heights are known (then ``n * height`` bounds a sum of ``n`` entries).
    """

    shape: tuple[int, ...]
    height: list[list[int]]
    exponents: np.ndarray
    primes: tuple[int, ...]
    constant: Fraction | None = None
    rows: list[list[int]] | None = None
    cols: list[list[int]] | None = None

    @functools.cached_property
    def denominator(self) -> list[list[int]]:
        """``denominator[e][j]``: an integer ``D`` with ``D c`` integral (see above)."""
        return [[math.prod(p ** int(k) for p, k in zip(self.primes, column) if k)
                 for column in part.T] for part in self.exponents]


#: Heights are fixed-point integers: ``height = ceil(bound * 2^HEIGHT_SHIFT)``.
HEIGHT_SHIFT = 64


def _scaled(v: Any) -> int:
    """``ceil(|v| 2^HEIGHT_SHIFT)`` for a rational ``v`` (a height, rounded up)."""
    q = to_fmpq(v)
    return -((-(abs(int(q.p)) << HEIGHT_SHIFT)) // int(q.q))


def _product(a: int, b: int) -> int:
    """The scaled height of a product of two scaled heights, rounded up."""
    return -((-(a * b)) >> HEIGHT_SHIFT)


def height_bound(height: int, denominator: int = 1) -> int:
    """``ceil(denominator * height / 2^HEIGHT_SHIFT)``: the integer bound on ``|D c|``
    for a coefficient ``c`` with scaled height ``height`` and denominator ``D``.

    >>> height_bound(3 << HEIGHT_SHIFT, 5), height_bound(1, 1)
    (15, 1)
    """
    return -((-(denominator * height)) >> HEIGHT_SHIFT)


def _convolution(a: list[int], b: list[int], N: int) -> list[int]:
    """Scaled heights of the truncated Cauchy product of two nonnegative scaled height
    sequences: ``ceil(sum_{i+j=k} a_i b_j / 2^HEIGHT_SHIFT)`` for ``k < N``, the exact
    sum rounded up once (python-flint ``fmpz_poly.mul_low``: Karatsuba, Kronecker
    substitution or FFT by size).

    >>> one = 1 << HEIGHT_SHIFT
    >>> [h / one for h in _convolution([one, 2 * one], [3 * one, one], 3)]
    [3.0, 7.0, 2.0]
    """
    if not any(a) or not any(b):
        return [0] * N
    c = flint.fmpz_poly(a).mul_low(flint.fmpz_poly(b), N).coeffs()
    out = [-((-int(v)) >> HEIGHT_SHIFT) for v in c]
    return out + [0] * (N - len(out))


def _maxplus(ex: np.ndarray, ey: np.ndarray, hx: list[int], hy: list[int], N: int) -> np.ndarray:
    """Exponents of ``lcm_{i+j=k} dx_i dy_j`` over the pairs with nonzero heights:
    ``max_{i+j=k} ex[:, i] + ey[:, j]`` (0 when no pair), for arrays ``(L, N)``.

    >>> _maxplus(np.array([[1, 2, 0]]), np.array([[0, 3, 0]]), [1, 1, 0], [1, 1, 0], 3).tolist()
    [[1, 4, 5]]
    """
    nx_, ny_ = np.array([bool(h) for h in hx[:N]]), np.array([bool(h) for h in hy[:N]])
    if nx_.sum() > ny_.sum():  # loop over the shorter support
        ex, ey, nx_, ny_ = ey, ex, ny_, nx_
    sx = np.flatnonzero(nx_)
    out = np.full((ex.shape[0], N), _NONE, dtype=np.int64)
    if not len(sx) or not ny_.any():
        return np.zeros((ex.shape[0], N), dtype=np.int64)
    masked = np.where(ny_[None, :], ey, _NONE)  # pairs with a zero height contribute nothing
    for i in sx:
        np.maximum(out[:, i:], ex[:, i: i + 1] + masked[:, : N - i], out=out[:, i:])
    return np.maximum(out, 0)


#: Stands for "no pair" in :func:`_maxplus` (far below any exponent sum).
_NONE = -(1 << 40)


class MajorantSeries(Algebra):
    """Majorant arithmetic for dual truncated series ``x + delta x'`` mod ``u^order``
    over Q (``delta^2 = 0``).

    Each operation returns bounds valid for every entry of its exact result
    (:class:`Majorant`), using only the ring operations of dual series (never
    a derivative rule): heights add under sums and convolve under products
    (times the contraction length for ``matmul`` and ``sum``); denominators
    take the lcm under sums and the lcm of products under convolution. The
    reciprocal of ``x + delta x'`` with uniform nonzero constant term ``c`` is
    ``y - delta x' y^2`` with ``y = (1/c) sum_k (-(x - c)/c)^k``, whose
    denominators divide powers of ``num(c)``; the normalizer is its Taylor
    polynomial evaluated by Paterson and Stockmeyer's scheme in the dual ring
    (:func:`~symattn.core.algebras.series.polynomial`; ``x`` with zero constant term, as in
    :class:`~symattn.core.algebras.SeriesAlgebra`). Heights are
    fixed-point integers (``HEIGHT_SHIFT`` fractional bits), each convolution
    computed exactly (python-flint ``fmpz_poly``) and rounded up once, so they are
    rigorous and keep factors such as ``1/n`` and ``1/k!``; denominators are kept
    as exponents over a basis of primes (:class:`Majorant`), convolved by max-plus.
    The bounds ignore cancellation and are loose (the price is more primes).

    A matrix product is bounded entrywise by the least of ``terms * max|x| max|y|``,
    ``(row sum of |x|) max|y|`` and ``max|x| (column sum of |y|)`` (each summed
    over the convolution); the row and column sums are exact (rounded up) for the
    given rational tensors and propagate through products
    (``||x y||_inf <= ||x||_inf ||y||_inf`` and the same for the column norm), sums,
    negation and transposition; other operations forget them.

    Evaluating a graph with inputs ``theta + delta v`` bounds the coefficients
    of ``F(theta)`` (part 0) and of the directional derivative ``DF(theta) v``
    (part 1); with ``v`` the all-ones direction the part-1 bounds hold for
    every partial derivative, since every coefficient is a sum of terms whose
    majorants are nonnegative.

    Examples
    --------
    >>> M = MajorantSeries(3)
    >>> x = M.series([[[0, 0]], [[Fraction(1, 2), -3]]])    # entries u/2 and -3u
    >>> y = M.reciprocal(M.add(M.const([[1, 1]]), x))       # 1/(1 + x)
    >>> [height_bound(h) for h in y.height[0]], y.denominator[0]   # |(-3)^k| and 2^k bounds
    ([1, 3, 9], [1, 2, 4])
    """

    exactness = "certified"

    def __init__(self, order: int):
        self.order = int(order)
        self.primes: list[int] = []  # the basis of the denominators' exponents (grows)
        self._index: dict[int, int] = {}

    # -- denominators as exponents -----------------------------------------
    def _exponents(self, dens: Sequence[int]) -> np.ndarray:
        """Exponents ``(L, len(dens))`` of integers over the basis (extended as needed)."""
        factored = [_factor(int(d)) for d in dens]
        for f in factored:
            for p, _ in f:
                if p not in self._index:
                    self._index[p] = len(self.primes)
                    self.primes.append(p)
        out = np.zeros((len(self.primes), len(dens)), dtype=np.int64)
        for j, f in enumerate(factored):
            for p, k in f:
                out[self._index[p], j] = k
        return out

    def _wide(self, e: np.ndarray) -> np.ndarray:
        """``e`` over the whole current basis (later primes have exponent 0)."""
        L = len(self.primes)
        if e.shape[-2] == L:
            return e
        pad = [(0, 0)] * e.ndim
        pad[-2] = (0, L - e.shape[-2])
        return np.pad(e, pad)

    # -- construction -------------------------------------------------------
    def _make(self, shape, height, exponents, constant=None, rows=None, cols=None) -> Majorant:
        return Majorant(tuple(shape), [[int(h) for h in part] for part in height],
                        self._wide(np.asarray(exponents, dtype=np.int64)), tuple(self.primes),
                        constant, rows, cols)

    def _bounds(self, coefficients: Sequence[Any]) -> tuple[list[int], list[int], list[int], list[int]]:
        """Heights, denominators, row sums and column sums of exact coefficient arrays."""
        N = self.order
        height, den, rows, cols = [0] * N, [1] * N, [0] * N, [0] * N
        for j, c in enumerate(coefficients[:N]):
            arr = np.asarray(c, dtype=object)
            exact = [to_fmpq(v) for v in arr.reshape(-1)]  # each entry converted once
            flat = [q for q in exact if q != 0]
            height[j] = max((_scaled(q) for q in flat), default=0)
            den[j] = math.lcm(*(int(q.q) for q in flat)) if flat else 1
            if flat and arr.ndim >= 2:
                scaled = np.array([_scaled(q) if q != 0 else 0 for q in exact], dtype=object).reshape(arr.shape)
                rows[j], cols[j] = int(scaled.sum(axis=-1).max()), int(scaled.sum(axis=-2).max())
            else:  # a scalar or a vector: every "column" is one entry
                rows[j], cols[j] = (arr.size if arr.ndim else 1) * height[j], height[j]
        return height, den, rows, cols

    def const(self, values: Any) -> Majorant:
        return self.series([values])

    def series(self, coefficients: Sequence[Any], tangent: Sequence[Any] = ()) -> Majorant:
        """Bounds for ``sum_j coefficients[j] u^j + delta sum_j tangent[j] u^j``
        (arrays of rationals of one shape)."""
        h0, d0, r0, c0 = self._bounds(coefficients)
        h1, d1, r1, c1 = self._bounds(tangent)
        first = np.asarray(coefficients[0], dtype=object).reshape(-1)
        uniform = first.size and all(v == first[0] for v in first)
        constant = Fraction(str(to_fmpq(first[0]))) if uniform else None
        e = self._exponents(d0 + d1)
        N = self.order
        return self._make(np.asarray(coefficients[0]).shape, [h0, h1], [e[:, :N], e[:, N:]], constant,
                          [r0, r1], [c0, c1])

    @staticmethod
    def _rows(x: Majorant) -> list[list[int]]:
        """Bounds on the row sums of ``|x|``: known ones, or ``columns * height``."""
        n = x.shape[-1] if x.shape else 1
        return x.rows if x.rows is not None else [[n * h for h in part] for part in x.height]

    @staticmethod
    def _cols(x: Majorant) -> list[list[int]]:
        """Bounds on the column sums of ``|x|``: known ones, or ``rows * height``."""
        n = x.shape[-2] if len(x.shape) >= 2 else 1
        return x.cols if x.cols is not None else [[n * h for h in part] for part in x.height]

    def shape(self, x: Majorant) -> tuple[int, ...]:
        return x.shape

    def valuation(self, x: Majorant) -> int:
        """The least power with a nonzero bound in the value part."""
        return next((j for j, h in enumerate(x.height[0]) if h), self.order)

    # -- ring operations ----------------------------------------------------
    def _lift(self, x) -> Majorant:
        return x if isinstance(x, Majorant) else self.const(x)

    def add(self, x, y) -> Majorant:
        x, y = self._lift(x), self._lift(y)
        c = x.constant + y.constant if x.constant is not None and y.constant is not None else None
        shape = np.broadcast_shapes(x.shape, y.shape)
        rows = cols = None
        if len(shape) >= 2 and x.shape[-2:] == y.shape[-2:] == shape[-2:]:  # no broadcast inside a matrix
            rows = [[a + b for a, b in zip(p, q)] for p, q in zip(self._rows(x), self._rows(y))]
            cols = [[a + b for a, b in zip(p, q)] for p, q in zip(self._cols(x), self._cols(y))]
        return self._make(shape,
                          [[a + b for a, b in zip(p, q)] for p, q in zip(x.height, y.height)],
                          np.maximum(self._wide(x.exponents), self._wide(y.exponents)),
                          c, rows, cols)

    def sub(self, x, y) -> Majorant:
        return self.add(x, self.neg(y))

    def neg(self, x) -> Majorant:
        x = self._lift(x)
        return Majorant(x.shape, x.height, x.exponents, x.primes, None if x.constant is None else -x.constant,
                        x.rows, x.cols)

    def _norms(self, ax, ay) -> list[list[int]]:
        """Convolution of row (or column) sum bounds: those of a matrix product."""
        N = self.order
        out = [[0] * N, [0] * N]
        for ex, ey in ((0, 0), (0, 1), (1, 0)):
            out[ex + ey] = [a + b for a, b in zip(out[ex + ey], _convolution(ax[ex], ay[ey], N))]
        return out

    def _convolve(self, x: Majorant, y: Majorant, shape, terms: int, constant,
                  matrix: bool = False) -> Majorant:
        """Bounds of a product: each part ``ex + ey`` the sum over ``(ex, ey)`` of the
        convolved heights (``terms`` times them, or for a matrix product the least of that,
        ``rx * hy`` and ``hx * cy``: row sums ``rx`` of x, column sums ``cy`` of y), with the
        lcm of the products of denominators over the pairs of nonzero heights."""
        N = self.order
        height, exps = [[0] * N, [0] * N], np.zeros((2, len(self.primes), N), dtype=np.int64)
        ex_, ey_ = self._wide(x.exponents), self._wide(y.exponents)
        rx, cy = (self._rows(x), self._cols(y)) if matrix else ([], [])  # read only for a matrix product
        for ex, ey in ((0, 0), (0, 1), (1, 0)):
            hx, hy = x.height[ex], y.height[ey]
            bound = [terms * h for h in _convolution(hx, hy, N)]
            if matrix:
                bound = [min(a, b, c) for a, b, c in zip(bound, _convolution(rx[ex], hy, N),
                                                         _convolution(hx, cy[ey], N))]
            height[ex + ey] = [a + b for a, b in zip(height[ex + ey], bound)]
            exps[ex + ey] = np.maximum(exps[ex + ey], _maxplus(ex_[ex], ey_[ey], hx, hy, N))
        if not matrix:
            return self._make(shape, height, exps, constant)
        return self._make(shape, height, exps, constant, self._norms(rx, self._rows(y)),
                          self._norms(self._cols(x), cy))

    @staticmethod
    def _times(a, b, terms: int = 1):
        if a == 0 or b == 0:
            return Fraction(0)
        return None if a is None or b is None else a * b * terms

    def mul(self, x, y) -> Majorant:
        x, y = self._lift(x), self._lift(y)
        shape, constant = np.broadcast_shapes(x.shape, y.shape), self._times(x.constant, y.constant)
        if _is_scalar(y):
            x, y = y, x
        if _is_scalar(x):  # a constant times a series (the normalizer's coefficients): O(N)
            h, e = x.height[0][0], self._wide(x.exponents)[0][:, :1]
            ey = self._wide(y.exponents)
            height = [[_product(h, v) for v in part] for part in y.height]
            nonzero = np.array([[bool(v) for v in part] for part in height])[:, None, :]
            return self._make(shape, height, np.where(nonzero, ey + e[None], 0), constant)
        return self._convolve(x, y, shape, 1, constant)

    def matmul(self, x, y) -> Majorant:
        x, y = self._lift(x), self._lift(y)
        terms = x.shape[-1]
        shape = np.broadcast_shapes(x.shape[:-2], y.shape[:-2]) + (x.shape[-2], y.shape[-1])
        return self._convolve(x, y, shape, terms, self._times(x.constant, y.constant, terms), matrix=True)

    def sum(self, x, axis: int) -> Majorant:
        n = x.shape[axis]
        shape = list(x.shape)
        shape[axis] = 1
        ndim = len(x.shape)
        sums = self._rows(x) if axis == -1 else self._cols(x) if axis == -2 and ndim >= 2 else None
        height = [[n * h for h in part] for part in x.height]
        if sums is not None:  # a row (column) sum of x is bounded by its row (column) sum bound
            height = [[min(h, r) for h, r in zip(p, q)] for p, q in zip(height, sums)]
        return self._make(shape, height, x.exponents, None if x.constant is None else x.constant * n)

    def transpose(self, x) -> Majorant:
        return Majorant(x.shape[:-2] + (x.shape[-1], x.shape[-2]), x.height, x.exponents, x.primes,
                        x.constant, x.cols, x.rows)

    def expand(self, x, axis: int) -> Majorant:
        shape = list(x.shape)
        shape.insert(len(shape) + axis + 1, 1)
        keep = axis <= -3  # a new batch axis leaves every matrix as it is
        return Majorant(tuple(shape), x.height, x.exponents, x.primes, x.constant,
                        x.rows if keep else None, x.cols if keep else None)

    def reciprocal(self, x) -> Majorant:
        c = x.constant
        if c is None or c == 0:
            raise InternalError("majorant of a reciprocal needs a uniform nonzero constant term")
        N = self.order
        inv = 1 / c
        h0 = _scaled(inv)
        e0 = self._exponents([inv.denominator])[:, 0]
        ex = self._wide(x.exponents)[0]
        L = len(self.primes)
        # y_k = sum_{j=1..k} (h0 x_j) y_{k-j}: each sum exact, rounded up once
        a = [_product(h0, h) for h in x.height[0]]
        height, exps = [h0] + [0] * (N - 1), np.zeros((L, N), dtype=np.int64)
        exps[:, 0] = e0
        support = [j for j in range(1, N) if a[j]]
        for k in range(1, N):
            js = [j for j in support if j <= k and height[k - j]]
            if not js:
                continue
            height[k] = -((-sum(a[j] * height[k - j] for j in js)) >> HEIGHT_SHIFT)
            idx = np.array(js)
            exps[:, k] = (e0[:, None] + ex[:, idx] + exps[:, k - idx]).max(axis=1)
        y = self._make(x.shape, [height, [0] * N], np.stack([exps, np.zeros_like(exps)]), inv)
        tangent = Majorant(x.shape, [x.height[1], [0] * N],
                           np.stack([self._wide(x.exponents)[1], np.zeros((L, N), dtype=np.int64)]),
                           tuple(self.primes))
        yy = self.mul(y, y)
        part = self.mul(tangent, yy)  # the delta part: x' y^2 (sign irrelevant for bounds)
        return self._make(x.shape, [height, part.height[0]],
                          np.stack([exps, self._wide(part.exponents)[0]]), inv)

    def phi(self, x, normalizer, derivative: int = 0, layer: int = 0) -> Majorant:
        if x.constant != 0:
            raise InternalError("majorant of the normalizer needs an argument with zero constant term")
        coeffs = normalizer.rational_phi_derivative_taylor(self.order, derivative)
        v = self.valuation(x)
        top = (self.order - 1) // v + 1 if v < self.order else 1  # + 1: the delta part of x^k
        result = polynomial(self, coeffs[: top + 1], x)
        return Majorant(x.shape, result.height, self._wide(result.exponents), tuple(self.primes),
                        Fraction(coeffs[0]))

    def fn(self, x, function, derivative: int = 0) -> Majorant:
        """A polynomial activation by Paterson and Stockmeyer's scheme in the dual ring (heights are
        absolute values, so the bound is that of ``sum |p_m| X^m``); other elementwise functions
        have no majorant here (:class:`~symattn.core.algebras.functions.NotRational`)."""
        from symattn.core.algebras.functions import NotRational

        if function.name != "poly":
            raise NotRational(f"no majorant of {function.name} (only polynomial activations are certified)")
        coeffs = [c * math.perm(m, derivative) for m, c in enumerate(function.coefficients)][derivative:]
        result = polynomial(self, coeffs or [0], x)
        constant = None
        if x.constant is not None:
            constant = sum((Fraction(c) * x.constant**m for m, c in enumerate(coeffs)), Fraction(0))
        return Majorant(x.shape, result.height, self._wide(result.exponents), tuple(self.primes), constant)


def _is_scalar(x: Majorant) -> bool:
    """Whether every entry of ``x`` is a constant (no ``u`` and no ``delta`` part)."""
    return not any(x.height[0][1:]) and not any(x.height[1])


@functools.lru_cache(maxsize=4096)
def _factor(n: int) -> tuple[tuple[int, int], ...]:
    """The prime factorisation of a positive integer (python-flint)."""
    return tuple((int(p), int(k)) for p, k in flint.fmpz(n).factor()) if n > 1 else ()




def primes_below(bound: int, count: int) -> list[int]:
    """The ``count`` largest primes below ``bound`` (descending; python-flint's
    primality test, which is a proof for these sizes).

    >>> primes_below(2**23, 2)
    [8388593, 8388587]
    """
    return list(_primes_below(int(bound), int(count)))


@functools.cache
def _primes_below(bound: int, count: int) -> tuple[int, ...]:
    out: list[int] = []
    p = bound - 1
    while len(out) < count:
        if p < 2:
            raise InternalError(f"fewer than {count} primes below {bound}")
        if flint.fmpz(p).is_prime():
            out.append(p)
        p -= 1
    return tuple(out)


#: Primes of :class:`WidePrimeField` are below ``2^WIDE_PRIME_BITS``.
WIDE_PRIME_BITS = 28


class WidePrimeField(PrimeField):
    """F_p for a prime ``p < 2^28`` in int64 arrays: the residues of
    :class:`~symattn.core.algebras.PrimeField` with a smaller capacity. A product of two residues
    is below ``2^56``, so 127 of them are summed before a reduction (:attr:`capacity`; the
    series algebra reduces when it would exceed it, and refuses a matrix product contracting
    more terms); each prime carries 28 bits instead of 23, so a multimodular proof needs about
    a fifth fewer primes, for the same time per prime (the column proof's short orders).

    >>> from symattn.core.algebras import SeriesAlgebra
    >>> q = primes_below(2**WIDE_PRIME_BITS, 1)[0]
    >>> A = SeriesAlgebra(WidePrimeField(q), 3)
    >>> x = A.const([[q - 1] * 127])                       # a row of 127 entries -1
    >>> int(A.matmul(x, A.const([[q - 1]] * 127))[0, 0, 0])  # (-1)(-1) summed 127 times
    127
    """

    capacity = 2**7 - 1

    def __init__(self, p: int):  # noqa: D107 - PrimeField's check is for 23-bit primes
        if not 2 < p < 2**WIDE_PRIME_BITS:
            raise SymattnError(f"wide modular series need a prime 2 < p < 2^{WIDE_PRIME_BITS}, got {p}")
        self.p = int(p)
        self.name = f"GF({p})"


def proved_vanishing(bound: int, primes: Sequence[int]) -> bool:
    """Whether vanishing mod every prime in ``primes`` proves an integer of absolute
    value at most ``bound`` to be zero: the product of the primes exceeds ``2 bound``.

    >>> proved_vanishing(5 * 10**5, [1009, 1013])      # 1009 * 1013 = 1022117
    True
    >>> proved_vanishing(6 * 10**5, [1009, 1013])
    False
    """
    return math.prod(primes) > 2 * bound


@dataclass(frozen=True)
class LowerBound:
    """The record of a model-based lower-bound proof (what :func:`settle` checks).

    ``status`` is ``"proved"``, ``"refuted"``, ``"too costly"`` (not attempted: more primes
    or time than allowed) or ``"unlucky"``; ``orders`` the distinct nonzero orders to be
    proved; ``bounds`` the integer bound ``B`` (``|D c| <= B``) used for each of them and
    ``moduli`` the primes it was checked modulo, in the same order (``exact``: orders proved over Q
    itself, which have neither); ``primes`` the most primes one order needed.
    ``status, primes = record`` and ``record[0]`` still work.
    """

    status: str
    primes: int
    orders: tuple[int, ...] = ()
    bounds: tuple[int, ...] = ()
    moduli: tuple[tuple[int, ...], ...] = ()
    #: the orders proved by computing their columns over Q itself (no bound, no prime); ``bounds`` and
    #: ``moduli`` belong to the other orders, in the order of ``orders``
    exact: tuple[int, ...] = ()
    #: the orders proved by the attention lemma from the token differences' orders
    #: (:func:`~symattn.analyses.column_proof.lemma_orders`; no bound, no prime)
    structural: tuple[int, ...] = ()
    #: how the attention lemma's collapse orders were found: ``"recursion"`` (the collapse recursion
    #: :func:`~symattn.analyses.column_proof.collapse_valuations`, checked modulo a prime), ``"over Q"``
    #: (:func:`~symattn.analyses.column_proof.token_difference_valuations`), or ``""`` (no lemma)
    collapse: str = ""

    def __iter__(self):
        return iter((self.status, self.primes))

    def __getitem__(self, i: int):
        return (self.status, self.primes)[i]


def settle(certificate: str, proof: LowerBound | None) -> str:
    """The post-condition of every ``certified`` label, in one place: return ``certificate``
    unchanged when it is not ``certified``, or when ``proof`` ran to the end (status
    ``proved``) and every order has a bound and moduli that are distinct primes whose product
    exceeds twice the bound (:func:`proved_vanishing`, recomputed here); else raise
    :class:`~symattn.core.errors.InternalError` (a bug: exit 70, never a wrong label).

    >>> settle("certified", LowerBound("proved", 2, (5,), (10**5,), ((1009, 1013),)))
    'certified'
    >>> settle("certified", LowerBound("proved", 2, (5, 485), (10**5,), ((1009, 1013),), exact=(485,)))
    'certified'
    >>> settle("certified", LowerBound("proved", 0, (53, 161), structural=(53, 161)))
    'certified'
    >>> settle("conditional", LowerBound("too costly", 361, (485,)))
    'conditional'
    >>> settle("certified", LowerBound("too costly", 361, (485,)))
    Traceback (most recent call last):
    ...
    symattn.core.errors.InternalError: a 'certified' label without a completed proof (status too costly, 361 primes, orders (485,), bounds ()); please report this bug
    """
    if certificate != "certified":
        return certificate
    modular = [] if proof is None else [b for b in proof.orders if b not in proof.exact + proof.structural]
    ok = (proof is not None and proof.status == "proved" and set(proof.exact + proof.structural) <= set(proof.orders)
          and len(proof.bounds) == len(proof.moduli) == len(modular))
    if ok and proof is not None:
        ok = all(ms and len(set(ms)) == len(ms) and all(flint.fmpz(q).is_prime() for q in ms)
                 and proved_vanishing(b, ms) for b, ms in zip(proof.bounds, proof.moduli))
    if not ok:
        what = "no proof" if proof is None else (f"status {proof.status}, {proof.primes} primes, orders "
                                                 f"{proof.orders}, bounds {proof.bounds}")
        raise InternalError(f"a 'certified' label without a completed proof ({what}); please report this bug")
    return certificate
