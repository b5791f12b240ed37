"""The collapse path of the native contact spectrum, and its bank Jacobian in ``u = t^2``.

Along ``Q_{i,h} = t U_{i,h}``, ``K_{i,h} = t W_{i,h}``, every other block (values,
output projections) fixed, the network depends on the factors only through
``A = Q K^T = t^2 U W^T``; the Jacobian ``J(t)`` of the bank observation is therefore
evaluated in ``u = t^2`` (half the series length) on the equivalent path
``Q = u U``, ``K = W`` and mapped back exactly (:func:`from_u_series`). The path is
seeded (:func:`path_point_of`: per head full-rank ``U, W`` with ``sym(U W^T) != 0``,
identity or generic invertible values) or given and validated (:func:`checked_path`).
:func:`path_parameters` gives the paper's per-layer ``(U, W, V)``. Used by
:mod:`symattn.analyses.spectrum`, :mod:`symattn.analyses.contact`,
:mod:`symattn.analyses.columns` and :mod:`symattn.analyses.bank`.
"""

from __future__ import annotations

import random
from typing import Mapping, Sequence

import numpy as np

from symattn.core.algebras import float_series
from symattn.core.algebras.modular import DEFAULT_PRIME, PrimeField
from symattn.core.algebras.polyseries import PolySeries, RationalPolySeries
from symattn.core.algebras.series import SeriesAlgebra
from symattn.core.errors import CheckFailed, OutsideHypotheses, SymattnError
from symattn.core.linalg import Matrix, identity_matrix
from symattn.core.parallel import map_forked, usable_cores
from symattn.model.architecture import Architecture
from symattn.model.network import jacobian, native_network, series_derivative_check
from symattn.model.parameters import check_generic, generic_matrix, native_path_values, path_point

__all__ = ["path_point_of", "split_path", "path_parameters", "checked_path", "bank_jacobian", "from_u_series",
           "block_letters", "kernel_product", "leading_coefficients", "jacobian_algebra", "FAST_SERIES_FROM_ORDER"]


def path_point_of(arch: Architecture, seed: int = 0, values: str = "identity") -> dict[str, np.ndarray]:
    """The seeded native path at ``t = 1``: per head rational ``U, W`` (full column rank,
    ``sym(U W^T) != 0``), square value maps the identity (``values="identity"``) or generic
    invertible (``"random"``), other blocks (output projections, rectangular values, biases, norms,
    MLPs) seeded rationals; every block drawn by :func:`~symattn.model.parameters.generic_matrix`
    (nonzero entries of distinct absolute values), block by block in flat order.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    seed : int
        The seed of the rational draws.
    values : str
        ``"identity"`` or ``"random"``.

    Returns
    -------
    dict
        Every native block at ``t = 1`` (block name to an exact array).

    Raises
    ------
    SymattnError
        ``values`` is neither choice, or a query/key width exceeds the layer's width.

    Examples
    --------
    >>> p = path_point_of(Architecture.uniform(1, 2, 1, 2, "exp"))
    >>> sorted(p), p["V1"].tolist() == [[1, 0], [0, 1]]
    (['K1', 'Q1', 'V1'], True)
    """
    if values not in ("identity", "random"):
        raise SymattnError(f"values must be 'identity' or 'random', got {values!r}")
    d = arch.d
    for r in (h.rank for layer in arch.layers for h in layer.heads):
        if r > d:
            raise SymattnError(f"query/key width r = {r} exceeds the width d = {d}")
    rng = random.Random(seed)
    out: dict[str, np.ndarray] = {}
    seen: set = set()  # absolute values used: distinct across the whole point
    for i, layer in enumerate(arch.layers, 1):
        for blocks, head in zip(layer.head_blocks(i), layer.heads):
            r = head.rank
            while True:
                u, w = generic_matrix(rng, (d, r), seen), generic_matrix(rng, (d, r), seen)
                b = u.dot(w.T)
                if Matrix.rational(u).rank() == r == Matrix.rational(w).rank() and (b + b.T != 0).any():
                    break
            out[blocks["Q"].name], out[blocks["K"].name] = u, w
            for role in ("V", "O"):
                if role not in blocks:
                    continue
                shape = arch.shape(blocks[role])
                square = role == "V" and shape[0] == shape[1]
                if square and values == "identity":
                    out[blocks[role].name] = identity_matrix(shape[0])
                    continue
                while True:
                    m = generic_matrix(rng, shape, seen)
                    if not square or Matrix.rational(m).rank() == shape[0]:
                        break
                out[blocks[role].name] = m
        for block, shape in layer.blocks(i):  # biases, norm and MLP blocks: seeded generic rationals
            if block.name not in out:
                out[block.name] = generic_matrix(rng, shape, seen)
    for name, shape in arch.native_shapes():  # a model-level part's blocks (the final norm)
        if name not in out:
            out[name] = generic_matrix(rng, shape, seen)
    check_generic(out, [b.name for b in arch.blocks if values == "identity" and b.role == "V"
                        and arch.shape(b)[0] == arch.shape(b)[1]])
    return out


