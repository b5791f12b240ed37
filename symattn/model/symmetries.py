"""The symmetries every architecture declares, and the one place that verifies them.

Continuous symmetries (infinitesimal generators at a native point ``theta``, flat native vectors,
linear in ``theta``; :func:`declared_symmetries`): the **factor gauges** of each head (eq. 50,
``(Q_h B, -K_h B^T)``, :class:`~symattn.model.parts.head.Head`), the **value gauges** of a
concatenated head (``(C V_h, O_h C^-1)``), the **interface gauges** (App. F.2) at the output of
layer ``j`` when neither layer ``j`` nor ``j + 1`` has a skip (``S_A(G X) = G S_{G^T A G}(X)``; a
skip breaks it), and those of the layer parts (:mod:`symattn.model.symmetry_kinds`). Finite
symmetries, which cost no dimension: **head permutations** of equal-shape summed heads
(:func:`head_permutation_check`), **sign flips** of heads with an even normalizer
(:func:`sign_flip_layers`) and **hidden-unit sign flips** of an odd MLP activation
(:func:`hidden_sign_flip_check`). :class:`GaugeKernel` holds the continuous ones at a point,
verifies them as kernel vectors, takes their exact rank and chooses the visible columns (its
Notes). Everything here is exact (rationals, or a full rank mod p).
"""

from __future__ import annotations

from math import factorial, prod
from typing import Callable, Iterator, Mapping, Sequence

from fractions import Fraction

import numpy as np

from symattn.core.algebras import DEFAULT_PRIME
from symattn.core.algebras import exact_series
from symattn.core.algebras.functions import NotRational
from symattn.core.errors import CheckFailed, InternalError
from symattn.core.linalg import Matrix, kernel_complement
from symattn.model.architecture import Architecture, Block
from symattn.model.interpreter import evaluate, jacobian
from symattn.model.network import native_network, reduction_graph
from symattn.model.parameters import flat_vector, native_path_values, point_of
from symattn.model.parts.head import times_unit as _times_unit, unit_times as _unit_times
from symattn.model.symmetry_kinds import WHERE_INDEPENDENT, Symmetry, _bias, _units, block_symmetries

__all__ = [
    "Symmetry", "declared_symmetries", "factor_gauges", "interface_directions", "gauge_directions",
    "GaugeKernel", "visible_blocks", "pi_derivative_vanishes", "path_direction", "head_classes",
    "head_permutation_check", "sign_flip_layers", "hidden_sign_flip_check", "hidden_sign_flip", "KINDS",
]

#: The kinds of continuous symmetries, in the order they are declared.
KINDS = ("factor gauge", "value gauge", "interface", "interface shift", "LayerNorm shift", "softmax key bias",
         "MLP scaling",
         "bias transfer", "MLP interface", "LayerNorm interface", "LayerNorm normal",
         "LayerNorm bias transfer", "LayerNorm normal shift", "LayerNorm shift carried", "MLP polynomial redundancy",
         "interface bias shift", "norm rotation")


def _output_blocks(arch: Architecture, j: int) -> list[Block]:
    """The blocks that carry layer ``j``'s output on the left (its value maps, the output
    projections of concatenated heads, or its MLP's second map ``mlp.out``)."""
    if arch.layers[j - 1].mlp:
        return [arch.layers[j - 1].layer_blocks(j)["mlp.out"]]
    return [blocks["O" if "O" in blocks else "V"] for blocks in arch.layers[j - 1].head_blocks(j)]


def _output_biases(arch: Architecture, j: int) -> list[Block]:
    """The biases added to layer ``j``'s output by the blocks of :func:`_output_blocks`."""
    before = arch.layers[j - 1]
    if before.mlp:
        return [before.layer_blocks(j)["mlp.out_bias"]]
    extra = [_bias(h, "V") for h in before.head_blocks(j) if "O" not in h]
    extra.append(before.layer_blocks(j).get("bO"))
    return [blk for blk in extra if blk is not None]


def _interface(arch: Architecture, j: int) -> bool:
    """Whether ``GL(d_j)`` acts at the output of layer ``j`` (neither side has a skip; layer ``j``
    ends in its heads or its MLP, with no LayerNorm; layer ``j + 1`` reads it through its heads only)."""
    before, after = arch.layers[j - 1], arch.layers[j]
    return (not before.residual and not after.residual and not before.has_norm
            and not after.pre_norm)


