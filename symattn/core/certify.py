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
from symattn.core.algebras.rational import to_fmpq
from symattn.core.errors import InternalError

__all__ = ["HEIGHT_SHIFT", "height_bound", "Majorant", "MajorantSeries", "primes_below", "proved_vanishing",
           "LowerBound", "settle"]


@dataclass
class Majorant:
    """A tensor of dual series ``x + delta x'`` (``delta^2 = 0``, series in ``u``)
    known only through bounds, uniformly over its entries.

    For every entry, every part ``e`` (0: ``x``, 1: ``x'``) and every power
    ``j``: the coefficient ``c`` of ``delta^e u^j`` satisfies
    ``|c| <= height[e][j] / 2^HEIGHT_SHIFT`` (fixed point, rounded up) and
    ``denominator[e][j] * c`` is an integer.
    ``constant`` is the exact constant term of ``x`` when it is the same
    rational in every entry (``None`` when unknown or not uniform).
    ``rows[e][j]`` and ``cols[e][j]``, when known, bound (scaled the same way)
    the sums of ``|c|`` along every row (the last axis) and every column (the
    second-to-last axis) of every matrix of the tensor; ``None`` when only the
    heights are known (then ``n * height`` bounds a sum of ``n`` entries).
    """

    shape: tuple[int, ...]
    height: list[list[int]]
    denominator: list[list[int]]
    constant: Fraction | None = None
    rows: list[list[int]] | None = None
    cols: list[list[int]] | None = None


def _den(v: Any) -> int:
    return int(to_fmpq(v).q)


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
    polynomial evaluated by Horner's rule in the dual ring (``x`` with zero
    constant term, as in :class:`~symattn.core.algebras.SeriesAlgebra`). Heights are
    fixed-point integers (``HEIGHT_SHIFT`` fractional bits) rounded up at every
    product, so they are rigorous and keep factors such as ``1/n`` and ``1/k!``
    (an integer rounding would turn each into 1); denominators are integers.
    The bounds ignore cancellation and are loose (the price is more primes).

    A matrix product is bounded entrywise by the least of ``terms * max|x| max|y|``,
    ``(row sum of |x|) max|y|`` and ``max|x| (column sum of |y|)``; the row and
    column sums are exact (rounded up) for the given rational tensors and
    propagate through products (``||x y||_inf <= ||x||_inf ||y||_inf`` and the
    same for the column norm), sums, negation and transposition; other
    operations forget them.

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

    # -- construction -------------------------------------------------------
    def _make(self, shape, height, denominator, constant=None, rows=None, cols=None) -> Majorant:
        return Majorant(tuple(shape), [[int(h) for h in part] for part in height],
                        [[max(1, int(d)) for d in part] for part in denominator], constant, rows, cols)

    def _bounds(self, coefficients: Sequence[Any]) -> tuple[list[int], list[int], list[int], list[int]]:
        """Heights, denominators, row sums and column sums of exact coefficient arrays."""
        N = self.order
        height, den, rows, cols = [0] * N, [1] * N, [0] * N, [0] * N
        for j, c in enumerate(coefficients[:N]):
            arr = np.asarray(c, dtype=object)
            flat = [v for v in arr.reshape(-1) if v != 0]
            height[j] = max((_scaled(v) for v in flat), default=0)
            den[j] = math.lcm(*(_den(v) for v in flat)) if flat else 1
            if flat and arr.ndim >= 2:
                scaled = np.vectorize(_scaled, otypes=[object])(arr)
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
        return self._make(np.asarray(coefficients[0]).shape, [h0, h1], [d0, d1], constant, [r0, r1], [c0, c1])

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
                          [[math.lcm(a, b) for a, b in zip(p, q)] for p, q in zip(x.denominator, y.denominator)],
                          c, rows, cols)

    def sub(self, x, y) -> Majorant:
        return self.add(x, self.neg(y))

    def neg(self, x) -> Majorant:
        x = self._lift(x)
        return Majorant(x.shape, x.height, x.denominator, None if x.constant is None else -x.constant,
                        x.rows, x.cols)

    def _convolve_parts(self, hx, dx, hy, dy, height, den, terms: int, rx=None, cy=None) -> None:
        """Add the products of the ``u^i`` and ``u^j`` bounds into ``u^(i+j)``: each term
        ``terms * hx hy``, or for a matrix product the least of that, ``rx hy`` and ``hx cy``
        (row sums ``rx`` of x, column sums ``cy`` of y)."""
        N = self.order
        for i in range(N):
            if not hx[i]:
                continue
            for j in range(N - i):
                if hy[j]:
                    bound = terms * _product(hx[i], hy[j])
                    if rx is not None:
                        bound = min(bound, _product(rx[i], hy[j]), _product(hx[i], cy[j]))
                    height[i + j] += bound
                    den[i + j] = math.lcm(den[i + j], dx[i] * dy[j])

    def _norms(self, ax, ay) -> list[list[int]]:
        """Convolution of row (or column) sum bounds: those of a matrix product."""
        N = self.order
        out = [[0] * N, [0] * N]
        for ex, ey in ((0, 0), (0, 1), (1, 0)):
            for i in range(N):
                for j in range(N - i):
                    out[ex + ey][i + j] += _product(ax[ex][i], ay[ey][j])
        return out

    def _convolve(self, x: Majorant, y: Majorant, shape, terms: int, constant,
                  matrix: bool = False) -> Majorant:
        N = self.order
        height, den = [[0] * N, [0] * N], [[1] * N, [1] * N]
        rx, cy = (self._rows(x), self._cols(y)) if matrix else (None, None)
        for ex, ey in ((0, 0), (0, 1), (1, 0)):
            self._convolve_parts(x.height[ex], x.denominator[ex], y.height[ey], y.denominator[ey],
                                 height[ex + ey], den[ex + ey], terms,
                                 rx and rx[ex], cy and cy[ey])
        if not matrix:
            return self._make(shape, height, den, constant)
        return self._make(shape, height, den, constant, self._norms(rx, self._rows(y)),
                          self._norms(self._cols(x), cy))

    @staticmethod
    def _times(a, b, terms: int = 1):
        if a == 0 or b == 0:
            return Fraction(0)
        return None if a is None or b is None else a * b * terms

    def mul(self, x, y) -> Majorant:
        x, y = self._lift(x), self._lift(y)
        return self._convolve(x, y, np.broadcast_shapes(x.shape, y.shape), 1, self._times(x.constant, y.constant))

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
        return self._make(shape, height, x.denominator, None if x.constant is None else x.constant * n)

    def transpose(self, x) -> Majorant:
        return Majorant(x.shape[:-2] + (x.shape[-1], x.shape[-2]), x.height, x.denominator, x.constant,
                        x.cols, x.rows)

    def expand(self, x, axis: int) -> Majorant:
        shape = list(x.shape)
        shape.insert(len(shape) + axis + 1, 1)
        keep = axis <= -3  # a new batch axis leaves every matrix as it is
        return Majorant(tuple(shape), x.height, x.denominator, x.constant,
                        x.rows if keep else None, x.cols if keep else None)

    def reciprocal(self, x) -> Majorant:
        c = x.constant
        if c is None or c == 0:
            raise InternalError("majorant of a reciprocal needs a uniform nonzero constant term")
        N = self.order
        inv = 1 / c
        h0, d0 = _scaled(inv), inv.denominator
        height, den = [h0] + [0] * (N - 1), [d0] + [1] * (N - 1)
        for k in range(1, N):
            for j in range(1, k + 1):
                if x.height[0][j] and height[k - j]:
                    height[k] += _product(_product(h0, x.height[0][j]), height[k - j])
                    den[k] = math.lcm(den[k], d0 * x.denominator[0][j] * den[k - j])
        y = self._make(x.shape, [height, [0] * N], [den, [1] * N], inv)
        tangent = Majorant(x.shape, [x.height[1], [0] * N], [x.denominator[1], [1] * N])
        yy = self.mul(y, y)
        part = self.mul(tangent, yy)  # the delta part: x' y^2 (sign irrelevant for bounds)
        return self._make(x.shape, [height, part.height[0]], [den, part.denominator[0]], inv)

    def phi(self, x, normalizer, derivative: int = 0, layer: int = 0) -> Majorant:
        if x.constant != 0:
            raise InternalError("majorant of the normalizer needs an argument with zero constant term")
        coeffs = normalizer.rational_phi_derivative_taylor(self.order, derivative)
        v = self.valuation(x)
        top = (self.order - 1) // v + 1 if v < self.order else 1  # + 1: the delta part of x^k
        result = self.const(coeffs[top])
        for j in range(top - 1, -1, -1):
            result = self.add(self.mul(result, x), self.const(coeffs[j]))
        return Majorant(x.shape, result.height, result.denominator, Fraction(coeffs[0]))


