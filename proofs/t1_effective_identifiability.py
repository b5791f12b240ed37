r"""Theorem 1 (effective identifiability) and Corollary A.1.

Let :math:`\eta = (L, M_1, \dots, M_D)` with :math:`L \neq 0` and
:math:`\operatorname{sym} M_i \neq 0` for every layer. Then the effective fiber
consists exactly of the tuples :math:`(L, \widetilde M_1, \dots, \widetilde M_D)`
with :math:`\widetilde M_i = M_i` when :math:`\phi_i` is not even and
:math:`\widetilde M_i \in \{M_i, -M_i\}` when :math:`\phi_i` is even, the signs
independent across layers; if :math:`\phi_D'(0) \neq 0` the last score may be
arbitrary. Corollary A.1: for every pure serial native architecture the
native weights violating the hypotheses form a proper algebraic subset.

The script computes every ingredient of the proof in App. A from the network
graph, evaluated on line probes :math:`x_a = m + \varepsilon^r c_a z` as exact
:math:`\varepsilon`-series over :math:`\mathbb{Q}[m, z, M, p]`
(:func:`symattn.analyses.signatures.line_probe`), where
:math:`p_{i,j} = \phi_i^{(j)}(q_i)/\phi_i(q_i)` are independent symbols (a
generic analytic normalizer) or a concrete normalizer's exact values:

* eq. (A.1)/(15): the mean moves at order :math:`2r` with coefficient
  :math:`\mu_2 z H_M`, the centered tokens at order :math:`3r` with
  :math:`\mu_2 c_a z K_M`; eqs. (10)-(11) for softmax;
* eq. (17): :math:`\delta^{(j)} = \varepsilon^{3^j} a_j c_a z + \dots` with
  :math:`a_j = a_{j-1}^3 \mu_2 K_j`;
* eq. (A.2)/(19): :math:`[\varepsilon^{2\cdot 3^{j-1}}](\overline F - L\mu_{j-1})
  = a_{j-1}^2 \mu_2 (Lz) H_{M_j}` and lower coefficients vanish, for
  :math:`D = 2, 3`;
* App. A.2: with :math:`g(0) \neq 0` the degree-one part of :math:`H_M`
  is :math:`g(0) m^\top M z`; with :math:`k \geq 2`, :math:`q_N^k = q_M^k`
  leaves :math:`\sigma = \pm 1` (factoring), the negative branch
  :math:`\chi(s) = \chi(-s)` holds iff :math:`\phi` is even, and
  :math:`K(m, m) = b k^2 s^k + \dots` (App. A.3);
* eq. (20): for a competitor :math:`\widetilde\eta` with the same prefix
  :math:`M_1, \dots, M_{i-1}` and any :math:`\widetilde M_i` and suffix, the
  difference of the two isolated coefficients (19), computed from the graph,
  equals :math:`a_{i-1}^2 \mu_2 (Lz)(H_{M_i} - H_{\widetilde M_i})` with
  :math:`a_{i-1}` and :math:`H` from the closed forms (A.1) (not from the
  expansion); the suffix drops out, and the difference vanishes exactly when
  the closed-form signatures agree;
* eq. (21): :math:`\operatorname{ord}_\varepsilon \widetilde\delta^{(i)} \geq 3^i`,
  with equality exactly when the closed-form amplitude
  :math:`\widetilde a_i = \widetilde a_{i-1}^3 \mu_2 K_{\widetilde M_i}` is
  nonzero, also for competitors with :math:`K_{\widetilde M_i} \equiv 0`
  (a skew score under :math:`\exp(s^3)`, where the contrast still survives at
  a higher order, and under softmax, where it collapses);
* eq. (9): consensus inputs give :math:`F = (Lm, \dots, Lm)`;
* the sign group layer by layer: :func:`symattn.analyses.fibers.flip_evidence` finds
  an exact witness that flipping :math:`M_i` changes :math:`F` exactly when
  :math:`\phi_i` is not even, evenness decided here by sympy from
  :math:`\phi(-s) - \phi(s)` (an allowed flip must have no witness);
* the fiber itself by :func:`symattn.analyses.fibers.effective_fiber` (allowed sign
  flips give identical exact series and symbolic identities; forbidden ones
  have exact witnesses), and the native point of App. A.4 for several widths
  and ranks (Corollary A.1).

With :math:`\mu_2 = n^{-1}\sum_a c_a^2` the paper's normalized spread is
:math:`\mu_2 = 1`; rational spreads with :math:`\mu_2 = 1` do not exist for
:math:`n = 3`, so the script keeps :math:`\mu_2`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy

from symattn.core.algebras import Symbolic
from symattn.render.derivation import Derivation
from symattn.analyses.fibers import effective_fiber, flip_evidence, generic_native_point
from symattn.theorems.formulas import centered_order, isolation_order
from symattn.model.network import effective_network, evaluate
from symattn.model.architecture import Architecture
from symattn.model.parameters import reduction
from symattn.model.normalizer import Normalizer, normalizers
from symattn.theorems.registry import main_for
from symattn.analyses.signatures import (
    amplitudes,
    line_probe,
    lowest_homogeneous,
    sign_branches,
    to_sympy,
)

NAME = "effective-identifiability"
STATEMENT = "Thm 1, App. A, Cor. A.1: effective identifiability"
KIND = "exact"

_SPREADS = {2: (1, -1), 3: (1, 0, -1), 4: (2, -1, 1, -2)}


def _one_layer(der: Derivation, n: int, r: int, generic: bool = True, phi: str = "exp") -> None:
    e = line_probe(phi, [None], c=_SPREADS[n], r=r, order=3 * r + 1, generic=generic)
    H, K = e.closed_forms(1)
    mean_inc = e.means[1] - e.means[0]
    tag = f"$n = {n}$, $r = {r}$, " + ("generic $\\phi$" if generic else f"$\\phi = $ ``{phi}``")
    der.check("eq. (15): mean order $2r$", e.valuation(mean_inc), 2 * r, note=tag)
    der.check("eq. (A.1): mean coefficient $\\mu_2 z H_M$", list(e.coefficient(mean_inc, 2 * r)),
              [e.mu2 * zi * H for zi in e.z], note=tag)
    der.check("eq. (15): contrast order $3r$", e.valuation(e.centered[1]), 3 * r, note=tag)
    expected = [[e.mu2 * ca * zi * K for ca in e.c] for zi in e.z]
    der.check("eq. (A.1): contrast coefficient $\\mu_2 c_a z K_M$",
              e.coefficient(e.centered[1], 3 * r).tolist(), expected, note=tag)
    der.case(f"one layer, symbolic $m, z, M$, {tag}")
    if n == 2 and r == 1 and generic:
        w = line_probe(phi, [None], order=4, width=1)
        der.step("One layer, two tokens $m \\pm \\varepsilon z$, generic normalizer "
                 "($p_{1,j} = \\phi^{(j)}(q)/\\phi(q)$); for $d = 1$ the coefficients computed "
                 "from the graph are",
                 latex=f"[\\varepsilon^2]\\,\\bar y = "
                       f"{sympy.latex(to_sympy(w.coefficient(w.means[1], 2)[0], pretty=True))},"
                       f"\\quad [\\varepsilon^3]\\,(y_+ - \\bar y) = "
                       f"{sympy.latex(sympy.factor(to_sympy(w.coefficient(w.centered[1], 3)[0, 0], pretty=True)))}")


def _softmax_two_token(der: Derivation) -> None:
    e = line_probe("exp", [None], order=4, generic=False)
    v = e.m.dot(e.M[0]).dot(e.z)
    w = e.z.dot(e.M[0]).dot(e.z)
    der.check("eq. (10): softmax mean $z\\,(m^\\top M z)$", list(e.coefficient(e.means[1], 2)),
              [zi * v for zi in e.z])
    der.check("eq. (11): softmax contrast $z\\,(z^\\top M z)$", list(e.coefficient(e.centered[1], 3)[:, 0]),
              [zi * w for zi in e.z])
    der.case("softmax, two tokens, eqs. (10)-(11)")


def _stack(der: Derivation, spec, Ms, L, m, z, n: int, order: int, generic: bool = True) -> None:
    e = line_probe(spec, Ms, L=L, m=m, z=z, c=_SPREADS[n], order=order, generic=generic)
    D = len(Ms)
    forms = [e.closed_forms(i) for i in range(1, D + 1)]
    a = amplitudes([K for _, K in forms], e.mu2)
    tag = f"$D = {D}$, $n = {n}$, " + ("generic $\\phi$" if generic else f"$\\phi = $ ``{spec}``")
    for j in range(1, D + 1):
        if centered_order(j) < order:
            der.check("eq. (17): centered order $3^j$", e.valuation(e.centered[j]), centered_order(j),
                      note=f"{tag}, $j = {j}$")
            der.check("eq. (17): $\\delta^{(j)} = a_j c_a z$, $a_j = a_{j-1}^3 \\mu_2 K_j$",
                      e.coefficient(e.centered[j], centered_order(j)).tolist(),
                      [[a[j] * ca * zi for ca in e.c] for zi in e.z], note=f"{tag}, $j = {j}$")
        valuation, coeff = e.isolated(j)
        Lz = e.L.dot(e.z)
        der.check("eq. (A.2): $\\operatorname{ord}(\\bar F - L\\mu_{j-1}) = 2\\cdot 3^{j-1}$", valuation,
                  isolation_order(j), note=f"{tag}, $j = {j}$")
        der.check("eq. (A.2)/(19): isolated coefficient $a_{j-1}^2 \\mu_2 (Lz) H_j$", list(coeff),
                  [a[j - 1] ** 2 * e.mu2 * Lz[i] * forms[j - 1][0] for i in range(len(Lz))],
                  note=f"{tag}, $j = {j}$")
    der.case(f"layer isolation, {tag}")
    if D == 2 and n == 2:
        der.show("Layer isolation at depth two (symbolic $m, z$, generic normalizers): the "
                 "coefficient of $\\varepsilon^6$ in $\\overline F - L\\mu_1$, first output, "
                 "computed from the graph, factors as $a_1^2 \\mu_2 (Lz)_1 H_{M_2}$:",
                 sympy.factor(to_sympy(e.isolated(2)[1][0], pretty=True)), terms=2)


def competitor_difference(der: Derivation, spec: str, M, Mt, L, i: int, n: int = 2) -> None:
    """Eq. (20) for ``eta = (L, M)`` and a competitor ``(L, Mt)`` on symbolic ``m, z``.

    The left side is computed from the graph (the difference of the isolated
    coefficients (19) of the two tuples); the right side is
    ``a_{i-1}^2 mu_2 (Lz) (H_{M_i} - H_{Mt_i})`` with the amplitude of ``eta``'s
    prefix and both signatures from the closed forms (A.1). The identity
    assumes the prefixes agree (also checked); with different prefixes it fails.
    """
    order = 2 * 3 ** (i - 1) + 1
    e, et = (line_probe(spec, Ms, L=L, c=_SPREADS[n], order=order, generic=False) for Ms in (M, Mt))
    left = e.isolated(i)[1] - et.isolated(i)[1]
    a = amplitudes([e.closed_forms(j)[1] for j in range(1, i)], e.mu2)
    H, Ht = e.closed_forms(i)[0], et.closed_forms(i)[0]
    Lz = e.L.dot(e.z)
    tag = f"$\\phi = $ ``{spec}``, $n = {n}$, $i = {i}$, $D = {len(M)}$"
    der.check("eq. (20): difference of the isolated coefficients "
              "$= a_{i-1}^2 \\mu_2 (l z)(H_{M_i} - H_{\\tilde M_i})$",
              list(left), [a[i - 1] ** 2 * e.mu2 * Lz[r] * (H - Ht) for r in range(len(Lz))], note=tag)
    der.check("eq. (20): hypothesis, the prefix maps agree (equal $\\mu_{i-1}$ series)",
              (e.means[i - 1] == et.means[i - 1]).all(), True, note=tag)
    der.check("eq. (20): the difference vanishes iff $H_{M_i} = H_{\\tilde M_i}$ ($a_{i-1}^2 (l z) \\ne 0$)",
              all(v == 0 for v in left), H == Ht, note=tag)


def competitor_contrast_order(der: Derivation, spec: str, Mt, i: int, n: int = 2, r: int = 1) -> None:
    """Eq. (21): the competitor's centered tokens after layer ``i`` have order ``>= 3^i``
    on the probe ``x_a = m + eps^r c_a z`` (the paper's probe: ``r = 1``), with
    equality iff the closed-form amplitude ``a~_i`` (from the ``K`` of (A.1)) is
    nonzero. Any other ``r`` breaks the check."""
    order = 3 ** i + 4
    et = line_probe(spec, Mt, c=_SPREADS[n], r=r, order=order, generic=False)
    a = amplitudes([et.closed_forms(j)[1] for j in range(1, i + 1)], et.mu2)
    valuation = et.valuation(et.centered[i])
    reached = valuation if valuation < order else f"\\ge {order}"
    vanishes = "= 0" if et.closed_forms(i)[1] == 0 else "\\ne 0"
    der.check("eq. (21): $\\operatorname{ord}\\tilde\\delta^{(i)} \\ge 3^i$, with equality iff "
              "$\\tilde a_i = \\tilde a_{i-1}^3 \\mu_2 K_{\\tilde M_i} \\ne 0$",
              (valuation >= 3 ** i, valuation == 3 ** i), (True, a[i] != 0),
              note=f"$\\phi = $ ``{spec}``, $n = {n}$, $i = {i}$: order ${reached}$, $K_{{\\tilde M_i}} {vanishes}$")


def _competitors(der: Derivation, full: bool) -> None:
    S1, S2, J = [[1, 2], [0, -1]], [[1, 1], [2, 1]], [[0, 1], [-1, 0]]
    cases = [("exp", [S1, S2], [S1, J], [[1, 2]], 2, 2), ("exp", [S1, S2, S1], [S1, S2, J], [[1, 2]], 2, 2),
             ("exp", [S1, S2, S1], [S1, [[2, 0], [1, 1]], J], [[1, 0], [1, 2]], 2, 2),
             ("exp(s + s^2), exp", [S1, S2], [S1, [[0, 0], [0, 0]]], [[2, -1]], 2, 3)]
    if full:
        cases += [("exp, gauss", [S1, S2], [S1, [[-1, -1], [-2, -1]]], [[1, 2]], 2, 2),
                  ("exp", [S1, S2], [[[1, 2], [0, -1]], S1], [[1, 1]], 1, 3)]
    for spec, M, Mt, L, i, n in cases:
        competitor_difference(der, spec, M, Mt, L, i, n)
        der.case(f"eq. (20), $\\phi = $ ``{spec}``, layer {i}, $n = {n}$")
    for spec, Mt, i, n in [("exp", [S1, J], 2, 2), ("exp, exp(s^3)", [S1, J], 2, 3),
                           ("exp, exp(s^3)", [S1, S2], 2, 3), ("exp", [J], 1, 3),
                           ("exp(s + s^2)", [S1, [[0, 0], [0, 0]]], 2, 2)]:
        competitor_contrast_order(der, spec, Mt, i, n)
        der.case(f"eq. (21), $\\phi = $ ``{spec}``, layer {i}, $n = {n}$")


def _even(phi: Normalizer) -> bool:
    """Whether phi(-s) = phi(s), decided by sympy on the expression (not phi.even)."""
    return sympy.simplify(phi.expr.subs(phi.s, -phi.s) - phi.expr) == 0


def _flip_witnesses(der: Derivation, full: bool) -> None:
    L, M = [[1, 0]], [[[1, 2], [0, 1]], [[2, 1], [1, -1]]]
    rays = np.array([[[1, -2], [3, 1]], [[2, 1], [-1, 3]]], dtype=object)
    specs = ["exp", "cosh", "gauss, logistic", "exp(s^2+s^3), 1+s^2"] + (["logistic, cosh"] if full else [])
    for spec in specs:
        phis = normalizers(spec, 2)
        evidence = [flip_evidence(np.array(L, dtype=object), [np.array(Mi, dtype=object) for Mi in M],
                                  phis, i, rays, 20) for i in (1, 2)]
        der.check("Theorem 1: flipping $M_i$ changes $F$ (exact witness) iff $\\phi_i$ is not even",
                  [ev.ok for ev in evidence], [not _even(phi) for phi in phis],
                  note=f"$\\phi = $ ``{spec}``; " + "; ".join(ev.detail for ev in evidence))
        der.case(f"sign group, $\\phi = $ ``{spec}``")


def _sign_argument(der: Derivation, spec: str) -> None:
    phi = Normalizer(spec)
    k, b = phi.k, phi.b
    m = sympy.Symbol("m1")
    # chi(+-m^2) = H_{+-1}(m, m) on d = 1 probes x_a = m (1 + eps c_a)
    chis, Ks = [], []
    for sign in (1, -1):
        e = line_probe(spec, [[[sign]]], z=None, m=None, order=4, generic=False)
        # z = m: substitute z1 -> m1 in the computed coefficients
        chis.append(sympy.expand(to_sympy(e.coefficient(e.means[1], 2)[0]).subs("z1", m) / m))
        Ks.append(sympy.expand(to_sympy(e.coefficient(e.centered[1], 3)[0, 0]).subs("z1", m) / m))
    deg, low = lowest_homogeneous(chis[0], [m])
    der.check("App. A.2: $\\chi(s) = s g(s) = k b s^k + \\dots$", (deg, low), (2 * k, k * b * m ** (2 * k)),
              note=f"$\\phi = $ ``{spec}``")
    same_lowest = lowest_homogeneous(chis[1], [m])[1] == low
    der.check("App. A.2: $q_N^k = q_M^k$ allows $\\sigma = -1$ iff $k$ is even",
              same_lowest, -1 in sign_branches(k), note=f"$\\phi = $ ``{spec}``, $k = {k}$")
    der.check("App. A.2: the negative branch $\\chi(s) = \\chi(-s)$ holds iff $\\phi$ is even",
              sympy.expand(chis[0] - chis[1]) == 0, phi.even, note=f"$\\phi = $ ``{spec}``")
    der.check("App. A.3: $K(m, m) = b k^2 s^k + \\dots$", lowest_homogeneous(Ks[0], [m]),
              (2 * k, b * k ** 2 * m ** (2 * k)), note=f"$\\phi = $ ``{spec}``")
    # the full signature H_{-M} = H_M exactly when phi is even
    M = [[1, 2], [0, -1]]
    probes = [line_probe(spec, [Mi], order=3, generic=False) for Mi in (M, [[-v for v in row] for row in M])]
    H = [to_sympy(e.coefficient(e.means[1], 2)[0]) for e in probes]
    der.check("App. A.2: $H_{-M} = H_M$ iff $\\phi$ is even (then $N = -M$)", sympy.expand(H[0] - H[1]) == 0,
              phi.even, note=f"$\\phi = $ ``{spec}``")
    der.case(f"sign argument, $\\phi = $ ``{spec}`` ($k = {k}$)")


def _slope_branch(der: Derivation, spec: str) -> None:
    phi = Normalizer(spec)
    e = line_probe(spec, [None], order=3, generic=False)
    H = to_sympy(e.coefficient(e.means[1], 2)[0]) / to_sympy(e.z[0])
    ms = [to_sympy(v) for v in e.m]
    part = sum(t for t in sympy.Add.make_args(sympy.expand(H))
               if sympy.Poly(t, *ms).total_degree() == 1)
    Msym = sympy.Matrix(2, 2, lambda i, j: sympy.Symbol(f"M1_{i + 1}_{j + 1}"))
    zs = sympy.Matrix([to_sympy(v) for v in e.z])
    expected = sympy.expand(phi.slope * (sympy.Matrix(ms).T * Msym * zs)[0])
    der.check("App. A.2: $[\\deg_m = 1]\\, H_M = g(0)\\, m^\\top M z$", sympy.expand(part), expected,
              note=f"$\\phi = $ ``{spec}``")
    der.case(f"$g(0) \\ne 0$ branch, $\\phi = $ ``{spec}``")


def _consensus(der: Derivation) -> None:
    arch = Architecture.uniform(2, 2, 1, 3, "cosh, exp")
    m = sympy.symbols("m1 m2")
    X = np.array([[mi] * 3 for mi in m], dtype=object)
    L = np.array([[1, 2], [Fraction(1, 3), -1], [0, 5]], dtype=object)
    A = Symbolic()
    F = evaluate(effective_network(arch), A, {"X": A.const(X), "L": A.const(L),
                                               "M1": A.const([[1, 2], [3, 4]]),
                                               "M2": A.const([[0, 1], [-1, 2]])})["F"]
    Lm = [sympy.expand(sum(L[i, j] * m[j] for j in range(2))) for i in range(3)]
    der.check("eq. (9): $F(m, \\dots, m) = (Lm, \\dots, Lm)$",
              [[sympy.cancel(F[i, a]) for a in range(3)] for i in range(3)], [[v] * 3 for v in Lm])
    der.case("consensus recovers L")


def _fibers(der: Derivation, full: bool) -> None:
    cases = [
        ("exp", 2, [[1, 0], [0, 1]], [[[1, 2], [0, 1]], [[2, 1], [1, -1]]], "singleton", []),
        ("exp", 3, [[1, 1]], [[[1, 2], [0, 1]], [[0, 1], [-1, 0]]], "singleton", []),
        ("cosh", 2, [[1, 0]], [[[1, 0], [0, -1]], [[1, 1], [0, 1]]], "sign-orbit", [1, 2]),
        ("cosh, exp(s^2+s^3), gauss", 3, [[1, 0], [0, 2]],
         [[[1, 0], [2, 1]], [[1, 0], [0, 1]], [[0, 1], [1, 0]]], "sign-orbit", [1, 3]),
    ]
    if full:
        cases += [
            ("logistic, 1+s^2", 4, [[1, 2, 0]], [[[1, 0, 0], [0, 1, 0], [0, 0, 1]],
                                                 [[0, 1, 0], [1, 0, 0], [0, 0, 0]]], "sign-orbit", [2]),
            ("exp(s^3)", 2, [[1, 0]], [[[1, 2], [0, 1]], [[2, 1], [1, -1]]], "singleton", []),
        ]
    for spec, n, L, M, fiber, flips in cases:
        f = effective_fiber(L, M, spec, n)
        der.check("Theorem 1: fiber", (f.fiber, f.sign_flip_layers), (fiber, flips),
                  note=f"$\\phi = $ ``{spec}``, $n = {n}$")
        der.check("Theorem 1: verified (allowed flips keep F exactly, forbidden flips have "
                  "exact witnesses)", f.verified, True, note="; ".join(e.detail for e in f.evidence))
        der.case(f"fiber, $\\phi = $ ``{spec}``, $n = {n}$, $D = {len(M)}$")


def _native_point(der: Derivation, full: bool) -> None:
    shapes = [((2, 2), (1,)), ((3, 1, 2), (2, 1)), ((1, 3, 2, 4), (1, 3, 2))]
    if full:
        shapes += [((4, 4, 4, 4), (2, 2, 2)), ((2, 5), (4,))]
    for widths, ranks in shapes:
        D = len(ranks)
        spec = "exp" if D != 2 else "cosh, exp"
        arch = Architecture(widths, ranks, 2, normalizers(spec, D))
        eta = reduction(generic_native_point(arch))
        der.check("App. A.4: $L \\ne 0$ and $\\operatorname{sym} M_i \\ne 0$ at the native point",
                  (any(v != 0 for v in eta.L.flat),
                   [any(v != 0 for v in (Mi + Mi.T).flat) for Mi in eta.M]),
                  (True, [True] * D), note=f"widths {widths}, ranks {ranks}")
        f = effective_fiber(eta.L, eta.M, spec, 2)
        expected = [i for i, phi in enumerate(arch.normalizers, 1) if phi.even]
        der.check("Cor. A.1: Theorem 1 fiber at the native point",
                  (f.fiber, f.sign_flip_layers, f.verified),
                  ("sign-orbit" if expected else "singleton", expected, True),
                  note=f"widths {widths}, ranks {ranks}")
        der.case(f"Cor. A.1, widths {widths}, ranks {ranks}")


class _GenericPhi:
    """An unspecified normalizer ``phi`` (a sympy function) for the symbolic algebra."""

    name = "phi"

    def __init__(self) -> None:
        self.s = sympy.Symbol("u")
        self.expr = sympy.Function("phi")(self.s)


def _layer(A: Symbolic, X, M, L=None):
    """``L S_M^phi(X)`` from the effective graph (depth one), phi unspecified."""
    g = effective_network([_GenericPhi()])
    L = np.eye(X.shape[0], dtype=int) if L is None else L
    return evaluate(g, A, {"X": A.const(X), "L": A.const(L), "M1": A.const(M)})["F"]


def _equivariance(der: Derivation, d: int, n: int) -> None:
    """Eq. (3) / (A.3): S_A(PX) = P S_{P^T A P}(X), symbolic X, P, A and an unspecified phi."""
    sym = lambda name, r, c: np.array([[sympy.Symbol(f"{name}{i}{j}") for j in range(1, c + 1)]  # noqa: E731
                                        for i in range(1, r + 1)], dtype=object)
    X, P, A = sym("x", d, n), sym("p", d, d), sym("a", d, d)
    alg = Symbolic()
    lhs = _layer(alg, P.dot(X), A)
    rhs = _layer(alg, X, P.T.dot(A).dot(P), L=P)
    phi = sympy.Function("phi")
    canon = lambda e: sympy.expand(e).replace(phi, lambda a: phi(sympy.expand(a)))  # noqa: E731
    diff = [sympy.cancel(canon(a) - canon(b)) for a, b in zip(lhs.reshape(-1), rhs.reshape(-1))]
    der.check("eq. (3) / (A.3): $S_A(PX) = P S_{P^\\top A P}(X)$ (symbolic, any $\\phi$)", diff, [0] * len(diff),
              note=f"$d = {d}$, $n = {n}$, symbolic $X, P, A$; the graph of one layer on both sides")
    der.case(f"eq. (3) layer identity, $d = {d}$, $n = {n}$")


def run(full: bool = False) -> Derivation:
    """Compute and check every ingredient of Theorem 1 (see the module docstring)."""
    der = Derivation("t1_effective_identifiability", "Theorem 1 (effective identifiability)",
                     "If $L \\neq 0$ and $\\operatorname{sym} M_i \\neq 0$ for all $i$, the "
                     "effective fiber is $\\{L\\} \\times \\prod_i \\Gamma_i M_i$ with "
                     "$\\Gamma_i = \\{1\\}$, or $\\{\\pm 1\\}$ for even $\\phi_i$.", KIND)
    der.step("One layer on the line probe $x_a = m + \\varepsilon^r c_a z$ (App. A.1): the "
             "signatures are compared with the closed forms",
             latex="H_M = g(q)\\, m^\\top M z,\\quad K_M = g(q)\\, z^\\top M z + "
                   "g'(q)\\,(z^\\top M m)(m^\\top M z),\\quad g = p_1,\\ g' = p_2 - p_1^2")
    der.step("The reduction (eq. 3) rests on the layer identity (A.3): a value map $P$ passes through "
             "a layer by conjugating its score; computed from the graph with symbolic $X, P, A$ and an "
             "unspecified $\\phi$:", latex=r"S_A(PX) = P\,S_{P^\top A P}(X)")
    for d, n in ((1, 2), (2, 2)) + (((2, 3),) if full else ()):
        _equivariance(der, d, n)
    for n in (2, 3, 4):
        _one_layer(der, n, 1)
    for r in ((2, 3) if full else (2,)):
        _one_layer(der, 2, r)
    _softmax_two_token(der)
    der.step("Successive layers (App. A.3): amplitudes and layer isolation",
             latex="a_0 = 1,\\ a_j = a_{j-1}^3 \\mu_2 K_j,\\qquad "
                   "[\\varepsilon^{2\\cdot 3^{j-1}}]\\bigl(\\overline F - L\\mu_{j-1}\\bigr) = "
                   "a_{j-1}^2 \\mu_2\\, (Lz)\\, H_{M_j}")
    third = Fraction(1, 3)
    M2 = [[[1, 2], [0, -1]], [[third, 1], [2, 1]]]
    _stack(der, "exp", M2, [[1, 2], [3, -1], [0, 1]], None, None, 2, 10)
    _stack(der, "exp", M2, [[1, 2]], None, None, 3, 7)
    _stack(der, "exp", M2 + [[[1, -1], [1, 2]]], [[1, 2]], [1, 2], [Fraction(1, 2), -1], 2, 19)
    if full:
        _stack(der, "exp", M2, [[1, 2], [3, -1], [0, 1]], None, None, 4, 10)
        _stack(der, "exp, gauss", M2, [[2, -1]], [1, 2], [1, 1], 2, 10, generic=False)
    der.step("A competitor with the same prefix (eqs. 20-21): the isolated coefficients subtract, "
             "and the competitor's contrast after layer $i$ starts no earlier than $\\varepsilon^{3^i}$",
             latex="[\\varepsilon^{2\\cdot 3^{i-1}}]\\bigl(\\overline{F_\\eta} - \\overline{F_{\\widetilde\\eta}}\\bigr) "
                   "= a_{i-1}^2 \\mu_2 (\\ell z)(H_{M_i} - H_{\\widetilde M_i}),\\qquad "
                   "\\operatorname{ord}_\\varepsilon \\widetilde\\delta^{(i)} \\geq 3^i")
    _competitors(der, full)
    der.step("A signature determines one score (App. A.2): degree one in $m$ when $g(0) \\neq 0$; "
             "the diagonal $\\chi(s) = s g(s)$ and the sign branches when $k \\geq 2$",
             latex="q_N^k = q_M^k,\\qquad \\chi(q_M) = \\chi(-q_M) \\iff \\phi \\text{ even}")
    for spec in ("exp", "exp(s + s^2)"):
        _slope_branch(der, spec)
    for spec in ("gauss", "exp(s^2+s^3)", "exp(s^3)") + (("exp(s^4)", "exp(s^2 + s^4)") if full else ()):
        _sign_argument(der, spec)
    _consensus(der)
    _flip_witnesses(der, full)
    _fibers(der, full)
    _native_point(der, full)
    _worked_instance(der)
    return der


def _worked_instance(der: Derivation) -> None:
    """Displays computed for one small instance: softmax, d = 2, two tokens m +- eps z."""
    eps = sympy.Symbol("varepsilon")
    e = line_probe("exp", [None], order=4, generic=False)

    def series(coefficients) -> sympy.Expr:
        return sum(to_sympy(v, pretty=True) * eps ** j for j, v in enumerate(coefficients))

    der.show("Worked instance (computed from the graph): one softmax layer, $d = 2$, tokens "
             "$x_\\pm = m \\pm \\varepsilon z$ with symbolic $m, z, M$; the first coordinate of the "
             "output mean $\\bar y$ as an $\\varepsilon$-series",
             series(e.means[1][:, 0]), "\\bar y_1")
    der.show("and of the first token's contrast $y_+ - \\bar y$:",
             series(e.centered[1][:, 0, 0]), "(y_+ - \\bar y)_1")
    z1 = to_sympy(e.z[0], pretty=True)
    der.show(f"Dividing the $\\varepsilon^2$ coefficient by $\\mu_2 z_1$ ($\\mu_2 = {e.mu2}$) "
             "gives the signature $H_M$ as a computed polynomial:",
             sympy.cancel(to_sympy(e.coefficient(e.means[1], 2)[0], pretty=True) / (e.mu2 * z1)), "H_M")
    der.show("and the $\\varepsilon^3$ coefficient gives $K_M$:",
             sympy.cancel(to_sympy(e.coefficient(e.centered[1], 3)[0, 0], pretty=True) / (e.mu2 * z1)),
             "K_M")
    rows = []
    for r in (1, 2, 3):
        probe = line_probe("exp", [None], order=3 * r + 1, r=r, generic=False)
        rows.append([r, probe.valuation(probe.means[1] - probe.means[0]), probe.valuation(probe.centered[1])])
    der.show_table("Orders computed on the probe $x_a = m + \\varepsilon^r c_a z$: the mean moves at "
                   "order $2r$, the contrast at $3r$ (eq. 15):",
                   ["r", "ord mean shift", "ord contrast"], rows)
    deep = line_probe("exp", [[[1, 2], [0, -1]], None], m=[1, 2], z=[Fraction(1, 2), -1], order=7,
                      generic=False)
    difference = deep.output_mean - deep.means[1]
    der.show_table("Layer isolation at $D = 2$ ($L = I$, $M_1 = \\begin{pmatrix}1&2\\\\0&-1\\end{pmatrix}$, "
                   "$m = (1, 2)$, $z = (1/2, -1)$, symbolic $M_2$): the coefficients of "
                   "$\\varepsilon^j$ in $(\\overline F - \\mu_1)_1$; $M_2$ first appears at "
                   "$\\varepsilon^{6} = \\varepsilon^{2\\cdot 3}$, linearly, through $H_{M_2}$ (eq. A.2):",
                   ["j", "coefficient"],
                   [[j, sympy.factor(to_sympy(difference[j, 0], pretty=True))] for j in range(7)])


if __name__ == "__main__":
    raise SystemExit(main_for(__name__))