def split_path(arch: Architecture, point: Mapping[str, np.ndarray]) -> tuple[dict, dict, dict]:
    """A path point as ``(U, W, V)`` mappings: query factors, key factors, other blocks.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    point : mapping
        Every native block at ``t = 1``.

    Returns
    -------
    tuple of dict
        ``(U, W, V)`` by block name.
    """
    U = {b.name: point[b.name] for b in arch.blocks if b.role == "Q"}
    W = {b.name: point[b.name] for b in arch.blocks if b.role == "K"}
    V = {b.name: point[b.name] for b in arch.blocks if not b.is_factor}
    return U, W, V


def path_parameters(arch: Architecture, seed: int = 0, values: str = "identity"
                    ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Seeded rational ``U_i, W_i`` (full column rank, ``sym(U_i W_i^T) != 0``)
    and values ``V_i`` (identity, or generic invertible with ``values="random"``), as
    per-layer lists (one head per layer; any stack: :func:`path_point_of`).

    Parameters
    ----------
    arch : Architecture
        The architecture.
    seed : int
        The seed of the rational draws.
    values : str
        ``"identity"`` or ``"random"``.

    Returns
    -------
    tuple
        ``(U, W, V)``: per-layer lists, or mappings of blocks for a stack with several heads or output
        projections.
    """
    point = path_point_of(arch, seed, values)
    U, W, V = split_path(arch, point)
    if not len(U) == len(W) == len(V) == arch.depth:
        return U, W, V  # several heads or output projections: mappings of blocks
    return list(U.values()), list(W.values()), list(V.values())


def checked_path(arch: Architecture, path) -> dict[str, np.ndarray]:
    """Validate an explicit path (a triple ``(U, W, V)`` of per-layer lists or block mappings,
    or one mapping of every block at ``t = 1``): shapes, full column rank factors.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    path : tuple or mapping
        ``(U, W, V)`` (per-layer lists or block mappings) or one mapping of every block.

    Returns
    -------
    dict
        Every native block at ``t = 1`` (exact arrays).

    Raises
    ------
    SymattnError
        A missing block, a wrong count or shape, a factor without full column rank, or not a path.
    """
    if isinstance(path, Mapping):
        point = path_point(arch, path, None, None)
    else:
        try:
            U, W, V = path
        except (TypeError, ValueError):
            raise SymattnError("path must be a triple (U, W, V) of per-layer matrix lists") from None
        if not isinstance(U, Mapping) and not len(list(U)) == len(list(W)) == len(list(V)) == arch.depth:
            raise SymattnError(f"path needs {arch.depth} matrices U_i, W_i and V_i each")
        point = path_point(arch, U, W, V)
    missing = [b.name for b in arch.blocks if b.name not in point]
    if missing:
        raise SymattnError(f"the path has no blocks {missing}")
    for i, layer in enumerate(arch.layers, 1):
        shapes = {b.name: arch.shape(b) for b in arch.layer_blocks(i)}
        got = {n: np.shape(point[n]) for n in shapes}
        if got != shapes:
            names = list(shapes)
            raise SymattnError(f"layer {i}: the path's blocks {names} must have shapes {list(shapes.values())}, "
                               f"got {[got[n] for n in names]}")
        for blocks, head in zip(layer.head_blocks(i), layer.heads):
            q, k = (np.asarray(point[blocks[c].name], dtype=object) for c in "QK")
            if Matrix.rational(q).rank() < head.rank or Matrix.rational(k).rank() < head.rank:
                where = f"layer {i}" + ("" if blocks["Q"].head is None else f" head {blocks['Q'].head}")
                raise OutsideHypotheses(f"{where}: U_{i} and W_{i} must have full column rank {head.rank}")
    return {b.name: np.asarray(point[b.name], dtype=object) for b in arch.blocks}


def _native_names(arch: Architecture) -> list[str]:
    """The native blocks in flat native order (the columns of ``P``)."""
    return [name for name, _ in arch.native_shapes()]


def bank_jacobian(arch: Architecture, bank: np.ndarray, U, W, V, algebra: SeriesAlgebra,
                  columns: Sequence[int] | None = None, verify: int = 1) -> np.ndarray:
    """``J(t)`` of the bank observation along the path, in the native entries
    ``columns`` (default: all): array ``(order, rows, len(columns))`` of series
    coefficients in ``t``, rows ordered (input, coordinate, token).

    The network depends on the factors only through ``A_i = Q_i K_i^T = t^2 U_i W_i^T``,
    so the graph is evaluated in ``u = t^2`` (half the series length) on the
    equivalent path ``Q_i = u U_i, K_i = W_i``, and mapped back exactly: value
    columns are ``G(t^2)``, query columns ``t G(t^2)`` and key columns
    ``G(t^2) / t`` (their ``u^0`` coefficient vanishes identically).
    Over exact series the Jacobian is checked on ``verify`` random directions
    (:func:`symattn.model.network.series_derivative_check`); in
    :class:`~symattn.core.algebras.polyseries.PolySeries` against the NumPy series'
    expansion ``F(theta + delta v)`` of the same prime, in
    :class:`~symattn.core.algebras.polyseries.RationalPolySeries` (over Q) reduced mod the
    default prime against that expansion mod the default prime.

    In :class:`~symattn.core.algebras.polyseries.PolySeries` from :data:`PARALLEL_ROWS_FROM_ORDER`
    on, the bank is split over the usable cores (forked; the rows of an input depend on that input
    only), the first part checked as above.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    bank : numpy.ndarray
        Input banks ``X`` (rationals).
    U, W, V
        The path (:func:`split_path` mappings or per-layer lists).
    algebra : SeriesAlgebra
        The exact series algebra (its order is the number of ``t`` coefficients).
    columns : sequence of int, optional
        The native columns (default: all).
    verify : int
        Directions of the Jacobian's independent checks (0: none).

    Returns
    -------
    numpy.ndarray
        ``(order, rows, len(columns))`` series coefficients in ``t``.
    """
    if (isinstance(algebra, PolySeries) and len(bank) > 1 and algebra.order >= PARALLEL_ROWS_FROM_ORDER
            and usable_cores() > 1):
        parts = np.array_split(np.arange(len(bank)), min(usable_cores(), len(bank)))
        return np.concatenate(list(map_forked(lambda idx: bank_jacobian(
            arch, bank[idx], U, W, V, algebra, columns, verify if idx[0] == 0 else 0), parts)), axis=1)
    P = arch.native_size
    columns = list(range(P)) if columns is None else list(columns)
    N = algebra.order
    U_alg = algebra.with_order(N // 2 + 1)  # G up to u^(N//2): t^(N-1) at most
    # differentiate only in the native blocks the columns touch: the others carry no
    # tangent at all (not a zero one), so layers below the lowest such block cost nothing
    off, names = arch.offsets(), _native_names(arch)
    sizes = {name: int(np.prod(shape)) for name, shape in arch.native_shapes()}
    wrt = [n for n in names if any(off[n] <= c < off[n] + sizes[n] for c in columns)]
    local = np.cumsum([0] + [sizes[n] for n in wrt])
    where = {n: local[i] for i, n in enumerate(wrt)}
    select = np.zeros((len(columns), int(local[-1])), dtype=int)
    for j, c in enumerate(columns):
        name = next(n for n in wrt if off[n] <= c < off[n] + sizes[n])
        select[j, where[name] + c - off[name]] = 1
    vals = native_path_values(arch, U_alg, U, W, V, squared=True)
    vals["X"] = U_alg.const(bank)
    fast = isinstance(U_alg, (PolySeries, RationalPolySeries))
    G = U_alg.coefficients(jacobian(native_network(arch), U_alg, vals, wrt, directions=U_alg.const(select),
                                    verify=0 if fast else verify))
    if fast and verify:  # the fast series' Jacobian against the NumPy series' expansion F(theta + delta v)
        ref = SeriesAlgebra(PrimeField(getattr(U_alg, "p", DEFAULT_PRIME)), U_alg.order)
        refs = native_path_values(arch, ref, U, W, V, squared=True)
        refs["X"] = ref.const(bank)
        series_derivative_check(native_network(arch), ref, refs, wrt, ref.field.convert(G), ["F"],
                                ref.const(select), samples=verify)
    return from_u_series(U_alg.field, G, block_letters(arch, columns), N)


#: Jacobians in :class:`~symattn.core.algebras.polyseries.PolySeries` this long split the bank over
#: the cores (softmax ``D = 6``, ``d = 2``: order 487).
PARALLEL_ROWS_FROM_ORDER = 300


#: Modular spectra this long compute their Jacobian in :class:`~symattn.core.algebras.polyseries.PolySeries`
#: (fast products; the same residues as the NumPy series, checked by its expansion).
FAST_SERIES_FROM_ORDER = 100


def jacobian_algebra(algebra):
    """The algebra the spectrum's Jacobian is computed in: ``algebra``, or the same prime in
    :class:`~symattn.core.algebras.polyseries.PolySeries` from :data:`FAST_SERIES_FROM_ORDER` on.

    Parameters
    ----------
    algebra : SeriesAlgebra
        The exact series algebra asked for.

    Returns
    -------
    SeriesAlgebra
    """
    if isinstance(algebra.field, PrimeField) and algebra.order >= FAST_SERIES_FROM_ORDER:
        return PolySeries(algebra.field.p, algebra.order)
    return algebra


def from_u_series(field, G: np.ndarray, letters: np.ndarray, order: int) -> np.ndarray:
    """The Jacobian in ``t`` (``order`` coefficients) from the Jacobian ``G`` in ``u = t^2``
    on the path ``Q = u U``, ``K = W``: query columns (``letters == "Q"``) are
    ``t G(t^2)``, key columns ``G(t^2) / t`` (their ``u^0`` coefficient must vanish) and
    every other column (values, output projections) ``G(t^2)``. ``G`` needs
    ``order // 2 + 1`` coefficients.

    Parameters
    ----------
    field : PrimeField or Rationals
        The coefficients' field.
    G : numpy.ndarray
        The Jacobian in ``u``, ``(order // 2 + 1, rows, k)``.
    letters : numpy.ndarray
        Each column's block letter (:func:`block_letters`).
    order : int
        The number of ``t`` coefficients.

    Returns
    -------
    numpy.ndarray
        ``(order, rows, k)``.

    Raises
    ------
    CheckFailed
        A key column's ``u^0`` coefficient is not zero.

    Examples
    --------
    >>> from symattn.core.algebras import PrimeField
    >>> G = np.array([[[1, 2, 0]], [[3, 4, 5]], [[6, 5, 4]]])      # u^0, u^1, u^2
    >>> from_u_series(PrimeField(7), G, np.array(["V", "Q", "K"]), 4)[:, 0].tolist()
    [[1, 0, 0], [0, 2, 5], [3, 0, 0], [0, 4, 4]]
    """
    q, k = letters == "Q", letters == "K"
    fixed = ~(q | k)
    if not field.is_zero(G[0][:, k]).all():
        raise CheckFailed("key columns of the u-Jacobian are not divisible by u")
    J = field.zeros((order,) + G.shape[1:])
    even, odd = J[0::2], J[1::2]  # views: t^(2m) <- u^m; t^(2m+1) <- t u^m (Q), u^(m+1) / t (K)
    even[:, :, fixed] = G[: even.shape[0]][:, :, fixed]
    odd[:, :, q] = G[: odd.shape[0]][:, :, q]
    odd[:, :, k] = G[1: odd.shape[0] + 1][:, :, k]
    return J


def block_letters(arch, columns: Sequence[int]) -> np.ndarray:
    """The block letter (``"Q"``, ``"K"``, ``"V"``, or ``"O"`` for an output projection) of
    each native column of ``arch``.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    columns : sequence of int
        Native columns.

    Returns
    -------
    numpy.ndarray
        One letter per column.

    Examples
    --------
    >>> block_letters(Architecture.uniform(1, 2, 1, 2, "exp"), range(6)).tolist()
    ['Q', 'Q', 'K', 'K', 'V', 'V']
    """
    letters = np.array([block.role for block in arch.column_blocks()], dtype="<U1")
    return letters[list(columns)]


def kernel_product(arch: Architecture, bank: np.ndarray, U, W, V, xi: np.ndarray, algebra: SeriesAlgebra
                   ) -> np.ndarray:
    """``J(t) xi(t)`` on ``bank`` along the path, mod ``t^N`` (``N = algebra.order``), for directions
    ``xi(t) = xi[0] + t xi[1]`` (shape ``(2, k, P)``) that scale like the blocks they move (values
    at ``t^0``, factors at ``t^1``): in ``u = t^2`` the values carry ``xi_0``, the queries ``u xi_1``,
    the keys ``xi_1``. Raises :class:`~symattn.core.errors.CheckFailed` for a direction that does
    not scale so.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    bank : numpy.ndarray
        Input banks ``X``.
    U, W, V
        The path.
    xi : numpy.ndarray
        The directions, ``(2, k, P)``.
    algebra : SeriesAlgebra
        The exact series algebra.

    Returns
    -------
    numpy.ndarray
        ``J(t) xi(t)`` as series coefficients (zero for kernel vectors).

    Raises
    ------
    CheckFailed
        A direction does not scale like the blocks it moves.
    """
    factor = np.array([b.is_factor for b in arch.column_blocks()])
    query = np.array([b.role == "Q" for b in arch.column_blocks()])
    if (xi[1][:, ~factor] != 0).any() or (xi[0][:, factor] != 0).any():
        raise CheckFailed("a declared symmetry does not scale like the blocks it moves along the path")
    half = SeriesAlgebra(algebra.field, algebra.order // 2 + 1)
    d0, d1 = np.where(query, 0, xi[0] + xi[1]), np.where(query, xi[1], 0)
    vals = native_path_values(arch, half, U, W, V, squared=True)
    vals["X"] = half.const(bank)
    return jacobian(native_network(arch), half, vals, [b.name for b in arch.blocks],
                    directions=half.series([d0, d1]), verify=0)


def leading_coefficients(arch: Architecture, bank: np.ndarray, U, W, V, columns: list[int],
                         exponents: list[int], blocks: list[np.ndarray]) -> dict[int, list[float]]:
    """Numerical leading coefficients of the bands (float64, not a certificate).

    With ``J = E(t) diag(t^beta)`` and well separated scales, the band of block
    ``i`` behaves like ``t^beta_i`` times the singular values of
    ``(I - P_{<i}) E_i(0)``, the divided frame of block ``i`` projected off the
    earlier blocks (App. F.2). Computed from float64 series coefficients.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    bank : numpy.ndarray
        Input banks ``X``.
    U, W, V
        The path.
    columns : list of int
        The visible columns.
    exponents : list of int
        The Smith orders ``beta`` of the columns.
    blocks : list of numpy.ndarray
        The column positions of each block, in order.

    Returns
    -------
    dict
        Block index to its leading coefficients (float64, numerical).
    """
    J = bank_jacobian(arch, bank, U, W, V, float_series(max(exponents) + 1), columns)
    out, previous = {}, np.zeros((J.shape[1], 0))
    for layer, (beta, idx) in enumerate(zip(exponents, blocks)):
        E = J[beta][:, idx]
        if previous.shape[1]:
            Qp, _ = np.linalg.qr(previous)
            E = E - Qp @ (Qp.T @ E)
        out[layer] = [float(x) for x in np.linalg.svd(E, compute_uv=False)]
        previous = np.concatenate([previous, J[beta][:, idx]], axis=1)
    return out
