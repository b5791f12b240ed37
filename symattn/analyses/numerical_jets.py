"""The numerical jet tier: sharp zero-input jet degrees where exact series cannot run.

``symattn jet --method numerical`` (:func:`numerical_sharp_degree`). The exact and
modular jets (:mod:`symattn.analyses.jets`) refuse a transformer-block stack whose scores
are nonzero at ``X = 0`` (biases, pre-norm, a layer after a LayerNorm or MLP) or whose
constants there are irrational (LayerNorm's ``1/sqrt(eps)``, ``tanh(b_1)``, GELU). Here the
ray coefficients of ``F(rho Y)`` through ``rho^N`` and their parameter Jacobian are computed
in mpmath series at ``digits`` digits (:func:`~symattn.core.algebras.mp_series`), and the rank
of the stacked coefficient matrices is read from their singular values by a gap rule that may
leave it **undecided** (:func:`gap_rank`, Notes).

What it proves: nothing beyond numerical. The singular values carry no error bound; a
rank here is an estimate at ``digits`` digits (``method: numerical``, ``digits``, the
provenance kind ``numerical at N digits``). ``theorem`` is the statement covering the
architecture (Theorem 3 for the paper's stack, None for a block stack), never a claim that
the statement's hypotheses were checked numerically.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from symattn.core.algebras.mpseries import MPField, mp_series
from symattn.core.errors import CheckFailed, InternalError, Undecided
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank
from symattn.model.symmetries import GaugeKernel
from symattn.theorems import statements
from symattn.theorems.formulas import prop_c1_degree

__all__ = ["DEFAULT_DIGITS", "NUMERICAL_MAX_DEGREE", "GapRank", "gap_rank", "numerical_rank_profile",
           "numerical_sharp_degree", "require_numerical_jet"]

#: The working precision of the numerical jet tier (decimal digits).
DEFAULT_DIGITS = 300

#: The default largest degree the numerical tier searches (its series are mpmath numbers).
NUMERICAL_MAX_DEGREE = 31


@dataclass(frozen=True)
class GapRank:
    """A numerical rank by the gap rule: ``rank`` (None: undecided), and ``kept`` / ``dropped``,
    the log10 of the smallest counted and the largest discarded singular value relative to the
    largest (None where there is none)."""

    rank: int | None
    kept: float | None
    dropped: float | None
    reason: str = ""


def gap_rank(eigenvalues: Sequence[Any], digits: int) -> GapRank:
    """The rank of a matrix from the eigenvalues of its Gram matrix at ``digits`` digits
    (the rule is in the Notes).

    Parameters
    ----------
    eigenvalues : sequence
        The Gram matrix's eigenvalues (mpmath numbers).
    digits : int
        The working precision.

    Returns
    -------
    GapRank

    Notes
    -----
    The gap rule (:func:`gap_rank`): the coefficient blocks ``J_n`` are scaled to ``rho^n J_n``
    (the same rays, longer or shorter: no rank changes) with ``rho`` balancing their sizes, and
    the whole to largest entry 1 (:func:`_scaled_blocks`); the squares of the singular
    values are the eigenvalues ``lambda`` of the Gram matrix, computed by mpmath at ``digits``
    digits. Relative to the largest, ``lambda > 10^(-digits/2)`` (a singular value above
    ``10^(-digits/4)``) counts, ``lambda < 10^(-3 digits/4)`` (below ``10^(-3 digits/8)``) is
    zero, and any eigenvalue between the two leaves the rank **undecided** (said with the
    degree and the eigenvalue). The sharp degree is the least ``N`` whose rank reaches the
    target (all parameters on the effective map; ``P - rank(symmetries)`` on the native map,
    every declared symmetry verified as a numerical kernel vector of the jet Jacobian: ``|B_n
    xi|`` below ``10^(-digits/2) |xi|_1`` for every balanced block ``B_n``, else
    :class:`~symattn.core.errors.CheckFailed`) with the rank at ``N - 1`` decided below it.

    Examples
    --------
    >>> import mpmath
    >>> gap_rank([mpmath.mpf(1), mpmath.mpf("1e-20"), mpmath.mpf("1e-290")], 300).rank
    2
    >>> r = gap_rank([mpmath.mpf(1), mpmath.mpf("1e-200")], 300)
    >>> r.rank, r.reason.startswith("a singular value 10^-100")
    (None, True)
    """
    import mpmath

    lams = sorted((abs(mpmath.mpf(v)) for v in eigenvalues), reverse=True)
    if not lams or lams[0] == 0:
        return GapRank(0, None, None)
    top = lams[0]
    ratios = [lam / top for lam in lams]
    keep, zero = mpmath.mpf(10) ** (-(digits / 2)), mpmath.mpf(10) ** (-(3 * digits / 4))

    def log_sigma(r: Any) -> float:
        return float(mpmath.log10(r) / 2) if r > 0 else -float(digits)

    kept = [r for r in ratios if r > keep]
    dropped = [r for r in ratios if r < zero]
    between = [r for r in ratios if zero <= r <= keep]
    k = log_sigma(kept[-1]) if kept else None
    d = log_sigma(dropped[0]) if dropped else None
    if between:
        s = log_sigma(between[0])
        return GapRank(None, k, d, f"a singular value 10^{s:.0f} of the largest lies between the counted "
                                   f"(> 10^-{digits / 4:g}) and the zero (< 10^-{3 * digits / 8:g}) at {digits} digits")
    return GapRank(len(kept), k, d)


def _scaled_blocks(J: np.ndarray, field: MPField) -> list[Any]:
    """The coefficient blocks ``rho^n J_n`` (the ray ``rho Y`` for ``Y``: ranks unchanged), with the
    least ``rho`` that makes no block ``n >= 1`` larger than 1, all divided by the largest entry.
    One factor per degree and no column scaling, so that a block or column that is zero but for
    rounding is never scaled up to the size of the others."""
    ctx = field.ctx
    tops = [max((abs(v) for v in J[n].ravel()), default=ctx.mpf(0)) for n in range(J.shape[0])]
    roots = [top ** (ctx.mpf(-1) / n) for n, top in enumerate(tops) if n and top != 0]
    rho = min(roots) if roots else ctx.mpf(1)
    blocks = [J[n] * rho ** n for n in range(J.shape[0])]
    top = max((max((abs(v) for v in b.ravel()), default=ctx.mpf(0)) for b in blocks), default=ctx.mpf(0))
    return [b / top for b in blocks] if top != 0 else blocks


def numerical_rank_profile(J: np.ndarray, field: MPField) -> list[GapRank]:
    """The gap-rule rank (:func:`gap_rank`) of the stacked blocks ``J_0 .. J_n`` of
    ``J`` (shape ``(order, rows, P)``, entries of ``field``) for every ``n``.

    Parameters
    ----------
    J : numpy.ndarray
        Coefficient blocks ``(order, rows, P)``.
    field : MPField
        Their field.

    Returns
    -------
    list of GapRank

    Examples
    --------
    >>> from symattn.core.algebras.mpseries import MPField
    >>> F = MPField(60)
    >>> J = F.convert(np.array([[[1, 2], [2, 4]], [[0, 0], [1, 0]]]))
    >>> [r.rank for r in numerical_rank_profile(J, F)]
    [1, 2]
    """
    ctx = field.ctx
    P = J.shape[2]
    gram = np.full((P, P), ctx.mpf(0), dtype=object)
    out = []
    for block in _scaled_blocks(J, field):  # ranks of the balanced blocks: the same ranks
        gram = gram + block.T.dot(block)
        lams = ctx.eigsy(ctx.matrix(gram.tolist()), eigvals_only=True) if P else []
        out.append(gap_rank(list(lams), field.digits))
    return out


def _decided_sharp(profile: list[GapRank], target: int) -> tuple[int | None, str]:
    """The least degree whose rank is ``target`` with the rank below it decided; or None and why."""
    for n, r in enumerate(profile):
        if r.rank is not None and r.rank > target:  # above what the verified symmetries allow
            return None, (f"the numerical rank {r.rank} at degree {n} exceeds P - rank(symmetries) = {target}, "
                          "which the verified symmetries bound it by: a rounding-level singular value was counted")
        if r.rank == target:
            if n and profile[n - 1].rank is None:
                return None, f"the rank at degree {n - 1} is undecided ({profile[n - 1].reason})"
            return n, ""
    return None, ""


def _enters(J: np.ndarray, columns: Sequence[int], field: MPField) -> tuple[int | None, str]:
    """The least degree at which ``columns`` of ``J`` are numerically nonzero: largest entry of the
    balanced blocks (:func:`_scaled_blocks`, largest entry 1 over all degrees) above
    ``10^(-digits/4)``; None and why when one lies between that and ``10^(-3 digits/4)``."""
    import mpmath

    digits = field.digits
    hi, lo = mpmath.mpf(10) ** (-(digits / 4)), mpmath.mpf(10) ** (-(3 * digits / 4))
    cols = list(columns)
    for n, block in enumerate(_scaled_blocks(J, field)):
        part = max((abs(v) for v in block[:, cols].ravel()), default=0)
        if part > hi:
            return n, ""
        if part >= lo:
            return None, f"the last layer's columns at degree {n} are neither zero nor nonzero at {digits} digits"
    return None, ""


def _verify(kernel: GaugeKernel, J: np.ndarray, field: MPField) -> None:
    """Each declared direction ``xi`` a numerical kernel vector of the jet Jacobian: ``|B_n xi|`` below
    ``10^(-digits/2) |xi|_1`` for every balanced block ``B_n`` (:func:`_scaled_blocks`, largest entry 1
    over all degrees; a block that is zero but for rounding is not scaled up), else CheckFailed."""
    import mpmath

    if not kernel.directions:
        return
    xi = field.convert(np.array(kernel.directions, dtype=object))
    tol = mpmath.mpf(10) ** (-(field.digits / 2))
    sizes = [sum(abs(v) for v in xi[j]) for j in range(xi.shape[0])]
    for n, block in enumerate(_scaled_blocks(J, field)):
        residual = block.dot(xi.T)
        for j in range(xi.shape[0]):
            worst = max((abs(v) for v in residual[:, j]), default=0)
            if worst > tol * sizes[j]:
                raise CheckFailed(f"the declared symmetry {j + 1} ({kernel.symmetries[j].kind}) is not a kernel "
                                  f"vector of the numerical jet Jacobian at degree {n} (|J xi| = "
                                  f"{mpmath.nstr(worst / sizes[j], 3)} of max |J| |xi|_1, {field.digits} digits)")


def _jacobian(arch: Architecture, point: Any, degree: int, rays: int, seed: int, digits: int,
              names: Sequence[str] | None = None) -> tuple[np.ndarray, MPField]:
    from symattn.analyses.jets import ray_jacobian

    A = mp_series(degree + 1, digits)
    return ray_jacobian(arch, point, random_bank(arch, rays, seed), A, names), A.field


def _note(digits: int) -> str:
    return (f"numerical at {digits} digits: mpmath series expanded around the actual constant terms, ranks by "
            f"the gap rule (singular values above 10^-{digits / 4:g} of the largest counted, below "
            f"10^-{3 * digits / 8:g} zero, between: undecided); no error bound, nothing proved beyond numerical")


def numerical_sharp_degree(arch: Architecture, eta: Any = None, seed: int = 0, digits: int = DEFAULT_DIGITS,
                           max_degree: int = NUMERICAL_MAX_DEGREE, rays: int | None = None,
                           points: int = 3, hint: int | None = None) -> Any:
    """The sharp zero-input jet degree numerically at ``digits`` digits (see the module docstring and :func:`gap_rank`):
    a :class:`~symattn.analyses.jets.JetResult` with ``method = "numerical"`` and ``digits``.

    The effective map where the architecture has one (``eta``: its tuple, default
    :func:`~symattn.analyses.jets.generic_effective`), else the native map modulo the declared
    symmetries at ``points`` seeded points. Raises :class:`~symattn.core.errors.Undecided`
    when the gap rule leaves the decisive rank undecided at every point.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    eta : EffectiveParams, optional
        The effective tuple (default: generic).
    seed : int
        The seed of the points and rays.
    digits : int
        The working precision.
    max_degree : int
        The largest degree searched.
    rays : int, optional
        The number of rays (default: enough for the parameters).
    points : int
        The seeded native points.
    hint : int, optional
        A degree to try first.

    Returns
    -------
    JetResult

    Raises
    ------
    Undecided
        The gap rule does not decide a rank at ``digits`` digits.

    Examples
    --------
    >>> from symattn.model.architecture import Architecture
    >>> r = numerical_sharp_degree(Architecture.uniform(2, 1, 1, 2, "exp"), digits=60)
    >>> r.sharp_degree, r.method, r.digits, r.lower_jets_independent_of_last
    (7, 'numerical', 60, True)
    """
    from symattn.analyses.jets import JetResult, default_rays, generic_effective
    from symattn.core.validate import require_int
    from symattn.model.architecture import require_architecture

    require_architecture(arch)
    require_int(seed, "seed", 0, 2**63 - 1)
    require_int(digits, "digits", 30, 1000)
    require_int(max_degree, "max_degree", 1, 200)
    require_int(points, "points", 1, 10)
    if rays is not None:
        require_int(rays, "rays", 1, 10_000)
    start = time.perf_counter()
    theorem = statements.label(statements.THEOREM_3, arch)
    outside = [n for n in [statements.outside_note(arch)] if n]
    if eta is None and arch.effective_map is None:
        return _native(arch, seed, digits, max_degree, points, start, theorem, outside)
    eta = eta if eta is not None else generic_effective(arch, seed)
    eta.check(arch)
    names = list(eta.as_dict())
    P = sum(eta.as_dict()[n].size for n in names)
    R = rays or default_rays(arch, P)
    N = min(max_degree, hint if hint is not None else prop_c1_degree(arch))
    J, F, profile, sharp, why, N, R = _search(lambda N, R: _jacobian(arch, eta, N, R, seed, digits), P, N, R,
                                              max_degree, rays is None)
    if why:
        raise Undecided(f"numerical jet at {digits} digits: {why}; no sharp degree is given")
    notes = outside + [_note(digits)]
    ranks = [r.rank if r.rank is not None else -1 for r in profile]
    gaps = [[r.kept, r.dropped] for r in profile]
    if sharp is None:
        notes.append(f"numerical rank {ranks[-1]} < {P} through degree {N} on {R} rays: no injective jet found "
                     f"up to degree {max_degree} (undecided beyond)")
        return JetResult(None, None, False, "numerical", round(time.perf_counter() - start, 3), P, R, ranks,
                         notes, arch.describe(), arch.effective_map or "effective", None, 0, theorem, {},
                         digits, gaps)
    last = f"M{arch.depth}"
    offset = 0
    for n in names:
        if n == last:
            break
        offset += eta.as_dict()[n].size
    cols = range(offset, offset + eta.as_dict()[last].size)
    dep, why = _enters(J[: sharp + 1], cols, F)
    lower = None if why else dep == sharp
    notes.append(f"M_D first enters the ray coefficients at degree {dep} (numerical at {digits} digits)"
                 if not why else why)
    notes.append(f"D T_N injective from degree {sharp}: numerical rank {P} of the ray Jacobian on {R} rays")
    return JetResult(sharp, lower, True, "numerical", round(time.perf_counter() - start, 3), P, R,
                     ranks[: sharp + 1], notes, arch.describe(), arch.effective_map or "effective", dep, 0,
                     theorem, {}, digits, gaps[: sharp + 1])


def _search(jacobian_at: Callable[[int, int], tuple], target: int, N: int, R: int, max_degree: int,
            grow_rays: bool) -> tuple:
    """``(J, F, profile, sharp, why, N, R)``: the jet Jacobian ``jacobian_at(N, R)`` through degree
    ``N`` on ``R`` rays, grown (the rays up to four times, when ``grow_rays``, then the degree to
    ``2 N + 1`` up to ``max_degree``) until the rank ``target`` is decided at some degree
    (``sharp``), a rank is undecided (``why``), or the limits are reached (both None)."""
    first = R
    while True:
        J, F = jacobian_at(N, R)
        profile = numerical_rank_profile(J, F)
        sharp, why = _decided_sharp(profile, target)
        if sharp is not None or why:
            break
        if profile[-1].rank is None:
            why = f"the rank at degree {N} is undecided ({profile[-1].reason})"
            break
        if grow_rays and R < 4 * first:
            R *= 2
        elif N < max_degree:
            N = min(max_degree, 2 * N + 1)
        else:
            break
    return J, F, profile, sharp, why, N, R


def _native_point(arch: Architecture, point: dict, seed: int, digits: int, max_degree: int) -> dict:
    """The numerical sharp degree of the native map at ``point`` (a dict of the run's data)."""
    P = arch.native_size
    kernel = GaugeKernel(arch, point)
    sym_rank = kernel.rank()
    target = P - sym_rank
    N = min(max_degree, prop_c1_degree(arch))
    R = max(2, -(-target // (arch.widths[-1] * arch.tokens)) + 1)

    def checked(N: int, R: int) -> tuple:
        J, F = _jacobian(arch, point, N, R, seed, digits)
        _verify(kernel, J, F)
        return J, F

    J, F, profile, sharp, why, N, R = _search(checked, target, N, R, max_degree, True)
    run: dict[str, Any] = {"sharp": sharp, "why": why, "sym_rank": sym_rank, "rays": R, "degree": N, "kinds": kernel.kinds(),
           "profile": [r.rank if r.rank is not None else -1 for r in profile],
           "gaps": [[r.kept, r.dropped] for r in profile], "enters": None, "lower": None}
    if sharp is None:
        return run
    from symattn.core.linalg import Matrix

    last = [b.name for b in arch.layer_blocks(arch.depth) if b.is_factor]
    cols = [j for n in last for j in arch.columns(n)]
    enters, why_enters = _enters(J[: sharp + 1], cols, F)
    units = []
    for j in cols:
        e = np.zeros(P, dtype=int).astype(object)
        e[j] = 1
        units.append(e)
    outside = Matrix.rational(np.array(kernel.directions + units, dtype=object)).rank() > sym_rank
    run.update(profile=run["profile"][: sharp + 1], gaps=run["gaps"][: sharp + 1], enters=enters,
               lower=(enters == sharp and outside) if enters is not None else None, why_enters=why_enters)
    return run


def _native(arch: Architecture, seed: int, digits: int, max_degree: int, points: int, start: float,
            theorem: str | None, outside: list[str]) -> Any:
    from symattn.analyses.jets import JetResult
    from symattn.model.parameters import random_point

    P = arch.native_size
    runs = {s: _native_point(arch, random_point(arch, s, "random"), s, digits, max_degree)
            for s in range(seed, seed + points)}
    by_seed = {str(s): r["sharp"] for s, r in runs.items()}
    decided = {s: r for s, r in runs.items() if r["sharp"] is not None}
    kind = "native modulo the declared symmetries"
    notes = outside + [_note(digits)]
    notes += [f"seed {s}: undecided, {r['why']}" for s, r in runs.items() if r["why"]]
    if not decided:
        if all(r["why"] for r in runs.values()):
            raise Undecided(f"numerical jet at {digits} digits: {runs[seed]['why']} at every seeded point; "
                            "no sharp degree is given")
        r0 = runs[seed]
        notes.append(f"no point reached numerical rank P - rank(symmetries) = {P - r0['sym_rank']} through degree "
                     f"{max_degree}: undecided (an undeclared symmetry, or a degree beyond the limit)")
        return JetResult(None, None, False, "numerical", round(time.perf_counter() - start, 3), P, r0["rays"],
                         r0["profile"], notes, arch.describe(), kind, None, r0["sym_rank"], theorem, by_seed,
                         digits, r0["gaps"])
    best = min(decided, key=lambda k: (decided[k]["sharp"], k))
    r = decided[best]
    sharp, sym_rank = r["sharp"], r["sym_rank"]
    if r["profile"].index(P - sym_rank) != sharp:
        raise InternalError("the numerical sharp degree is not the first full rank of its profile; please report")
    notes.append(f"D T_{sharp} injective modulo the declared symmetries at the point of seed {best}: numerical rank "
                 f"{P - sym_rank} = P - {sym_rank} of the native ray Jacobian through rho^{sharp} on {r['rays']} "
                 f"rays; every declared symmetry ({r['kinds']}) verified as a numerical kernel vector")
    notes.append(f"sharp degree by seed {by_seed}: the least is a numerical estimate of an upper bound on the "
                 "generic sharp degree" + ("" if len(set(by_seed.values())) == 1 else
                                           "; the points disagree, so a seeded point can be special"))
    if r.get("why_enters"):
        notes.append(r["why_enters"])
    else:
        notes.append(f"the last layer's queries and keys first enter the ray coefficients at degree {r['enters']} "
                     f"(numerical at {digits} digits); "
                     + ("a direction of theirs lies outside the symmetries, so every lower jet misses it there"
                        if r["lower"] else "the lower jets are not shown to fall short"))
    return JetResult(sharp, r["lower"], True, "numerical", round(time.perf_counter() - start, 3), P, r["rays"],
                     r["profile"], notes, arch.describe(), kind, r["enters"], sym_rank, theorem, by_seed,
                     digits, r["gaps"])


def require_numerical_jet(arch: Architecture, max_degree: int, digits: int = DEFAULT_DIGITS,
                          max_memory_gib: float | None = None) -> None:
    """Refuse a numerical jet beyond the numerical tier's size: its parameters, or the memory of
    ``max_degree + 1`` coefficient blocks on the largest ray count searched
    (:func:`~symattn.analyses.numerical_spectrum.require_numerical`).

    Parameters
    ----------
    arch : Architecture
        The architecture.
    max_degree : int
        The largest degree searched.
    digits : int
        The working precision.
    max_memory_gib : float, optional
        The memory limit.

    Examples
    --------
    >>> require_numerical_jet(Architecture.uniform(1, 2, 1, 3, "exp", norm="post"), 31)
    """
    from symattn.analyses.numerical_spectrum import require_numerical

    rays = 4 * max(2, -(-arch.native_size // (arch.widths[-1] * arch.tokens)) + 1)
    require_numerical(arch, rays * (max_degree + 1), digits, "this numerical jet", max_memory_gib)
