"""Native contact spectra of any architecture: Theorem 4, Proposition D.1, Appendix D.

Along the native path ``Q_{i,h} = t U_{i,h}``, ``K_{i,h} = t W_{i,h}``, every other
block (values, output projections) fixed (identity values or fixed generic
invertible ones), the Jacobian ``J(t)`` of the bank observation (eq. 43-44) in
*all* native entries is computed from the graph as a matrix of truncated power
series in ``t`` (exact over Q, or over F_p), and its Smith factors over
``k[[t]]`` are computed by pivoting on an entry of least valuation
(:meth:`symattn.core.linalg.SeriesMatrix.smith_orders`). Nothing of the theorem
enters that computation. The declared symmetries
(:class:`symattn.model.symmetries.GaugeKernel`: factor gauges, value gauges,
interface directions) are verified as kernel vectors of ``J`` and split off by a
unimodular column change; the Smith form is taken on the visible columns.

Where a statement of the paper covers the architecture (:data:`symattn.theorems.statements.APP_D3`,
the paper's stack: Theorem 4), its formulas are used, separately, for

* the *divided frame* ``E(0)`` of App. D.3 (columns of layer ``i`` divided by
  ``t^beta_i`` from the proven divisibility of App. D.2): the bank separates
  exactly when ``E(0)`` has rank ``P - zeta``, which is the stopping rule of the
  ``auto`` bank and the blocks of the bands (readout, then each layer's
  query/key columns);
* the ``conditional`` certificate of a modular result: modular Smith orders
  are upper bounds on the true ones (see :mod:`symattn.core.certify`) and the
  divisibility bounds of App. D.2 are the paper's lower bounds.

Elsewhere the ``auto`` bank grows until two consecutive sizes give the same
Smith orders (evidence that it separates), the bands are attributed by layer,
and the result is labelled :data:`~symattn.theorems.statements.NO_THEOREM`.

The ``certified`` certificate uses no formula of the paper: the lower bound is
proved from the model (:func:`prove_column_orders`, or for a column-reduced
basis :func:`symattn.analyses.columns.prove_reduced_orders`), see
:func:`native_spectrum`. Every series Jacobian comes from
:func:`symattn.model.network.jacobian` and is checked there against an
expansion that does not use the tangent rules. The divisibility exponents are
the paper's (:func:`symattn.theorems.formulas.divisibility_orders`); without a
statement they only set the first truncation.
"""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from symattn.core.algebras import DEFAULT_PRIME
from symattn.core.algebras import float_series, series_for
from symattn.core.algebras.modular import PrimeField, UnluckyPrime
from symattn.core.algebras.series import SeriesAlgebra
from symattn.core.certify import MajorantSeries, height_bound, primes_below, proved_vanishing
from symattn.core.errors import CheckFailed, OutsideHypotheses, SymattnError
from symattn.core.linalg import Matrix, SeriesMatrix, identity_matrix, matmul_mod
from symattn.model.architecture import Architecture
from symattn.model.network import evaluate, jacobian, native_network
from symattn.model.parameters import native_path_values, path_point, random_bank, random_rational_matrix
from symattn.model.symmetries import GaugeKernel, head_permutation_check
from symattn.theorems import statements
from symattn.theorems.formulas import divisibility_orders

__all__ = [
    "Band", "Spectrum", "path_parameters", "path_point_of", "bank_jacobian", "native_spectrum",
    "leading_coefficients", "jacobian_height_bounds", "height_bounds_hold", "prove_column_orders",
    "CERTIFICATES", "MAX_PROOF_PRIMES", "attribute_bands", "compress_rows", "block_letters", "from_u_series",
    "OutsideHypotheses", "bank_orders",
]

#: The certificate kinds of a spectrum, strongest first (see :func:`native_spectrum`).
CERTIFICATES = ("exact", "certified", "conditional", "none")


@dataclass
class Band:
    """``multiplicity`` Smith factors ``t^order`` first met with layer ``layer``'s
    query/key columns (``layer = 0``: the value coordinates)."""

    layer: int
    order: int
    multiplicity: int
    block: str
    leading: list[float] = field(default_factory=list)

    def __getitem__(self, key: str):
        """``band["order"]``: the former dict bands of the variant spectra (deprecated)."""
        return getattr(self, key)


@dataclass
class Spectrum:
    """Result of :func:`native_spectrum` (see ``to_json`` for the keys)."""

    units: int
    bands: list[Band]
    kernel: int
    rank: int
    parameters: int
    bank_size: int
    #: whether the divided frame of App. D.3 has full rank (None: no statement gives one)
    bank_separating: bool | None
    method: str
    seconds: float
    order: int
    certified: bool
    undecided: int = 0
    notes: list[str] = field(default_factory=list)
    #: ``"exact"``, ``"certified"``, ``"conditional"`` or ``"none"`` (see :func:`native_spectrum`)
    certificate: str = "none"
    #: the layers (:meth:`~symattn.model.architecture.Architecture.describe`)
    architecture: str = ""
    #: the declared symmetries of the kernel, by kind
    kernel_kinds: dict = field(default_factory=dict)
    #: the statement that covers the spectrum (its label), or None (``theorem: null``)
    theorem: str | None = None
    #: the head permutation groups (:func:`~symattn.model.symmetries.head_permutation_check`)
    head_permutations: list = field(default_factory=list)

    def to_json(self) -> dict:
        d = asdict(self)
        d["bands"] = [{"layer": b.layer, "order": b.order, "multiplicity": b.multiplicity,
                       "block": b.block, **({"leading": b.leading} if b.leading else {})}
                      for b in self.bands]
        return d

    def _repr_html_(self) -> str:
        """The Smith factors, rank, bank and certificate as an HTML table (Jupyter, docs)."""
        from symattn.render.derivation import summary_html

        factors = ", ".join(f"$t^{{{b.order}}} \\times {b.multiplicity}$ ({b.block})" for b in self.bands)
        rows = [("Smith factors of $J_B(t)$", f"{factors}, $0 \\times {self.kernel}$ (exact kernel)"),
                ("rank", f"{self.rank} of {self.parameters} native parameters"),
                ("bank", f"{self.bank_size} inputs, separating: "
                         f"{'not decided' if self.bank_separating is None else self.bank_separating}"),
                ("method", f"{self.method}, {'certified' if self.certified else 'not certified'}, "
                           f"truncation $t^{{{self.order}}}$, {self.undecided} undecided, {self.seconds:.2f} s")]
        title = "Theorem 4" if self.theorem else statements.NO_THEOREM
        return summary_html(f"Native contact spectrum ({title})", rows + [("note", n) for n in self.notes])


