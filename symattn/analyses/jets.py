"""Zero-input Taylor jets T_N: sharp degrees, adaptive orders, rational inverse.

Theorem 3, Propositions C.1 and C.3 and Corollaries C.2 and 4.1 ask which finite
jet ``T_N`` (eq. 30) of the network at ``X = 0`` identifies its parameters. This
module computes the answer *from the network graph*: the jet is observed along
seeded rational rays ``X = rho Y``, whose coefficients through degree ``N`` are
linear images of ``T_N``, and the Jacobian of those coefficients (exact or
modular series with tangents, one column per parameter) gives the sharp degree
(:func:`sharp_degree`; :func:`native_sharp_degree` for the native map modulo the
declared symmetries). What the ranks prove is in the Notes of :func:`sharp_degree`.
The rational local inverse of App. C.3 is in :mod:`symattn.analyses.inverse` (its
names stay importable from here), the degree formulas in
:mod:`symattn.theorems.formulas`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from symattn.core.validate import require_choice, require_int, require_str
from symattn.model.architecture import require_architecture
from symattn.render.rich_result import RichResult
from symattn.analyses.genericity import degree_claim
from symattn.core.algebras import exact_series, series_for
from symattn.core.algebras.functions import NotRational
from symattn.core.algebras.series import SeriesAlgebra
from symattn.theorems.formulas import prop_c1_degree
from symattn.core.linalg import Matrix, SeriesMatrix
from symattn.core.errors import InternalError, SymattnError, Undecided
from symattn.model.network import effective_network, jacobian, native_network
from symattn.theorems import statements
from symattn.model.architecture import Architecture
from symattn.model.parameters import EffectiveParams, NativeParams, point_of, random_bank, random_rational_matrix

__all__ = [
    "JetResult",
    "default_rays",
    "refuse_biased_jets",
    "first_dependence",
    "full_rank_degree",
    "generic_effective",
    "jet_jacobian",
    "native_sharp_degree",
    "ray_jacobian",
    "sharp_degree",
]


#: Where the exact and modular jets refuse a stack, the tier that answers it (said in their message).
NUMERICAL_HINT = ("the numerical tier: symattn jet --method numerical, mpmath series at 300 digits, "
                  "proving nothing beyond numerical")


# -- generic points and rays ---------------------------------------------------

def generic_effective(arch: Architecture, seed: int = 0, skew: Sequence[bool] | None = None,
                      zero: Sequence[int] = ()) -> EffectiveParams:
    """A seeded random rational effective tuple with ``L != 0`` and ``sym M_i != 0``.

    ``skew[i]`` asks for a nonzero skew ``M_{i+1}``; layers in ``zero`` get ``M_i = 0``.

    Parameters
    ----------
    arch : Architecture
    seed : int, optional
    skew : sequence of bool, optional
        One flag per layer: that layer's score is a nonzero skew matrix.
    zero : sequence of int, optional
        Layers (1-based) whose score is zero.

    Returns
    -------
    EffectiveParams

    Raises
    ------
    SymattnError
        If ``skew`` has not one flag per layer, or a skew score is asked of width 1.

    Examples
    --------
    >>> eta = generic_effective(Architecture.uniform(2, 2, 2, 3, "exp"), seed=1, skew=[True, False])
    >>> bool((eta.M[0] + eta.M[0].T == 0).all()), bool((eta.M[1] + eta.M[1].T != 0).any())
    (True, True)
    """
    require_architecture(arch)
    require_int(seed, "seed", 0, 2**63 - 1)
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


def ray_jacobian(arch: Architecture, params: "EffectiveParams | NativeParams | Mapping[str, Any]", Y: np.ndarray,
                 algebra: SeriesAlgebra, blocks: Sequence[str] | None = None,
                 graph: "nx.DiGraph | None" = None) -> np.ndarray:
    """Jacobian of the ray coefficients of ``F(rho Y)`` in the parameter ``blocks``.

    ``params`` is effective (graph :func:`~symattn.model.network.effective_network`, blocks
    ``"L", "M1", ...``; for several heads ``"M1h1", ...``) or native
    (:func:`~symattn.model.network.native_network`, blocks ``"Q1", "K1", "V1", ...``), as
    :class:`~symattn.model.parameters.EffectiveParams`,
    :class:`~symattn.model.parameters.NativeParams` or a dict of blocks; ``blocks``
    defaults to all. Returns the array ``(order, rows, P)``: coefficient of ``rho^N``,
    rows (ray, output coordinate, token), columns the block entries in row-major order,
    blocks in the architecture's order. ``graph`` replaces the graph by one with the same
    inputs.

    Parameters
    ----------
    arch : Architecture
    params : EffectiveParams, NativeParams or mapping
        The point, effective or native.
    Y : numpy.ndarray
        The rays, ``(rays, d_0, n)``.
    algebra : SeriesAlgebra
        The truncated series (its order is the number of coefficients).
    blocks : sequence of str, optional
        The parameter blocks differentiated (default: all).
    graph : networkx.DiGraph, optional
        A graph with the same inputs instead of the architecture's.

    Returns
    -------
    numpy.ndarray
        Shape ``(order, rows, P)``.

    Raises
    ------
    SymattnError
        For a block name the point does not have.

    Examples
    --------
    >>> arch = Architecture.uniform(1, 1, 1, 2, "exp")
    >>> eta = generic_effective(arch, seed=0)
    >>> J = ray_jacobian(arch, eta, random_bank(arch, 2, seed=0), exact_series(4))
    >>> J.shape, bool((J[2] == 0).all())          # F is odd in X
    ((4, 4, 2), True)
    """
    values = point_of(params)
    effective = "L" in values
    if graph is None:
        graph = effective_network(arch) if effective else native_network(arch)
    known = arch.score_names() if effective else [b.name for b in arch.blocks]
    names = [n for n in known if n in values and (blocks is None or n in blocks)]
    if blocks is not None and len(names) != len(blocks):
        raise SymattnError(f"unknown parameter blocks {sorted(set(blocks) - set(values))}")
    vals = {name: algebra.const(value) for name, value in values.items()}
    vals["X"] = _ray_input(algebra, np.asarray(Y, dtype=object))
    return jacobian(graph, algebra, vals, names)


def jet_jacobian(arch: Architecture, point, degree: int, rays: int, seed: int = 0, method: str = "modular",
                 graph: "nx.DiGraph | None" = None, names: Sequence[str] | None = None) -> tuple:
    """The Jacobian of the ray coefficients of ``F(rho Y)`` through ``rho^degree`` at ``point``
    (native or effective, see :func:`ray_jacobian`) on ``rays`` seeded rational rays:
    ``(J, algebra)`` with ``J`` of shape ``(degree + 1, rows, P)`` (rows: ray, output
    coordinate, token; columns the blocks ``names``, default all).

    Parameters
    ----------
    arch : Architecture
    point : EffectiveParams, NativeParams or mapping
        The point (see :func:`ray_jacobian`).
    degree : int
        The highest power of ``rho`` kept.
    rays : int
        Number of seeded rational rays.
    seed : int, optional
        Seed of the rays.
    method : {"modular", "exact"}, optional
        The series algebra (:func:`~symattn.core.algebras.series_for`).
    graph : networkx.DiGraph, optional
        A graph with the same inputs instead of the architecture's.
    names : sequence of str, optional
        The parameter blocks (default: all).

    Returns
    -------
    tuple
        ``(J, algebra)``.

    Examples
    --------
    >>> v = Architecture.uniform(1, 2, 1, 2, "exp", skip="folded")
    >>> from symattn.model.parameters import random_point
    >>> J, A = jet_jacobian(v, random_point(v), 3, 2)
    >>> J.shape
    (4, 8, 4)
    """
    A = series_for(method, degree + 1)
    return ray_jacobian(arch, point, random_bank(arch, rays, seed), A, names, graph), A


def first_dependence(arch: Architecture, eta: EffectiveParams, block: str, Y: np.ndarray,
                     order: int, graph: "nx.DiGraph | None" = None) -> int | None:
    """Least degree ``N < order`` at which the ray coefficients depend on ``block``
    (its tangent columns nonzero), computed exactly over Q; None if none below ``order``.

    Parameters
    ----------
    arch : Architecture
    eta : EffectiveParams
        The effective tuple at which the coefficients are taken.
    block : str
        The parameter block, e.g. ``"M2"``.
    Y : numpy.ndarray
        The rays (a bank, :func:`~symattn.model.parameters.random_bank`).
    order : int
        Degrees below it are tried.
    graph : networkx.DiGraph, optional
        A graph with the effective inputs replacing the architecture's.

    Returns
    -------
    int or None

    Examples
    --------
    >>> arch = Architecture.uniform(2, 1, 1, 2, "exp")
    >>> first_dependence(arch, generic_effective(arch), "M2", random_bank(arch, 1), 9)
    7
    """
    A = exact_series(order)
    J = ray_jacobian(arch, eta, Y, A, blocks=[block], graph=graph)
    nz = [N for N in range(order) if not A.field.is_zero(J[N]).all()]
    return nz[0] if nz else None


@dataclass(repr=False)
class JetResult(RichResult):
    """Result of :func:`sharp_degree` (``to_json`` gives the CLI keys).

    >>> sharp_degree(Architecture.uniform(1, 1, 1, 2, "exp"))
    <JetResult: sharp degree N = 3 (effective map): rank 2 of 2 parameters, modular ranks on 2 rays (at this point); generic (certified); Theorem 3 ...>
    """

    sharp_degree: int | None
    lower_jets_independent_of_last: bool | None
    immersion: bool
    method: str
    seconds: float
    parameters: int
    rays: int
    profile: list[int]
    notes: list[str] = field(default_factory=list)
    #: the layers (:meth:`~symattn.model.architecture.Architecture.describe`)
    architecture: str = ""
    #: the map asked about: the effective map, or the native map modulo the declared symmetries
    map: str = "effective"
    #: the degree at which the last layer's parameters first enter the ray coefficients (exact over Q)
    last_layer_enters: int | None = None
    #: the exact rank of the declared symmetries (native map; 0 for the effective map)
    symmetry_rank: int = 0
    #: the statement that covers the sharp degree (its label), or None (``theorem: null``)
    theorem: str | None = None
    #: native map: the sharp degree at each seeded point (None: undecided there)
    by_seed: dict = field(default_factory=dict)
    #: the working precision of the numerical tier (``method = "numerical"``); None for exact and modular ranks
    digits: int | None = None
    #: numerical tier: per degree, log10 of the smallest counted and the largest discarded singular value
    #: relative to the largest (:func:`~symattn.analyses.numerical_jets.gap_rank`); empty otherwise
    gaps: list = field(default_factory=list)
    #: the effective map: the seed of its point's rays (and of the point, when drawn); None for the native map
    seed: int | None = None
    #: what the degree is about: ``"at this point"`` (the given or seeded point's degree)
    about: str = "at this point"
    #: the generic claim (:func:`~symattn.analyses.genericity.degree_claim`): ``generic (certified)``,
    #: ``generic upper bound (certified)`` or ``at this point``
    generic: str = "at this point"
    #: the claim's seeds, degree and special seeds (:meth:`~symattn.analyses.genericity.GenericClaim.to_json`)
    claim: dict = field(default_factory=dict)

    def label_generic(self, theorem_degree: int | None, given: bool) -> "JetResult":
        """Label the result with its generic claim and return it.

        Parameters
        ----------
        theorem_degree : int or None
            The generic degree a statement of the paper gives for the points' class (Prop. C.1, or
            Prop. C.3 for skew prefix scores), or None.
        given : bool
            The point was given, not drawn: without a theorem the claim is about it.

        Returns
        -------
        JetResult
            ``self``, with :attr:`generic` and :attr:`claim` set by
            :func:`~symattn.analyses.genericity.degree_claim`.
        """
        if self.sharp_degree is not None:
            claim = degree_claim(self.by_seed or {str(self.seed): self.sharp_degree}, theorem_degree, given)
            self.generic, self.claim = claim.label, claim.to_json()
        return self

    @property
    def injective(self) -> bool:
        """``D T_N`` injective (modulo the declared symmetries for the native map): :attr:`immersion`."""
        return self.immersion

    def to_json(self) -> dict:
        return asdict(self)

    def _headline(self) -> str:
        N = self.sharp_degree
        degree = "undecided" if N is None else f"N = {N}"
        how = self.method if self.digits is None else f"{self.method} (at {self.digits} digits)"
        return (f"sharp degree {degree} ({self.map} map): rank {self.profile[-1] if self.profile else 0} of "
                f"{self.parameters} parameters, {how} ranks on {self.rays} rays ({self.about}); {self.generic}; "
                f"{self.theorem or 'computed'}")

    def _summary(self) -> tuple[str, list[tuple[str, str]]]:
        """The sharp degree, the lower-jet check and the rank profile."""
        N = self.sharp_degree
        profile = ", ".join(f"$N = {n}$: {rank}" for n, rank in enumerate(self.profile))
        rows = [("least $N$ with $DT_N$ injective", "undecided" if N is None else f"$N = {N}$"),
                ("every lower jet independent of $M_D$", str(self.lower_jets_independent_of_last)),
                ("rank of $DT_N$ (of " f"{self.parameters} parameters)", profile),
                ("method", f"{self.method} ranks" + ("" if self.digits is None else f" at {self.digits} digits")
                 + f" on {self.rays} rays, {self.seconds:.2f} s"),
                ("about", self.about), ("generic claim", self.claim.get("note", self.generic))]
        return "Zero-input jets (Theorem 3)", rows + [("note", n) for n in self.notes]


def refuse_biased_jets(arch: Architecture) -> None:
    """Raise :class:`~symattn.core.errors.Undecided` (one line) where some layer's scores are nonzero
    at ``X = 0``: the jets expand from there, and the exact and modular series expand the normalizer
    around score 0 only. That is a layer with biases (scores ``b_Q^T b_K``), a pre-norm layer (its
    heads read ``LN(0) = s``), or a layer after a post-norm LayerNorm or an MLP sublayer (their
    output at ``X = 0`` is ``s``, or ``W_2 f(b_1) + b_2``: constant tokens, scores ``x^T Q K^T x``).

    Parameters
    ----------
    arch : Architecture

    Raises
    ------
    Undecided
        Where some layer's scores are nonzero at ``X = 0`` (it names the layer and says to use
        ``--method numerical``).

    Examples
    --------
    >>> refuse_biased_jets(Architecture.uniform(2, 2, 1, 3, norm="post"))
    Traceback (most recent call last):
    ...
    symattn.core.errors.Undecided: layer 2's scores are nonzero at X = 0 (its input there is ... --method numerical, ...
    """
    zero_input = True  # the layer's input at X = 0 is zero
    for i, layer in enumerate(arch.layers, 1):
        why = ("it has biases (scores b_Q^T b_K)" if layer.bias else
               "it is pre-norm (its heads read N(0))" if layer.pre_norm else
               None if zero_input else "its input there is the constant output of the LayerNorm or MLP before it")
        if why is not None:
            raise Undecided(f"layer {i}'s scores are nonzero at X = 0 ({why}), and the exact and modular series "
                            "expand the normalizer around score 0 only: no exact jet from X = 0 is computed "
                            f"({NUMERICAL_HINT})")
        zero_input = not layer.has_norm and not layer.mlp


def default_rays(arch: Architecture, P: int) -> int:
    """Seeded rays enough for ``P`` unknowns: one more than ``P`` over the outputs
    per ray (``d_D n``), at least 2.

    Parameters
    ----------
    arch : Architecture
        Gives the outputs per ray, ``d_D n``.
    P : int
        The number of unknowns (parameter directions).

    Returns
    -------
    int

    Examples
    --------
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

    Parameters
    ----------
    profile_at : callable
        ``profile_at(N, R)``: the rank profile through degree ``N`` on ``R`` rays.
    target : int
        The rank sought.
    degree : int
        The first degree tried.
    rays : int
        The first number of rays tried.
    max_degree : int
        The degree past which the search gives up.

    Returns
    -------
    tuple of (list of int, int, int)
        The last profile, degree and number of rays.

    Examples
    --------
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
                 graph: "nx.DiGraph | None" = None, points: int = 3) -> JetResult:
    """Least ``N`` with ``D T_N`` injective at ``eta``, and the lower-jet check.

    Which map is asked about depends on the architecture (the model says,
    :attr:`~symattn.model.architecture.Architecture.effective_map`): where the
    native model reduces to an effective map (the paper's stack, or masked layers)
    its effective tuple ``(L, M_1..M_D)``, as in Theorem 3; otherwise the native
    map, injective **modulo the declared symmetries** (:func:`native_sharp_degree`).

    Parameters
    ----------
    arch : Architecture
        For the effective map only the widths ``d_0, d_D`` are used; any normalizers with
        rational Taylor data.
    eta : EffectiveParams, optional
        The marked tuple; default :func:`generic_effective` with ``seed``.
    seed : int, optional
        Seed of the tuple, the rays and (native map) the first point.
    method : {"modular", "exact"}, optional
        ``"modular"`` (ranks over F_p: lower bounds on the rational ranks, a full rank
        proves injectivity) or ``"exact"`` (ranks over Q); the numerical tier (mpmath series
        at 300 digits, also for the block stacks these refuse) is
        :func:`~symattn.analyses.numerical_jets.numerical_sharp_degree`.
    max_degree : int, optional
        Give up (undecided) beyond this degree.
    rays : int, optional
        Number of seeded random rays (default: enough rows, grown if needed).
    blocks : sequence of str, optional
        Restrict the injectivity question to these parameter blocks.
    hint : int, optional
        First truncation degree tried (a speed hint only; by default the Prop. C.1 degree).
        The answer is the least degree of full rank among *all* degrees below the
        truncation, so the hint cannot change it.
    graph : networkx.DiGraph, optional
        A graph with the effective inputs replacing the architecture's (see
        :func:`ray_jacobian`).
    points : int, optional
        Native map only: the number of seeded points asked (the least degree is reported).

    Returns
    -------
    JetResult
        The sharp degree (None when undecided below ``max_degree``), which map was asked,
        whether the lower jets miss the last score, and the statement that covers it.

    Raises
    ------
    SymattnError
        For a bad argument (a block name, a degree out of range).
    Undecided
        Where the exact or modular series cannot hold the stack's constants (biases,
        norms at ``X = 0``: :func:`refuse_biased_jets`).

    Notes
    -----
    The lower-jet check asks, exactly over Q, whether the ray coefficients of
    degree below the sharp degree are independent of the last score ``M_D``.

    What the computations prove:

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
    * **The native map** (no effective reduction: skips, several heads): the
      same question modulo the declared symmetries (:func:`native_sharp_degree`).

    Caveats: a "generic point" is a seeded random rational tuple with
    ``L != 0`` and ``sym M_i != 0`` (checked); normalizers need rational Taylor
    coefficients (exp, cosh, polynomials, logistic ...). The degree searched is
    capped (``max_degree``); beyond it the answer is reported as undecided.

    Examples
    --------
    >>> r = sharp_degree(Architecture.uniform(2, 1, 1, 2, "exp"))
    >>> r.sharp_degree, r.lower_jets_independent_of_last, r.immersion, r.theorem
    (7, True, True, 'Theorem 3 / Prop. C.1 (sharp zero-input jet degree)')
    >>> r = sharp_degree(Architecture.uniform(2, 2, 1, 3, "exp", skip="value"))
    >>> r.map, r.sharp_degree, r.injective, r.theorem, r.by_seed
    ('native modulo the declared symmetries', 3, True, None, {'0': 3, '1': 3, '2': 3})
    """
    require_architecture(arch)
    require_int(seed, "seed", 0, 2**63 - 1)
    if method == "numerical":  # a tier of its own, asked for by name: never a fallback of these
        raise SymattnError("method 'numerical' is symattn.analyses.numerical_jets.numerical_sharp_degree "
                           "(symattn jet --method numerical); sharp_degree is exact or modular")
    require_choice(require_str(method, "method"), "method", ("modular", "exact"))
    require_int(max_degree, "max_degree", 1, 10_000)
    if rays is not None:
        require_int(rays, "rays", 1, 10_000)
    if eta is not None:
        from symattn.core.validate import require_type

        require_type(eta, "eta", EffectiveParams, "an EffectiveParams (e.g. generic_effective(arch))")
    start = time.perf_counter()
    if eta is None and arch.effective_map is None:
        refuse_biased_jets(arch)
        try:
            return native_sharp_degree(arch, seed, method, max_degree, points)
        except NotRational as exc:
            raise NotRational(f"{str(exc).split('; use ')[0].split(': use ')[0]}; no exact jet ({NUMERICAL_HINT})") \
                from None
    given = eta is not None
    eta = eta if given else generic_effective(arch, seed)
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
            return _effective_result(arch, None, None, False, method, start, P, R, profile, notes, None, seed)
        N = min(max_degree, 2 * N + 1)
    sharp = profile.index(P)
    last = f"M{arch.depth}"
    lower = dep = None
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
    result = _effective_result(arch, sharp, lower, True, method, start, P, R, profile[: sharp + 1], notes, dep, seed)
    whole = blocks is None and statements.THEOREM_3.covers(arch)
    return result.label_generic(statements.THEOREM_3.closed_form(arch) if whole and not given else None, given)


