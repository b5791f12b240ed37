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

import itertools
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from symattn.core.algebras import DEFAULT_PRIME
from symattn.core.algebras import series_for
from symattn.core.algebras.modular import PrimeField, UnluckyPrime
from symattn.core.algebras.polyseries import WORD_PRIME_BOUND, PolySeries
from symattn.core.algebras.series import SeriesAlgebra
from symattn.core.certify import LowerBound, MajorantSeries, height_bound, primes_below, proved_vanishing, settle
from symattn.core.errors import OutsideHypotheses, SymattnError  # noqa: F401  OutsideHypotheses: importable from here
from symattn.core.limits import PROOF_SECONDS
from symattn.core.parallel import map_forked, usable_cores
from symattn.model.architecture import Architecture
from symattn.model.network import evaluate, jacobian, native_network
from symattn.model.parameters import native_path_values, path_point, random_bank  # noqa: F401  random_bank: doctests
from symattn.model.symmetries import head_permutation_check
from symattn.theorems import statements
from symattn.analyses.collapse import (  # noqa: F401  the path and its Jacobian, importable from here
    FAST_SERIES_FROM_ORDER, bank_jacobian, block_letters, checked_path, from_u_series, jacobian_algebra,
    leading_coefficients, path_parameters, path_point_of,
)
from symattn.analyses.contact import (  # noqa: F401  importable from here
    Band, Setup, attribute_bands, compress_rows, framed_bank, grown_bank, setup, verify_kernel,
)

__all__ = [  # the path, its Jacobian and the bands are importable from here too (collapse, contact)
    "Spectrum", "native_spectrum", "jacobian_height_bounds", "height_bounds_hold", "prove_column_orders",
    "CERTIFICATES", "MAX_PROOF_PRIMES", "bank_orders",
]


