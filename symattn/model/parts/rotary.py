"""Rotary position embeddings: a fixed rotation of each query and key by its token's position.

Llama, Mistral and Qwen2 rotate the query ``q_a`` and key ``k_b`` of tokens ``a`` and ``b`` (their
positions ``0, 1, ...``) before the score, so the score is ``q_a^T R_a^T R_b k_b`` with ``R_a`` block
diagonal: one ``2 x 2`` rotation by the angle ``a f_j`` in each frequency plane ``j``,
``f_j = base^(-2j / e)`` (``e`` the head width). The planes are the coordinate pairs
``(j, j + e/2)`` (Hugging Face's ``rotate_half`` convention), :meth:`Rotary.planes`. The part has
no parameters (``base`` is a config constant).

Its declared symmetry fact (:meth:`Rotary.commutant`): a matrix ``M`` acting on the query of a
head that commutes with every ``R_a`` (in each plane ``alpha I + beta J``, a scaled rotation,
``J = [[0, -1], [1, 0]]``), paired with ``M^-T`` on the key, leaves every score unchanged:
``(R_a M q)^T (R_b M^-T k) = q^T M^T R_a^T R_b M^-T k = q^T R_a^T R_b k`` (``M^T`` commutes with
the rotations too). So a rotary head keeps ``e`` of the ``e^2`` query/key gauge directions of a
head without positions, when its frequencies are distinct (:meth:`Rotary.distinct`).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Rotary"]


class Rotary:
    """Rotary position embeddings of head width ``dim`` (even) and base ``base`` (module docstring).

    >>> r = Rotary(10000.0, 4)
    >>> r.planes(), r.frequencies().tolist()
    ([(0, 2), (1, 3)], [1.0, 0.01])
    >>> x = np.array([[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])      # two tokens, positions 0 and 1
    >>> np.round(r.reference(x), 4).tolist()
    [[1.0, 0.0, 0.0, 0.0], [0.5403, 0.0, 0.8415, 0.0]]
    """

    spelling = "rotary"
    title = "rotary position embeddings"
    #: no learned parameters: the rotations are fixed by the positions and ``base``
    parameters: tuple[str, ...] = ()

    def __init__(self, base: float, dim: int):
        if dim < 2 or dim % 2:
            raise ValueError(f"rotary embeddings need an even head width, got {dim}")
        if not base > 0:
            raise ValueError(f"rotary base must be positive, got {base}")
        self.base, self.dim = float(base), int(dim)

    def frequencies(self) -> np.ndarray:
        """``f_j = base^(-2j / dim)``, ``j = 0, ..., dim/2 - 1`` (float64)."""
        return np.array([self.base ** (-2.0 * j / self.dim) for j in range(self.dim // 2)])

    def planes(self) -> list[tuple[int, int]]:
        """The coordinate pairs each rotated as one plane: ``(j, j + dim/2)``."""
        half = self.dim // 2
        return [(j, j + half) for j in range(half)]

    def distinct(self) -> bool:
        """Whether the frequencies are distinct (then the commutant of the rotations is exactly the
        per-plane scaled rotations, :meth:`commutant`)."""
        f = self.frequencies()
        return len(set(f.tolist())) == len(f)

    def reference(self, x: np.ndarray) -> np.ndarray:
        """The naive formula on ``x`` (``(..., n, dim)``, tokens as rows at positions ``0..n-1``): each
        plane ``(i, k)`` of token ``a`` rotated by ``a f_j``, one scalar at a time (``math.cos``)."""
        x = np.asarray(x, dtype=np.float64)
        out = np.empty_like(x)
        freq = self.frequencies()
        n = x.shape[-2]
        for a in range(n):
            for j, (i, k) in enumerate(self.planes()):
                c, s = math.cos(a * freq[j]), math.sin(a * freq[j])
                out[..., a, i] = x[..., a, i] * c - x[..., a, k] * s
                out[..., a, k] = x[..., a, k] * c + x[..., a, i] * s
        return out

    def tables(self, n: int, torch, dtype):
        """``(cos, sin)`` of shape ``(n, dim)`` in ``dtype``, computed in float64 (Hugging Face's layout:
        the angles of the planes repeated for both halves)."""
        pos = torch.arange(n, dtype=torch.float64)[:, None]
        ang = pos * torch.as_tensor(self.frequencies(), dtype=torch.float64)[None, :]
        ang = torch.cat([ang, ang], dim=-1)
        return torch.cos(ang).to(dtype), torch.sin(ang).to(dtype)

    def apply(self, x, torch):
        """The rotation of ``x`` (a tensor ``(..., n, dim)``), vectorised: ``x cos + rotate_half(x) sin``."""
        cos, sin = self.tables(x.shape[-2], torch, x.dtype)
        half = self.dim // 2
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos + rotated * sin

    def commutant(self) -> list[np.ndarray]:
        """A basis of the matrices commuting with every rotation: per plane ``(i, k)``, its identity
        ``E_ii + E_kk`` and its rotation generator ``J = E_ki - E_ik`` (``dim`` matrices)."""
        out = []
        for i, k in self.planes():
            eye = np.zeros((self.dim, self.dim))
            eye[i, i] = eye[k, k] = 1.0
            gen = np.zeros((self.dim, self.dim))
            gen[k, i], gen[i, k] = 1.0, -1.0
            out += [eye, gen]
        return out

    def describe(self) -> str:
        """``rotary base 10000``."""
        return f"rotary base {self.base:g}"

    def __repr__(self) -> str:
        return f"Rotary({self.base!r}, {self.dim})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Rotary) and (self.base, self.dim) == (other.base, other.dim)

    def __hash__(self) -> int:
        return hash((self.base, self.dim))
