r"""Proposition 4.2, Proposition E.1, Corollary E.2 and App. E.4: local geometry of the reduction.

**Proposition 4.2 (eq. 39-40).** With square invertible values, the chart
:math:`(P_1, \dots, P_{D-1}, L, \widetilde Q_i = P_{i-1}^\top Q_i,
\widetilde K_i = P_{i-1}^\top K_i)` has the inverse :math:`V_i = P_i
P_{i-1}^{-1}`, :math:`Q_i = P_{i-1}^{-\top}\widetilde Q_i`, :math:`K_i =
P_{i-1}^{-\top}\widetilde K_i`, and in it :math:`\pi = (L, \widetilde Q_i
\widetilde K_i^\top)`. At full-column-rank factors

.. math::

   \operatorname{rank} D(\Psi\circ\pi) = d^2 + \sum_i r_i(2d - r_i),\qquad
   \dim(\text{fiber}) = (D-1)d^2 + \sum_i r_i^2 .

**Proposition E.1 (eq. 41).** If :math:`g_i(0) \neq 0`, :math:`L_* \neq 0`,
:math:`\operatorname{sym} M_i^* \neq 0` for :math:`i < s` and :math:`M_s^* = 0`,
a finite observation has residual ideal :math:`(L - L_*, (M_i - M_i^*)_{i<s},
M_s)`: the differential in :math:`u = (L, M_1..M_s)` is injective and the
suffix :math:`M_{s+1}..M_D` does not enter (:math:`r(0, v) = 0`).

**Corollary E.2 (eq. 42).** Width-one factors :math:`M_i = q_ik_i^\top`,
identity values: the serial fiber over uniform averaging at the zero factors
has ideal :math:`(q_1k_1^\top) = (q_1)\cap(k_1)`, two components, every later
factor free; independent layer fibers have :math:`2^D` components.

**App. E.4.** The local learning coefficient and multiplicity are
:math:`(d/2, 2)` (serial) and :math:`(Dd/2, D+1)` (independent).

**App. E.5.** On the path of Theorem 4, :math:`\operatorname{coker} J(t)^\top \cong
\mathcal O^{\zeta} \oplus \bigoplus_i (\mathcal O/(t^{\beta_i}))^{r_i(2d-r_i)}` with
:math:`\zeta = (D-1)d^2 + \sum_i r_i^2` (read off the certified Smith factors).

The script computes: the chart and its inverse in exact rationals; the exact
Jacobian of :math:`\pi` from the reduction graph (native and in the chart) and
the gauges spanning its kernel; the ray Jacobian of the effective network at a
first zero score (rank mod p in the visible block, exact zero over Q in the
suffix, and the control with :math:`M_s \neq 0` where the suffix enters); the
consensus derivatives symbolically; the *residual ideals themselves*: the
effective graph is run along rays over series whose coefficients are
polynomials in the parameters, the jet residuals
:math:`[\rho^j](F(\rho Y) - \rho L_*\mu(Y)\mathbf 1^\top)` through a stated
order are reduced to a Groebner basis (those through :math:`\rho^3` generate
every residual), and the basis is compared with the stated generators
(:math:`(L - L_*, M_1)` for Prop. E.1 at :math:`s = 1`; :math:`(q_1k_1^\top)` for
the serial network of Cor. E.2, and :math:`\sum_i (q_ik_i^\top)` for the
product of independent one-layer networks, each computed from its own
model); their intersections and minimal primes; the Newton-polyhedron
threshold of the *computed* ideals by exact linear programming with a duality
certificate (E.4); and, numerically, the log-slope of the loss integral
:math:`\int e^{-TR}` of the computed serial ideal (:math:`R = \sum_j f_j^2`
over its computed generators, checked exactly to be :math:`|q_1|^2|k_1|^2`,
which makes it the polar integral of App. E.4) by mpmath quadrature at 30
digits, compared with the Newton threshold of the same computed ideal. The
formulas above are evaluated separately and compared. The kind is numerical
because of that quadrature (the exact Newton-polyhedron checks do not need it).
"""

from __future__ import annotations

import random
from fractions import Fraction

import mpmath
import numpy as np
import sympy

