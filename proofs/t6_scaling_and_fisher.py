r"""Eq. (51)-(52) and App. D.2: input scaling and the Fisher information scales.

With identity values and fixed scores :math:`\mathbf B = (B_1, \dots, B_D)`,
bilinearity of the scores gives the exact identity

.. math::

   F_{I, t^2\mathbf B}(X) = t^{-1} F_{I, \mathbf B}(tX), \qquad t \neq 0,

(eq. 51, D.1), so small score matrices are small inputs, and the layer-:math:`i`
contact order is :math:`N_i - 2 = \beta_i`. With independent Gaussian output
noise of variance :math:`\tau^2` the Fisher information on the bank is
:math:`\mathcal I_B(t) = \tau^{-2} J_B(t)^\top J_B(t)` (eq. 52); its positive
eigenvalues scale like :math:`\tau^{-2}` (multiplicity :math:`d^2`) and
:math:`\tau^{-2}|t|^{2\beta_i}` (multiplicity :math:`r_i(2d - r_i)`), and the
exact gauges carry zero information.

The script checks eq. (51) exactly: both sides are evaluated from the
effective network graph as truncated power series over :math:`\mathbb Q` along
input rays :math:`X = \rho Y` (every coefficient compared with ``==``) for
several normalizers, depths and rational :math:`t`, and numerically off the
rays in ball arithmetic. It compares the contact orders computed two ways
from the model: :math:`N_i - 2` from the ranks of the jets of the depth-:math:`i`
prefix (Theorem 3) and :math:`\beta_i` from the Smith orders of :math:`J_B(t)`
(Theorem 4). For eq. (52) it computes the Fisher information from its
definition, :math:`\mathbb E[\nabla\log p\,\nabla\log p^\top]` for the
Gaussian likelihood, by symbolic differentiation (no tangent rules), checks
that :math:`\tau^2\mathcal I` does not depend on :math:`\tau` and compares
it with :math:`\tau^{-2}J^\top J` (forward mode, 50 digits); it takes the Smith
orders of :math:`J_B(t)` from the spectrum, doubles them, and compares with
the final-pair slopes of the Fisher eigenvalues computed at high precision on
the exact complement of the gauges, and checks that every exact gauge
direction has zero information. The kind is numerical: the eq. (52)
comparisons are at 50-120 digits.
"""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import sympy

from symattn.core.algebras import Symbolic, exact_series
from symattn.render.derivation import Derivation
from symattn.model.network import evaluate, effective_network, native_network
from symattn.analyses.jets import generic_effective, sharp_degree
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank, random_native, random_rational_matrix, rational_matrix
from symattn.model.normalizer import Normalizer
from symattn.theorems.formulas import common_k_divisibility_order
from symattn.model.symmetries import GaugeKernel
from symattn.core.linalg import SeriesMatrix
from symattn.analyses.numerics import BallAlgebra, final_pair_slopes, observation_jacobian, positive_singular_values
from symattn.analyses.protocols import path_theta
from symattn.theorems.registry import main_for
from symattn.analyses.spectrum import native_spectrum, path_parameters

NAME = "input-scaling-and-fisher"
STATEMENT = "Eq. (51)-(52), App. D.2: input scaling identity and Fisher scales"
KIND = "numerical"


