"""Grouped-query attention: ``H`` query heads share ``G`` key/value heads (``G`` divides ``H``).

Query head ``h`` reads key/value head ``g(h) = h // (H / G)`` (Hugging Face's ``repeat_kv``: each
key/value head repeated ``H / G`` times, consecutively), :meth:`GroupedQueryAttention.group`. With
``G = H`` it is multi-head attention. Its parameters are ``W_q`` (``H e x d``), ``W_k``, ``W_v``
(``G e x d``), ``W_o`` (``d x H e``) and, where stored, the biases of ``q``, ``k``, ``v``.

Its declared symmetries are those of multi-head attention, shared by each group
(:meth:`GroupedQueryAttention.gauge_counts`):

* value/output: ``W_v[g] -> B W_v[g]`` (and its bias), ``W_o[:, h] -> W_o[:, h] B^-1`` for every
  query head ``h`` of group ``g``: ``e^2`` per key/value head (not per query head);
* query/key: ``W_q[h] -> A W_q[h]`` for every ``h`` of group ``g``, ``W_k[g] -> A^-T W_k[g]``:
  ``e^2`` per key/value head, or with rotary positions only the ``A`` that commute with the
  rotations (:meth:`symattn.model.parts.rotary.Rotary.commutant`, ``e`` per key/value head);
* discrete: permuting the query heads inside a group, and the groups together with their heads.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["GroupedQueryAttention"]


class GroupedQueryAttention:
    """Grouped-query attention with ``heads`` query heads and ``kv_heads`` key/value heads.

    >>> part = GroupedQueryAttention(4, 2)
    >>> [part.group(h) for h in range(4)], part.members(1)
    ([0, 0, 1, 1], [2, 3])
    >>> part.gauge_counts(8, rotary=True)
    {'query/key': 16, 'value/output': 128}
    """

    spelling = "gqa"
    title = "grouped-query attention"
    parameters = ("q", "k", "v", "o")

    def __init__(self, heads: int, kv_heads: int):
        if kv_heads < 1 or heads % kv_heads:
            raise ValueError(f"{kv_heads} key/value heads do not divide {heads} query heads")
        self.heads, self.kv_heads = int(heads), int(kv_heads)

    def group(self, h: int) -> int:
        """The key/value head query head ``h`` reads."""
        return h // (self.heads // self.kv_heads)

    def members(self, g: int) -> list[int]:
        """The query heads of key/value head ``g``."""
        return [h for h in range(self.heads) if self.group(h) == g]

    def gauge_counts(self, head_dim: int, rotary: bool) -> dict[str, int]:
        """The dimensions of the declared continuous symmetries of one layer (module docstring)."""
        return {"query/key": self.kv_heads * (head_dim if rotary else head_dim * head_dim),
                "value/output": self.kv_heads * head_dim * head_dim}

    def reference(self, x: np.ndarray, p: dict, head_dim: int, rotary=None, causal: bool = True,
                  only: int | None = None) -> np.ndarray:
        """The naive formula on ``x`` (``(..., n, d)``, tokens as rows): per query head ``h``, its key/value
        head ``g(h)``, scores ``(q_a . k_b) / sqrt(e)`` after the rotation (``rotary.reference``), a causal
        mask, softmax over keys, values, ``W_o``; ``only``: head ``only``'s term alone. ``p`` maps
        ``q, k, v, o`` (and ``q.bias``, ...) to the stored arrays (``nn.Linear``'s ``(out, in)``)."""
        e = head_dim
        n = x.shape[-2]
        out = np.zeros(x.shape[:-1] + (p["o"].shape[0],))
        for h in range(self.heads) if only is None else [only]:
            g = self.group(h)
            rq, rk = slice(h * e, (h + 1) * e), slice(g * e, (g + 1) * e)

            def proj(part, rows):
                y = x @ p[part][rows].T
                return y + p[part + ".bias"][rows] if part + ".bias" in p else y

            q, k, v = proj("q", rq), proj("k", rk), proj("v", rk)
            if rotary is not None:
                q, k = rotary.reference(q), rotary.reference(k)
            s = q @ np.swapaxes(k, -1, -2) / math.sqrt(e)
            if causal:
                s = s + np.triu(np.full((n, n), -np.inf), 1)
            s = s - s.max(-1, keepdims=True)
            w = np.exp(s)
            w = w / w.sum(-1, keepdims=True)
            out += (w @ v) @ p["o"][:, rq].T
        if only is None and "o.bias" in p:
            out = out + p["o.bias"]
        return out

    def __repr__(self) -> str:
        return f"GroupedQueryAttention({self.heads}, {self.kv_heads})"