def primes_below(bound: int, count: int) -> list[int]:
    """The ``count`` largest primes below ``bound`` (descending; python-flint's
    primality test, which is a proof for these sizes).

    >>> primes_below(2**23, 2)
    [8388593, 8388587]
    """
    return list(_primes_below(int(bound), int(count)))


@functools.cache
def _primes_below(bound: int, count: int) -> tuple[int, ...]:
    out, p = [], bound - 1
    while len(out) < count:
        if p < 2:
            raise InternalError(f"fewer than {count} primes below {bound}")
        if flint.fmpz(p).is_prime():
            out.append(p)
        p -= 1
    return tuple(out)


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
    than allowed) or ``"unlucky"``; ``orders`` the distinct nonzero orders to be proved;
    ``bounds`` the integer bound ``B`` (``|D c| <= B``) used for each of them, in the same
    order; ``primes`` the number of primes of the order that needed most, and ``moduli`` the
    primes every order was checked modulo. ``status, primes = record`` and ``record[0]``
    still work.
    """

    status: str
    primes: int
    orders: tuple[int, ...] = ()
    bounds: tuple[int, ...] = ()
    moduli: tuple[int, ...] = ()

    def __iter__(self):
        return iter((self.status, self.primes))

    def __getitem__(self, i: int):
        return (self.status, self.primes)[i]


def settle(certificate: str, proof: LowerBound | None) -> str:
    """The post-condition of every ``certified`` label, in one place: return ``certificate``
    unchanged when it is not ``certified``, or when ``proof`` ran to the end (status
    ``proved``), a bound was recorded for each of its orders, its moduli are ``primes``
    distinct primes, and their product exceeds twice every bound (:func:`proved_vanishing`,
    recomputed here); else raise :class:`~symattn.core.errors.InternalError` (a bug: exit 70,
    never a wrong label).

    >>> settle("certified", LowerBound("proved", 2, (5,), (10**5,), (1009, 1013)))
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
    ok = proof is not None and proof.status == "proved" and len(proof.bounds) == len(proof.orders)
    if ok and proof.orders:
        moduli = proof.moduli
        ok = (len(moduli) == proof.primes >= 1 and len(set(moduli)) == len(moduli)
              and all(flint.fmpz(q).is_prime() for q in moduli)
              and all(proved_vanishing(b, moduli) for b in proof.bounds))
    if not ok:
        what = "no proof" if proof is None else (f"status {proof.status}, {proof.primes} primes, orders "
                                                 f"{proof.orders}, bounds {proof.bounds}")
        raise InternalError(f"a 'certified' label without a completed proof ({what}); please report this bug")
    return certificate