from symattn.render.derivation import Derivation
from symattn.analyses.geometry import (chart_rank, consensus_derivatives, first_zero_ideal, from_chart, native_suffix_free,
                              ideal_intersection, loss_decay, minimal_primes, newton_threshold,
                              normal_form_chart, reduction_jacobian, residual_generators)
from symattn.core.linalg import Matrix
from symattn.analyses.dimension import gauge_bound, generic_native
from symattn.theorems.formulas import common_k_divisibility_order, prop_c1_degree
from symattn.model.network import effective_network, evaluate
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank, random_rational_matrix, reduction
from symattn.analyses.signatures import ProbeAlgebra, to_sympy
from symattn.theorems.registry import main_for
from symattn.analyses.spectrum import native_spectrum

NAME = "residual-ideal-geometry"
STATEMENT = "Prop. 4.2, E.1, Cor. E.2, E.4-E.5: normal form and residual ideals"
KIND = "numerical"


def _what(arch: Architecture) -> str:
    phis = ", ".join(f"``{p.name}``" for p in arch.normalizers)
    ranks = ", ".join(map(str, arch.ranks))
    return f"$D = {arch.depth}$, $d = {arch.widths[0]}$, $r = ({ranks})$, $n = {arch.tokens}$, $\\phi$ = {phis}"


def _normal_form(der: Derivation, arch: Architecture, seed: int) -> None:
    label = "Prop. 4.2, eq. (40)"
    theta = generic_native(arch, seed=seed)
    chart = normal_form_chart(theta)
    back = from_chart(chart)
    eta = reduction(theta)
    d, D = arch.d, arch.depth
    der.check(f"{label}: chart round trip", all((a == b).all() for a, b in
                                                zip(back.as_dict().values(), theta.as_dict().values())),
              True, note=_what(arch))
    der.check(f"{label}: $\\pi = (L, \\tilde Q_i \\tilde K_i^\\top)$ in the chart",
              bool((eta.L == chart.L).all()) and all((m == s).all() for m, s in zip(eta.M, chart.scores())),
              True, note=_what(arch))
    Jpi = reduction_jacobian(arch, theta)
    rank = Matrix.rational(Jpi).rank()
    formula = d * d + sum(r * (2 * d - r) for r in arch.ranks)
    der.check(f"{label}: $\\operatorname{{rank}} D\\pi$ (native)", rank, formula,
              note=f"{_what(arch)}, exact over $\\mathbb{{Q}}$")
    der.check(f"{label}: $\\operatorname{{rank}} D\\pi$ (chart) = native rank", chart_rank(chart), rank,
              note=_what(arch))
    kernel = arch.native_size - rank
    der.check(f"{label}: fiber dimension", kernel, (D - 1) * d * d + sum(r * r for r in arch.ranks),
              note=f"{arch.native_size} native parameters")
    basis = Matrix.rational(Jpi).nullspace()
    der.check(f"{label}: exact null space of $D\\pi$ (every basis vector annihilated, dimension)",
              ((Matrix.rational(Jpi) @ Matrix.rational(np.array(basis, dtype=object).T)).is_zero(),
               len(basis)), (True, kernel),
              note="rref null-space basis over $\\mathbb{Q}$")
    der.check(f"{label}: gauges span the kernel", arch.native_size - gauge_bound(arch, theta), kernel,
              note="rank of the factor gauges and interface directions, each checked in $\\ker D\\pi$ exactly")
    der.case(f"Prop. 4.2: {_what(arch)}, seed {seed}")


