"""Native contact spectra: Theorem 4, Proposition D.1, Appendix D.

Along the native path ``Q_i = t U_i``, ``K_i = t W_i``, ``V_i = V_i^*`` (identity
or fixed generic invertible values) the Jacobian ``J(t)`` of the bank
observation (eq. 43-44) in *all* native entries is computed from the graph as
a matrix of truncated power series in ``t`` (exact over Q, or over F_p), and
its Smith factors over ``k[[t]]`` are computed by pivoting on an entry of
least valuation (:func:`smith_orders`). Nothing of the theorem enters that
computation; the theorem's formulas are only used, separately, for

* the *divided frame* ``E(0)`` of App. D.3 (columns of layer ``i`` divided by
  ``t^beta_i`` from the proven divisibility of App. D.2): the bank separates
  exactly when ``E(0)`` has rank ``P - zeta``;
* the certificate of a modular result: modular Smith orders are upper bounds
  on the true ones (see :mod:`symattn.certify`), the divisibility bounds are
  proven lower bounds, so agreement certifies them.

The kernel is verified exactly: the factor gauges (eq. 50) and interface
directions (App. F.2) are pushed through the reduction graph ``pi`` with exact
tangents and vanish identically (polynomials in ``t``), so ``J xi = 0`` since
``F = F_eff o pi``; their exact rank ``zeta`` bounds ``rank J <= P - zeta``
while the modular pivots give ``rank J >= #pivots``.
"""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

import numpy as np

from .algebras import P as DEFAULT_PRIME
from .algebras import P2 as SECOND_PRIME
from .algebras import Tangent, exact_series, float_series, modular_series, unit_tangents
from .algebras.series import SeriesAlgebra
from .certify import rank_exact, rank_mod_p
from .errors import SymattnError
from .graph import evaluate, native_network, reduction_graph
from .model import (Architecture, NativeParams, _eye, _random_matrix, factor_gauges,
                    interface_directions, random_bank)

__all__ = [
    "Band", "Spectrum", "divisibility_orders", "path_parameters", "bank_jacobian",
    "smith_orders", "exact_kernel", "pi_derivative_vanishes", "native_spectrum", "leading_coefficients",
]


def divisibility_orders(arch: Architecture) -> list[int]:
    """The proven divisibility exponents of App. D.2 / Prop. D.1:
    ``e_0 = 0``, ``e_i = 3 e_{i-1} + 2 k_i``, ``beta_i = 2 k_i - 1 + 2 e_{i-1}``.

    >>> divisibility_orders(Architecture.uniform(4, 2, 1, 2, "exp"))
    [1, 5, 17, 53]
    """
    e, out = 0, []
    for phi in arch.normalizers:
        out.append(2 * phi.k - 1 + 2 * e)
        e = 3 * e + 2 * phi.k
    return out


@dataclass
class Band:
    """``multiplicity`` Smith factors ``t^order`` first met with layer ``layer``'s
    query/key columns (``layer = 0``: the value coordinates)."""

    layer: int
    order: int
    multiplicity: int
    block: str
    leading: list[float] = field(default_factory=list)


@dataclass
class Spectrum:
    """Result of :func:`native_spectrum` (see ``to_json`` for the keys)."""

    units: int
    bands: list[Band]
    kernel: int
    rank: int
    parameters: int
    bank_size: int
    bank_separating: bool
    method: str
    seconds: float
    order: int
    certified: bool
    undecided: int = 0
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        d = asdict(self)
        d["bands"] = [{"layer": b.layer, "order": b.order, "multiplicity": b.multiplicity,
                       "block": b.block, **({"leading": b.leading} if b.leading else {})}
                      for b in self.bands]
        return d


