"""The gauge kernel: the explicit kernel directions of ``D pi`` and what is built on them.

At a native point ``theta`` the factor gauges (eq. 50) ``(Q_i B, -K_i B^T)`` and
the interface directions (App. F.2) ``V_j -> G V_j``, ``V_{j+1} -> V_{j+1} G^{-1}``,
``Q_{j+1}, K_{j+1} -> G^{-T} Q_{j+1}, G^{-T} K_{j+1}`` (their infinitesimal
versions, :func:`symattn.model.architecture.gauge_directions`) are annihilated by ``D pi``,
hence by the Jacobian of every observation ``F = F_eff o pi``.
:class:`GaugeKernel` is the one place that

* verifies this exactly (at ``theta``, or identically in ``t`` along the native
  path ``Q_i = t U_i``, ``K_i = t W_i``, ``V_i``),
* takes their exact rank (the upper bound ``P - rank`` on ``rank D pi``),
* builds an integer basis of their orthogonal complement (the numerical
  singular values live there, :mod:`symattn.analyses.numerics`), and
* chooses the visible column blocks that complete them to a basis at ``t = 0``
  (the Smith form of :mod:`symattn.analyses.spectrum` is taken on those columns).

Everything here is exact (rationals, or a full rank mod p, which implies a
full rational rank).
"""

from __future__ import annotations

from itertools import combinations
from typing import Sequence

import numpy as np

from symattn.core.algebras import DEFAULT_PRIME
from symattn.core.algebras import exact_series
from symattn.core.errors import InternalError, SymattnError
from symattn.model.network import jacobian, reduction_graph
from symattn.core.linalg import Matrix, kernel_complement
from symattn.model.architecture import Architecture, NativeParams, factor_gauges, interface_directions, native_path_values

__all__ = ["GaugeKernel", "visible_blocks", "pi_derivative_vanishes", "path_direction"]


def path_direction(arch: Architecture, vec: np.ndarray) -> np.ndarray:
    """A flat native direction at ``t = 1`` as a direction along the path: its
    query/key entries are multiplied by ``t``. Returns coefficients ``(2, P)``.

    >>> arch = Architecture.uniform(1, 1, 1, 2, "exp")
    >>> path_direction(arch, np.array([1, 2, 3], dtype=object)).tolist()
    [[0, 0, 3], [1, 2, 0]]
    """
    off = arch.offsets()
    qk = np.zeros(arch.native_size, dtype=bool)
    for name, shape in arch.native_shapes():
        if name[0] in "QK":
            qk[off[name]: off[name] + int(np.prod(shape))] = True
    zero = np.zeros(arch.native_size, dtype=object)
    return np.stack([np.where(qk, zero, vec), np.where(qk, vec, zero)])


def pi_derivative_vanishes(arch: Architecture, U, W, V, directions: Sequence[np.ndarray]) -> list[bool]:
    """For each flat native direction ``xi`` (at ``t = 1``; see :func:`path_direction`),
    whether ``D pi(theta(t)) xi(t)`` vanishes identically in ``t``.

    Exact: ``D pi(theta(t)) xi(t)`` is a polynomial of degree at most 2 in ``t``
    (``M_i`` is quadratic in the factors, values are constant, ``xi`` is linear
    in ``t``), computed as an exact series mod ``t^4`` through the reduction
    graph, hence exactly.
    """
    if not len(directions):
        return []
    A = exact_series(4)
    xi = np.stack([path_direction(arch, d) for d in directions], axis=1)  # (2, k, P)
    graph = reduction_graph(arch)
    J = jacobian(graph, A, native_path_values(arch, A, U, W, V), [n for n, _ in arch.native_shapes()],
                 output=list(graph.graph["outputs"]), directions=A.series(list(xi)))
    return [bool(v) for v in A.field.is_zero(J).all(axis=(0, 1))]


def _invertible_rows(u: np.ndarray) -> tuple[int, ...]:
    for rows in combinations(range(u.shape[0]), u.shape[1]):
        if Matrix.rational(u[list(rows)]).rank() == u.shape[1]:
            return rows
    raise SymattnError("U_i must have full column rank")


def visible_blocks(arch: Architecture, U) -> list[tuple[str, int, list[int]]]:
    """A complement of the gauge kernel, by block: ``[("readout V_D", 0, columns),
    ("layer i query/key", i, columns), ...]``. Layer ``i`` keeps every key entry
    and the query entries outside ``r_i`` rows where ``U_i`` is invertible (as in
    App. F.2); the readout block is ``V_D``, the interface values ``V_{<D}`` are left
    out (they are spanned with the kernel).

    >>> arch = Architecture.uniform(1, 2, 1, 2, "exp")
    >>> visible_blocks(arch, [np.array([[1], [0]], dtype=object)])
    [('readout V_D', 0, [4, 5, 6, 7]), ('layer 1 query/key', 1, [1, 2, 3])]
    """
    off = arch.offsets()
    D, d = arch.depth, arch.d
    out = [("readout V_D", 0, list(range(off[f"V{D}"], off[f"V{D}"] + d * d)))]
    for i, (u, r) in enumerate(zip(U, arch.ranks), 1):
        rows = _invertible_rows(u)
        q = [off[f"Q{i}"] + a * r + b for a in range(d) if a not in rows for b in range(r)]
        k = list(range(off[f"K{i}"], off[f"K{i}"] + d * r))
        out.append((f"layer {i} query/key", i, q + k))
    return out


