"""Least separating banks (the paper's open problem "efficient bank design"), any architecture.

A bank of ``m`` inputs *separates* when it reaches the generic contact orders of the
native path: the fewer inputs, the cheaper every spectrum. :func:`least_bank`
searches ``m`` upward from the counting bound for banks of a family
(:data:`FAMILIES`), and proves that the size it returns separates: by the divided
frame of App. D.3 where a statement covers the architecture, else against the
certified orders of a reference bank. Why one input fewer fails is evidence, or
proved below the counting bound. The method is in the Notes of :func:`least_bank`.
"""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction

import numpy as np

from symattn.core.validate import require_choice, require_int, require_str
from symattn.model.architecture import require_architecture
from symattn.render.rich_result import RichResult
from symattn.core.algebras import modular_series
from symattn.core.algebras.functions import NotRational
from symattn.core.errors import InternalError, SymattnError, Unresolved
from symattn.core.linalg import Matrix
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank
from symattn.model.symmetries import GaugeKernel
from symattn.theorems import statements
from symattn.analyses.collapse import bank_jacobian, path_parameters, path_point_of
from symattn.analyses.spectrum import bank_orders, native_spectrum

__all__ = ["FAMILIES", "METHODS", "BankResult", "family_bank", "frame_rank", "least_bank"]

#: Bank families :func:`family_bank` draws from.
FAMILIES = ("random", "integer", "sparse")

#: The tiers of :func:`least_bank`.
METHODS = ("exact", "numerical")

#: ``t = 2^-K, 2^-(K + 1)`` of the numerical bank search: smaller than the spectrum's ``2^-16`` (a
#: search compares the bands of many sub-banks, whose close orders need smaller t to separate;
#: the ``D = 2``, ``d = 2`` post-norm stack has slopes 0.36 from integers at ``2^-16``).
NUMERICAL_T_EXPONENT = 24

#: The statement whose hypothesis a separating bank meets.
BANK_THEOREM = statements.APP_D3.label


def family_bank(arch: Architecture, size: int, family: str = "random", seed: int = 0) -> np.ndarray:
    """A seeded bank ``(size, d, n)`` of exact rationals from ``family``.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    size : int
        The number of inputs.
    family : str
        One of :data:`FAMILIES`.
    seed : int
        The seed.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    SymattnError
        An unknown family (one line).

    Examples
    --------
    >>> arch = Architecture.uniform(1, 2, 1, 2, "exp")
    >>> sorted({int(v) for v in family_bank(arch, 3, "sparse", 1).flat})
    [-1, 0, 1]
    """
    if family not in FAMILIES:
        raise SymattnError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")
    if family == "random":
        return random_bank(arch, size, seed)
    rng = random.Random(7_919 * seed + 3)
    shape = (size, arch.widths[0], arch.tokens)
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        if family == "integer":
            out[idx] = Fraction(rng.randint(-2, 2))
        else:
            out[idx] = Fraction(0 if rng.random() < 0.5 else rng.choice((-1, 1)))
    return out


def frame_rank(arch: Architecture, bank: np.ndarray, seed: int = 0, values: str = "identity") -> tuple[int, int]:
    """``(rank E(0) mod p, number of visible columns)`` on ``bank`` (path of ``seed``; the
    divided frame of App. D.3, :data:`~symattn.theorems.statements.APP_D3`).

    Parameters
    ----------
    arch : Architecture
        The architecture.
    bank : numpy.ndarray
        Input banks ``X``.
    seed : int
        The seed of the path.
    values : str
        ``"identity"`` or ``"random"``.

    Returns
    -------
    tuple of int
    """
    U, W, V = path_parameters(arch, seed, values)
    blocks = GaugeKernel(arch, path_point_of(arch, seed, values)).visible_blocks()
    exponents = statements.frame(arch, blocks)
    columns = [c for _, _, cols in blocks for c in cols]
    A = modular_series(max(exponents) + 1)
    J = bank_jacobian(arch, bank, U, W, V, A, columns, verify=0)
    frame, start = [], 0
    for (_, _, cols), beta in zip(blocks, exponents):
        frame.append(J[beta][:, start: start + len(cols)])
        start += len(cols)
    return Matrix.modular(np.concatenate(frame, axis=1), A.field.p).rank(), len(columns)


