r"""Appendix C, the rest: Props. C.4-C.6, the full fibers of Cor. C.2 and Cor. 4.1, eq. (33).

**Proposition C.4 (sign degree).** With :math:`\alpha_i, k_i` of Prop. C.1 and
:math:`o_i` the first nonzero odd degree of :math:`h_i` (when :math:`h_i` is
not even), :math:`\varsigma_i = o_i` or :math:`k_i` (even :math:`h_i`) and
:math:`N_{\rm sign} = \max_i\{2\alpha_{i-1} + 2\varsigma_i - 1\}`. Flipping
:math:`M_j` changes the jet first at degree :math:`2\alpha_{j-1} + 2o_j - 1`
(eq. C.7); at an even normalizer the flip is an exact symmetry at every order.

**Proposition C.5 (invertible prefixes).** For a centered cloud
:math:`x_a = \rho(m + y_a)`, :math:`C_0 = n^{-1}\sum_a y_ay_a^\top`, the leading
centered coefficients after layer :math:`i` (order :math:`\rho^{3^i}`) have
covariance (eq. C.9)

.. math::

   C_i = g_i(0)^2\, C_{i-1} M_i^\top C_{i-1} M_i C_{i-1},

and the output mean of a depth-:math:`j` stack minus that of its prefix has, at
:math:`N_j = 2\cdot 3^{j-1} + 1`, the coefficient (C.10)
:math:`g_j(0) L C_{j-1} M_j^\top m`. The map :math:`\Phi_M(S) = S M^\top S M S` is
onto the positive-definite cone (C.11): the iteration :math:`X \mapsto
(B^\top X B)^{-1/2}` contracts the Thompson metric by :math:`1/2`.

**Proposition C.6 (two-plane restrictions), eqs. (34)-(37).** For a rank-two
:math:`U`, :math:`F_{L,\mathbf M}(UZ) = F_{LU, (U^\top M_iU)_i}(Z)` (C.12); for a
skew :math:`M`, :math:`\det(U^\top MU) = (a^\top Mb)^2`; the off-diagonal entry
of :math:`U^\top TU` is :math:`a^\top Tb` (C.13, eq. 37); and the jet of degree
:math:`2\cdot 3^{D-1} + 1` is an immersion with a singular skew prefix in odd
dimension.

**Depth-two softmax classification (Cor. 4.1, Thm 2).** For every case of
:math:`(L, M_1)` and :math:`n \in \{2, 3\}` the script computes where
:math:`M_2` first enters the jets, whether the jet of degree seven is an
immersion, and compares with the statement that decides the case.

**Cor. C.2 (full fibers).** At :math:`L = 0` the degree-one jet is injective
in :math:`L` (every competitor has :math:`\widetilde L = 0`) and no score
enters any jet through :math:`N_D^{\rm all}`; at a first zero score the suffix
enters no jet through :math:`N_D^{\rm all}`.

**Eq. (33).** :math:`(n + u)^{-1} \equiv n^{-1}\sum_{j \le N}(-u/n)^j \bmod
(X)^{N+1}`: the series reciprocal of the model's arithmetic against the
formula.

Everything is computed from the network graph over exact series (or, for
C.11, at 50 digits), and the formulas are evaluated separately. Not covered
here: eqs. (20)-(21) as separate checks (they are the cancellation and order
steps that t1's layer-isolation checks use).
"""

from __future__ import annotations

import random

import mpmath
import numpy as np
import sympy

from symattn.core.algebras import exact_series
from symattn.render.derivation import Derivation
from symattn.analyses.fibers import ray_series
from symattn.model.network import effective_network, evaluate
from symattn.theorems.formulas import all_tuples_degree, common_k_sharp_degree
from symattn.analyses.jets import first_dependence, generic_effective, sharp_degree
from symattn.model.architecture import Architecture
from symattn.model.parameters import EffectiveParams, random_bank, random_rational_matrix
from symattn.theorems.registry import main_for

NAME = "sign-degree-covariance-fibers"
STATEMENT = "App. C: sign degree C.4, covariance C.5, two-plane C.6, depth-two table, Cor. C.2, eq. (33)"
KIND = "numerical"


