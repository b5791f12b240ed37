"""Biases: the offsets of the queries, keys and values of every head (and of ``W_O``).

Two parts, spelled as in specs (``bias = true``) and on the command line (``--bias``): none (the
paper's heads) and :class:`Biases` (``bQ``, ``bK`` of shape ``1 x r``, ``bV`` of shape ``d_v x 1``,
and ``bO`` with an output projection; ``q_a = Q^T x_a + bQ^T``). The part owns its graph nodes
(:meth:`Bias.scores`, :meth:`Bias.values`), its naive formulas (:meth:`Bias.reference_scores`,
:meth:`Bias.reference_values`), the directions of its declared symmetry (the softmax key bias:
``bK`` moved by ``delta`` adds ``(q_a + bQ) . delta`` to every score of query ``a``, which a row
normalisation cancels; :meth:`Bias.key_bias_directions`) and its PyTorch reading
(``nn.MultiheadAttention(bias=True)``: :attr:`Bias.torch_attribute`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from symattn.core.errors import SymattnError
from symattn.model.parts.ring import per_token, product, transpose
from symattn.model.parts.kind import PartKind

__all__ = ["Bias", "NoBias", "Biases", "BIAS_KINDS", "bias_part"]


class Bias(PartKind):
    """A layer's biases (see the module docstring).

    Attributes
    ----------
    present : bool
        The heads' queries, keys and values (and ``W_O``) carry biases: the spec's ``bias``.
    roles : tuple of str
        The head roles that get a bias block ``b{role}``.
    torch_attribute : str or None
        The attribute of ``nn.MultiheadAttention`` holding the query, key and value biases.
    """

    present: ClassVar[bool]
    roles: ClassVar[tuple[str, ...]] = ()
    torch_attribute: ClassVar[str | None] = None

    def scores(self, b: Any, x: str, q: str, k: str, bq: str | None, bk: str | None, tag: str) -> str:
        """The score node ``(Q^T X + bQ^T)^T (K^T X + bK^T)`` (queries as rows; no bias: ``X^T Q K^T X``).

        Parameters
        ----------
        b : Builder
            The graph builder (:class:`~symattn.model.network.Builder`).
        x, q, k : str
            The input, query and key nodes.
        bq, bk : str or None
            The query and key bias nodes (None without biases).
        tag : str
            The prefix of the new nodes.

        Returns
        -------
        str
            The score node ``Z`` (``n x n``).
        """
        def side(role: str, factor: str, bias: str | None) -> str:  # F^T X (+ bF^T), one row per token
            y = b.op(f"{tag}.{role}TX", "matmul", b.op(f"{tag}.{role}T", "transpose", factor), x)
            if not self.present:
                return y
            return b.op(f"{tag}.{role.lower()}x", "add", y, b.op(f"{tag}.b{role}T", "transpose", bias))

        qx = side("Q", q, bq)
        kx = side("K", k, bk)
        return b.op(f"{tag}.Z", "matmul", b.op(f"{tag}.qxT", "transpose", qx), kx)

    def values(self, b: Any, y: str, bv: str | None, name: str) -> str:
        """A head's value output with its bias: ``V S + bV`` (node ``name``), or ``y`` unchanged.

        Parameters
        ----------
        b : Builder
            The graph builder.
        y : str
            The node ``V S``.
        bv : str or None
            The value bias node (None without biases).
        name : str
            The name of the sum node.

        Returns
        -------
        str
        """
        return b.op(name, "add", y, bv) if self.present else y

    def reference_scores(self, R: Any, X: list, Q: list, K: list, bQ: Any, bK: Any) -> list:
        """The naive scores ``z_ab = (Q^T x_a + bQ^T) . (K^T x_b + bK^T)`` (lists of rows over ``R``).

        Parameters
        ----------
        R : ring
            The scalar ring of :mod:`symattn.model.reference`.
        X, Q, K : list of list
            The tokens (columns) and the factors.
        bQ, bK : list of list or None
            The ``1 x r`` biases (None without biases).

        Returns
        -------
        list of list
            The ``n x n`` scores, queries as rows.
        """
        q, k = product(R, transpose(Q), X), product(R, transpose(K), X)  # (r, n)
        if self.present:
            q, k = per_token(R, q, transpose(bQ)), per_token(R, k, transpose(bK))
        return product(R, transpose(q), k)  # z_ab = sum_j q_ja k_jb

    def reference_values(self, R: Any, Y: list, bV: Any) -> list:
        """The naive ``V S + bV`` (``bV`` added to every token), or ``Y`` unchanged.

        Parameters
        ----------
        R : ring
            The scalar ring.
        Y : list of list
            ``V S``.
        bV : list of list or None
            The ``d_v x 1`` bias.

        Returns
        -------
        list of list
        """
        return per_token(R, Y, bV) if self.present else Y

    def key_bias_directions(self, rank: int, exponential: bool) -> list[np.ndarray]:
        """The declared softmax key bias directions of one head: the unit ``1 x r`` matrices on ``bK``
        (exact) where the head has biases and its normalizer is exponential, else none.

        Parameters
        ----------
        rank : int
            The head's query/key width ``r``.
        exponential : bool
            The layer's normalizer is ``exp`` up to a constant factor (a row shift cancels).

        Returns
        -------
        list of numpy.ndarray
            ``r`` directions or none.
        """
        if not (self.present and exponential):
            return []
        out = []
        for j in range(rank):
            e = np.full((1, rank), Fraction(0), dtype=object)
            e[0, j] = Fraction(1)
            out.append(e)
        return out


class NoBias(Bias):
    """No biases (the paper's heads).

    >>> NoBias().present, NoBias().key_bias_directions(2, True)
    (False, [])
    """

    present = False


class Biases(Bias):
    """Biases on the queries, keys and values of every head, and on ``W_O``.

    >>> Biases().roles, len(Biases().key_bias_directions(2, True)), Biases().key_bias_directions(2, False)
    (('Q', 'K', 'V'), 2, [])
    """

    present = True
    roles = ("Q", "K", "V")
    torch_attribute = "in_proj_bias"


#: The bias parts by the spec's ``bias`` flag.
BIAS_KINDS: dict[bool, Bias] = {False: NoBias(), True: Biases()}


def bias_part(flag: bool) -> Bias:
    """The bias part of the spec's ``bias`` flag.

    Parameters
    ----------
    flag : bool
        ``bias = true`` or ``false``.

    Returns
    -------
    Bias

    Raises
    ------
    SymattnError
        ``flag`` is not a bool (one line).

    Examples
    --------
    >>> bias_part(True)
    Biases()
    >>> bias_part("yes")
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: bias must be true or false, got 'yes'
    """
    if not isinstance(flag, bool):
        raise SymattnError(f"bias must be true or false, got {flag!r}")
    return BIAS_KINDS[flag]