def _effective_result(arch: Architecture, sharp, lower, immersion, method, start, P, R, profile, notes,
                      dep, seed: int) -> JetResult:
    """A :class:`JetResult` of the effective map, labelled by the statements."""
    outside = statements.outside_note(arch)
    return JetResult(sharp, lower, immersion, method, round(time.perf_counter() - start, 3), P, R, profile,
                     ([outside] if outside else []) + notes, arch.describe(), arch.effective_map or "effective",
                     dep, 0, statements.label(statements.THEOREM_3, arch), seed=seed)


def native_sharp_degree(arch: Architecture, seed: int = 0, method: str = "modular", max_degree: int = 200,
                        points: int = 3) -> JetResult:
    """The sharp degree of the native map modulo the declared symmetries (no effective map).

    The least ``N`` at which the rank of the native ray Jacobian through ``rho^N``
    reaches ``P - rank(symmetries)`` (each declared symmetry verified as a kernel
    vector of that Jacobian), at ``points`` seeded random points (seeds ``seed``,
    ``seed + 1``, ...; a point can be special: two summed heads at seed 0 need degree 9
    where seeds 1-4 need 7): the rank of ``D T_N`` at a generic point is at least its
    rank at any point, so the least degree found is an upper bound on the generic
    sharp degree (``by_seed`` lists every point's). A rank mod p is a rank over Q at
    least that large, so ``D T_N`` is injective modulo the symmetries at that point:
    exact. That lower jets fall short is computed on the seeded rays: the last
    layer's queries and keys first enter the ray coefficients at a degree computed
    exactly over Q (``last_layer_enters``); when it equals the sharp degree and a
    direction of theirs lies outside the symmetries, the lower jets miss it there.

    Parameters
    ----------
    arch : Architecture
        An architecture without an effective map (the native map is asked).
    seed : int, optional
        The first seed of the points.
    method : {"modular", "exact"}, optional
        Ranks over F_p or over Q.
    max_degree : int, optional
        Give up (undecided) beyond this degree.
    points : int, optional
        Number of seeded points.

    Returns
    -------
    JetResult
        ``sharp_degree`` (None if undecided), ``by_seed``, ``last_layer_enters`` and the
        declared symmetries' kinds.

    Raises
    ------
    InternalError
        If the reported degree is not the least over the seeded points (a bug).
    """
    from symattn.model.parameters import random_point

    start = time.perf_counter()
    P = arch.native_size
    notes = [note for note in [statements.outside_note(arch)] if note]
    runs = {s: _native_sharp(arch, random_point(arch, s, "random"), s, method, max_degree)
            for s in range(seed, seed + points)}
    by_seed = {str(s): r[0] for s, r in runs.items()}
    decided = {s: r for s, r in runs.items() if r[0] is not None}
    kind = "native modulo the declared symmetries"
    theorem = statements.label(statements.THEOREM_3, arch)
    if not decided:
        sym_rank = runs[seed][1]
        notes.append(f"no point reached rank P - rank(symmetries) = {P - sym_rank} through degree {max_degree}: "
                     "undecided (an undeclared symmetry, or a degree beyond the limit)")
        return JetResult(None, None, False, method, round(time.perf_counter() - start, 3), P, runs[seed][2], [],
                         notes, arch.describe(), kind, None, sym_rank, theorem, by_seed)
    best = min(decided, key=lambda k: (decided[k][0], k))
    sharp, sym_rank, R, enters, lower, profile = decided[best]
    if sharp != min(r[0] for r in decided.values()) or profile.index(P - sym_rank) != sharp:
        raise InternalError(f"the sharp degree {sharp} is not the least over the seeded points {by_seed}; "
                            "please report this bug")
    notes.append(f"D T_{sharp} injective modulo the declared symmetries at the point of seed {best}: rank "
                 f"{P - sym_rank} = P - {sym_rank} of the native ray Jacobian through rho^{sharp} on {R} rays "
                 f"({'mod p, a lower bound on the rank over Q' if method == 'modular' else 'over Q'}); every "
                 "declared symmetry verified as a kernel vector")
    notes.append(f"sharp degree by seed {by_seed}: the least is an upper bound on the generic sharp degree "
                 "(the rank can only be larger at a generic point)"
                 + ("" if len(set(by_seed.values())) == 1 else "; the points disagree, so a seeded point "
                    "can be special"))
    notes.append(f"the last layer's queries and keys first enter the ray coefficients at degree {enters} "
                 "(exact over Q at that point and rays); "
                 + ("a direction of theirs lies outside the symmetries, so every lower jet misses it there"
                    if lower else "the lower jets are not shown to fall short"))
    result = JetResult(sharp, lower, True, method, round(time.perf_counter() - start, 3), P, R, profile,
                       notes, arch.describe(), kind, enters, sym_rank, theorem, by_seed)
    return result.label_generic(None, False)