@dataclass(repr=False)
class BankResult(RichResult):
    """Result of :func:`least_bank` (``to_json`` has the CLI keys)."""

    family: str
    least_size: int | None
    counting_bound: int
    separating: bool
    generic: bool
    visible: int
    least_by_seed: dict
    defects_below: list
    below_proved: bool
    seconds: float
    #: the statement that decides separation (App. D.3), or None (``theorem: null``)
    theorem: str | None = BANK_THEOREM
    notes: list[str] = field(default_factory=list)
    #: the sizes tried for the first seed and whether each separated
    tried: dict = field(default_factory=dict)
    #: "exact" (a separating bank proved mod p), or "numerical at N digits" (:func:`least_bank`
    #: with ``method="numerical"``: a bank reaching a numerical reference spectrum, proving nothing)
    tier: str = "exact"
    #: the numerical reference spectrum (bands, rank, unexplained, slopes; numerical tier only)
    reference: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)

    def _headline(self) -> str:
        size = "none found" if self.least_size is None else str(self.least_size)
        return (f"least {self.family} bank {size} (counting bound {self.counting_bound}, "
                f"{'proved' if self.below_proved else 'evidence'} below), separating {self.separating}, "
                f"{self.theorem or 'computed'}, {self.tier}")

    def _summary(self) -> tuple[str, list[tuple[str, str]]]:
        rows = [("least separating bank", "none found" if self.least_size is None else f"{self.least_size} inputs"),
                ("counting bound", f"{self.counting_bound} inputs (fewer cannot separate)"),
                ("below the least size", "proved" if self.below_proved else f"rank defects {self.defects_below}"),
                ("separating, generic", f"{self.separating}, {self.generic}"),
                ("by seed", ", ".join(f"{k}: {v}" for k, v in self.least_by_seed.items()))]
        return (f"Least {self.family} bank ({self.theorem or 'computed'}; {self.tier})",
                rows + [("note", n) for n in self.notes])


def _below(m: int | None, bound: int, seeds, defect) -> tuple[list[int], bool]:
    """Why ``m - 1`` inputs fail: ``([], True)`` below the counting bound (proved), else
    the rank defects ``defect(seed)`` at ``m - 1`` for every seed (evidence) and False."""
    if m is None or m - 1 < 1 or m - 1 < bound:
        return [], True
    return [defect(s) for s in seeds], False


def _least(s: int, first: int, sizes, reaches, tried: dict) -> "int | None":
    """The least ``m`` of ``sizes`` at which ``reaches(s, m)``, or None; for the seed ``first``
    each size tried is recorded in ``tried`` (the search of every route)."""
    for m in sizes:
        reached = reaches(s, m)
        if s == first:
            tried[m] = reached
        if reached:
            return m
    return None


def _too_few_rows(m: int | None, proved_below: bool, visible: int, per_input: int) -> None:
    """The post-condition of "m - 1 inputs proved insufficient": ``(m - 1) d n`` rows are fewer
    than the ``visible`` columns (recounted here, not read from the counting bound)."""
    if proved_below and m is not None and m > 1 and (m - 1) * per_input >= visible:
        raise InternalError(f"m - 1 = {m - 1} inputs give {(m - 1) * per_input} rows for {visible} visible "
                            "columns, yet were called proved insufficient; please report this bug")


