"""SwiGLU: the gated feed-forward sublayer ``x -> W_down (silu(W_gate x) * (W_up x))`` (no biases).

Llama, Mistral and Qwen2's MLP. Its parameters are ``gate`` and ``up`` (``ff x d``) and ``down``
(``d x ff``). Its declared symmetries, both of the hidden units (:class:`SwiGLU`):

* the up/down diagonal scaling: unit ``j``'s row of ``W_up`` times ``l_j``, its column of
  ``W_down`` times ``1/l_j`` (the product is linear in the up branch), ``ff`` directions,
  tangent ``(dW_up, dW_down) = (diag(c) W_up, -W_down diag(c))`` (:meth:`SwiGLU.scaling`);
* the hidden-unit permutations: the same permutation of the rows of ``W_gate``, ``W_up`` and the
  columns of ``W_down`` (:meth:`SwiGLU.permute`; discrete, no tangent direction).

The gate has no scaling: ``silu`` is not homogeneous.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["SwiGLU"]


class SwiGLU:
    """The SwiGLU MLP (module docstring).

    >>> part = SwiGLU()
    >>> part.parameters
    ('gate', 'up', 'down')
    >>> x = np.array([[1.0, 2.0]])
    >>> g, u, d = np.eye(2), np.eye(2), np.eye(2)
    >>> np.allclose(part.reference(x, g, u, d), part.reference(x, *part.permute(g, u, d, [1, 0])))
    True
    """

    spelling = "swiglu"
    title = "SwiGLU"
    parameters = ("gate", "up", "down")
    activation = "silu"

    @staticmethod
    def reference(x: np.ndarray, gate: np.ndarray, up: np.ndarray, down: np.ndarray) -> np.ndarray:
        """The naive formula on ``x`` (``(..., d)``, one token per row), one hidden unit at a time."""
        x = np.asarray(x, dtype=np.float64)
        out = np.zeros(x.shape[:-1] + (down.shape[0],))
        for j in range(gate.shape[0]):
            g = x @ gate[j]
            u = x @ up[j]
            silu = g / (1.0 + np.exp(-g)) if np.ndim(g) else g / (1.0 + math.exp(-g))
            out += (silu * u)[..., None] * down[:, j]
        return out

    @staticmethod
    def forward(x, gate, up, down, torch):
        """The vectorised formula in PyTorch (tensors; weights stored ``(out, in)`` as ``nn.Linear``)."""
        F = torch.nn.functional
        return F.linear(F.silu(F.linear(x, gate)) * F.linear(x, up), down)

    @staticmethod
    def scaling(up: np.ndarray, down: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The tangent of the up/down diagonal scaling ``l = exp(t c)`` at ``t = 0``."""
        return c[:, None] * up, -down * c[None, :]

    @staticmethod
    def permute(gate, up, down, perm) -> tuple:
        """The weights with the hidden units permuted by ``perm`` (the same function)."""
        perm = list(perm)
        return gate[perm], up[perm], down[:, perm]

    def __repr__(self) -> str:
        return "SwiGLU()"
