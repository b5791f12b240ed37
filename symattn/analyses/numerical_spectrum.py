"""The contact spectrum along the collapse path where exact series cannot run (numerical at N digits).

A LayerNorm takes ``1/sqrt(var + eps)`` of a constant that is rarely a rational square,
and ``tanh``, GELU and SiLU of a nonzero rational are transcendental, so the exact and
modular series of :func:`symattn.analyses.spectrum.native_spectrum` refuse such stacks
(:class:`~symattn.core.algebras.functions.NotRational`, said as such). This module gives
their spectrum numerically, as in App. F.2: the Jacobian ``J(t)`` of the bank observation
at ``Q = t U``, ``K = t W`` (query and key biases scale with their factors), every other
block fixed (:func:`~symattn.analyses.collapse.path_point_of`), is evaluated in python-flint
ball arithmetic at ``digits`` digits (:func:`~symattn.analyses.numerics.observation_jacobian`)
at two small ``t``; its singular values on the exact orthogonal complement of the declared
symmetries (:mod:`symattn.model.symmetries`, each checked numerically: ``|J xi|`` below
the noise) are computed by mpmath at the same precision, and each band's order is the
final-pair slope ``log(s(t1)/s(t2)) / log(t1/t2)`` rounded to the nearest integer (the
result records the largest distance to it). Singular values below the noise floor
``10^(-3 digits/4)`` times the largest are the kernel that no declared symmetry explains.

Everything here is numerical at ``digits`` digits: orders, ranks and the unexplained
kernel are estimates, never certificates; ``theorem`` is None (no statement of the
paper covers a transformer block).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Callable, Sequence

import numpy as np

from symattn.core.algebras import BallAlgebra
from symattn.core.errors import CheckFailed, SymattnError, Undecided
from symattn.core.linalg import kernel_complement
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank
from symattn.model.symmetries import declared_symmetries
from symattn.analyses.collapse import path_point_of
from symattn.analyses.numerics import observation_jacobian

__all__ = ["MAX_NUMERICAL_PARAMETERS", "RESOLVED_SLOPE_DISTANCE", "NumericalSpectrum", "PathJacobians",
           "FRAME_MAX_DIGITS", "FRAME_SECONDS", "GROWN_SIZES", "default_bank_size", "frame_check", "grown_bank_size", "grown_numerical_bank", "numerical_bytes", "numerical_path_spectrum", "require_numerical"]


@dataclass
class NumericalSpectrum:
    """Result of :func:`numerical_path_spectrum` (numerical at ``digits`` digits)."""

    bands: list[tuple[int, int]]
    rank: int
    declared: int
    unexplained: int
    parameters: int
    bank_size: int
    digits: int
    ts: list[str]
    max_slope_error: float
    kernel_kinds: dict
    seconds: float
    architecture: str = ""
    exactness: str = "numerical"
    theorem: None = None
    notes: list[str] = field(default_factory=list)
    #: the sum of the final-pair slopes (the total order, resolved even where the bands are not)
    slope_sum: float = 0.0
    #: the second method's verdict on the bands (:func:`frame_check`): ``"confirmed"``,
    #: ``"corrected"`` (the bands are the frame's), ``"unsettled"`` or ``""`` (not run)
    frame: str = ""
    #: a certified lower bound on the rank over ``R((t))`` (the rank of ``J`` at the path point
    #: ``t = 1``, :func:`~symattn.analyses.path_rank.path_rank`), or None (not run or refused)
    certified_rank: int | None = None

    @property
    def kernel(self) -> int:
        """Declared symmetries plus the unexplained kernel."""
        return self.declared + self.unexplained

    @property
    def resolved(self) -> bool:
        """Whether every final-pair slope lies within :data:`RESOLVED_SLOPE_DISTANCE` of its integer,
        or the numerical frame settled the bands (:func:`frame_check`)."""
        return self.max_slope_error <= RESOLVED_SLOPE_DISTANCE or self.frame in ("confirmed", "corrected")

    def key(self) -> tuple:
        """What a bank search compares: ``(bands, rank, unexplained)``."""
        return tuple(self.bands), self.rank, self.unexplained

    def agrees(self, other: "NumericalSpectrum") -> bool:
        """The same spectrum: the same :meth:`key` where both are resolved, else the same rank,
        unexplained kernel and total order ``round(slope_sum)`` (resolved even where the bands are not)."""
        if self.resolved and other.resolved:
            return self.key() == other.key()
        return (self.rank, self.unexplained, round(self.slope_sum)) == \
            (other.rank, other.unexplained, round(other.slope_sum))

    def to_json(self) -> dict:
        d = asdict(self)
        d["kernel"] = self.kernel
        return d


def _scaled_point(arch: Architecture, point: dict, t: Fraction) -> dict:
    return {b.name: (point[b.name] * t if b.is_factor else point[b.name]) for b in arch.blocks}


#: The largest distance of a final-pair slope to its integer at which the orders count as resolved
#: (farther, the bands are not separated at these ``t``).
RESOLVED_SLOPE_DISTANCE = 0.25

#: The largest stack (native parameters) the numerical tier takes.
MAX_NUMERICAL_PARAMETERS = 200


def default_bank_size(arch: Architecture) -> int:
    """Inputs of the default numerical bank: enough rows for ``1.5 P`` plus two inputs.

    Parameters
    ----------
    arch : Architecture
        The architecture.

    Returns
    -------
    int

    Examples
    --------
    >>> default_bank_size(Architecture.uniform(1, 2, 1, 3, "exp", norm="post"))
    5
    """
    return math.ceil(1.5 * arch.native_size / (arch.widths[-1] * arch.tokens)) + 2


def numerical_bytes(arch: Architecture, inputs: int, digits: int) -> int:
    """Estimated peak bytes of the numerical Jacobians of ``inputs`` inputs at ``digits`` digits
    (two ``t``; the forward-mode balls, their mpmath copies, the products on the complement and
    the singular values: 32 numbers of ``digits`` digits and their Python objects per cell). Two
    measurements, both below the estimate by less than a factor 2.3: the ``D = 2``, ``d = 2``
    post-norm bank search (three banks of 16 inputs, 300 digits) peaked 24 MiB above the imports
    (estimated 52 MiB); a ``d = 3``, ``r = 2`` post-norm GELU layer (22 inputs, 150 digits, P = 50)
    46 MiB (estimated 55 MiB). No test holds it to its peaks.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    inputs : int
        The bank's inputs.
    digits : int
        The working precision.

    Returns
    -------
    int

    Examples
    --------
    >>> numerical_bytes(Architecture.uniform(1, 2, 1, 3, "exp", norm="post"), 5, 300) < 2**22
    True
    """
    cells = max(inputs, 1) * arch.widths[-1] * arch.tokens * arch.native_size
    return int(cells * 32 * (digits * 0.42 + 120))


def require_numerical(arch: Architecture, inputs: int, digits: int, what: str,
                      max_memory_gib: float | None = None) -> None:
    """Refuse a numerical tier beyond :data:`MAX_NUMERICAL_PARAMETERS` or ``max_memory_gib``
    (:func:`numerical_bytes`; :func:`symattn.core.limits.require_memory`).

    Parameters
    ----------
    arch : Architecture
        The architecture.
    inputs : int
        The bank's inputs.
    digits : int
        The working precision.
    what : str
        The analysis, for the message.
    max_memory_gib : float, optional
        The memory limit.

    Raises
    ------
    SymattnError
        Too many parameters, or the estimate exceeds the memory limit (one line).

    Examples
    --------
    >>> require_numerical(Architecture.uniform(1, 2, 1, 3, "exp", norm="post"), 5, 300, "this spectrum")
    """
    from symattn.core.limits import require_memory

    if arch.native_size > MAX_NUMERICAL_PARAMETERS:
        raise SymattnError(f"the numerical tier is limited to {MAX_NUMERICAL_PARAMETERS} native parameters "
                           f"(this stack has {arch.native_size})")
    require_memory(numerical_bytes(arch, inputs, digits), what, max_memory_gib)


class PathJacobians:
    """The Jacobians of a bank observation at the two ``t`` of the final-pair slopes, on the
    complement of the declared symmetries (numerical at ``digits`` digits; see the module
    docstring). :meth:`spectrum` reads the spectrum of any prefix ``bank[:m]`` from their
    first rows (rows are ordered input first), so a bank search evaluates each Jacobian once.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    bank : numpy.ndarray
        Input banks ``X``.
    seed : int
        The seed of the path point.
    digits : int
        The working precision, 20 to 400.
    ts : sequence of str
        The two path parameters, ``0 < t2 < t1 < 1``.
    progress : callable, optional
        Progress lines.

    Raises
    ------
    SymattnError
        ``digits`` or ``ts`` out of range; a prefix size out of range (:meth:`spectrum`).
    CheckFailed
        A declared symmetry is not a kernel vector at ``digits`` digits.

    Examples
    --------
    >>> arch = Architecture.uniform(1, 2, 1, 3, "exp", norm="post", eps="1/10")
    >>> J = PathJacobians(arch, random_bank(arch, 5, 0), digits=40)
    >>> J.spectrum(1).rank, J.spectrum().rank
    (5, 9)
    """

    def __init__(self, arch: Architecture, bank: np.ndarray, seed: int = 0, digits: int = 300,
                 ts: Sequence[str] = ("1/65536", "1/131072"),
                 progress: Callable[[str], None] | None = None) -> None:
        import mpmath

        say = progress or (lambda msg: None)
        if digits < 20 or digits > 400:
            raise SymattnError(f"digits must be in [20, 400], got {digits}")
        t1, t2 = (Fraction(t) for t in ts)
        if not 0 < t2 < t1 < 1:
            raise SymattnError(f"need 0 < t2 < t1 < 1, got {ts}")
        start = time.perf_counter()
        self.arch, self.digits, self.ts, self.say = arch, digits, (t1, t2), say
        P = arch.native_size
        self.rows = arch.widths[-1] * arch.tokens
        self.size = 0
        point = path_point_of(arch, seed)
        ctx = self.ctx = mpmath.mp.clone()
        ctx.dps = digits
        self.products, self.kinds, self.declared = [], {}, 0
        self._points, self._bases, self._vectors = [], [], []
        for t in (t1, t2):
            theta = _scaled_point(arch, point, t)
            symmetries = declared_symmetries(arch, theta)
            kinds = {}
            for s in symmetries:
                kinds[s.kind] = kinds.get(s.kind, 0) + 1
            self.kinds = kinds
            vectors = [s.vector for s in symmetries]
            C = kernel_complement(vectors, P)
            self.declared = P - C.shape[1]
            Q, _ = ctx.qr(ctx.matrix([[int(v) for v in row] for row in C]))  # orthonormal basis of the complement
            self._points.append(theta)
            self._bases.append(Q[:, : C.shape[1]])
            self._vectors.append(vectors)
            self.products.append(None)
        self.seconds = 0.0
        self.extend(bank)
        self.seconds = time.perf_counter() - start

    def extend(self, bank: np.ndarray) -> None:
        """Append the rows of more inputs (the bank's next ones): a grown bank evaluates each input once."""
        import mpmath

        ctx, P, start = self.ctx, self.arch.native_size, time.perf_counter()
        for k, t in enumerate(self.ts):
            self.say(f"Jacobian at t = {t} ({P} parameters, {len(bank)} more inputs, {self.digits} digits)")
            J = observation_jacobian(self.arch, self._points[k], bank, BallAlgebra(self.digits))
            M = ctx.matrix([[ctx.mpf(v.mid().str(self.digits + 5, radius=False)) for v in row] for row in J])
            scale = max(abs(x) for x in M) or ctx.mpf(1)
            vectors = self._vectors[k]
            if vectors:
                X = ctx.matrix([[ctx.mpf(Fraction(v).numerator) / Fraction(v).denominator for v in vec]
                                for vec in vectors]).T
                residual = max(abs(x) for x in M * X)
                if residual > scale * ctx.mpf(10) ** (-(self.digits // 2)):
                    raise CheckFailed(f"a declared symmetry is not a kernel vector at {self.digits} digits "
                                       f"(|J xi| = {mpmath.nstr(residual, 3)})")
            new = M * self._bases[k]
            old = self.products[k]
            if old is None:
                self.products[k] = new
            else:
                joined = ctx.matrix(old.rows + new.rows, old.cols)
                for i in range(old.rows):
                    for j in range(old.cols):
                        joined[i, j] = old[i, j]
                for i in range(new.rows):
                    for j in range(new.cols):
                        joined[old.rows + i, j] = new[i, j]
                self.products[k] = joined
        self.size += len(bank)
        self.seconds += time.perf_counter() - start

    def spectrum(self, inputs: int | None = None) -> NumericalSpectrum:
        """The numerical spectrum of the first ``inputs`` inputs of the bank (default: all)."""
        ctx, (t1, t2), P = self.ctx, self.ts, self.arch.native_size
        m = self.size if inputs is None else inputs
        if not 1 <= m <= self.size:
            raise SymattnError(f"a prefix of the bank has 1 to {self.size} inputs, got {m}")
        start = time.perf_counter()
        sigmas = []
        for JQ in self.products:
            rows = JQ[: m * self.rows, :] if m < self.size else JQ
            sigmas.append(sorted((abs(x) for x in ctx.svd_r(rows, compute_uv=False)), reverse=True))
        floor = ctx.mpf(10) ** (-(3 * self.digits // 4))
        s1, s2 = sigmas
        top = max(s1[0], s2[0])
        rank = sum(1 for x in s2 if x > floor * top)
        slopes = [float(ctx.log(a / b) / ctx.log(ctx.mpf(t1.numerator) / t1.denominator
                                                  / (ctx.mpf(t2.numerator) / t2.denominator)))
                  for a, b in zip(s1[:rank], s2[:rank])]
        orders = [round(x) for x in slopes]
        error = max((abs(x - o) for x, o in zip(slopes, orders)), default=0.0)
        counts: dict[int, int] = {}
        for o in orders:
            counts[o] = counts.get(o, 0) + 1
        declared, digits = self.declared, self.digits
        notes = [f"numerical at {digits} digits: ball-arithmetic Jacobians at t = {t1}, {t2}, mpmath singular "
                 f"values on the complement of the {declared} declared symmetries; orders are final-pair slopes "
                 f"rounded (largest distance to an integer {error:.2g})",
                 "no theorem of the paper covers this architecture (theorem: null)"]
        if error > RESOLVED_SLOPE_DISTANCE:  # said as in NumericalSpectrum.resolved
            notes.append("the slopes are far from integers: the bands are not separated at these t (use smaller t "
                         "and more digits)")
        return NumericalSpectrum(sorted(counts.items()), rank, declared, (P - declared) - rank, P, m, digits,
                                 [str(t1), str(t2)], error, self.kinds,
                                 self.seconds + time.perf_counter() - start, self.arch.describe(), notes=notes,
                                 slope_sum=sum(slopes))


def numerical_path_spectrum(arch: Architecture, seed: int = 0, digits: int = 300,
                            ts: Sequence[str] = ("1/65536", "1/131072"), bank_size: int | None = None,
                            progress: Callable[[str], None] | None = None) -> NumericalSpectrum:
    """The path spectrum of ``arch`` numerically at ``digits`` digits (see the module docstring).

    ``ts``: the two path parameters of the final-pair slopes (rationals, ``t1 > t2``);
    ``bank_size``: inputs of the seeded random bank (default: grown, :func:`grown_numerical_bank`).

    Parameters
    ----------
    arch : Architecture
        The architecture.
    seed : int
        The seed of the bank and the path point.
    digits : int
        The working precision.
    ts : sequence of str
        The two path parameters.
    bank_size : int, optional
        The bank's inputs (default: grown).
    progress : callable, optional
        Progress lines.

    Returns
    -------
    NumericalSpectrum

    Examples
    --------
    >>> arch = Architecture.uniform(1, 2, 1, 3, "exp", norm="post", eps="1/10")
    >>> s = numerical_path_spectrum(arch, digits=40)
    >>> s.bands, s.rank, s.declared, s.unexplained, s.theorem
    ([(0, 6), (1, 3)], 9, 3, 0, None)
    """
    if bank_size is None:
        spectrum = grown_numerical_bank(arch, seed, digits, ts, progress)
    else:
        spectrum = PathJacobians(arch, random_bank(arch, bank_size, seed), seed, digits, ts, progress).spectrum()
    return rank_check(arch, frame_check(arch, spectrum, seed, progress), seed, progress)


def rank_check(arch: Architecture, spectrum: NumericalSpectrum, seed: int = 0,
               progress: Callable[[str], None] | None = None) -> NumericalSpectrum:
    """``spectrum`` with a certified lower bound on its rank (``certified_rank``): the rank of the
    same bank's Jacobian at the path point ``t = 1`` in balls (:func:`~symattn.analyses.path_rank.path_rank`),
    a bound on the rank over ``R((t))`` where the network is analytic on the path. Its note says
    how much of the numerical rank and kernel it proves, and where the numerical rank is below it
    (the numerical tier missed orders)."""
    from symattn.analyses.contact import setup
    from symattn.analyses.path_rank import path_rank

    say = progress or (lambda msg: None)
    try:
        s = setup(arch, seed, "identity", "numerical", None, say)
        say("certified rank: the Jacobian at the path point t = 1 in balls")
        found = path_rank(s, random_bank(arch, spectrum.bank_size, seed))
    except (SymattnError, Undecided) as exc:  # refused, outside the kernel split, or not analytic
        spectrum.notes.append(f"no certified rank ({exc})")
        return spectrum
    spectrum.certified_rank, visible = found.rank, s.visible
    if found.rank > spectrum.rank:
        spectrum.notes.append(f"the numerical rank {spectrum.rank} is below the certified {found.rank}: the numerical "
                              "bands miss orders (more digits or smaller t)")
    spectrum.notes.append(f"certified: rank >= {found.rank} over R((t)) (a nonzero {found.rank} x {found.rank} minor of "
                          f"J at the path point t = 1, python-flint balls at {found.digits} digits; the network is "
                          f"analytic on the path), so the unexplained kernel is at most {visible - found.rank}"
                          + (" and the rank and kernel are certified" if found.rank == spectrum.rank == visible
                             else ""))
    return spectrum


#: The numerical frame's precision cap: it doubles the spectrum's digits up to this while unsettled.
FRAME_MAX_DIGITS = 1200

#: Seconds the numerical frame may spend: it doubles the digits only while the next level, at four
#: times the last one's time, fits what is left.
FRAME_SECONDS = 300.0


def frame_check(arch: Architecture, spectrum: NumericalSpectrum, seed: int = 0,
                progress: Callable[[str], None] | None = None) -> NumericalSpectrum:
    """The bands of ``spectrum`` by a second numerical method: the Smith orders of a column-reduced
    frame (:func:`~symattn.analyses.frame_proof.numerical_frame`) of the same bank's Jacobian mod
    ``t^N`` (``N`` two past the largest slope order) in ball series
    (:func:`~symattn.core.algebras.ballseries.ball_series`: the series coefficients themselves, no
    small ``t``) at the spectrum's digits ``L``, at the two zero tolerances ``10^-(2L/5)`` and
    ``10^-(13L/15)``. Where the two give the same frame (no scale of the Jacobian between them),
    its bands are ``confirmed`` or ``corrected`` (the slopes split them otherwise: graded scales,
    as a LayerNorm at width 2 with a small ``eps`` puts singular values of one order at ``eps^k``,
    which two small ``t`` cannot tell from another order), and where its rank or kernel differ from
    the slopes' those too (scales below the slopes' floor). Where the two differ, the same at twice
    the digits, up to :data:`FRAME_MAX_DIGITS` and while the next level fits :data:`FRAME_SECONDS`;
    then ``unsettled`` (the slopes' bands stand).
    Numerical either way; the notes say which and at how many digits.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    spectrum : NumericalSpectrum
        The spectrum whose bands are checked.
    seed : int
        The seed of its path point.
    progress : callable, optional
        Progress lines.

    Returns
    -------
    NumericalSpectrum
        ``spectrum`` with the check's verdict in its notes.
    """
    from collections import Counter

    from symattn.analyses.collapse import bank_jacobian
    from symattn.analyses.contact import setup
    from symattn.analyses.frame_proof import numerical_frame
    from symattn.core.algebras.ballseries import ball_series

    say = progress or (lambda msg: None)
    N = max((o for o, _ in spectrum.bands), default=0) + 2
    try:
        s = setup(arch, seed, "identity", "numerical", None, say)
    except (SymattnError, Undecided) as exc:  # refused, or outside the kernel split
        spectrum.frame = "unsettled"
        spectrum.notes.append(f"no numerical frame (the declared symmetries do not split off: {exc})")
        return spectrum
    bank = random_bank(arch, spectrum.bank_size, seed)
    digits, found, start = spectrum.digits, None, time.perf_counter()
    while True:
        level = time.perf_counter()
        tolerances = (2 * digits // 5, 13 * digits // 15)
        say(f"numerical frame: the Jacobian mod t^{N} in ball series ({digits} digits), zero tolerances "
            f"10^-{tolerances[0]} and 10^-{tolerances[1]}")
        A = ball_series(N, digits)
        with A.field.working():
            J = bank_jacobian(arch, bank, s.U, s.W, s.V, A, s.columns, verify=0)
            found = [numerical_frame(J, tol) for tol in tolerances]
        if found[0] is not None and found[0] == found[1]:
            break
        now = time.perf_counter()
        if 2 * digits > FRAME_MAX_DIGITS or (now - start) + 4 * (now - level) > FRAME_SECONDS:
            spectrum.frame = "unsettled"
            why = "" if 2 * digits > FRAME_MAX_DIGITS else f"; more digits would pass its {FRAME_SECONDS:g} s"
            spectrum.notes.append(f"a numerically column-reduced frame of the Jacobian mod t^{N} does not settle "
                                  f"up to {digits} digits (it changes between its zero tolerances{why}): the "
                                  "slopes' bands stand, unconfirmed")
            return spectrum
        digits *= 2
    orders, gap = found[0]
    bands = sorted(Counter(orders).items())
    where = (f"a numerically column-reduced frame of the Jacobian mod t^{N} (ball series at {digits} digits; the "
             f"same frame at the zero tolerances 10^-{tolerances[0]} and 10^-{tolerances[1]})")
    if (bands, len(orders), gap) == (spectrum.bands, spectrum.rank, spectrum.unexplained):
        spectrum.frame = "confirmed"
        spectrum.notes.append(f"the bands are confirmed by {where}")
        return spectrum
    spectrum.frame = "corrected"
    slopes = ", ".join(f"t^{o} x {m}" for o, m in spectrum.bands)
    note = (f"the bands are those of {where}; the final-pair slopes gave {slopes} (within "
            f"{spectrum.max_slope_error:.2g} of integers)")
    if (len(orders), gap) != (spectrum.rank, spectrum.unexplained):
        note += (f"; its rank {len(orders)} and unexplained kernel {gap} replace the slopes' {spectrum.rank} and "
                 f"{spectrum.unexplained} (singular values below their floor, 10^-{3 * spectrum.digits // 4} of "
                 "the largest)")
    spectrum.notes.append(note)
    spectrum.bands, spectrum.rank, spectrum.unexplained = bands, len(orders), gap
    return spectrum


#: Prefix sizes a grown numerical bank compares: ``default_bank_size`` and each next one half larger.
GROWN_SIZES = 5


def grown_bank_size(arch: Architecture) -> int:
    """Inputs of the largest prefix :func:`grown_numerical_bank` evaluates.

    Parameters
    ----------
    arch : Architecture
        The architecture.

    Returns
    -------
    int

    Examples
    --------
    >>> grown_bank_size(Architecture.uniform(1, 2, 1, 3, "exp", norm="post"))   # 5, 7, 10, 15, 22
    22
    """
    size = default_bank_size(arch)
    for _ in range(GROWN_SIZES - 1):
        size += max(1, size // 2)
    return size


def grown_numerical_bank(arch: Architecture, seed: int = 0, digits: int = 300,
                         ts: Sequence[str] = ("1/65536", "1/131072"),
                         progress: Callable[[str], None] | None = None) -> NumericalSpectrum:
    """The numerical spectrum of the least prefix of a seeded bank whose spectrum equals that of the next
    larger prefix (:meth:`NumericalSpectrum.agrees`): evidence that it separates (a bank too small has
    orders that are too high: ``1.5 P`` rows did not separate the ``D = 2`` post-norm stack). The
    prefixes are :func:`default_bank_size` and each next one half larger (:data:`GROWN_SIZES` of
    them, one Jacobian of the largest); the result's notes say which prefix and whether it was stable.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    seed : int
        The seed of the bank and the path point.
    digits : int
        The working precision.
    ts : sequence of str
        The two path parameters.
    progress : callable, optional
        Progress lines.

    Returns
    -------
    NumericalSpectrum

    Examples
    --------
    >>> s = grown_numerical_bank(Architecture.uniform(1, 2, 1, 3, "exp", norm="post", eps="1/10"), digits=40)
    >>> s.bank_size, s.notes[-1]
    (5, 'bank auto: numerical spectra equal at 5 inputs and at the next larger prefix, 7 (evidence that 5 separate)')
    """
    sizes = [default_bank_size(arch)]
    while len(sizes) < GROWN_SIZES:
        sizes.append(sizes[-1] + max(1, sizes[-1] // 2))
    bank = random_bank(arch, sizes[-1], seed)  # seeded banks nest: each prefix is random_bank(m)
    J = PathJacobians(arch, bank[: sizes[1]], seed, digits, ts, progress)
    spectra = [J.spectrum(sizes[0]), J.spectrum(sizes[1])]
    for m in sizes[2:] + [None]:
        a, b = spectra[-2], spectra[-1]
        if a.agrees(b):
            a.notes.append(f"bank auto: numerical spectra equal at {a.bank_size} inputs and at the next larger "
                           f"prefix, {b.bank_size} (evidence that {a.bank_size} separate)")
            return a
        if m is None:
            break
        J.extend(bank[J.size: m])
        spectra.append(J.spectrum(m))
    last = spectra[-1]
    last.notes.append(f"bank auto: numerical spectra still changing at {last.bank_size} inputs (the orders "
                      "may be too high: a larger bank may separate)")
    return last
