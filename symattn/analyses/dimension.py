"""Certified neuromanifold dimensions (Henry-Marchetti-Kohn), any widths and head ranks.

The dimension of the function space of a native attention stack (widths
``d_0, ..., d_l``, head widths ``a_i``, any layer parts) is the generic rank of
``theta -> F_theta``: how many directions of the weights the function sees. It is
computed as two proven bounds that meet (:func:`neuromanifold_dimension`): a lower
bound from the rank of jet coefficients at a seeded rational point, and an upper
bound from the declared symmetries (factor gauges, interfaces, ...) and the rank
conditions of the effective map. Transformer blocks whose constants the exact
series cannot hold get the ball tier (:func:`ball_dimension`): a certified lower
bound in ball arithmetic and a numerical account of the kernel no declared
symmetry explains. Why: the naive count "parameters minus gauges" is wrong at
bottlenecks, and a dimension is only worth reporting with a proof of both bounds.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction

import numpy as np

from symattn.core.validate import require_choice, require_int, require_str
from symattn.model.architecture import require_architecture
from symattn.render.rich_result import RichResult
from symattn.core.algebras import Float64, series_for
from symattn.core.algebras.functions import NotRational
from symattn.core.errors import CheckFailed, SymattnError, Undecided
from symattn.theorems import statements
from symattn.theorems.formulas import hmk_formula, prop_c1_degree
from symattn.model.symmetries import GaugeKernel, head_permutation_check, hidden_sign_flip_check
from symattn.model.symmetry_counts import check_counts
from symattn.model.network import jacobian, native_network
from symattn.analyses.genericity import dimension_claim
from symattn.analyses.jets import default_rays, ray_jacobian, refuse_biased_jets
from symattn.core.algebras.modular import PrimeField
from symattn.core.linalg import Matrix
from symattn.core.series_mod_p import matmul_mod
from symattn.model.architecture import Architecture
from symattn.model.parameters import (NativeParams, point_of, random_bank, random_native,  # noqa: F401  doctests
                                      random_point, reduction)

__all__ = [
    "Dimension",
    "ball_dimension",
    "ball_dimension_bytes",
    "float32_rank_near_collapse",
    "gauge_bound",
    "generic_native",
    "hmk_table",
    "neuromanifold_dimension",
    "rank_condition_bound",
]


@dataclass(repr=False)
class Dimension(RichResult):
    """Result of :func:`neuromanifold_dimension` (``to_json`` has the CLI keys).

    >>> neuromanifold_dimension(Architecture.uniform(1, 2, 1, 2, "exp"))
    <Dimension: dimension 7 of 8 parameters (certified); generic (certified); symmetries of rank 1; eq. (40) ...>
    """

    dimension: int | None
    parameters: int
    lower_bound: int
    upper_bound: int
    method: str
    certified: bool
    gauge_bound: int
    #: the rank-condition bound (None: the architecture has no effective reduction)
    rank_condition_bound: int | None
    degree: int
    rays: int
    seconds: float
    notes: list[str] = field(default_factory=list)
    #: the layers (:meth:`~symattn.model.architecture.Architecture.describe`)
    architecture: str = ""
    #: the declared symmetries, by kind (their exact rank gives ``gauge_bound``)
    symmetries: dict = field(default_factory=dict)
    #: the statement that covers the dimension (its label), or None (``theorem: null``)
    theorem: str | None = None
    #: least ray-coefficient degree whose Jacobian reaches the dimension (None unless certified)
    jet_degree: int | None = None
    #: the head permutation group per multi-head layer (:func:`~symattn.model.symmetries.head_permutation_check`)
    head_permutations: list[dict] = field(default_factory=list)
    #: the kernel beyond the declared symmetries: ``upper_bound - lower_bound`` (0 when certified)
    unexplained: int = 0
    #: ``"exact"`` (series over Q or F_p) or ``"certified lower bound (balls at N digits)"``
    tier: str = "exact"
    #: the hidden-unit sign flips of odd activations (:func:`~symattn.model.symmetries.hidden_sign_flip_check`)
    hidden_sign_flips: list[dict] = field(default_factory=list)
    #: what the bounds are about: ``"generic"`` (a rank at a point and the symmetries bound the generic
    #: dimension, :func:`~symattn.analyses.genericity.dimension_claim`)
    about: str = "generic"
    #: ``generic (certified)``, ``generic bounds (certified)``, ``generic lower bound (certified)`` or
    #: ``at this point``
    generic: str = "at this point"
    #: the claim (:meth:`~symattn.analyses.genericity.GenericClaim.to_json`)
    claim: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        # the ball tier's upper bound rests on kernel checks in balls (numerical)
        claim = dimension_claim(True, self.lower_bound, self.upper_bound, self.tier.startswith("exact"))
        self.generic, self.claim = claim.label, claim.to_json()

    def to_json(self) -> dict:
        return asdict(self)

    def _headline(self) -> str:
        value = (f"dimension {self.dimension}" if self.dimension is not None
                 else f"dimension undecided in [{self.lower_bound}, {self.upper_bound}]")
        kind = self.method + (", certified" if self.certified and "certified" not in self.method else "")
        return (f"{value} of {self.parameters} parameters ({kind}); {self.generic}; symmetries of rank "
                f"{self.parameters - self.upper_bound}; {self.theorem or 'computed'}")

    def _summary(self) -> tuple[str, list[tuple[str, str]]]:
        value = str(self.dimension) if self.dimension is not None else "undecided"
        rows = [("dimension", f"{value} (bounds {self.lower_bound} to {self.upper_bound} of {self.parameters} "
                              "parameters)"),
                ("lower bound", f"rank of the jet Jacobian through degree {self.degree} on {self.rays} rays "
                                f"({self.method})"),
                ("upper bound", f"$P$ minus the exact rank of the declared symmetries ({self.gauge_bound})"),
                ("certified", str(self.certified)), ("generic claim", self.claim.get("note", self.generic)),
                ("architecture", self.architecture)]
        return (f"Neuromanifold dimension ({self.theorem or 'computed; no theorem covers this architecture'})",
                rows + [("note", n) for n in self.notes])


def gauge_bound(arch: Architecture, theta) -> int:
    """``P - rank`` of the factor gauges and interface directions at ``theta`` (exact),
    after checking exactly that each annihilates ``D pi(theta)`` (an architecture with an
    effective map; otherwise :func:`neuromanifold_dimension` checks them against its Jacobian).

    Parameters
    ----------
    arch : Architecture
        An architecture with an effective map.
    theta : NativeParams or mapping
        The native point.

    Returns
    -------
    int
        The upper bound ``P - rank(gauges)``.

    Examples
    --------
    >>> arch = Architecture.uniform(2, 3, 2, 3, "exp")     # P = 42, gauges 4 + 4 + 9
    >>> gauge_bound(arch, random_native(arch, seed=1))
    25
    """
    return GaugeKernel(arch, theta).upper_bound()


def _rank_conditions(arch: Architecture) -> list[tuple[list[tuple[str, bool]], int]]:
    """The rank conditions on the effective tuple: (stack of (block, transposed), bound)."""
    rho = [min(arch.widths[: i + 1]) for i in range(arch.depth + 1)]
    D = arch.depth
    out: list[tuple[list[tuple[str, bool]], int]] = [([("L", False)], rho[D])]
    for i in range(1, D + 1):
        out.append(([(f"M{i}", False)], min(arch.ranks[i - 1], rho[i - 1])))
    stack = [("L", False)]
    for i in range(D - 1, 0, -1):
        stack = stack + [(f"M{i + 1}", False), (f"M{i + 1}", True)]
        out.append((list(stack), rho[i]))
    return out


def rank_condition_bound(arch: Architecture, theta) -> int:
    """``m - rank`` of the differentials of the rank conditions at ``x = pi(theta)`` (exact).

    Parameters
    ----------
    arch : Architecture
        An architecture with an effective map.
    theta : NativeParams or mapping
        The native point.

    Returns
    -------
    int
        The upper bound ``m - rank``.

    Examples
    --------
    >>> arch = Architecture.uniform(2, 4, 2, 3, "exp")
    >>> rank_condition_bound(arch, random_native(arch, seed=0))  # d^2 + sum r(2d - r)
    40
    """
    eta = reduction(NativeParams.from_point(arch, point_of(theta))).as_dict()
    shapes = dict(arch.effective_shapes())
    offsets, m = {}, 0
    for name, shape in arch.effective_shapes():
        offsets[name] = m
        m += shape[0] * shape[1]
    functionals = []
    for stack, bound in _rank_conditions(arch):
        S = np.concatenate([eta[b].T if t else eta[b] for b, t in stack], axis=0)
        stack_matrix = Matrix.rational(S)
        if stack_matrix.rank() != bound:
            continue  # below its bound: the minors' differentials vanish there
        left, right = stack_matrix.T.nullspace(), stack_matrix.nullspace()
        for u in left:
            for v in right:
                f = Matrix.rational(np.zeros((1, m), dtype=int)).entries[0]
                row = 0
                for b, t in stack:
                    p, q = shapes[b]
                    for a in range(p):
                        for c in range(q):
                            k = offsets[b] + a * q + c
                            f[k] += u[row + c] * v[a] if t else u[row + a] * v[c]
                    row += q if t else p
                functionals.append(f)
    return m - Matrix.rational(np.array(functionals, dtype=object)).rank()


def generic_native(arch: Architecture, seed: int = 0):
    """A seeded rational native point off the obvious degeneracies: full-rank ``Q, K`` of every
    head and, with an effective map, ``L != 0``, ``sym M_i != 0`` and ``rank P_i = min(d_0..d_i)``
    (seeds ``seed, seed + 1, ...`` are tried; the bounds are valid at any point, this only
    makes them likely to meet). :class:`~symattn.model.parameters.NativeParams` for the
    paper's stack, else a dict of blocks.

    Parameters
    ----------
    arch : Architecture
    seed : int, optional
        The first seed tried.

    Returns
    -------
    NativeParams or dict

    Raises
    ------
    SymattnError
        If no point off the degeneracies is found in 100 seeds.

    Examples
    --------
    >>> arch = Architecture((1, 3, 1), (2, 2), 3, tuple(Architecture.uniform(2, 1, 1, 3).normalizers))
    >>> bool((reduction(generic_native(arch)).L != 0).any())
    True
    """
    for k in range(100):
        point = random_point(arch, seed + k)
        if _generic(arch, point):
            return NativeParams.from_point(arch, point) if arch.in_paper_model else point
    raise SymattnError("no generic native point found in 100 seeds")


def _generic(arch: Architecture, point: dict) -> bool:
    """The degeneracies :func:`generic_native` avoids (exact ranks)."""
    for i, layer in enumerate(arch.layers, 1):
        for blocks, head in zip(layer.head_blocks(i), layer.heads):
            r = min(head.rank, layer.width_in)
            if not Matrix.rational(point[blocks["Q"].name]).rank() == r == Matrix.rational(point[blocks["K"].name]).rank():
                return False
    # a LayerNorm gain with a zero entry makes that feature constant (more invariances than generic)
    if any(v == 0 for name, value in point.items() if arch.block(name).is_norm_gain
           for v in np.asarray(value).reshape(-1)):
        return False
    if not arch.has_effective_map:
        return True
    theta = NativeParams.from_point(arch, point)
    eta = reduction(theta)
    ok = bool((eta.L != 0).any()) and all(bool((m + m.T != 0).any()) for m in eta.M)
    P = np.eye(arch.widths[0], dtype=int).astype(object)
    for i, v in enumerate(theta.V, 1):
        P = v.dot(P)
        ok = ok and Matrix.rational(P).rank() == min(arch.widths[: i + 1])
    return ok


def _jet_rank(arch: Architecture, theta, degree: int, rays: int, method: str,
              seed: int) -> int:
    """Rank (mod p or over Q) of the native Jacobian of the jet coefficients through
    ``degree`` along ``rays`` seeded rays: a lower bound on the rank of ``D F`` at ``theta``."""
    A = series_for(method, degree + 1)
    J = ray_jacobian(arch, theta, random_bank(arch, rays, seed), A).reshape(-1, arch.native_size)
    return Matrix(J, A.field).rank()


def neuromanifold_dimension(arch: Architecture, seed: int = 0, method: str = "modular",
                            degree: int | None = None, rays: int | None = None, point=None,
                            digits: int = 60) -> Dimension:
    """Certified dimension of the image of the native parameters: two proven bounds that meet.

    Parameters
    ----------
    arch : Architecture
        Widths ``d_0..d_l`` (any), head widths ``a_i``, tokens, normalizers, any layer parts.
    seed : int, optional
        Seed of the rational point and of the rays.
    method : {"modular", "exact", "numerical"}, optional
        ``"modular"`` or ``"exact"`` rank of jet coefficients for the lower bound, or
        ``"numerical"``: the ball tier of transformer blocks (:func:`ball_dimension`).
    degree : int, optional
        Jet degree observed (default Prop. C.1's ``N_l``, raised once if short).
    rays : int, optional
        Number of seeded rays (default: enough rows).
    point : dict, optional
        The native point (a dict of blocks, e.g. a model's own weights; default
        :func:`generic_native`): the lower bound is then the rank at that point.
    digits : int, optional
        Working precision of the ball tier (20 to 400).

    Returns
    -------
    Dimension
        ``dimension`` when the bounds meet (method ``"certified"``), else None with both
        bounds; the symmetries, the statement (:data:`~symattn.theorems.statements.EQ_40`
        where it covers ``arch``), the head permutations and the least jet degree.

    Raises
    ------
    SymattnError
        For a bad argument.
    Undecided
        When the exact or modular series cannot hold the architecture's constants
        (:class:`~symattn.core.algebras.functions.NotRational`: biases, irrational LayerNorm
        constants); ``method="numerical"`` is then the way.
    CheckFailed
        If the jet rank exceeds a proven upper bound, or a declared symmetry is not a
        kernel vector of the jet Jacobian.

    Notes
    -----
    Lower bound: the rank mod ``p`` of the native Jacobian of the zero-input jet
    coefficients along seeded rational rays (:func:`symattn.analyses.jets.ray_jacobian`
    with native tangents) at a seeded rational native point: a modular rank is at most
    the rational rank, which is at most the generic rank of ``D(theta -> F_theta)`` (ray
    coefficients are linear images of ``F``).

    Upper bound, the smaller of two, both proven:

    * ``P - rank(gauges)`` (:class:`symattn.model.symmetries.GaugeKernel`): the factor
      gauges (eq. 4) and interface directions ``GL(d_j)`` are vector fields, polynomial in
      ``theta``, that annihilate ``D pi`` identically (group actions preserving ``pi``;
      also verified exactly at the point). Their rank at the point is at most their
      generic rank, so the generic kernel of ``D pi`` is at least that large. For any
      architecture (skips, masks, several or concatenated heads) these are its declared
      symmetries (:func:`symattn.model.symmetries.declared_symmetries`), each verified as a
      kernel vector of the jet Jacobian.
    * ``m - rank(Dg)``, wherever the stack has an effective map: the image of ``pi`` lies
      in the variety cut out by the rank conditions ``rank L <= rho_l``,
      ``rank M_i <= min(a_i, rho_{i-1})`` and
      ``rank [L; M_l; M_l^T; ...; M_{i+1}; M_{i+1}^T] <= rho_i`` with
      ``rho_i = min(d_0..d_i)``. At the point ``x = pi(theta)``, a stack of rank exactly
      its bound contributes the differentials of its minors, the functionals
      ``u^T dS v`` (``u``, ``v`` null vectors); then
      ``dim image(pi) <= dim T_x V <= m - rank`` of those functionals (exact over Q).

    Since ``F = R o pi``, ``dim image(F) <= dim image(pi)``. The rank-condition bound is
    the sharp one where interface directions become dependent (a head width
    ``a_i >= d_{i-1}``, a wide middle layer ``d_j > d_0``) or an interface subspace is
    left free (widths ``5, 4, 1``: the gauges give 24, the dimension is 23). When the
    bounds do not meet both are reported and ``dimension`` is None. Normalizers need
    rational Taylor data; the points are seeded, so bounds that do not meet at one seed
    may meet at another.

    Raises
    ------
    CheckFailed
        A declared symmetry kind's count differs from its closed form
        (:func:`~symattn.model.symmetry_counts.check_counts`; at a given point the exact counts only), or
        the jet rank exceeds the upper bound.

    Examples
    --------
    >>> arch = Architecture((3, 2, 3), (1, 1), 2, tuple(Architecture.uniform(2, 1, 1, 2).normalizers))
    >>> r = neuromanifold_dimension(arch)
    >>> r.dimension, r.parameters, r.method, r.gauge_bound
    (16, 22, 'certified', 16)
    >>> r = neuromanifold_dimension(Architecture.uniform(2, 2, 1, 3, "exp", heads=2))
    >>> r.lower_bound, r.upper_bound, r.parameters, r.symmetries, r.theorem
    (24, 24, 32, {'factor gauge': 4, 'interface': 4}, None)
    >>> [(p["layer"], p["group_order"], p["verified"]) for p in r.head_permutations]
    [(1, 2, True), (2, 2, True)]
    """
    require_architecture(arch)
    require_int(seed, "seed", 0, 2**63 - 1)
    require_choice(require_str(method, "method"), "method", ("modular", "exact", "numerical"))
    for value, what in ((degree, "degree"), (rays, "rays")):
        if value is not None:
            require_int(value, what, 1, 10_000)
    require_int(digits, "digits", 20, 400)
    start = time.perf_counter()
    if method == "numerical":
        check_counts(arch, GaugeKernel(arch, generic_native(arch, seed) if point is None else point_of(point)).kinds(),
                     generic=point is None)
        return ball_dimension(arch, seed, digits, rays, point)
    refuse_biased_jets(arch)
    theta = generic_native(arch, seed) if point is None else point_of(point)
    P = arch.native_size
    kernel = GaugeKernel(arch, theta)
    check_counts(arch, kernel.kinds(), generic=point is None)  # every kind declares its formula's count
    upper_g = P - kernel.rank()
    upper_r = rank_condition_bound(arch, theta) if arch.has_effective_map else None
    upper = min(upper_g, upper_r) if upper_r is not None else upper_g
    N = degree or prop_c1_degree(arch)
    R = rays or default_rays(arch, upper)
    for attempt in range(2):
        A = series_for(method, N + 1)
        try:
            J = ray_jacobian(arch, theta, random_bank(arch, R, seed), A)
        except NotRational as exc:
            raise NotRational(f"{str(exc).split('; use ')[0].split(': use ')[0]}; for the dimension use --method "
                              "numerical (ball arithmetic)") from None
        flat = J.reshape(-1, P)
        kernel.verify(lambda dirs: _times(flat, dirs, A.field), A.field, where="the jet Jacobian")
        lower = Matrix(flat, A.field).rank()
        if lower == upper or degree is not None:
            break
        N, R = 2 * N + 1, 2 * R
    if lower > upper:  # a rank at a point never exceeds a proven upper bound: one of them is wrong
        raise CheckFailed(f"the jet rank {lower} exceeds the upper bound {upper} (gauges {upper_g}, rank "
                          f"conditions {upper_r}): a bound of the neuromanifold dimension is wrong")
    certified = lower == upper
    sharp = _least_degree(J, A, lower) if certified else None
    perms = head_permutation_check(arch, theta, random_bank(arch, 2, seed))
    flips = hidden_sign_flip_check(arch, theta, random_bank(arch, 2, seed))
    notes = _dimension_notes(arch, lower, upper, upper_g, upper_r, N, R, method, sharp, perms, kernel)
    return Dimension(lower if certified else None, P, lower, upper,
                     "certified" if certified else method, certified, upper_g, upper_r, N, R,
                     round(time.perf_counter() - start, 3), notes, arch.describe(), kernel.kinds(),
                     statements.label(statements.EQ_40, arch), sharp, perms, upper - lower,
                     hidden_sign_flips=flips)


def _ball_products(J: np.ndarray, vectors: list[np.ndarray], digits: int) -> list:
    """The entries of ``J xi`` (balls) for each rational direction ``xi``."""
    import flint

    from symattn.core.algebras.balls import digits_to_bits

    ctx = flint.ctx
    old = ctx.prec
    ctx.prec = digits_to_bits(digits)
    try:
        out = []
        for xi in vectors:
            nz = [(j, flint.arb(Fraction(v).numerator) / Fraction(v).denominator) for j, v in enumerate(xi) if v != 0]
            out.append([sum((row[j] * c for j, c in nz), flint.arb(0)) for row in J])
        return out
    finally:
        ctx.prec = old


def _certified_rank(J: np.ndarray, C: np.ndarray | None, digits: int, columns: list[int] | None = None
                    ) -> tuple[int, int]:
    """``(certified, numerical)``: :func:`~symattn.core.rank_certificate.certified_rank` of the balls of
    ``J C`` (or of ``J`` on ``columns``; binary64 Weyl bounds first, then minors at ``digits`` digits,
    pivoted at ``digits`` digits): a proven lower bound ``rank J >= certified`` beside the numerical
    rank at ``digits``."""
    from symattn.core.algebras.balls import digits_to_bits, precision
    from symattn.core.rank_certificate import certified_rank

    if columns is not None:
        A = J[:, columns]
    else:
        with precision(digits_to_bits(digits)):
            A = np.array(_ball_products(J, [C[:, c] for c in range(C.shape[1])], digits), dtype=object).T
    cert = certified_rank(A, digits=digits)
    return cert.rank, cert.numerical


#: Digits the certified rank of a ball Jacobian goes up to (:func:`_ball_rank`).
BALL_RANK_MAX_DIGITS = 960

#: Seconds one certified rank of a ball Jacobian may spend (:func:`_ball_rank`, unless told).
BALL_RANK_SECONDS = 120.0


def _ball_rank(arch: Architecture, values: dict, kernel: GaugeKernel, X: np.ndarray, digits: int,
               upper: int | None = None, seconds: float | None = None, columns: list[int] | None = None,
               ) -> tuple[int, int, int]:
    """``(certified rank, numerical rank, digits)`` of the bank Jacobian at ``values`` (balls; on
    ``columns`` where given, else on an exact complement of the declared symmetries), after checking
    every declared symmetry as a kernel vector to half the digits (a ball of ``J xi`` excluding 0 is
    a failed check, :class:`~symattn.core.errors.CheckFailed`; balls wider than that raise the
    digits). The digits are doubled, up to :data:`BALL_RANK_MAX_DIGITS`, until the certified rank
    reaches ``upper``, or the certified and numerical ranks agree with each other and with the
    previous level's numerical rank (graded scales: a LayerNorm at width 2 with ``eps = 1e-5`` has
    singular values far below 60 digits' cutoff, and the numerical rank grows with the digits), or
    the next level, at four times the last one's time, would pass ``seconds`` (default
    :data:`BALL_RANK_SECONDS`)."""
    import flint

    from symattn.analyses.numerics import observation_jacobian
    from symattn.core.algebras import BallAlgebra
    from symattn.core.linalg import kernel_complement

    C = kernel_complement(kernel.directions, arch.native_size) if columns is None else None
    start, last = time.process_time(), None  # CPU time: the same levels on a busy machine
    while True:
        level = time.process_time()
        J = observation_jacobian(arch, values, X, BallAlgebra(digits))
        scale = max((abs(float(v.mid())) for v in J.reshape(-1)), default=0.0) or 1.0
        tol, wide = scale * flint.arb(10) ** (-(digits // 2)), False
        for s, products in zip(kernel.symmetries, _ball_products(J, kernel.directions, digits)):
            if any(not v.contains(0) for v in products):  # a ball without 0: J xi != 0, proved
                raise CheckFailed(f"the declared {s.kind} of layer {s.layer} is not a kernel vector of the bank "
                                  f"Jacobian (an entry of J xi is a ball excluding 0 at {digits} digits)")
            wide = wide or not all(abs(v) < tol for v in products)
        top = 2 * digits > BALL_RANK_MAX_DIGITS
        if wide and top:
            raise Undecided(f"the declared symmetries are not resolved as kernel vectors at {digits} digits (the "
                            f"balls of J xi contain 0 but are wider than 10^-{digits // 2} of the largest entry)")
        certified, numerical = (0, 0) if wide else _certified_rank(J, C, digits, columns)
        now = time.process_time()
        late = (now - start) + 4 * (now - level) > (BALL_RANK_SECONDS if seconds is None else seconds)
        if not wide and (certified == upper or certified == numerical == last or top or late):
            return certified, numerical, digits
        last = None if wide else numerical
        digits *= 2


#: CPU seconds the ball tier of one dimension may spend (:func:`ball_dimension`, unless told).
BALL_DIMENSION_SECONDS = 900.0


def _ball_bank_size(arch: Architecture, rays: int | None = None) -> int:
    """The bank of the ball tier: ``rays``, or enough inputs for 3/2 rows per parameter."""
    return rays or max(2, -(-(3 * arch.native_size) // (2 * arch.widths[-1] * arch.tokens)) + 2)


def ball_dimension_bytes(arch: Architecture, digits: int = BALL_RANK_MAX_DIGITS, rays: int | None = None) -> int:
    """Estimated peak bytes of :func:`ball_dimension` at up to ``digits`` digits (by default the
    most its ranks may raise the precision to): one ball Jacobian of its bank
    (:func:`~symattn.core.limits.ball_evaluation_bytes`), checked before anything is allocated.

    Parameters
    ----------
    arch : Architecture
    digits : int, optional
    rays : int, optional
        The bank size (default: as :func:`ball_dimension` chooses it).

    Returns
    -------
    int
    """
    from symattn.core.limits import ball_evaluation_bytes

    width = max(max(arch.widths), max((layer.mlp for layer in arch.layers), default=0))
    return ball_evaluation_bytes(arch.native_size, _ball_bank_size(arch, rays), arch.tokens, width,
                                 arch.depth, digits)


def ball_dimension(arch: Architecture, seed: int = 0, digits: int = 60, rays: int | None = None,
                   point=None, points: int = 3, seconds: float | None = None) -> Dimension:
    """The ball tier of :func:`neuromanifold_dimension`: a certified lower bound from the bank
    Jacobian in ball arithmetic and the upper bound ``P - rank(symmetries)``.

    Parameters
    ----------
    arch : Architecture
        Any layer parts (biases, LayerNorm, MLPs included).
    seed : int, optional
        Seed of the rational point and bank.
    digits : int, optional
        Working precision of the balls.
    rays : int, optional
        Bank size (default: enough rows).
    point : dict, optional
        The native point (default: a seeded rational one).
    points : int, optional
        How many seeded points are tried before the lower bound is given up.
    seconds : float, optional
        CPU seconds allowed (default :data:`BALL_DIMENSION_SECONDS`). Its memory is
        estimated by :func:`ball_dimension_bytes`.

    Returns
    -------
    Dimension
        Method ``"certified"`` when the bounds meet; ``unexplained`` the kernel no declared
        symmetry explains (numerical); no jet degree (``jet_degree`` None).

    Raises
    ------
    SymattnError
        For a bad argument, or when the work passes ``seconds`` of CPU time.

    Notes
    -----
    The jets expand from ``X = 0``, where biases make the scores ``b_Q^T b_K`` nonzero, a
    LayerNorm takes ``1/sqrt`` of ``eps`` (or of ``var + eps``) and an activation acts on
    ``W_1 y + b_1``; the exact series hold these only where every constant is rational.
    This tier takes the Jacobian of the outputs on a seeded rational bank at the seeded
    rational point, in python-flint ball arithmetic at ``digits`` digits. Its lower bound
    is certified by :func:`~symattn.core.rank_certificate.certified_rank` on ``J C``
    (``C`` an exact basis of the complement of the declared symmetries): the singular
    values of its binary64 enclosure bounded below by Weyl's inequality, and where that
    falls short of the numerical rank, a ``k x k`` minor (chosen by a pivoted Gram-Schmidt
    of the ball midpoints) whose determinant ball excludes 0; so ``rank J >= k`` at that
    rational point, hence generically. The upper bound is ``P`` minus the exact rank of the
    declared symmetries, each checked as a kernel vector to ``digits / 2`` digits
    (numerical, not exact). What lies between is ``unexplained``; its size is the float64
    rank defect of the midpoints (numerical).

    Examples
    --------
    >>> r = ball_dimension(Architecture.uniform(1, 2, 1, 3, "exp", norm="post"), digits=30)
    >>> r.lower_bound, r.upper_bound, r.parameters, r.unexplained, r.symmetries
    (9, 9, 12, 0, {'factor gauge': 1, 'LayerNorm shift': 2})
    """
    from symattn.core.limits import time_budget
    from symattn.core.validate import require_real

    budget = BALL_DIMENSION_SECONDS if seconds is None else require_real(seconds, "seconds", 0, 86400, open_low=True)
    with time_budget(budget, "the ball tier of the dimension", cpu=True):
        return _ball_dimension(arch, seed, digits, rays, point, points)


def _ball_dimension(arch: Architecture, seed: int, digits: int, rays: int | None, point, points: int) -> Dimension:
    start = time.perf_counter()
    P = arch.native_size
    B = _ball_bank_size(arch, rays)
    X = random_bank(arch, B, seed)
    from symattn.analyses.collapse import path_point_of

    # the seeded points, then the collapse path's point at t = 1 (path_point_of: its value maps the
    # identity; where the seeded points' graded scales hide singular values at every precision, it
    # may show them: the full post-norm layer at D = 2, rank 28 at the seeded points, 32 there)
    seeds: list = [None] if point is not None else list(range(seed, seed + points)) + ["path"]
    by_seed: dict[str, "int | str"] = {}
    best = least = None
    # the rank at any point is a lower bound: the largest over the seeded points; a point whose
    # large scores (exp of hundreds) leave the balls unresolved is retried with its query and key
    # factors divided by 8 ("tamed", still a rational point)
    for tame in (1, 8):
        for s_ in seeds:
            try:
                values = point_of(point) if s_ is None else point_of(
                    path_point_of(arch, seed) if s_ == "path" else generic_native(arch, s_))
            except SymattnError:  # no collapse path (a head wider than the layer)
                continue
            values = {n: (v / tame if arch.block(n).is_factor else v) for n, v in values.items()}
            name = ("given" if s_ is None else str(s_)) + ("" if tame == 1 else f" tamed 1/{tame}")
            kernel = GaugeKernel(arch, values)
            upper = P - kernel.rank()
            try:
                rank, numerical, used = _ball_rank(arch, values, kernel, X, digits, upper=upper)
            except Undecided:
                by_seed[name] = "unresolved"
                continue
            by_seed[name] = rank
            # the lower bound is the largest rank over the points, the upper bound the smallest
            # P - rank(symmetries) (the declared fields' rank at any point is at most their generic rank)
            if best is None or rank > best[0]:
                best = (rank, values, numerical, used)
            if least is None or upper < least[0]:
                least = (upper, kernel)
            if best[0] == least[0]:
                break
        if best is not None:
            break
    if best is None:
        raise Undecided(f"the ball tier resolves no point at up to {BALL_RANK_MAX_DIGITS} digits ({by_seed}): the "
                        "scores are too large")
    (lower, values, numerical, digits), (upper, kernel) = best, least
    if lower > upper:
        raise CheckFailed(f"the certified rank {lower} exceeds P - rank(symmetries) = {upper}: a bound is wrong")
    certified = lower == upper
    tier = f"certified lower bound (balls at {digits} digits)"
    notes = [n for n in [statements.outside_note(arch)] if n]
    notes.append(f"lower bound: rank of the output Jacobian on {B} seeded inputs at the seeded rational point, "
                 f"certified in ball arithmetic at {digits} digits (the rank of J C proved at least {lower}, C an "
                 "exact basis of the complement of the symmetries: its singular values bounded below by Weyl's "
                 "inequality in binary64 balls, else a minor whose determinant ball excludes 0)")
    notes.append(f"upper bound: P - rank of the declared symmetries = {P} - {P - upper} (exact rank; each "
                 f"checked as a kernel vector to {digits // 2} digits in balls, numerical)")
    if not certified:
        notes.append(f"unexplained kernel: {upper - lower} directions beyond the declared symmetries (the "
                     f"numerical rank defect of J C at {digits} digits, cutoff 10^-{3 * digits // 4} relative); "
                     f"dimension undecided in [{lower}, {upper}]")
    if numerical > lower:
        notes.append(f"the numerical rank {numerical} is certified only to {lower} at {digits} digits (the "
                     "lower bound is the certified one)")
    notes.append(f"certified rank by seeded point {by_seed} (the largest is the lower bound: the rank at any point "
                 "bounds the generic rank from below, and the upper bound is the smallest P - rank(symmetries) over the "
                 "same points; points differ where saturated activations or LayerNorms "
                 f"push singular values below 10^-{3 * digits // 4})")
    notes.append("no jet degree in the ball tier (the exact series refuse this stack)")
    perms = head_permutation_check(arch, values, X[:2])
    return Dimension(lower if certified else None, P, lower, upper, "certified" if certified else "numerical",
                     certified, upper, None, 0, B, round(time.perf_counter() - start, 3), notes, arch.describe(),
                     kernel.kinds(), statements.label(statements.EQ_40, arch), None, perms, upper - lower, tier,
                     hidden_sign_flips=hidden_sign_flip_check(arch, values, X[:2]))


def _times(J: np.ndarray, directions: np.ndarray, field) -> np.ndarray:
    """``J directions^T`` in ``field`` (exact; mod p by float64 BLAS products)."""
    xi = field.convert(np.asarray(directions, dtype=object))
    if isinstance(field, PrimeField):
        return matmul_mod(J, xi.T, field.p)
    return J.dot(xi.T)


def _least_degree(J: np.ndarray, A, rank: int) -> int:
    """The least ``k`` whose ray coefficients ``rho^0..rho^k`` already reach ``rank``."""
    lo, hi = 0, J.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if Matrix(J[: mid + 1].reshape(-1, J.shape[2]), A.field).rank() == rank:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _dimension_notes(arch: Architecture, lower: int, upper: int, upper_g: int, upper_r: int | None, N: int,
                     R: int, method: str, sharp: int | None, perms: list, kernel: GaugeKernel) -> list[str]:
    notes = []
    outside = statements.outside_note(arch)
    if outside:
        notes.append(outside)
    if sharp is not None and not statements.THEOREM_3.covers(arch):  # Theorem 3 gives it otherwise
        notes.append(f"jet degree {sharp}: the ray coefficients through rho^{sharp} already have the full "
                     f"rank (proved); through rho^{sharp - 1} they fall short at this point and these rays "
                     "(evidence)")
    if lower != upper:
        notes.append(f"bounds do not meet: {lower} <= dim <= {upper}")
    notes.append(f"lower bound: rank of the native Jacobian of the degree <= {N} jet along {R} rays "
                 f"({'over GF(p), a lower bound on the rank over Q' if method == 'modular' else 'over Q'})")
    if upper_r is not None:
        notes.append(f"upper bounds: P - rank(gauges) = {upper_g}; rank conditions = {upper_r} (exact)")
    else:
        notes.append(f"upper bound: P - rank of the declared symmetries = {arch.native_size} - "
                     f"{arch.native_size - upper_g} (exact; each verified as a kernel vector of the same "
                     "Jacobian mod p)")
    if perms:
        notes.append("head permutations (finite groups, see head_permutations): each fiber contains "
                     "the orbit of its point; they lower no dimension")
    return notes


def hmk_table(deltas: Sequence[int] = range(3, 11), depth: int = 2, tokens: int = 3, head: int = 2,
              normalizer: str = "exp", seed: int = 0) -> list[dict]:
    """The HMK experiment, certified: ``l = depth`` layers, ``t = tokens``, head
    dimension ``a = head``, embedding dimension ``delta`` for every width.

    Reading of HMK's setting (their Section 3.3 and Figure 3): a deep softmax
    attention network with ``l = 2`` layers, ``t = 3`` tokens, ``a_i = 2`` and
    ``d_i = delta`` for *every* width ``d_0 = d_1 = d_2``, query/key matrices
    ``delta x a`` and value matrices ``delta x delta``; their "expected"
    dimension is ``delta^2 + sum_i a_i (2 delta - a_i)`` (eq. 16 there, eq. 40
    here). Each row holds the certified dimension and both bounds beside it.

    Notes
    -----
    HMK's NeuroDim estimates the same number as the numerical rank of a float32
    Jacobian of the outputs on 250 Gaussian inputs (Figure 3 there). That is a
    float threshold decision: it agrees with the certified value at a
    well-conditioned random point, but near collapse (small scores) the
    singular values of order ``s^beta_i`` (Theorem 4) fall below the float32
    threshold while the exact rank stays the dimension; see
    :func:`float32_rank_near_collapse`. Here the rank is decided exactly (mod p
    lower bound meeting proven upper bounds), never by a tolerance.

    Parameters
    ----------
    deltas : sequence of int, optional
        The embedding dimensions ``delta``, one row each.
    depth : int, optional
        Layers ``l``.
    tokens : int, optional
        Tokens ``t``.
    head : int, optional
        Head dimension ``a``.
    normalizer : str, optional
    seed : int, optional

    Returns
    -------
    list of dict
        Per row ``delta``, the certified ``dimension``, both bounds, HMK's ``formula`` and the
        time.

    Examples
    --------
    >>> [row["dimension"] == row["formula"] for row in hmk_table([3, 4])]
    [True, True]
    """
    rows = []
    for delta in deltas:
        arch = Architecture.uniform(depth, delta, head, tokens, normalizer)
        r = neuromanifold_dimension(arch, seed)
        rows.append({"delta": delta, "parameters": r.parameters, "dimension": r.dimension,
                     "lower_bound": r.lower_bound, "upper_bound": r.upper_bound,
                     "formula": hmk_formula(delta, depth, head), "method": r.method,
                     "seconds": r.seconds})
    return rows


def float32_rank_near_collapse(arch: Architecture, scales: Sequence[str | Fraction | int],
                               bank: int = 250, seed: int = 0) -> list[dict]:
    """What a float32 Jacobian-rank estimate (in the manner of NeuroDim) sees near collapse.

    At the native point ``Q_i = s U_i``, ``K_i = s W_i`` (``U, W, V`` the seeded
    rational point :func:`generic_native`) and for each rational scale ``s``:

    * ``exact_rank``: the rank mod p of the native jet Jacobian at that exact
      rational point (a proven lower bound on the rank of ``D F`` there; equal
      to the certified dimension means the point is a regular point);
    * ``numerical_rank``: the Jacobian of the outputs on ``bank`` standard
      normal inputs, computed in float64 with forward tangents, rounded to
      float32, its singular values thresholded as :func:`numpy.linalg.matrix_rank`
      does (``sigma_max * max(shape) * eps32``) -- numerical (float32);
      ``sigma_at_exact_rank`` is its singular value number ``exact_rank``.

    Singular values of order ``s^beta_i`` (Theorem 4) fall below the float32
    threshold long before the exact rank changes.

    Parameters
    ----------
    arch : Architecture
    scales : sequence of str, Fraction or int
        The rational scales ``s``.
    bank : int, optional
        Number of standard normal inputs of the float32 estimate.
    seed : int, optional

    Returns
    -------
    list of dict
        One row per scale: ``scale``, ``exact_rank``, ``numerical_rank``,
        ``sigma_at_exact_rank``.

    Examples
    --------
    >>> arch = Architecture.uniform(2, 3, 2, 3, "exp")
    >>> rows = float32_rank_near_collapse(arch, ["1", "1/1000"], bank=20)
    >>> [(r["exact_rank"], r["numerical_rank"] < 25) for r in rows]
    [(25, False), (25, True)]
    """
    theta = generic_native(arch, seed)
    A = Float64()
    P = arch.native_size
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((bank, arch.widths[0], arch.tokens))
    out = []
    N = prop_c1_degree(arch)
    for scale in scales:
        s = Fraction(scale)
        exact = {name: value * s if arch.block(name).is_factor else value for name, value in point_of(theta).items()}
        exact_rank = _jet_rank(arch, exact, N, default_rays(arch, P), "modular", seed)
        vals = {name: A.const(value) for name, value in exact.items()}
        vals["X"] = A.const(X)
        J = jacobian(native_network(arch), A, vals, [b.name for b in arch.blocks]).astype(np.float32)
        sv = np.linalg.svd(J, compute_uv=False)
        tol = sv.max() * max(J.shape) * np.finfo(np.float32).eps
        out.append({"scale": str(s), "exact_rank": exact_rank, "numerical_rank": int((sv > tol).sum()),
                    "sigma_at_exact_rank": float(sv[exact_rank - 1]), "largest": float(sv.max()),
                    "threshold": float(tol)})
    return out