def _output_shifts(arch: Architecture, theta, j: int) -> list[Symmetry]:
    """**interface shift**: at an interface (:func:`_interface`) after an MLP, the MLP's bias ``fb_j``
    moved by ``h`` with ``Q^T h = 0`` for every head of layer ``j + 1`` and ``phi = exp`` there: each
    query is unchanged and each score moves by a term of its query alone, which the row
    normalisation cancels; the values move by ``V h``, taken back by the next sublayer's bias (the
    MLP's ``fa -= Fa V h`` when layer ``j + 1`` has one, else each head's ``bV -= V h``). Summed heads."""
    before, after = arch.layers[j - 1], arch.layers[j]
    heads = after.head_blocks(j + 1)
    if not before.mlp or not after.normalizer.exponential or any("O" in h for h in heads):
        return []
    nxt = after.layer_blocks(j + 1)
    if not (after.mlp and not after.residual and not after.has_norm) and not all("bV" in h for h in heads):
        return []
    queries = np.concatenate([np.asarray(theta[h["Q"].name], dtype=object).T for h in heads])
    out = []
    for basis in Matrix.rational(queries).nullspace():
        h = np.array([Fraction(int(x.p), int(x.q)) for x in basis], dtype=object)
        move = {before.layer_blocks(j)["mlp.out_bias"].name: h.reshape(-1, 1)}
        shift = sum((np.asarray(theta[b["V"].name], dtype=object).dot(h) for b in heads), np.zeros(len(h), dtype=object))
        if after.mlp and not after.residual and not after.has_norm:
            move[nxt["mlp.in_bias"].name] = -np.asarray(theta[nxt["mlp.in"].name], dtype=object).dot(shift).reshape(-1, 1)
        else:
            for b in heads:
                move[b["bV"].name] = -np.asarray(theta[b["V"].name], dtype=object).dot(h).reshape(-1, 1)
        out.append(Symmetry("interface shift", j, None, flat_vector(arch, move)))
    return out


def declared_symmetries(arch: Architecture, theta) -> list[Symmetry]:
    """The declared continuous symmetries at ``theta`` (a point, see
    :func:`~symattn.model.parameters.point_of`): per layer and head the factor gauges,
    then the value gauges of concatenated heads; then the interface gauges.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    theta : mapping
        The native point (block name to array; read by :func:`~symattn.model.parameters.point_of`).

    Returns
    -------
    list of Symmetry
        Every declared direction, in declaration order, the dependent optional ones
        (:data:`~symattn.model.symmetry_kinds.WHERE_INDEPENDENT`) dropped.

    Examples
    --------
    >>> from collections import Counter
    >>> from symattn.model.parameters import random_point
    >>> v = Architecture.uniform(2, 2, 1, 2, heads=2)
    >>> Counter(s.kind for s in declared_symmetries(v, random_point(v)))
    Counter({'factor gauge': 4, 'interface': 4})
    """
    theta = point_of(theta)
    out = []
    for i, layer in enumerate(arch.layers, 1):
        for blocks, head in zip(layer.head_blocks(i), layer.heads):
            q, k = blocks["Q"], blocks["K"]
            gauges = head.factor_gauges(theta[q.name], theta[k.name])  # B = E_ab, the head part's order
            biases = head.factor_gauges(theta[blocks["bQ"].name], theta[blocks["bK"].name]) if "bQ" in blocks else None
            for moved_q, moved_k in gauges:
                move = {q.name: moved_q, k.name: moved_k}
                if biases is not None:  # the biases are rows of the augmented factors [Q; bQ], [K; bK]
                    move.update(zip((blocks["bQ"].name, blocks["bK"].name), next(biases)))
                out.append(Symmetry("factor gauge", i, q.head, flat_vector(arch, move)))
            if "O" in blocks:
                v, o = blocks["V"], blocks["O"]
                dv = theta[v.name].shape[0]
                for a, b, _ in _units(dv, dv):  # C = E_ab
                    move = {v.name: _unit_times(a, b, theta[v.name]), o.name: _times_unit(theta[o.name], a, b, -1)}
                    if "bV" in blocks:
                        move[blocks["bV"].name] = _unit_times(a, b, theta[blocks["bV"].name])
                    out.append(Symmetry("value gauge", i, v.head, flat_vector(arch, move)))
    for j in range(1, arch.depth):
        if not _interface(arch, j):
            continue
        for a, b, _ in _units(arch.widths[j], arch.widths[j]):  # H = E_ab
            moved = {blk.name: _unit_times(a, b, theta[blk.name]) for blk in _output_blocks(arch, j)}
            moved.update({blk.name: _unit_times(a, b, theta[blk.name]) for blk in _output_biases(arch, j)})
            for parts in arch.layers[j].head_blocks(j + 1):
                qn, kn = parts["Q"].name, parts["K"].name
                moved[qn] = _unit_times(b, a, theta[qn], -1)
                moved[kn] = _unit_times(b, a, theta[kn], -1)
                if "V" in parts:
                    moved[parts["V"].name] = _times_unit(theta[parts["V"].name], a, b, -1)
            out.append(Symmetry("interface", j, None, flat_vector(arch, moved)))
        out += _output_shifts(arch, theta, j)
    out += block_symmetries(arch, theta)
    keep = independent_rows([s.vector for s in out], [s.kind in WHERE_INDEPENDENT for s in out])
    return [out[i] for i in keep]


