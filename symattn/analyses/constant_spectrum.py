"""The ``constants`` route of the native contact spectrum: exact in Q adjoined the stack's constants.

For a stack whose series the modular and rational algebras refuse (a LayerNorm's ``1/sqrt`` of a
non-square, ``tanh``, GELU or SiLU of a nonzero constant; :class:`~symattn.core.algebras.functions.NotRational`)
and for any stack whose visible rank falls short of ``P`` minus its declared symmetries, the
Jacobian ``J(t)`` of the bank observation along ``Q = t U``, ``K = t W`` is computed exactly in
:class:`~symattn.core.algebras.constants.ConstantField` (one field per bank input: the rows of an
input depend on that input only), and its spectrum is proved by a column-reduced frame
(:func:`~symattn.analyses.frame_proof.prove_frame`): exact zeros below each frame column's order,
a certified nonzero minor of the leading matrix in python-flint balls, and the columns that vanish
mod ``t^N`` exactly as a *gap* (a kernel no declared symmetry explains, or orders past ``t^N``).

The bank and the truncation are chosen by the numerical tier
(:func:`~symattn.analyses.numerical_spectrum.grown_numerical_bank`, 300 digits): the least prefix of a
seeded bank whose numerical spectrum equals that of the next larger prefix (evidence that it
separates), and ``N`` two past its largest order (four where its slopes are not resolved); they only choose what is proved (a wrong choice
leaves orders in the gap, never a wrong order). :func:`constant_route` is called by
:func:`~symattn.analyses.spectrum.native_spectrum` (``method="constants"``, or where the modular
series refuse a stack).
"""

from __future__ import annotations

import time
from typing import Callable

import flint
import numpy as np

from symattn.core.algebras.constants import ConstantField, constant_series
from symattn.core.errors import CheckFailed, Undecided
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank
from symattn.analyses.collapse import bank_jacobian, kernel_product
from symattn.analyses.contact import Setup
from symattn.analyses.frame_proof import FrameProof, Known, _combine, prove_frame
from symattn.core.algebras.balls import digits_to_bits, precision

__all__ = ["constant_route", "constant_capacity", "below_largest_jump", "rank_route_first", "rests_on_unknown", "UNKNOWN",
           "FRAME_DIGITS"]

#: The declared symmetries are checked as exact kernel vectors to at least this truncation on the
#: bank's first input (the spectrum's own may be as short as ``t^3``, where a wrong factor entry is
#: not yet seen), and to the spectrum's truncation on every input (the matrix the frame proves).
#: Past ``t^5`` the check costs more than the rows (the post-norm block with skip at ``D = 3``:
#: 34 s per input at ``t^8``, 3 s at ``t^5``, 12 s for the rows).
KERNEL_CHECK_ORDER = 8

#: Digits of the balls that certify the leading matrix and guide the column operations (doubled,
#: up to the last, while a relation's coefficients are not resolved as small rationals).
FRAME_DIGITS = (60, 120, 240)

#: Digits of the ball series above ``t^0`` in the hybrid frame (exact mod ``t^1``, balls above; at
#: least the last of :data:`FRAME_DIGITS`, which the frame's balls are then read at).
HYBRID_DIGITS = 300


def constant_capacity(arch: Architecture) -> int:
    """Generators one bank input may name: per layer and token, one LayerNorm constant per norm
    and two per MLP hidden unit (GELU names ``Phi`` and ``phi``), and ``kappa``.

    >>> constant_capacity(Architecture.uniform(2, 2, 1, 3, "exp", norm="post"))
    7
    """
    per = 0
    for layer in arch.layers:
        norms = len(layer.norm_sites) * layer.norm_part.constants_per_token
        per += arch.tokens * (norms + 2 * layer.mlp)
    return max(per + 1, 1)