def _alphas(arch: Architecture) -> list[int]:
    """alpha_0 = 1, alpha_i = 3 alpha_{i-1} + 2 k_i - 2 (Prop. C.1)."""
    out = [1]
    for phi in arch.normalizers:
        out.append(3 * out[-1] + 2 * phi.k - 2)
    return out


def _first_odd_h(phi) -> int | None:
    """The first nonzero odd degree of h = log phi (None when h is even)."""
    h = phi.h_taylor(40)
    return next((j for j in range(1, 41, 2) if h[j] != 0), None)


def _first_difference(a: np.ndarray, b: np.ndarray) -> int | None:
    diff = [j for j in range(a.shape[0]) if (a[j] != b[j]).any()]
    return diff[0] if diff else None


def _sign_degree(der: Derivation, spec: str, depth: int) -> list[list[object]]:
    arch = Architecture.uniform(depth, 2, 2, 3, spec)
    eta = generic_effective(arch, 5)
    alpha = _alphas(arch)
    rays = random_bank(arch, 2, seed=3)
    order = 2 * alpha[depth - 1] + 2 * max(_first_odd_h(p) or p.k for p in arch.normalizers) + 2
    base = ray_series(eta.L, list(eta.M), arch.normalizers, rays, order)
    computed, expected = [], []
    for j, phi in enumerate(arch.normalizers, 1):
        flipped = [-m if i == j else m for i, m in enumerate(eta.M, 1)]
        computed.append(_first_difference(base, ray_series(eta.L, flipped, arch.normalizers, rays, order)))
        o = _first_odd_h(phi)
        expected.append(None if o is None else 2 * alpha[j - 1] + 2 * o - 1)
    what = f"$D = {depth}$, $\\phi = $ ``{spec}``, $d = 2$, $n = 3$, 2 rays, through $\\rho^{{{order - 1}}}$"
    der.check("Prop. C.4 / (C.7): first degree changed by flipping $M_j$ (None: never)", computed, expected,
              kind="exact", note=what + ", exact over $\\mathbb{Q}$")
    varsigma = [_first_odd_h(p) or p.k for p in arch.normalizers]
    n_sign = max(2 * alpha[i] + 2 * varsigma[i] - 1 for i in range(depth))
    n_d = 2 * alpha[depth - 1] + 2 * arch.normalizers[-1].k - 1
    flips = [c for c in computed if c is not None]
    der.check("Prop. C.4: $N_{\\rm sign} = \\max(\\text{computed flip degree}, N_D)$", max(flips + [n_d]), n_sign,
              kind="exact", note=what)
    der.case(f"Prop. C.4: {what}")
    return [[spec, depth, j, "never" if c is None else c, "never" if e is None else e]
            for j, (c, e) in enumerate(zip(computed, expected, strict=True), 1)]