def independent_rows(vectors: Sequence[np.ndarray], optional: Sequence[bool]) -> list[int]:
    """Indices of ``vectors`` (rational) to keep, in order: every row not ``optional``, and each
    optional row that is independent mod :data:`DEFAULT_PRIME` of all those and of the optional
    rows kept before it (a row independent mod p is independent over Q; one dependent mod p is
    dropped, which at worst declares fewer directions). A LayerNorm normal can lie in the span of
    value gauges and LayerNorm shifts, and the kernel split along the path needs independent
    directions.

    >>> e = [np.array([1, 1]), np.array([1, 0]), np.array([0, 1])]
    >>> independent_rows(e, [True, False, False]), independent_rows(e, [False, True, True])
    ([1, 2], [0, 1])
    """
    if not any(optional):
        return list(range(len(vectors)))
    # the pivot columns of [required | optional] (vectors as columns) are the vectors that are
    # independent of the ones before them: every required one first, then the optional in order
    order = [i for i, opt in enumerate(optional) if not opt] + [i for i, opt in enumerate(optional) if opt]
    pivots = set(Matrix.modular(np.array([vectors[i] for i in order], dtype=object).T, DEFAULT_PRIME).rref()[1])
    kept = {i for pos, i in enumerate(order) if not optional[i] or pos in pivots}
    return sorted(kept)


def factor_gauges(arch: Architecture, theta) -> Iterator[np.ndarray]:
    """Infinitesimal factor gauges of eq. (50): ``(Q_i B, -K_i B^T)``, ``B = E_ab``."""
    return (s.vector for s in declared_symmetries(arch, theta) if s.kind == "factor gauge")


def interface_directions(arch: Architecture, theta) -> Iterator[np.ndarray]:
    """Interface directions (App. F.2) at each internal interface ``j``: the
    infinitesimal ``G = I + H`` acting as ``V_j -> G V_j``, ``V_{j+1} -> V_{j+1} G^{-1}``,
    ``Q_{j+1}, K_{j+1} -> G^{-T} Q_{j+1}, G^{-T} K_{j+1}``."""
    return (s.vector for s in declared_symmetries(arch, theta) if s.kind == "interface")


def gauge_directions(arch: Architecture, theta) -> list[np.ndarray]:
    """All declared kernel directions at ``theta``: for the paper's stack the factor gauges
    (eq. 50) followed by the interface directions (App. F.2).

    Parameters
    ----------
    arch : Architecture
        The architecture.
    theta : mapping
        The native point.

    Returns
    -------
    list of numpy.ndarray
        The flat native vectors of :func:`declared_symmetries`.
    """
    return [s.vector for s in declared_symmetries(arch, theta)]


def path_direction(arch: Architecture, vec: np.ndarray) -> np.ndarray:
    """A flat native direction at ``t = 1`` as a direction along the path: its
    query/key entries are multiplied by ``t``. Returns coefficients ``(2, P)``.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    vec : numpy.ndarray
        A flat native direction at ``t = 1``.

    Returns
    -------
    numpy.ndarray
        Its coefficients of ``t^0`` and ``t^1``, shape ``(2, P)``.

    Examples
    --------
    >>> arch = Architecture.uniform(1, 1, 1, 2, "exp")
    >>> path_direction(arch, np.array([1, 2, 3], dtype=object)).tolist()
    [[0, 0, 3], [1, 2, 0]]
    """
    qk = np.array([b.is_factor for b in arch.column_blocks()], dtype=bool)
    zero = np.zeros(arch.native_size, dtype=object)
    return np.stack([np.where(qk, zero, vec), np.where(qk, vec, zero)])


def _pi_vanishes(arch: Architecture, point: Mapping[str, np.ndarray], xi: np.ndarray) -> list[bool]:
    """``D pi(theta(t)) xi(t) = 0`` identically in ``t`` for each direction ``xi(t) = xi[0] + t xi[1]``
    (``xi`` of shape ``(2, k, P)``) along ``Q = t U, K = t W`` through ``point`` (at ``t = 1``):
    exact, a polynomial of degree at most 2 in ``t``, computed mod ``t^4``."""
    A = exact_series(4)
    graph = reduction_graph(arch)
    J = jacobian(graph, A, native_path_values(arch, A, dict(point), None, None),
                 [b.name for b in arch.blocks], output=list(graph.graph["outputs"]), directions=A.series(list(xi)))
    return [bool(v) for v in np.atleast_1d(np.asarray(A.field.is_zero(J)).all(axis=(0, 1)))]


def pi_derivative_vanishes(arch: Architecture, U, W, V, directions: Sequence[np.ndarray]) -> list[bool]:
    """For each flat native direction ``xi`` (at ``t = 1``; see :func:`path_direction`),
    whether ``D pi(theta(t)) xi(t)`` vanishes identically in ``t``.

    Exact: ``D pi(theta(t)) xi(t)`` is a polynomial of degree at most 2 in ``t``
    (``M_i`` is quadratic in the factors, values are constant, ``xi`` is linear
    in ``t``), computed as an exact series mod ``t^4`` through the reduction
    graph, hence exactly.

    Parameters
    ----------
    arch : Architecture
        An architecture with a reduction (:attr:`Architecture.reduces`).
    U, W, V : sequence of numpy.ndarray
        The path ``Q_i = t U_i``, ``K_i = t W_i``, values ``V_i``.
    directions : sequence of numpy.ndarray
        Flat native directions at ``t = 1``.

    Returns
    -------
    list of bool
        Per direction, whether ``D pi xi`` vanishes identically in ``t``.
    """
    if not len(directions):
        return []
    from symattn.model.parameters import path_point

    xi = np.stack([path_direction(arch, d) for d in directions], axis=1)  # (2, k, P)
    return _pi_vanishes(arch, path_point(arch, U, W, V), xi)