def _first_zero(der: Derivation, arch: Architecture, s: int) -> None:
    label = "Prop. E.1, eq. (41)"
    r = first_zero_ideal(arch, s)
    d = arch.d
    note = f"{_what(arch)}, $s = {s}$, {r.rays} rays"
    der.check(f"{label}: $D_u r$ injective, $u = (L, M_1, \\dots, M_s)$", (r.visible_rank, r.visible_parameters),
              ((s + 1) * d * d, (s + 1) * d * d), note=note + ", rank mod $p$")
    prefix = Architecture(arch.widths[: s + 1], arch.ranks[:s], arch.tokens, arch.normalizers[:s])
    der.check(f"{label}: injective from the prefix's Theorem 3 degree", r.degree, prop_c1_degree(prefix),
              note=note)
    if s < arch.depth:
        der.check(f"{label}: suffix $M_{{{s + 1}}}, \\dots, M_D$ absent (exact zero)", r.suffix_zero, True,
                  note=f"{note}, {r.suffix_parameters} suffix entries, through degree {r.suffix_order - 1} "
                       "over $\\mathbb{Q}$")
        control = first_zero_ideal(arch, s, zero=False)
        der.check(f"{label}: control $M_s \\ne 0$, suffix enters", control.suffix_zero, False, note=note)
        der.check(f"{label}: native pullback, suffix factors $Q_j, K_j$ ($j > s$) free at $Q_s = 0$",
                  (native_suffix_free(arch, s), native_suffix_free(arch, s, zero=False)), (True, False),
                  note=f"{note}, invertible values, exact over $\\mathbb{{Q}}$ (second entry: control $Q_s \\ne 0$)")
    der.case(f"Prop. E.1: {_what(arch)}, $s = {s}$")


def _latex_basis(G) -> str:
    return r",\ ".join(sympy.latex(g) for g in G)


def jet_residuals(arch: Architecture, L, M, names: list[str], L_star, order: int, rays) -> list[tuple[int, sympy.Expr]]:
    """The jet residuals ``[rho^j](F_{L,M}(rho Y) - rho L_* mu(Y) 1^T)``, ``j <= order``, as
    polynomials in the generators ``names``: the effective graph run over series with
    coefficients in ``Q[names]``. ``L`` and ``M`` map the generators (by name) to matrices."""
    A = ProbeAlgebra(order + 1, names, arch.depth, generic=False)
    gens = {n: A.gen(n) for n in names}
    values = {"X": A.series([np.zeros(rays.shape, dtype=int), rays]), "L": A.const(L(gens)),
              **{f"M{i}": A.const(m) for i, m in enumerate(M(gens), 1)}}
    F = A.coefficients(evaluate(effective_network(arch), A, values)["F"])
    target = np.einsum("ij,bjn->bin", np.asarray(L_star, dtype=object), rays).sum(axis=-1) / arch.tokens
    out = []
    for j in range(order + 1):
        for idx in np.ndindex(*F.shape[1:]):
            value = to_sympy(F[(j,) + idx])
            if j == 1:
                value -= sympy.Rational(str(target[idx[:2]]))
            value = sympy.expand(value)
            if value != 0:
                out.append((j, value))
    return out


def residual_ideal(residuals: list[tuple[int, sympy.Expr]], xs, low: int = 3) -> tuple[list[sympy.Expr], bool]:
    """Reduced grevlex Groebner basis ``G`` of the residuals of degree ``<= low``, and whether
    every residual (all degrees) reduces to 0 modulo ``G``; if so ``G`` is the reduced Groebner
    basis of the ideal of all the residuals."""
    G = sympy.groebner([e for j, e in residuals if j <= low], *xs, order="grevlex")
    return list(G.exprs), all(G.reduce(e)[1] == 0 for _, e in residuals)


def _symbol_matrix(gens, prefix: str, rows: int, cols: int) -> np.ndarray:
    return np.array([[gens[f"{prefix}{a}{b}"] for b in range(1, cols + 1)] for a in range(1, rows + 1)], dtype=object)


