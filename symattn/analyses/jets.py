"""Zero-input Taylor jets T_N: sharp degrees, adaptive orders, rational inverse.

Scope: Theorem 3, Propositions C.1 and C.3, Corollaries C.2 and 4.1 and the
rational local inverse of Appendix C.3 of the paper, *computed from the
network graph*. The jet ``T_N`` (eq. 30) is polynomial in the parameters
(eq. 33); it is observed along seeded rational input rays ``X = rho Y``: the
coefficient of ``rho^N`` of ``F(rho Y)`` is the homogeneous degree-``N`` part
of ``F`` evaluated at ``Y``, so the ray coefficients through degree ``N`` are
*linear images* of ``T_N``. The scores vanish at ``rho = 0``, so
:func:`~symattn.core.algebras.exact_series` and
:func:`~symattn.core.algebras.modular_series` expand the network directly; tangents
(:class:`~symattn.core.algebras.Tangent`) in the effective parameters ``(L, M_i)``
(or the native ones) give the Jacobian of the ray coefficients, one row per
(ray, output coordinate, token), one column per parameter, one matrix per
degree.

What the computations prove
---------------------------
* **Injectivity of D T_N.** The Jacobian of the ray coefficients through
  degree ``N`` is ``C o D T_N`` for a linear map ``C``, so its rank is at most
  ``rank D T_N``; its rank mod ``p`` is at most its rank over Q (a nonzero
  minor mod p is a nonzero rational minor). A *full column rank mod p* on the
  effective parameters therefore proves that ``D T_N`` is injective at the
  marked rational tuple. No count of rays has to be argued: too few rays can
  only lower the computed rank (the bank is grown until the rank is full or a
  cap is reached, which is then reported as undecided).
* **Lower jets ignore a block.** The tangent of the ray coefficients in the
  entries of ``M_D`` is computed *exactly over Q*; its vanishing below degree
  ``N`` is an exact statement at the marked tuple and rays (the identity in
  all parameters is the order estimate (C.1) of Prop. C.1, which the
  computation confirms is attained: the first nonzero column occurs exactly at
  the sharp degree). Together with the modular rank this makes the computed
  sharp degree the least ``N`` with ``ker D T_N = 0`` at that tuple.
* **Rational local inverse** (App. C.3, ``k = 1``): :func:`local_inverse`
  reads finitely many linear functionals of ``T_{N_D}`` (the part linear in a
  mean direction ``m`` of the ray coefficients along line probes
  ``X = rho (m 1^T + z_b c^T)``) and returns ``(L, M)`` by the formulas
  ``M_j z_b = c_{j,b} / (s_2^{3^{j-1}} a_{j-1}(0, z_b)^2 g_j(0) (l z_b))``
  where ``s_2 = (1/n) sum c_a^2`` (the paper normalises ``s_2 = 1``; the
  power follows by homogeneity in ``z``) after subtracting the exact mean of
  the recovered prefix. The round trip ``G o T_{N_D} = id`` is exact.

The paper's degree formulas (Prop. C.1, C.3, Cor. C.2) are in
:mod:`symattn.theorems.formulas`; ranks and rank profiles are computed by
:mod:`symattn.core.linalg`.

Caveats: a "generic point" is a seeded random rational tuple with
``L != 0`` and ``sym M_i != 0`` (checked); normalizers need rational Taylor
coefficients (exp, cosh, polynomials, logistic ...). The degree searched is
capped (``max_degree``); beyond it the answer is reported as undecided.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction

import networkx as nx
import numpy as np

from symattn.core.algebras import exact_series, series_for
from symattn.core.algebras.series import SeriesAlgebra
from symattn.theorems.formulas import common_k_sharp_degree, prop_c1_degree
from symattn.core.linalg import Matrix, SeriesMatrix
from symattn.core.errors import SymattnError
from symattn.model.network import effective_network, jacobian, native_network
from symattn.model.architecture import Architecture
from symattn.model.parameters import EffectiveParams, NativeParams, random_bank, random_rational_matrix

__all__ = [
    "JetResult",
    "default_rays",
    "first_dependence",
    "full_rank_degree",
    "generic_effective",
    "inverse_chart",
    "local_inverse",
    "ray_jacobian",
    "sharp_degree",
    "taylor_observation",
]


# -- generic points and rays ---------------------------------------------------

def generic_effective(arch: Architecture, seed: int = 0, skew: Sequence[bool] | None = None,
                      zero: Sequence[int] = ()) -> EffectiveParams:
    """A seeded random rational effective tuple with ``L != 0`` and ``sym M_i != 0``.

    ``skew[i]`` asks for a nonzero skew ``M_{i+1}``; layers in ``zero`` get ``M_i = 0``.

    >>> eta = generic_effective(Architecture.uniform(2, 2, 2, 3, "exp"), seed=1, skew=[True, False])
    >>> bool((eta.M[0] + eta.M[0].T == 0).all()), bool((eta.M[1] + eta.M[1].T != 0).any())
    (True, True)
    """
    rng = random.Random(seed)
    d0, dD = arch.widths[0], arch.widths[-1]
    skew = list(skew) if skew is not None else [False] * arch.depth
    if len(skew) != arch.depth:
        raise SymattnError(f"skew needs one flag per layer (D = {arch.depth}), got {len(skew)}")
    if any(s for s in skew) and d0 < 2:
        raise SymattnError("a nonzero skew score needs width d >= 2")
    while True:
        L = random_rational_matrix(rng, (dD, d0))
        if (L != 0).any():
            break
    M = []
    for i in range(1, arch.depth + 1):
        while True:
            m = random_rational_matrix(rng, (d0, d0))
            if i in zero:
                m = m * 0
                break
            if skew[i - 1]:
                m = m - m.T
                if (m != 0).any():
                    break
            elif (m + m.T != 0).any():
                break
        M.append(m)
    return EffectiveParams(L, tuple(M))


def _ray_input(algebra: SeriesAlgebra, Y: np.ndarray) -> np.ndarray:
    return algebra.series([np.zeros(Y.shape, dtype=int), Y])


def ray_jacobian(arch: Architecture, params: EffectiveParams | NativeParams, Y: np.ndarray,
                 algebra: SeriesAlgebra, blocks: Sequence[str] | None = None,
                 graph: "nx.DiGraph | None" = None) -> np.ndarray:
    """Jacobian of the ray coefficients of ``F(rho Y)`` in the parameter ``blocks``.

    ``params`` is effective (graph :func:`~symattn.model.network.effective_network`, blocks
    ``"L", "M1", ...``) or native (:func:`~symattn.model.network.native_network`, blocks
    ``"Q1", "K1", "V1", ...``); ``blocks`` defaults to all. Returns the array
    ``(order, rows, P)``: coefficient of ``rho^N``, rows (ray, output coordinate,
    token), columns the block entries in row-major order. ``graph`` replaces the
    paper's graph by one with the same inputs (the masked effective map of
    :func:`symattn.model.variants.score_network`).

    >>> arch = Architecture.uniform(1, 1, 1, 2, "exp")
    >>> eta = generic_effective(arch, seed=0)
    >>> J = ray_jacobian(arch, eta, random_bank(arch, 2, seed=0), exact_series(4))
    >>> J.shape, bool((J[2] == 0).all())          # F is odd in X
    ((4, 4, 2), True)
    """
    values = params.as_dict()
    if graph is None:
        graph = effective_network(arch) if isinstance(params, EffectiveParams) else native_network(arch)
    names = [n for n in values if blocks is None or n in blocks]
    if blocks is not None and len(names) != len(blocks):
        raise SymattnError(f"unknown parameter blocks {sorted(set(blocks) - set(values))}")
    vals = {name: algebra.const(value) for name, value in values.items()}
    vals["X"] = _ray_input(algebra, np.asarray(Y, dtype=object))
    return jacobian(graph, algebra, vals, names)


def first_dependence(arch: Architecture, eta: EffectiveParams, block: str, Y: np.ndarray,
                     order: int, graph: "nx.DiGraph | None" = None) -> int | None:
    """Least degree ``N < order`` at which the ray coefficients depend on ``block``
    (its tangent columns nonzero), computed exactly over Q; None if none below ``order``.

    >>> arch = Architecture.uniform(2, 1, 1, 2, "exp")
    >>> first_dependence(arch, generic_effective(arch), "M2", random_bank(arch, 1), 9)
    7
    """
    A = exact_series(order)
    J = ray_jacobian(arch, eta, Y, A, blocks=[block], graph=graph)
    nz = [N for N in range(order) if not A.field.is_zero(J[N]).all()]
    return nz[0] if nz else None


@dataclass
class JetResult:
    """Result of :func:`sharp_degree` (``to_json`` gives the CLI keys)."""

    sharp_degree: int | None
    lower_jets_independent_of_last: bool | None
    immersion: bool
    method: str
    seconds: float
    parameters: int
    rays: int
    profile: list[int]
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)

    def _repr_html_(self) -> str:
        """The sharp degree, the lower-jet check and the rank profile as an HTML table."""
        from symattn.render.derivation import summary_html

        N = self.sharp_degree
        profile = ", ".join(f"$N = {n}$: {rank}" for n, rank in enumerate(self.profile))
        rows = [("least $N$ with $DT_N$ injective", "undecided" if N is None else f"$N = {N}$"),
                ("every lower jet independent of $M_D$", str(self.lower_jets_independent_of_last)),
                ("rank of $DT_N$ (of " f"{self.parameters} parameters)", profile),
                ("method", f"{self.method} ranks on {self.rays} rays, {self.seconds:.2f} s")]
        return summary_html("Zero-input jets (Theorem 3)", rows + [("note", n) for n in self.notes])


def default_rays(arch: Architecture, P: int) -> int:
    """Seeded rays enough for ``P`` unknowns: one more than ``P`` over the outputs
    per ray (``d_D n``), at least 2.

    >>> default_rays(Architecture.uniform(2, 2, 1, 2, "exp"), 12)
    4
    """
    return max(2, -(-P // (arch.widths[-1] * arch.tokens)) + 1)


def full_rank_degree(profile_at, target: int, degree: int, rays: int,
                     max_degree: int) -> tuple[list[int], int, int]:
    """Grow the rays (doubling, up to 4 times the first count), then the degree
    (``N -> 2N + 1``, up to ``max_degree``) until the rank profile
    ``profile_at(N, R)`` (:meth:`symattn.core.linalg.SeriesMatrix.rank_profile` through degree ``N`` on ``R``
    rays) reaches ``target``. Returns the last ``(profile, N, R)``: short of
    ``target`` (``profile[-1] < target``) when ``max_degree`` was reached.

    >>> full_rank_degree(lambda N, R: [min(k, R, 4) for k in range(N + 1)], 4, 3, 2, 9)
    ([0, 1, 2, 3, 4, 4, 4, 4], 7, 8)
    >>> full_rank_degree(lambda N, R: [0] * (N + 1), 4, 3, 2, 9)[1:]
    (9, 8)
    """
    first = rays
    N, R = degree, rays
    while True:
        profile = profile_at(N, R)
        if profile[-1] == target:
            return profile, N, R
        if R < 4 * first:
            R *= 2
        elif N < max_degree:
            N = min(max_degree, 2 * N + 1)
        else:
            return profile, N, R


def sharp_degree(arch: Architecture, eta: EffectiveParams | None = None, seed: int = 0,
                 method: str = "modular", max_degree: int = 200, rays: int | None = None,
                 blocks: Sequence[str] | None = None, hint: int | None = None,
                 graph: "nx.DiGraph | None" = None) -> JetResult:
    """Least ``N`` with ``D T_N`` injective at ``eta``, and the lower-jet check.

    Parameters
    ----------
    arch : the effective architecture (widths ``d_0, d_D`` used; any normalizers
        with rational Taylor data)
    eta : the marked tuple; default :func:`generic_effective` with ``seed``
    method : ``"modular"`` (ranks over F_p: lower bounds on the rational ranks,
        a full rank proves injectivity) or ``"exact"`` (ranks over Q)
    max_degree : give up (undecided) beyond this degree
    rays : number of seeded random rays (default: enough rows, grown if needed)
    blocks : restrict the injectivity question to these parameter blocks
    hint : first truncation degree tried (a speed hint only; by default the
        Prop. C.1 degree). The answer is the least degree of full rank among
        *all* degrees below the truncation, so the hint cannot change it.
    graph : a graph with the effective inputs replacing the paper's (see
        :func:`ray_jacobian`)

    The lower-jet check asks, exactly over Q, whether the ray coefficients of
    degree below the sharp degree are independent of the last score ``M_D``.

    Examples
    --------
    >>> r = sharp_degree(Architecture.uniform(2, 1, 1, 2, "exp"))
    >>> r.sharp_degree, r.lower_jets_independent_of_last, r.immersion
    (7, True, True)
    """
    start = time.perf_counter()
    eta = eta if eta is not None else generic_effective(arch, seed)
    eta.check(arch)
    names = list(eta.as_dict()) if blocks is None else list(blocks)
    P = sum(eta.as_dict()[n].size for n in names)
    R = rays or default_rays(arch, P)
    N = min(max_degree, hint if hint is not None else prop_c1_degree(arch))
    notes: list[str] = []
    grew_degree = False  # alternate: more degrees, then more rays
    while True:
        Y = random_bank(arch, R, seed)
        A = series_for(method, N + 1)
        profile = SeriesMatrix(A, ray_jacobian(arch, eta, Y, A, names, graph)).rank_profile()
        if profile[-1] == P:
            break
        grow_rays = rays is None and R < 4 * default_rays(arch, P) and (grew_degree or N >= max_degree)
        grew_degree = not grow_rays
        if grow_rays:
            R *= 2
            continue
        if N >= max_degree:
            notes.append(f"rank {profile[-1]} < {P} through degree {N} on {R} rays: "
                         f"no injective jet found up to degree {max_degree} (undecided beyond)")
            return JetResult(None, None, False, method, round(time.perf_counter() - start, 3),
                             P, R, profile, notes)
        N = min(max_degree, 2 * N + 1)
    sharp = profile.index(P)
    last = f"M{arch.depth}"
    lower = None
    if last in names:
        # Too few rays can only delay full rank: while M_D enters before the
        # degree of full rank, the rank there is a ray shortfall, not a proof
        # of non-injectivity, so add rays and recompute the profile.
        dep = first_dependence(arch, eta, last, Y, sharp + 1, graph)
        while dep < sharp and R < 16 * default_rays(arch, P):
            R *= 2
            Y = random_bank(arch, R, seed)
            A = series_for(method, sharp + 1)
            profile = SeriesMatrix(A, ray_jacobian(arch, eta, Y, A, names, graph)).rank_profile()
            sharp = profile.index(P)
            dep = first_dependence(arch, eta, last, Y, sharp + 1, graph)
        lower = dep == sharp
        if dep < sharp:
            notes.append(f"undecided between degrees {dep} and {sharp}: M_D enters at degree {dep} but "
                         f"the rank on {R} rays is full only from degree {sharp}")
        notes.append(f"M_D first enters the ray coefficients at degree {dep} (exact over Q)")
    notes.append(f"D T_N injective from degree {sharp}: rank {P} of the ray Jacobian "
                 f"({'over F_p, a lower bound on the rank over Q' if method == 'modular' else 'over Q'})")
    return JetResult(sharp, lower, True, method, round(time.perf_counter() - start, 3), P, R,
                     profile[: sharp + 1], notes)


# -- rational local inverse (App. C.3) ----------------------------------------

def _fractions(x: np.ndarray) -> np.ndarray:
    """An object array of python-flint ``fmpq`` (or Fractions) as Fractions."""
    out = np.empty(np.shape(x), dtype=object)
    for idx, v in np.ndenumerate(np.asarray(x, dtype=object)):
        out[idx] = Fraction(int(v.p), int(v.q)) if hasattr(v, "q") else Fraction(v)
    return out


def _contrast(n: int) -> list[Fraction]:
    """Token coefficients ``c`` with mean zero: ``(1, -1, 1, -1, ...)``, last 0 if n is odd."""
    c = [Fraction((-1) ** a) for a in range(n)]
    if n % 2:
        c[-1] = Fraction(0)
    return c


def _slopes(arch: Architecture) -> list[Fraction]:
    g = []
    for i, phi in enumerate(arch.normalizers, 1):
        s = phi.slope
        if s == 0:
            raise SymattnError(f"layer {i}: h'(0) = 0; the rational inverse of App. C.3 needs k = 1")
        g.append(Fraction(int(s.p), int(s.q)))
    return g


def inverse_chart(arch: Architecture, eta: EffectiveParams, seed: int = 0) -> tuple[np.ndarray, int]:
    """Probe directions ``Z = (z_1..z_d)`` (columns, invertible) and a row index ``l``
    with ``L_l z_b != 0`` and ``z_b^T M_i z_b != 0`` (``i < D``), chosen at the marked tuple.

    >>> arch = Architecture.uniform(2, 2, 2, 2, "exp")
    >>> Z, l = inverse_chart(arch, generic_effective(arch))
    >>> Z.shape, l
    ((2, 2), 0)
    """
    d0 = arch.widths[0]
    rows = [r for r in range(eta.L.shape[0]) if (eta.L[r] != 0).any()]
    if not rows:
        raise SymattnError("L = 0: the readout is zero and no score is identifiable (Theorem 2)")
    l = rows[0]
    rng = random.Random(seed)
    cols: list[np.ndarray] = []
    for _ in range(200 * d0):
        z = random_rational_matrix(rng, (d0,))
        ok = eta.L[l].dot(z) != 0 and all(z.dot(m).dot(z) != 0 for m in eta.M[:-1])
        if ok and Matrix.rational(np.array(cols + [z], dtype=object)).rank() == len(cols) + 1:
            cols.append(z)
            if len(cols) == d0:
                return np.array(cols, dtype=object).T, l
    raise SymattnError("no probe directions found: some prefix score has zero symmetric part "
                       "(z^T M_i z vanishes identically)")


def _probe_directions(arch: Architecture, algebra: SeriesAlgebra, Z: np.ndarray):
    """Inputs ``rho z_b c^T`` (batch b) and the directions ``rho e_i 1^T`` (i = 1..d_0),
    the latter as a ``(d_0, size of X)`` tensor of ``algebra``."""
    d0, n = arch.widths[0], arch.tokens
    c = np.array(_contrast(n), dtype=object)
    base = np.array([np.outer(Z[:, b], c) for b in range(Z.shape[1])], dtype=object)
    tan = np.zeros((d0, Z.shape[1], d0, n), dtype=object)
    for i in range(d0):
        tan[i, :, i, :] = 1
    return _ray_input(algebra, base), _ray_input(algebra, tan.reshape(d0, -1))


def _mean_linear_part(arch: Architecture, eta: EffectiveParams, Z: np.ndarray, order: int) -> np.ndarray:
    """The part linear in the mean direction of the output token mean along the probes:
    array ``(order, d_0 [direction i], B [probe b], d_D)`` over Q."""
    A = exact_series(order)
    vals = {k: A.const(v) for k, v in eta.as_dict().items()}
    vals["X"], directions = _probe_directions(arch, A, Z)
    J = jacobian(effective_network(arch), A, vals, ["X"], directions=directions)
    J = J.reshape((order, Z.shape[1], arch.widths[-1], arch.tokens, -1))
    mean = A.scale(J.sum(axis=3), Fraction(1, arch.tokens))   # (order, B, d_D, d_0)
    return np.moveaxis(mean, 3, 1)


def taylor_observation(arch: Architecture, eta: EffectiveParams, Z: np.ndarray) -> dict[int, np.ndarray]:
    """The jet coordinates the inverse reads: for ``N = 1`` and ``N = N_j = 2 * 3^(j-1) + 1``,
    the degree-``N`` coefficient of :func:`_mean_linear_part` (linear functionals of ``T_{N_D}``)."""
    top = common_k_sharp_degree(arch.depth)
    C = _mean_linear_part(arch, eta, Z, top + 1)
    return {N: C[N] for N in [1] + [common_k_sharp_degree(j) for j in range(1, arch.depth + 1)]}


def _prefix(arch: Architecture, L: np.ndarray, M: list[np.ndarray]):
    """The recovered prefix network ``L S_{M_{j-1}} ... S_{M_1}`` (None for j = 1)."""
    j = len(M)
    if j == 0:
        return None, None
    sub = Architecture(tuple(arch.widths[:j]) + (arch.widths[-1],), (1,) * j, arch.tokens,
                       arch.normalizers[:j])
    return sub, EffectiveParams(L, tuple(M))


def local_inverse(arch: Architecture, observation: dict[int, np.ndarray], Z: np.ndarray,
                  l: int) -> EffectiveParams:
    """The rational map G of App. C.3 (``k = 1``): ``(L, M)`` from the jet coordinates.

    ``L`` from the degree-one consensus coefficient; then layer by layer,
    ``M_j z_b = c_{j,b} / (s_2^{3^{j-1}} a_{j-1}(0, z_b)^2 g_j(0) (l z_b))`` with
    ``c_{j,b}`` the row ``l`` of the degree-``N_j`` coefficient minus the exact
    mean of the recovered prefix, and ``M_j = (M_j z_b)_b Z^{-1}``.

    Examples
    --------
    >>> arch = Architecture.uniform(2, 2, 2, 2, "exp")
    >>> eta = generic_effective(arch, seed=3)
    >>> Z, l = inverse_chart(arch, eta)
    >>> back = local_inverse(arch, taylor_observation(arch, eta, Z), Z, l)
    >>> all((a == b).all() for a, b in zip(back.as_dict().values(), eta.as_dict().values()))
    True
    """
    g = _slopes(arch)
    n = arch.tokens
    s2 = sum(x * x for x in _contrast(n)) / n
    d0 = arch.widths[0]
    L = _fractions(observation[1][:, 0, :].T)
    if not (L[l] != 0).any():
        raise SymattnError(f"row {l} of the recovered readout is zero; choose the chart at L != 0")
    Zinv = _fractions(Matrix.rational(Z).inverse().entries)
    M: list[np.ndarray] = []
    for j in range(1, arch.depth + 1):
        N = common_k_sharp_degree(j)
        obs = _fractions(observation[N])
        sub, prefix = _prefix(arch, L, M)
        if sub is not None:
            obs = obs - _fractions(_mean_linear_part(sub, prefix, Z, N + 1)[N])
        cols = []
        for b in range(d0):
            z = Z[:, b]
            a = Fraction(1)
            for i, m in enumerate(M, 1):
                a *= (g[i - 1] * z.dot(m).dot(z)) ** (3 ** (j - 1 - i))
            den = s2 ** (3 ** (j - 1)) * a * a * g[j - 1] * L[l].dot(z)
            if den == 0:
                raise SymattnError(f"the chart degenerates at layer {j}: a denominator vanishes")
            cols.append(obs[:, b, l] / den)
        M.append(np.array(cols, dtype=object).T.dot(Zinv))
    return EffectiveParams(L, tuple(M))