def visible_blocks(arch: Architecture, U) -> list[tuple[str, int, list[int]]]:
    """A complement of the gauge kernel along the paper's path, by block:
    ``[("readout V_D", 0, columns), ("layer i query/key", i, columns), ...]``. Layer ``i``
    keeps every key entry and the query entries outside ``r_i`` rows where ``U_i`` is
    invertible (as in App. F.2); the readout block is ``V_D``, the interface values
    ``V_{<D}`` are left out (they are spanned with the kernel). These are the visible
    columns of :class:`GaugeKernel` at the path ``(U, U, I)``, grouped by role.

    Parameters
    ----------
    arch : Architecture
        The paper's stack (no layer parts).
    U : sequence of numpy.ndarray
        The path's factors ``U_i`` (``Q_i = K_i = t U_i``).

    Returns
    -------
    list of tuple
        ``(label, layer, flat columns)`` per block of the complement.

    Raises
    ------
    SymattnError
        A factor ``U_i`` without full column rank.

    Examples
    --------
    >>> arch = Architecture.uniform(1, 2, 1, 2, "exp")
    >>> visible_blocks(arch, [np.array([[1], [0]], dtype=object)])
    [('readout V_D', 0, [4, 5, 6, 7]), ('layer 1 query/key', 1, [1, 2, 3])]
    """
    from symattn.core.errors import SymattnError
    from symattn.core.linalg import identity_matrix

    d = arch.d
    for i, (u, r) in enumerate(zip(U, arch.ranks), 1):
        if Matrix.rational(np.asarray(u, dtype=object)).rank() < r:
            raise SymattnError(f"U_{i} must have full column rank")
    point = {f"Q{i}": np.asarray(u, dtype=object) for i, u in enumerate(U, 1)}
    point.update({f"K{i}": np.asarray(u, dtype=object) for i, u in enumerate(U, 1)})
    point.update({f"V{i}": identity_matrix(d) for i in range(1, arch.depth + 1)})
    return GaugeKernel(arch, point).visible_blocks()


