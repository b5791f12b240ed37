"""Native contact spectra: Theorem 4, Proposition D.1, Appendix D.

Along the native path ``Q_i = t U_i``, ``K_i = t W_i``, ``V_i = V_i^*`` (identity
or fixed generic invertible values) the Jacobian ``J(t)`` of the bank
observation (eq. 43-44) in *all* native entries is computed from the graph as
a matrix of truncated power series in ``t`` (exact over Q, or over F_p), and
its Smith factors over ``k[[t]]`` are computed by pivoting on an entry of
least valuation (:meth:`symattn.core.linalg.SeriesMatrix.smith_orders`). Nothing of the theorem enters that
computation; the theorem's formulas are only used, separately, for

* the *divided frame* ``E(0)`` of App. D.3 (columns of layer ``i`` divided by
  ``t^beta_i`` from the proven divisibility of App. D.2): the bank separates
  exactly when ``E(0)`` has rank ``P - zeta``;
* the ``conditional`` certificate of a modular result: modular Smith orders
  are upper bounds on the true ones (see :mod:`symattn.core.certify`) and the
  divisibility bounds of App. D.2 are the paper's lower bounds.

The ``certified`` certificate uses no formula of the paper: the lower bound is
proved from the model (:func:`prove_column_orders`), see :func:`native_spectrum`.
Every series Jacobian comes from :func:`symattn.model.network.jacobian` and is checked
there against an expansion that does not use the tangent rules.

The kernel is verified exactly (:class:`symattn.model.symmetries.GaugeKernel`): the factor
gauges (eq. 50) and interface directions (App. F.2) are pushed through the
reduction graph ``pi`` with exact tangents and vanish identically (polynomials
in ``t``), so ``J xi = 0`` since ``F = F_eff o pi``; their exact rank ``zeta``
bounds ``rank J <= P - zeta`` while the modular pivots give ``rank J >= #pivots``.
The divisibility exponents are the paper's (:func:`symattn.theorems.formulas.divisibility_orders`).
"""

from __future__ import annotations

import itertools
import random
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

import numpy as np

from symattn.core.algebras import DEFAULT_PRIME
from symattn.core.algebras import float_series, series_for
from symattn.core.algebras.modular import PrimeField, UnluckyPrime
from symattn.core.algebras.polyseries import WORD_PRIME_BOUND, PolySeries
from symattn.core.algebras.series import SeriesAlgebra
from symattn.core.certify import MajorantSeries, height_bound, primes_below, proved_vanishing
from symattn.core.errors import CheckFailed, SymattnError
from symattn.core.limits import PROOF_SECONDS
from symattn.core.parallel import map_forked, usable_cores
from symattn.theorems.formulas import divisibility_orders
from symattn.model.symmetries import GaugeKernel
from symattn.model.network import evaluate, jacobian, native_network, series_derivative_check
from symattn.core.linalg import Matrix, SeriesMatrix, identity_matrix, matmul_mod
from symattn.model.architecture import (
    Architecture,
    NativeParams,
    native_path_values,
    random_bank,
    random_rational_matrix,
)

__all__ = [
    "Band", "Spectrum", "path_parameters", "bank_jacobian", "native_spectrum", "leading_coefficients",
    "jacobian_height_bounds", "height_bounds_hold", "prove_column_orders", "CERTIFICATES", "MAX_PROOF_PRIMES",
    "attribute_bands", "compress_rows", "block_letters", "from_u_series", "OutsideHypotheses",
]

#: The certificate kinds of a spectrum, strongest first (see :func:`native_spectrum`).
CERTIFICATES = ("exact", "certified", "conditional", "none")