def _native_sharp(arch: Architecture, point: dict, seed: int, method: str, max_degree: int) -> tuple:
    """``(sharp, symmetry rank, rays, last layer's first degree, lower jets miss it, profile)`` at
    ``point``; ``sharp`` None when no degree up to ``max_degree`` reaches ``P - rank(symmetries)``."""
    from symattn.model.symmetries import GaugeKernel

    P = arch.native_size
    kernel = GaugeKernel(arch, point)
    sym_rank = kernel.rank()
    target = P - sym_rank
    N = min(max_degree, prop_c1_degree(arch))

    def profile_at(N: int, R: int) -> list[int]:
        J, A = jet_jacobian(arch, point, N, R, seed, method)
        flat = np.moveaxis(J, 0, 1).reshape(-1, P)
        kernel.verify(lambda dirs: _product(flat, dirs, A.field), A.field, where="the jet Jacobian")
        return SeriesMatrix(A, J).rank_profile()

    profile, N, R = full_rank_degree(profile_at, target, N, max(2, -(-target // (arch.d * arch.tokens)) + 1),
                                     max_degree)
    if profile[-1] != target:
        return None, sym_rank, R, None, None, profile
    sharp = profile.index(target)
    last = [b.name for b in arch.layer_blocks(arch.depth) if b.is_factor]
    Jl, Al = jet_jacobian(arch, point, sharp, R, seed, "exact", names=last)
    enters = next((k for k in range(sharp + 1) if not Al.field.is_zero(Jl[k]).all()), None)
    units = []
    for n in last:
        for j in arch.columns(n):
            e = np.zeros(P, dtype=int).astype(object)
            e[j] = 1
            units.append(e)
    outside = Matrix.rational(np.array(kernel.directions + units, dtype=object)).rank() > sym_rank
    lower = (enters == sharp and outside) if enters is not None else None
    return sharp, sym_rank, R, enters, lower, profile[: sharp + 1]


def _product(J: np.ndarray, directions: np.ndarray, field) -> np.ndarray:
    """``J directions^T`` exactly in ``field`` (mod p by float64 BLAS products)."""
    from symattn.core.algebras.modular import PrimeField
    from symattn.core.series_mod_p import matmul_mod

    xi = field.convert(np.asarray(directions, dtype=object))
    return matmul_mod(J, xi.T, field.p) if isinstance(field, PrimeField) else J.dot(xi.T)