class GaugeKernel:
    """The declared continuous symmetries at a native point ``theta``.

    Parameters
    ----------
    arch : the architecture
    theta : the native point (exact rationals; :class:`~symattn.model.parameters.NativeParams`
        or a dict of blocks); for the native path it is the path at ``t = 1``, ``(U, W, V)``

    Notes
    -----
    The one place that

    * verifies them as kernel vectors where they are used (:meth:`GaugeKernel.verify`):
      through the reduction ``pi`` when the architecture has one (exact over Q, and
      along the native path identically in ``t``: ``D pi xi`` is a polynomial of
      degree at most 2), otherwise against the Jacobian the analysis computes
      (``J xi = 0`` exactly mod p, every direction);
    * takes their exact rank (the upper bound ``P - rank`` on ``rank DF``),
    * builds an integer basis of their orthogonal complement (the numerical
      singular values live there, :mod:`symattn.analyses.numerics`), and
    * chooses the visible columns that complete them to a basis at ``t = 0`` along
      the native path (the Smith form of :mod:`symattn.analyses.spectrum` is taken
      on those columns): the non-pivot columns of the reduced echelon form of their
      leading coefficients.

    Examples
    --------
    >>> from symattn.model.parameters import random_native
    >>> arch = Architecture.uniform(2, 3, 2, 3, "exp")     # P = 42, gauges 4 + 4 + 9
    >>> kernel = GaugeKernel(arch, random_native(arch, seed=1))
    >>> kernel.size, len(kernel.interface_directions), kernel.rank(), kernel.upper_bound()
    (17, 9, 17, 25)
    >>> kernel.complement().shape
    (42, 25)
    """

    def __init__(self, arch: Architecture, theta):
        self.arch = arch
        self.point = point_of(theta)
        self.theta = theta
        self.symmetries = declared_symmetries(arch, self.point)
        #: the declared directions, flat and exact (per layer and head: factor gauges, value
        #: gauges; then the interface directions)
        self.directions: list[np.ndarray] = [s.vector for s in self.symmetries]
        self.factor_gauges = [s.vector for s in self.symmetries if s.kind == "factor gauge"]
        self.value_gauges = [s.vector for s in self.symmetries if s.kind == "value gauge"]
        self.interface_directions = [s.vector for s in self.symmetries if s.kind == "interface"]
        self._path: tuple | None = None
        #: every direction annihilated by D pi identically along the path (:meth:`path_split`)
        self._pi_verified = False

    @property
    def size(self) -> int:
        """The number of directions (``zeta`` when they are independent)."""
        return len(self.directions)

    def kinds(self) -> dict[str, int]:
        """How many directions of each kind (in declaration order)."""
        out: dict[str, int] = {}
        for s in self.symmetries:
            out[s.kind] = out.get(s.kind, 0) + 1
        return out

    def columns(self, blocks: Sequence[str] | None = None) -> np.ndarray:
        """The flat native columns of ``blocks`` (default: all), in flat native order."""
        names = [b.name for b in self.arch.blocks] if blocks is None else list(blocks)
        return np.concatenate([np.asarray(self.arch.columns(n)) for n in names])

    def vectors(self, blocks: Sequence[str] | None = None) -> list[np.ndarray]:
        """The directions that live inside ``blocks`` (default: all), restricted to
        their coordinates (:meth:`columns`)."""
        if blocks is None:
            return list(self.directions)
        cols = self.columns(blocks)
        outside = np.setdiff1d(np.arange(self.arch.native_size), cols)
        return [vec[cols] for vec in self.directions if all(vec[j] == 0 for j in outside)]

    # -- verification -------------------------------------------------------------------
    def annihilates_reduction(self) -> bool:
        """Whether every direction is annihilated by ``D pi(theta)`` (exact, over Q);
        needs an architecture with an effective map."""
        if not self.directions:
            return True
        A = exact_series(1)  # Q itself
        graph = reduction_graph(self.arch)
        values = {name: A.const(value) for name, value in self.point.items()}
        J = jacobian(graph, A, values, [b.name for b in self.arch.blocks], output=list(graph.graph["outputs"]),
                     directions=A.const(np.array(self.directions, dtype=object)))
        return bool(A.field.is_zero(J).all())

    def verify(self, apply: Callable[[np.ndarray], np.ndarray] | None = None, field=None,
               where: str = "the computed Jacobian") -> str:
        """Verify every direction as a kernel vector where it is used; returns how, in words.

        With an effective map (:attr:`~symattn.model.architecture.Architecture.has_effective_map`)
        every direction is annihilated by ``D pi(theta)`` (exact over Q; ``F = F_eff o pi``).
        Otherwise ``apply(directions)`` must return the analysis' Jacobian times the
        directions (``directions`` of shape ``(k, P)``; entries of ``field``), which must
        vanish. Raises :class:`~symattn.core.errors.CheckFailed` when a direction fails.
        """
        if not self.directions:
            return "no declared symmetries"
        if self.arch.has_effective_map:
            if not self._pi_verified and not self.annihilates_reduction():
                raise CheckFailed("a declared symmetry is not annihilated by D pi (exact)")
            return "each annihilated by D pi exactly over Q (so by the Jacobian of F = F_eff o pi)"
        if apply is None:
            raise InternalError("symmetries of an architecture without an effective map are verified "
                                "against the analysis' Jacobian: pass apply")
        out = apply(np.array(self.directions, dtype=object))
        zero = field.is_zero(out) if field is not None else (np.asarray(out) == 0)
        if not np.asarray(zero).all():
            raise CheckFailed("a declared symmetry is not a kernel vector of the computed Jacobian")
        return f"each verified as a kernel vector of {where} (mod p)" if getattr(field, "p", None) else \
            f"each verified as a kernel vector of {where} (exact over Q)"

    def rank(self) -> int:
        """The exact rank of the directions over Q."""
        return Matrix.rational(np.array(self.directions, dtype=object)).rank() if self.directions else 0

    def upper_bound(self, apply: Callable[[np.ndarray], np.ndarray] | None = None, field=None) -> int:
        """``P - rank``: an upper bound on ``rank DF``, after verifying every direction
        (:meth:`verify`)."""
        try:
            self.verify(apply, field)
        except CheckFailed:
            raise InternalError("a gauge direction failed to annihilate D pi exactly") from None
        return self.arch.native_size - self.rank()

    def complement(self, blocks: Sequence[str] | None = None) -> np.ndarray:
        """An integer basis (columns) of the orthogonal complement of :meth:`vectors`
        in the coordinates of ``blocks``."""
        return kernel_complement(self.vectors(blocks), len(self.columns(blocks)))

    # -- along the native path ------------------------------------------------------------
    def along_path(self) -> np.ndarray:
        """The directions along the path ``Q = t U``, ``K = t W`` through ``theta`` (at ``t = 1``):
        ``xi(t) = xi[0] + t xi[1]``, shape ``(2, k, P)`` (``xi[0]``: each declared direction's
        value part, ``xi[1]``: its factor part)."""
        if self._path is None:
            P = self.arch.native_size
            factor = np.array([b.is_factor for b in self.arch.column_blocks()])
            # every declared direction moves the values by what depends on the values and the
            # factors by what depends on the factors (linear ones, shifts, the LayerNorm normals and
            # bias transfers alike), so along theta(t) = values + t factors it is its value part at
            # t^0 plus its factor part at t^1 (the kernel product along the path checks them there)
            c0 = [np.where(factor, 0, s.vector) for s in self.symmetries]
            c1 = [np.where(factor, s.vector, 0) for s in self.symmetries]
            xi = np.zeros((2, len(c0), P), dtype=object)
            if c0:
                xi[0], xi[1] = np.array(c0, dtype=object), np.array(c1, dtype=object)
            lead = np.array([a if any(x != 0 for x in a) else b for a, b in zip(xi[0], xi[1])], dtype=object)
            rank, pivots = 0, []
            if len(lead):
                # mod p first: a full rank mod p is a full rank over Q, and the pivots mod p then
                # give a complement over Q as well; else over Q itself
                pivots = list(Matrix.modular(lead, DEFAULT_PRIME).rref()[1])
                if len(pivots) < len(lead):
                    pivots = list(Matrix.rational(lead).rref()[1])
                rank = len(pivots)
            self._path = (xi, rank == len(lead), [c for c in range(P) if c not in set(pivots)])
        return self._path[0]

    def _path_data(self) -> tuple:
        """``(directions along the path, independent at t = 0, visible columns)``, computed once."""
        self.along_path()
        assert self._path is not None  # set by along_path
        return self._path

    def independent_at_zero(self) -> bool:
        """Whether the leading coefficients of :meth:`along_path` are independent (exact rank)."""
        return self._path_data()[1]

    def visible(self) -> list[int]:
        """The visible columns along the path: the columns outside the pivots of the reduced
        echelon form of the leading coefficients; with the directions they form a basis
        at ``t = 0`` (a unimodular column change over k[[t]])."""
        return list(self._path_data()[2])

    def visible_blocks(self) -> list[tuple[str, int, list[int]]]:
        """The visible columns grouped by role: ``("readout V_D", 0, ...)`` (the last layer's
        value columns), then ``("layer i query/key", i, ...)`` (the paper's blocks of App. D.3;
        any other visible column joins its layer's block)."""
        D = self.arch.depth
        owner = self.arch.column_blocks()
        readout = [c for c in self.visible() if owner[c].layer == D and not owner[c].is_factor]
        out = [("readout V_D", 0, readout)] if readout else []
        for i in range(1, D + 1):
            cols = [c for c in self.visible() if owner[c].layer == i and c not in readout]
            out.append((f"layer {i} query/key", i, cols))
        return out

    def path_split(self) -> tuple[int, bool]:
        """The kernel along the path ``Q = t U``, ``K = t W``, values fixed (``theta`` at ``t = 1``)
        and the unimodular column split.

        Returns ``(zeta, verified)``: ``zeta`` is the number of directions;
        ``verified`` says that their leading coefficients are independent (so with the
        :meth:`visible` columns they form a basis at ``t = 0``: ``J`` has the Smith factors
        of its visible columns and exactly ``zeta`` zero factors) and, with an effective
        map, that each is annihilated identically in ``t`` by ``D pi``
        (:func:`pi_derivative_vanishes`), hence by ``J = D F_eff . D pi``. Without one the
        analysis verifies them against its Jacobian (:meth:`verify`).
        """
        xi = self.along_path()
        verified = self.independent_at_zero()
        if verified and self.directions and self.arch.has_effective_map:
            verified = self._pi_verified = all(_pi_vanishes(self.arch, self.point, xi))
        # full rank mod p of [visible units; leading coefficients] (a nonzero minor mod p is
        # a nonzero rational minor): the column split itself, checked independently of the rref
        P, visible = self.arch.native_size, self.visible()
        units = np.zeros((len(visible), P), dtype=object)
        units[np.arange(len(visible)), visible] = 1
        lead = [a if any(x != 0 for x in a) else b for a, b in zip(xi[0], xi[1])]
        basis = np.concatenate([units, np.array(lead, dtype=object).reshape(-1, P)]) if lead else units
        verified = verified and Matrix.modular(basis, DEFAULT_PRIME).rank() == P == len(basis)
        return len(self.directions), verified