def _input_rows(s: Setup, x: np.ndarray, N: int, check: bool, kernel_order: int = KERNEL_CHECK_ORDER,
                columns: list[int] | None = None) -> dict:
    """One input's exact Jacobian rows in its own constant field (checked on a random direction by
    the second code path, series in a second variable, where ``check``) and its declared symmetries
    as kernel vectors mod ``t^N`` (mod ``t^kernel_order``, default :data:`KERNEL_CHECK_ORDER`, at least where ``check``), exported as JSON-ready data (:meth:`ConstantField.export`).
    ``columns``: only these native columns (default ``s.columns``), and no kernel check."""
    capacity = constant_capacity(s.arch)
    while True:
        A = constant_series(N, capacity)
        try:
            J = bank_jacobian(s.arch, x[None], s.U, s.W, s.V, A, s.columns if columns is None else columns,
                              verify=1 if check else 0)
            break
        except Undecided as exc:
            if "field is full" not in str(exc) or capacity >= 4096:
                raise
            capacity *= 2
    kernel = True
    if s.kernel.directions and columns is None:
        K = constant_series(max(N, kernel_order) if check else N, capacity)
        out = kernel_product(s.arch, x[None], s.U, s.W, s.V, s.kernel.along_path(), K)
        kernel = bool(np.all(out == 0))
    return {"rows": A.field.export(J), "kernel": kernel}