def _centered_cloud(d: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = random.Random(seed)
    Y = random_rational_matrix(rng, (d, n))
    Y = Y - Y.sum(axis=1, keepdims=True) / n
    return random_rational_matrix(rng, (d, 1)), Y


def _covariance(der: Derivation, depth: int, d: int, spec: str, show: bool = False) -> None:
    n = d + 1
    arch = Architecture.uniform(depth, d, d, n, spec)
    eta = generic_effective(arch, 9)
    m, Y = _centered_cloud(d, n, 4)
    order = 3 ** depth + 1
    A = exact_series(order + 1)
    g = effective_network(arch)
    X = A.series([np.zeros((d, n), dtype=int), m + Y])
    out = evaluate(g, A, {"X": X, "L": A.const(eta.L), **{f"M{i}": A.const(M) for i, M in enumerate(eta.M, 1)}})
    slope = [sympy.Rational(str(p.slope)) for p in arch.normalizers]
    C = Y.dot(Y.T) / n
    computed, formula = [], []
    for i in range(1, depth + 1):
        Xi = A.coefficients(out[f"X{i}"])
        lead = np.array([[sympy.Rational(str(Xi[3 ** i][a, b])) for b in range(n)] for a in range(d)], dtype=object)
        lower = [np.array([[sympy.Rational(str(Xi[j][a, b])) for b in range(n)] for a in range(d)], dtype=object)
                 for j in range(1, 3 ** i)]
        centered_lower = all((L_ - L_.sum(axis=1, keepdims=True) / n == 0).all() for L_ in lower)
        lead = lead - lead.sum(axis=1, keepdims=True) / n
        computed.append((centered_lower, sympy.Matrix((lead.dot(lead.T) / n).tolist())))
        M = eta.M[i - 1]
        C = slope[i - 1] ** 2 * C.dot(M.T).dot(C).dot(M).dot(C)
        formula.append((True, sympy.Matrix(np.vectorize(sympy.nsimplify)(C).tolist())))
    what = f"$D = {depth}$, $d = {d}$, $n = {n}$, $\\phi = $ ``{spec}``"
    if show:
        der.show(f"The leading centered covariance after layer {depth}, computed from the graph over exact "
                 f"series ({what}):",
                 sympy.Matrix(computed[-1][1]), f"C_{{{depth}}}")
        der.show("(C.9) evaluated separately:", sympy.Matrix(formula[-1][1]),
                 f"g(0)^2\\, C_{{{depth - 1}}} M_{{{depth}}}^\\top C_{{{depth - 1}}} M_{{{depth}}} C_{{{depth - 1}}}")
    der.check("Prop. C.5, eq. (C.9): leading centered covariance $C_i = g(0)^2 C M^\\top C M C$", computed,
              formula, kind="exact", note=what + "; first entry: the centered part vanishes below $\\rho^{3^i}$")
    # (C.10): output mean of the depth-j stack minus its prefix at N_j = 2 3^(j-1) + 1
    C = Y.dot(Y.T) / n
    for j in range(1, depth + 1):
        N = common_k_sharp_degree(j)
        means = []
        for D in (j - 1, j):
            if D == 0:
                means.append(np.zeros((eta.L.shape[0],), dtype=object))
                continue
            sub = Architecture.uniform(D, d, d, n, spec)
            B = exact_series(N + 1)
            F = B.coefficients(evaluate(effective_network(sub), B, {
                "X": B.series([np.zeros((d, n), dtype=int), m + Y]), "L": B.const(eta.L),
                **{f"M{i}": B.const(M) for i, M in enumerate(eta.M[:D], 1)}})["F"])
            means.append(np.array([sum(sympy.Rational(str(F[N][a, b])) for b in range(n)) / n
                                   for a in range(eta.L.shape[0])], dtype=object))
        coefficient = (means[1] - means[0]).tolist()
        expected = (slope[j - 1] * eta.L.dot(np.vectorize(sympy.nsimplify)(C)).dot(eta.M[j - 1].T).dot(m)).reshape(-1)
        der.check(f"Prop. C.5, eq. (C.10): $[\\rho^{{{N}}}](\\bar F_j - \\bar F_{{j-1}}) = g_j(0) L C_{{j-1}} M_j^\\top m$",
                  coefficient, [sympy.nsimplify(v) for v in expected], kind="exact", note=what)
        C = slope[j - 1] ** 2 * C.dot(eta.M[j - 1].T).dot(C).dot(eta.M[j - 1]).dot(C)
    der.case(f"Prop. C.5 (C.9)-(C.10): {what}")


def _surjective(der: Derivation, d: int, seed: int, skew: bool) -> None:
    """(C.11): solve S M^T S M S = T by the Thompson-contracting fixed point, 50 digits."""
    ctx = mpmath.mp.clone()
    ctx.dps = 60
    rng = random.Random(seed)
    M = random_rational_matrix(rng, (d, d))
    if skew:
        M = M - M.T
    R = random_rational_matrix(rng, (d, d))
    Mm = ctx.matrix([[ctx.mpf(v.numerator) / v.denominator for v in row] for row in M])
    Rm = ctx.matrix([[ctx.mpf(v.numerator) / v.denominator for v in row] for row in R])
    T = Rm * Rm.T + ctx.eye(d)
    half = ctx.sqrtm(T)
    half = ctx.matrix([[ctx.re(half[i, j]) for j in range(d)] for i in range(d)])
    Bm = half * Mm * half

    def real(W):
        return ctx.matrix([[ctx.re(W[i, j]) for j in range(d)] for i in range(d)])

    def G(X):
        return real(ctx.inverse(ctx.sqrtm(Bm.T * X * Bm)))

    def thompson(X, Y):
        Xh = real(ctx.inverse(ctx.sqrtm(X)))
        W = Xh * Y * Xh
        lams = list(ctx.eigsy((W + W.T) / 2, eigvals_only=True))
        return max(ctx.log(max(lams)), -ctx.log(min(lams)))

    X, steps = ctx.eye(d), []
    for _ in range(200):
        Xn = G(X)
        steps.append(thompson(X, Xn))
        X = Xn
        if steps[-1] < ctx.mpf(10) ** -45:
            break
    ratios = [steps[i + 1] / steps[i] for i in range(len(steps) - 1) if steps[i] > ctx.mpf(10) ** -40]
    S = half * X * half
    residual = ctx.mnorm(S * Mm.T * S * Mm * S - T, 1)
    positive = min(ctx.eigsy((S + S.T) / 2, eigvals_only=True))
    what = f"$d = {d}$, {'skew' if skew else 'generic'} invertible $M$, random $T > 0$, 60 digits"
    der.check("Prop. C.5, eq. (C.11): $\\Phi_M(S) = T$ solved, $S > 0$", (float(residual) < 1e-40, positive > 0),
              (True, True), kind="numerical", note=f"{what}; residual {mpmath.nstr(residual, 3)}, "
                                                   f"{len(steps)} iterations")
    der.check("Prop. C.5, eq. (C.11): observed Thompson-metric contraction of the iteration at most 1/2",
              all(r <= ctx.mpf(1) / 2 + ctx.mpf(10) ** -20 for r in ratios), True, kind="numerical",
              note=f"{what}; largest step ratio {mpmath.nstr(max(ratios), 4) if ratios else '-'}")
    der.case(f"Prop. C.5 (C.11): {what}")


def _restriction(der: Derivation, depth: int, d: int, seed: int) -> None:
    """(C.12) / (34): F_{L,M}(U Z) = F_{LU, U^T M U}(Z), exact along rays."""
    rng = random.Random(seed)
    arch = Architecture.uniform(depth, d, 1, 3, "exp")
    eta = generic_effective(arch, seed, skew=[True] * (depth - 1) + [False])
    U = random_rational_matrix(rng, (d, 2))
    Z = random_rational_matrix(rng, (2, 2, 3))
    rays = np.array([U.dot(z) for z in Z], dtype=object)
    lhs = ray_series(eta.L, list(eta.M), arch.normalizers, rays, 10)
    rhs = ray_series(eta.L.dot(U), [U.T.dot(M).dot(U) for M in eta.M], arch.normalizers, Z, 10)
    der.check("Prop. C.6, eq. (C.12) / (34): $F_\\eta(UZ) = F_{\\eta_U}(Z)$", bool((lhs == rhs).all()), True,
              kind="exact", note=f"$D = {depth}$, $d = {d}$, skew prefixes, rational $U$, 2 rays, through "
                                 "$\\rho^9$, over $\\mathbb{Q}$")
    der.case(f"Prop. C.6 (C.12): $D = {depth}$, $d = {d}$")


def _two_plane_symbolic(der: Derivation, d: int) -> None:
    a = sympy.Matrix(sympy.symbols(f"a1:{d + 1}"))
    b = sympy.Matrix(sympy.symbols(f"b1:{d + 1}"))
    U = a.row_join(b)
    T = sympy.Matrix(d, d, lambda i, j: sympy.Symbol(f"t{i + 1}{j + 1}"))
    K = sympy.Matrix(d, d, lambda i, j: sympy.Symbol(f"s{min(i, j) + 1}{max(i, j) + 1}") * (1 if i < j else -1)
                     if i != j else 0)
    det = sympy.expand((U.T * K * U).det())
    if d == 2:
        der.show("The determinant of the two-plane restriction of a symbolic skew $M$ ($d = 2$), computed:",
                 sympy.factor(det), "\\det(U^\\top M U)")
    der.check("Prop. C.6: $\\det(U^\\top M U) = (a^\\top M b)^2$ for skew $M$",
              sympy.expand(det - (a.T * K * b)[0] ** 2), 0, kind="exact", note=f"$d = {d}$, symbolic skew $M$, $a$, $b$")
    der.check("eq. (37) / (C.13): the off-diagonal entry of $U^\\top T U$ is $a^\\top T b$",
              sympy.expand((U.T * T * U)[0, 1] - (a.T * T * b)[0]), 0, kind="exact",
              note=f"$d = {d}$, symbolic $T$")
    der.case(f"Prop. C.6 symbolic identities: $d = {d}$")


def _classification(der: Derivation) -> None:
    """Depth two, softmax: where M_2 first enters, and the immersion degree, for every case."""
    rows, computed, expected = [], [], []
    for n in (3, 2):
        arch = Architecture.uniform(2, 2, 2, n, "exp")
        Y = random_bank(arch, 3, seed=n)
        gen = generic_effective(arch, 4)
        cases = [
            ("$L \\ne 0$, $\\operatorname{sym} M_1 \\ne 0$", gen, "Thm 1, Thm 3", (7, 7)),
            ("$L \\ne 0$, $M_1$ skew $\\ne 0$", generic_effective(arch, 4, skew=[True, False]),
             "Prop. C.6 / Cor. 4.1(i)" if n >= 3 else "Thm 2 (two-token collapse)", (7, 7) if n >= 3 else (None, None)),
            ("$L \\ne 0$, $M_1 = 0$", generic_effective(arch, 4, zero=(1,)), "Cor. 4.1(ii)", (None, None)),
            ("$L = 0$", EffectiveParams(gen.L * 0, gen.M), "Cor. 4.1(iii)", (None, None)),
        ]
        for label, eta, statement, want in cases:
            enters = first_dependence(arch, eta, "M2", Y, 16)
            immersion = None
            if enters is not None:
                immersion = sharp_degree(arch, eta, hint=7).sharp_degree
            rows.append([n, label, "never" if enters is None else enters,
                         "none" if immersion is None else immersion, statement])
            computed.append((n, label, enters, immersion))
            expected.append((n, label, *want))
    der.show_table("Depth-two softmax fibers (Cor. 4.1 with Thm 2), computed: the first degree at which $M_2$ "
                   "enters the jets (through 15) and the least degree of an injective differential:",
                   ["$n$", "case", "$M_2$ enters at", "immersion at", "decided by"], rows)
    der.check("Cor. 4.1 / Thm 2: depth-two softmax classification table", computed, expected, kind="exact",
              note="$d = 2$, 3 rays; first dependence exact over $\\mathbb{Q}$, injectivity by ranks mod $p$")
    der.case("depth-two softmax classification, $n = 2$ and $3$")


def _full_fibers(der: Derivation) -> None:
    arch = Architecture.uniform(2, 2, 2, 3, "exp(s+s^2)")
    gen = generic_effective(arch, 6)
    Y = random_bank(arch, 3, seed=2)
    N_all = all_tuples_degree(2)
    zero_L = EffectiveParams(gen.L * 0, gen.M)
    der.check("Cor. C.2 full fiber, $L = 0$: $T_1$ injective in $L$ (every competitor has $\\tilde L = 0$)",
              sharp_degree(arch, zero_L, blocks=["L"], hint=1).sharp_degree, 1, kind="exact",
              note="$d = 2$, $n = 3$, $\\phi = e^{s + s^2}$, rank mod $p$")
    der.check(f"Cor. C.2 full fiber, $L = 0$: no score enters any jet through $N^{{\\rm all}} = {N_all}$",
              [first_dependence(arch, zero_L, b, Y, N_all + 1) for b in ("M1", "M2")], [None, None], kind="exact",
              note="exact over $\\mathbb{Q}$")
    first_zero = generic_effective(arch, 6, zero=(1,))
    der.check(f"Cor. C.2 full fiber, $M_1 = 0$: $M_2$ enters no jet through $N^{{\\rm all}} = {N_all}$",
              first_dependence(arch, first_zero, "M2", Y, N_all + 1), None, kind="exact",
              note="exact over $\\mathbb{Q}$")
    der.case("Cor. C.2 full fibers: $L = 0$ and $M_1 = 0$")


def _reciprocal(der: Derivation, n: int, N: int, show: bool = False) -> None:
    """Eq. (33): the model's series reciprocal of n + u against the formula."""
    rng = random.Random(n)
    u = [random_rational_matrix(rng, (1,))[0] for _ in range(N)]
    A = exact_series(N + 1)
    x = A.series([np.array([n])] + [np.array([c]) for c in u])
    computed = [sympy.Rational(str(v)) for v in A.coefficients(A.reciprocal(x))[:, 0]]
    t = sympy.Symbol("t")
    useries = sum(sympy.nsimplify(c) * t ** (j + 1) for j, c in enumerate(u))
    formula = sympy.expand(sum((-useries / n) ** j for j in range(N + 1)) / n)
    expected = [formula.coeff(t, j) for j in range(N + 1)]
    if show:
        der.show(f"The model's series reciprocal of $n + u$ ($n = {n}$, random rational $u$ of order one), "
                 f"computed, to $t^{{{N}}}$:", sum(c * t ** j for j, c in enumerate(computed)), "(n + u)^{-1}",
                 terms=4)
    der.check(f"eq. (33): $(n + u)^{{-1}} = n^{{-1}}\\sum_j (-u/n)^j \\bmod (X)^{{N+1}}$, $n = {n}$, $N = {N}$",
              computed, expected, kind="exact",
              note="series reciprocal of the model's arithmetic against the formula, over $\\mathbb{Q}$")
    der.case(f"eq. (33): $n = {n}$, $N = {N}$")


def run(full: bool = False) -> Derivation:
    der = Derivation("t8_appendix_c", "Appendix C: sign degree, covariance recovery, two-plane restrictions",
                     "$N_{\\rm sign} = \\max_i(2\\alpha_{i-1} + 2\\varsigma_i - 1)$; "
                     "$C_i = g(0)^2 C M^\\top C M C$ and $\\Phi_M$ onto the positive-definite cone; "
                     "$F_\\eta(UZ) = F_{\\eta_U}(Z)$; the depth-two softmax fibers; the full fibers of "
                     "Cor. C.2; eq. (33).", "exact")
    der.step("Sign degree (Prop. C.4): flip one score and compare the exact ray series of $F$; the first "
             "differing degree against $2\\alpha_{j-1} + 2o_j - 1$ (C.7), or never for even $h_j$.")
    flips = []
    for spec, depth in [("exp(s^2+s^3)", 1), ("gauss", 1), ("exp", 2), ("exp(s^2+s^3)", 2)] + (
            [("exp(s^2+s^5)", 1), ("cosh,exp", 2)] if full else []):
        flips += _sign_degree(der, spec, depth)
    der.show_table("The first degree at which flipping $M_j$ changes the exact ray series of $F$, computed, "
                   "beside (C.7) evaluated separately:",
                   ["$\\phi$", "$D$", "$j$", "computed", "$2\\alpha_{j-1} + 2o_j - 1$"], flips)
    der.step("Covariance recovery (Prop. C.5): the graph over exact series on a centered cloud "
             "$x_a = \\rho(m + y_a)$; the leading centered coefficients after each layer and the output "
             "mean after exact prefix subtraction, against (C.9) and (C.10) evaluated separately.")
    for depth, d, spec in [(1, 2, "exp"), (2, 2, "exp"), (2, 2, "logistic")] + ([(2, 3, "exp")] if full else []):
        _covariance(der, depth, d, spec, show=(depth, d, spec) == (2, 2, "exp"))
    for d, seed, skew in [(2, 1, False), (2, 2, True), (3, 3, False)] + ([(4, 4, True)] if full else []):
        _surjective(der, d, seed, skew)
    der.step("Two-plane restrictions (Prop. C.6, eqs. 34-37): the restriction identity along rays, the "
             "symbolic determinant and off-diagonal identities, and the immersion with a singular skew "
             "prefix in odd dimension.")
    for depth, d, seed in [(1, 3, 1), (2, 3, 2)] + ([(3, 3, 3)] if full else []):
        _restriction(der, depth, d, seed)
    for d in (2, 3):
        _two_plane_symbolic(der, d)
    arch = Architecture.uniform(2, 3, 3, 3, "exp")
    eta = generic_effective(arch, 7, skew=[True, False])
    der.check("Prop. C.6: singular skew $M_1$ ($d = 3$): $T_7$ is an immersion, no lower jet sees $M_2$",
              (sharp_degree(arch, eta, hint=7).sharp_degree, sympy.Matrix(eta.M[0].tolist()).det()), (7, 0),
              kind="exact", note="$D = 2$, $d = 3$, $n = 3$, softmax; ranks mod $p$, det exact")
    der.case("Prop. C.6: singular skew prefix, $d = 3$")
    _classification(der)
    _full_fibers(der)
    for n, N in ((2, 6), (3, 8)):
        _reciprocal(der, n, N, show=n == 2)
    return der


if __name__ == "__main__":
    raise SystemExit(main_for(__name__))