def _e1_ideal(der: Derivation, arch: Architecture, order: int) -> None:
    """Prop. E.1 at s = 1: the residual ideal of the jets, computed, against (L - L_*, M_1)."""
    d, D = arch.d, arch.depth
    L_star = random_rational_matrix(random.Random(3), (d, d))
    names = [f"L{a}{b}" for a in range(1, d + 1) for b in range(1, d + 1)]
    names += [f"M{i}_{a}{b}" for i in range(1, D + 1) for a in range(1, d + 1) for b in range(1, d + 1)]
    xs = [sympy.Symbol(n) for n in names]
    rays = random_bank(arch, 2, seed=1)
    res = jet_residuals(arch, lambda g: _symbol_matrix(g, "L", d, d),
                        lambda g: [_symbol_matrix(g, f"M{i}_", d, d) for i in range(1, D + 1)],
                        names, L_star, order, rays)
    G, closed = residual_ideal(res, xs)
    stated = [sympy.Symbol(f"L{a}{b}") - sympy.Rational(str(L_star[a - 1, b - 1]))
              for a in range(1, d + 1) for b in range(1, d + 1)]
    stated += [sympy.Symbol(f"M1_{a}{b}") for a in range(1, d + 1) for b in range(1, d + 1)]
    what = f"{_what(arch)}, $s = 1$, jets through $\\rho^{{{order}}}$ on 2 rays, {len(res)} nonzero residuals"
    der.check("Prop. E.1: the residuals through $\\rho^3$ generate every residual", closed, True, note=what)
    der.check("Prop. E.1: residual ideal $= (L - L_*, M_1)$ (reduced Groebner bases)", G,
              list(sympy.groebner(stated, *xs, order="grevlex").exprs), note=what)
    der.check("Prop. E.1: the suffix $M_2, \\dots, M_D$ is free (absent from the residual ideal)",
              {str(x) for g in G for x in g.free_symbols if str(x).startswith("M") and not str(x).startswith("M1_")},
              set(), note=what)
    der.case(f"Prop. E.1 residual ideal: {_what(arch)}, $s = 1$")


def _factor_names(layers, d: int) -> list[str]:
    return [f"{v}{i}_{a}" for i in layers for v in "qk" for a in range(1, d + 1)]


def _width_one(g, i: int, d: int) -> np.ndarray:
    """M_i = q_i k_i^T (width-one factors, identity values) from the generators."""
    return np.array([[g[f"q{i}_{a}"] * g[f"k{i}_{b}"] for b in range(1, d + 1)] for a in range(1, d + 1)],
                    dtype=object)


def computed_fiber_ideal(depth: int, d: int, serial: bool, order: int) -> tuple[list[sympy.Expr], bool, list]:
    """The ideal of the fiber over uniform averaging, from the model's jet residuals:
    ``serial`` (one network of ``depth`` width-one layers, L = I) or the product of
    ``depth`` independent one-layer networks. Returns the reduced Groebner basis, whether
    the low residuals generate all, and the variables."""
    names = _factor_names(range(1, depth + 1), d)
    xs = [sympy.Symbol(n) for n in names]
    eye = np.eye(d, dtype=int)
    if serial:
        arch = Architecture.uniform(depth, d, 1, d + 1, "exp")
        res = jet_residuals(arch, lambda g: eye, lambda g: [_width_one(g, i, d) for i in range(1, depth + 1)],
                            names, eye, order, random_bank(arch, max(2, d), seed=1))
    else:
        arch = Architecture.uniform(1, d, 1, d + 1, "exp")
        res = [r for i in range(1, depth + 1)
               for r in jet_residuals(arch, lambda g: eye, lambda g, i=i: [_width_one(g, i, d)], names, eye,
                                      order, random_bank(arch, max(2, d), seed=i))]
    G, closed = residual_ideal(res, xs)
    return G, closed, xs