def path_parameters(arch: Architecture, seed: int = 0, values: str = "identity"
                    ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Seeded rational ``U_i, W_i`` (full column rank, ``sym(U_i W_i^T) != 0``)
    and values ``V_i`` (identity, or generic invertible with ``values="random"``)."""
    if values not in ("identity", "random"):
        raise SymattnError(f"values must be 'identity' or 'random', got {values!r}")
    d = arch.d
    for r in arch.ranks:
        if r > d:
            raise SymattnError(f"query/key width r = {r} exceeds the width d = {d}")
    rng = random.Random(seed)
    U, W, V = [], [], []
    for r in arch.ranks:
        while True:
            u, w = _random_matrix(rng, (d, r)), _random_matrix(rng, (d, r))
            b = u.dot(w.T)
            if rank_exact(u) == r and rank_exact(w) == r and (b + b.T != 0).any():
                break
        U.append(u)
        W.append(w)
        if values == "identity":
            V.append(_eye(d))
        else:
            while True:
                v = _random_matrix(rng, (d, d))
                if rank_exact(v) == d:
                    break
            V.append(v)
    return U, W, V


def _checked_path(arch: Architecture, path: tuple) -> tuple[list, list, list]:
    """Validate explicit path matrices: shapes, full column rank factors."""
    try:
        U, W, V = (list(part) for part in path)
    except (TypeError, ValueError):
        raise SymattnError("path must be a triple (U, W, V) of per-layer matrix lists") from None
    d = arch.d
    if not len(U) == len(W) == len(V) == arch.depth:
        raise SymattnError(f"path needs {arch.depth} matrices U_i, W_i and V_i each")
    for i, (u, w, v, r) in enumerate(zip(U, W, V, arch.ranks), 1):
        u, w, v = (np.asarray(a, dtype=object) for a in (u, w, v))
        if u.shape != (d, r) or w.shape != (d, r) or v.shape != (d, d):
            raise SymattnError(f"layer {i}: U, W must be {d} x {r} and V {d} x {d}, "
                               f"got {u.shape}, {w.shape}, {v.shape}")
        if rank_exact(u) < r or rank_exact(w) < r:
            raise SymattnError(f"layer {i}: U_{i} and W_{i} must have full column rank {r}")
    return U, W, V


def _seeds(arch: Architecture, algebra: SeriesAlgebra, U, W, V) -> tuple[dict, int]:
    """Native path values as series in ``t`` with unit tangents in every entry."""
    P = arch.native_size
    T = Tangent(algebra, P)
    off = arch.offsets()
    vals = {}
    for i in range(arch.depth):
        zero = np.zeros(U[i].shape, dtype=int)
        for name, value in ((f"Q{i + 1}", algebra.series([zero, U[i]])),
                            (f"K{i + 1}", algebra.series([zero, W[i]])),
                            (f"V{i + 1}", algebra.const(V[i]))):
            vals[name] = T.variable(value, unit_tangents(algebra, algebra.shape(value), off[name], P))
    return vals, P


def bank_jacobian(arch: Architecture, bank: np.ndarray, U, W, V, algebra: SeriesAlgebra) -> np.ndarray:
    """``J(t)`` of the bank observation in all native entries: array
    ``(order, rows, P)`` of series coefficients, rows = (input, coordinate, token)."""
    vals, P = _seeds(arch, algebra, U, W, V)
    vals["X"] = algebra.const(bank)
    out = evaluate(native_network(arch), Tangent(algebra, P), vals)["F"]
    tan = algebra.coefficients(out.tangent)
    return np.moveaxis(tan.reshape(tan.shape[0], P, -1), 1, 2)


def smith_orders(algebra: SeriesAlgebra, J: np.ndarray) -> tuple[list[int], int]:
    """Smith orders of a series matrix ``J`` (array ``(order, m, n)``) over k[[t]].

    Pivots on an entry of least valuation and eliminates its column by row
    operations over k[[t]] (exact mod ``t^order``). Returns the sorted pivot
    orders below the truncation and the number of remaining columns that are
    zero to that precision (undecided: exact zeros or orders >= ``order``).

    >>> A = exact_series(4)
    >>> J = A.series([[[1, 0], [0, 0]], [[0, 0], [0, 0]], [[0, 0], [0, 1]]])
    >>> smith_orders(A, J)
    ([0, 2], 0)
    """
    N = algebra.order
    J = np.array(J, copy=True)
    rows, cols = list(range(J.shape[1])), list(range(J.shape[2]))
    orders: list[int] = []
    while rows and cols:
        sub = J[:, rows][:, :, cols]
        val = algebra.valuation(sub)
        v = int(val.min())
        if v >= N:
            break
        i, j = np.unravel_index(int(np.argmin(val)), val.shape)
        pr, pc = rows[i], cols[j]
        orders.append(v)
        rows.remove(pr)
        cols.remove(pc)
        if not rows or not cols:
            break
        short = SeriesAlgebra(algebra.field, N - v)
        inv = short.reciprocal(J[v:, pr, pc][:, None])
        q_short = short.mul(J[v:, rows, pc][:, :, None], inv)
        q = algebra.const(np.zeros((len(rows), 1), dtype=int))
        q[: N - v] = q_short.reshape(N - v, len(rows), 1)
        prow = J[:, pr, cols][:, None, :]
        update = algebra.mul(q, prow)
        block = J[:, rows][:, :, cols]
        J[np.ix_(range(N), rows, cols)] = algebra.sub(block, update)
    return sorted(orders), len(cols)


def _path_direction(arch: Architecture, vec: np.ndarray, algebra: SeriesAlgebra) -> np.ndarray:
    """A flat native direction at ``t = 1`` turned into a direction along the path:
    its query/key entries are multiplied by ``t`` (array ``(order, P)``)."""
    off = arch.offsets()
    qk = np.zeros(arch.native_size, dtype=bool)
    for name, shape in arch.native_shapes():
        if name[0] in "QK":
            qk[off[name]: off[name] + int(np.prod(shape))] = True
    zero = np.zeros(arch.native_size, dtype=object)
    c0 = np.where(qk, zero, vec)
    c1 = np.where(qk, vec, zero)
    return algebra.series([c0, c1])


def pi_derivative_vanishes(arch: Architecture, U, W, V, directions: Sequence[np.ndarray]) -> list[bool]:
    """For each flat native direction ``xi`` (at ``t = 1``, see :func:`_path_direction`),
    whether ``D pi(theta(t)) xi(t)`` vanishes identically in ``t``.

    Exact: ``D pi(theta(t)) xi(t)`` is a polynomial of degree at most 3 in ``t``
    (``M_i`` is quadratic in the factors, values are constant), computed as an
    exact series mod ``t^8`` through the reduction graph, hence exactly.
    """
    if not len(directions):
        return []
    A = exact_series(8)
    T = Tangent(A, len(directions))
    xi = np.stack([_path_direction(arch, d, A) for d in directions], axis=1)  # (order, k, P)
    off = arch.offsets()
    vals = {}
    for i in range(arch.depth):
        zero = np.zeros(U[i].shape, dtype=int)
        for name, value in ((f"Q{i + 1}", A.series([zero, U[i]])),
                            (f"K{i + 1}", A.series([zero, W[i]])),
                            (f"V{i + 1}", A.const(V[i]))):
            n = int(np.prod(value.shape[1:]))
            seed = xi[:, :, off[name]: off[name] + n].reshape((A.order, len(directions)) + value.shape[1:])
            vals[name] = T.variable(value, seed)
    outs = evaluate(reduction_graph(arch), T, vals)
    zero = np.ones(len(directions), dtype=bool)
    for o in outs.values():
        if o.tangent is not None:
            z = A.field.is_zero(o.tangent)
            zero &= z.reshape(z.shape[0], z.shape[1], -1).all(axis=(0, 2))
    return [bool(v) for v in zero]


def exact_kernel(arch: Architecture, U, W, V) -> tuple[int, bool]:
    """Exact kernel directions along the path: factor gauges and interface
    directions. Returns ``(zeta, verified)``: ``zeta`` their exact rank, and
    whether each is annihilated identically by ``D pi`` (:func:`pi_derivative_vanishes`),
    hence by ``J = D F_eff . D pi``."""
    theta1 = NativeParams(tuple(U), tuple(W), tuple(V))  # the path at t = 1
    dirs = list(factor_gauges(arch, theta1)) + list(interface_directions(arch, theta1))
    if not dirs:
        return 0, True
    return rank_exact(np.array(dirs, dtype=object)), all(pi_derivative_vanishes(arch, U, W, V, dirs))


def _block_columns(arch: Architecture) -> list[np.ndarray]:
    """Column indices by block: ``[V_D]`` (the readout ``L = P_D`` in the source
    coordinates of App. D.1), layer 1 Q/K, ..., layer D Q/K, then ``V_1..V_{D-1}``
    (interface coordinates: exact kernel modulo the earlier blocks)."""
    off = arch.offsets()
    D = arch.depth
    blocks = [[] for _ in range(D + 2)]
    for name, shape in arch.native_shapes():
        idx = list(range(off[name], off[name] + int(np.prod(shape))))
        layer = int(name[1:])
        blocks[(0 if layer == D else D + 1) if name[0] == "V" else layer] += idx
    return [np.array(b, dtype=int) for b in blocks]


def _compress(J: np.ndarray, algebra: SeriesAlgebra, rows: int, seed: int) -> np.ndarray:
    """Random constant row combination ``C J`` (orders can only rise)."""
    p = algebra.field.p
    rng = np.random.default_rng(seed)
    C = rng.integers(0, p, size=(rows, J.shape[1]), dtype=np.int64)
    out = np.zeros((J.shape[0], rows, J.shape[2]), dtype=np.int64)
    for start in range(0, J.shape[1], 1024):
        out = (out + np.matmul(C[:, start:start + 1024], J[:, start:start + 1024]) % p) % p
    return out


def _divided_frame(arch: Architecture, J: np.ndarray, algebra: SeriesAlgebra,
                   betas: list[int]) -> tuple[list[tuple[int, int]], bool]:
    """The divided frame ``E(0)`` of App. D.3, block by block.

    Returns, for each column block (see :func:`_block_columns`), the pair
    ``(exponent, rank increment of E(0))``, and whether every coefficient below
    the exponent vanishes (the proven divisibility of App. D.2, observed).
    """
    divisible, cols, out = True, [], []
    rank = 0
    for layer, idx in enumerate(_block_columns(arch)):
        if not len(idx):
            continue
        beta = betas[layer - 1] if 1 <= layer <= arch.depth else 0
        if beta >= algebra.order:
            raise SymattnError(f"truncation order {algebra.order} is too short to decide the order "
                               f"{beta} of layer {layer}; raise --order")
        sub = J[:, :, idx]
        divisible &= bool(algebra.field.is_zero(sub[:beta]).all())
        cols.append(sub[beta])
        E0 = np.concatenate(cols, axis=1)
        new = rank_exact(E0) if algebra.field.dtype is object else rank_mod_p(E0, algebra.field.p)
        out.append((beta, new - rank))
        rank = new
    return out, divisible


def native_spectrum(arch: Architecture, bank: "int | str | np.ndarray" = "auto", seed: int = 0,
                    values: str = "identity", method: str = "modular", order: int | None = None,
                    progress: Callable[[str], None] | None = None, leading: bool = False,
                    path: tuple | None = None) -> Spectrum:
    """Exact native contact spectrum of Theorem 4 / Prop. D.1 on a finite bank.

    Parameters
    ----------
    arch : equal widths ``d``, ``r_i <= d``, any normalizers with rational Taylor data
    bank : number of seeded random inputs, ``"auto"`` (grow until the bank
        separates), or an explicit rational array ``(size, d, n)``
    values : ``"identity"`` (Theorem 4's path) or ``"random"`` (fixed generic invertible)
    method : ``"modular"`` (F_p, certified against the divisibility bounds) or
        ``"exact"`` (Smith form over Q[[t]] itself; small cases)
    order : truncation in ``t``; default: one more than the largest divisibility
        exponent, doubled while orders stay undecided
    path : explicit ``(U, W, V)`` lists of rational matrices instead of seeded ones
        (e.g. skew prefix products for Cor. D.2-D.3); the path is then ``Q_i = t U_i``,
        ``K_i = t W_i``, ``V_i``
    leading : also compute each band's leading coefficients ``c`` in
        ``sigma ~ c t^order`` (numerical, float64; see :func:`leading_coefficients`)

    Examples
    --------
    >>> arch = Architecture.uniform(2, 2, 1, 2, "exp")
    >>> s = native_spectrum(arch, bank="auto")
    >>> [(b.layer, b.order, b.multiplicity) for b in s.bands], s.kernel
    ([(0, 0, 4), (1, 1, 3), (2, 5, 3)], 6)
    >>> s.bank_separating, s.certified
    (True, True)
    """
    say = progress or (lambda msg: None)
    start = time.perf_counter()
    if method not in ("modular", "exact"):
        raise SymattnError(f"method must be 'modular' or 'exact', got {method!r}")
    U, W, V = path_parameters(arch, seed, values) if path is None else _checked_path(arch, path)
    betas = divisibility_orders(arch)
    zeta, verified = exact_kernel(arch, U, W, V)
    if not verified:
        raise SymattnError("a gauge direction failed to vanish exactly; this is a bug, please report it")
    P = arch.native_size
    rows_needed = P - zeta
    per_input = arch.d * arch.tokens
    if isinstance(bank, str):
        if bank != "auto":
            raise SymattnError(f"bank must be a positive integer or 'auto', got {bank!r}")
        sizes = _auto_sizes(-(-rows_needed // per_input))
    elif isinstance(bank, (int, np.integer)):
        sizes = iter([int(bank)])
    else:
        sizes = iter([None])
    def algebra_for(N: int) -> SeriesAlgebra:
        return exact_series(N) if method == "exact" else modular_series(N, DEFAULT_PRIME)

    N = order or (max(betas) + 2)
    for size in sizes:
        X = np.asarray(bank, dtype=object) if size is None else random_bank(arch, size, seed)
        if X.ndim != 3 or X.shape[1:] != (arch.d, arch.tokens):
            raise SymattnError(f"bank must have shape (size, {arch.d}, {arch.tokens}), got {X.shape}")
        algebra = algebra_for(N)
        say(f"bank {len(X)}: Jacobian {len(X) * per_input} x {P} as series to order {N} ({algebra.field.name})")
        J = bank_jacobian(arch, X, U, W, V, algebra)
        frame, divisible = _divided_frame(arch, J, algebra, betas)
        frame_rank = sum(r for _, r in frame)
        separating = frame_rank == rows_needed
        if separating or bank != "auto":
            break
        say(f"bank {len(X)} does not separate (rank E(0) = {frame_rank} < {rows_needed}); growing")
    if not divisible:
        raise SymattnError("a Jacobian column is not divisible by its proven power of t; "
                           "the normalizer or path is outside Theorem 4's hypotheses")
    blocks = _block_columns(arch)
    while True:
        Jc = J if method == "exact" else _compress(J, algebra, min(J.shape[1], P + 8), seed)
        nested = []
        for layer, idx in enumerate(blocks):
            if len(idx):
                cols = np.concatenate(blocks[: layer + 1])
                say(f"Smith form of {len(cols)} columns (readout through block {layer})")
                nested.append((layer, smith_orders(algebra, Jc[:, :, cols])[0]))
        rank = len(nested[-1][1])
        if rank == rows_needed or order is not None or N > 4 * max(betas) + 8:
            break
        N *= 2
        say(f"{rows_needed - rank} orders undecided; raising the truncation to {N}")
        algebra = algebra_for(N)
        J = bank_jacobian(arch, X, U, W, V, algebra)
    bands = _bands(nested, arch.depth)
    # D.3: a separated frame and the divisibility give Smith factors t^beta with
    # multiplicity rank E(0) per block; the pivot computation must agree with it.
    frame_bands = [(layer, beta, m) for layer, (beta, m) in
                   zip([lay for lay, idx in enumerate(blocks) if len(idx)], frame) if m]
    agree = [(b.layer, b.order, b.multiplicity) for b in bands] == frame_bands
    certified = bool(separating and divisible and rank == rows_needed and agree)
    if leading and certified:
        say("leading coefficients of the bands (float64 series)")
        coeffs = leading_coefficients(arch, X, U, W, V, betas)
        for b in bands:
            b.leading = coeffs[b.layer][: b.multiplicity]
    notes = []
    if rank < rows_needed:
        notes.append(f"{rows_needed - rank} orders are >= {N} or exact zeros beyond the gauges: undecided")
    if not separating:
        notes.append(f"the bank does not separate: rank E(0) = {frame_rank} < {rows_needed}; "
                     "orders may exceed the generic ones (use --bank auto)")
    if method == "modular":
        notes.append(f"Smith orders computed over GF({DEFAULT_PRIME}) after a random row compression are "
                     "upper bounds on the orders over Q[[t]]; " +
                     ("they equal the proven divisibility exponents on a separated frame "
                      "(App. D.2-D.3), so they are exact" if certified else "they are not certified"))
    return Spectrum(
        units=sum(b.multiplicity for b in bands if b.order == 0), bands=bands,
        kernel=P - rank if rank == rows_needed else zeta, rank=rank, parameters=P,
        bank_size=len(X), bank_separating=bool(separating), method=method,
        seconds=round(time.perf_counter() - start, 3), order=N, certified=certified,
        undecided=rows_needed - rank, notes=notes)


def leading_coefficients(arch: Architecture, bank: np.ndarray, U, W, V,
                         betas: list[int]) -> dict[int, list[float]]:
    """Numerical leading coefficients of the bands (float64, not a certificate).

    With ``J = E(t) diag(t^beta)`` and well separated scales, the band of block
    ``i`` behaves like ``t^beta_i`` times the singular values of
    ``(I - P_{<i}) E_i(0)``, the divided frame of block ``i`` projected off the
    earlier blocks (App. F.2). Computed from float64 series coefficients.
    """
    algebra = float_series(max(betas) + 1)
    J = bank_jacobian(arch, bank, U, W, V, algebra)
    out, previous = {}, np.zeros((J.shape[1], 0))
    for layer, idx in enumerate(_block_columns(arch)[: arch.depth + 1]):
        beta = betas[layer - 1] if layer else 0
        E = J[beta][:, idx]
        if previous.shape[1]:
            Qp, _ = np.linalg.qr(previous)
            E = E - Qp @ (Qp.T @ E)
        out[layer] = [float(x) for x in np.linalg.svd(E, compute_uv=False)]
        previous = np.concatenate([previous, J[beta][:, idx]], axis=1)
    return out


def _auto_sizes(first: int):
    size = max(1, first)
    while size <= 4096:
        yield size
        size = size + max(1, size // 2)
    raise SymattnError("no separating bank found up to 4096 inputs")


def _bands(nested: Sequence[tuple[int, Sequence[int]]], depth: int) -> list[Band]:
    """Orders added by each column block (nested Smith forms), as bands."""
    from collections import Counter

    bands: list[Band] = []
    prev: Counter = Counter()
    for layer, orders in nested:
        cur = Counter(orders)
        added = cur - prev
        block = ("readout V_D" if layer == 0 else f"layer {layer} query/key" if layer <= depth
                 else "interface values V_1..V_(D-1)")
        for o in sorted(added):
            bands.append(Band(layer, o, added[o], block))
        prev = cur
    return bands
