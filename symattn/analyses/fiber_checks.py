"""The exact checks behind a fiber answer, and the computations of App. B as functions of the model.

* series along rational input rays ``X = rho Y`` (:func:`ray_series`, exact over
  Q or mod p) and their comparison at two points (:func:`compare_points`: equal
  coefficients, or an exact witness of a difference; :func:`flip_evidence` for a
  forbidden sign flip);
* symbolic identities on symbolic tokens (:func:`layer_map`, :func:`vanishes`,
  :func:`consensus_certificate`: ``Delta o S_M = 0``);
* the computed local certificate (:func:`local_certificate`,
  :func:`certificate_evidence`): the differential of the Taylor map ``T_N`` has
  full rank (mod p, hence over Q), so the tuple is an isolated point of its fiber;
* the evidence of a score tuple no theorem classifies (:func:`score_certificate`,
  :func:`sign_evidence`, :func:`head_evidence`, :func:`suffix_evidence`);
* App. B: the two-token contrast defect ``D_h`` (B.1) and its leading term (B.2)
  (:func:`contrast_defect`), the two-token skew output (27)
  (:func:`two_token_skew`), and the native point of App. A.4
  (:func:`generic_native_point`).

Each returns :class:`Evidence` (what was checked, whether it held, the witness);
:mod:`symattn.analyses.fibers` assembles the answer.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import sympy

from symattn.core.algebras import Symbolic, UnluckyPrime, exact_series, modular_series
from symattn.core.linalg import identity_matrix, is_zero, symmetric_part
from symattn.model.architecture import Architecture
from symattn.model.network import effective_network, evaluate
from symattn.model.normalizer import Normalizer, normalizers  # noqa: F401  normalizers: doctests
from symattn.model.parameters import EffectiveParams, NativeParams, random_rational_matrix
from symattn.model.parameters import rational_matrix  # noqa: F401  doctests
from symattn.theorems.formulas import ray_degrees

__all__ = ["Evidence", "certificate_evidence", "compare_points", "consensus_certificate", "contrast_defect",
           "flip_evidence", "generic_native_point", "layer_map", "local_certificate", "rational_taylor",
           "ray_series", "two_token_skew", "vanishes", "score_certificate", "sign_evidence", "head_evidence",
           "suffix_evidence", "verify_classification", "flip_search", "proved_sign_degree"]


@dataclass(frozen=True)
class Evidence:
    """One computed confirmation (or refutation) of a fiber claim.

    Attributes
    ----------
    label : str
        What was checked, with the paper's label.
    ok : bool
        Whether the computation confirmed it.
    detail : str
        The witness or the order reached; says exact / exact to order N.
    decided : bool
        False when the computation could not decide the claim within what is proved (no witness
        within a proved degree on the rays tried, or no proved degree to search to): then ``ok``
        is False but nothing failed; the answer is *undecided*, never a failed check.
    """

    label: str
    ok: bool
    detail: str
    decided: bool = True

    @property
    def status(self) -> str:
        """``"ok"``, ``"failed"`` or ``"undecided"``.

        >>> Evidence("x", False, "no witness", decided=False).status
        'undecided'
        """
        return "ok" if self.ok else "failed" if self.decided else "undecided"


def local_certificate(L: np.ndarray, M: Sequence[np.ndarray], phis: Sequence[Normalizer], tokens: int,
                      seed: int = 0, max_degree: int = 400, rays: int | None = None
                      ) -> tuple[Evidence, int | None]:
    """A computed local certificate for a singleton (or a finite sign orbit):
    the differential of the Taylor map ``T_N`` at ``(L, M)`` has full rank.

    The ray Jacobian of ``F(rho Y)`` in every effective entry is computed over
    F_p (:func:`symattn.analyses.jets.ray_jacobian`, checked against an independent
    series expansion) on seeded rational rays; full rank mod p is full rank
    over Q, so ``D T_N`` is injective and the tuple is an isolated point of its
    fiber. The first degree tried is the paper's (Prop. C.1, or Prop. C.3's
    adaptive degree for two tokens and a skew prefix: ``rho^11``, ``rho^19``
    for ``exp(s + s^4)``); it is doubled, and the rays grown (unless ``rays`` fixes their
    number), until full rank or ``max_degree``. Returns the evidence and the least full-rank
    degree.

    Parameters
    ----------
    L : numpy.ndarray
        The readout, ``p x d``.
    M : sequence of numpy.ndarray
        The scores ``M_1..M_D``.
    phis : sequence of Normalizer
        One per layer.
    tokens : int
    seed : int, optional
    max_degree : int, optional
        The largest degree tried.
    rays : int, optional
        A fixed number of rays (not grown).

    Returns
    -------
    tuple of (Evidence, int or None)
        The certificate and the least full-rank degree (None without one).

    Examples
    --------
    >>> I = rational_matrix([[1, 0], [0, 2]])
    >>> ev, N = local_certificate(rational_matrix([[1, 0]]), [I], normalizers("exp", 1), 2)
    >>> ev.ok, N
    (True, 3)
    """
    from symattn.theorems.formulas import adaptive_degree, collapsing_skew_layer, prop_c1_degree
    from symattn.analyses.jets import default_rays, ray_jacobian
    from symattn.core.linalg import SeriesMatrix

    D, d, p = len(M), M[0].shape[0], L.shape[0]
    arch = Architecture((d,) * D + (p,), (1,) * D, tokens, tuple(phis))  # head widths do not enter F_{L,M}
    eta = EffectiveParams(L, tuple(M))
    skew = [not is_zero(Mi) and is_zero(symmetric_part(Mi)) for Mi in M]
    N = prop_c1_degree(arch)
    if tokens == 2 and any(skew[:-1]) and collapsing_skew_layer(arch, skew) is None:
        N = adaptive_degree(arch, skew)  # (a collapsing skew layer keeps Prop. C.1's degree)
    P = sum(v.size for v in eta.as_dict().values())

    def profile_of(N: int, R: int) -> list[int]:
        Y = random_rational_matrix(random.Random(seed), (R, d, tokens))
        A = modular_series(N + 1)
        return SeriesMatrix(A, ray_jacobian(arch, eta, Y, A)).rank_profile()

    return _certificate(profile_of, P, N, rays or default_rays(arch, P), max_degree, rays is not None)


def _certificate(profile_of, P: int, N: int, R: int, max_degree: int, fixed: bool) -> tuple[Evidence, int | None]:
    """:func:`~symattn.analyses.jets.full_rank_degree`, with the number of rays fixed at ``R`` when asked."""
    from symattn.analyses.jets import full_rank_degree

    cache: dict = {}

    def profile_at(N: int, R_grown: int) -> list[int]:
        key = (N, R if fixed else R_grown)
        if key not in cache:
            cache[key] = profile_of(*key)
        return cache[key]

    profile, N, R_used = full_rank_degree(profile_at, P, N, R, max_degree)
    return certificate_evidence(profile, N, R if fixed else R_used, P)


def certificate_evidence(profile: Sequence[int], N: int, R: int, P: int) -> tuple[Evidence, int | None]:
    """The local certificate's evidence from a rank profile of the ray Jacobian in ``P``
    parameters (through degree ``N`` on ``R`` rays), and the least full-rank degree.

    Parameters
    ----------
    profile : sequence of int
        The ranks through each degree.
    N : int
        The last degree.
    R : int
        The number of rays.
    P : int
        The number of parameters.

    Returns
    -------
    tuple of (Evidence, int or None)

    Examples
    --------
    >>> ev, N = certificate_evidence([0, 2, 3], 2, 4, 3)
    >>> ev.ok, N
    (True, 2)
    """
    if profile[-1] == P:
        sharp = profile.index(P)
        return Evidence(f"local certificate: D T_{sharp} injective at the tuple", True,
                        f"rank {P} of the ray Jacobian of the degree-{sharp} jet on {R} rays "
                        f"(computed mod p, a lower bound on the rank over Q)"), sharp
    return Evidence("local certificate: D T_N injective at the tuple", False,
                    f"rank {profile[-1]} < {P} through degree {N} on {R} rays "
                    "(no injective jet found; nothing is claimed determined)"), None


def layer_map(M: np.ndarray, phi: Normalizer, X: np.ndarray) -> np.ndarray:
    """``S_M^phi(X)`` in the Symbolic algebra (tokens are the columns of ``X``).

    Parameters
    ----------
    M : numpy.ndarray
        The score.
    phi : Normalizer
    X : numpy.ndarray
        Symbolic tokens, ``d x n``.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> x = sympy.symbols("x1:3")
    >>> layer_map(rational_matrix([[0]]), Normalizer("exp"), np.array([x], dtype=object))[0, 0]
    x1/2 + x2/2
    """
    d = X.shape[0]
    A = Symbolic()
    out = evaluate(effective_network([phi]), A,
                   {"X": A.const(X), "L": A.const(identity_matrix(d)), "M1": A.const(M)})
    return out["F"]


def _symbolic_tokens(d: int, n: int, prefix: str = "x") -> np.ndarray:
    return np.array([[sympy.Symbol(f"{prefix}{i + 1}{a + 1}") for a in range(n)] for i in range(d)],
                    dtype=object)


def vanishes(expr) -> bool:
    """Whether a sympy expression is identically zero (expand, then simplify in exp form).

    True is exact; False means sympy could not simplify it to 0 (use a ray
    series witness, as :func:`consensus_certificate` does, to prove nonzero).

    Parameters
    ----------
    expr : sympy.Expr

    Returns
    -------
    bool

    Examples
    --------
    >>> b = sympy.Symbol("b")
    >>> vanishes(sympy.tanh(b) - (sympy.exp(2 * b) - 1) / (sympy.exp(2 * b) + 1))
    True
    """
    expr = sympy.expand(expr)
    return expr == 0 or sympy.simplify(expr.rewrite(sympy.exp)) == 0


def consensus_certificate(M: np.ndarray, phi: Normalizer, tokens: int, seed: int = 0) -> bool:
    """Whether ``Delta o S_M^phi = 0`` identically (exact either way).

    A nonzero Taylor coefficient of ``Delta S_M(rho Y)`` along a rational ray
    is an exact witness of ``False``; otherwise the identity is proved on
    symbolic tokens (sympy simplification of every token difference).

    Parameters
    ----------
    M : numpy.ndarray
        The score.
    phi : Normalizer
    tokens : int
    seed : int, optional
        Seed of the rays.

    Returns
    -------
    bool

    Examples
    --------
    >>> J = rational_matrix([[0, 1], [-1, 0]])
    >>> consensus_certificate(J, Normalizer("exp"), 2), consensus_certificate(J, Normalizer("gauss"), 2)
    (True, False)
    """
    d = M.shape[0]
    rays = random_rational_matrix(random.Random(seed), (2, d, tokens))
    order = 4 * phi.k + 8
    # irrational Taylor coefficients: the symbolic route only
    F = ray_series(identity_matrix(d), [M], (phi,), rays, order) if rational_taylor([phi], order) else None
    if F is not None and any(F[(j, b, i, a)] != F[(j, b, i, 0)] for j, b, i, a in
                             np.ndindex(F.shape[0], F.shape[1], F.shape[2], tokens)):
        return False
    Y = layer_map(M, phi, _symbolic_tokens(d, tokens))
    return all(vanishes(Y[i, a] - Y[i, 0]) for i in range(d) for a in range(1, tokens))


def _fixes_consensus(phi: Normalizer, d: int, tokens: int) -> bool:
    """``S_N(m 1^T) = m 1^T`` for symbolic ``N`` and ``m`` (exact)."""
    N = np.array([[sympy.Symbol(f"N{i + 1}{j + 1}") for j in range(d)] for i in range(d)], dtype=object)
    m = [sympy.Symbol(f"m{i + 1}") for i in range(d)]
    Y = layer_map(N, phi, np.array([[mi] * tokens for mi in m], dtype=object))
    return all(sympy.cancel(Y[i, a] - m[i]) == 0 for i in range(d) for a in range(tokens))


def rational_taylor(phis: Sequence[Normalizer], order: int) -> bool:
    """Whether every normalizer has rational Taylor coefficients through ``order - 1``
    (what :func:`ray_series` to ``order`` needs).

    Parameters
    ----------
    phis : sequence of Normalizer
        One per layer.
    order : int

    Returns
    -------
    bool

    Examples
    --------
    >>> rational_taylor([Normalizer("exp")], 5), rational_taylor([Normalizer("exp(s*sqrt(2))")], 5)
    (True, False)
    """
    return all(c.is_Rational for phi in phis for c in phi.phi_taylor(order - 1))


def ray_series(L: np.ndarray, M: Sequence[np.ndarray], phis: Sequence[Normalizer],
               rays: np.ndarray, order: int, modular: bool = False) -> np.ndarray:
    """Coefficients of ``F(rho Y)`` over Q for each ray ``Y``: shape ``(order, B, p, n)``.

    Exact (python-flint rationals), truncated mod ``rho^order``; with
    ``modular`` their residues mod the default prime instead (int64).

    Parameters
    ----------
    L : numpy.ndarray
        The readout, ``p x d``.
    M : sequence of numpy.ndarray
        The scores ``M_1..M_D``.
    phis : sequence of Normalizer
        One per layer.
    rays : numpy.ndarray
        Shape ``(B, d, n)``.
    order : int
        The truncation in ``rho``.
    modular : bool, optional

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> I = rational_matrix([[1]])
    >>> Y = rational_matrix([[[1, -1]]])
    >>> c = ray_series(I, [I], normalizers("exp", 1), Y, 4)
    >>> [str(v) for v in c[:, 0, 0, 0]]      # rho tanh(rho^2)
    ['0', '0', '0', '1']
    """
    params = {"L": L, **{f"M{i}": Mi for i, Mi in enumerate(M, 1)}}
    return _series(effective_network(phis), params, rays, order, modular)


def _series(graph, params: dict, rays: np.ndarray, order: int, modular: bool = False) -> np.ndarray:
    """Coefficients of ``F(rho Y)`` of ``graph`` at ``params`` for each ray: ``(order, B, p, n)``."""
    A = modular_series(order) if modular else exact_series(order)
    values = {k: A.const(v) for k, v in params.items()}
    values["X"] = A.series([np.zeros(rays.shape, dtype=int), rays])
    return A.coefficients(evaluate(graph, A, values)["F"])


def _compare(L, M, M2, phis, rays, order, witness: bool = False) -> tuple[bool, str]:
    """Compare F for two score tuples along the rays: (equal, detail) (see :func:`compare_points`)."""
    return compare_points(effective_network(phis), {"L": L, **{f"M{i}": m for i, m in enumerate(M, 1)}},
                          {"L": L, **{f"M{i}": m for i, m in enumerate(M2, 1)}}, phis, rays, order, witness)


def compare_points(graph, a_params: dict, b_params: dict, phis, rays, order, witness: bool = False
                   ) -> tuple[bool, str]:
    """Compare ``F`` of ``graph`` at two parameter points along the rays: (equal, detail).

    With ``witness`` the series are computed mod p: a difference mod p is an
    exact witness of a difference over Q (but equality mod p proves nothing,
    so it is reported as "no witness"); otherwise over Q.

    Parameters
    ----------
    graph : networkx.DiGraph
        The effective network.
    a_params, b_params : dict
        The two points' blocks.
    phis : sequence of Normalizer
    rays : numpy.ndarray
    order : int
        The truncation in ``rho``.
    witness : bool, optional
        Compute mod p (a difference is a witness; equality proves nothing).

    Returns
    -------
    tuple of (bool, str)
        Whether the series agree, and the detail (the witness when they differ).
    """
    if not rational_taylor(phis, order):
        return False, ("not computed: a normalizer has an irrational Taylor coefficient; exact and "
                       "modular series need rational ones")
    try:
        a = _series(graph, a_params, rays, order, modular=witness)
        b = _series(graph, b_params, rays, order, modular=witness)
    except UnluckyPrime as exc:
        return False, f"not computed: {exc}"
    for j in range(order):
        for idx in np.ndindex(*a.shape[1:]):
            if a[(j,) + idx] != b[(j,) + idx]:
                ray = idx[0]
                where = "mod p, so they differ over Q" if witness else "over Q"
                return False, (f"exact witness: ray Y_{ray} = {_fmt(rays[ray])}, coefficient of "
                               f"rho^{j} at output {idx[1:]} differs ({where})")
    if witness:
        return True, f"no witness: equal coefficients mod p through rho^{order - 1} on {len(rays)} rays"
    return True, f"equal exact Taylor coefficients through rho^{order - 1} on {len(rays)} rays"


def _fmt(Y: np.ndarray) -> str:
    return "[" + "; ".join(" ".join(str(v) for v in row) for row in Y) + "]"


def flip_evidence(L: np.ndarray, M: Sequence[np.ndarray], phis: Sequence[Normalizer], i: int,
                  rays: np.ndarray, order: int, theorem: str = "Theorem 1") -> Evidence:
    """Evidence that flipping the sign of ``M_i`` changes ``F`` (a forbidden flip).

    ``ok`` is true only with an exact witness: a ray and a power of ``rho``
    below ``order`` where the Taylor coefficients of ``F(rho Y)`` for ``M`` and
    for ``M`` with ``M_i -> -M_i`` differ (mod p, hence over Q). Equal
    coefficients mod p give ``ok = False`` (no witness; nothing is proved).

    Parameters
    ----------
    L : numpy.ndarray
        The readout, ``p x d``.
    M : sequence of numpy.ndarray
        The scores ``M_1..M_D``.
    phis : sequence of Normalizer
        One per layer.
    i : int
        The layer flipped (1-based).
    rays : numpy.ndarray
    order : int
        The truncation in ``rho``.
    theorem : str, optional
        The label of the evidence.

    Returns
    -------
    Evidence

    Examples
    --------
    >>> L, S = rational_matrix([[1, 0]]), rational_matrix([[1, 2], [0, 1]])
    >>> Y = rational_matrix([[[1, -2], [3, 1]]])
    >>> flip_evidence(L, [S], normalizers("exp", 1), 1, Y, 8).ok      # softmax: forbidden
    True
    >>> flip_evidence(L, [S], normalizers("cosh", 1), 1, Y, 8).ok     # even phi: allowed
    False
    """
    flipped = [-Mi if j == i else Mi for j, Mi in enumerate(M, 1)]
    ok, detail = _compare(L, M, flipped, phis, rays, order, witness=True)
    return Evidence(f"{theorem}: flipping M_{i} changes F", not ok and "witness" in detail, detail)


def proved_sign_degree(L: np.ndarray, M: Sequence[np.ndarray], phis: Sequence[Normalizer], i: int) -> int | None:
    """The degree through which flipping ``M_i`` is proved to change ``F`` (Prop. C.4, (C.7)), or None
    where its hypotheses fail (``L = 0``, a prefix score without symmetric part, a skew ``M_i`` with
    ``h_i'(0) = 0``, an even ``h_i``): :func:`symattn.theorems.formulas.sign_degree`.

    Parameters
    ----------
    L : numpy.ndarray
        The readout.
    M : sequence of numpy.ndarray
        The scores.
    phis : sequence of Normalizer
        The normalizers.
    i : int
        The layer (0-based).

    Returns
    -------
    int or None

    Examples
    --------
    >>> S, J = rational_matrix([[1, 2], [0, -1]]), rational_matrix([[0, 1], [-1, 0]])
    >>> phis = normalizers("cosh(s)+s^3", 2)
    >>> proved_sign_degree(rational_matrix([[1, 0]]), [S, S], phis, 2), proved_sign_degree(
    ...     rational_matrix([[1, 0]]), [J, S], phis, 2)
    (15, None)
    """
    from symattn.theorems.formulas import sign_degree

    if is_zero(L) or any(is_zero(symmetric_part(Mj)) for Mj in M[:i - 1]):
        return None
    if is_zero(symmetric_part(M[i - 1])) and phis[i - 1].slope == 0:
        return None
    return sign_degree(phis, i)


def flip_search(L: np.ndarray, M: Sequence[np.ndarray], phis: Sequence[Normalizer], i: int, rays: np.ndarray,
                start: int, *, seed: int = 0, search_degree: int | None = None, theorem: str = "Theorem 1"
                ) -> Evidence:
    """Look for an exact witness that flipping ``M_i`` changes ``F``, as far as is proved.

    Where Prop. C.4 proves a difference at degree ``N`` (:func:`proved_sign_degree`), the search runs
    through ``rho^max(N, search_degree)``: first mod p on ``rays``, then exactly over Q on twice as
    many fresh rays. Elsewhere it searches through ``rho^start`` and doubles the degree up to
    ``search_degree`` (default ``2 start``). A witness gives ``ok``; none gives *undecided*
    evidence (``decided=False``) that says why, never a failed check.

    Parameters
    ----------
    L : numpy.ndarray
        The readout.
    M : sequence of numpy.ndarray
        The scores.
    phis : sequence of Normalizer
        The normalizers.
    i : int
        The layer (0-based) whose score is flipped.
    rays : numpy.ndarray
        The rays of the mod-p search.
    start : int
        The first degree.
    seed : int
        The seed of the fresh rays.
    search_degree : int, optional
        The largest degree.
    theorem : str
        The statement named in the evidence.

    Returns
    -------
    Evidence

    Examples
    --------
    >>> L, S = rational_matrix([[1, 0]]), rational_matrix([[1, 2], [0, -1]])
    >>> phis, Y = normalizers("cosh(s)+s^3", 2), random_rational_matrix(random.Random(0), (2, 2, 2))
    >>> flip_search(L, [S, rational_matrix([[2, 1], [1, 3]])], phis, 2, Y, 15).status
    'ok'
    >>> J, phi = rational_matrix([[0, 1], [-1, 0]]), normalizers("exp(s^2)+s^5", 1)  # skew, h'(0) = 0
    >>> flip_search(L, [J], phi, 1, Y, 3).detail[:46]
    'undecided: Prop. C.4 proves no degree for this'
    >>> flip_search(L, [J], phi, 1, Y, 3, search_degree=20).detail[:60]      # search further
    'exact witness: ray Y_0 = [1/2 -4/3; 1 2/3], coefficient of r'
    """
    proved = proved_sign_degree(L, M, phis, i)
    if proved is not None:
        target = max(proved, search_degree or 0)
        ev = flip_evidence(L, M, phis, i, rays, target + 1, theorem)
        if ev.ok:
            return Evidence(ev.label, True, f"{ev.detail}; Prop. C.4 proves a difference by rho^{proved}")
        more = random_rational_matrix(random.Random(seed + 1), (2 * len(rays),) + rays.shape[1:])
        flipped = [-Mj if j == i else Mj for j, Mj in enumerate(M, 1)]
        same, detail = _compare(L, M, flipped, phis, more, target + 1)
        if not same and "witness" in detail:
            return Evidence(ev.label, True, f"{detail}; Prop. C.4 proves a difference by rho^{proved}")
        return Evidence(ev.label, False, (
            f"undecided: no witness through rho^{target} on {len(rays)} rays mod p nor on {len(more)} rays "
            f"over Q ({detail}), although Prop. C.4 proves a difference at rho^{proved} for generic rays: "
            "these rays are special; try another seed or more rays"), decided=False)
    cap = max(start, search_degree if search_degree is not None else 2 * start)
    order = min(start, cap)
    while True:
        ev = flip_evidence(L, M, phis, i, rays, order + 1, theorem)
        if ev.ok or order >= cap:
            break
        order = min(2 * order, cap)
    if ev.ok:
        return ev
    return Evidence(ev.label, False, (
        f"undecided: Prop. C.4 proves no degree for this flip (it needs L != 0, sym M_j != 0 before "
        f"layer {i} and sym M_{i} != 0 or h_{i}'(0) != 0); {ev.detail}; search further with "
        "search_degree (--search-degree)"), decided=False)


def score_certificate(arch: Architecture, graph, params: dict, seed: int, max_degree: int,
                      rays: int | None = None) -> tuple[Evidence, int | None]:
    """The local certificate of a score tuple: a full-rank ray Jacobian (:func:`certificate_evidence`).

    Parameters
    ----------
    arch : Architecture
        The architecture.
    graph : networkx.DiGraph
        The effective network.
    params : dict
        The score tuple's graph inputs.
    seed : int
        The seed of the rays.
    max_degree : int
        The largest degree searched.
    rays : int, optional
        The number of rays.

    Returns
    -------
    tuple
        ``(Evidence, degree or None)``.
    """
    from symattn.analyses.jets import jet_jacobian
    from symattn.core.linalg import SeriesMatrix
    from symattn.theorems.formulas import prop_c1_degree

    names = arch.score_names()
    P = sum(np.asarray(params[n]).size for n in names)
    N = min(max_degree, prop_c1_degree(arch))
    R = max(2, -(-P // (params["L"].shape[0] * arch.tokens)) + 1)

    def profile_of(N: int, R: int) -> list[int]:
        J, A = jet_jacobian(arch, params, N, R, seed, graph=graph, names=names)
        return SeriesMatrix(A, J).rank_profile()

    return _certificate(profile_of, P, N, rays or R, max_degree, rays is not None)


def sign_evidence(arch, graph, params, Y, order, ev) -> tuple[list[str], list[int]]:
    """Sign changes of every nonzero score: exact with an even normalizer, else a witness.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    graph : networkx.DiGraph
        The effective network.
    params : dict
        The score tuple's graph inputs.
    Y : numpy.ndarray
        The rays.
    order : int
        The truncation in ``rho``.
    ev : list
        The evidence list the findings are appended to.

    Returns
    -------
    tuple of list
        The allowed flips (layer and head names, even normalizers) and their layers.
    """
    flips, layers = [], []
    for i, phi in enumerate(arch.normalizers, 1):
        for s in arch.head_names(i):
            if is_zero(params[f"M{i}{s}"]):
                continue
            flipped = dict(params, **{f"M{i}{s}": -params[f"M{i}{s}"]})
            if phi.even:
                ok, detail = compare_points(graph, params, flipped, arch.normalizers, Y, order)
                ev.append(Evidence(f"phi_{i} even: flipping M_{i}{s} keeps F (phi(-s) = phi(s), exact)", ok, detail))
                flips.append(f"{i}{s}")
                layers += [i] if i not in layers else []
            else:
                same, detail = compare_points(graph, params, flipped, arch.normalizers, Y, order, witness=True)
                ev.append(Evidence(f"phi_{i} not even: flipping M_{i}{s} changes F", not same,
                                   detail if not same else f"undecided: {detail} (no theorem bounds the degree "
                                   "of a witness here; search further with search_degree)", decided=not same))
    return flips, layers


def head_evidence(arch, graph, params, Y, order, ev) -> list[int]:
    """Exchanges of adjacent heads' scores (the generators of the head permutations).

    Parameters
    ----------
    arch : Architecture
        The architecture.
    graph : networkx.DiGraph
        The effective network.
    params : dict
        The score tuple's graph inputs.
    Y : numpy.ndarray
        The rays.
    order : int
        The truncation in ``rho``.
    ev : list
        The evidence list the findings are appended to.

    Returns
    -------
    list of int
        The layers whose head exchanges were checked to keep ``F``.
    """
    perms = []
    for i in range(1, arch.depth + 1):
        names = arch.head_names(i)
        if len(names) < 2:
            continue
        for a, b in zip(names, names[1:]):  # the adjacent transpositions generate the group
            swapped = dict(params, **{f"M{i}{a}": params[f"M{i}{b}"], f"M{i}{b}": params[f"M{i}{a}"]})
            ok, detail = compare_points(graph, params, swapped, arch.normalizers, Y, order)
            ev.append(Evidence(f"layer {i}: exchanging heads {a}, {b} keeps F (the heads are summed, exact)",
                               ok, detail))
        perms.append(i)
    return perms


def suffix_evidence(arch, graph, params, Y, order, seed, ev) -> None:
    """After the first layer whose every score is zero: does a random suffix change F?

    Parameters
    ----------
    arch : Architecture
        The architecture.
    graph : networkx.DiGraph
        The effective network.
    params : dict
        The score tuple's graph inputs.
    Y : numpy.ndarray
        The rays.
    order : int
        The truncation in ``rho``.
    seed : int
        The seed of the random suffix.
    ev : list
        The evidence list the findings are appended to.
    """
    zero = [i for i in range(1, arch.depth + 1) if all(is_zero(params[f"M{i}{s}"]) for s in arch.head_names(i))]
    if not zero or zero[0] >= arch.depth:
        return
    rng = random.Random(seed)
    d = arch.widths[0]
    s0 = zero[0]
    other = dict(params)
    for i in range(s0 + 1, arch.depth + 1):
        for s in arch.head_names(i):
            other[f"M{i}{s}"] = random_rational_matrix(rng, (d, d))
    same, detail = compare_points(graph, params, other, arch.normalizers, Y, order, witness=True)
    ev.append(Evidence(f"every score of layer {s0} is zero: a random suffix {'changes' if not same else 'keeps'} F",
                       True, detail + ("; the suffix is not free" if not same else
                                       "; evidence only (truncated series): no freedom is claimed")))


def two_token_skew(phi: Normalizer) -> tuple[np.ndarray, np.ndarray, sympy.Expr]:
    """Outputs ``y_+, y_-`` of one layer on ``m +- z`` (``d = 2``, symbolic) with the
    skew score ``[[0, beta], [-beta, 0]]``, and ``b = m^T M z`` (App. B.2, eq. 27).

    Parameters
    ----------
    phi : Normalizer

    Returns
    -------
    tuple
        ``(y_plus, y_minus, b)``.

    Examples
    --------
    >>> yp, ym, b = two_token_skew(Normalizer("exp"))
    >>> b
    beta*m1*z2 - beta*m2*z1
    """
    m = sympy.symbols("m1 m2")
    z = sympy.symbols("z1 z2")
    beta = sympy.Symbol("beta")
    M = np.array([[0, beta], [-beta, 0]], dtype=object)
    X = np.array([[m[i] + z[i], m[i] - z[i]] for i in range(2)], dtype=object)
    Y = layer_map(M, phi, X)
    b = sympy.expand(np.array(m, dtype=object).dot(M).dot(np.array(z, dtype=object)))
    return Y[:, 0], Y[:, 1], b


def contrast_defect(phi: Normalizer) -> sympy.Expr:
    """``D_h(u)`` of (B.1), read off the model: ``(y_+ - y_-)/2 = z D_h(2b)``.

    Computed on ``m = e_1``, ``z = e_2`` and the skew score with ``2b = u``.

    Parameters
    ----------
    phi : Normalizer

    Returns
    -------
    sympy.Expr
        ``D_h(u)``.

    Examples
    --------
    >>> sympy.simplify(contrast_defect(Normalizer("exp")))
    0
    """
    u = sympy.Symbol("u")
    M = np.array([[0, u / 2], [-u / 2, 0]], dtype=object)
    X = np.array([[1, 1], [1, -1]], dtype=object)  # m +- z with m = e_1, z = e_2
    Y = layer_map(M, phi, X)
    return (Y[1, 0] - Y[1, 1]) / 2


def generic_native_point(arch: Architecture) -> NativeParams:
    """The native point of App. A.4: ``V_i = e^(i) e^(i-1)^T``, ``Q_i = K_i = [e^(i-1) 0 .. 0]``.

    Parameters
    ----------
    arch : Architecture

    Returns
    -------
    NativeParams

    Examples
    --------
    >>> from symattn.model.parameters import reduction
    >>> arch = Architecture((3, 2, 4), (2, 1), 2, normalizers("exp", 2))
    >>> eta = reduction(generic_native_point(arch))
    >>> [[int(v) for v in row] for row in eta.L], [int(Mi[0, 0]) for Mi in eta.M]
    ([[1, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]], [1, 1])
    """
    Q, K, V = [], [], []
    for i in range(1, arch.depth + 1):
        d_in, d_out, r = arch.widths[i - 1], arch.widths[i], arch.ranks[i - 1]
        q = np.full((d_in, r), Fraction(0), dtype=object)
        q[0, 0] = Fraction(1)
        v = np.full((d_out, d_in), Fraction(0), dtype=object)
        v[0, 0] = Fraction(1)
        Q.append(q)
        K.append(q.copy())
        V.append(v)
    return NativeParams(tuple(Q), tuple(K), tuple(V))


def verify_classification(fib, L, M, phis, tokens, seed: int, n_rays: int | None,
                          search_degree: int | None = None) -> None:
    """Verify a classification of :mod:`symattn.analyses.fibers` by computation: the local certificate
    of a singleton or sign orbit, the allowed changes (a new suffix, the allowed sign flips, by exact
    series and symbolic identities) and an exact witness for every forbidden sign flip; sets
    ``fib.evidence``, ``fib.sharp_degree`` and ``fib.verified``.

    Parameters
    ----------
    fib : Fiber
        The classification (updated in place).
    L : numpy.ndarray
        The readout.
    M : sequence of numpy.ndarray
        The scores.
    phis : sequence of Normalizer
        The normalizers.
    tokens : int
        The number of tokens.
    seed : int
        The seed of the rays.
    n_rays : int or None
        The number of rays.
    search_degree : int, optional
        The largest degree of the flip searches.
    """
    D, d = len(M), M[0].shape[0]
    rng = random.Random(seed)
    rays = random_rational_matrix(rng, (n_rays or 2, d, tokens))
    e = ray_degrees(phis)
    base_order = min(2 * e[D - 1] + 2 * phis[-1].k + 2, 48)
    ev = fib.evidence
    if fib.fiber == "outside-hypotheses":
        return
    sharp = None
    if fib.fiber in ("singleton", "sign-orbit"):
        cert, sharp = local_certificate(L, M, phis, tokens, seed, rays=n_rays)
        if not cert.ok:  # a rank short on finitely many rays contradicts no theorem: undecided
            cert = Evidence(cert.label, False, f"undecided: {cert.detail}; the rays may be special (try another "
                            "seed or more rays)", decided=False)
        ev.append(cert)
        fib.sharp_degree = sharp
    # allowed changes give the same function
    if fib.free_layers:
        N = [Mi if i not in fib.free_layers else random_rational_matrix(rng, (d, d))
             for i, Mi in enumerate(M, 1)]
        if fib.fiber == "zero-readout":
            ok, detail = _compare(L, M, N, phis, rays, base_order)
            ev.append(Evidence("eq. (26): L = 0 realizes 0 for other scores", ok, detail))
        else:
            s = fib.first_collapse
            ok, detail = _compare(L, M, N, phis, rays, base_order)
            suffix = ", ".join(f"N_{i}" for i in fib.free_layers)
            ev.append(Evidence(f"eq. (25): a random suffix {suffix} gives the same F", ok, detail))
            cert = consensus_certificate(M[s - 1], phis[s - 1], tokens)
            ev.append(Evidence(f"eq. (23): M_{s} in Z_{s} (Delta o S_M = 0, exact identity)", cert,
                               "symbolic tokens, exact"))
            fixes = all(_fixes_consensus(phis[i - 1], d, tokens) for i in fib.free_layers)
            ev.append(Evidence("every later layer fixes consensus (exact identity)", fixes,
                               "symbolic N and m, exact"))
    for i in fib.sign_flip_layers:
        flipped = [-Mi if j == i else Mi for j, Mi in enumerate(M, 1)]
        ok, detail = _compare(L, M, flipped, phis, rays, base_order)
        ev.append(Evidence(f"Theorem 1: flipping M_{i} keeps F (phi_{i} even)", ok, detail))
        X = _symbolic_tokens(d, tokens)
        same = all(vanishes(v) for v in (layer_map(M[i - 1], phis[i - 1], X)
                                           - layer_map(-M[i - 1], phis[i - 1], X)).flat)
        ev.append(Evidence(f"App. A.2: S_(-M_{i}) = S_(M_{i}) (exact identity)", same,
                           "symbolic tokens, exact"))
    # forbidden sign flips change the function
    identified = [i for i in range(1, D + 1)
                  if i not in fib.free_layers and i not in fib.sign_flip_layers and not is_zero(M[i - 1])]
    for i in identified:  # through Prop. C.4's degree where proved, else a growing search
        start = min((sharp or 2 * e[i - 1] + 2 * phis[i - 1].k + 1) + 1, 400)  # (unproved: sharp + 1)
        ev.append(flip_search(L, M, phis, i, rays, start, seed=seed, search_degree=search_degree,
                              theorem=fib.theorem))
    fib.verified = bool(ev) and all(x.ok for x in ev)