def _ideals(der: Derivation, depth: int, d: int) -> None:
    label = "Cor. E.2, eq. (42)"
    order = 7 if depth > 1 else 5  # M_2 would enter at rho^7 were M_1 nonzero
    G_serial, closed, xs = computed_fiber_ideal(depth, d, True, order)
    note = (f"$D = {depth}$, $d = {d}$, jets of the serial network through $\\rho^{{{order}}}$, reduced grevlex "
            "Groebner bases")
    der.check(f"{label}: the low residuals generate the serial residual ideal", closed, True, note=note)
    stated, _ = residual_generators(depth, d, (1,))
    q1 = [x for x in xs if x.name.startswith("q1_")]
    k1 = [x for x in xs if x.name.startswith("k1_")]
    der.check(f"{label}: computed serial ideal $= (q_1 k_1^\\top)$", G_serial,
              list(sympy.groebner(stated, *xs, order="grevlex").exprs), note=note)
    G_cap = ideal_intersection(q1, k1, xs)
    der.check(f"{label}: $(q_1 k_1^\\top) = (q_1) \\cap (k_1)$", G_serial, G_cap, note=note)
    primes = minimal_primes(G_serial, xs)
    der.check(f"{label}: two irreducible components", [set(p) for p in primes], [set(q1), set(k1)],
              note=f"$D = {depth}$, $d = {d}$, minimal primes of the computed ideal")
    der.check(f"{label}: later factors free (absent from the computed ideal)",
              {x for g in G_serial for x in g.free_symbols} <= set(q1 + k1), True, note=note)
    if (depth, d) == (2, 2):
        der.step(f"$D = {depth}$, $d = {d}$: the serial residual ideal computed from the jets (reduced "
                 "Groebner basis) and $(q_1) \\cap (k_1)$ by elimination:",
                 latex=rf"\left({_latex_basis(G_serial)}\right) = (q_1)\cap(k_1) = \left({_latex_basis(G_cap)}\right)")
    if depth >= 2:
        G_indep, closed, _ = computed_fiber_ideal(depth, d, False, 5)
        der.check(f"{label}: the low residuals generate the independent residual ideal", closed, True,
                  note=f"$D = {depth}$, $d = {d}$, {depth} one-layer networks, jets through $\\rho^5$")
        indep, _ = residual_generators(depth, d, range(1, depth + 1))
        der.check(f"{label}: computed independent ideal $= \\sum_i (q_i k_i^\\top)$", G_indep,
                  list(sympy.groebner(indep, *xs, order="grevlex").exprs), note=f"$D = {depth}$, $d = {d}$")
        primes = minimal_primes(G_indep, xs)
        der.check(f"{label}: independent layers have $2^D$ components", len(primes), 2 ** depth,
                  note=f"$D = {depth}$, $d = {d}$")
        G_meet = list(primes[0])
        for p in primes[1:]:
            G_meet = ideal_intersection(G_meet, list(p), xs)
        der.check(f"{label}: independent ideal = intersection of its {len(primes)} primes", G_indep, G_meet,
                  note=f"$D = {depth}$, $d = {d}$, Groebner bases")
        der.check(f"{label}: serial fiber differs from the product (computed ideals)", G_serial != G_indep, True,
                  note=f"$D = {depth}$, $d = {d}$")
        if d == 2:
            der.show(f"Independent one-layer fibers, $D = {depth}$, $d = 2$: minimal primes",
                     [list(p) for p in primes])
        _learning(der, depth, d, G_serial, G_indep, xs)
    else:
        _learning(der, depth, d, G_serial, None, xs)
    der.case(f"Cor. E.2: $D = {depth}$, $d = {d}$")


def _learning(der: Derivation, depth: int, d: int, G_serial, G_indep, xs) -> None:
    """E.4: (lambda, m) of the computed residual ideals (sum of squared generators)."""
    note = f"$D = {depth}$, $d = {d}$, computed ideal, Newton polyhedron, exact LP with dual certificate"
    der.check("E.4: serial $(\\lambda, m)$", newton_threshold(sum(g**2 for g in G_serial), xs), (Fraction(d, 2), 2),
              note=note)
    if G_indep is not None:
        der.check("E.4: independent $(\\lambda, m)$", newton_threshold(sum(g**2 for g in G_indep), xs),
                  (Fraction(depth * d, 2), depth + 1), note=note)


def _fit(slopes) -> tuple:
    """Solve y = lambda - mu / (log T + c) through three computed log-slopes."""
    L = [mpmath.log(T) for T, _ in slopes]
    y = [v for _, v in slopes]
    return mpmath.findroot(lambda lam, mu, c: [lam - mu / (L[i] + c) - y[i] for i in range(3)], (y[-1], 1, 0))