def head_classes(arch: Architecture, i: int) -> list[list[int]]:
    """Heads of layer ``i`` (1-based numbers) grouped by equal block shapes (rank
    ``r_h``, value width): any permutation within a class is a symmetry.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    i : int
        The layer (1-based).

    Returns
    -------
    list of list of int
        The classes of equal-shape heads, in head order.

    Examples
    --------
    >>> head_classes(Architecture.uniform(1, 3, 1, 2, "exp", heads=3, head_ranks=(1, 2, 1)), 1)
    [[1, 3], [2]]
    """
    classes: dict = {}
    for h, blocks in enumerate(arch.layers[i - 1].head_blocks(i), 1):
        key = tuple((role, arch.shape(b)) for role, b in blocks.items())
        classes.setdefault(key, []).append(h)
    return list(classes.values())


def sign_flip_layers(arch: Architecture) -> list[int]:
    """Layers whose normalizer is even: each of their heads' scores may change sign
    (``phi(-s) = phi(s)``), a finite symmetry.

    Parameters
    ----------
    arch : Architecture
        The architecture.

    Returns
    -------
    list of int
        The layers (1-based) with an even normalizer.

    Examples
    --------
    >>> sign_flip_layers(Architecture.uniform(2, 2, 1, 2, ["cosh", "exp"]))
    [1]
    """
    return [i for i, phi in enumerate(arch.normalizers, 1) if phi.even]