def _scores(arch: Architecture, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    d = arch.d
    return [rational_matrix([[f"{int(v)}/{int(q)}" for v, q in zip(row, qs)]
                             for row, qs in zip(rng.integers(-3, 4, (d, d)), rng.integers(1, 4, (d, d)))])
            for _ in range(arch.depth)]


def _scaling_sides(arch: Architecture, B: list[np.ndarray], Y: np.ndarray, t: Fraction, order: int):
    """Both sides of eq. (51) along X = rho Y as exact series in rho."""
    A = exact_series(order)
    g = effective_network(arch)
    eye = np.eye(arch.d, dtype=int)
    lhs = evaluate(g, A, {"X": A.series([np.zeros(Y.shape, dtype=int), Y]), "L": A.const(eye),
                          **{f"M{i}": A.const(b * t * t) for i, b in enumerate(B, 1)}})["F"]
    rhs = evaluate(g, A, {"X": A.series([np.zeros(Y.shape, dtype=int), Y * t]), "L": A.const(eye),
                          **{f"M{i}": A.const(b) for i, b in enumerate(B, 1)}})["F"]
    return A.coefficients(lhs), A.scale(A.coefficients(rhs), 1 / t)


def _fisher_against_jacobian(arch: Architecture, seed: int) -> tuple[float, bool]:
    """Fisher information of the Gaussian likelihood on a 2-input bank, from its definition
    (symbolic score, exact expectation) at 50 digits, against ``tau^-2 J^T J`` with ``J``
    from forward mode; returns the largest difference and whether ``tau^2 I`` is free of tau."""
    theta = random_native(arch, seed=seed)
    X = random_bank(arch, 2, seed=seed)
    names = [(n, idx) for n, shape in arch.native_shapes() for idx in np.ndindex(*shape)]
    syms = [sympy.Symbol(f"{n}_{'_'.join(map(str, idx))}") for n, idx in names]
    A = Symbolic()
    values = {"X": A.const(X)}
    for n, shape in arch.native_shapes():
        values[n] = np.array([sym for (m, _), sym in zip(names, syms) if m == n], dtype=object).reshape(shape)
    F = evaluate(native_network(arch), A, values)["F"].reshape(-1)
    point = {sym: sympy.Rational(str(theta.as_dict()[n][idx])) for (n, idx), sym in zip(names, syms)}
    tau = sympy.Symbol("tau", positive=True)
    eps = sympy.symbols(f"e0:{len(F)}")
    y = [f.subs(point) + tau * e for f, e in zip(F, eps)]
    loglik = -sum((yk - fk) ** 2 for yk, fk in zip(y, F)) / (2 * tau**2)
    score = [sympy.diff(loglik, sym).subs(point) for sym in syms]
    # the score is linear in eps with E[eps] = 0, E[eps eps^T] = I: I_jl = sum_k a_jk a_lk
    coef = [[sympy.diff(sc, e) for e in eps] for sc in score]
    tau_free = all(sympy.diff(tau * a, tau) == 0 for row in coef for a in row)
    scaled = [[sympy.N((tau * a).subs(tau, 1), 60) for a in row] for row in coef]
    Balls = BallAlgebra(50)
    J = observation_jacobian(arch, theta.as_dict(), X, Balls)
    with Balls.working():
        JtJ = J.T.dot(J)
        worst = 0.0
        for i, ci in enumerate(scaled):
            for j, cj in enumerate(scaled):
                v = sympy.Float(sum(a * b for a, b in zip(ci, cj)), 60)
                worst = max(worst, float(abs(JtJ[i, j] - Balls.embed(sympy.Rational(str(v)))).mid()))
    return worst, tau_free


def _series_against_sympy(arch: Architecture, seed: int, order: int) -> bool:
    """The effective graph over exact series along X = rho Y against sympy's Taylor expansion
    (``sympy.series``) of the same graph run symbolically with phi itself: every coefficient."""
    eta = generic_effective(arch, seed)  # L != 0, sym M_i != 0
    L, M = eta.L, eta.M
    Y = random_bank(arch, 1, seed=seed)[0]
    g = effective_network(arch)
    A = exact_series(order)
    F = A.coefficients(evaluate(g, A, {"X": A.series([np.zeros(Y.shape, dtype=int), Y]), "L": A.const(L),
                                       **{f"M{i}": A.const(m) for i, m in enumerate(M, 1)}})["F"])
    rho = sympy.Symbol("rho")
    S = Symbolic()
    out = evaluate(g, S, {"X": S.const(Y * rho), "L": S.const(L),
                          **{f"M{i}": S.const(m) for i, m in enumerate(M, 1)}})["F"]
    for idx in np.ndindex(*out.shape):
        taylor = sympy.series(out[idx], rho, 0, order).removeO()
        if any(sympy.Rational(str(F[(j,) + idx])) != taylor.coeff(rho, j) for j in range(order)):
            return False
    return True


def _symbolic_forward_mode(der: Derivation) -> None:
    """Forward mode in the symbolic algebra (its phi', phi'' rules) against sympy's own derivative of the
    symbolic network output, for a normalizer whose derivative is not itself (cosh)."""
    arch = Architecture.uniform(1, 1, 1, 2, "cosh")
    theta, X = random_native(arch, seed=1), random_bank(arch, 2, seed=1)
    A = Symbolic()
    names = [(n, idx) for n, shape in arch.native_shapes() for idx in np.ndindex(*shape)]
    syms = [sympy.Symbol(f"{n}_{'_'.join(map(str, idx))}") for n, idx in names]
    values = {"X": A.const(X)}
    for n, shape in arch.native_shapes():
        values[n] = np.array([s for (m, _), s in zip(names, syms) if m == n], dtype=object).reshape(shape)
    F = evaluate(native_network(arch), A, values)["F"].reshape(-1)
    point = {s: sympy.Rational(str(theta.as_dict()[n][idx])) for (n, idx), s in zip(names, syms)}
    by_sympy = [sympy.diff(f, s).subs(point) for f in F for s in syms]
    forward = np.asarray(observation_jacobian(arch, theta.as_dict(), X, A)).reshape(-1)
    worst = max(abs(sympy.N(a - b, 50)) for a, b in zip(forward, by_sympy))
    der.check("symbolic forward mode = sympy's derivative of the symbolic output ($\\phi = \\cosh$, one layer)",
              (len(forward) == len(by_sympy), worst < 1e-40), (True, True), note=f"largest difference {float(worst):.1e}")


def run(full: bool = False) -> Derivation:
    der = Derivation("t6_scaling_and_fisher", "Eq. (51)-(52): input scaling and Fisher information",
                     "$F_{t^2 B}(X) = t^{-1} F_B(tX)$ exactly; Fisher eigenvalues scale as $\\tau^{-2}$ "
                     "and $\\tau^{-2}|t|^{2\\beta_i}$.", KIND)
    der.step("Evaluate both sides of eq. (51) along $X = \\rho Y$ as exact series in $\\rho$ over "
             "$\\mathbb{Q}$ (effective graph, $L = I$).",
             latex=r"F_{I,t^2\mathbf B}(\rho Y) \overset{?}{=} t^{-1}F_{I,\mathbf B}(t\rho Y)")
    cases = [(1, 2, 3, "exp"), (2, 2, 3, "exp"), (2, 2, 2, "cosh"), (2, 3, 2, "gauss"),
             (3, 2, 2, "1+s^2"), (2, 2, 3, "exp(s^2+s^3)")]
    if full:
        cases += [(3, 2, 3, "exp"), (2, 3, 3, "logistic"), (3, 2, 2, "exp,cosh,gauss")]
    for depth, d, n, phi in cases:
        arch = Architecture.uniform(depth, d, 1, n, phi)
        B = _scores(arch, depth * 10 + d)
        Y = random_bank(arch, 1, seed=depth)[0]
        order = 12 if full else 8
        for t in (Fraction(1, 2), Fraction(-3), Fraction(2, 7)):
            lhs, rhs = _scaling_sides(arch, B, Y, t, order)
            der.check(f"eq. (51), $D = {depth}$, $d = {d}$, $n = {n}$, $\\phi = $ ``{phi}``, $t = {t}$",
                      bool((lhs == rhs).all()), True, kind="exact",
                      note=f"{order} coefficients in $\\rho$, exact")
        der.case(f"eq. (51): $D = {depth}$, $d = {d}$, $n = {n}$, $\\phi = $ ``{phi}``")

    # The series algebra itself, against sympy's Taylor expansion of the symbolic network.
    for arch in [Architecture.uniform(1, 1, 1, 3, "exp(s+s^2)"), Architecture.uniform(1, 2, 1, 2, "cosh"),
                 Architecture.uniform(1, 2, 1, 2, "exp")] + ([Architecture.uniform(2, 1, 1, 2, "exp")] if full else []):
        der.check(f"the exact series of $F(\\rho Y)$ = sympy's Taylor expansion, $D = {arch.depth}$, "
                  f"$d = {arch.d}$, $\\phi = $ ``{arch.normalizers[0].name}``", _series_against_sympy(arch, 1, 8), True,
                  kind="exact", note="every coefficient through $\\rho^7$, one random ray")

    # Off the rays: a generic input and t, in ball arithmetic.
    arch = Architecture.uniform(2, 2, 2, 3, "exp")
    B = _scores(arch, 5)
    X = random_bank(arch, 2, seed=7)
    A = BallAlgebra(50)
    g = effective_network(arch)
    t = Fraction(3, 7)
    with A.working():
        eye = A.const(np.eye(2, dtype=int))
        lhs = evaluate(g, A, {"X": A.const(X), "L": eye,
                              **{f"M{i}": A.const(b * t * t) for i, b in enumerate(B, 1)}})["F"]
        rhs = evaluate(g, A, {"X": A.const(X * t), "L": eye,
                              **{f"M{i}": A.const(b) for i, b in enumerate(B, 1)}})["F"]
        worst = max(float(abs(a - b / A.embed(t)).mid()) for a, b in zip(lhs.reshape(-1), rhs.reshape(-1)))
    der.check("eq. (51) off the rays (50 digits, generic $X$, $t = 3/7$)", worst < 1e-45, True,
              kind="numerical", note=f"largest difference {worst:.3g}")

    # N_i = beta_i + 2: the sharp jet degree of Thm 3 (computed ranks of jets) against the
    # Smith orders of the native spectrum (computed), both against the formula.
    der.step("$N_i - 2 = \\beta_i$: the least degree with injective $DT_{N}$ of the depth-$i$ "
             "prefix (rank of the ray Jacobian, Theorem 3) against the layer-$i$ Smith order of "
             "$J_B(t)$ (Theorem 4), both computed from the model.")
    rng = random.Random(11)
    for orders in ([0, 1, 3, 5], [1, 1, 2]):
        U = random_rational_matrix(rng, (len(orders) + 1, len(orders)))
        W = random_rational_matrix(rng, (len(orders), len(orders)))
        A = exact_series(8)
        J = A.series([U.dot(np.diag([int(o == j) for o in orders])).dot(W) for j in range(8)])
        der.check(f"the Smith reduction recovers the orders {orders} from $U \\operatorname{{diag}}(t^a) W$ "
                  "($U, W$ random rational)",
                  SeriesMatrix(A, J).smith_orders()[0], orders, kind="exact",
                  note="entries of $U \\operatorname{diag}(t^a) W$ all of low valuation: the orders appear only "
                       "after elimination")
    for phi in ("exp", "cosh"):
        depth = 2
        sharp = [sharp_degree(Architecture.uniform(i, 1, 1, 2, phi)).sharp_degree for i in range(1, depth + 1)]
        spec = native_spectrum(Architecture.uniform(depth, 2, 1, 2, phi), bank="auto")
        beta = [b.order for b in sorted(spec.bands, key=lambda b: b.layer) if b.layer > 0]
        k = Normalizer(phi).k
        der.check(f"$N_i - 2 = \\beta_i$ (computed jets against the computed spectrum), $\\phi = $ ``{phi}``",
                  [N - 2 for N in sharp], beta, kind="exact",
                  note="jet ranks mod $p$ (exact lower bounds) and Smith orders of $J_B(t)$ mod $p$")
        der.check(f"$\\beta_i = 2k\\,3^{{i-1}} - 1$, $\\phi = $ ``{phi}``", beta, [common_k_divisibility_order(i, k) for i in (1, 2)],
                  kind="exact")
        der.case(f"$N_i = \\beta_i + 2$: $\\phi = $ ``{phi}``, $i = 1, 2$")

    # Eq. (52) from the definition: the Fisher information of the Gaussian likelihood.
    der.step("Eq. (52) from the definition: with $y = F_\\theta(B) + \\tau\\varepsilon$ the score "
             "$\\nabla_\\theta \\log p(y\\mid\\theta)$ is differentiated symbolically (sympy, no tangent "
             "rules) and $\\mathcal I = \\mathbb E[\\nabla\\log p\\,\\nabla\\log p^\\top]$ taken with "
             "$\\mathbb E\\,\\varepsilon\\varepsilon^\\top = I$; compared with $\\tau^{-2}J^\\top J$, $J$ by "
             "forward mode through the graph.")
    fisher = [(Architecture.uniform(1, 2, 1, 2, "exp"), 3), (Architecture.uniform(1, 1, 1, 3, "cosh"), 4)]
    for arch, seed in fisher + ([(Architecture.uniform(2, 1, 1, 2, "exp"), 4)] if full else []):
        worst, tau_free = _fisher_against_jacobian(arch, seed)
        label = f"D = {arch.depth}, d = {arch.d}, phi = {arch.normalizers[0].name}"
        der.check(f"eq. (52) $\\tau^2 I_B$ is independent of $\\tau$ (symbolic), {label}", tau_free, True,
                  kind="exact")
        der.check(f"eq. (52) $I_B = \\tau^{{-2}} J^\\top J$ (likelihood against forward-mode $J$), {label}",
                  worst < 1e-40, True,
                  kind="numerical", note=f"50 digits, largest entry difference {worst:.3g}")
        der.case(f"eq. (52) from the likelihood: {label}")

    # Eq. (52): Fisher information on the bank.
    der.step("Fisher information $\\tau^{-2}J^\\top J$: its positive eigenvalues are "
             "$\\sigma_j^2/\\tau^2$ on the exact complement of the gauges; compare their final-pair "
             "slopes with twice the certified Smith orders.")
    fisher_cases = [(Architecture.uniform(2, 2, 1, 2, "exp"), ("0.002", "0.001"), 60)]
    if full:
        fisher_cases.append((Architecture.uniform(2, 2, 1, 2, "cosh"), ("0.004", "0.002"), 80))
    for arch, ts, digits in fisher_cases:
        spec = native_spectrum(arch, bank="auto")
        U, W, _ = path_parameters(arch, 0, "identity")
        X = random_bank(arch, spec.bank_size, 0)
        orders = [2 * b.order for b in sorted(spec.bands, key=lambda b: b.order)
                  for _ in range(b.multiplicity)]
        per_tau = {}
        for tau in (Fraction(1),):
            eig = []
            for t in ts:
                theta = path_theta(U, W, Fraction(t))
                gauges = GaugeKernel(arch, theta)
                vecs = gauges.directions
                A = BallAlgebra(digits)
                J = observation_jacobian(arch, theta.as_dict(), X, A)
                with A.working():
                    J = J / A.embed(tau)
                    if tau == 1 and t == ts[-1]:
                        xi = A.const(np.array(vecs, dtype=object).T)
                        info = max(float(abs(v).mid()) for v in J.dot(xi).reshape(-1)) ** 2
                eig.append([s * s for s in positive_singular_values(
                    J, gauges.complement(), digits)])
            per_tau[tau] = eig
        slopes = final_pair_slopes(ts, tuple(per_tau[Fraction(1)]))
        label = f"phi = {arch.normalizers[0].name}, t = {', '.join(ts)}"
        der.check(f"eq. (52) Fisher orders $2\\beta_i$ (rounded slopes), {label}",
                  [round(s) for s in slopes], orders, kind="numerical",
                  note="orders from the certified Smith form; slopes numerical at "
                       f"{digits} digits: {', '.join(f'{s:.3f}' for s in slopes)}")
        der.check(f"eq. (52) exact gauges carry zero information, {label}", info < 1e-80, True,
                  kind="numerical", note=f"largest $|J\\xi|^2 = {info:.3g}$")
        der.case(f"eq. (52): {label}")
    _worked_instance(der)
    _symbolic_forward_mode(der)
    return der



def _worked_instance(der: Derivation) -> None:
    """Displays computed for a symbolic tuple: d = 1, n = 2, softmax, depths 1 and 2."""
    x1, x2, t = sympy.symbols("x_1 x_2 t", positive=True)
    b = sympy.symbols("b_1 b_2")
    A = Symbolic()
    X = np.array([[x1, x2]], dtype=object)

    def F(depth: int, scale_scores, scale_input):
        arch = Architecture.uniform(depth, 1, 1, 2, "exp")
        scores = {f"M{i}": A.const(np.array([[b[i - 1] * scale_scores]], dtype=object))
                  for i in range(1, depth + 1)}
        return evaluate(effective_network(arch), A, {"X": A.const(X * scale_input),
                                                     "L": A.const(np.array([[1]], dtype=object)),
                                                     **scores})["F"][0, 0]

    der.show("Worked instance (computed from the graph on a symbolic tuple: softmax, $d = 1$, "
             "$n = 2$, tokens $x_1, x_2$, score $b_1$, scale $t$): the first output token with the "
             "score scaled by $t^2$,", F(1, t ** 2, 1), "F_{t^2 b_1}(X)_1")
    der.show("the same layer on the input $tX$, divided by $t$,", F(1, 1, t) / t, "t^{-1} F_{b_1}(tX)_1")
    der.show_table("and the difference of the two sides, expanded by sympy, at depths one and two "
                   "(eq. 51 holds identically):",
                   ["$D$", "$F_{t^2 B}(X)_1 - t^{-1} F_B(tX)_1$"],
                   [[depth, sympy.expand(F(depth, t ** 2, 1) - F(depth, 1, t) / t)] for depth in (1, 2)])


if __name__ == "__main__":
    raise SystemExit(main_for(__name__))