def _decay(der: Derivation, d: int) -> None:
    """E.4 numerically: the loss integral of the *computed* serial ideal (D = 1).

    The integrand is derived, not typed: ``R = sum_j f_j^2`` over the computed
    Groebner basis is checked (exactly) to be ``|q_1|^2 |k_1|^2``, so in polar
    coordinates ``a = |q_1|``, ``b = |k_1|`` on the unit balls (``d`` counted
    from the computed variables) ``Z(T)`` is a constant times
    ``int int exp(-T a^2 b^2) a^(d-1) b^(d-1) da db``, the integral that
    :func:`symattn.analyses.geometry.loss_decay` evaluates. Its fitted ``(lambda, m)``
    is compared with the Newton threshold of the same computed ideal.
    """
    G, _, xs = computed_fiber_ideal(1, d, True, 5)
    q1 = [x for x in xs if x.name.startswith("q1_")]
    k1 = [x for x in xs if x.name.startswith("k1_")]
    R = sum(g ** 2 for g in G)
    der.check("E.4: the loss of the computed ideal is radial, $R = \\sum_j f_j^2 = |q_1|^2 |k_1|^2$",
              sympy.expand(R - sum(x ** 2 for x in q1) * sum(x ** 2 for x in k1)), 0,
              note=f"$d = {d}$: {len(G)} generators; polar coordinates give the integrand $a^2 b^2$ with "
                   f"weight $a^{{{len(q1) - 1}}} b^{{{len(k1) - 1}}}$")
    slopes = loss_decay(len(q1), [10**6, 10**12, 10**24], digits=30)
    lam, mu, _ = _fit(slopes)
    threshold = newton_threshold(R, xs)
    der.check("E.4 (numerical at 30 digits): fitted $(\\lambda, m)$ of $Z(T)$ for the computed $R$ = Newton "
              "threshold of the computed ideal", (round(float(lam), 2), round(float(mu) + 1)),
              (round(float(threshold[0]), 2), threshold[1]), kind="numerical",
              note=f"$d = {d}$: fitted $\\lambda = {mpmath.nstr(lam, 6)}$, $m = {mpmath.nstr(mu + 1, 6)}$ "
                   "(mpmath quadrature at 30 digits, $T = 10^6, 10^{12}, 10^{24}$)")
    der.case(f"E.4 numerical: $d = {d}$")


def _cotangent(der: Derivation, arch: Architecture) -> None:
    label = "E.5"
    spec = native_spectrum(arch)
    d, k = arch.d, arch.normalizers[0].k
    torsion = {b.order: b.multiplicity for b in spec.bands if b.order > 0}
    note = (f"{_what(arch)}, Smith factors over $\\mathbb{{F}}_p[[t]]$ on a {spec.bank_size}-input bank, "
            f"certified={spec.certified}")
    der.check(f"{label}: Smith factors certified (mod-p orders meet the proven divisibility)",
              spec.certified, True, note=note)
    der.check(f"{label}: free part of $\\operatorname{{coker}} J(t)^\\top$", spec.parameters - spec.rank,
              (arch.depth - 1) * d * d + sum(r * r for r in arch.ranks), kind="certified", note=note)
    der.check(f"{label}: torsion summands $(\\mathcal O/t^{{\\beta_i}})^{{r_i(2d - r_i)}}$", torsion,
              {common_k_divisibility_order(i, k): r * (2 * d - r) for i, r in enumerate(arch.ranks, 1)},
              kind="certified", note=note)
    der.case(f"E.5: {_what(arch)}")