def head_permutation_check(arch: Architecture, theta, bank: np.ndarray, order: int = 6) -> list[dict]:
    """The head permutation group of every multi-head layer, verified on generators.

    The heads of a layer are summed, so any permutation of heads of equal shapes
    (:func:`head_classes`) is an exact symmetry of the function; the group is
    the product of the symmetric groups of the classes, of order
    ``prod |class|!``. The computed check: for every generator (the adjacent
    transpositions ``(h, h')`` within a class, which generate that group) the
    network with the two heads' blocks exchanged is compared with the original
    on ``bank`` as exact rational series along ``rho`` (inputs ``rho X``, every
    coefficient through ``rho^(order-1)``, at ``theta``). Returns per layer
    ``{"layer", "classes", "group_order", "generators", "verified"}``.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    theta : mapping
        The native point.
    bank : numpy.ndarray
        Input banks ``X`` (rationals).
    order : int
        The number of ``rho`` coefficients compared.

    Returns
    -------
    list of dict
        One entry per multi-head layer (see above).

    Examples
    --------
    >>> from symattn.model.parameters import random_bank, random_point
    >>> v = Architecture.uniform(1, 2, 1, 2, heads=3, mask="causal")
    >>> head_permutation_check(v, random_point(v), random_bank(v, 2))
    [{'layer': 1, 'classes': [[1, 2, 3]], 'group_order': 6, 'generators': 2, 'verified': True}]
    """
    theta = point_of(theta)
    layers = [i for i, layer in enumerate(arch.layers, 1) if len(layer.heads) > 1]
    if not layers:
        return []
    A = exact_series(order)
    graph = native_network(arch)
    X = A.series([np.zeros(bank.shape, dtype=int), bank])

    shifts = {b.name for b in arch.blocks if b.is_bias or b.is_shift}

    def run(params):  # biases and shifts scale with rho too, so that every score vanishes at rho = 0
        vals = {k: (A.series([0 * np.asarray(v), v]) if k in shifts else A.const(v)) for k, v in params.items()}
        vals["X"] = X
        return evaluate(graph, A, vals)["F"]

    try:
        reference = run(theta)
    except NotRational:  # a LayerNorm or an activation with an irrational constant: not checked exactly
        return [{"layer": i, "classes": head_classes(arch, i), "group_order": None, "generators": 0,
                 "verified": None} for i in layers]
    out = []
    for i in layers:
        heads = arch.layers[i - 1].head_blocks(i)
        classes = head_classes(arch, i)
        verified, generators = True, 0
        for cls in classes:
            for a, b in zip(cls, cls[1:]):
                swapped = dict(theta)
                for role in heads[a - 1]:
                    x, y = heads[a - 1][role].name, heads[b - 1][role].name
                    swapped[x], swapped[y] = theta[y], theta[x]
                verified &= bool(A.field.is_zero(A.sub(reference, run(swapped))).all())
                generators += 1
        out.append({"layer": i, "classes": classes, "group_order": prod(factorial(len(c)) for c in classes),
                    "generators": generators, "verified": verified})
    return out



def hidden_sign_flip(arch: Architecture, theta, i: int, j: int) -> dict:
    """``theta`` with hidden unit ``j`` (0-based) of layer ``i``'s MLP flipped: its row of ``mlp.in``
    (``W_1``), its entry of ``mlp.in_bias`` (``b_1``) and its column of ``mlp.out`` (``W_2``) negated
    (``-W_2[:, j] f(-W_1[j] y - b_1[j]) = W_2[:, j] f(W_1[j] y + b_1[j])`` for an odd ``f``).

    Parameters
    ----------
    arch : Architecture
        The architecture.
    theta : mapping
        The native point.
    i : int
        The layer (1-based) with the MLP.
    j : int
        The hidden unit (0-based).

    Returns
    -------
    dict
        The flipped point (block name to array).

    Examples
    --------
    >>> v = Architecture.uniform(1, 2, 1, 2, skip="value", mlp=2)
    >>> p = {k: np.ones(s, dtype=object) for k, s in v.native_shapes()}
    >>> q = hidden_sign_flip(v, p, 1, 0)
    >>> q["mlp.in1"].tolist(), q["mlp.in_bias1"].tolist(), q["mlp.out1"].tolist()
    ([[-1, -1], [1, 1]], [[-1], [1]], [[-1, 1], [-1, 1]])
    """
    blocks = arch.layers[i - 1].layer_blocks(i)
    flipped = dict(theta)
    for part, index in (("mlp.in", (j, slice(None))), ("mlp.in_bias", (j, slice(None))), ("mlp.out", (slice(None), j))):
        name = blocks[part].name
        flipped[name] = np.array(theta[name], copy=True)
        flipped[name][index] = -flipped[name][index]
    return flipped


