"""The algebra interface every evaluation of a network graph goes through.

An *algebra* supplies tensors and a handful of tensor-level operations; the
expression graph (:mod:`symattn.model.network`) only ever calls these, so the same graph
is evaluated symbolically, as exact or modular truncated power series, with
forward-mode tangents, at high precision or in float64 without knowing which.

Conventions shared by every algebra:

* tensors broadcast like NumPy arrays, aligned on their *last* axes, and every
  axis argument is negative (counted from the end), so an algebra may carry
  hidden leading axes (series coefficients, tangent directions);
* :meth:`Algebra.matmul` contracts the last axis of the first operand with the
  second-to-last of the second (batched matrix product);
* ``phi(x, normalizer, derivative=j)`` applies the j-th derivative of the
  normalizer elementwise, ``fn(x, function, derivative=j)`` that of an elementwise
  function of a transformer block (:mod:`symattn.core.algebras.functions`).
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from typing import Any

__all__ = ["Algebra"]

Tensor = Any


class Algebra(ABC):
    """Abstract tensor algebra; see the module docstring for the conventions."""

    #: ``"exact"``, ``"certified"`` or ``"numerical"``: what its numbers are.
    exactness: str = "exact"

    @abstractmethod
    def const(self, values: Any) -> Tensor:
        """Embed an array-like of numbers (ints, Fractions, sympy Rationals)."""

    @abstractmethod
    def shape(self, x: Tensor) -> tuple[int, ...]:
        """The tensor shape of ``x`` (hidden axes excluded)."""

    @abstractmethod
    def add(self, x: Tensor, y: Tensor) -> Tensor:
        """Elementwise sum (broadcasting)."""

    @abstractmethod
    def sub(self, x: Tensor, y: Tensor) -> Tensor:
        """Elementwise difference (broadcasting)."""

    @abstractmethod
    def mul(self, x: Tensor, y: Tensor) -> Tensor:
        """Elementwise product (broadcasting)."""

    @abstractmethod
    def matmul(self, x: Tensor, y: Tensor) -> Tensor:
        """Batched matrix product over the last two axes."""

    @abstractmethod
    def sum(self, x: Tensor, axis: int) -> Tensor:
        """Sum over the (negative) ``axis``, keeping it with length one."""

    @abstractmethod
    def transpose(self, x: Tensor) -> Tensor:
        """Swap the last two axes."""

    @abstractmethod
    def expand(self, x: Tensor, axis: int) -> Tensor:
        """Insert a length-one axis so that it becomes the (negative) ``axis``."""

    @abstractmethod
    def reciprocal(self, x: Tensor) -> Tensor:
        """Elementwise inverse; every entry must be a unit of the algebra."""

    @abstractmethod
    def phi(self, x: Tensor, normalizer: Any, derivative: int = 0, layer: int = 0) -> Tensor:
        """Apply ``normalizer`` (a :class:`~symattn.model.normalizer.Normalizer`; the core does not
        import the model floor) or its ``derivative``-th derivative elementwise;
        ``layer`` is the graph node's layer ``i`` (0 when unknown), which only
        algebras that expand each layer differently use."""

    def fn(self, x: Tensor, function: Any, derivative: int = 0) -> Tensor:
        """Apply the elementwise ``function`` (:class:`~symattn.core.algebras.functions.Elementwise`:
        LayerNorm's ``rsqrt``, an MLP activation), or its ``derivative``-th derivative."""
        raise NotImplementedError(f"{type(self).__name__} has no elementwise functions")

    def working(self) -> contextlib.AbstractContextManager:
        """Context in which this algebra computes at its own precision.

        A no-op for algebras without a process-wide precision (exact, float64,
        mpmath with its private context); :class:`~symattn.core.algebras.BallAlgebra`
        sets python-flint's precision. Every evaluation may run inside it.
        """
        return contextlib.nullcontext()

    def neg(self, x: Tensor) -> Tensor:
        """Elementwise negation."""
        return self.sub(self.zeros(self.shape(x)), x)

    def zeros(self, shape: tuple[int, ...]) -> Tensor:
        """The zero tensor of ``shape``."""
        import numpy as np

        return self.const(np.zeros(shape, dtype=int))