def run(full: bool = False) -> Derivation:
    der = Derivation("t5_residual_ideal", "Prop. 4.2, Prop. E.1, Cor. E.2, App. E.4-E.5 (local geometry)",
                     "In the chart $(P, L, \\tilde Q, \\tilde K)$ the reduction is "
                     "$(L, \\tilde Q_i \\tilde K_i^\\top)$ with rank $d^2 + \\sum_i r_i(2d - r_i)$; at a first "
                     "zero score the residual ideal is $(L - L_*, M_i - M_i^* \\ (i < s), M_s)$ with a free suffix; "
                     "with width-one factors $(q_1 k_1^\\top) = (q_1) \\cap (k_1)$ has two components ($2^D$ for "
                     "independent layers), and $(\\lambda, m) = (d/2, 2)$ against $(Dd/2, D + 1)$; "
                     "$\\operatorname{coker} J(t)^\\top = \\mathcal O^\\zeta \\oplus \\bigoplus_i "
                     "(\\mathcal O/t^{\\beta_i})^{r_i(2d - r_i)}$.",
                     KIND)
    der.step("Normal form (E.3): with $P_i = V_i\\cdots V_1$, the chart and its inverse are exact rational "
             "maps, and the reduction graph differentiated with exact tangents gives $D\\pi$:",
             latex=r"\widetilde Q_i = P_{i-1}^\top Q_i,\ \widetilde K_i = P_{i-1}^\top K_i,\ "
                   r"V_i = P_iP_{i-1}^{-1},\qquad \pi = (L, \widetilde Q_1\widetilde K_1^\top, \dots, "
                   r"\widetilde Q_D\widetilde K_D^\top)")
    archs = [Architecture.uniform(2, 2, 1, 2, "exp"), Architecture.uniform(3, 4, 2, 2, "exp"),
             Architecture.uniform(3, 3, [1, 2, 3], 2, "exp"), Architecture.uniform(2, 3, [3, 1], 2, "exp")]
    if full:
        archs += [Architecture.uniform(4, 3, [2, 1, 3, 2], 2, "exp"), Architecture.uniform(3, 5, [1, 4, 2], 2, "exp")]
    for seed, arch in enumerate(archs):
        _normal_form(der, arch, seed)

    der.step("First zero score (E.4): the effective network is expanded along rays $X = \\rho Y$ with "
             "tangents; full column rank mod $p$ in $u$ proves $D_u r$ injective, and the suffix tangent "
             "is exactly zero over $\\mathbb{Q}$. Symbolically, at a consensus $Y = m\\mathbf 1^\\top$:",
             latex=r"D_M S_M(m\mathbf 1^\top) = 0,\qquad D_X S_M(m\mathbf 1^\top)[\dot Y] = "
                   r"\mu(\dot Y)\mathbf 1^\top,\qquad r(u, v) = H(u, v)\,u")
    for phi, d, n in [("exp", 2, 3), ("logistic", 2, 2)] + ([("1+s^2", 3, 3)] if full else []):
        der.check("Prop. E.1: consensus derivatives (symbolic, generic $M$, $m$)", consensus_derivatives(phi, d, n),
                  (True, True), note=f"$\\phi = $ ``{phi}``, $d = {d}$, $n = {n}$")
    first = [(Architecture.uniform(2, 2, 2, 3, "exp"), 1), (Architecture.uniform(2, 2, 2, 3, "exp"), 2),
             (Architecture.uniform(3, 2, 2, 2, "exp"), 2), (Architecture.uniform(2, 2, 2, 2, "logistic"), 1),
             (Architecture.uniform(3, 1, 1, 2, "exp"), 1), (Architecture.uniform(2, 2, 2, 2, "exp(s+s^2)"), 1)]
    if full:
        first += [(Architecture.uniform(3, 2, 2, 3, "exp"), 1), (Architecture.uniform(4, 1, 1, 2, "exp"), 3)]
    for arch, s in first:
        _first_zero(der, arch, s)

    der.step("Residual ideals (Prop. E.1, Cor. E.2): the effective graph is run along rays $X = \\rho Y$ "
             "over series with coefficients in $\\mathbb{Q}[L, M]$ (or in the factors $q_i, k_i$); the "
             "coefficients of $F(\\rho Y) - \\rho L_*\\mu(Y)\\mathbf 1^\\top$ are the jet residuals. A "
             "Groebner basis of those through $\\rho^3$, to which every residual through the stated order "
             "reduces, is the residual ideal; it is compared with the stated generators.")
    _e1_ideal(der, Architecture.uniform(2, 2, 2, 3, "exp"), 7)
    der.step("Ideals (Cor. E.2): the stated generators are the entries of $M_1 = q_1k_1^\\top$ computed by the "
             "reduction of symbolic factors; intersections by elimination of $t$ from "
             "$tI + (1-t)J$ (lex Groebner basis); minimal primes of the squarefree monomial ideal are its "
             "minimal variable covers, and the ideal equals their intersection (so it is radical and "
             "the primes, generated by variables, are its irreducible components).")
    der.step("Learning coefficient (E.4): $R \\asymp \\sum_j f_j^2$ over the generators of the computed "
             "residual ideal (Prop. E.1); for a nondegenerate sum of squared monomials $\\lambda = 1/t^*$, "
             "$t^* = \\min\\{t : t\\mathbf 1 \\in \\Gamma\\}$, and $m$ is the codimension of the face "
             "through $t^*\\mathbf 1$ (exact LP):",
             latex=r"\int_U e^{-TR}\,d\theta \asymp T^{-\lambda}(\log T)^{m-1},\qquad "
                   r"(\lambda, m)_{\rm serial} = (d/2, 2),\ (\lambda, m)_{\rm indep} = (Dd/2, D+1)")
    for depth, d in [(1, 1), (1, 2), (2, 1), (2, 2), (3, 2)] + ([(2, 3)] if full else []):
        _ideals(der, depth, d)
    der.step("Numerically: the loss $R = \\sum_j f_j^2$ of the computed serial ideal ($D = 1$) is "
             "checked to be $|q_1|^2|k_1|^2$, so $Z(T) = \\int e^{-TR}$ is, in polar coordinates, the "
             "integral of App. E.4; its log-slope $y(T) = -d\\log Z/d\\log T$ is computed by mpmath "
             "quadrature, $y = \\lambda - (m-1)/(\\log T + c)$ is solved through three values of $T$, and "
             "the fit is compared with the Newton threshold of the same computed ideal.")
    for d in (1, 2, 3):
        _decay(der, d)
    der.step("Contact spectrum (E.5): over $\\mathcal O = \\mathbb R\\{t\\}$ the Smith form of the native "
             "Jacobian on the path of Theorem 4 gives the module of relative differentials; units drop out, "
             "zero columns stay free:",
             latex=r"\operatorname{coker} J(t)^\top \cong \mathcal O^{\zeta} \oplus \bigoplus_i "
                   r"\big(\mathcal O/(t^{\beta_i})\big)^{r_i(2d - r_i)},\qquad \zeta = (D-1)d^2 + \sum_i r_i^2")
    for arch in [Architecture.uniform(2, 2, 1, 2, "exp"), Architecture.uniform(2, 2, [2, 1], 2, "exp")] + (
            [Architecture.uniform(3, 2, 1, 2, "exp")] if full else []):
        _cotangent(der, arch)
    _worked_instance(der)
    return der


