"""Forward-mode tangents over any algebra (first-order dual numbers).

An element is a :class:`Dual` ``(value, tangent)``: ``tangent`` is a tensor of
the base algebra with one extra leading axis of length ``directions`` (one slot
per seeded direction), or ``None`` for an exact zero tangent (constants,
inputs). Because every algebra broadcasts on trailing axes, values broadcast
against tangents without reshaping. Evaluating a graph in ``Tangent(base, P)``
gives the output and its derivative in ``P`` directions at once: a Jacobian
whose entries are elements of ``base`` (series, residues, mpf, floats ...).

A tangent need not hold every direction: it holds the consecutive directions
``start, start + 1, ...`` (its length along the direction axis), the others
being zero. A variable seeded in a few directions keeps a narrow tangent until
it meets a wider one (sums widen both to the union with zeros, by NumPy
concatenation along the direction axis), so the layers below the last seeded
input carry only the directions seeded so far; :meth:`Tangent.full` gives all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from symattn.core.algebras.base import Algebra

__all__ = ["Dual", "Tangent"]


@dataclass
class Dual:
    """A value and its tangents (``None`` means identically zero)."""

    value: Any
    tangent: Any = None
    #: the first direction ``tangent`` holds (it holds the next ones along its direction axis)
    start: int = 0


class Tangent(Algebra):
    """Dual numbers over ``base`` with ``directions`` tangent slots.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from symattn.core.algebras import Tangent, exact_series
    >>> T = Tangent(exact_series(3), directions=1)
    >>> x = T.variable(T.base.const([2]), T.base.const([[1]]))   # x = 2, dx = 1
    >>> y = T.mul(x, x)                                          # d(x^2) = 2x
    >>> str(T.base.coefficients(y.tangent)[0, 0, 0])
    '4'
    """

    def __init__(self, base: Algebra, directions: int):
        self.base = base
        self.directions = int(directions)
        self.exactness = base.exactness

    def working(self):
        """The base algebra's precision context."""
        return self.base.working()

    def variable(self, value: Any, tangent: Any, start: int = 0) -> Dual:
        """A seeded variable: ``tangent`` has shape ``(m, *shape)`` and holds the
        directions ``start .. start + m - 1`` (all ``directions`` by default)."""
        return Dual(value, tangent, int(start))

    def _length(self, tangent: Any) -> int:
        """How many directions ``tangent`` holds (its first tensor axis)."""
        return self.base.shape(tangent)[0]

    def _widen(self, tangent: Any, start: int, lo: int, hi: int) -> Any:
        """``tangent`` (from direction ``start``) holding the directions ``lo .. hi - 1``."""
        m = self._length(tangent)
        if (start, start + m) == (lo, hi):
            return tangent
        rest = tuple(self.base.shape(tangent)[1:])
        axis = -len(rest) - 1
        parts = [self.base.zeros((start - lo,) + rest)] if start > lo else []
        parts.append(tangent)
        if hi > start + m:
            parts.append(self.base.zeros((hi - start - m,) + rest))
        return np.concatenate(parts, axis=axis)

    def full(self, x: Dual) -> Any:
        """The tangent of ``x`` in all ``directions`` (``None`` when identically zero)."""
        return None if x.tangent is None else self._widen(x.tangent, x.start, 0, self.directions)

    def const(self, values: Any) -> Dual:
        return Dual(self.base.const(values))

    def lift(self, x: Any) -> Dual:
        return x if isinstance(x, Dual) else Dual(x)

    def shape(self, x: Dual) -> tuple[int, ...]:
        return self.base.shape(x.value)

    def _rank(self, x: Dual) -> int:
        return len(self.base.shape(x.value))

    def _pad(self, x: Dual, rank: int):
        """The tangent of ``x`` with singleton axes after the direction axis, so
        that it broadcasts against tensors of ``rank`` (batch axes of other
        operands must not meet the direction axis)."""
        tan, r = x.tangent, self._rank(x)
        if tan is None:
            return None
        for _ in range(rank - r):
            tan = self.base.expand(tan, -r - 1)
        return tan

    def _combine(self, value, a, sa: int, b, sb: int, op) -> Dual:
        """``Dual(value, op(a, b))`` for tangents ``a``, ``b`` from directions ``sa``, ``sb``
        (``None``: zero), both widened to the union of their directions."""
        if a is None or b is None:  # one operand's tangent, broadcast to the value's shape (a sum
            # where only the operand that broadcasts moves: its tangent must grow with it)
            tan, start = (b, sb) if a is None else (a, sa)
            return Dual(value, None if tan is None else self._broadcast(tan, value), start)
        lo, hi = min(sa, sb), max(sa + self._length(a), sb + self._length(b))
        return Dual(value, op(self._widen(a, sa, lo, hi), self._widen(b, sb, lo, hi)), lo)

    def _broadcast(self, tangent: Any, value: Any) -> Any:
        """``tangent`` broadcast to the shape of ``value`` after its direction axis."""
        shape, rest = tuple(self.base.shape(value)), tuple(self.base.shape(tangent)[1:])
        if rest == shape:
            return tangent
        hidden = np.ndim(tangent) - len(rest) - 1
        return np.array(np.broadcast_to(tangent, np.shape(tangent)[: hidden + 1] + shape))

    def add(self, x, y):
        x, y = self.lift(x), self.lift(y)
        B = self.base
        r = max(self._rank(x), self._rank(y))
        return self._combine(B.add(x.value, y.value), self._pad(x, r), x.start, self._pad(y, r), y.start, B.add)

    def sub(self, x, y):
        x, y = self.lift(x), self.lift(y)
        B = self.base
        r = max(self._rank(x), self._rank(y))
        ty = self._pad(y, r)
        ty = None if ty is None else B.neg(ty)
        return self._combine(B.sub(x.value, y.value), self._pad(x, r), x.start, ty, y.start, B.add)

    def neg(self, x):
        x = self.lift(x)
        B = self.base
        return Dual(B.neg(x.value), None if x.tangent is None else B.neg(x.tangent), x.start)

    def _product(self, x, y, op):
        x, y = self.lift(x), self.lift(y)
        r = max(self._rank(x), self._rank(y))
        tx, ty = self._pad(x, r), self._pad(y, r)
        t1 = None if tx is None else op(tx, y.value)
        t2 = None if ty is None else op(x.value, ty)
        return self._combine(op(x.value, y.value), t1, x.start, t2, y.start, self.base.add)

    def mul(self, x, y):
        return self._product(x, y, self.base.mul)

    def matmul(self, x, y):
        return self._product(x, y, self.base.matmul)

    def sum(self, x, axis: int):
        x = self.lift(x)
        B = self.base
        return Dual(B.sum(x.value, axis), None if x.tangent is None else B.sum(x.tangent, axis), x.start)

    def transpose(self, x):
        x = self.lift(x)
        B = self.base
        return Dual(B.transpose(x.value), None if x.tangent is None else B.transpose(x.tangent), x.start)

    def reciprocal(self, x):
        x = self.lift(x)
        B = self.base
        inv = B.reciprocal(x.value)
        if x.tangent is None:
            return Dual(inv)
        return Dual(inv, B.neg(B.mul(x.tangent, B.mul(inv, inv))), x.start)

    def phi(self, x, normalizer, derivative: int = 0, layer: int = 0):
        x = self.lift(x)
        B = self.base
        value = B.phi(x.value, normalizer, derivative, layer)
        if x.tangent is None:
            return Dual(value)
        return Dual(value, B.mul(x.tangent, B.phi(x.value, normalizer, derivative + 1, layer)), x.start)

    def fn(self, x, function, derivative: int = 0):
        x = self.lift(x)
        B = self.base
        value = B.fn(x.value, function, derivative)
        if x.tangent is None:
            return Dual(value)
        return Dual(value, B.mul(x.tangent, B.fn(x.value, function, derivative + 1)), x.start)

    def expand(self, x, axis: int):
        x = self.lift(x)
        B = self.base
        return Dual(B.expand(x.value, axis), None if x.tangent is None else B.expand(x.tangent, axis),
                    x.start)

    def zeros(self, shape):
        return Dual(self.base.zeros(shape))