def least_bank(arch: Architecture, family: str = "random", trials: int = 3, seed: int = 0,
               max_size: int = 64, values: str = "identity", method: str = "exact",
               digits: int = 300, max_memory_gib: float | None = None,
               t_exponent: int = NUMERICAL_T_EXPONENT) -> BankResult:
    """Least separating bank size of ``family`` (see the Notes): by the divided
    frame where :data:`~symattn.theorems.statements.APP_D3` covers ``arch``, else by the
    certified orders of a reference bank; with ``method="numerical"`` the least bank whose
    numerical spectrum at ``digits`` digits equals that of a large reference bank
    (:func:`_numerical`; the tier of transformer blocks, whose exact series are refused), refused
    beyond ``max_memory_gib`` (:func:`~symattn.analyses.numerical_spectrum.require_numerical`), its
    final-pair slopes at ``t = 2^-t_exponent, 2^-(t_exponent + 1)``.

    Parameters
    ----------
    arch : Architecture
    family : {"random", "integer", "sparse"}, optional
        The bank family searched (:data:`FAMILIES`).
    trials : int, optional
        Seeded banks tried per size.
    seed : int, optional
    max_size : int, optional
        The largest bank size tried.
    values : {"identity", "random"}, optional
    method : {"exact", "numerical"}, optional
    digits : int, optional
        Working digits of the numerical tier.
    max_memory_gib : float, optional
        The numerical tier's memory limit.
    t_exponent : int, optional
        The numerical tier's final pair ``t = 2^-t_exponent, 2^-(t_exponent + 1)``.

    Returns
    -------
    BankResult
        The least separating size, the counting bound, whether the bank separates and how it
        is known (``tier``, ``theorem``).

    Raises
    ------
    SymattnError
        For a bad argument (depth or trials below 1, a numerical search off the identity
        path).
    Undecided
        When the exact series refuse the stack
        (:class:`~symattn.core.algebras.functions.NotRational`: use ``method="numerical"``).

    Notes
    -----
    A bank of ``m`` inputs *separates* when it reaches the generic contact
    orders of the native path. Where the statement
    :data:`~symattn.theorems.statements.APP_D3` covers the architecture (the paper's
    stack: equal widths ``d``, Theorem 4's path ``Q_i = t U_i``, ``K_i = t W_i``,
    ``V_i = I``) that is exactly when the divided frame ``E(0)`` of App. D.3 has full
    column rank on the visible columns (the complement of the exact kernel,
    :meth:`symattn.model.symmetries.GaugeKernel.visible`): each layer's columns are
    divided by ``t^beta_i`` (App. D.2) and read at ``t = 0``. Then the bank Jacobian
    has exactly Theorem 4's Smith factors.

    :func:`least_bank` searches ``m`` upward from the counting bound
    ``ceil(visible / (d n))`` (every input gives ``d n`` outputs; fewer rows than
    columns cannot have full column rank), for banks of a *family*:

    * ``random``: rationals ``a/b``, ``|a| <= 4``, ``1 <= b <= 4`` (:func:`symattn.model.parameters.random_bank`);
    * ``integer``: integers in ``[-2, 2]``;
    * ``sparse``: about half the entries zero, the rest ``+-1``.

    At the size it returns, ``E(0)`` is full rank **mod p**, which proves full
    rank over Q (a nonzero minor mod p is a nonzero rational minor): the bank
    separates, exactly. Why ``m - 1`` fails is *evidence* when ``m - 1`` reaches
    the counting bound: the rank defect of ``E(0)`` on ``trials`` banks of the
    family (a modular rank can only be lower than the rational one, so a defect mod p is
    evidence, not proof); below the counting bound it is *proved* (too few rows). ``generic``
    says whether every seed tried gave the same least size.

    Where no statement gives a divided frame (skips, masks, several heads), a bank of
    ``m`` inputs is taken as the first ``m`` of one seeded reference bank ``R`` of the
    family, whose contact orders are certified by
    :func:`symattn.analyses.spectrum.native_spectrum`. Removing inputs can only raise
    the partial sums of the Smith orders (fewer minors) and reducing mod p can only
    raise them again, so when the modular orders of ``R[:m]`` equal the certified
    orders of ``R``, ``R[:m]`` has exactly those orders over Q: it *separates*
    (reaches ``R``'s spectrum), proved. Other seeds are compared with the same
    certified orders mod p only (evidence). Those results carry ``theorem = None`` and
    :data:`~symattn.theorems.statements.NO_THEOREM`.

    Examples
    --------
    >>> r = least_bank(Architecture.uniform(2, 2, 1, 2, "exp"), trials=2)
    >>> r.least_size, r.counting_bound, r.separating, r.generic
    (6, 3, True, True)
    >>> r = least_bank(Architecture.uniform(1, 2, 1, 2, "exp", skip="value"), trials=2)
    >>> r.least_size, r.counting_bound, r.separating, r.theorem
    (3, 2, True, None)
    >>> r = least_bank(Architecture.uniform(1, 2, 1, 3, "exp", norm="post", eps="1/10"), trials=1,
    ...                method="numerical", digits=40)
    >>> r.least_size, r.tier, r.theorem, r.below_proved
    (4, 'numerical at 40 digits', None, False)
    """
    require_architecture(arch)
    require_choice(require_str(family, "family"), "family", FAMILIES)
    require_int(trials, "trials", 1, 1000)
    require_int(seed, "seed", 0, 2**63 - 1)
    require_int(max_size, "max_size", 1, 4096)
    require_choice(require_str(method, "method"), "method", METHODS)
    if arch.depth < 1 or trials < 1:
        raise SymattnError("need depth >= 1 and trials >= 1")
    if method == "numerical":
        if values != "identity":
            raise SymattnError("the numerical bank search runs on the path with identity values")
        require_int(t_exponent, "t_exponent", 2, 200)
        return _numerical(arch, family, trials, seed, max_size, digits, max_memory_gib, t_exponent)
    try:
        if statements.APP_D3.covers(arch):
            return _framed(arch, family, trials, seed, max_size, values)
        return _referenced(arch, family, trials, seed, max_size, values)
    except NotRational as exc:
        raise NotRational(f"{exc}; for the least bank: symattn bank --method numerical") from None