def path_point_of(arch: Architecture, seed: int = 0, values: str = "identity") -> dict[str, np.ndarray]:
    """The seeded native path at ``t = 1``: per head rational ``U, W`` (full column rank,
    ``sym(U W^T) != 0``), square value maps the identity (``values="identity"``) or generic
    invertible (``"random"``), other blocks (output projections, rectangular values)
    seeded rationals; drawn block by block in flat order.

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
    for i, layer in enumerate(arch.layers, 1):
        for blocks, head in zip(layer.head_blocks(i), layer.heads):
            r = head.rank
            while True:
                u, w = random_rational_matrix(rng, (d, r)), random_rational_matrix(rng, (d, r))
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
                    m = random_rational_matrix(rng, shape)
                    if not square or Matrix.rational(m).rank() == shape[0]:
                        break
                out[blocks[role].name] = m
    return out


def _split(arch: Architecture, point: Mapping[str, np.ndarray]) -> tuple[dict, dict, dict]:
    """A path point as ``(U, W, V)`` mappings: query factors, key factors, other blocks."""
    U = {b.name: point[b.name] for b in arch.blocks if b.role == "Q"}
    W = {b.name: point[b.name] for b in arch.blocks if b.role == "K"}
    V = {b.name: point[b.name] for b in arch.blocks if not b.is_factor}
    return U, W, V


def path_parameters(arch: Architecture, seed: int = 0, values: str = "identity"
                    ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Seeded rational ``U_i, W_i`` (full column rank, ``sym(U_i W_i^T) != 0``)
    and values ``V_i`` (identity, or generic invertible with ``values="random"``), as
    per-layer lists (one head per layer; any stack: :func:`path_point_of`)."""
    point = path_point_of(arch, seed, values)
    U, W, V = _split(arch, point)
    if not len(U) == len(W) == len(V) == arch.depth:
        return U, W, V  # several heads or output projections: mappings of blocks
    return list(U.values()), list(W.values()), list(V.values())


