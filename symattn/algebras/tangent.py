"""Forward-mode tangents over any algebra (first-order dual numbers).

An element is a :class:`Dual` ``(value, tangent)``: ``tangent`` is a tensor of
the base algebra with one extra leading axis of length ``directions`` (one slot
per seeded direction), or ``None`` for an exact zero tangent (constants,
inputs). Because every algebra broadcasts on trailing axes, values broadcast
against tangents without reshaping. Evaluating a graph in ``Tangent(base, P)``
gives the output and its derivative in ``P`` directions at once: a Jacobian
whose entries are elements of ``base`` (series, residues, mpf, floats ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import Algebra

__all__ = ["Dual", "Tangent"]


@dataclass
class Dual:
    """A value and its tangents (``None`` means identically zero)."""

    value: Any
    tangent: Any = None


class Tangent(Algebra):
    """Dual numbers over ``base`` with ``directions`` tangent slots.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from symattn.algebras import Tangent, exact_series
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

    def variable(self, value: Any, tangent: Any) -> Dual:
        """A seeded variable: ``tangent`` has shape ``(directions, *shape)``."""
        return Dual(value, tangent)

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

    def _combine(self, a, b, op):
        if a is None:
            return b
        if b is None:
            return a
        return op(a, b)

    def add(self, x, y):
        x, y = self.lift(x), self.lift(y)
        B = self.base
        r = max(self._rank(x), self._rank(y))
        return Dual(B.add(x.value, y.value), self._combine(self._pad(x, r), self._pad(y, r), B.add))

    def sub(self, x, y):
        x, y = self.lift(x), self.lift(y)
        B = self.base
        r = max(self._rank(x), self._rank(y))
        ty = self._pad(y, r)
        ty = None if ty is None else B.neg(ty)
        return Dual(B.sub(x.value, y.value), self._combine(self._pad(x, r), ty, B.add))

    def neg(self, x):
        x = self.lift(x)
        B = self.base
        return Dual(B.neg(x.value), None if x.tangent is None else B.neg(x.tangent))

    def _product(self, x, y, op):
        x, y = self.lift(x), self.lift(y)
        r = max(self._rank(x), self._rank(y))
        tx, ty = self._pad(x, r), self._pad(y, r)
        t1 = None if tx is None else op(tx, y.value)
        t2 = None if ty is None else op(x.value, ty)
        return Dual(op(x.value, y.value), self._combine(t1, t2, self.base.add))

    def mul(self, x, y):
        return self._product(x, y, self.base.mul)

    def matmul(self, x, y):
        return self._product(x, y, self.base.matmul)

    def sum(self, x, axis: int):
        x = self.lift(x)
        B = self.base
        return Dual(B.sum(x.value, axis), None if x.tangent is None else B.sum(x.tangent, axis))

    def transpose(self, x):
        x = self.lift(x)
        B = self.base
        return Dual(B.transpose(x.value), None if x.tangent is None else B.transpose(x.tangent))

    def reciprocal(self, x):
        x = self.lift(x)
        B = self.base
        inv = B.reciprocal(x.value)
        if x.tangent is None:
            return Dual(inv)
        return Dual(inv, B.neg(B.mul(x.tangent, B.mul(inv, inv))))

    def phi(self, x, normalizer, derivative: int = 0, layer: int = 0):
        x = self.lift(x)
        B = self.base
        value = B.phi(x.value, normalizer, derivative, layer)
        if x.tangent is None:
            return Dual(value)
        return Dual(value, B.mul(x.tangent, B.phi(x.value, normalizer, derivative + 1, layer)))

    def expand(self, x, axis: int):
        x = self.lift(x)
        B = self.base
        return Dual(B.expand(x.value, axis), None if x.tangent is None else B.expand(x.tangent, axis))

    def zeros(self, shape):
        return Dual(self.base.zeros(shape))