def _framed(arch: Architecture, family: str, trials: int, seed: int, max_size: int, values: str) -> BankResult:
    """The search by the divided frame ``E(0)`` (App. D.3)."""
    start = time.perf_counter()
    per_input = arch.d * arch.tokens
    _, visible = frame_rank(arch, family_bank(arch, 1, family, seed), seed, values)
    bound = -(-visible // per_input)
    tried: dict = {}
    by_seed = {s: _least(s, seed, range(bound, max_size + 1), lambda s, m: frame_rank(
        arch, family_bank(arch, m, family, s), seed, values)[0] == visible, tried) for s in range(seed, seed + trials)}
    m = by_seed[seed]
    defects, proved_below = _below(m, bound, range(seed, seed + trials),
                                   lambda s: visible - frame_rank(arch, family_bank(arch, m - 1, family, s), seed,
                                                                  values)[0])
    _too_few_rows(m, proved_below, visible, per_input)
    generic = len(set(by_seed.values())) == 1
    notes = [f"separating at m = {m}: rank E(0) = {visible} mod p, hence over Q (exact)"
             if m is not None else f"no separating bank of this family up to {max_size} inputs",
             f"counting bound: ceil({visible} visible columns / {per_input} outputs per input) = {bound}"]
    if m is not None and m > 1:
        notes.append(f"m - 1 = {m - 1}: " + ("below the counting bound (proved: too few rows)" if proved_below
                     else f"rank defects {defects} on {trials} banks of the family (evidence, mod p)"))
    notes.append(f"least size by seed: {by_seed} ({'the same for every seed: generic' if generic else 'design-dependent'})")
    return BankResult(family, m, bound, m is not None, generic, visible,
                      {str(k): v for k, v in by_seed.items()}, defects, proved_below,
                      round(time.perf_counter() - start, 3), statements.label(statements.APP_D3, arch), notes,
                      {str(k): v for k, v in sorted(tried.items())})


def _referenced(arch: Architecture, family: str, trials: int, seed: int, max_size: int, values: str) -> BankResult:
    """The search by the certified orders of a reference bank (no divided frame)."""
    start = time.perf_counter()
    per_input = arch.d * arch.tokens
    size = min(max_size, 2 * -(-arch.native_size // per_input) + 2)
    while True:
        R = family_bank(arch, size, family, seed)
        spec = native_spectrum(arch, bank=R, seed=seed, values=values, fallback=False)
        if spec.certified and not spec.undecided or size >= max_size:
            break
        size = min(max_size, 2 * size)
    visible = spec.rank + spec.undecided
    bound = -(-visible // per_input)
    target = sorted(b.order for b in spec.bands for _ in range(b.multiplicity))
    notes = [note for note in [statements.outside_note(arch)] if note]
    theorem = statements.label(statements.APP_D3, arch)
    if not spec.certified or spec.undecided:
        notes.append(f"the reference bank of {size} inputs has no certified spectrum ({spec.certificate}, "
                     f"{spec.undecided} undecided): no bank is proved to separate")
        return BankResult(family, None, bound, False, False, visible, {}, [], False,
                          round(time.perf_counter() - start, 3), theorem, notes)
    tried: dict = {}
    banks: dict = {}

    def reaches(s: int, m: int) -> bool:
        if s not in banks:
            banks[s] = family_bank(arch, size, family, s)
        return bank_orders(arch, banks[s][:m], spec.order, seed, values) == target

    by_seed = {s: _least(s, seed, range(bound, size + 1), reaches, tried) for s in range(seed, seed + trials)}
    m = by_seed[seed]
    defects, proved_below = _below(m, bound, range(seed, seed + trials), lambda s: visible - len(
        bank_orders(arch, family_bank(arch, size, family, s)[: m - 1], spec.order, seed, values)))
    _too_few_rows(m, proved_below, visible, per_input)
    generic = len(set(by_seed.values())) == 1
    notes += [f"reference bank: {size} inputs of the family (seed {seed}), orders certified ({spec.certificate}): "
              f"{target}",
              f"separating at m = {m}: the first m reference inputs have the certified orders mod p, hence "
              "over Q (sub-banks and reduction mod p only raise them): exact" if m is not None else
              f"no prefix of the reference bank up to {size} inputs reaches its orders",
              f"counting bound: ceil({visible} visible columns / {per_input} outputs per input) = {bound}"]
    if m is not None and m > 1:
        notes.append(f"m - 1 = {m - 1}: " + ("below the counting bound (proved: too few rows)" if proved_below
                     else f"the orders mod p differ from the certified ones on {trials} banks (rank "
                          f"defects {defects}; evidence: orders mod p are upper bounds)"))
    notes.append(f"least size by seed: {by_seed} (seeds other than {seed}: modular orders equal to the "
                 f"certified ones, evidence; {'the same for every seed: generic' if generic else 'design-dependent'})")
    return BankResult(family, m, bound, m is not None, generic, visible, {str(k): v for k, v in by_seed.items()},
                      defects, proved_below, round(time.perf_counter() - start, 3), theorem, notes,
                      {str(k): v for k, v in sorted(tried.items())})


def _numerical(arch: Architecture, family: str, trials: int, seed: int, max_size: int, digits: int,
               max_memory_gib: float | None = None, t_exponent: int = NUMERICAL_T_EXPONENT) -> BankResult:
    """The search by the numerical spectrum at ``digits`` digits
    (:class:`~symattn.analyses.numerical_spectrum.PathJacobians`): a reference bank of the family
    (twice :func:`~symattn.analyses.numerical_spectrum.default_bank_size` inputs, at most ``max_size``)
    gives the reference spectrum (orders, multiplicities, rank, unexplained kernel); ``m`` is the
    least prefix of each seed's bank with the same spectrum. Unresolved slopes (farther than
    :data:`~symattn.analyses.numerical_spectrum.RESOLVED_SLOPE_DISTANCE` from integers) at the
    reference, or at a prefix of the reference's rank, are :class:`~symattn.core.errors.Unresolved`;
    so is a prefix of the first seed's bank beyond ``m`` that leaves the reference spectrum (over Q
    more inputs can only lower the orders: the numerics are not consistent at these t).
    Numerical: nothing is proved about smaller banks, nor that the bank returned separates."""
    from symattn.analyses.numerical_spectrum import PathJacobians, default_bank_size, require_numerical

    start = time.perf_counter()
    rows = arch.widths[-1] * arch.tokens
    size = min(max_size, 2 * default_bank_size(arch))
    ts = (f"1/{2 ** t_exponent}", f"1/{2 ** (t_exponent + 1)}")
    require_numerical(arch, size * trials, digits, "this numerical bank search", max_memory_gib)
    tier = f"numerical at {digits} digits"
    jacobians = {seed: PathJacobians(arch, family_bank(arch, size, family, seed), seed, digits, ts)}
    ref = jacobians[seed].spectrum()
    where = f"t = {', '.join(ref.ts)}, {digits} digits"
    if not ref.resolved:
        raise Unresolved(f"the reference bank of {size} {family} inputs has final-pair slopes up to "
                         f"{ref.max_slope_error:.2g} from integers at {where}: its orders are not resolved, so "
                         "no least bank is given (smaller t and more digits are needed)")
    bound = -(-ref.rank // rows)
    tried: dict = {}

    def spectrum(s: int, m: int):
        if s not in jacobians:
            jacobians[s] = PathJacobians(arch, family_bank(arch, size, family, s), seed, digits, ts)
        return jacobians[s].spectrum(m)

    total = sum(o * k for o, k in ref.bands)
    unresolved: dict = {}

    def reaches(s: int, m: int) -> bool:
        n = spectrum(s, m)
        if n.rank == ref.rank and not n.resolved and abs(n.slope_sum - total) <= 0.5:
            raise Unresolved(f"{m} inputs of seed {s} have the reference rank {ref.rank} and total order "
                             f"{n.slope_sum:.3g} (reference {total}) but final-pair slopes up to "
                             f"{n.max_slope_error:.2g} from integers at {where}: whether they reach the reference "
                             "spectrum is not resolved")
        # an unresolved prefix whose slopes sum farther than 1/2 from the reference's total order has
        # other orders: it does not reach the reference (numerically)
        return n.resolved and n.key() == ref.key()

    def least(s: int) -> "int | str | None":
        try:
            return _least(s, seed, range(bound, size + 1), reaches, tried)
        except Unresolved as exc:
            if s == seed:
                raise
            unresolved[s] = str(exc)
            return "undecided"

    by_seed = {s: least(s) for s in range(seed, seed + trials)}
    m = by_seed[seed]
    for k in range(m or size, size):
        if spectrum(seed, k).key() != ref.key():
            raise Unresolved(f"{m} inputs reach the reference spectrum but {k} leave it at {where} (more inputs "
                             "can only lower the orders): the numerical spectra are not consistent at these t")
    defects, _ = _below(m, bound, range(seed, seed + trials), lambda s: ref.rank - spectrum(s, m - 1).rank)
    generic = len(set(by_seed.values())) == 1 and not unresolved
    bands = ", ".join(f"t^{o} x {k}" for o, k in ref.bands)
    notes = [f"{tier}: the reference bank of {size} inputs of the family (seed {seed}) has orders {bands}, "
             f"rank {ref.rank} of {ref.parameters}, kernel {ref.declared} declared + {ref.unexplained} unexplained "
             f"(slopes within {ref.max_slope_error:.2g} of integers at {where})",
             f"reaching the reference at m = {m}: the first m inputs have the reference's numerical spectrum "
             "(not a proof that they separate)" if m is not None else
             f"no prefix of the reference bank up to {size} inputs reaches its numerical spectrum",
             f"counting bound: ceil({ref.rank} (numerical rank) / {rows} outputs per input) = {bound}"]
    if m is not None and m > 1:
        notes.append(f"m - 1 = {m - 1}: no smaller bank reached the reference at these t and digits"
                     + (f" (rank defects {defects} on {trials} banks of the family)" if m - 1 >= bound else
                        " (below the counting bound of the numerical rank)"))
    notes.append(f"least size by seed: {by_seed} ({'the same for every seed' if generic else 'design-dependent'}; "
                 "numerical)" if not unresolved else
                 f"least size by seed: {by_seed} (genericity undecided: " + "; ".join(unresolved.values()) + ")")
    notes.append("no theorem of the paper covers this search (theorem: null)")
    return BankResult(family, m, bound, m is not None, generic, ref.parameters - ref.declared,
                      {str(k): v for k, v in by_seed.items()}, defects, False,
                      round(time.perf_counter() - start, 3), None, notes,
                      {str(k): v for k, v in sorted(tried.items())}, tier,
                      {k: ref.to_json()[k] for k in ("bands", "rank", "declared", "unexplained", "kernel", "bank_size",
                                                     "digits", "ts", "max_slope_error", "exactness")})
