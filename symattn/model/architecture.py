"""Architectures, native and effective parameters, the reduction pi, gauges.

Notation of the paper (Section 2, eq. 3, Appendix A.4): native weights
``Q_i, K_i`` in R^{d_{i-1} x r_i} and ``V_i`` in R^{d_i x d_{i-1}}; ``A_i = Q_i K_i^T``,
``P_0 = I``, ``P_i = V_i ... V_1``; the reduction ``pi`` gives the effective tuple
``M_i = P_{i-1}^T A_i P_{i-1}``, ``L = P_D`` (valid for rectangular or singular V).

All parameters are NumPy object arrays of :class:`fractions.Fraction` (exact);
any algebra embeds them with its ``const``. Flat native vectors list, layer by
layer, the entries of ``Q_i``, ``K_i``, ``V_i`` in row-major order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator, Sequence

import numpy as np

from symattn.core.errors import SymattnError
from symattn.core.limits import MAX_DEPTH, MAX_TOKENS, MAX_WIDTH
from symattn.core.linalg import identity_matrix
from symattn.model.normalizer import Normalizer, normalizers

__all__ = [
    "Architecture", "NativeParams", "EffectiveParams", "reduction", "factor_gauges",
    "interface_directions", "random_native", "random_bank", "rational_matrix",
    "random_rational_matrix", "gauge_directions",
    "exact_rationals", "native_path_values",
]


def rational_matrix(rows: Sequence[Sequence]) -> np.ndarray:
    """An object array of Fractions from nested lists of ints, Fractions or strings like ``"1/3"``."""
    arr = np.asarray(rows, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    for idx, v in np.ndenumerate(arr):
        if isinstance(v, float):
            raise SymattnError(f"float entry {v!r}: give exact rationals as integers or strings like '1/3'")
        out[idx] = Fraction(v)
    return out


@dataclass(frozen=True)
class Architecture:
    """A pure serial single-head attention stack.

    Parameters
    ----------
    widths : token widths ``d_0, ..., d_D``
    ranks : query/key widths ``r_1, ..., r_D``
    tokens : token count ``n >= 2``
    normalizers : one :class:`~symattn.model.normalizer.Normalizer` per layer

    Examples
    --------
    >>> arch = Architecture.uniform(depth=3, width=4, rank=2, tokens=4, normalizer="exp")
    >>> arch.native_size, arch.effective_size
    (96, 64)
    """

    widths: tuple[int, ...]
    ranks: tuple[int, ...]
    tokens: int
    normalizers: tuple[Normalizer, ...]

    def __post_init__(self) -> None:
        D = len(self.ranks)
        if D < 1:
            raise SymattnError("depth D must be at least 1")
        if D > MAX_DEPTH or max(self.widths, default=0) > MAX_WIDTH or self.tokens > MAX_TOKENS:
            raise SymattnError(f"architecture beyond the limits (depth <= {MAX_DEPTH}, widths <= "
                               f"{MAX_WIDTH}, tokens <= {MAX_TOKENS}); see symattn.core.limits")
        if len(self.widths) != D + 1:
            raise SymattnError(f"need D + 1 = {D + 1} widths d_0..d_D, got {len(self.widths)}")
        if any(int(d) < 1 for d in self.widths):
            raise SymattnError(f"widths must be positive, got {self.widths}")
        if self.tokens < 2:
            raise SymattnError(f"token count n must be at least 2, got {self.tokens}")
        for i, r in enumerate(self.ranks, 1):
            if r < 1:
                raise SymattnError(f"query/key width r_{i} must be at least 1, got {r}")
        if len(self.normalizers) != D:
            raise SymattnError(f"need one normalizer per layer (D = {D}), got {len(self.normalizers)}")

    @classmethod
    def uniform(cls, depth: int, width: int, rank: "int | Sequence[int]", tokens: int,
                normalizer: "str | Normalizer | Sequence" = "exp") -> "Architecture":
        """Equal widths ``d``; ``rank`` and ``normalizer`` may be per-layer lists."""
        if depth < 1:
            raise SymattnError(f"depth D must be at least 1, got {depth}")
        if depth > MAX_DEPTH:
            raise SymattnError(f"depth {depth} is beyond the limit {MAX_DEPTH}")
        ranks = _per_layer(rank, depth, "rank")
        return cls(tuple([width] * (depth + 1)), ranks, tokens, normalizers(normalizer, depth))

    @property
    def depth(self) -> int:
        return len(self.ranks)

    @property
    def d(self) -> int:
        """The common width (error unless all widths agree)."""
        if len(set(self.widths)) != 1:
            raise SymattnError(f"this needs equal widths, got {self.widths}")
        return self.widths[0]

    def native_shapes(self) -> list[tuple[str, tuple[int, int]]]:
        """``[("Q1", shape), ("K1", shape), ("V1", shape), ("Q2", ...), ...]``."""
        out = []
        for i in range(1, self.depth + 1):
            d_in, d_out, r = self.widths[i - 1], self.widths[i], self.ranks[i - 1]
            out += [(f"Q{i}", (d_in, r)), (f"K{i}", (d_in, r)), (f"V{i}", (d_out, d_in))]
        return out

    def effective_shapes(self) -> list[tuple[str, tuple[int, int]]]:
        """``[("L", (d_D, d_0)), ("M1", (d_0, d_0)), ...]``."""
        d0 = self.widths[0]
        return [("L", (self.widths[-1], d0))] + [(f"M{i}", (d0, d0)) for i in range(1, self.depth + 1)]

    @property
    def native_size(self) -> int:
        return sum(int(np.prod(s)) for _, s in self.native_shapes())

    @property
    def effective_size(self) -> int:
        return sum(int(np.prod(s)) for _, s in self.effective_shapes())

    def offsets(self) -> dict[str, int]:
        """Start of each native block in the flat native vector."""
        out, k = {}, 0
        for name, shape in self.native_shapes():
            out[name] = k
            k += int(np.prod(shape))
        return out


def _per_layer(value, depth: int, what: str) -> tuple[int, ...]:
    if isinstance(value, str):
        try:
            value = [int(v) for v in value.split(",")]
        except ValueError:
            raise SymattnError(f"{what} must be an integer or a comma list of integers, "
                               f"got {value!r}") from None
    if isinstance(value, int):
        return (int(value),) * depth
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * depth
    if len(value) != depth:
        raise SymattnError(f"{what} list has {len(value)} entries; give 1 or D = {depth}")
    return value


@dataclass
class NativeParams:
    """Native weights ``Q_i, K_i, V_i`` (exact object arrays)."""

    Q: tuple[np.ndarray, ...]
    K: tuple[np.ndarray, ...]
    V: tuple[np.ndarray, ...]

    def as_dict(self) -> dict[str, np.ndarray]:
        out = {}
        for i, (q, k, v) in enumerate(zip(self.Q, self.K, self.V), 1):
            out.update({f"Q{i}": q, f"K{i}": k, f"V{i}": v})
        return out

    def flat(self) -> np.ndarray:
        return np.concatenate([a.reshape(-1) for a in self.as_dict().values()])

    def check(self, arch: Architecture) -> None:
        """Raise :class:`SymattnError` unless the shapes fit ``arch``."""
        got = self.as_dict()
        for name, shape in arch.native_shapes():
            if name not in got or tuple(got[name].shape) != shape:
                have = None if name not in got else tuple(got[name].shape)
                raise SymattnError(f"{name} has shape {have}, the architecture needs {shape}")


@dataclass
class EffectiveParams:
    """Effective tuple ``(L, M_1, ..., M_D)``."""

    L: np.ndarray
    M: tuple[np.ndarray, ...]

    def as_dict(self) -> dict[str, np.ndarray]:
        return {"L": self.L, **{f"M{i}": m for i, m in enumerate(self.M, 1)}}

    def check(self, arch: Architecture) -> None:
        got = self.as_dict()
        for name, shape in arch.effective_shapes():
            if name not in got or tuple(got[name].shape) != shape:
                have = None if name not in got else tuple(got[name].shape)
                raise SymattnError(f"{name} has shape {have}, the architecture needs {shape}")


def reduction(theta: NativeParams) -> EffectiveParams:
    """The reduction map pi of eq. (3): exact, for any (rectangular, singular) values.

    Examples
    --------
    >>> arch = Architecture.uniform(2, 2, 1, 2, "exp")
    >>> eta = reduction(random_native(arch, seed=1))
    >>> eta.L.shape, len(eta.M)
    ((2, 2), 2)
    """
    P = identity_matrix(theta.Q[0].shape[0])
    M = []
    for q, k, v in zip(theta.Q, theta.K, theta.V):
        M.append(P.T.dot(q.dot(k.T)).dot(P))
        P = v.dot(P)
    return EffectiveParams(P, tuple(M))


def _unit_times(a: int, b: int, M: np.ndarray) -> np.ndarray:
    """``E_ab M`` exactly, without arithmetic: row ``a`` is row ``b`` of ``M``."""
    out = np.full(M.shape, Fraction(0), dtype=object)
    out[a, :] = M[b, :]
    return out


def _times_unit(M: np.ndarray, a: int, b: int) -> np.ndarray:
    """``M E_ab`` exactly, without arithmetic: column ``b`` is column ``a`` of ``M``."""
    out = np.full(M.shape, Fraction(0), dtype=object)
    out[:, b] = M[:, a]
    return out


def _flat_direction(arch: Architecture, blocks: dict[str, np.ndarray]) -> np.ndarray:
    out = np.full(arch.native_size, Fraction(0), dtype=object)
    off = arch.offsets()
    for name, value in blocks.items():
        out[off[name]: off[name] + value.size] = value.reshape(-1)
    return out


def factor_gauges(arch: Architecture, theta: NativeParams) -> Iterator[np.ndarray]:
    """Infinitesimal factor gauges of eq. (50): ``(Q_i B, -K_i B^T)``, ``B = E_ab``."""
    for i in range(1, arch.depth + 1):
        r = arch.ranks[i - 1]
        for a in range(r):
            for b in range(r):
                # B = E_ab: (Q_i B, -K_i B^T), B^T = E_ba
                yield _flat_direction(arch, {f"Q{i}": _times_unit(theta.Q[i - 1], a, b),
                                             f"K{i}": -_times_unit(theta.K[i - 1], b, a)})


def interface_directions(arch: Architecture, theta: NativeParams) -> Iterator[np.ndarray]:
    """Interface directions (App. F.2) at each internal interface ``j``: the
    infinitesimal ``G = I + H`` acting as ``V_j -> G V_j``, ``V_{j+1} -> V_{j+1} G^{-1}``,
    ``Q_{j+1}, K_{j+1} -> G^{-T} Q_{j+1}, G^{-T} K_{j+1}``."""
    for j in range(1, arch.depth):
        dj = arch.widths[j]
        for a in range(dj):
            for b in range(dj):
                # H = E_ab, H^T = E_ba
                yield _flat_direction(arch, {
                    f"V{j}": _unit_times(a, b, theta.V[j - 1]),
                    f"V{j + 1}": -_times_unit(theta.V[j], a, b),
                    f"Q{j + 1}": -_unit_times(b, a, theta.Q[j]),
                    f"K{j + 1}": -_unit_times(b, a, theta.K[j]),
                })


def exact_rationals(a) -> np.ndarray:
    """Exact Fractions of an array of ints, Fractions or binary floats
    (``Fraction(float)`` is exact: no rounding happens)."""
    exact = lambda v: Fraction(v) if isinstance(v, (int, Fraction)) else Fraction(float(v))  # noqa: E731
    return np.vectorize(exact, otypes=[object])(np.asarray(a, dtype=object))


def gauge_directions(arch: Architecture, theta: NativeParams) -> list[np.ndarray]:
    """All explicit kernel directions of ``D pi`` at ``theta``: the factor gauges
    (eq. 50) followed by the interface directions (App. F.2)."""
    return list(factor_gauges(arch, theta)) + list(interface_directions(arch, theta))


def native_path_values(arch: Architecture, algebra, U, W, V, squared: bool = False) -> dict:
    """The native path ``Q_i = t U_i, K_i = t W_i, V_i`` as tensors of a series ``algebra``.

    With ``squared`` the series variable is ``u = t^2`` and the path is written
    ``Q_i = u U_i, K_i = W_i`` (the same scores ``A_i = t^2 U_i W_i^T``; see
    :func:`symattn.analyses.spectrum.bank_jacobian` for how columns are mapped back to ``t``).

    >>> from symattn.core.algebras import exact_series
    >>> arch = Architecture.uniform(1, 1, 1, 2, "exp")
    >>> vals = native_path_values(arch, exact_series(2), [[[2]]], [[[3]]], [[[1]]])
    >>> [str(c) for c in vals["Q1"].reshape(-1)]
    ['0', '2']
    """
    vals = {}
    for i in range(arch.depth):
        zero = np.zeros(np.shape(U[i]), dtype=int)
        vals[f"Q{i + 1}"] = algebra.series([zero, U[i]])
        vals[f"K{i + 1}"] = algebra.const(W[i]) if squared else algebra.series([zero, W[i]])
        vals[f"V{i + 1}"] = algebra.const(V[i])
    return vals


def random_rational_matrix(rng: random.Random, shape: tuple[int, ...], scale: int = 4) -> np.ndarray:
    """Entries ``a/b`` with ``a`` uniform in ``[-scale, scale]`` and ``b`` in ``[1, scale]``."""
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        out[idx] = Fraction(rng.randint(-scale, scale), rng.randint(1, scale))
    return out


def random_native(arch: Architecture, seed: int = 0, values: str = "random") -> NativeParams:
    """Seeded generic rational native weights; ``values="identity"`` sets ``V_i = I``
    (equal widths only)."""
    rng = random.Random(seed)
    Q, K, V = [], [], []
    for i in range(1, arch.depth + 1):
        d_in, d_out, r = arch.widths[i - 1], arch.widths[i], arch.ranks[i - 1]
        Q.append(random_rational_matrix(rng, (d_in, r)))
        K.append(random_rational_matrix(rng, (d_in, r)))
        if values == "identity":
            if d_in != d_out:
                raise SymattnError("identity values need equal widths")
            V.append(identity_matrix(d_in))
        else:
            V.append(random_rational_matrix(rng, (d_out, d_in)))
    return NativeParams(tuple(Q), tuple(K), tuple(V))


def random_bank(arch: Architecture, size: int, seed: int = 0) -> np.ndarray:
    """A seeded bank of ``size`` rational inputs, shape ``(size, d_0, n)``."""
    if size < 1:
        raise SymattnError(f"bank size must be positive, got {size}")
    return random_rational_matrix(random.Random(10_007 * seed + 1), (size, arch.widths[0], arch.tokens))
