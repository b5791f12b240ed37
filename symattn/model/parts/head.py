"""The attention head: a factored score ``A = Q K^T`` of rank ``r`` (and, for concatenated heads, its ``d_v``).

:class:`Head` is the one head kind of the model (grouped-query attention is read into it by the
audit, :mod:`symattn.model.parts.gqa`). It owns the shapes of its factors
(:meth:`Head.factor_shape`), its score node (:meth:`Head.score`, the same nodes in every algebra),
its naive formula (:meth:`Head.reference_score`), its declared symmetry, the factor gauge of eq. (50)
(``(Q B, K B^-T)`` leaves ``Q K^T`` unchanged; :meth:`Head.factor_gauges`, the biases moving as rows
of the augmented factors ``[Q; bQ]``, ``[K; bK]``), and its PyTorch reading
(:attr:`Head.torch_attribute`: the query and key rows of ``nn.MultiheadAttention.in_proj_weight``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, ClassVar, Iterator

import numpy as np

from symattn.model.parts.ring import product, transpose

__all__ = ["Head", "times_unit", "unit_times"]


@dataclass(frozen=True)
class Head:
    """One attention head: its query/key width ``rank`` and, for concatenated heads, its
    value width ``value_width`` (default: the layer's input width).

    >>> head = Head(2)
    >>> head.factor_shape(3), len(list(head.factor_gauge_units()))
    ((3, 2), 4)
    """

    rank: int = 1
    value_width: int | None = None
    #: the ``nn.MultiheadAttention`` parameter whose first two thirds hold ``Q^T`` and ``K^T``
    torch_attribute: ClassVar[str] = "in_proj_weight"

    def factor_shape(self, width_in: int) -> tuple[int, int]:
        """The shape of ``Q`` and of ``K``: ``(width_in, rank)``.

        Parameters
        ----------
        width_in : int
            The layer's input width.

        Returns
        -------
        tuple of int
        """
        return (width_in, self.rank)

    def score(self, b: Any, q: str, k: str, name: str, key_name: str) -> str:
        """The score node ``A = Q K^T`` (the attention reads ``x_a^T A x_b``).

        Parameters
        ----------
        b : Builder
            The graph builder (:class:`~symattn.model.network.Builder`).
        q, k : str
            The factor nodes.
        name, key_name : str
            The names of the product node and of the node ``K^T``.

        Returns
        -------
        str
        """
        return b.op(name, "matmul", q, b.op(key_name, "transpose", k))

    def reference_score(self, R: Any, Q: list, K: list) -> list:
        """The naive ``A = Q K^T`` (lists of rows over the ring ``R``).

        Parameters
        ----------
        R : ring
            The scalar ring of :mod:`symattn.model.reference`.
        Q, K : list of list
            The factors.

        Returns
        -------
        list of list
        """
        return product(R, Q, transpose(K))

    def factor_gauge_units(self) -> Iterator[tuple[int, int]]:
        """``(a, b)`` of the basis ``B = E_ab`` of ``gl(r)``, ``a`` outer: one factor gauge each."""
        return itertools.product(range(self.rank), range(self.rank))

    def factor_gauges(self, Q: np.ndarray, K: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The infinitesimal factor gauges ``(Q B, -K B^T)`` for ``B = E_ab`` (:meth:`factor_gauge_units`
        order): ``(Q + t Q B)(K - t K B^T)^T = Q K^T + O(t^2)``. Biases move the same way as rows of the
        augmented factors (give ``bQ``, ``bK`` as ``Q``, ``K``).

        Parameters
        ----------
        Q, K : numpy.ndarray
            The factors (or their biases), exact entries.

        Returns
        -------
        iterator of tuple of numpy.ndarray
            The moves of ``Q`` and ``K``.

        Examples
        --------
        >>> Q, K = np.array([[1, 2]], dtype=object), np.array([[3, 4]], dtype=object)
        >>> [(q.tolist(), k.tolist()) for q, k in Head(2).factor_gauges(Q, K)][1]
        ([[0, 1]], [[-4, 0]])
        """
        for a, b in self.factor_gauge_units():
            yield times_unit(Q, a, b), times_unit(K, b, a, -1)


def times_unit(m: np.ndarray, a: int, b: int, sign: int = 1) -> np.ndarray:
    """``sign m E_ab`` without the products by zero (column ``b`` is column ``a`` of ``m``).

    Parameters
    ----------
    m : numpy.ndarray
        A matrix (any entry type).
    a, b : int
        The unit matrix ``E_ab``.
    sign : int
        ``1`` or ``-1``.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> m = np.array([[1, 2], [3, 4]], dtype=object)
    >>> E = np.array([[0, 1], [0, 0]], dtype=object)
    >>> bool((times_unit(m, 0, 1, -1) == -m.dot(E)).all() and (unit_times(0, 1, m) == E.dot(m)).all())
    True
    """
    out = _zeros_like(m)
    out[..., b] = m[..., a] if sign > 0 else -m[..., a]
    return out


def unit_times(a: int, b: int, m: np.ndarray, sign: int = 1) -> np.ndarray:
    """``sign E_ab m`` without the products by zero (row ``a`` is row ``b`` of ``m``).

    Parameters
    ----------
    a, b : int
        The unit matrix ``E_ab``.
    m : numpy.ndarray
        A matrix (any entry type).
    sign : int
        ``1`` or ``-1``.

    Returns
    -------
    numpy.ndarray
    """
    out = _zeros_like(m)
    out[a] = m[b] if sign > 0 else -m[b]
    return out


def _zeros_like(m: np.ndarray) -> np.ndarray:
    """Zeros of ``m``'s shape, dtype and entry type (``m * 0``, one product)."""
    return np.full(m.shape, m.reshape(-1)[0] * 0 if m.size else 0, dtype=m.dtype)
