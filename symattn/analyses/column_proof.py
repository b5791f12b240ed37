"""The column proof of a native contact spectrum: each Jacobian column vanishes over Q below its order.

The lower bound of a ``certified`` spectrum (:func:`symattn.analyses.spectrum.native_spectrum`)
is proved from the model, not from App. D.2: a-priori bounds on the coefficients of the
``u``-Jacobian of :func:`~symattn.analyses.collapse.bank_jacobian` by majorant arithmetic on the
same graph (:func:`jacobian_height_bounds`, checked against the exact Jacobian in small cases
by :func:`height_bounds_hold`), then the coefficients modulo enough primes that their product
exceeds twice the bound (:func:`prove_column_orders`): the default 23-bit prime, then 28-bit primes
(:class:`~symattn.core.certify.WidePrimeField`), in the NumPy series; from
:data:`EXACT_FROM_ORDER` on, the columns over Q itself
(:class:`~symattn.core.algebras.polyseries.RationalPolySeries`), under the time budget
:data:`~symattn.core.limits.PROOF_SECONDS`. Importable from :mod:`symattn.analyses.spectrum` too.
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np

from symattn.core.algebras import DEFAULT_PRIME, SECOND_PRIME
from symattn.core.algebras.modular import PrimeField, UnluckyPrime
from symattn.core.algebras.series import SeriesAlgebra
from symattn.core.certify import (LowerBound, MajorantSeries, WIDE_PRIME_BITS, WidePrimeField, height_bound,
                                  primes_below, proved_vanishing)
from symattn.core.errors import CheckFailed
from symattn.core.limits import PROOF_SECONDS
from symattn.core.parallel import map_forked, usable_cores
from symattn.model.architecture import Architecture
from symattn.model.network import evaluate, jacobian, native_network
from symattn.model.parameters import native_path_values, path_point, random_bank  # noqa: F401  random_bank: doctests
from symattn.analyses.collapse import bank_jacobian, block_letters, path_parameters  # noqa: F401  path_parameters: doctests

__all__ = ["jacobian_height_bounds", "path_majorant", "height_bounds_hold", "prove_column_orders", "EXACT_FROM_ORDER",
           "MAX_PROOF_PRIMES", "LEMMA_FROM_ORDER", "attention_lemma_applies", "token_difference_valuations",
           "lemma_orders", "collapse_valuations"]


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
    """The majorant of ``F`` at ``theta + delta 1`` on the u-path ``Q = u U``, ``K = W``."""
    return path_majorant(arch, bank, U, W, V, order, lambda block, value: (
        [np.zeros(np.shape(value), dtype=int), value] if block.role == "Q" else [value]))


def path_majorant(arch: Architecture, bank: np.ndarray, U, W, V, order: int, coefficients):
    """The majorant (heights and denominators, :class:`~symattn.core.certify.MajorantSeries`) of
    ``F`` on ``bank`` at ``theta + delta 1`` (every native entry moved) along a path through
    ``(U, W, V)``: ``coefficients(block, value)`` gives a block's series coefficients in the path's
    parameter (``value`` its entries at parameter 1)."""
    M = MajorantSeries(order)
    point = path_point(arch, U, W, V)
    vals = {block.name: M.series(coefficients(block, point[block.name]),
                                 [np.ones(np.shape(point[block.name]), dtype=int)]) for block in arch.blocks}
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
                        seconds: float | None = None, lemma: bool = True, recursion: bool = True) -> LowerBound:
    """Prove over Q that column ``columns[c]`` of ``J(t)`` (:func:`bank_jacobian`) vanishes
    below ``t^orders[c]``, from the model itself (no appeal to App. D.2).

    Columns are grouped by order. A group of order ``b`` at least :data:`EXACT_FROM_ORDER` is
    computed over Q itself mod ``t^b`` (:class:`~symattn.core.algebras.polyseries.RationalPolySeries`,
    one bank input per forked task): a coefficient read as zero *is* zero, no bound and no prime.
    A shorter group is proved modulo primes: each coefficient to be shown zero is a
    rational ``c`` with ``|D c| <= B`` (:func:`jacobian_height_bounds`); it is computed modulo
    primes (the default prime :data:`~symattn.core.algebras.DEFAULT_PRIME` first, read from
    ``known``, then 28-bit primes, :func:`_proof_primes`) until their product exceeds ``2 B``
    (:func:`~symattn.core.certify.proved_vanishing`). A modular computation that
    completes is the reduction of the rational one (every denominator met is
    inverted mod p, or the computation stops), so vanishing mod all of them
    forces ``D c = 0``. A column of order ``b`` needs ``J mod t^b`` only, which comes from the
    coefficients of ``u^0`` to ``u^(b // 2)`` of the Jacobian in ``u = t^2``
    (:func:`from_u_series`), so the bound is the largest of ``B_0, ..., B_(b // 2)``.

    With ``lemma`` (default) and the softmax stack of the paper (:func:`attention_lemma_applies`), an
    order from :data:`LEMMA_FROM_ORDER` on whose columns are all query or key columns is proved by
    the attention lemma instead (:func:`lemma_orders`): the token differences of each layer's input are
    computed over Q (:func:`token_difference_valuations`, forward values only, to half the
    column's length in ``u``), and a query/key column of layer ``i`` vanishes below ``t^(4 e + 1)``
    when those of ``X_(i-1)`` vanish below ``u^e``; an order the lemma does not reach goes on by the
    routes above. Such orders are listed in the record's ``structural``. With ``recursion`` (default)
    the powers ``e`` come from the collapse recursion ``e_i >= 3 e_(i-1) + 1``
    (:func:`collapse_valuations`: no series over Q at all), checked modulo a prime on the bank (a
    failed check raises :class:`~symattn.core.errors.CheckFailed`); without it, or for an order past
    the recursion's reach, they are computed over Q. The record's ``collapse`` says which.

    Returns a :class:`~symattn.core.certify.LowerBound` (``status, primes = ...`` unpacks it,
    and :func:`~symattn.core.certify.settle` checks it; its ``exact`` lists the orders proved
    over Q): ``"proved"``; ``"refuted"`` (a coefficient is nonzero mod some prime or over Q, so
    nonzero over Q); or ``"too costly"`` when the proof would not end within ``seconds`` (default
    :data:`~symattn.core.limits.PROOF_SECONDS`; over Q: the pace of the inputs done, projected
    on all of them; mod primes: the time of the first prime times the rest) or needs more than
    ``max_primes`` primes (no cap by default); ``primes`` is the most primes one order needed.

    ``known``, if given, is ``J(t)`` mod :data:`~symattn.core.algebras.DEFAULT_PRIME` in all ``columns``
    (:func:`bank_jacobian`, truncated at least at the largest order), already
    computed: that prime is read from it instead of evaluated again, and refutes a long order
    before its exact computation.
    """
    say = say or (lambda msg: None)
    budget = PROOF_SECONDS if seconds is None else float(seconds)
    cap = max_primes if max_primes is not None else float("inf")
    start = time.perf_counter()
    columns, orders = list(columns), [int(b) for b in orders]
    wanted = tuple(sorted(set(orders) - {0}))
    if not wanted:
        return LowerBound("proved", 0)
    over_q = tuple(b for b in wanted if b >= EXACT_FROM_ORDER)
    # the default prime's residues, where known, first: a coefficient nonzero mod p is nonzero over Q
    read = {b for b in wanted if known is not None and known.shape[0] >= b}
    for b in sorted(read):
        if not PrimeField(DEFAULT_PRIME).is_zero(known[:b][:, :, [o == b for o in orders]]).all():
            return LowerBound("refuted", 0, wanted)
    structural: tuple[int, ...] = ()
    collapse = ""
    long = [b for b in wanted if b >= LEMMA_FROM_ORDER]
    if lemma and long and attention_lemma_applies(arch):  # asked only where needed (h'' = 0 is a sympy proof)
        status, structural, collapse = _prove_by_lemma(arch, bank, U, W, V, columns, orders, long, say,
                                                       budget - (time.perf_counter() - start), recursion)
        if status != "proved":
            return LowerBound(status, 0, wanted)
        over_q = tuple(b for b in over_q if b not in structural)
    for b in over_q:
        status = _vanish_over_q(arch, bank, U, W, V, [c for c, o in zip(columns, orders) if o == b], b,
                                say, budget - (time.perf_counter() - start))
        if status != "proved":
            return LowerBound(status, 0, wanted)
    short = [o for o in orders if o < EXACT_FROM_ORDER and o not in structural]
    if not set(short) - {0}:
        return LowerBound("proved", 0, wanted, exact=over_q, structural=structural, collapse=collapse)
    columns = [c for c, o in zip(columns, orders) if o < EXACT_FROM_ORDER and o not in structural]
    orders = short

    def residues(task: tuple[int, int]) -> str:
        """Whether the columns of order b vanish mod p below t^b (task ``(p, b)``): "zero", "nonzero" or
        "unlucky"."""
        p, b = task
        algebra = SeriesAlgebra(_field(p), b)
        try:
            J = bank_jacobian(arch, bank, U, W, V, algebra, [c for c, o in zip(columns, orders) if o == b], verify=0)
        except UnluckyPrime:  # a denominator divisible by p: this prime proves nothing
            return "unlucky"
        return "zero" if algebra.field.is_zero(J).all() else "nonzero"

    bounds = jacobian_height_bounds(arch, bank, U, W, V, max(orders) // 2 + 1)
    plan: dict[int, tuple[int, list[int]]] = {}
    for b in sorted(set(orders) - {0}):
        bound = max(bounds[: b // 2 + 1])
        primes = _proof_primes(bound, _contracts_few_terms(arch))
        if len(primes) > cap:
            say(f"order t^{b}: the height bound 2^{bound.bit_length()} needs more than {max_primes} primes")
            return LowerBound("too costly", len(primes), wanted)
        plan[b] = (bound, primes)
    most = max(len(primes) for _, primes in plan.values())
    tasks = []  # every (prime, order) still to compute, the longest orders first
    for b, (bound, primes) in sorted(plan.items(), reverse=True):
        say(f"order t^{b}: {sum(o == b for o in orders)} columns vanish below it over Q: bound "
            f"2^{bound.bit_length()} needs {len(primes)} primes")
        tasks += [(p, b) for p in (primes[1:] if b in read else primes)]  # the default prime: read above
    tick = time.perf_counter()
    for n, result in enumerate(map_forked(residues, tasks), 1):  # one map for every order
        if result == "unlucky":
            return LowerBound("too costly", most, wanted)
        if result == "nonzero":
            return LowerBound("refuted", most, wanted)
        if n == 1 and len(tasks) > 1:  # the costliest task's time, measured: the rest must fit the budget
            left = (len(tasks) - 1) * (time.perf_counter() - tick) / min(usable_cores(), len(tasks) - 1)
            if time.perf_counter() - start + left > budget:
                say(f"{len(tasks)} computations modulo primes would take about {left:.0f} s more, beyond "
                    f"the budget of {budget:g} s")
                return LowerBound("too costly", most, wanted)
    return LowerBound("proved", most, wanted, tuple(plan[b][0] for b in plan), tuple(tuple(plan[b][1]) for b in plan),
                      exact=over_q, structural=structural, collapse=collapse)


#: The column proof computes the columns of an order ``b`` at least this long over Q itself
#: (:class:`~symattn.core.algebras.polyseries.RationalPolySeries`, one bank input per task on every
#: core): the exponential's series is a Newton iteration (a few products, not ``2 sqrt(b)``), and
#: the a-priori bound of the primes route grows faster than the coefficients (softmax ``D = 7``,
#: ``d = 2``: t^1457 needs 508 word-size primes, about 2.4 s each, and majorant bounds to u^728,
#: about 200 s; over Q it is one exact computation per input, about 25 s each).
EXACT_FROM_ORDER = 48


def _vanish_over_q(arch: Architecture, bank: np.ndarray, U, W, V, cols: list[int], b: int,
                   say: Callable[[str], None], seconds: float) -> str:
    """Whether the columns ``cols`` of ``J(t)`` vanish below ``t^b`` over Q, computed exactly (one
    bank input per task, forked on every core): ``"proved"``, ``"refuted"`` or ``"too costly"`` (the
    pace of the inputs done, projected on all of them, would not fit ``seconds``: the workers are
    stopped then)."""
    from symattn.core.algebras.polyseries import RationalPolySeries

    def zero(i: int) -> bool:
        algebra = RationalPolySeries(b)
        J = bank_jacobian(arch, bank[i: i + 1], U, W, V, algebra, cols, verify=0)
        return bool(algebra.field.is_zero(J).all())

    tick = time.perf_counter()
    for done, vanishes in enumerate(map_forked(zero, range(len(bank))), 1):
        if not vanishes:
            return "refuted"
        spent = time.perf_counter() - tick
        if spent * len(bank) / done > seconds:
            say(f"order t^{b}: {len(cols)} columns over Q: {done} of {len(bank)} inputs in {spent:.0f} s, "
                f"beyond the budget of {seconds:.0f} s at this pace")
            return "too costly"
    say(f"order t^{b}: {len(cols)} columns vanish below it over Q: exact rationals, {len(bank)} inputs, "
        f"{time.perf_counter() - tick:.1f} s")
    return "proved"


def _proof_primes(bound: int, wide: bool = True) -> list[int]:
    """The fewest primes whose product exceeds ``2 bound``: the default prime
    (:data:`~symattn.core.algebras.DEFAULT_PRIME`, the largest below ``2^23``, whose residues may be
    known already), then the largest 28-bit primes (:class:`~symattn.core.certify.WidePrimeField`;
    with ``wide=False`` the next 23-bit ones).

    >>> [p.bit_length() for p in _proof_primes(2**60)], [p.bit_length() for p in _proof_primes(2**60, False)]
    ([23, 28, 28], [23, 23, 23])
    """
    count, primes = 0, [DEFAULT_PRIME]
    while not proved_vanishing(bound, primes):
        count += 1
        primes = ([DEFAULT_PRIME] + primes_below(2**WIDE_PRIME_BITS, count - 1) if wide
                  else primes_below(2**23, count))
    return primes


def _field(p: int) -> PrimeField:
    """The residue field of a proof prime: :class:`~symattn.core.algebras.PrimeField` below ``2^23``,
    :class:`~symattn.core.certify.WidePrimeField` above."""
    return PrimeField(p) if p < 2**23 else WidePrimeField(p)


def _contracts_few_terms(arch: Architecture) -> bool:
    """Whether every matrix product of the network contracts at most
    :attr:`WidePrimeField.capacity <symattn.core.certify.WidePrimeField.capacity>` terms (an axis of a
    native block or the tokens), so that its residues fit a :class:`~symattn.core.certify.WidePrimeField`."""
    lengths = [arch.tokens] + [int(n) for _, shape in arch.native_shapes() for n in shape]
    return max(lengths) <= WidePrimeField.capacity


#: The column proof proves an order this long by the attention lemma (:func:`lemma_orders`) where it
#: applies (:func:`attention_lemma_applies`); shorter orders stay with the primes (they cost nothing).
LEMMA_FROM_ORDER = EXACT_FROM_ORDER


def attention_lemma_applies(arch: Architecture) -> bool:
    """Whether the attention lemma of :func:`lemma_orders` holds for every layer of ``arch``: each
    layer is the paper's layer (one head, no skip, mask or other part) with an exponential normalizer
    ``exp(b s)`` (derived, :attr:`~symattn.model.normalizer.Normalizer.exponential`), whose weights sum
    to 1 and do not change when a query's scores are shifted together.

    Parameters
    ----------
    arch : Architecture
        The stack.

    Returns
    -------
    bool
        Whether :func:`prove_column_orders` may prove its long orders by :func:`lemma_orders`.

    Examples
    --------
    >>> attention_lemma_applies(Architecture.uniform(2, 2, 1, 2, "exp"))
    True
    >>> attention_lemma_applies(Architecture.uniform(2, 2, 1, 2, "exp", skip="value"))
    False
    >>> [attention_lemma_applies(Architecture.uniform(2, 2, 1, 2, phi)) for phi in ("exp(s)", "cosh")]
    [True, False]
    """
    return all(layer.in_paper_model and layer.normalizer.exponential for layer in arch.layers)


def lemma_orders(differences: Sequence[int]) -> list[int]:
    """The orders in ``t`` below which the query and key columns of layer ``i`` (``i = 1, 2, ...``) of
    ``J(t)`` vanish, from ``differences[i - 1]``: a power ``e`` of ``u = t^2`` below which the token
    differences ``x_k - x_l`` of the layer's input ``X_(i-1)`` vanish (:func:`token_difference_valuations`).

    The attention lemma: with softmax weights ``p_jk`` of scores ``s_jk = x_j^T A x_k``, token ``j`` of
    ``Y = V X P`` moves with ``A`` as ``dy_j = V sum_(k,l) (x_k - x_j) (dp_jk / ds_jl) x_j^T dA (x_l - x_j)``
    (the weights sum to 1, so ``sum_k dp_jk = 0``; a common shift of a query's scores leaves them
    unchanged, so ``sum_l dp_jk / ds_jl = 0``), bilinear in the token differences, whose
    coefficients are power series in ``t``; along the path ``dA = dQ (t W)^T`` or ``t U dK^T`` has a
    factor ``t``. So a query or key column of layer ``i`` of that layer's output vanishes below
    ``t^(2 (2 e) + 1)``; the layers above map it by their Jacobians in ``X``, power series in ``t``,
    which keep that order. This is the one-layer step of App. D.2 (``beta_i = 2 k_i - 1 + 2 e_(i-1)`` with
    ``k_i = 1`` and ``e`` in powers of ``t``); the collapse orders ``e`` are computed here, not taken from
    the paper's recursion.

    Parameters
    ----------
    differences : sequence of int
        ``differences[i]``: the token differences of ``X_i`` vanish below ``u^differences[i]`` over Q.

    Returns
    -------
    list of int
        ``4 differences[i - 1] + 1``, the proved order of layer ``i``'s query and key columns.

    Examples
    --------
    >>> lemma_orders([0, 1, 4, 13])
    [1, 5, 17, 53]
    """
    return [4 * int(e) + 1 for e in differences]


def collapse_valuations(layers: int) -> list[int]:
    """Lower bounds on the powers of ``u = t^2`` below which the token differences of ``X_0, ...,
    X_layers`` vanish on the softmax stack's path (:func:`attention_lemma_applies`), from its structure
    alone: ``e_0 = 0`` and ``e_i = 3 e_(i-1) + 1``, that is ``(3^i - 1) / 2``.

    The collapse recursion (the attention lemma one level down). Layer ``i`` maps token ``j`` to
    ``y_j = V sum_k p_jk x_k`` with ``p_j = softmax(s_j)``, ``s_jk = x_j^T A x_k`` and ``A = u U W^T``
    on the path. The weights of each query sum to 1, so ``y_j - y_1 = V sum_k (p_jk - p_1k) (x_k - x_1)``.
    A softmax does not change when a query's scores are shifted together, so ``p_j - p_1`` is
    ``softmax(s_1 + delta) - softmax(s_1)`` with ``delta_k = (x_j - x_1)^T A (x_k - x_1)`` (the
    scores' difference less its value at ``k = 1``), a power series in ``u`` that vanishes below
    ``u^(2 e + 1)`` when the token differences ``x_k - x_1`` vanish below ``u^e`` (two of them and the
    factor ``u`` of ``A``); the softmax is analytic, so ``p_j - p_1`` vanishes below ``u^(2 e + 1)``
    too, and ``y_j - y_1`` below ``u^(3 e + 1)``. The inputs' own differences give ``e_0 >= 0``.
    These are lower bounds (a bank input with equal tokens has differences zero at every order);
    :func:`prove_column_orders` checks them modulo a prime on its bank (:func:`_checked_recursion`).

    Parameters
    ----------
    layers : int
        The last layer whose output is bounded (nonnegative).

    Returns
    -------
    list of int
        ``[e_0, ..., e_layers]``.

    Examples
    --------
    >>> collapse_valuations(6)
    [0, 1, 4, 13, 40, 121, 364]
    >>> lemma_orders(collapse_valuations(6))       # the paper's orders 2 * 3^(i - 1) - 1 of layers 1..7
    [1, 5, 17, 53, 161, 485, 1457]
    """
    found = [0]
    for _ in range(int(layers)):
        found.append(3 * found[-1] + 1)
    return found


def _checked_recursion(arch: Architecture, bank: np.ndarray, U, W, V, bounds: list[int], order: int,
                       say: Callable[[str], None], seconds: float) -> list[int] | None:
    """``bounds`` (:func:`collapse_valuations`), once the token differences of the bank, computed
    modulo the default prime (the second where it is unlucky) to ``u^order``
    (:func:`token_difference_valuations` in :class:`~symattn.core.algebras.polyseries.PolySeries`),
    vanish below them on every input and layer (a residue is zero wherever the rational is, so a
    nonzero residue below a bound refutes it: :class:`~symattn.core.errors.CheckFailed`). None
    past ``seconds``; the token differences over Q where both primes are unlucky."""
    for p in (DEFAULT_PRIME, SECOND_PRIME):
        try:
            residues = token_difference_valuations(arch, bank, U, W, V, len(bounds) - 1, order, say, seconds, prime=p)
        except UnluckyPrime:
            continue
        if residues is None:
            return None
        low = [(i, r, min(b, order)) for i, (r, b) in enumerate(zip(residues, bounds)) if r < min(b, order)]
        if low:
            i, r, b = low[0]
            raise CheckFailed(f"the collapse recursion puts the token differences of X_{i} at u^{b} or above, but "
                              f"modulo {p} one has a nonzero coefficient at u^{r} on this bank")
        say("collapse recursion: the token differences vanish below u^" + ", u^".join(map(str, bounds))
            + f" (structure), checked modulo {p} on {len(bank)} inputs to u^{order}")
        return bounds
    return token_difference_valuations(arch, bank, U, W, V, len(bounds) - 1, order, say, seconds)


def token_difference_valuations(arch: Architecture, bank: np.ndarray, U, W, V, layers: int, order: int,
                                say: Callable[[str], None] | None = None,
                                seconds: float | None = None, prime: int | None = None) -> list[int] | None:
    """For ``i = 0, ..., layers``: the least power of ``u = t^2`` at which a token difference
    ``x_k - x_l`` of ``X_i`` (``X_0`` the bank's inputs, ``X_i`` layer ``i``'s output on the path
    ``Q = u U``, ``K = W``) has a nonzero coefficient over Q, on any input of ``bank``; ``order``
    when none below ``u^order`` (computed to that truncation in exact rationals,
    :class:`~symattn.core.algebras.polyseries.RationalPolySeries`, one input per forked task: a
    coefficient read as zero *is* zero). None when the pace of the inputs done, projected on all of
    them, would not fit ``seconds`` (the workers are stopped then). With ``prime``, the same
    modulo that prime (:class:`~symattn.core.algebras.polyseries.PolySeries`): the valuations of the
    residues, at least those over Q (a check, not a proof; an unlucky prime raises
    :class:`~symattn.core.algebras.UnluckyPrime`).

    Parameters
    ----------
    arch : Architecture
        The stack (its first ``layers`` layers are evaluated).
    bank : ndarray
        The inputs, rationals of shape ``(size, d, n)``.
    U, W, V
        The path, as for :func:`~symattn.model.parameters.path_point`.
    layers : int
        The last layer whose output is read.
    order : int
        The truncation in ``u``.
    say : callable, optional
        Progress messages.
    seconds : float, optional
        The time budget (none by default).
    prime : int, optional
        Compute modulo this prime instead of over Q.

    Returns
    -------
    list of int or None
        The valuations of ``X_0, ..., X_layers``, or None past the budget.

    Raises
    ------
    symattn.core.errors.UnluckyPrime
        With ``prime``, where a denominator is divisible by it.

    Examples
    --------
    >>> arch = Architecture.uniform(3, 2, 1, 2, "exp")
    >>> U, W, V = path_parameters(arch)
    >>> token_difference_valuations(arch, random_bank(arch, 3), U, W, V, 2, 6)
    [0, 1, 4]
    """
    from symattn.core.algebras.polyseries import PolySeries, RationalPolySeries

    say = say or (lambda msg: None)
    order = int(order)
    if layers == 0 or order == 0:
        return [min(_difference_valuation(np.asarray(bank)[None], order), order)] + [order] * layers
    sub = Architecture(layers=arch.layers[:layers], tokens=arch.tokens)
    graph, point = native_network(sub), path_point(arch, U, W, V)
    point = {block.name: point[block.name] for block in sub.blocks}  # the first layers' blocks

    def valuations(i: int) -> list[int]:
        algebra = RationalPolySeries(order) if prime is None else PolySeries(prime, order)
        vals = native_path_values(sub, algebra, point, None, None, squared=True)
        vals["X"] = algebra.const(bank[i: i + 1])
        out = evaluate(graph, algebra, vals)
        return [_difference_valuation(np.asarray(bank[i: i + 1], dtype=object)[None], order)] + [
            int(algebra.valuation(algebra.sub(x[..., 1:], x[..., :1])).min())  # a token minus the first
            for x in (out[f"X{j}"] for j in range(1, layers + 1))]

    tick, found = time.perf_counter(), [order] * (layers + 1)
    budget = float("inf") if seconds is None else float(seconds)
    for done, vs in enumerate(map_forked(valuations, range(len(bank))), 1):
        found = [min(a, b) for a, b in zip(found, vs)]
        spent = time.perf_counter() - tick
        if spent * len(bank) / done > budget:
            say(f"token differences over Q to u^{order}: {done} of {len(bank)} inputs in {spent:.0f} s, beyond "
                f"the budget of {budget:.0f} s at this pace")
            return None
    where = "over Q" if prime is None else f"modulo {prime}"
    say(f"token differences of the layers' inputs {where} to u^{order} ({len(bank)} inputs, "
        f"{time.perf_counter() - tick:.1f} s): they vanish below u^" + ", u^".join(map(str, found)))
    return found


def _difference_valuation(x: np.ndarray, order: int) -> int:
    """The least ``m < order`` with a nonzero coefficient ``x[m, ..., :, k] - x[m, ..., :, 0]`` (a token
    minus the first; every difference ``x_k - x_l`` is a difference of two of them), else ``order``.
    ``x``: series coefficients (first axis; the bank's inputs: one, constant), tokens last."""
    for m in range(min(order, x.shape[0])):
        diff = x[m][..., 1:] - x[m][..., :1]
        if any(v != 0 for v in diff.reshape(-1)):
            return m
    return order


def _prove_by_lemma(arch: Architecture, bank: np.ndarray, U, W, V, columns: list[int], orders: list[int],
                    wanted: Sequence[int], say: Callable[[str], None],
                    seconds: float, recursion: bool = True) -> tuple[str, tuple[int, ...], str]:
    """The orders of ``wanted`` proved by the attention lemma (:func:`lemma_orders`): every column of
    such an order is a query or key column of a layer ``i`` whose input's token differences vanish
    below ``u^e`` over Q with ``4 e + 1`` at least the order; ``e`` from the collapse recursion
    (:func:`collapse_valuations`, checked modulo a prime on the bank by :func:`_checked_recursion`)
    where ``recursion`` and it reaches the orders, else computed over Q
    (:func:`token_difference_valuations`). ``("proved", those orders, how)`` with ``how`` the route of
    the powers ``e`` (``"recursion"`` or ``"over Q"``), or ``("too costly", (), "")`` when the token
    differences would not fit ``seconds``."""
    letters = block_letters(arch, columns)
    layer_of = _column_layers(arch, columns)
    candidates = [b for b in wanted if all(letter in ("Q", "K") for o, letter in zip(orders, letters) if o == b)]
    if not candidates:
        return "proved", (), ""
    need: dict[int, int] = {}  # layer -> the power of u its input's differences must reach
    for b, layer in zip(orders, layer_of):
        if b in candidates:
            need[layer] = max(need.get(layer, 0), -(-(b - 1) // 4))
    layers, order = max(need) - 1, max(need.values())
    found = collapse_valuations(layers) if recursion else None
    if found is not None and any(need[layer] > found[layer - 1] for layer in need):
        found = None  # an order past the recursion's reach: the token differences over Q decide it
    how = "recursion" if found is not None else "over Q"
    if found is not None:
        found = _checked_recursion(arch, bank, U, W, V, found, order, say, seconds)
    else:
        found = token_difference_valuations(arch, bank, U, W, V, layers, order, say, seconds)
    if found is None:
        return "too costly", (), ""
    reach = lemma_orders(found)
    proved = tuple(b for b in candidates
                   if all(b <= reach[layer - 1] for o, layer in zip(orders, layer_of) if o == b))
    for b in proved:
        say(f"order t^{b}: {sum(o == b for o in orders)} query/key columns vanish below it over Q by the "
            "attention lemma (bilinear in the token differences of the layer's input)")
    return "proved", proved, how


def _column_layers(arch: Architecture, columns: Sequence[int]) -> list[int]:
    """The layer (1-based) of the native block of each column."""
    off, out = arch.offsets(), []
    sizes = {name: int(np.prod(shape)) for name, shape in arch.native_shapes()}
    blocks = {block.name: block for block in arch.blocks}
    for c in columns:
        name = next(n for n in off if off[n] <= c < off[n] + sizes[n])
        out.append(blocks[name].layer)
    return out
