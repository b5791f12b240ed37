r"""Geometry of the realization map: the local normal form and residual ideals.

Scope: Proposition 4.2 and Appendix E.3 (the chart in which the reduction
:math:`\pi` becomes :math:`(L, \widetilde Q_i\widetilde K_i^\top)`, the rank
count (40) and the fiber dimension; :func:`normal_form_chart`, :func:`reduction_jacobian`),
Proposition E.1 (the residual ideal at the first zero score, eq. (41); :func:`first_zero_ideal`),
Corollary E.2 (the zero-product ideal (42) and its components; :func:`residual_generators`) and
the local learning coefficient of Appendix E.4 (:func:`newton_threshold`). Each function's Notes
say what it computes and how exactly: exact rationals, ranks over Q or mod p, sympy Groebner
bases, exact linear programming; :func:`loss_decay` alone is numerical.

Caveats: ranks and ideals are computed at seeded rational points or for
small widths; a rank at one point is a lower bound on the generic rank, and
the kernel vectors (gauges) give the upper bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import mpmath
import numpy as np
import sympy

from symattn.core.algebras import Symbolic, exact_series
from symattn.core.linalg import Matrix, identity_matrix
from symattn.core.errors import SymattnError
from symattn.model.network import effective_network, jacobian, reduction_graph
from symattn.theorems.formulas import prop_c1_degree
from symattn.analyses.jets import generic_effective, ray_jacobian, sharp_degree
from symattn.analyses.dimension import generic_native
from symattn.model.architecture import Architecture
from symattn.model.parameters import NativeParams, random_bank, reduction
from symattn.model.normalizer import Normalizer

__all__ = [
    "NormalFormChart", "normal_form_chart", "from_chart", "reduction_jacobian", "chart_rank",
    "FirstZeroIdeal", "first_zero_ideal", "native_suffix_free", "consensus_derivatives",
    "residual_generators", "ideal_intersection", "minimal_primes", "newton_threshold",
    "loss_decay",
]


# -- exact matrices -------------------------------------------------------------

def _inverse(A: np.ndarray, name: str) -> np.ndarray:
    """Exact inverse of a square rational matrix, or a clear error naming it."""
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise SymattnError(f"{name} has shape {A.shape}: the normal-form chart needs square d x d values")
    m = Matrix.rational(A)
    rank = m.rank()
    if rank < A.shape[0]:
        raise SymattnError(f"{name} is singular (rank {rank} < {A.shape[0]}): the normal-form chart "
                           "of Prop. 4.2 needs invertible value matrices")
    inv = m.inverse().entries
    out = np.empty(A.shape, dtype=object)
    for a in range(A.shape[0]):
        for b in range(A.shape[1]):
            x = inv[a, b]
            out[a, b] = Fraction(int(x.p), int(x.q))
    return out


# -- Proposition 4.2: the normal-form chart ---------------------------------------

@dataclass
class NormalFormChart:
    r"""Source coordinates of Prop. 4.2: :math:`(P_1..P_{D-1}, L, \widetilde Q_i, \widetilde K_i)`.

    ``P`` holds :math:`P_1, \dots, P_{D-1}` (the prefix-value coordinates),
    ``Qt``/``Kt`` hold :math:`\widetilde Q_i = P_{i-1}^\top Q_i`,
    :math:`\widetilde K_i = P_{i-1}^\top K_i`.
    """

    P: tuple[np.ndarray, ...]
    L: np.ndarray
    Qt: tuple[np.ndarray, ...]
    Kt: tuple[np.ndarray, ...]

    def scores(self) -> tuple[np.ndarray, ...]:
        r"""The effective scores in the chart, :math:`\widetilde Q_i \widetilde K_i^\top`."""
        return tuple(q.dot(k.T) for q, k in zip(self.Qt, self.Kt))


def normal_form_chart(theta: NativeParams) -> NormalFormChart:
    r"""The chart of Prop. 4.2 at a native point with square invertible values.

    Raises
    ------
    SymattnError
        If a value matrix is not square or is singular.

    Parameters
    ----------
    theta : NativeParams
        A native point with square invertible values.

    Returns
    -------
    NormalFormChart

    Notes
    -----
    Exact rational matrices; the round trip (:func:`from_chart`) and :math:`M_i = \widetilde Q_i
    \widetilde K_i^\top`, :math:`L = P_D` are exact identities at the given point. Singular values
    :math:`V_i` are refused (the chart needs :math:`V_i \in GL_d`).

    Examples
    --------
    >>> from symattn.model.parameters import random_native, reduction
    >>> arch = Architecture.uniform(2, 2, 1, 3, "exp")
    >>> theta = random_native(arch, seed=4)
    >>> chart = normal_form_chart(theta)
    >>> eta = reduction(theta)
    >>> all((m == s).all() for m, s in zip(eta.M, chart.scores())), bool((eta.L == chart.L).all())
    (True, True)
    """
    d = theta.Q[0].shape[0]
    P = identity_matrix(d)
    prefix, Qt, Kt = [], [], []
    for i, (q, k, v) in enumerate(zip(theta.Q, theta.K, theta.V), 1):
        _inverse(v, f"V{i}")
        Qt.append(P.T.dot(q))
        Kt.append(P.T.dot(k))
        P = v.dot(P)
        prefix.append(P)
    return NormalFormChart(tuple(prefix[:-1]), prefix[-1], tuple(Qt), tuple(Kt))


def from_chart(chart: NormalFormChart) -> NativeParams:
    r"""The analytic inverse of E.3: :math:`V_i = P_i P_{i-1}^{-1}`, :math:`P_D = L`,
    :math:`Q_i = P_{i-1}^{-\top}\widetilde Q_i`, :math:`K_i = P_{i-1}^{-\top}\widetilde K_i`.

    Parameters
    ----------
    chart : NormalFormChart
        The chart's coordinates.

    Returns
    -------
    NativeParams

    Raises
    ------
    SymattnError
        If some :math:`P_i` (or :math:`L`) is singular: then no native point
        with invertible values has these coordinates.

    Examples
    --------
    >>> from symattn.model.parameters import random_native
    >>> theta = random_native(Architecture.uniform(3, 2, 2, 2, "exp"), seed=1)
    >>> back = from_chart(normal_form_chart(theta))
    >>> all((a == b).all() for a, b in zip(back.as_dict().values(), theta.as_dict().values()))
    True
    """
    d = chart.L.shape[0]
    prefix = [identity_matrix(d), *chart.P, chart.L]
    names = [f"P{i}" for i in range(1, len(prefix) - 1)] + ["L"]
    inverses = [identity_matrix(d)] + [_inverse(p, n) for p, n in zip(prefix[1:], names)]
    Q, K, V = [], [], []
    for i, (qt, kt) in enumerate(zip(chart.Qt, chart.Kt), 1):
        inv_t = inverses[i - 1].T
        Q.append(inv_t.dot(qt))
        K.append(inv_t.dot(kt))
        V.append(prefix[i].dot(inverses[i - 1]))
    return NativeParams(tuple(Q), tuple(K), tuple(V))


def reduction_jacobian(arch: Architecture, theta: NativeParams,
                       blocks: Sequence[str] | None = None) -> np.ndarray:
    r"""Exact Jacobian of :math:`\pi` (rows: ``L, M1, ...`` entries; columns: the
    native ``blocks``, default all, entries row-major) from the reduction graph.

    Its rank is that of :math:`D(\Psi\circ\pi)` for any :math:`\Psi` with
    injective differential (eq. 40).

    Parameters
    ----------
    arch : Architecture
        Any widths and ranks.
    theta : NativeParams
        The native point (exact rationals).
    blocks : sequence of str, optional
        Native blocks to differentiate in (``"Q1"``, ``"K1"``, ``"V1"``, ...).

    Returns
    -------
    numpy.ndarray
        Object array of :class:`~fractions.Fraction`, shape
        ``(effective_size, columns)``.

    Raises
    ------
    SymattnError
        For an unknown block or shapes that do not fit ``arch``.

    Notes
    -----
    The reduction graph evaluated with exact forward tangents; ranks over Q (python-flint). The rank of
    :math:`D(\Psi\circ\pi)` equals it when :math:`D\Psi` is injective (Theorem 3 supplies such a
    :math:`\Psi`).

    Examples
    --------
    >>> from symattn.model.parameters import random_native
    >>> from symattn.core.linalg import Matrix
    >>> arch = Architecture.uniform(3, 4, 2, 2, "exp")
    >>> Matrix.rational(reduction_jacobian(arch, random_native(arch, seed=0))).rank()  # 16 + 3 * 2 * (8 - 2)
    52
    """
    theta.check(arch)
    values = theta.as_dict()
    names = list(values) if blocks is None else list(blocks)
    unknown = sorted(set(names) - set(values))
    if unknown:
        raise SymattnError(f"unknown native blocks {unknown}; use Q1, K1, V1, ...")
    A = exact_series(1)
    vals = {name: A.const(value) for name, value in values.items()}
    names = [n for n in values if n in names]  # columns in native order
    J = jacobian(reduction_graph(arch), A, vals, names,
                 output=[name for name, _ in arch.effective_shapes()])[0]
    return np.vectorize(lambda x: x if isinstance(x, int) else Fraction(int(x.p), int(x.q)),
                        otypes=[object])(J)


def chart_rank(chart: NormalFormChart) -> int:
    r"""Rank of the differential of :math:`\pi` written in the chart,
    :math:`(\mathbf P, L, \widetilde Q, \widetilde K) \mapsto (L, \widetilde Q_i\widetilde K_i^\top)`:
    the rank of the identity in ``L`` plus the ranks of the multiplication
    maps :math:`\mu_i(Q, K) = QK^\top` at :math:`(\widetilde Q_i, \widetilde K_i)`
    (each from the one-layer reduction graph, exactly); the ``P`` directions
    do not enter.

    Parameters
    ----------
    chart : NormalFormChart
        The chart at a native point.

    Returns
    -------
    int

    Examples
    --------
    >>> from symattn.model.parameters import random_native
    >>> chart_rank(normal_form_chart(random_native(Architecture.uniform(2, 3, 1, 2, "exp"), seed=2)))
    19
    """
    d = chart.L.shape[0]
    total = 0
    for i, (qt, kt) in enumerate(zip(chart.Qt, chart.Kt)):
        one = Architecture((d, d), (qt.shape[1],), 2, (Normalizer("exp"),))
        theta = NativeParams((qt,), (kt,), (chart.L if i == 0 else identity_matrix(d),))
        total += Matrix.rational(reduction_jacobian(one, theta, ["Q1", "K1"])).rank()
        if i == 0:
            total += Matrix.rational(reduction_jacobian(one, theta, ["V1"])).rank()
    return total


# -- Proposition E.1: the first-zero residual ideal --------------------------------

@dataclass
class FirstZeroIdeal:
    """Result of :func:`first_zero_ideal`.

    ``visible_rank`` of ``visible_parameters`` (the entries of ``L, M_1..M_s``)
    is the rank mod p of the ray Jacobian from ``degree`` on; ``suffix_zero``
    says the suffix Jacobian vanished exactly over Q through ``suffix_order - 1``.
    """

    s: int
    visible_parameters: int
    visible_rank: int
    degree: int | None
    suffix_parameters: int
    suffix_zero: bool
    suffix_order: int
    rays: int


def _prefix_arch(arch: Architecture, s: int) -> Architecture:
    return Architecture(arch.widths[: s + 1], arch.ranks[:s], arch.tokens, arch.normalizers[:s])


def first_zero_ideal(arch: Architecture, s: int, seed: int = 0, zero: bool = True) -> FirstZeroIdeal:
    r"""Prop. E.1 at a seeded tuple with ``M_s = 0`` (``zero=False``: a nonzero
    ``M_s``, the control in which the suffix enters).

    The tuple is :func:`~symattn.analyses.jets.generic_effective` (``L \neq 0``,
    ``sym M_i \neq 0``); the visible rank is that of the ray Jacobian mod p
    (:func:`~symattn.analyses.jets.sharp_degree` with ``blocks = L, M1..Ms``), the
    suffix Jacobian is computed exactly over Q through the degree where the
    last score would enter at a generic tuple (Theorem 3).

    Parameters
    ----------
    arch : Architecture
        Equal or unequal widths; normalizers with rational Taylor data and
        nonzero slope ``h_i'(0)``.
    s : int
        The first zero layer, ``1 <= s <= D``.
    seed : int
        Seed of the tuple and of the rays.
    zero : bool
        ``False`` gives the control with a generic ``M_s``.

    Returns
    -------
    FirstZeroIdeal

    Raises
    ------
    SymattnError
        If ``s`` is out of range or some layer has slope zero.

    Notes
    -----
    The Jacobian of the ray coefficients of :math:`F(\rho Y)` in the visible block
    :math:`u = (L, M_1, \dots, M_s)` at a tuple with :math:`M_s = 0` has full column rank mod p (a lower
    bound on the rank over Q, so injectivity is proved), and its Jacobian in the suffix
    :math:`M_{s+1}, \dots, M_D` is exactly zero over Q through the truncation degree. The identity
    behind the suffix claim, :math:`D_M S_M(m\mathbf 1^\top) = 0` and :math:`D_X S_M(m\mathbf
    1^\top)[\dot Y] = \mu(\dot Y)\mathbf 1^\top`, is checked symbolically for generic :math:`M, m`
    (:func:`consensus_derivatives`). The native pullback (:func:`native_suffix_free`): at
    :math:`Q_s = 0` the suffix factors :math:`Q_j, K_j` do not enter, exactly over Q, with a control.

    Examples
    --------
    >>> r = first_zero_ideal(Architecture.uniform(2, 1, 1, 2, "exp"), s=1)
    >>> r.visible_rank == r.visible_parameters, r.suffix_zero, r.degree
    (True, True, 3)
    """
    if not 1 <= s <= arch.depth:
        raise SymattnError(f"the first zero layer s must be in 1..{arch.depth}, got {s}")
    flat = [i for i, phi in enumerate(arch.normalizers, 1) if phi.slope == 0]
    if flat:
        raise SymattnError(f"Prop. E.1 needs g_i(0) = h_i'(0) != 0 for every layer; layers {flat} have slope 0")
    eta = generic_effective(arch, seed, zero=[s] if zero else [])
    visible = ["L"] + [f"M{i}" for i in range(1, s + 1)]
    r = sharp_degree(arch, eta, seed=seed, method="modular", blocks=visible,
                     hint=prop_c1_degree(_prefix_arch(arch, s)))
    suffix = [f"M{i}" for i in range(s + 1, arch.depth + 1)]
    order = prop_c1_degree(arch) + 1
    zero_suffix = True
    if suffix:
        Y = random_bank(arch, r.rays, seed)
        A = exact_series(order)
        zero_suffix = bool(A.field.is_zero(ray_jacobian(arch, eta, Y, A, suffix)).all())
    return FirstZeroIdeal(s, r.parameters, r.profile[-1], r.sharp_degree,
                          sum(eta.as_dict()[n].size for n in suffix), zero_suffix, order, r.rays)


def native_suffix_free(arch: Architecture, s: int, seed: int = 0, zero: bool = True) -> bool:
    r"""Native pullback of Prop. E.1: at a seeded generic native point
    (:func:`~symattn.analyses.dimension.generic_native`: invertible values, full-rank
    factors) and :math:`Q_s = 0` (so :math:`\widetilde Q_s\widetilde K_s^\top = 0`),
    the ray coefficients of the native network do not depend on the suffix
    factors :math:`Q_j, K_j` (:math:`j > s`): their Jacobian is exactly zero
    over Q through the degree where the last score would enter generically.
    ``zero=False`` keeps the generic :math:`Q_s` (the control: the suffix enters).

    Parameters
    ----------
    arch : Architecture
        The architecture.
    s : int
        The layer whose query factor is zero, ``1 <= s < D``.
    seed : int
        The seed of the native point.
    zero : bool
        Set ``Q_s = 0`` (False: the control, where the suffix must enter).

    Returns
    -------
    bool

    Raises
    ------
    SymattnError
        ``s`` out of range.

    Raises
    ------
    SymattnError
        If ``s`` is not in ``1..D-1``.

    Examples
    --------
    >>> arch = Architecture.uniform(2, 2, 1, 2, "exp")
    >>> native_suffix_free(arch, s=1), native_suffix_free(arch, s=1, zero=False)
    (True, False)
    """
    if not 1 <= s < arch.depth:
        raise SymattnError(f"a suffix needs 1 <= s < D = {arch.depth}, got s = {s}")
    theta = generic_native(arch, seed=seed)  # invertible values, full-rank factors, sym M_i != 0
    if zero:
        theta.Q[s - 1][...] = Fraction(0)
    A = exact_series(prop_c1_degree(arch) + 1)
    suffix = [f"{b}{j}" for j in range(s + 1, arch.depth + 1) for b in "QK"]
    J = ray_jacobian(arch, theta, random_bank(arch, 2, seed), A, suffix)
    return bool(A.field.is_zero(J).all())


def consensus_derivatives(normalizer: "str | Normalizer", d: int, n: int) -> tuple[bool, bool]:
    r"""Symbolic check, for generic :math:`M` and :math:`m`, of
    :math:`D_M S_M(m\mathbf 1^\top) = 0` and
    :math:`D_X S_M(m\mathbf 1^\top)[\dot Y] = \mu(\dot Y)\mathbf 1^\top` (proof of Prop. E.1).

    Parameters
    ----------
    normalizer : str or Normalizer
        The normalizer.
    d, n : int
        The width and the number of tokens.

    Returns
    -------
    tuple of bool
        The two identities, each checked symbolically.

    Examples
    --------
    >>> consensus_derivatives("exp", 2, 2)
    (True, True)
    """
    phi = normalizer if isinstance(normalizer, Normalizer) else Normalizer(normalizer)
    arch = Architecture((d, d), (d,), n, (phi,))
    M = np.array(sympy.symbols(f"M0:{d * d}"), dtype=object).reshape(d, d)
    m = np.array(sympy.symbols(f"m0:{d}"), dtype=object).reshape(d, 1)
    Yd = np.array(sympy.symbols(f"y0:{d * n}"), dtype=object).reshape(d, n)
    S = Symbolic()
    vals = {"M1": S.const(M), "X": S.const(m.dot(np.ones((1, n), dtype=object))),
            "L": S.const(identity_matrix(d))}
    # direction 0 moves M along itself (a scaling), direction 1 moves X by Yd
    directions = np.zeros((2, d * d + d * n), dtype=object)
    directions[0, : d * d] = M.reshape(-1)
    directions[1, d * d:] = Yd.reshape(-1)
    J = jacobian(effective_network(arch), S, vals, ["M1", "X"], directions=S.const(directions))
    out = J.T.reshape((2, d, n))
    mean = Yd.dot(np.full((n, 1), sympy.Rational(1, n), dtype=object)).dot(np.ones((1, n), dtype=object))
    dM = all(sympy.cancel(v) == 0 for v in out[0].reshape(-1))
    dX = all(sympy.cancel(v - w) == 0 for v, w in zip(out[1].reshape(-1), mean.reshape(-1)))
    return dM, dX


# -- Corollary E.2: ideals of zero-product fibers ----------------------------------

def residual_generators(depth: int, d: int, layers: Sequence[int] = (1,)
                        ) -> tuple[list[sympy.Expr], list[sympy.Symbol]]:
    r"""Width-one factors :math:`q_i, k_i \in \mathbb R^d`, identity values: the
    entries of the reduced scores :math:`M_i` for ``i in layers`` (computed by
    :func:`~symattn.model.parameters.reduction` on symbols), and all factor variables.

    ``layers=(1,)`` is the serial first-zero ideal of Prop. E.1 with ``s = 1``
    and ``L = I`` fixed; ``layers=range(1, D + 1)`` the independent layer fibers.

    Parameters
    ----------
    depth : int
        The depth ``D``.
    d : int
        The width.
    layers : sequence of int
        The layers whose reduced scores generate the ideal.

    Raises
    ------
    SymattnError
        ``layers`` empty or out of range, or ``d < 1``.

    Returns
    -------
    generators : list of sympy.Expr
        The entries of the chosen ``M_i``, row-major.
    variables : list of sympy.Symbol
        ``q1_1..q1_d, k1_1..k1_d, q2_1, ...`` (all layers, also the free ones).

    Raises
    ------
    SymattnError
        If ``layers`` is empty or not inside ``1..depth``.

    Notes
    -----
    The generators are the entries of the reduced scores computed from symbolic factors by
    :func:`~symattn.model.parameters.reduction`; intersections (:func:`ideal_intersection`) by
    elimination with sympy Groebner bases; the minimal primes (:func:`minimal_primes`) of a squarefree
    monomial ideal are its minimal variable covers, and the decomposition is confirmed by comparing
    reduced Groebner bases.

    Examples
    --------
    >>> gens, xs = residual_generators(1, 2)
    >>> gens
    [k1_1*q1_1, k1_2*q1_1, k1_1*q1_2, k1_2*q1_2]
    """
    if depth < 1 or d < 1 or not set(layers) <= set(range(1, depth + 1)) or not layers:
        raise SymattnError(f"layers must be a nonempty subset of 1..{depth}, and d >= 1")
    Q, K, V, xs = [], [], [], []
    for i in range(1, depth + 1):
        q = sympy.symbols(f"q{i}_1:{d + 1}")
        k = sympy.symbols(f"k{i}_1:{d + 1}")
        xs += [*q, *k]
        Q.append(np.array(q, dtype=object).reshape(d, 1))
        K.append(np.array(k, dtype=object).reshape(d, 1))
        V.append(identity_matrix(d))
    eta = reduction(NativeParams(tuple(Q), tuple(K), tuple(V)))
    gens = [sympy.expand(v) for i in layers for v in eta.M[i - 1].reshape(-1)]
    return gens, xs


def ideal_intersection(I: Sequence[sympy.Expr], J: Sequence[sympy.Expr],
                       xs: Sequence[sympy.Symbol]) -> list[sympy.Expr]:
    """Reduced grevlex Groebner basis of ``I cap J`` (elimination of ``t`` from
    ``t I + (1 - t) J``, sympy Groebner bases).

    Parameters
    ----------
    I, J : sequence of sympy.Expr
        Generators of the two ideals.
    xs : sequence of sympy.Symbol
        The variables.

    Returns
    -------
    list of sympy.Expr

    Examples
    --------
    >>> x, y = sympy.symbols("x y")
    >>> ideal_intersection([x], [y], [x, y])
    [x*y]
    """
    t = sympy.Dummy("t")
    G = sympy.groebner([t * f for f in I] + [(1 - t) * g for g in J], t, *xs, order="lex")
    kept = [g for g in G.exprs if not g.has(t)]
    return list(sympy.groebner(kept, *xs, order="grevlex").exprs)


def minimal_primes(generators: Sequence[sympy.Expr], xs: Sequence[sympy.Symbol]) -> list[tuple[sympy.Symbol, ...]]:
    """Minimal primes of a squarefree monomial ideal: its minimal variable covers.

    Each returned tuple of variables generates one prime; the ideal is their
    intersection when it is radical (compare Groebner bases to confirm).

    Parameters
    ----------
    generators : sequence of sympy.Expr
        Squarefree monomials.
    xs : sequence of sympy.Symbol
        The variables.

    Returns
    -------
    list of tuple of sympy.Symbol

    Raises
    ------
    SymattnError
        A generator is not a squarefree monomial.

    Examples
    --------
    >>> x, y, z = sympy.symbols("x y z")
    >>> minimal_primes([x * y, x * z], [x, y, z])
    [(x,), (y, z)]
    """
    supports = []
    for g in generators:
        p = sympy.Poly(g, *xs)
        if len(p.terms()) != 1 or max(p.monoms()[0]) > 1:
            raise SymattnError(f"{g} is not a squarefree monomial: minimal_primes needs a squarefree monomial ideal")
        supports.append({x for x, e in zip(xs, p.monoms()[0]) if e})
    covers: set[frozenset] = set()

    def branch(chosen: frozenset) -> None:
        open_ = next((sup for sup in supports if not sup & chosen), None)
        if open_ is None:
            covers.add(chosen)
            return
        for x in open_:
            branch(chosen | {x})

    branch(frozenset())
    minimal = [c for c in covers if not any(o < c for o in covers)]
    minimal.sort(key=lambda c: sorted(xs.index(x) for x in c))
    return [tuple(x for x in xs if x in c) for c in minimal]


# -- E.4: learning coefficient from the Newton polyhedron ---------------------------

def _lp_min(A: list[list[Fraction]], b: list[Fraction], cost: list[Fraction]) -> tuple[Fraction, list[Fraction]]:
    """Exact ``min cost.x`` subject to ``A x = b``, ``x >= 0``: two-phase dense
    simplex over Fractions with Bland's rule (no cycling). Returns the value and
    an optimal vertex; the caller certifies optimality by duality."""
    m, n = len(A), len(cost)
    rows = [[Fraction(v) for v in r] + [Fraction(int(i == j)) for j in range(m)] + [Fraction(bi)]
            for i, (r, bi) in enumerate(zip(A, b))]
    rows = [[-v for v in r] if r[-1] < 0 else r for r in rows]
    # the identity block must stay the artificial block after row negation
    for i, r in enumerate(rows):
        for j in range(m):
            r[n + j] = Fraction(int(i == j))
    basis = [n + i for i in range(m)]

    def pivot(i: int, j: int) -> None:
        p = rows[i][j]
        rows[i] = [v / p for v in rows[i]]
        for k in range(len(rows)):
            if k != i and rows[k][j] != 0:
                f = rows[k][j]
                rows[k] = [a - f * c for a, c in zip(rows[k], rows[i])]

    def optimise(c: list[Fraction], allowed: int) -> None:
        while True:
            reduced = [c[j] - sum(c[basis[i]] * rows[i][j] for i in range(len(rows))) for j in range(allowed)]
            entering = next((j for j in range(allowed) if reduced[j] < 0 and j not in basis), None)
            if entering is None:
                return
            ratios = [(rows[i][-1] / rows[i][entering], basis[i], i) for i in range(len(rows))
                      if rows[i][entering] > 0]
            if not ratios:
                raise SymattnError("unbounded linear program")
            i = min(ratios)[2]
            pivot(i, entering)
            basis[i] = entering

    optimise([Fraction(0)] * n + [Fraction(1)] * m, n + m)
    if any(basis[i] >= n and rows[i][-1] != 0 for i in range(len(rows))):
        raise SymattnError("infeasible linear program")
    for i in reversed(range(len(rows))):
        if basis[i] >= n:
            j = next((j for j in range(n) if rows[i][j] != 0), None)
            if j is None:
                del rows[i], basis[i]
            else:
                pivot(i, j)
                basis[i] = j
    costs = [Fraction(v) for v in cost] + [Fraction(0)] * m
    optimise(costs, n)
    x = [Fraction(0)] * n
    for i, j in enumerate(basis):
        x[j] = rows[i][-1]
    return sum((c * v for c, v in zip(costs, x)), Fraction(0)), x


def newton_threshold(K: sympy.Expr, xs: Sequence[sympy.Symbol]) -> tuple[Fraction, int]:
    r"""``(lambda, m)`` of :math:`\int e^{-T K}\,dw \asymp T^{-\lambda}(\log T)^{m-1}`
    near 0 for a polynomial ``K`` that is a positive combination of squared
    monomials (nondegenerate over the reals, constant prior): :math:`\lambda
    = 1/t^*` with :math:`t^* = \min\{t : t\mathbf 1 \in \Gamma(K)\}` and ``m`` the
    codimension of the face of :math:`\Gamma(K)` containing :math:`t^*\mathbf 1`.

    Exact rational linear programming; :math:`t^*` is certified by a dual
    solution of the same value (a weight ``w >= 0``, ``sum w = 1``, with
    ``min_j w.v_j = t*``), both checked exactly.

    Parameters
    ----------
    K : sympy.Expr
        A positive combination of squared monomials.
    xs : sequence of sympy.Symbol
        The variables.

    Returns
    -------
    tuple
        ``(lambda, m)`` (exact).

    Raises
    ------
    SymattnError
        ``K`` is not of that form, or the linear program's solutions do not certify ``t*``.

    Returns
    -------
    lam : Fraction
        The local learning coefficient :math:`\lambda`.
    m : int
        Its multiplicity.

    Raises
    ------
    SymattnError
        If ``K`` is not a positive combination of squared monomials.

    Notes
    -----
    For a loss that is a sum of squared monomials with positive coefficients (nondegenerate over the
    reals), :math:`\lambda = 1/t^*` where :math:`t^*\mathbf 1` is the first point of the diagonal in
    the Newton polyhedron, and the multiplicity is the codimension of the face containing it; both by
    exact rational linear programming (sympy's simplex). :func:`loss_decay` is a *numerical*
    corroboration (mpmath quadrature of the paper's polar integral).

    Examples
    --------
    >>> q, k = sympy.symbols("q k")
    >>> newton_threshold(q**2 * k**2, [q, k])
    (Fraction(1, 2), 2)
    """
    poly = sympy.Poly(sympy.expand(K), *xs)
    if any(c <= 0 for c in poly.coeffs()) or any(e % 2 for mon in poly.monoms() for e in mon):
        raise SymattnError("newton_threshold needs a positive combination of squared monomials")
    V = [[Fraction(e) for e in mon] for mon in poly.monoms()]
    N, n = len(V), len(xs)
    one, zero = Fraction(1), Fraction(0)
    # primal: min t, sum_j c_j v_j + s = t 1, sum_j c_j = 1  (variables c, t, s >= 0)
    A = [[V[j][i] for j in range(N)] + [-one] + [one if a == i else zero for a in range(n)] for i in range(n)]
    A.append([one] * N + [zero] * (n + 1))
    t_star, x = _lp_min(A, [zero] * n + [one], [zero] * N + [one] + [zero] * n)
    # dual: max u, w.v_j - u - r_j = 0, sum w = 1  (variables w, u, r >= 0): min -u
    B = [[V[j][i] for i in range(n)] + [-one] + [-one if a == j else zero for a in range(N)] for j in range(N)]
    B.append([one] * n + [zero] * (N + 1))
    u, y = _lp_min(B, [zero] * N + [one], [zero] * n + [-one] + [zero] * N)
    c, w = x[:N], y[:n]
    point = [sum(cj * v[i] for cj, v in zip(c, V)) for i in range(n)]
    if not (min(c) >= 0 and sum(c) == 1 and max(point) <= t_star and min(w) >= 0 and sum(w) == 1
            and min(sum(wi * vi for wi, vi in zip(w, v)) for v in V) == t_star == -u):
        raise SymattnError("the linear program's primal and dual solutions do not certify t*")
    # the minimal face containing t* 1: the vertices and orthant directions used
    # with positive weight by some representation t* 1 = sum c_j v_j + s.
    F = [[V[j][i] for j in range(N)] + [one if a == i else zero for a in range(n)] for i in range(n)]
    F.append([one] * N + [zero] * n)
    rhs = [t_star] * n + [one]
    used = [k for k in range(N + n)
            if -_lp_min(F, rhs, [-one if a == k else zero for a in range(N + n)])[0] > 0]
    vertices = [V[k] for k in used if k < N]
    span = [[a - b for a, b in zip(v, vertices[0])] for v in vertices[1:]]
    span += [[one if a == k - N else zero for a in range(n)] for k in used if k >= N]
    dim = Matrix.rational(span).rank() if span else 0
    return 1 / t_star, n - dim


def loss_decay(d: int, Ts: Sequence[int], digits: int = 30) -> list[tuple[int, mpmath.mpf]]:
    r"""Numerical: the log-slope :math:`y(T) = -\,d\log Z/d\log T` of the paper's
    one-pair polar integral :math:`Z(T) = \int_0^1\!\int_0^1 e^{-Ta^2b^2} a^{d-1}b^{d-1}\,da\,db`
    (mpmath quadrature at ``digits`` digits; the inner integral is a lower
    incomplete gamma function). If :math:`Z \sim T^{-\lambda}(A(\log T)^{m-1} + \dots)`
    then :math:`y \approx \lambda - (m-1)/(\log T + c)`.

    Parameters
    ----------
    d : int
        The width.
    Ts : sequence of int
        The values of ``T``.
    digits : int
        The quadrature's precision.

    Returns
    -------
    list of tuple
        ``(T, y(T))`` (numerical).

    Examples
    --------
    >>> [round(float(y), 2) for _, y in loss_decay(1, [10**4])]
    [0.41]
    """
    ctx = mpmath.mp.clone()
    ctx.dps = digits
    out = []
    for T in Ts:
        T = ctx.mpf(T)

        def inner(a, e):
            # int_0^1 b^(d-1+2e) exp(-T a^2 b^2) db, times a^(2e)
            x = T * a * a
            return a ** (2 * e) * ctx.gammainc((d + 2 * e) / ctx.mpf(2), 0, x) / (2 * x ** ((d + 2 * e) / ctx.mpf(2)))

        # log-spaced breakpoints down past the scale a ~ T^(-1/2) of the integrand
        cut = [0] + [ctx.mpf(10) ** -j for j in range(len(str(int(T))) // 2 + 2, 0, -1)] + [1]
        Z = ctx.quad(lambda a: a ** (d - 1) * inner(a, 0), cut)
        TK = ctx.quad(lambda a: a ** (d - 1) * inner(a, 1), cut) * T
        out.append((int(T), TK / Z))
    return out