def _exact_rows(s: Setup, X: np.ndarray, N: int, say: Callable[[str], None], seconds: float,
                memory: int, kernel_order: int = KERNEL_CHECK_ORDER,
                columns: list[int] | None = None) -> list[tuple[ConstantField, np.ndarray]]:
    """Every input's exact rows (of the native ``columns`` only where given, see :func:`_input_rows`),
    each in a forked child confined to the time left and ``memory`` bytes
    (:func:`~symattn.core.confine.run_confined`), on every usable core."""
    from concurrent.futures import ThreadPoolExecutor

    from symattn.core.confine import run_confined
    from symattn.core.parallel import usable_cores

    start = time.perf_counter()
    workers = max(1, min(usable_cores(), len(X)))
    each = max(memory // workers, 2**28)
    which = "" if columns is None else f" ({len(columns)} columns)"
    say(f"exact Jacobian{which} in Q[constants] to t^{N}: {len(X)} inputs, one forked child each on {workers} "
        f"cores (at most {seconds:.0f} s, {each / 2**30:.1f} GiB each)")

    def one(b: int):
        left = seconds - (time.perf_counter() - start)
        if left <= 0:
            return None
        return run_confined(_input_rows, (s, X[b], N, b == 0, kernel_order, columns), timeout=left, memory=each)

    out: list[tuple[ConstantField, np.ndarray]] = []
    with ThreadPoolExecutor(workers) as pool:
        for b, result in enumerate(pool.map(one, range(len(X)))):
            if result is None or result.status in ("timeout", "memory"):
                pool.shutdown(wait=False, cancel_futures=True)
                what = "time" if result is None or result.status == "timeout" else "memory"
                raise Undecided(f"the exact Jacobian in Q[constants] to t^{N} did not fit the {what} limit "
                                f"({seconds:.0f} s, {each / 2**30:.1f} GiB per input; {b} of {len(X)} inputs "
                                "done): too costly here; use --method numerical")
            if result.status != "ok":
                pool.shutdown(wait=False, cancel_futures=True)
                if result.error_type == "Crashed" and "memory limit" in result.error:  # FLINT aborts on it
                    raise Undecided(f"the exact Jacobian in Q[constants] to t^{N} ran out of memory ({each / 2**30:.1f} "
                                    f"GiB per input; its polynomials in the constants grow too fast here): too "
                                    "costly; use --method numerical")
                _raise_child(result)
            if not result.value["kernel"]:
                raise CheckFailed("a declared symmetry is not a kernel vector of the exact Jacobian in Q[constants]")
            out.append(ConstantField.restore(result.value["rows"]) if columns is None else result.value["rows"])
            say(f"input {b + 1} of {len(X)} done ({time.perf_counter() - start:.1f} s)")
    return out


def _raise_child(result) -> None:
    """Re-raise a child's exception as its kind (undecided, failed check, bad input, bug)."""
    from symattn.core.errors import InternalError, SymattnError

    kind = {"Undecided": Undecided, "NotInvertible": Undecided, "NotRational": Undecided,
            "CheckFailed": CheckFailed, "SymattnError": SymattnError}.get(result.error_type)
    if kind is None:
        raise InternalError(f"the exact Jacobian in Q[constants] failed in its child: {result.error_type}: "
                            f"{result.error}; please report this bug")
    raise kind(result.error)


def _guide(s: Setup, bank, say: Callable[[str], None]) -> tuple[int, int, str, list[tuple[int, int]]]:
    """The bank size and truncation the numerical tier suggests (its grown bank,
    :func:`~symattn.analyses.numerical_spectrum.grown_numerical_bank`), the bank's note and the
    numerical orders ``[(order, multiplicity)]``."""
    from symattn.analyses.numerical_spectrum import MAX_NUMERICAL_PARAMETERS, PathJacobians, grown_numerical_bank

    arch = s.arch
    cap = 4 * max(s.hint) + 8
    if arch.native_size > MAX_NUMERICAL_PARAMETERS:
        size = int(bank) if not isinstance(bank, str) else max(2, -(-2 * s.visible // (arch.widths[-1] * arch.tokens)))
        return size, max(s.hint) + 2, f"bank: {size} seeded inputs (no numerical guide beyond " \
                                      f"{MAX_NUMERICAL_PARAMETERS} parameters)", []
    say("numerical guide (300 digits): the bank and the truncation")
    if isinstance(bank, str):
        guide = grown_numerical_bank(arch, s.seed, 300)
        note = guide.notes[-1].replace("numerical spectra", "numerical spectra (300 digits)")
    else:
        guide = PathJacobians(arch, random_bank(arch, int(bank), s.seed), s.seed, 300).spectrum()
        note = f"bank: {int(bank)} seeded inputs (orders can only rise on a non-separating bank)"
    top = max((o for o, _ in guide.bands), default=0)
    # two past the largest numerical order (four where the slopes are not resolved): the truncation
    # only chooses which orders are proved, never claims one
    return guide.bank_size, min(top + (2 if guide.resolved else 4), cap), note, sorted(guide.bands)


def rank_route_first(orders: list[tuple[int, int]]) -> bool:
    """Whether :func:`constant_route` tries the rank route (:func:`~symattn.analyses.path_rank.rank_route`)
    before any exact series: where the numerical guide's orders ``[(order, multiplicity)]`` are all 0
    and 1, the only orders ranks can decide (the blocks with skip and LayerNorm: their exact rows in
    a tower of square roots cost minutes per input). The guide only chooses the route: the rank
    route certifies its orders or declines (then the exact frames follow), never takes the guide's.

    Parameters
    ----------
    orders : list of (int, int)
        The numerical guide's orders and multiplicities (empty: no guide).

    Returns
    -------
    bool
        True where there is a guide and its largest order is at most 1.

    Examples
    --------
    >>> rank_route_first([(0, 12), (1, 7)]), rank_route_first([(0, 8), (1, 3), (5, 2)]), rank_route_first([])
    (True, False, False)
    """
    return bool(orders) and max(o for o, _ in orders) <= 1


def below_largest_jump(orders: list[tuple[int, int]]) -> int | None:
    """The truncation of the *partial* frame: one past the numerical orders below their largest jump
    (the orders past it are what makes the whole truncation costly), or None without a jump of at
    least two.

    >>> below_largest_jump([(0, 23), (1, 3), (2, 1), (5, 2), (6, 1), (17, 3), (18, 1)])
    7
    >>> below_largest_jump([(0, 10), (1, 6)]) is None
    True
    """
    distinct = sorted({o for o, _ in orders})
    if len(distinct) < 2:
        return None
    low, high = max(zip(distinct, distinct[1:]), key=lambda pair: (pair[1] - pair[0], -pair[0]))
    return low + 1 if high - low >= 2 else None


class _Unknown:
    """A coefficient the completed frame did not compute (a column outside its gap, at or past the
    partial truncation): never a zero, absorbing in sums and products, its ball the whole line."""

    __slots__ = ()

    def __add__(self, other):
        return self

    __radd__ = __sub__ = __rsub__ = __add__

    def __mul__(self, other):
        return self

    __rmul__ = __mul__

    def __neg__(self):
        return self

    def __ne__(self, other) -> bool:  # type: ignore[override]
        return True

    def __eq__(self, other) -> bool:  # type: ignore[override]
        return False

    __hash__ = None  # type: ignore[assignment]


#: The coefficient the completed frame did not compute (one object: never a zero, absorbing).
UNKNOWN = _Unknown()

#: The completed frame computes its gap's columns to the whole truncation only where they are at most
#: this share of the visible columns (the cost of the exact rows is about proportional to the columns).
COMPLETION_SHARE = 0.5


def _gap_columns(s: Setup, proofs: list[FrameProof]) -> list[int]:
    """The visible columns (positions in ``s.columns``) that a gap column of any prefix frame combines."""
    out: set[int] = set()
    for k, proof in enumerate(proofs):
        cols = np.concatenate(s.block_idx[: k + 1])
        out |= {int(cols[j]) for o, terms in zip(proof.orders, proof.terms) if o is None for j, _, _ in terms}
    return sorted(out)


def rests_on_unknown(J: np.ndarray, proof: FrameProof) -> bool:
    """Whether a finite column of the frame ``proof`` of ``J`` has a leading coefficient that combines a
    coefficient not computed (:data:`UNKNOWN`): its order is then not proved.

    >>> from fractions import Fraction
    >>> J = np.array([[[0, 0]], [[1, UNKNOWN]]], dtype=object)
    >>> p = FrameProof("proved", [1, 1], [[(0, 0, Fraction(1))], [(1, 0, Fraction(1))]], 2)
    >>> rests_on_unknown(J, p), rests_on_unknown(J[:, :, :1], FrameProof("proved", [1], p.terms[:1], 2))
    (True, False)
    """
    return any(o is not None and any(isinstance(v, _Unknown) for v in _combine(J, terms)[o])
               for o, terms in zip(proof.orders, proof.terms))


def _completed(s: Setup, X: np.ndarray, N: int, cut: int, note: str, say: Callable[[str], None], seconds: float,
               memory: int) -> dict | None:
    """The *completed* frame (a run of :func:`constant_route`): every visible column exact mod ``t^cut``
    (the partial frame's rows), and the columns that its frames leave in their gap (vanishing mod
    ``t^cut`` exactly) exact mod ``t^N``, in the same field of each input (its generators checked equal);
    the frame of every block prefix proved on that matrix, where a coefficient not computed is never a
    zero (:data:`UNKNOWN`) and a frame column whose leading coefficient needs one is refused. None where
    this does not decide (time, a prefix undecided, a refused column, a gap of more than
    :data:`COMPLETION_SHARE` of the columns): the caller then computes the whole truncation."""
    from symattn.core.algebras.constants import Element

    start = time.perf_counter()
    try:
        parts = _exact_rows(s, X, cut, say, seconds, memory)
    except Undecided as exc:
        if not _too_costly(exc):
            raise
        return None
    partial = _frames(s, X, cut, cut, parts, note, say)
    if len(partial["proofs"]) < len(s.blocks) or partial["proofs"][-1].status != "proved":
        return None
    verified = (f"each verified as a kernel vector of J mod t^{cut} on every input and mod "
                f"t^{max(cut, KERNEL_CHECK_ORDER)} on the first (exact in Q[constants])"
                if s.kernel.directions else "no declared symmetries")
    gap = _gap_columns(s, partial["proofs"])
    if not gap:  # every visible column of finite order below t^cut: the partial frame is the whole proof
        return dict(partial, verified=verified, completed=None)
    if len(gap) > COMPLETION_SHARE * len(s.columns):
        say(f"the partial frame's gap combines {len(gap)} of {len(s.columns)} columns: no completed frame")
        return None
    say(f"completed frame: the {len(gap)} columns of the partial frame's gap exact to t^{N}")
    try:
        extra = _exact_rows(s, X, N, say, seconds - (time.perf_counter() - start), memory,
                            columns=[s.columns[j] for j in gap])
    except Undecided as exc:
        if not _too_costly(exc):
            raise
        return None
    fields, low = partial["fields"], partial["J"]
    per = low.shape[1] // len(X)
    J = np.full((N,) + low.shape[1:], UNKNOWN, dtype=object)
    J[:cut] = low
    for b, (F, data) in enumerate(zip(fields, extra)):
        mine = F.export(np.empty(0, dtype=object))
        if data["capacity"] != mine["capacity"] or data["constants"] != mine["constants"]:
            say(f"input {b + 1}: the gap's columns met other constants than its rows (another field): no "
                "completed frame")
            return None
        _, y = ConstantField.restore(data)
        y = np.vectorize(lambda v: Element(v.poly, F) if isinstance(v, Element) else v, otypes=[object])(y)
        if not np.all(y[:cut] == low[:, b * per: (b + 1) * per][:, :, gap]):
            raise CheckFailed("the exact Jacobian's columns computed alone and with all the columns disagree "
                              "below the partial truncation")
        J[:, b * per: (b + 1) * per, gap] = y

    def balls(v: np.ndarray, digits: int) -> np.ndarray:
        out = np.empty(len(v), dtype=object)
        for b, F in enumerate(fields):
            chunk = v[b * per: (b + 1) * per]
            known = np.array([not isinstance(x, _Unknown) for x in chunk], dtype=bool)
            part = np.full(len(chunk), flint.arb("0 +/- inf"), dtype=object)
            if known.any():
                part[known] = F.balls(chunk[known], digits)
            out[b * per: (b + 1) * per] = part
        return out

    nested, proofs = _prefix_frames(s, J, balls, say)
    if len(nested) < len(s.blocks):
        return None
    if any(rests_on_unknown(J[:, :, np.concatenate(s.block_idx[: k + 1])], p) for k, p in enumerate(proofs)):
        say("a completed frame column's leading coefficient needs a coefficient not computed: no completed frame")
        return None
    completed = (f"completed frame: the Jacobian exact in Q[constants] mod t^{cut} on all {len(s.columns)} visible "
                 f"columns (one past the numerical guide's orders below its largest jump) and mod t^{N} on the "
                 f"{len(gap)} columns its frames left vanishing mod t^{cut} (computed alone, in the same fields, "
                 f"and equal to the others mod t^{cut}); the coefficients not computed are never taken for zeros "
                 "and no frame column's leading coefficient uses one")
    return dict(X=X, N=N, J=None, nested=nested, proof=proofs[-1], proved=True, fields=fields, bank_note=note,
                verified=verified, separating=None, frame=None, divisible=None, exact_order=N, truncated=None,
                proofs=proofs, completed=completed)


def constant_route(s: Setup, bank, order: int | None, say: Callable[[str], None],
                   seconds: float | None = None, max_memory_gib: float | None = None, hybrid: bool = False,
                   ranks_first: bool = False) -> dict:
    """The spectrum's run (see :func:`~symattn.analyses.spectrum.native_spectrum`) in the constant
    field: the bank, the exact Jacobian, the proved frames of every block prefix.

    Returns a dict with ``X``, ``N``, ``nested`` (the certified finite orders of each block prefix),
    ``proof`` (the full frame's :class:`~symattn.analyses.frame_proof.FrameProof`), ``fields``,
    ``bank_note``, ``verified`` (how the declared symmetries were checked) and ``truncated`` (a note
    where the frame is the partial one, else None). The exact rows run in forked children confined
    to ``seconds`` (default :data:`~symattn.core.limits.PROOF_SECONDS`) and ``max_memory_gib`` in all
    (:class:`~symattn.core.errors.Undecided` beyond them). Where the whole truncation does not fit
    half of ``seconds`` (or with ``hybrid``), the *hybrid* frame: the Jacobian exact mod ``t^1`` and
    in balls to one past the numerical guide's largest order (:func:`_hybrid`; ``exact_order`` in the
    result says which). Where that frame is undecided too, the *partial* frame: exact to a lower
    truncation (:func:`below_largest_jump` of the guide's orders), which proves the orders below it
    and puts the others at or past it. With ``ranks_first`` (the spectrum's default method, which
    continues here where the modular series refuse a stack; not ``method="constants"``, which asks
    for the exact frames) and a guide whose orders are all 0 and 1 (:func:`rank_route_first`), the
    rank route (:func:`~symattn.analyses.path_rank.rank_route`) is tried before any exact series.
    """
    start = time.perf_counter()
    arch = s.arch
    if isinstance(bank, np.ndarray):
        X, N, note = bank, order or max(s.hint) + 2, f"bank: {len(bank)} given inputs"
        guide: list[tuple[int, int]] = []
    else:
        size, N, note, guide = _guide(s, bank, say)
        N = order or N
        X = random_bank(arch, size, s.seed)
    from symattn.core.limits import DEFAULT_MAX_MEMORY_GIB, PROOF_SECONDS

    budget = PROOF_SECONDS if seconds is None else float(seconds)
    memory = int((max_memory_gib or DEFAULT_MAX_MEMORY_GIB) * 2**30)
    left = lambda: budget - (time.perf_counter() - start)  # noqa: E731
    why = "the hybrid frame was asked for"
    if ranks_first and not hybrid and order is None and rank_route_first(guide):
        # every numerical order 0 or 1: the ranks of the truncations decide them without exact series
        say("the numerical guide's orders are all 0 and 1: the orders from the ranks of the truncations "
            "(balls) first")
        ranked = _ranked(s, X, note, say, left() / 2)
        if ranked is not None:
            return ranked
        say("the ranks of the truncations do not decide: the exact frames")
    cut = below_largest_jump(guide)
    if not hybrid and order is None and cut is not None and 1 < cut < N:
        # the completed frame: exact to the guide's jump, and its gap's columns alone to one past the
        # guide's largest order (a higher order is left in the gap, never claimed)
        done = _completed(s, X, min(N, max(o for o, _ in guide) + 1), cut, note, say, left() / 2, memory)
        if done is not None:
            return done
        say("the completed frame does not decide: the whole truncation")
    if not hybrid:
        # the whole truncation exact while it fits half the time left (all of it for a given order)
        try:
            parts = _exact_rows(s, X, N, say, left() / 2 if order is None else left(), memory)
        except Undecided as exc:
            if order is not None or not _too_costly(exc):
                raise
            why = str(exc).split(":")[0]
            say(f"{why}: the hybrid frame instead")
        else:
            return _frames(s, X, N, N, parts, note, say)
    # the hybrid frame: exact mod t^1, balls to one past the largest numerical order
    top = max((o for o, _ in guide), default=N - 1)
    H = min(N, top + 1)
    say(f"hybrid frame: exact mod t^1 in Q[constants], in balls of {HYBRID_DIGITS} digits to t^{H}")
    try:
        first = _exact_rows(s, X, 1, say, left(), memory, kernel_order=1)
    except Undecided as exc:
        if not _too_costly(exc):
            raise
        # not even the exact t^0 rows fit: the orders from ranks alone, where they decide them
        say(f"{str(exc).split(':')[0]}: the orders from the ranks of the truncations (balls)")
        ranked = _ranked(s, X, note, say, left())
        if ranked is None:
            raise Undecided(f"{exc}; the ranks of the truncations in balls do not decide the orders either") from None
        return ranked
    run = _frames(s, X, H, 1, first, note, say)
    cut = below_largest_jump(guide)
    if run["proved"] or cut is None or cut >= N or cut <= 1:
        return run
    # the partial frame: exact to one past the orders below the guide's largest jump
    say(f"the hybrid frame is undecided ({run['proof'].reason}): the partial frame, exact to t^{cut}")
    try:
        parts = _exact_rows(s, X, cut, say, left(), memory)
    except Undecided as exc:
        if not _too_costly(exc):
            raise
        say(f"{str(exc).split(':')[0]}: the hybrid frame's result stands")
        return run
    partial = _frames(s, X, cut, cut, parts, note, say)
    if not partial["proved"]:  # undecided as it is: no truncation note claims its orders
        return partial
    past = ", ".join(f"t^{o} x {m}" for o, m in guide if o >= cut)
    partial["truncated"] = (
        f"truncated: {why}; the hybrid frame is undecided, so the frame is proved mod t^{cut} (one past "
        f"the numerical guide's orders below its largest jump): the orders below t^{cut} are certified, the "
        f"others only >= t^{cut}" + (f" (the numerical guide, 300 digits, puts them at {past}: numerical, "
                                     "not certified)" if past else ""))
    return partial


#: Seconds the rank route needs left of the budget to start (it gets what is left; its first
#: precision runs whole: the full layer at ``D = 3`` takes about a minute in all).
RANK_ROUTE_SECONDS = 30.0


def _ranked(s: Setup, X: np.ndarray, note: str, say: Callable[[str], None], seconds: float) -> dict | None:
    """The run of :func:`constant_route` from :func:`~symattn.analyses.path_rank.rank_route` (no exact
    series: certified ranks in balls and the exact zeros of the ``t^0`` coefficient; its truncation
    ``N`` is the route's, :data:`~symattn.analyses.path_rank.RANK_ROUTE_ORDER`), or None."""
    from symattn.analyses.path_rank import RANK_ROUTE_ORDER, rank_route

    if seconds < RANK_ROUTE_SECONDS:
        say(f"no rank route: {seconds:.0f} s left of the budget")
        return None
    found = rank_route(s, X, say, seconds=seconds)
    if found is None:
        return None
    verified = ("each verified as a kernel vector of J at the path point t = 1 (every ball of J xi contains 0; "
                "numerical)" if s.kernel.directions else "no declared symmetries")
    return dict(X=X, N=RANK_ROUTE_ORDER, J=None, nested=found["nested"], proof=None, proved=True, fields=[], bank_note=note,
                verified=verified, separating=None, frame=None, divisible=None, exact_order=0, truncated=None,
                ranked=found)


#: How the rank route's certificate note begins (the command's summary line reads it).
RANKED_PREFIX = "certificate certified: the Smith orders from ranks alone"


def ranked_note(found: dict) -> str:
    """The certificate of the rank route in words."""
    from symattn.analyses.path_rank import RANK_ROUTE_ORDER

    path = found["path"]
    return (f"{RANKED_PREFIX} (no exact series): rank J(t) = "
            f"{path.visible} over R((t)), all the visible columns (a nonzero minor of J at the path point t = 1 in "
            f"balls of {path.digits} digits; J is real-analytic on the path), and the block Toeplitz matrices of "
            f"its coefficients mod t^{RANK_ROUTE_ORDER} (python-flint ball series at {found['digits']} digits) of certified ranks "
            "that meet their upper bounds (the rank left, and at t^0 the columns that are not exactly zero): the "
            "orders of every block prefix are exactly these. Assumed, not proved: the forward-mode Jacobian code "
            "computes the derivative (its t^0 coefficient agrees with the Jacobian at the collapse point computed "
            "on its own) and the Taylor data of the functions are right")


def _too_costly(exc: Undecided) -> bool:
    """Whether :func:`_exact_rows` stopped at its time or memory limit (not at a refusal)."""
    return "did not fit" in str(exc) or "ran out of memory" in str(exc)


def _frames(s: Setup, X: np.ndarray, N: int, exact: int, parts: list[tuple[ConstantField, np.ndarray]],
            note: str, say: Callable[[str], None]) -> dict:
    """The proved frames of every block prefix of the Jacobian mod ``t^N``, exact mod ``t^exact``
    (``parts``: each input's field and rows) and in balls above (:func:`_hybrid`)."""
    fields = [F for F, _ in parts]
    rows = [R for _, R in parts]
    J = np.concatenate(rows, axis=1)
    per = rows[0].shape[1]
    if exact < N:
        J = _hybrid(s, X, N, fields, rows)
        verified = (f"each verified as a kernel vector of J mod t^1 on every input (exact in Q[constants]) "
                    f"and mod t^{N} in balls of {HYBRID_DIGITS} digits (every ball contains 0: evidence above t^0)"
                    if s.kernel.directions else "no declared symmetries")
    else:
        verified = (f"each verified as a kernel vector of J mod t^{N} on every input and mod "
                    f"t^{max(N, KERNEL_CHECK_ORDER)} on the first (exact in Q[constants])"
                    if s.kernel.directions else "no declared symmetries")

    def balls(v: np.ndarray, digits: int) -> np.ndarray:
        if exact < N:  # Known coefficients carry their balls (HYBRID_DIGITS, at least any digits asked)
            return np.array([x.ball for x in v], dtype=object)
        out = np.empty(len(v), dtype=object)
        for b, F in enumerate(fields):
            out[b * per: (b + 1) * per] = F.balls(v[b * per: (b + 1) * per], digits)
        return out

    nested, proofs = _prefix_frames(s, J, balls, say)
    return dict(X=X, N=N, J=J, nested=nested, proof=proofs[-1], proved=len(nested) == len(s.blocks),
                fields=fields, bank_note=note, verified=verified, separating=None, frame=None, divisible=None,
                exact_order=exact, truncated=None, proofs=proofs)


def _prefix_frames(s: Setup, J: np.ndarray, balls, say: Callable[[str], None]) -> tuple[list[list[int]], list[FrameProof]]:
    """The proved frame of every block prefix of ``J`` (:func:`_prove`), up to the first undecided one:
    ``(finite orders of each proved prefix, the proofs)``."""
    nested, proofs = [], []
    for k in range(len(s.blocks)):
        cols = np.concatenate(s.block_idx[: k + 1])
        say(f"frame of {len(cols)} columns (through {s.blocks[k][0]}): exact zeros, leading minor in balls")
        with precision(digits_to_bits(HYBRID_DIGITS)):  # the Known coefficients' ball arithmetic
            proof = _prove(J[:, :, cols], balls, say)
        proofs.append(proof)
        if proof.status != "proved":
            break
        nested.append(proof.finite)
    return nested, proofs


def _hybrid(s: Setup, X: np.ndarray, N: int, fields: list[ConstantField], rows: list[np.ndarray]) -> np.ndarray:
    """The Jacobian mod ``t^N`` as :class:`~symattn.analyses.frame_proof.Known` coefficients: the
    ``t^0`` coefficient exact (``rows``, each input in its field) with its balls, the others balls of
    :func:`~symattn.core.algebras.ballseries.ball_series` at :data:`HYBRID_DIGITS` digits (zeros there
    only where a ball is the exact 0). The two code paths must agree at ``t^0`` (every exact
    coefficient's ball overlaps the ball series'), and every declared symmetry's kernel product
    in balls must contain 0 (:class:`~symattn.core.errors.CheckFailed` otherwise)."""
    from symattn.core.algebras.ballseries import ball_series

    A = ball_series(N, HYBRID_DIGITS)
    out = []
    with A.field.working():
        for x, F, R in zip(X, fields, rows):
            B = bank_jacobian(s.arch, x[None], s.U, s.W, s.V, A, s.columns, verify=0)
            exact = F.balls(R[0], HYBRID_DIGITS)
            H = np.empty(B.shape, dtype=object)
            for idx, v in np.ndenumerate(R[0]):
                if not exact[idx].overlaps(B[(0,) + idx]):
                    raise CheckFailed("the Jacobian's t^0 coefficient in Q[constants] and in balls disagree "
                                      f"(row {idx[0]}, column {idx[1]}): one of the two code paths is wrong")
                H[(0,) + idx] = Known(v, exact[idx])
            for idx, b in np.ndenumerate(B[1:]):
                H[(idx[0] + 1,) + idx[1:]] = Known(None, b)
            if s.kernel.directions:
                K = kernel_product(s.arch, x[None], s.U, s.W, s.V, s.kernel.along_path(), A)
                if not all(v.contains(0) for v in K.reshape(-1)):
                    raise CheckFailed("a declared symmetry is not a kernel vector of J in balls (a ball excludes 0)")
            out.append(H)
    return np.concatenate(out, axis=1)


def _prove(J: np.ndarray, balls, say) -> FrameProof:
    proof = None
    for digits in FRAME_DIGITS:
        proof = prove_frame(J, lambda v, d=digits: balls(v, d), digits, say)
        if proof.status == "proved" or not ("small rational" in proof.reason or "certified minor" in proof.reason
                                            or "balls contain 0" in proof.reason):
            break
        say(f"the frame is not resolved at {digits} digits ({proof.reason}): again at more digits")
    assert proof is not None
    return proof


def constant_note(proof: FrameProof, fields: list[ConstantField], N: int, exact_order: int | None = None) -> str:
    """The certificate of the constants route in words (``exact_order < N``: the hybrid frame, exact
    mod ``t^exact_order`` and in balls above)."""
    named = sum(len(F.constants) for F in fields)
    related = sum(len(F._relations) for F in fields)
    if proof.status != "proved":
        where = ("the hybrid frame, exact mod t^1 and in balls above,"
                 if exact_order is not None and exact_order < N else "the frame in Q[constants]")
        return f"certificate none: {where} is undecided ({proof.reason})"
    gap = (f"; {proof.gap} further orders are >= t^{N}: {proof.gap} independent frame columns vanish mod t^{N} "
           "exactly (a kernel no declared symmetry explains, or orders past the truncation)" if proof.gap else "")
    field = (f"in Q adjoined {named} constants of the bank ({related} square roots kept with their relations "
             "w^2 = 1/c, the others free: LayerNorm's 1/sqrt, the activations' values)" if named else
             "over Q (every constant of this bank is rational)")
    if exact_order is not None and exact_order < N:
        field = (f"mod t^{exact_order} {field}, and its coefficients up to t^{N - 1} in python-flint balls of "
                 f"{HYBRID_DIGITS} digits (the same code in a second field; its zeros are exact balls 0, products "
                 "with an exact zero, and the two agree at t^0)")
    return (f"certificate certified: the Jacobian computed exactly {field}; a column-reduced frame (rational "
            "column operations, "
            "unimodular) whose columns vanish exactly below their orders, and a nonzero minor of its "
            f"leading matrix certified in python-flint balls: the first {len(proof.finite)} Smith orders over "
            f"R[[t]] are exactly these{gap}. Assumed, not proved: the forward-mode Jacobian code computes the "
            "derivative (checked on a random direction by a second code path in the same field) and the "
            "Taylor data of the functions are right")