def _checked_path(arch: Architecture, path) -> dict[str, np.ndarray]:
    """Validate an explicit path (a triple ``(U, W, V)`` of per-layer lists or block mappings,
    or one mapping of every block at ``t = 1``): shapes, full column rank factors."""
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
    (:func:`symattn.model.network.series_derivative_check`).
    """
    P = arch.native_size
    columns = list(range(P)) if columns is None else list(columns)
    N = algebra.order
    U_alg = SeriesAlgebra(algebra.field, N // 2 + 1)  # G up to u^(N//2): t^(N-1) at most
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
    G = jacobian(native_network(arch), U_alg, vals, wrt, directions=U_alg.const(select), verify=verify)
    return from_u_series(U_alg.field, G, block_letters(arch, columns), N)


def from_u_series(field, G: np.ndarray, letters: np.ndarray, order: int) -> np.ndarray:
    """The Jacobian in ``t`` (``order`` coefficients) from the Jacobian ``G`` in ``u = t^2``
    on the path ``Q = u U``, ``K = W``: query columns (``letters == "Q"``) are
    ``t G(t^2)``, key columns ``G(t^2) / t`` (their ``u^0`` coefficient must vanish) and
    every other column (values, output projections) ``G(t^2)``. ``G`` needs
    ``order // 2 + 1`` coefficients.

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

    >>> block_letters(Architecture.uniform(1, 2, 1, 2, "exp"), range(6)).tolist()
    ['Q', 'Q', 'K', 'K', 'V', 'V']
    """
    letters = np.array([block.role for block in arch.column_blocks()], dtype="<U1")
    return letters[list(columns)]


def jacobian_height_bounds(arch: Architecture, bank: np.ndarray, U, W, V, order: int) -> list[int]:
    """A-priori bounds ``B_m``, ``m < order``: every coefficient ``c`` of ``u^m`` of every
    entry of the ``u``-Jacobian ``G`` of :func:`bank_jacobian` (any row, any native
    column) is a rational with ``|D_m c| <= B_m`` for an integer ``D_m`` with
    ``D_m c`` integral.

    Majorant arithmetic (:class:`~symattn.core.certify.MajorantSeries`) on the same
    graph at ``theta + delta 1`` (every native entry moved), without computing
    any coefficient: ``B_m = D_m H_m`` from the ``delta`` part.

    >>> arch = Architecture.uniform(1, 1, 1, 2, "exp")
    >>> U, W, V = path_parameters(arch)
    >>> [b > 0 for b in jacobian_height_bounds(arch, random_bank(arch, 2), U, W, V, 3)]
    [True, True, True]
    """
    out = _jacobian_majorant(arch, bank, U, W, V, order)
    return [height_bound(h, d) for h, d in zip(out.height[1], out.denominator[1])]


def _jacobian_majorant(arch: Architecture, bank: np.ndarray, U, W, V, order: int):
    """The majorant of ``F`` at ``theta + delta 1`` on the u-path (heights and denominators)."""
    M = MajorantSeries(order)
    point = path_point(arch, U, W, V)
    vals = {}
    for block in arch.blocks:
        value = point[block.name]
        one = np.ones(np.shape(value), dtype=int)
        if block.role == "Q":
            vals[block.name] = M.series([np.zeros(np.shape(value), dtype=int), value], [one])
        else:
            vals[block.name] = M.series([value], [one])
    vals["X"] = M.const(bank)
    return evaluate(native_network(arch), M, vals)["F"]


def height_bounds_hold(arch: Architecture, bank: np.ndarray, U, W, V, order: int) -> bool:
    """Whether :func:`jacobian_height_bounds` holds for the exact ``u``-Jacobian computed
    over Q (not bounded): every coefficient ``c`` of ``u^m`` has ``D_m c`` integral and
    ``|D_m c| <= B_m``. A check of the majorant arithmetic for small cases (the column
    proof's soundness rests on it); exact rational series, so keep ``order`` small.

    >>> arch = Architecture.uniform(1, 2, 1, 2, "exp")
    >>> U, W, V = path_parameters(arch, seed=1, values="random")
    >>> height_bounds_hold(arch, random_bank(arch, 2, seed=2), U, W, V, 4)
    True
    """
    from symattn.core.algebras import exact_series
    from symattn.core.algebras.rational import to_fmpq

    out = _jacobian_majorant(arch, bank, U, W, V, order)
    A = exact_series(order)
    vals = native_path_values(arch, A, U, W, V, squared=True)
    vals["X"] = A.const(bank)
    G = jacobian(native_network(arch), A, vals, _native_names(arch), verify=0)
    for m, (h, d) in enumerate(zip(out.height[1], out.denominator[1])):
        bound = height_bound(h, d)
        for c in G[m].reshape(-1):
            scaled = to_fmpq(c) * d
            if scaled.q != 1 or abs(scaled.p) > bound:
                return False
    return True


#: Most primes :func:`prove_column_orders` uses for one column order (about 23 bits each):
#: enough for the orders 161 of depth five (129 primes at d = 2, r = 1, n = 2: the softmax
#: D = 5 spectrum certified in about 15 s); the orders 485 of depth six need about 350.
MAX_PROOF_PRIMES = 160


def prove_column_orders(arch: Architecture, bank: np.ndarray, U, W, V, columns: Sequence[int],
                        orders: Sequence[int], say: Callable[[str], None] | None = None,
                        max_primes: int = MAX_PROOF_PRIMES, known: np.ndarray | None = None
                        ) -> tuple[str, int]:
    """Prove over Q that column ``columns[c]`` of ``J(t)`` (:func:`bank_jacobian`) vanishes
    below ``t^orders[c]``, from the model itself (no appeal to App. D.2).

    Each coefficient to be shown zero is a rational ``c`` with ``|D c| <= B``
    (:func:`jacobian_height_bounds`); it is computed modulo primes below
    ``2^23`` (the default prime :data:`~symattn.core.algebras.DEFAULT_PRIME` first) until their product exceeds ``2 B``
    (:func:`~symattn.core.certify.proved_vanishing`). A modular computation that
    completes is the reduction of the rational one (every denominator met is
    inverted mod p, or the computation stops), so vanishing mod all of them
    forces ``D c = 0``. Columns are grouped by order: a column of order ``b``
    needs ``J mod t^b`` only, which comes from the coefficients of ``u^0`` to
    ``u^(b // 2)`` of the Jacobian in ``u = t^2`` (:func:`from_u_series`), so the
    bound is the largest of ``B_0, ..., B_(b // 2)``.

    Returns ``(status, primes)``: ``"proved"``; ``"refuted"`` (a coefficient is
    nonzero mod some prime, so nonzero over Q); or ``"too costly"`` when an
    order needs more than ``max_primes`` primes (the bounds grow with the order:
    about 2^371 at ``t^17`` for the paper's F.2 size, 2^872 at ``t^53`` for
    softmax ``D = 4``, ``d = 2``, ``r = 1``, ``n = 2``); ``primes`` is the most
    primes one order needed.

    ``known``, if given, is ``J(t)`` mod :data:`~symattn.core.algebras.DEFAULT_PRIME` in all ``columns``
    (:func:`bank_jacobian`, truncated at least at the largest order), already
    computed: that prime is read from it instead of evaluated again.
    """
    say = say or (lambda msg: None)
    columns, orders = list(columns), [int(b) for b in orders]
    if not any(orders):
        return "proved", 0
    # J mod t^b comes from the u-coefficients u^0..u^(b // 2) of G (from_u_series): only
    # their bounds B_0..B_(b // 2) matter
    top = max(orders) // 2 + 1
    # cost decision only (not part of the proof): bounds grow geometrically with the
    # power of u, and majorants to a high order are themselves slow; extrapolate the
    # growth seen at low order before computing them all (up to u^11 they are cheap: all at once)
    probe = jacobian_height_bounds(arch, bank, U, W, V, top if top <= 12 else 8)
    if top > len(probe):
        bits = probe[-1].bit_length() + (top - len(probe)) * (probe[-1].bit_length() - probe[-2].bit_length())
        if bits > 23 * max_primes:
            say(f"the height bound at t^{max(orders)} is about 2^{bits}: more than {max_primes} primes")
            return "too costly", -(-bits // 23)
    bounds = probe if top <= len(probe) else jacobian_height_bounds(arch, bank, U, W, V, top)
    plan = {}
    for b in sorted(set(orders) - {0}):
        bound, count = max(bounds[: b // 2 + 1]), 1
        while not proved_vanishing(bound, primes_below(2**23, count)):
            count += 1
            if count > max_primes:
                say(f"order t^{b}: the height bound 2^{bound.bit_length()} needs more than "
                    f"{max_primes} primes")
                return "too costly", count
        plan[b] = (bound, count)
    for b, (bound, count) in plan.items():
        cols = [c for c, o in zip(columns, orders) if o == b]
        say(f"order t^{b}: {len(cols)} columns vanish below it over Q: bound 2^{bound.bit_length()} "
            f"needs {count} primes")
        for p in primes_below(2**23, count):
            if p == DEFAULT_PRIME and known is not None and known.shape[0] >= b:
                if not PrimeField(p).is_zero(known[:b][:, :, [o == b for o in orders]]).all():
                    return "refuted", count
                continue
            try:
                J = bank_jacobian(arch, bank, U, W, V, SeriesAlgebra(PrimeField(p), b), cols, verify=0)
            except UnluckyPrime:  # a denominator divisible by p: this prime proves nothing
                return "too costly", count
            if not PrimeField(p).is_zero(J).all():
                return "refuted", count
    return "proved", max(count for _, count in plan.values())


def _compress(J: np.ndarray, algebra: SeriesAlgebra, rows: int, seed: int) -> np.ndarray:
    """Random constant row combination ``C J`` mod p (orders can only rise)."""
    p = algebra.field.p
    C = np.random.default_rng(seed).integers(0, p, size=(rows, J.shape[1]), dtype=np.int64)
    return matmul_mod(C, J, p)




def _divided_frame(J: np.ndarray, algebra: SeriesAlgebra, exponents: list[int],
                   blocks: list[np.ndarray], kept: dict | None = None) -> tuple[list[int], bool]:
    """The divided frame ``E(0)`` of App. D.3, block by block: each block's
    columns divided by ``t^exponent`` (the proven divisibility of App. D.2) at
    ``t = 0``. Returns the rank increment of each block and whether every
    coefficient below the exponents vanishes (the divisibility, observed).

    ``kept`` (a dict, empty at first) carries an echelon basis of the frame rows of
    earlier calls: ``J`` then holds only the rows not seen before (a growing bank),
    stacked under that basis, which spans the same row space. Every prefix rank comes
    from the pivot columns of one echelon form (:meth:`symattn.core.linalg.Matrix.rref`)."""
    kept = kept if kept is not None else {}
    divisible, cols = kept.get("divisible", True), []
    for beta, idx in zip(exponents, blocks):
        if beta >= algebra.order:
            raise SymattnError(f"truncation order {algebra.order} is too short to decide the order "
                               f"{beta}; raise --order")
        sub = J[:, :, idx]
        divisible &= bool(algebra.field.is_zero(sub[:beta]).all())
        cols.append(sub[beta])
    bounds = np.cumsum([len(idx) for idx in blocks])
    frame = np.concatenate(cols, axis=1)
    if "basis" in kept:
        frame = np.concatenate([kept["basis"], frame])
    echelon, pivots = Matrix(frame, algebra.field).rref()
    ranks = [int(np.searchsorted(pivots, b)) for b in bounds]
    out = [r - q for r, q in zip(ranks, [0] + ranks[:-1])]
    kept.update(basis=echelon.entries, divisible=divisible)
    return out, divisible


@dataclass
class _Setup:
    """What every route of :func:`native_spectrum` shares: the path, the kernel split, the blocks."""

    arch: Architecture
    point: dict
    U: dict
    W: dict
    V: dict
    kernel: GaugeKernel
    zeta: int
    blocks: list          # (label, layer, native columns), in Jacobian column order
    columns: list[int]    # the visible native columns, block after block
    block_idx: list       # the positions of each block's columns in ``columns``
    exponents: list[int] | None  # the divided frame's exponents (App. D.3), None without a statement
    hint: list[int]       # divisibility exponents: the first truncation and its cap
    method: str
    seed: int
    say: Callable[[str], None]

    @property
    def visible(self) -> int:
        return len(self.columns)

    def jacobian(self, X: np.ndarray, algebra: SeriesAlgebra, verify: int = 1) -> np.ndarray:
        return bank_jacobian(self.arch, X, self.U, self.W, self.V, algebra, self.columns, verify=verify)

    def smith(self, J: np.ndarray, algebra: SeriesAlgebra, prefixes: bool = True) -> tuple[np.ndarray, list]:
        """The row compression of ``J`` and the Smith orders of its block prefixes (the last: all)."""
        Jc = J if self.method == "exact" else _compress(J, algebra, min(J.shape[1], self.visible + 8), self.seed)
        nested = []
        for b in range(len(self.blocks)) if prefixes else [len(self.blocks) - 1]:
            cols = np.concatenate(self.block_idx[: b + 1])
            self.say(f"Smith form of {len(cols)} columns (through {self.blocks[b][0]})")
            nested.append(SeriesMatrix(algebra, Jc[:, :, cols]).smith_orders()[0])
        return Jc, nested


def _setup(arch: Architecture, seed: int, values: str, method: str, path, say) -> _Setup:
    """The path (seeded or given), the declared symmetries split off, the visible blocks."""
    point = path_point_of(arch, seed, values) if path is None else _checked_path(arch, path)
    U, W, V = _split(arch, point)
    kernel = GaugeKernel(arch, point)  # the path at t = 1
    zeta, verified = kernel.path_split()
    if not verified:
        raise OutsideHypotheses("the gauge directions do not split off exactly at this path "
                                "(values must be invertible); this is outside Theorem 4's setting"
                                if statements.THEOREM_4.covers(arch) else
                                "the declared symmetries are dependent at t = 0 on this path (a head rank "
                                "too large for the width?); the kernel split needs independent directions")
    if statements.APP_D3.covers(arch):  # the divided frame of App. D.3: the paper's blocks
        blocks = kernel.visible_blocks()
        exponents = statements.frame(arch, blocks)
    else:
        owner = arch.column_blocks()
        blocks = [(f"layer {i}", i, [c for c in kernel.visible() if owner[c].layer == i])
                  for i in range(1, arch.depth + 1)]
        exponents = None
    columns = [c for _, _, cols in blocks for c in cols]
    local = np.cumsum([0] + [len(cols) for _, _, cols in blocks])
    block_idx = [np.arange(local[b], local[b + 1]) for b in range(len(blocks))]
    return _Setup(arch, point, U, W, V, kernel, zeta, blocks, columns, block_idx, exponents,
                  divisibility_orders(arch), method, seed, say)


def _framed_bank(s: _Setup, bank, order: int | None) -> dict:
    """The bank and truncation by the divided frame (App. D.3): grow a seeded bank until
    ``E(0)`` has full rank, then raise the truncation while orders stay undecided."""
    arch, per_input = s.arch, s.arch.d * s.arch.tokens
    if isinstance(bank, str):
        if bank != "auto":
            raise SymattnError(f"bank must be a positive integer or 'auto', got {bank!r}")
        sizes = _auto_sizes(-(-s.visible // per_input))
    elif isinstance(bank, (int, np.integer)):
        sizes = iter([int(bank)])
    else:
        sizes = iter([None])
    N = order or (max(s.hint) + 2)
    algebra = series_for(s.method, N)
    # seeded banks nest (random_bank(m) is a prefix of random_bank(m')): keep computed rows,
    # as blocks joined once (the frame reads only the new rows, see _divided_frame)
    parts: list[np.ndarray] = []
    kept: dict = {}
    for size in sizes:
        X = np.asarray(bank, dtype=object) if size is None else random_bank(arch, size, s.seed)
        if X.ndim != 3 or X.shape[1:] != (arch.d, arch.tokens):
            raise SymattnError(f"bank must have shape (size, {arch.d}, {arch.tokens}), got {X.shape}")
        done = sum(part.shape[1] for part in parts) // per_input
        s.say(f"bank {len(X)}: Jacobian {len(X) * per_input} x {s.visible} (of {arch.native_size}) as series "
              f"to order {N} ({algebra.field.name})" + (f"; the rows of the first {done} inputs kept" if done else ""))
        parts.append(s.jacobian(X[done:], algebra))
        frame, divisible = _divided_frame(parts[-1], algebra, s.exponents, s.block_idx, kept)
        separating = sum(frame) == s.visible
        if separating or bank != "auto":
            break
        s.say(f"bank {len(X)} does not separate (rank E(0) = {sum(frame)} < {s.visible}); growing")
    J = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
    del parts
    if not divisible:
        raise OutsideHypotheses("a Jacobian column is not divisible by its proven power of t; "
                                "the normalizer or path is outside Theorem 4's hypotheses")
    while True:
        Jc, nested = s.smith(J, algebra)
        rank = len(nested[-1])
        if rank == s.visible or order is not None or N > 4 * max(s.hint) + 8:
            break
        N *= 2
        s.say(f"{s.visible - rank} orders undecided; raising the truncation to {N}")
        algebra = series_for(s.method, N)
        J = s.jacobian(X, algebra)
    return dict(X=X, J=J, algebra=algebra, N=N, nested=nested, frame=frame, divisible=divisible,
                separating=bool(separating), bank_note=None)


def _grown_bank(s: _Setup, bank, order: int | None) -> dict:
    """The bank and truncation without a divided frame: grow the bank until two consecutive
    sizes give the same Smith orders (evidence that it separates), then raise the truncation
    while orders stay undecided."""
    arch, per_input = s.arch, s.arch.d * s.arch.tokens
    given = None
    if isinstance(bank, np.ndarray):  # an explicit bank (e.g. of a family, symattn.analyses.bank)
        given, bank = bank, len(bank)
    elif isinstance(bank, str) and bank != "auto":
        raise SymattnError(f"bank must be a positive integer or 'auto', got {bank!r}")
    cap = 4 * max(s.hint) + 8
    rows: dict = {}  # computed rows by truncation: seeded (and given) banks nest
    checked: list = []

    def orders_at(size: int, N: int):
        X = given[:size] if given is not None else random_bank(arch, size, s.seed)
        if X.ndim != 3 or X.shape[1:] != (arch.d, arch.tokens):
            raise SymattnError(f"bank must have shape (size, {arch.d}, {arch.tokens}), got {X.shape}")
        A = series_for(s.method, N)
        done = rows[N].shape[1] // per_input if N in rows else 0
        s.say(f"bank {size}: Jacobian {size * per_input} x {s.visible} (of {arch.native_size}) to order t^{N} "
              f"({A.field.name})" + (f"; the rows of the first {done} inputs kept" if done else ""))
        if done < size:
            new = s.jacobian(X[done:], A, verify=0 if checked else 1)
            checked.append(True)  # the Jacobian code is checked on the first evaluation of a run
            rows[N] = new if not done else np.concatenate([rows[N], new], axis=1)
        J = rows[N][:, : size * per_input]
        Jc, nested = s.smith(J, A, prefixes=False)
        return X, A, J, Jc, nested[-1]

    N = order or (max(s.hint) + 2)
    stable = True
    if bank == "auto":
        size = -(-2 * s.visible // per_input)
        X, A, J, Jc, orders = orders_at(size, N)
        for _ in range(8):
            bigger = size + max(1, size // 2)
            X2, A2, J2, Jc2, orders2 = orders_at(bigger, N)
            stable = orders2 == orders
            size, X, A, J, Jc, orders = bigger, X2, A2, J2, Jc2, orders2
            if stable and (len(orders) == s.visible or order is not None or N >= cap):
                break
            if stable:
                N *= 2
                s.say(f"{s.visible - len(orders)} orders undecided; truncation raised to t^{N}")
                X, A, J, Jc, orders = orders_at(size, N)
        bank_note = (f"bank auto: Smith orders equal at the last two sizes (evidence that {size} inputs "
                     "separate)" if stable else f"bank auto: orders still changing at {size} inputs")
    else:
        size = int(bank)
        while True:
            X, A, J, Jc, orders = orders_at(size, N)
            if len(orders) == s.visible or order is not None or N >= cap:
                break
            N *= 2
        bank_note = f"bank: {size} seeded inputs (orders can only rise on a non-separating bank)"
    s.say("Smith forms of the layer prefixes (band attribution)")
    nested = [SeriesMatrix(A, Jc[:, :, np.concatenate(s.block_idx[: b + 1])]).smith_orders()[0]
              for b in range(len(s.blocks) - 1)] + [orders]
    return dict(X=X, J=J, algebra=A, N=N, nested=nested, frame=None, divisible=None, separating=None,
                bank_note=bank_note)


def _verify_kernel(s: _Setup, X: np.ndarray, algebra: SeriesAlgebra) -> str:
    """Verify the declared symmetries as kernel vectors (:meth:`GaugeKernel.verify`): through ``pi``
    with an effective map, else against ``J(t)`` on ``X``: ``J(t) xi(t) = 0`` mod ``t^N``, mod p,
    for every direction ``xi(t) = xi_0 + t xi_1`` (in ``u = t^2``: values ``xi_0``, queries
    ``u xi_1``, keys ``xi_1``; the directions scale like the blocks they move)."""
    arch = s.arch

    def apply(directions: np.ndarray) -> np.ndarray:
        xi = s.kernel.along_path()
        factor = np.array([b.is_factor for b in arch.column_blocks()])
        query = np.array([b.role == "Q" for b in arch.column_blocks()])
        if (xi[1][:, ~factor] != 0).any() or (xi[0][:, factor] != 0).any():
            raise CheckFailed("a declared symmetry does not scale like the blocks it moves along the path")
        half = SeriesAlgebra(algebra.field, algebra.order // 2 + 1)
        d0, d1 = np.where(query, 0, xi[0] + xi[1]), np.where(query, xi[1], 0)
        vals = native_path_values(arch, half, s.U, s.W, s.V, squared=True)
        vals["X"] = half.const(X)
        return jacobian(native_network(arch), half, vals, [b.name for b in arch.blocks],
                        directions=half.series([d0, d1]), verify=0)

    return s.kernel.verify(apply, algebra.field, where=f"J mod t^{algebra.order}")


def _certify(s: _Setup, run: dict, rank: int) -> tuple[str, int, bool, list[str]]:
    """The certificate (:data:`CERTIFICATES`), the primes of its proof, whether the columns were
    reduced first, and notes."""
    J, algebra, nested = run["J"], run["algebra"], run["nested"]
    certificate, primes, reduced, notes = "none", 0, False, []
    if s.method == "exact":
        return ("exact" if rank == s.visible else "none"), 0, False, notes
    if rank == s.visible:
        # lower bound from the model: the column valuations, proved over Q
        column_orders = [int(v) for v in algebra.valuation(J).min(axis=0)]
        if sorted(column_orders) == sorted(nested[-1]):
            s.say("proving the column orders over Q (primes with a-priori height bounds)")
            status, primes = prove_column_orders(s.arch, run["X"], s.U, s.W, s.V, s.columns, column_orders, s.say,
                                                 max_primes=MAX_PROOF_PRIMES, known=J)
            certificate = "certified" if status == "proved" else "none"
            if status == "too costly":
                notes.append(f"the model-based lower bound was not attempted: an order needs more than "
                             f"{MAX_PROOF_PRIMES} primes")
        else:
            certificate, primes = _certify_reduced(s, run)
            reduced = certificate == "certified"
    if certificate == "none" and s.exponents is not None and run["separating"] and run["divisible"]:
        frame_bands = [(layer, beta, m) for (_, layer, _), beta, m in zip(s.blocks, s.exponents, run["frame"]) if m]
        if [(b.layer, b.order, b.multiplicity) for b in _bands(nested, s.blocks)] == frame_bands:
            certificate = "conditional"  # D.3: the divisibility of App. D.2 is the lower bound
    return certificate, primes, reduced, notes


def _certify_reduced(s: _Setup, run: dict) -> tuple[str, int]:
    """Column-reduce ``J`` (rational relations reconstructed mod one or two primes) and prove the
    reduced columns' valuations over Q (:mod:`symattn.analyses.columns`)."""
    from symattn.analyses.columns import RECONSTRUCTION_PRIMES, prove_reduced_orders, reduce_columns

    J, A = run["J"], run["algebra"]
    s.say("column-reduced basis (rational relations reconstructed mod p)")
    Js, used = [J], [A.field.p]
    reduced = reduce_columns(Js, A.order, used)
    spare = [q for q in primes_below(2**23, RECONSTRUCTION_PRIMES + 1) if q != A.field.p]
    while reduced is None and len(used) < RECONSTRUCTION_PRIMES:
        # larger relation coefficients (e.g. a model's binary64 weights): one more prime (CRT)
        q = spare[len(used) - 1]
        s.say(f"column reduction modulo {len(used) + 1} primes (adding {q})")
        Js.append(s.jacobian(run["X"], SeriesAlgebra(PrimeField(q), A.order), verify=0))
        used.append(q)
        reduced = reduce_columns(Js, A.order, used)
    if reduced is None or sorted(reduced[1]) != sorted(run["nested"][-1]):
        return "none", 0
    s.say("proving the reduced column orders over Q (primes with a-priori height bounds)")
    proved, primes = prove_reduced_orders(s.arch, run["X"], s.U, s.W, s.V, s.columns, *reduced, say=s.say)
    return ("certified" if proved else "none"), primes


def native_spectrum(arch: Architecture, bank: "int | str | np.ndarray" = "auto", seed: int = 0,
                    values: str = "identity", method: str = "modular", order: int | None = None,
                    progress: Callable[[str], None] | None = None, leading: bool = False,
                    path: "tuple | Mapping | None" = None) -> Spectrum:
    """Exact native contact spectrum on a finite bank: Theorem 4 / Prop. D.1 for the paper's
    stack, computed (and labelled so) for any other architecture.

    Parameters
    ----------
    arch : equal widths ``d``, head ranks ``r <= d``, any normalizers with rational Taylor data
    bank : number of seeded random inputs, ``"auto"`` (grow until the bank
        separates), or an explicit rational array ``(size, d, n)``
    values : ``"identity"`` (Theorem 4's path) or ``"random"`` (fixed generic invertible)
    method : ``"modular"`` (F_p Smith form, certified as in the Notes) or
        ``"exact"`` (Smith form over Q[[t]] itself; small cases)
    order : truncation in ``t``; default: one more than the largest divisibility
        exponent, doubled while orders stay undecided
    path : explicit ``(U, W, V)`` lists of rational matrices instead of seeded ones
        (e.g. skew prefix products for Cor. D.2-D.3; for several heads mappings of
        blocks, or one mapping of every block such as a model's weights); the path is
        then ``Q = t U``, ``K = t W``, the other blocks fixed
    leading : also compute each band's leading coefficients ``c`` in
        ``sigma ~ c t^order`` (numerical, float64; see :func:`leading_coefficients`;
        they need the divided frame of App. D.3)

    Notes
    -----
    ``certificate`` says what the orders rest on (:data:`CERTIFICATES`):

    * ``exact``: the Smith form is computed over Q[[t]] (``method="exact"``),
      every order below the truncation found;
    * ``certified``: the modular Smith orders (after a random constant row
      compression) bound every cumulative order ``d_k`` (least valuation of a
      ``k x k`` minor over Q[[t]]) from above (Cauchy-Binet, reduction mod p).
      The lower bound is proved from the model: each visible column's
      valuation mod p is shown to be its valuation over Q by proving its lower
      coefficients zero over Q (:func:`prove_column_orders`); then every
      ``k x k`` minor has valuation at least the sum of the ``k`` smallest
      column orders. When the sorted column orders equal the modular Smith
      orders both bounds meet, and the orders are those over Q[[t]]; when they
      do not, a column-reduced basis (a unimodular change with rational
      coefficients, :mod:`symattn.analyses.columns`) is proved instead. Assumes:
      the forward-mode Jacobian code computes the derivative (checked on a
      random direction by a second code path, mod p, for the main prime; the
      other primes reuse the same code) and the normalizer's rational Taylor
      data are right. App. D.2 is not used;
    * ``conditional``: the modular orders equal the divisibility exponents of
      App. D.2 on a separated divided frame (App. D.3): the lower bound is the
      paper's, taken as proved (only where :data:`~symattn.theorems.statements.APP_D2`
      covers the architecture);
    * ``none``: upper bounds only.

    Examples
    --------
    >>> arch = Architecture.uniform(2, 2, 1, 2, "exp")
    >>> s = native_spectrum(arch, bank="auto")
    >>> [(b.layer, b.order, b.multiplicity) for b in s.bands], s.kernel
    ([(0, 0, 4), (1, 1, 3), (2, 5, 3)], 6)
    >>> s.bank_separating, s.certified, s.certificate
    (True, True, 'certified')
    >>> s = native_spectrum(Architecture.uniform(2, 2, 1, 2, "exp", skip="value"))
    >>> [(b.layer, b.order, b.multiplicity) for b in s.bands], s.kernel, s.certificate, s.theorem
    ([(1, 0, 4), (1, 1, 3), (2, 1, 1), (2, 2, 4), (2, 3, 2)], 2, 'certified', None)
    """
    say = progress or (lambda msg: None)
    start = time.perf_counter()
    if method not in ("modular", "exact"):
        raise SymattnError(f"method must be 'modular' or 'exact', got {method!r}")
    s = _setup(arch, seed, values, method, path, say)
    run = (_framed_bank if s.exponents is not None else _grown_bank)(s, bank, order)
    X, N, nested = run["X"], run["N"], run["nested"]
    verified_how = _verify_kernel(s, X, run["algebra"])
    rank = len(nested[-1])
    bands = _bands(nested, s.blocks)
    certificate, primes, reduced, notes = _certify(s, run, rank)
    certified = certificate != "none"
    if leading and certified and s.exponents is not None:
        say("leading coefficients of the bands (float64 series)")
        coeffs = leading_coefficients(arch, X, s.U, s.W, s.V, s.columns, s.exponents, s.block_idx)
        for b in bands:
            b.leading = coeffs[b.layer][: b.multiplicity]
    notes = _notes(s, run, rank, certificate, primes, reduced, path, values, verified_how, notes)
    P = arch.native_size
    return Spectrum(
        units=sum(b.multiplicity for b in bands if b.order == 0), bands=bands, kernel=s.zeta,
        rank=rank, parameters=P, bank_size=len(X), bank_separating=run["separating"], method=method,
        seconds=round(time.perf_counter() - start, 3), order=N, certified=certified,
        undecided=s.visible - rank, notes=notes, certificate=certificate, architecture=arch.describe(),
        kernel_kinds=s.kernel.kinds(), theorem=statements.label(statements.THEOREM_4, arch),
        head_permutations=head_permutation_check(arch, s.point, X[:2]))


def _notes(s: _Setup, run: dict, rank: int, certificate: str, primes: int, reduced: bool, path, values: str,
           verified_how: str, proof_notes: list[str]) -> list[str]:
    """The notes of a spectrum: the label, the bank, the path and kernel where no statement
    gives them, the proof's notes, undecided orders, the certificate in words."""
    notes = []
    outside = statements.outside_note(s.arch)
    if outside:
        notes.append(outside)
    if run["bank_note"] is not None:
        notes += [run["bank_note"],
                  (f"path: Q = t U, K = t W (seed {s.seed}); values {values} (concatenated heads: random V_h, O_h)"
                   if path is None else "path: the given point's queries and keys scaled by t, its values fixed"),
                  f"kernel: {s.zeta} declared symmetries ({s.kernel.kinds()}), {verified_how}, "
                  "leading coefficients independent over Q"]
    notes += proof_notes
    if rank < s.visible:
        if s.exponents is not None:
            notes.append(f"{s.visible - rank} orders are >= {run['N']}: undecided")
        else:
            notes.append(f"gap: {s.visible - rank} visible orders are >= t^{run['N']} or zero: rank {rank} "
                         f"<= rank J <= P - kernel = {s.arch.native_size - s.zeta} (an undeclared symmetry or "
                         "a higher order)")
    if run["separating"] is False:
        notes.append(f"the bank does not separate: rank E(0) = {sum(run['frame'])} < {s.visible}; "
                     "orders may exceed the generic ones (use --bank auto)")
    notes.append(_certificate_note(certificate, primes, reduced))
    return notes


def bank_orders(arch: Architecture, bank: np.ndarray, order: int, seed: int = 0,
                values: str = "identity") -> list[int]:
    """Modular Smith orders (upper bounds on the orders over Q[[t]]) of the visible columns
    of the path Jacobian on ``bank`` mod ``t^order`` (path of ``seed``, as in
    :func:`native_spectrum`).

    >>> v = Architecture.uniform(2, 2, 1, 3, "exp", skip="value")
    >>> bank_orders(v, random_bank(v, 6), 8)
    [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3]
    """
    s = _setup(arch, seed, values, "modular", None, lambda msg: None)
    A = series_for("modular", order)
    return s.smith(s.jacobian(bank, A, verify=0), A, prefixes=False)[1][-1]


def _certificate_note(certificate: str, primes: int, reduced: bool = False) -> str:
    """The certificate in words (what is computed, what is quoted)."""
    upper = (f"Smith orders over GF({DEFAULT_PRIME}) after a random row compression are upper bounds "
             "on the orders over Q[[t]]")
    if certificate == "certified" and reduced:
        return (f"certificate certified: {upper}, met by the valuations of a column-reduced basis (a "
                f"unimodular change with rational coefficients), proved over Q modulo {primes} primes "
                "(a-priori majorant heights); App. D.2 is not used. Assumed, not proved: the forward-mode "
                "Jacobian code computes the derivative (checked on a random direction by a second code path) "
                "and the normalizer's rational Taylor data are right")
    return {
        "exact": "certificate exact: Smith form computed over Q[[t]] itself",
        "certified": f"certificate certified: {upper}; the lower bound is proved from the model: every "
                     f"column vanishes over Q below its order (checked modulo {primes} primes whose "
                     "product exceeds twice an a-priori height bound from majorant arithmetic on the "
                     "same graph, fixed-point heights rounded up), so every k x k minor has at least "
                     "the sum of its k smallest column orders; App. D.2 is not used. Assumed, not "
                     "proved: the forward-mode Jacobian code computes the derivative (checked on a "
                     "random direction by a second code path, mod the main prime) and the "
                     "normalizer's rational Taylor data are right",
        "conditional": f"certificate conditional: {upper}; the lower bound is taken from the "
                       "divisibility of App. D.2 (proved in the paper, not recomputed here), "
                       "met on a separated divided frame (App. D.3)",
        "none": "certificate none: the orders are upper bounds only (mod p), not certified",
    }[certificate]


def leading_coefficients(arch: Architecture, bank: np.ndarray, U, W, V, columns: list[int],
                         exponents: list[int], blocks: list[np.ndarray]) -> dict[int, list[float]]:
    """Numerical leading coefficients of the bands (float64, not a certificate).

    With ``J = E(t) diag(t^beta)`` and well separated scales, the band of block
    ``i`` behaves like ``t^beta_i`` times the singular values of
    ``(I - P_{<i}) E_i(0)``, the divided frame of block ``i`` projected off the
    earlier blocks (App. F.2). Computed from float64 series coefficients.
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


def _auto_sizes(first: int):
    size = max(1, first)
    while size <= 4096:
        yield size
        size = size + max(1, size // 2)
    raise OutsideHypotheses("no separating bank found up to 4096 inputs")


def _bands(nested: Sequence[Sequence[int]], blocks: list) -> list[Band]:
    """The Smith orders of all visible columns (``nested[-1]``) as bands, each
    attributed to the first column block whose prefix already shows it.

    Adding columns can lower earlier Smith orders (they interlace), so prefix
    forms are not nested multisets. An order ``o`` of multiplicity ``m`` in the
    full form is attributed, ``m`` times in all, to the blocks where the running
    maximum of ``min(count of o in prefix b, m)`` grows. The multiplicities
    therefore always sum to the rank.

    >>> [(b.layer, b.order, b.multiplicity) for b in _bands([[0, 5], [0, 3, 9]], [("a", 0, []), ("b", 1, [])])]
    [(0, 0, 1), (1, 3, 1), (1, 9, 1)]
    """
    from collections import Counter

    final = Counter(nested[-1])
    seen: Counter = Counter()
    bands: list[Band] = []
    for orders, (label, layer, _) in zip(nested, blocks):
        cur = Counter(orders)
        for o in sorted(final):
            now = max(seen[o], min(cur[o], final[o]))
            if now > seen[o]:
                bands.append(Band(layer, o, now - seen[o], label))
            seen[o] = now
    return bands


#: Public names of the band attribution rule and the random row compression.
attribute_bands = _bands
compress_rows = _compress