def hidden_sign_flip_check(arch: Architecture, theta, bank: np.ndarray, order: int = 6,
                           strict: bool = True) -> list[dict]:
    """The hidden-unit sign flips of every MLP with an odd activation, declared and verified.

    Declared where the layer's activation part says it is odd *and* the part's own formula proves it
    (:meth:`~symattn.model.parts.activation.Activation.odd_identity`: ``f(-s) + f(s) = 0`` as an
    identity). Then each flip (:func:`hidden_sign_flip`) leaves ``W_2 f(W_1 y + b_1)`` unchanged for
    every parameter value and input (each term ``Fb_j f(Fa_j y + fa_j)`` is), so the ``2^m`` flips of
    a layer's ``m`` hidden units form a finite group of symmetries (generic: the oddness identity is
    the reason, not the point). They lower no dimension. The computed checks, on the ``m`` generators
    at ``theta``: **exact**, the flipped network against the original as exact rational series along
    ``rho`` (inputs ``rho X`` from ``bank``, biases and shifts ``rho`` times theirs, through
    ``rho^(order-1)``), None where a constant is irrational (a norm's ``1/sqrt``); **numerical**, the
    two networks in float64 on ``bank`` (relative difference below ``1e-9``). A wrong declaration or
    a wrong flip fails them. Returns per such layer ``{"layer", "units", "group_order", "generators",
    "identity", "verified", "numerical"}``.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    theta : mapping
        The native point.
    bank : numpy.ndarray
        Input banks ``X``.
    order : int
        The number of ``rho`` coefficients compared exactly.
    strict : bool
        Raise on a failed check (else report it in ``verified``/``numerical``).

    Returns
    -------
    list of dict
        One entry per layer with declared flips (see above).

    Raises
    ------
    CheckFailed
        ``strict`` and a declared flip changes the network (exactly, or numerically).

    >>> from symattn.model.parameters import random_bank, random_point
    >>> v = Architecture.uniform(1, 2, 1, 3, skip="value", mlp=2, activation="tanh")
    >>> hidden_sign_flip_check(v, random_point(v), random_bank(v, 2))
    [{'layer': 1, 'units': 2, 'group_order': 4, 'generators': 2, 'identity': 'f(-s) + f(s) = 0 (tanh)', 'verified': True, 'numerical': True}]
    >>> w = Architecture.uniform(1, 2, 1, 3, skip="value", mlp=2, activation="gelu")
    >>> hidden_sign_flip_check(w, random_point(w), random_bank(w, 2))
    []
    """
    from symattn.core.algebras import Float64

    theta = point_of(theta)
    layers = [i for i, layer in enumerate(arch.layers, 1) if layer.mlp and layer.activation.is_odd
              and layer.activation.odd_identity()]
    if not layers:
        return []
    graph = native_network(arch)
    A, F = exact_series(order), Float64()
    X = A.series([np.zeros(bank.shape, dtype=int), bank])
    shifts = {b.name for b in arch.blocks if b.is_bias or b.is_shift}

    def exact(params):  # biases and shifts scale with rho too, so that every pre-activation vanishes at rho = 0
        vals = {k: (A.series([0 * np.asarray(v), v]) if k in shifts else A.const(v)) for k, v in params.items()}
        vals["X"] = X
        return evaluate(graph, A, vals)["F"]

    def numerical(params):
        vals = {k: F.const(np.asarray(v, dtype=float)) for k, v in params.items()}
        vals["X"] = F.const(np.asarray(bank, dtype=float))
        return np.asarray(evaluate(graph, F, vals)["F"], dtype=float)

    try:
        reference = exact(theta)
    except NotRational:
        reference = None
    floats = numerical(theta)
    out = []
    for i in layers:
        layer = arch.layers[i - 1]
        verified, close = reference is not None, True
        for j in range(layer.mlp):
            flipped = hidden_sign_flip(arch, theta, i, j)
            if reference is not None:
                verified &= bool(A.field.is_zero(A.sub(reference, exact(flipped))).all())
            other = numerical(flipped)
            close &= bool(np.max(np.abs(other - floats)) <= 1e-9 * max(1.0, float(np.max(np.abs(floats)))))
        if strict and (verified is False and reference is not None or not close):
            raise CheckFailed(f"a declared hidden-unit sign flip of layer {i} ({layer.activation}, declared odd) "
                              f"changes the network ({'exact series' if not verified else 'float64'}): the "
                              "declaration or the flip is wrong")
        out.append({"layer": i, "units": layer.mlp, "group_order": 2 ** layer.mlp, "generators": layer.mlp,
                    "identity": f"f(-s) + f(s) = 0 ({layer.activation})",
                    "verified": verified if reference is not None else None, "numerical": close})
    return out