def _worked_instance(der: Derivation) -> None:
    """Displays computed for D = 2, d = 2: the residual ideals and their comparison."""
    serial, xs = residual_generators(2, 2, (1,))
    indep, _ = residual_generators(2, 2, (1, 2))
    q1 = [x for x in xs if x.name.startswith("q1_")]
    k1 = [x for x in xs if x.name.startswith("k1_")]
    der.show("Worked instance ($D = 2$, $d = 2$, width-one factors, computed by the reduction $\\pi$ "
             "on symbols): the generators of the serial residual ideal, the entries of "
             "$M_1 = q_1k_1^\\top$:", serial, "(M_1)_{ab}")
    G_indep = list(sympy.groebner(indep, *xs, order="grevlex").exprs)
    der.show("The reduced grevlex Groebner basis of the independent-layer ideal $(M_1, M_2)$:",
             G_indep, "G_{\\text{indep}}")
    primes = [minimal_primes(g, xs) for g in (serial, indep)]
    rows = [["serial $(q_1k_1^\\top)$", len(list(sympy.groebner(serial, *xs, order="grevlex").exprs)),
             len(primes[0]), ideal_intersection(q1, k1, xs) == list(sympy.groebner(serial, *xs,
                                                                                    order="grevlex").exprs)],
            ["independent", len(G_indep), len(primes[1]), None]]
    der.show_table("Comparison computed from the Groebner bases: size of the basis, number of minimal "
                   "primes (components), and whether the ideal equals $(q_1) \\cap (k_1)$:",
                   ["ideal", "basis size", "components", "$= (q_1)\\cap(k_1)$"],
                   [[name, size, comps, "n/a" if same is None else ("yes" if same else "no")]
                    for name, size, comps, same in rows])


if __name__ == "__main__":
    raise SystemExit(main_for(__name__))