#: The certificate kinds of a spectrum, strongest first (see :func:`native_spectrum`).
CERTIFICATES = ("exact", "certified", "conditional", "none")


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
    G = jacobian(native_network(arch), A, vals, [b.name for b in arch.blocks], verify=0)
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
                        seconds: float | None = None) -> LowerBound:
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

    Returns a :class:`~symattn.core.certify.LowerBound` (``status, primes = ...`` unpacks it,
    and :func:`~symattn.core.certify.settle` checks it): ``"proved"``; ``"refuted"`` (a coefficient is
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
    wanted = tuple(sorted(set(orders) - {0}))
    if not wanted:
        return LowerBound("proved", 0)
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
            return LowerBound("too costly", count, wanted)
        if max(orders) >= WORD_PRIMES_FROM_ORDER:  # one prime of the top order, timed, before the bounds
            p, tick = primes_below(WORD_PRIME_BOUND, 1)[0], time.perf_counter()
            done[p, max(orders)] = first = residues(p, max(orders))
            if first == "nonzero":
                return LowerBound("refuted", count, wanted)
            left = count * (time.perf_counter() - tick) / usable_cores()
            if time.perf_counter() - start + left > budget:
                say(f"order t^{max(orders)}: about {count} primes (bound about 2^{bits}) would take about "
                    f"{left:.0f} s more, beyond the budget of {budget:g} s")
                return LowerBound("too costly", count, wanted)
    bounds = probe if top <= len(probe) else jacobian_height_bounds(arch, bank, U, W, V, top)
    use_known = known is not None
    plan: dict[int, tuple[int, list[int]]] = {}
    for b in sorted(set(orders) - {0}):
        bound = max(bounds[: b // 2 + 1])
        primes = _proof_primes(bound, b, use_known and known.shape[0] >= b)
        if len(primes) > cap:
            say(f"order t^{b}: the height bound 2^{bound.bit_length()} needs more than {max_primes} primes")
            return LowerBound("too costly", len(primes), wanted)
        plan[b] = (bound, primes)
    for b, (bound, primes) in plan.items():
        cols = [c for c, o in zip(columns, orders) if o == b]
        say(f"order t^{b}: {len(cols)} columns vanish below it over Q: bound 2^{bound.bit_length()} "
            f"needs {len(primes)} primes")
        if use_known and known.shape[0] >= b and primes[0] == DEFAULT_PRIME:
            if not PrimeField(DEFAULT_PRIME).is_zero(known[:b][:, :, [o == b for o in orders]]).all():
                return LowerBound("refuted", len(primes), wanted)
            primes = primes[1:]

        if not primes:
            continue
        tick = time.perf_counter()
        first = residues(primes[0], b)  # one prime's time, measured: the rest must fit the budget
        left = (len(primes) - 1) * (time.perf_counter() - tick) / min(usable_cores(), max(1, len(primes) - 1))
        if first == "zero" and len(primes) > 1 and time.perf_counter() - start + left > budget:
            say(f"order t^{b}: {len(primes)} primes would take about {left:.0f} s more, beyond "
                f"the budget of {budget:g} s")
            return LowerBound("too costly", len(primes), wanted)
        rest = map_forked(lambda p, b=b: residues(p, b), primes[1:]) if first == "zero" else []
        for result in itertools.chain([first], rest):
            if result == "unlucky":
                return LowerBound("too costly", len(primes), wanted)
            if result == "nonzero":
                return LowerBound("refuted", len(primes), wanted)
    return LowerBound("proved", max(len(primes) for _, primes in plan.values()), wanted,
                      tuple(plan[b][0] for b in wanted), tuple(tuple(plan[b][1]) for b in wanted))


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


def _certify(s: Setup, run: dict, rank: int) -> tuple[str, int, bool, list[str]]:
    """The certificate (:data:`CERTIFICATES`), the primes of its proof, whether the columns were
    reduced first, and notes; a ``certified`` one passes the post-condition
    :func:`~symattn.core.certify.settle` of its proof's record."""
    certificate, proof, reduced, notes = _attempt(s, run, rank)
    return settle(certificate, proof), (proof.primes if proof is not None else 0), reduced, notes


def _attempt(s: Setup, run: dict, rank: int) -> tuple[str, LowerBound | None, bool, list[str]]:
    J, algebra, nested = run["J"], run["algebra"], run["nested"]
    certificate, proof, reduced, notes = "none", None, False, []
    if s.method == "exact":
        return ("exact" if rank == s.visible else "none"), None, False, notes
    if rank == s.visible:
        # lower bound from the model: the column valuations, proved over Q
        column_orders = [int(v) for v in algebra.valuation(J).min(axis=0)]
        if sorted(column_orders) == sorted(nested[-1]):
            s.say("proving the column orders over Q (primes with a-priori height bounds)")
            proof = prove_column_orders(s.arch, run["X"], s.U, s.W, s.V, s.columns, column_orders, s.say,
                                        max_primes=MAX_PROOF_PRIMES, known=J)
            certificate = "certified" if proof.status == "proved" else "none"
            if proof.status == "too costly":
                notes.append(f"the model-based lower bound was not attempted: it needs {proof.primes} primes, "
                             f"beyond the time budget of {PROOF_SECONDS:g} s"
                             + ("" if MAX_PROOF_PRIMES is None else f" or the cap of {MAX_PROOF_PRIMES} primes"))
        else:
            certificate, proof = _certify_reduced(s, run)
            reduced = certificate == "certified"
    if certificate == "none" and s.exponents is not None and run["separating"] and run["divisible"]:
        frame_bands = [(layer, beta, m) for (_, layer, _), beta, m in zip(s.blocks, s.exponents, run["frame"]) if m]
        if [(b.layer, b.order, b.multiplicity) for b in attribute_bands(nested, s.blocks)] == frame_bands:
            certificate = "conditional"  # D.3: the divisibility of App. D.2 is the lower bound
    return certificate, proof, reduced, notes


def _certify_reduced(s: Setup, run: dict) -> tuple[str, LowerBound | None]:
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
        return "none", None
    s.say("proving the reduced column orders over Q (primes with a-priori height bounds)")
    proof = prove_reduced_orders(s.arch, run["X"], s.U, s.W, s.V, s.columns, *reduced, say=s.say)
    return ("certified" if proof.status == "proved" else "none"), proof


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
    s = setup(arch, seed, values, method, path, say)
    run = (framed_bank if s.exponents is not None else grown_bank)(s, bank, order)
    X, N, nested = run["X"], run["N"], run["nested"]
    verified_how = verify_kernel(s, X, run["algebra"])
    rank = len(nested[-1])
    bands = attribute_bands(nested, s.blocks)
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


def _notes(s: Setup, run: dict, rank: int, certificate: str, primes: int, reduced: bool, path, values: str,
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


def bank_orders(arch: Architecture, bank: np.ndarray, order: int, seed: int = 0,
                values: str = "identity") -> list[int]:
    """Modular Smith orders (upper bounds on the orders over Q[[t]]) of the visible columns
    of the path Jacobian on ``bank`` mod ``t^order`` (path of ``seed``, as in
    :func:`native_spectrum`).

    >>> v = Architecture.uniform(2, 2, 1, 3, "exp", skip="value")
    >>> bank_orders(v, random_bank(v, 6), 8)
    [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3]
    """
    s = setup(arch, seed, values, "modular", None, lambda msg: None)
    A = series_for("modular", order)
    return s.smith(s.jacobian(bank, A, verify=0), A, prefixes=False)[1][-1]