class GaugeKernel:
    """Factor gauges and interface directions at a native point ``theta``.

    Parameters
    ----------
    arch : the architecture
    theta : the native point (exact rationals); for the native path it is the
        path at ``t = 1``, ``(U, W, V)``

    Examples
    --------
    >>> from symattn.model.architecture import random_native
    >>> arch = Architecture.uniform(2, 3, 2, 3, "exp")     # P = 42, gauges 4 + 4 + 9
    >>> kernel = GaugeKernel(arch, random_native(arch, seed=1))
    >>> kernel.size, len(kernel.interface_directions), kernel.rank(), kernel.upper_bound()
    (17, 9, 17, 25)
    >>> kernel.complement().shape
    (42, 25)
    """

    def __init__(self, arch: Architecture, theta: NativeParams):
        self.arch = arch
        self.theta = theta
        #: the factor gauges (eq. 50) and the interface directions (App. F.2), flat and exact
        self.factor_gauges = list(factor_gauges(arch, theta))
        self.interface_directions = list(interface_directions(arch, theta))
        #: all explicit directions: factor gauges, then interface directions
        #: (as :func:`symattn.model.architecture.gauge_directions`)
        self.directions: list[np.ndarray] = self.factor_gauges + self.interface_directions

    @property
    def size(self) -> int:
        """The number of directions (``zeta`` when they are independent)."""
        return len(self.directions)

    def columns(self, blocks: Sequence[str] | None = None) -> np.ndarray:
        """The flat native columns of ``blocks`` (default: all), in flat native order."""
        off, shapes = self.arch.offsets(), dict(self.arch.native_shapes())
        names = list(shapes) if blocks is None else list(blocks)
        return np.concatenate([np.arange(off[n], off[n] + int(np.prod(shapes[n]))) for n in names])

    def vectors(self, blocks: Sequence[str] | None = None) -> list[np.ndarray]:
        """The directions that live inside ``blocks`` (default: all), restricted to
        their coordinates (:meth:`columns`)."""
        if blocks is None:
            return list(self.directions)
        cols = self.columns(blocks)
        outside = np.setdiff1d(np.arange(self.arch.native_size), cols)
        return [vec[cols] for vec in self.directions if all(vec[j] == 0 for j in outside)]

    def annihilates_reduction(self) -> bool:
        """Whether every direction is annihilated by ``D pi(theta)`` (exact, over Q)."""
        if not self.directions:
            return True
        A = exact_series(1)  # Q itself
        graph = reduction_graph(self.arch)
        values = {name: A.const(value) for name, value in self.theta.as_dict().items()}
        J = jacobian(graph, A, values, list(values), output=list(graph.graph["outputs"]),
                     directions=A.const(np.array(self.directions, dtype=object)))
        return bool(A.field.is_zero(J).all())

    def rank(self) -> int:
        """The exact rank of the directions over Q."""
        return Matrix.rational(np.array(self.directions, dtype=object)).rank() if self.directions else 0

    def upper_bound(self) -> int:
        """``P - rank``: an upper bound on ``rank D pi`` (hence on ``rank DF``),
        after checking exactly that every direction annihilates ``D pi(theta)``."""
        if not self.annihilates_reduction():
            raise InternalError("a gauge direction failed to annihilate D pi exactly")
        return self.arch.native_size - self.rank()

    def complement(self, blocks: Sequence[str] | None = None) -> np.ndarray:
        """An integer basis (columns) of the orthogonal complement of :meth:`vectors`
        in the coordinates of ``blocks``."""
        return kernel_complement(self.vectors(blocks), len(self.columns(blocks)))

    def visible_blocks(self) -> list[tuple[str, int, list[int]]]:
        """:func:`visible_blocks` at the query factors ``U = Q(theta)``."""
        return visible_blocks(self.arch, self.theta.Q)

    def path_split(self) -> tuple[int, bool]:
        """The kernel along the path ``Q_i = t U_i``, ``K_i = t W_i``, ``V_i``
        (``theta = (U, W, V)``) and the unimodular column split.

        Returns ``(zeta, verified)``: ``zeta`` is the number of directions;
        ``verified`` says that each is annihilated identically in ``t`` by
        ``D pi`` (:func:`pi_derivative_vanishes`), hence by ``J = D F_eff . D pi``,
        and that together with the columns of :meth:`visible_blocks` they form a
        basis at ``t = 0`` (full rank ``P`` mod p, hence over Q), so the column
        change is unimodular over k[[t]]: ``J`` has the Smith factors of its
        visible columns and exactly ``zeta`` zero factors.
        """
        arch, dirs, P = self.arch, self.directions, self.arch.native_size
        at_zero = [path_direction(arch, d)[0] if self._is_interface(d) else d for d in dirs]
        visible = [c for _, _, cols in self.visible_blocks() for c in cols]
        units = np.zeros((len(visible), P), dtype=object)
        units[np.arange(len(visible)), visible] = 1
        basis = np.concatenate([units, np.array(at_zero, dtype=object).reshape(-1, P)]) if dirs else units
        # full rank mod p implies full rank over Q (a nonzero minor mod p is nonzero)
        verified = Matrix.modular(basis, DEFAULT_PRIME).rank() == P == len(basis) and all(
            pi_derivative_vanishes(arch, self.theta.Q, self.theta.K, self.theta.V, dirs))
        return len(dirs), verified

    def _is_interface(self, direction: np.ndarray) -> bool:
        """Interface directions touch the values; factor gauges do not."""
        off = self.arch.offsets()
        return any(any(direction[off[n]: off[n] + int(np.prod(s))])
                   for n, s in self.arch.native_shapes() if n[0] == "V")