class OutsideHypotheses(SymattnError):
    """The data are valid but outside Theorem 4's setting at this path or bank
    (the gauges do not split off, a column is not divisible by its proven power of
    t, no separating bank). Narrow on purpose: a caller that can go on without a
    spectrum (the audit) catches this type only."""


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
    #: ``"exact"``, ``"certified"``, ``"conditional"`` or ``"none"`` (see :func:`native_spectrum`)
    certificate: str = "none"

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
                ("bank", f"{self.bank_size} inputs, separating: {self.bank_separating}"),
                ("method", f"{self.method}, {'certified' if self.certified else 'not certified'}, "
                           f"truncation $t^{{{self.order}}}$, {self.undecided} undecided, {self.seconds:.2f} s")]
        return summary_html("Native contact spectrum (Theorem 4)", rows + [("note", n) for n in self.notes])


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
            u, w = random_rational_matrix(rng, (d, r)), random_rational_matrix(rng, (d, r))
            b = u.dot(w.T)
            if Matrix.rational(u).rank() == r == Matrix.rational(w).rank() and (b + b.T != 0).any():
                break
        U.append(u)
        W.append(w)
        if values == "identity":
            V.append(identity_matrix(d))
        else:
            while True:
                v = random_rational_matrix(rng, (d, d))
                if Matrix.rational(v).rank() == d:
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
        if Matrix.rational(u).rank() < r or Matrix.rational(w).rank() < r:
            raise OutsideHypotheses(f"layer {i}: U_{i} and W_{i} must have full column rank {r}")
    return U, W, V


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
    fast = isinstance(U_alg, PolySeries)
    G = U_alg.coefficients(jacobian(native_network(arch), U_alg, vals, wrt, directions=U_alg.const(select),
                                    verify=0 if fast else verify))
    if fast and verify:  # the fast series' Jacobian against the NumPy series' expansion F(theta + delta v)
        ref = SeriesAlgebra(PrimeField(U_alg.p), U_alg.order)
        refs = native_path_values(arch, ref, U, W, V, squared=True)
        refs["X"] = ref.const(bank)
        series_derivative_check(native_network(arch), ref, refs, wrt, G, ["F"], ref.const(select), samples=verify)
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
    each native column of ``arch`` (an :class:`~symattn.model.architecture.Architecture` or a variant).

    >>> block_letters(Architecture.uniform(1, 2, 1, 2, "exp"), range(6)).tolist()
    ['Q', 'Q', 'K', 'K', 'V', 'V']
    """
    letters = np.empty(arch.native_size, dtype="<U1")
    off = arch.offsets()
    for name, shape in arch.native_shapes():
        letters[off[name]: off[name] + int(np.prod(shape))] = name[0]
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
    vals = {}
    for i in range(arch.depth):
        zero, one = np.zeros(U[i].shape, dtype=int), np.ones(U[i].shape, dtype=int)
        vals[f"Q{i + 1}"] = M.series([zero, U[i]], [one])
        vals[f"K{i + 1}"] = M.series([W[i]], [one])
        vals[f"V{i + 1}"] = M.series([V[i]], [np.ones(V[i].shape, dtype=int)])
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


#: No fixed cap on the column proof's primes any more: how many it may use follows from
#: its time budget :data:`~symattn.core.limits.PROOF_SECONDS` (kept for callers that pass it on).
MAX_PROOF_PRIMES: int | None = None


def prove_column_orders(arch: Architecture, bank: np.ndarray, U, W, V, columns: Sequence[int],
                        orders: Sequence[int], say: Callable[[str], None] | None = None,
                        max_primes: int | None = None, known: np.ndarray | None = None,
                        seconds: float | None = None) -> tuple[str, int]:
    """Prove over Q that column ``columns[c]`` of ``J(t)`` (:func:`bank_jacobian`) vanishes
    below ``t^orders[c]``, from the model itself (no appeal to App. D.2).

    Each coefficient to be shown zero is a rational ``c`` with ``|D c| <= B``
    (:func:`jacobian_height_bounds`); it is computed modulo primes (the default prime
    :data:`~symattn.core.algebras.DEFAULT_PRIME` first, read from ``known``, then word-size
    primes below ``2^62`` in :class:`~symattn.core.algebras.polyseries.PolySeries`, fast
    series products) until their product exceeds ``2 B``
    (:func:`~symattn.core.certify.proved_vanishing`). A modular computation that
    completes is the reduction of the rational one (every denominator met is
    inverted mod p, or the computation stops), so vanishing mod all of them
    forces ``D c = 0``. Columns are grouped by order: a column of order ``b``
    needs ``J mod t^b`` only, which comes from the coefficients of ``u^0`` to
    ``u^(b // 2)`` of the Jacobian in ``u = t^2`` (:func:`from_u_series`), so the
    bound is the largest of ``B_0, ..., B_(b // 2)``.

    Returns ``(status, primes)``: ``"proved"``; ``"refuted"`` (a coefficient is
    nonzero mod some prime, so nonzero over Q); or ``"too costly"`` when the
    proof would not end within ``seconds`` (default
    :data:`~symattn.core.limits.PROOF_SECONDS`; the number of primes it may use
    follows from the time of the first word-size prime, measured, and the bound) or
    needs more than ``max_primes`` primes (no cap by default). The bounds grow
    with the order: about 2^334 at ``t^17`` for the paper's F.2 size, about 39 bits
    per power of ``u`` for softmax ``D = 6``, ``d = 2``, ``r = 1``, ``n = 2``;
    ``primes`` is the most primes one order needed. One prime's evaluation is
    the memory of one series Jacobian of the columns; the primes run one after another.

    ``known``, if given, is ``J(t)`` mod :data:`~symattn.core.algebras.DEFAULT_PRIME` in all ``columns``
    (:func:`bank_jacobian`, truncated at least at the largest order), already
    computed: that prime is read from it instead of evaluated again.
    """
    say = say or (lambda msg: None)
    budget = PROOF_SECONDS if seconds is None else float(seconds)
    cap = max_primes if max_primes is not None else float("inf")
    start = time.perf_counter()
    columns, orders = list(columns), [int(b) for b in orders]
    if not any(orders):
        return "proved", 0
    # J mod t^b comes from the u-coefficients u^0..u^(b // 2) of G (from_u_series): only
    # their bounds B_0..B_(b // 2) matter
    top = max(orders) // 2 + 1
    # cost decision only (not part of the proof): bounds grow geometrically with the
    # power of u; extrapolate the growth seen at low order before computing them all
    done: dict[tuple[int, int], str] = {}

    def residues(p: int, b: int) -> str:
        """Whether the columns of order b vanish mod p below t^b: "zero", "nonzero" or "unlucky"."""
        if (p, b) in done:
            return done[p, b]
        algebra = PolySeries(p, b) if p >= 2**23 else SeriesAlgebra(PrimeField(p), b)
        try:
            J = bank_jacobian(arch, bank, U, W, V, algebra, [c for c, o in zip(columns, orders) if o == b], verify=0)
        except UnluckyPrime:  # a denominator divisible by p: this prime proves nothing
            return "unlucky"
        return "zero" if algebra.field.is_zero(J).all() else "nonzero"

    probe = jacobian_height_bounds(arch, bank, U, W, V, top if top <= 12 else 8)
    if top > len(probe):
        bits = probe[-1].bit_length() + (top - len(probe)) * (probe[-1].bit_length() - probe[-2].bit_length())
        count = -(-bits // 61)
        if count > cap:
            say(f"the height bound at t^{max(orders)} is about 2^{bits}: more than {max_primes} primes")
            return "too costly", count
        if max(orders) >= WORD_PRIMES_FROM_ORDER:  # one prime of the top order, timed, before the bounds
            p, tick = primes_below(WORD_PRIME_BOUND, 1)[0], time.perf_counter()
            done[p, max(orders)] = first = residues(p, max(orders))
            if first == "nonzero":
                return "refuted", count
            left = count * (time.perf_counter() - tick) / usable_cores()
            if time.perf_counter() - start + left > budget:
                say(f"order t^{max(orders)}: about {count} primes (bound about 2^{bits}) would take about "
                    f"{left:.0f} s more, beyond the budget of {budget:g} s")
                return "too costly", count
    bounds = probe if top <= len(probe) else jacobian_height_bounds(arch, bank, U, W, V, top)
    use_known = known is not None
    plan: dict[int, tuple[int, list[int]]] = {}
    for b in sorted(set(orders) - {0}):
        bound = max(bounds[: b // 2 + 1])
        primes = _proof_primes(bound, b, use_known and known.shape[0] >= b)
        if len(primes) > cap:
            say(f"order t^{b}: the height bound 2^{bound.bit_length()} needs more than {max_primes} primes")
            return "too costly", len(primes)
        plan[b] = (bound, primes)
    for b, (bound, primes) in plan.items():
        cols = [c for c, o in zip(columns, orders) if o == b]
        say(f"order t^{b}: {len(cols)} columns vanish below it over Q: bound 2^{bound.bit_length()} "
            f"needs {len(primes)} primes")
        if use_known and known.shape[0] >= b and primes[0] == DEFAULT_PRIME:
            if not PrimeField(DEFAULT_PRIME).is_zero(known[:b][:, :, [o == b for o in orders]]).all():
                return "refuted", len(primes)
            primes = primes[1:]

        if not primes:
            continue
        tick = time.perf_counter()
        first = residues(primes[0], b)  # one prime's time, measured: the rest must fit the budget
        left = (len(primes) - 1) * (time.perf_counter() - tick) / min(usable_cores(), max(1, len(primes) - 1))
        if first == "zero" and len(primes) > 1 and time.perf_counter() - start + left > budget:
            say(f"order t^{b}: {len(primes)} primes would take about {left:.0f} s more, beyond "
                f"the budget of {budget:g} s")
            return "too costly", len(primes)
        rest = map_forked(lambda p, b=b: residues(p, b), primes[1:]) if first == "zero" else []
        for result in itertools.chain([first], rest):
            if result == "unlucky":
                return "too costly", len(primes)
            if result == "nonzero":
                return "refuted", len(primes)
    return "proved", max(len(primes) for _, primes in plan.values())


#: The column proof evaluates an order ``b`` at least this long with word-size primes in
#: :class:`~symattn.core.algebras.polyseries.PolySeries` (fast products, 62 bits a prime); shorter
#: ones with 23-bit primes in the NumPy series (vectorised over wide tensors).
WORD_PRIMES_FROM_ORDER = 48


def _proof_primes(bound: int, b: int, default_known: bool) -> list[int]:
    """Primes whose product exceeds ``2 bound`` for an order ``b`` (see
    :data:`WORD_PRIMES_FROM_ORDER`): the default prime first when its residues are known."""
    word = b >= WORD_PRIMES_FROM_ORDER
    first = [DEFAULT_PRIME] if default_known or not word else []
    count, primes = 0, first
    while not proved_vanishing(bound, primes):
        count += 1
        primes = first + primes_below(WORD_PRIME_BOUND, count) if word else primes_below(2**23, count)
    return primes


#: Modular spectra this long compute their Jacobian in :class:`~symattn.core.algebras.polyseries.PolySeries`
#: (fast products; the same residues as the NumPy series, checked by its expansion).
FAST_SERIES_FROM_ORDER = 100


def _jacobian_algebra(algebra):
    """The algebra the spectrum's Jacobian is computed in: ``algebra``, or the same prime in
    :class:`~symattn.core.algebras.polyseries.PolySeries` from :data:`FAST_SERIES_FROM_ORDER` on."""
    if isinstance(algebra.field, PrimeField) and algebra.order >= FAST_SERIES_FROM_ORDER:
        return PolySeries(algebra.field.p, algebra.order)
    return algebra


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
    method : ``"modular"`` (F_p Smith form, certified as in the Notes) or
        ``"exact"`` (Smith form over Q[[t]] itself; small cases)
    order : truncation in ``t``; default: one more than the largest divisibility
        exponent, doubled while orders stay undecided
    path : explicit ``(U, W, V)`` lists of rational matrices instead of seeded ones
        (e.g. skew prefix products for Cor. D.2-D.3); the path is then ``Q_i = t U_i``,
        ``K_i = t W_i``, ``V_i``
    leading : also compute each band's leading coefficients ``c`` in
        ``sigma ~ c t^order`` (numerical, float64; see :func:`leading_coefficients`)

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
      orders both bounds meet, and the orders are those over Q[[t]]. Assumes:
      the forward-mode Jacobian code computes the derivative (checked on a
      random direction by a second code path, mod p, for the main prime; the
      other primes reuse the same code) and the normalizer's rational Taylor
      data are right. App. D.2 is not used;
    * ``conditional``: the modular orders equal the divisibility exponents of
      App. D.2 on a separated divided frame (App. D.3): the lower bound is the
      paper's, taken as proved;
    * ``none``: upper bounds only.

    Examples
    --------
    >>> arch = Architecture.uniform(2, 2, 1, 2, "exp")
    >>> s = native_spectrum(arch, bank="auto")
    >>> [(b.layer, b.order, b.multiplicity) for b in s.bands], s.kernel
    ([(0, 0, 4), (1, 1, 3), (2, 5, 3)], 6)
    >>> s.bank_separating, s.certified, s.certificate
    (True, True, 'certified')
    """
    say = progress or (lambda msg: None)
    start = time.perf_counter()
    if method not in ("modular", "exact"):
        raise SymattnError(f"method must be 'modular' or 'exact', got {method!r}")
    U, W, V = path_parameters(arch, seed, values) if path is None else _checked_path(arch, path)
    betas = divisibility_orders(arch)
    kernel = GaugeKernel(arch, NativeParams(tuple(U), tuple(W), tuple(V)))  # the path at t = 1
    zeta, verified = kernel.path_split()
    if not verified:
        raise OutsideHypotheses("the gauge directions do not split off exactly at this path "
                           "(values must be invertible); this is outside Theorem 4's setting")
    blocks = kernel.visible_blocks()
    columns = [c for _, _, cols in blocks for c in cols]
    local = np.cumsum([0] + [len(cols) for _, _, cols in blocks])
    block_idx = [np.arange(local[b], local[b + 1]) for b in range(len(blocks))]
    exponents = [betas[layer - 1] if layer else 0 for _, layer, _ in blocks]
    P, visible = arch.native_size, len(columns)
    per_input = arch.d * arch.tokens
    if isinstance(bank, str):
        if bank != "auto":
            raise SymattnError(f"bank must be a positive integer or 'auto', got {bank!r}")
        sizes = _auto_sizes(-(-visible // per_input))
    elif isinstance(bank, (int, np.integer)):
        sizes = iter([int(bank)])
    else:
        sizes = iter([None])

    N = order or (max(betas) + 2)
    algebra = series_for(method, N)
    # seeded banks nest (random_bank(m) is a prefix of random_bank(m')): keep computed rows,
    # as blocks joined once (the frame reads only the new rows, see _divided_frame)
    parts: list[np.ndarray] = []
    kept: dict = {}
    for size in sizes:
        X = np.asarray(bank, dtype=object) if size is None else random_bank(arch, size, seed)
        if X.ndim != 3 or X.shape[1:] != (arch.d, arch.tokens):
            raise SymattnError(f"bank must have shape (size, {arch.d}, {arch.tokens}), got {X.shape}")
        done = sum(part.shape[1] for part in parts) // per_input
        say(f"bank {len(X)}: Jacobian {len(X) * per_input} x {visible} (of {P}) as series to order {N} "
            f"({algebra.field.name})" + (f"; the rows of the first {done} inputs kept" if done else ""))
        parts.append(bank_jacobian(arch, X[done:], U, W, V, _jacobian_algebra(algebra), columns))
        frame, divisible = _divided_frame(parts[-1], algebra, exponents, block_idx, kept)
        separating = sum(frame) == visible
        if separating or bank != "auto":
            break
        say(f"bank {len(X)} does not separate (rank E(0) = {sum(frame)} < {visible}); growing")
    J = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
    del parts
    if not divisible:
        raise OutsideHypotheses("a Jacobian column is not divisible by its proven power of t; "
                           "the normalizer or path is outside Theorem 4's hypotheses")
    while True:
        Jc = J if method == "exact" else _compress(J, algebra, min(J.shape[1], visible + 8), seed)
        nested = []
        for b in range(len(blocks)):
            cols = np.concatenate(block_idx[: b + 1])
            say(f"Smith form of {len(cols)} columns (through {blocks[b][0]})")
            nested.append(SeriesMatrix(algebra, Jc[:, :, cols]).smith_orders()[0])
        rank = len(nested[-1])
        if rank == visible or order is not None or N > 4 * max(betas) + 8:
            break
        N *= 2
        say(f"{visible - rank} orders undecided; raising the truncation to {N}")
        algebra = series_for(method, N)
        J = bank_jacobian(arch, X, U, W, V, _jacobian_algebra(algebra), columns)
    bands = _bands(nested, blocks)
    # D.3: a separated frame and the divisibility give the factors t^beta with
    # multiplicity rank E(0) per block; the pivot computation must agree with it.
    frame_bands = [(layer, beta, m) for (_, layer, _), beta, m in zip(blocks, exponents, frame) if m]
    agree = [(b.layer, b.order, b.multiplicity) for b in bands] == frame_bands
    certificate, primes, notes = "none", 0, []
    if method == "exact":
        certificate = "exact" if rank == visible else "none"
    elif rank == visible:
        # lower bound from the model: the column valuations, proved over Q
        column_orders = [int(v) for v in algebra.valuation(J).min(axis=0)]
        if sorted(column_orders) == sorted(nested[-1]):
            say("proving the column orders over Q (primes with a-priori height bounds)")
            status, primes = prove_column_orders(arch, X, U, W, V, columns, column_orders, say, known=J)
            certificate = "certified" if status == "proved" else "none"
            if status == "too costly":
                notes.append(f"the model-based lower bound was not attempted: it needs {primes} primes, "
                             f"beyond the time budget of {PROOF_SECONDS:g} s")
        if certificate == "none" and separating and divisible and agree:
            certificate = "conditional"
    certified = certificate != "none"
    if leading and certified:
        say("leading coefficients of the bands (float64 series)")
        coeffs = leading_coefficients(arch, X, U, W, V, columns, exponents, block_idx)
        for b in bands:
            b.leading = coeffs[b.layer][: b.multiplicity]
    if rank < visible:
        notes.append(f"{visible - rank} orders are >= {N}: undecided")
    if not separating:
        notes.append(f"the bank does not separate: rank E(0) = {sum(frame)} < {visible}; "
                     "orders may exceed the generic ones (use --bank auto)")
    notes.append(_certificate_note(certificate, primes))
    return Spectrum(
        units=sum(b.multiplicity for b in bands if b.order == 0), bands=bands, kernel=zeta,
        rank=rank, parameters=P, bank_size=len(X), bank_separating=bool(separating), method=method,
        seconds=round(time.perf_counter() - start, 3), order=N, certified=certified,
        undecided=visible - rank, notes=notes, certificate=certificate)


def _certificate_note(certificate: str, primes: int) -> str:
    """The certificate in words (what is computed, what is quoted)."""
    upper = (f"Smith orders over GF({DEFAULT_PRIME}) after a random row compression are upper bounds "
             "on the orders over Q[[t]]")
    return {
        "exact": "certificate exact: Smith form computed over Q[[t]] itself",
        "certified": f"certificate certified: {upper}; the lower bound is proved from the model: every "
                     f"column vanishes over Q below its order (checked modulo up to {primes} primes, of "
                     f"23 bits or, for orders from {WORD_PRIMES_FROM_ORDER} on, 62 bits, whose product exceeds twice an "
                     "a-priori bound on |numerator| from majorant arithmetic on the same graph: "
                     "fixed-point heights rounded up, denominators as prime exponents), so every "
                     "k x k minor has at least "
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


#: Public names of the band attribution rule and the random row compression
#: (used by :mod:`symattn.analyses.variant_spectrum`).
attribute_bands = _bands
compress_rows = _compress
