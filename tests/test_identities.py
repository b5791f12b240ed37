"""Exact identities of the model, as tests (all exact: zero, not small).

* S_A(P X) = P S_{P^T A P}(X) for rectangular and singular P (App. A.4);
* the native network equals the effective network of its reduction (eq. 3);
* factor gauges (eq. 4/50) and interface directions (App. F.2) leave the
  effective tuple and the network output unchanged: their tangents vanish
  exactly, along the path Q_i = t U_i, K_i = t W_i and at a generic point;
* S_M = S_{-M} for even phi, not for exp (Thm. 1);
* consensus inputs are fixed (eq. 9);
* on line probes the mean moves at order 2r and the contrast at 3r with the
  leading coefficients z H_M and c_a z K_M of (A.1), eq. (15).

Series algebras expand around score 0, so inputs are rays X = rho Y (or the
t-path, whose scores carry t^2); line probes around m != 0 use the Symbolic
algebra.
"""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
import symengine
import sympy

from symattn.core.algebras import Dual, Float64, Symbolic, Tangent, exact_series
from symattn.model.network import effective_network, evaluate, native_network, reduction_graph
from symattn.core.linalg import identity_matrix
from symattn.model.architecture import Architecture
from symattn.model.parameters import EffectiveParams, NativeParams, random_native, reduction
from symattn.model.symmetries import factor_gauges, interface_directions
from symattn.model.normalizer import Normalizer


# --------------------------------------------------------------------- helpers
def rational_array(rng: random.Random, shape, scale: int = 3) -> np.ndarray:
    """Seeded nonzero rationals p/q with |p|, q <= scale."""
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        num = 0
        while num == 0:
            num = rng.randint(-scale, scale)
        out[idx] = Fraction(num, rng.randint(1, scale))
    return out


def native(arch: Architecture, seed: int, identity_values: bool = False) -> NativeParams:
    rng = random.Random(seed)
    Q, K, V = [], [], []
    for i in range(arch.depth):
        d_in, d_out, r = arch.widths[i], arch.widths[i + 1], arch.ranks[i]
        Q.append(rational_array(rng, (d_in, r)))
        K.append(rational_array(rng, (d_in, r)))
        if identity_values:
            V.append(identity_matrix(d_in))
        else:
            V.append(rational_array(rng, (d_out, d_in)))
    return NativeParams(tuple(Q), tuple(K), tuple(V))


def ray(A, Y: np.ndarray):
    """X = rho Y as a series tensor."""
    return A.series([np.zeros(Y.shape, dtype=int), Y])


eye = identity_matrix


def run(graph, A, params: dict, X) -> np.ndarray:
    values = {k: A.const(v) for k, v in params.items()}
    values["X"] = X
    return evaluate(graph, A, values)["F"]


def one_layer(d: int, n: int, phi: str):
    """The graph of L S_M(X) with input width d (eq. 2 with D = 1)."""
    return lambda p: effective_network(Architecture((d, p), (1,), n, (Normalizer(phi),)))


# ------------------------------------------- S_A(P X) = P S_{P^T A P}(X)
@pytest.mark.parametrize("phi", ["exp", "cosh", "logistic", "1+s^2"])
@pytest.mark.parametrize("shape, rank", [((3, 2), 2), ((2, 3), 2), ((3, 3), 2), ((3, 3), 3)])
def test_bilinear_equivariance_exact_series(phi, shape, rank):
    """Rectangular P (3x2, 2x3) and square P of rank 2 (singular) and 3."""
    rng = random.Random(100 * shape[0] + 10 * shape[1] + rank)
    e, d = shape
    P = rational_array(rng, (e, d))
    if rank < min(shape):  # make the last row a combination of the others
        P[-1] = P[0] * Fraction(2) - P[1]
    A = rational_array(rng, (e, e))
    Y = rational_array(rng, (2, d, 3))  # a bank of two inputs, n = 3 tokens
    Sr = exact_series(8)
    n = 3
    lhs = run(effective_network(Architecture((e, e), (1,), n, (Normalizer(phi),))), Sr,
              {"L": eye(e), "M1": A}, ray(Sr, np.matmul(P, Y)))
    rhs = run(effective_network(Architecture((d, e), (1,), n, (Normalizer(phi),))), Sr,
              {"L": P, "M1": P.T.dot(A).dot(P)}, ray(Sr, Y))
    assert lhs.shape == rhs.shape == (8, 2, e, 3)
    assert np.array_equal(lhs, rhs)
    # the identity is not vacuous: the score changes the output, and using A
    # in place of P^T A P breaks it
    flat = run(effective_network(Architecture((d, e), (1,), n, (Normalizer(phi),))), Sr,
               {"L": P, "M1": 0 * P.T.dot(A).dot(P)}, ray(Sr, Y))
    assert not np.array_equal(lhs, flat)
    if e == d:
        wrong = run(effective_network(Architecture((d, e), (1,), n, (Normalizer(phi),))), Sr,
                    {"L": P, "M1": A}, ray(Sr, Y))
        assert not np.array_equal(lhs, wrong)


@pytest.mark.parametrize("phi", ["exp", "cosh"])
def test_bilinear_equivariance_symbolic_away_from_zero(phi):
    """At a rational point with scores of order one the symbolic outputs agree exactly."""
    rng = random.Random(5)
    P = rational_array(rng, (2, 3))
    A = rational_array(rng, (2, 2))
    X = rational_array(rng, (3, 2))
    S = Symbolic()
    lhs = run(effective_network(Architecture((2, 2), (1,), 2, (Normalizer(phi),))), S,
              {"L": eye(2), "M1": A}, S.const(P.dot(X)))
    rhs = run(effective_network(Architecture((3, 2), (1,), 2, (Normalizer(phi),))), S,
              {"L": P, "M1": P.T.dot(A).dot(P)}, S.const(X))
    for a, b in zip(lhs.flat, rhs.flat):
        assert sympy.simplify(a - b) == 0
    assert all(e.has(sympy.exp) or e.has(sympy.cosh) for e in lhs.flat)


# --------------------------------------------- native form = effective form
ARCHS = {
    "D1": Architecture((2, 3), (1,), 3, (Normalizer("exp"),)),
    "D2": Architecture((2, 2, 2), (2, 1), 2, (Normalizer("cosh"), Normalizer("exp"))),
    "D2rect": Architecture((3, 2, 4), (1, 2), 3, (Normalizer("logistic"), Normalizer("1+s^2"))),
    "D3": Architecture((2, 3, 2, 2), (1, 1, 2), 2, (Normalizer("exp"),) * 3),
}


@pytest.mark.parametrize("name", sorted(ARCHS))
def test_native_equals_effective_exact_series(name):
    arch = ARCHS[name]
    theta = native(arch, seed=11)
    eta = reduction(theta)
    Y = rational_array(random.Random(3), (2, arch.widths[0], arch.tokens))
    A = exact_series(10)
    F_native = run(native_network(arch), A, theta.as_dict(), ray(A, Y))
    F_effective = run(effective_network(arch), A, eta.as_dict(), ray(A, Y))
    assert F_native.shape == (10, 2, arch.widths[-1], arch.tokens)
    assert np.array_equal(F_native, F_effective)
    assert any(v != 0 for v in F_native[3:].flat)


@pytest.mark.parametrize("name", sorted(ARCHS))
def test_native_equals_effective_float64(name):
    """Float64 at inputs of order one (a numerical check: tolerance 1e-12).

    Both graphs compute the same function through different roundings; at
    moderate scores each output is a well-conditioned average, so they agree
    to a few hundred ulps.
    """
    arch = ARCHS[name]
    theta = native(arch, seed=11)
    eta = reduction(theta)
    scale = {k: v / 3 for k, v in theta.as_dict().items()}  # keep the scores moderate
    scaled = NativeParams(tuple(scale[f"Q{i}"] for i in range(1, arch.depth + 1)),
                          tuple(scale[f"K{i}"] for i in range(1, arch.depth + 1)),
                          tuple(theta.V))
    eta = reduction(scaled)
    Y = rational_array(random.Random(3), (4, arch.widths[0], arch.tokens))
    A = Float64()
    F_native = run(native_network(arch), A, scaled.as_dict(), A.const(Y))
    F_effective = run(effective_network(arch), A, eta.as_dict(), A.const(Y))
    assert np.allclose(F_native, F_effective, rtol=1e-12, atol=1e-12)
    # the score matters at this scale: dropping it changes the output
    flat = dict(eta.as_dict(), **{f"M{i}": 0 * m for i, m in enumerate(eta.M, 1)})
    assert not np.allclose(run(effective_network(arch), A, flat, A.const(Y)), F_native, atol=1e-6)


def test_effective_params_of_the_identity_stack():
    """With V_i = I: L = I and M_i = Q_i K_i^T (eq. 3 with P_i = I)."""
    arch = Architecture.uniform(2, 2, 2, 2, "exp")
    theta = random_native(arch, seed=8, values="identity")
    eta = reduction(theta)
    assert isinstance(eta, EffectiveParams)
    assert np.array_equal(eta.L, identity_matrix(2))
    assert all(np.array_equal(M, q.dot(k.T)) for M, q, k in zip(eta.M, theta.Q, theta.K))


# ------------------------------------------ gauges leave everything unchanged
def path_seeds(arch: Architecture, U, W, V, directions, B):
    """Tangent seeds of ``directions(arch, theta(t))`` along Q = tU, K = tW, V.

    Every gauge direction is linear in the native point, and theta(t) is
    affine in t, so direction(theta(t)) = direction(theta0) + t (direction(theta1)
    - direction(theta0)) with theta0 = (0, 0, V), theta1 = (U, W, V): a series of
    degree one, computed by the library's own gauge functions at two rational
    points.
    """
    zero = tuple(0 * u for u in U)
    at0 = np.array(list(directions(arch, NativeParams(zero, tuple(0 * w for w in W), V))), dtype=object)
    at1 = np.array(list(directions(arch, NativeParams(tuple(U), tuple(W), V))), dtype=object)
    k = len(at1)
    seeds, off = {}, arch.offsets()
    for name, shape in arch.native_shapes():
        size = int(np.prod(shape))
        c0 = at0[:, off[name]: off[name] + size].reshape((k,) + shape)
        c1 = (at1 - at0)[:, off[name]: off[name] + size].reshape((k,) + shape)
        seeds[name] = B.series([c0, c1])
    return k, seeds


def path_values(arch, U, W, V, T, seeds):
    B = T.base
    values = {}
    for i in range(1, arch.depth + 1):
        zeros = np.zeros(U[i - 1].shape, dtype=int)
        values[f"Q{i}"] = T.variable(B.series([zeros, U[i - 1]]), seeds[f"Q{i}"])
        values[f"K{i}"] = T.variable(B.series([zeros, W[i - 1]]), seeds[f"K{i}"])
        values[f"V{i}"] = T.variable(B.const(V[i - 1]), seeds[f"V{i}"])
    return values


def all_gauges(arch, theta):
    yield from factor_gauges(arch, theta)
    yield from interface_directions(arch, theta)


GAUGE_ARCHS = {
    "d3r2D2": (Architecture.uniform(2, 3, 2, 3, "exp"), False),
    "d2r1D3-identityV": (Architecture.uniform(3, 2, 1, 2, ["exp", "cosh", "exp"]), True),
    "rect": (Architecture((2, 3, 2), (1, 2), 2, (Normalizer("exp"), Normalizer("logistic"))), False),
}


@pytest.mark.parametrize("name", sorted(GAUGE_ARCHS))
def test_gauges_leave_reduction_unchanged_along_path(name):
    arch, identity = GAUGE_ARCHS[name]
    theta = native(arch, seed=21, identity_values=identity)
    U, W, V = theta.Q, theta.K, theta.V
    B = exact_series(8)
    k, seeds = path_seeds(arch, U, W, V, all_gauges, B)
    assert k == sum(r * r for r in arch.ranks) + sum(d * d for d in arch.widths[1:-1])
    T = Tangent(B, k)
    out = evaluate(reduction_graph(arch), T, path_values(arch, U, W, V, T, seeds))
    eta = reduction(theta)
    for key, value in out.items():
        assert value.tangent is not None and value.tangent.shape[:2] == (8, k)
        assert all(v == 0 for v in value.tangent.flat), key
    # the values are the reduction along the path: L = P_D, M_i = t^2 pi(theta)_i
    assert np.array_equal(out["L"].value, B.const(eta.L))
    for i, m in enumerate(eta.M, 1):
        assert np.array_equal(out[f"M{i}"].value, B.series([0 * m, 0 * m, m]))


@pytest.mark.parametrize("name", sorted(GAUGE_ARCHS))
def test_gauges_are_in_the_kernel_of_the_native_jacobian_along_path(name):
    """J xi = 0 for the native network on a small bank, to order t^7."""
    arch, identity = GAUGE_ARCHS[name]
    theta = native(arch, seed=21, identity_values=identity)
    U, W, V = theta.Q, theta.K, theta.V
    B = exact_series(8)
    k, seeds = path_seeds(arch, U, W, V, all_gauges, B)
    T = Tangent(B, k)
    values = path_values(arch, U, W, V, T, seeds)
    values["X"] = Dual(B.const(rational_array(random.Random(4), (3, arch.widths[0], arch.tokens))))
    F = evaluate(native_network(arch), T, values)["F"]
    assert F.tangent.shape == (8, k, 3, arch.widths[-1], arch.tokens)
    assert all(v == 0 for v in F.tangent.flat)

    # the test can fail: seeding the same directions without their t-dependence
    # (the gauges of theta1, not of theta(t)) moves the output
    wrong = {name: B.const(B.coefficients(s)[0] + B.coefficients(s)[1]) for name, s in seeds.items()}
    values = path_values(arch, U, W, V, T, wrong)
    values["X"] = Dual(B.const(rational_array(random.Random(4), (3, arch.widths[0], arch.tokens))))
    assert any(v != 0 for v in evaluate(native_network(arch), T, values)["F"].tangent.flat)


def test_gauges_are_in_the_kernel_at_a_generic_point():
    """J xi = 0 at a generic rational native point, exactly, along X = rho Y."""
    arch = Architecture((2, 3, 2), (2, 1), 3, (Normalizer("exp"), Normalizer("cosh")))
    theta = native(arch, seed=8)
    directions = np.array(list(all_gauges(arch, theta)), dtype=object)
    k = len(directions)
    assert k == 4 + 1 + 9
    B = exact_series(9)
    T = Tangent(B, k)
    off = arch.offsets()
    values = {}
    for name, shape in arch.native_shapes():
        size = int(np.prod(shape))
        seed = directions[:, off[name]: off[name] + size].reshape((k,) + shape)
        values[name] = T.variable(B.const(theta.as_dict()[name]), B.const(seed))
    values["X"] = Dual(ray(B, rational_array(random.Random(6), (2, 2, 3))))
    F = evaluate(native_network(arch), T, values)["F"]
    assert F.tangent.shape == (9, k, 2, 2, 3)
    assert all(v == 0 for v in F.tangent.flat)
    # a generic direction is not in the kernel
    rng = random.Random(1)
    for name, shape in arch.native_shapes():
        values[name] = T.variable(values[name].value, B.const(rational_array(rng, (k,) + shape)))
    assert any(v != 0 for v in evaluate(native_network(arch), T, values)["F"].tangent.flat)


# ------------------------------------------------------------ sign symmetry
@pytest.mark.parametrize("phi, even", [("cosh", True), ("gauss", True), ("1+s^2", True),
                                       ("exp", False), ("logistic", False),
                                       ("exp(s^2+s^3)", False)])
def test_sign_flip_of_the_score(phi, even):
    """S_M = S_{-M} exactly when phi is even (App. A.2), not otherwise."""
    assert Normalizer(phi).even is even
    rng = random.Random(2)
    M = rational_array(rng, (2, 2))
    Y = rational_array(rng, (3, 2, 3))
    A = exact_series(12)
    graph = effective_network(Architecture.uniform(1, 2, 1, 3, phi))
    plus = run(graph, A, {"L": eye(2), "M1": M}, ray(A, Y))
    minus = run(graph, A, {"L": eye(2), "M1": -M}, ray(A, Y))
    assert np.array_equal(plus, minus) is even


def test_sign_choices_are_independent_across_layers():
    """Depth two with (exp, cosh): flipping M2 is invisible, flipping M1 is not."""
    arch = Architecture.uniform(2, 2, 1, 3, ["exp", "cosh"])
    rng = random.Random(3)
    L, M1, M2 = (rational_array(rng, (2, 2)) for _ in range(3))
    Y = rational_array(rng, (2, 2, 3))
    A = exact_series(12)
    graph = effective_network(arch)
    base = run(graph, A, {"L": L, "M1": M1, "M2": M2}, ray(A, Y))
    assert np.array_equal(base, run(graph, A, {"L": L, "M1": M1, "M2": -M2}, ray(A, Y)))
    assert not np.array_equal(base, run(graph, A, {"L": L, "M1": -M1, "M2": M2}, ray(A, Y)))
    assert not np.array_equal(base, run(graph, A, {"L": L, "M1": -M1, "M2": -M2}, ray(A, Y)))


# ---------------------------------------------------------------- consensus
@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("phi", ["exp", "cosh", "logistic", "gauss"])
def test_consensus_is_fixed_exact_series(depth, phi):
    """F(m 1^T rho) = L m 1^T rho exactly, to order rho^9 (eq. 9)."""
    arch = Architecture.uniform(depth, 3, 1, 4, phi)
    rng = random.Random(depth)
    params = {"L": rational_array(rng, (3, 3))}
    params.update({f"M{i}": rational_array(rng, (3, 3)) for i in range(1, depth + 1)})
    m = rational_array(rng, (3, 1))
    consensus = np.repeat(m, 4, axis=1)
    A = exact_series(10)
    F = run(effective_network(arch), A, params, ray(A, consensus))
    assert np.array_equal(F, ray(A, params["L"].dot(consensus)))
    # a non-consensus input is moved (so the identity is not automatic)
    other = consensus.copy()
    other[0, 0] += 1
    moved = run(effective_network(arch), A, params, ray(A, other))
    assert not np.array_equal(moved, ray(A, params["L"].dot(other)))


@pytest.mark.parametrize("phi", ["exp", "cosh", "logistic", "1+s^2"])
def test_consensus_is_fixed_symbolic(phi):
    """One layer on generic symbols m, M: S_M(m 1^T) - m 1^T simplifies to 0."""
    m = sympy.Matrix(sympy.symbols("m1 m2"))
    M = sympy.Matrix(2, 2, sympy.symbols("a b c d"))
    S = Symbolic()
    X = np.array([[m[0]] * 3, [m[1]] * 3], dtype=object)
    out = evaluate(effective_network(Architecture.uniform(1, 2, 1, 3, phi)), S,
                   {"X": S.const(X), "L": S.const(eye(2)),
                    "M1": S.const(np.array(M.tolist(), dtype=object))})["F"]
    for idx, e in np.ndenumerate(out):
        assert sympy.simplify(e - X[idx]) == 0


@pytest.mark.parametrize("phi", ["exp", "cosh"])
def test_consensus_is_fixed_at_rational_points_depth_three(phi):
    """Depth three at an order-one rational consensus: the outputs are L m exactly."""
    arch = Architecture.uniform(3, 2, 1, 3, phi)
    rng = random.Random(9)
    params = {"L": rational_array(rng, (2, 2))}
    params.update({f"M{i}": rational_array(rng, (2, 2)) for i in range(1, 4)})
    consensus = np.repeat(rational_array(rng, (2, 1)), 3, axis=1)
    out = run(effective_network(arch), Symbolic(), params, Symbolic().const(consensus))
    expected = params["L"].dot(consensus)
    for idx, e in np.ndenumerate(out):
        assert sympy.simplify(e) == sympy.Rational(expected[idx].numerator, expected[idx].denominator)


# ----------------------------------------------- line probes: eq. (15), (A.1)
EPS = symengine.Symbol("eps")
R = sympy.Rational


def signatures(phi_expr: sympy.Expr, s: sympy.Symbol, m, z, M):
    """H_M and K_M of (A.1), from phi by g = (log phi)', evaluated independently."""
    g = sympy.diff(sympy.log(phi_expr), s)
    gp = sympy.diff(g, s)
    q = (m.T * M * m)[0]
    u = (z.T * M * m)[0]
    v = (m.T * M * z)[0]
    w = (z.T * M * z)[0]
    H = g.subs(s, q) * v
    K = g.subs(s, q) * w + gp.subs(s, q) * u * v
    return H, K


def probe_outputs(phi: str, taylor, m, z, M, c, r, drift=None, c_next=None):
    """One layer on x_a = m + eps^2 drift + (eps^r c_a + eps^(r+1) c'_a) z.

    Returns (mean increment, contrasts) as symengine expressions in eps.
    """
    n = len(c)
    S = Symbolic(taylor=taylor, backend="symengine")
    X = []
    for a in range(n):
        s_a = EPS**r * c[a] + (EPS ** (r + 1) * c_next[a] if c_next else 0)
        col = [m[i] + s_a * z[i] + (EPS**2 * drift[i] if drift is not None else 0) for i in range(len(m))]
        X.append(col)
    X = np.array(X, dtype=object).T
    d = len(m)
    out = evaluate(effective_network(Architecture.uniform(1, d, 1, n, phi)), S,
                   {"X": S.const(X), "L": S.const(np.eye(d, dtype=int)),
                    "M1": S.const(np.array(M.tolist(), dtype=object))})["F"]
    x_mean = X.sum(axis=1) / n
    y_mean = out.sum(axis=1) / n
    return y_mean - x_mean, out - y_mean[:, None]


def leading(expr, order: int) -> list[sympy.Expr]:
    """Coefficients of eps^0..eps^order (symengine.series), as sympy expressions."""
    poly = sympy.expand(sympy.sympify(symengine.series(expr, EPS, 0, order + 1)))
    e = sympy.Symbol("eps")
    return [poly.coeff(e, j) for j in range(order + 1)]


M_PROBE = sympy.Matrix([[R(1, 2), R(-1)], [R(1, 3), R(3, 2)]])
m_PROBE = sympy.Matrix([R(1, 2), R(-1, 3)])
z_PROBE = sympy.Matrix([R(2, 3), R(1)])
# centred, (1/n) sum c_a^2 = 1 (eq. 12); the second has mu_3 != 0
C_PROBES = {"n2": [R(1), R(-1)], "n4": [R(1), R(1, 3), R(1, 3), R(-5, 3)]}


@pytest.mark.parametrize("cname", sorted(C_PROBES))
@pytest.mark.parametrize("phi", ["exp", "cosh"])
@pytest.mark.parametrize("r", [1, 3])
def test_line_probe_orders_taylor_polynomial(phi, r, cname):
    """Symbolic(taylor=4): phi is its degree-4 Taylor polynomial p, so g = p'/p."""
    c = C_PROBES[cname]
    assert sum(c) == 0 and sum(x * x for x in c) == len(c)
    m, z, M = m_PROBE, z_PROBE, M_PROBE
    s = sympy.Symbol("s")
    # the Taylor polynomial by sympy's own series, not the normalizer's coefficients
    p = sympy.series(Normalizer(phi).expr.subs(Normalizer(phi).s, s), s, 0, 5).removeO()
    H, K = signatures(p, s, m, z, M)
    assert H != 0 and K != 0
    drift = [R(1), R(-2)] if r == 3 else None
    c_next = [R(1, 2), R(-1, 2), R(0), R(0)][: len(c)] if r == 3 else None
    if c_next and len(c) == 2:
        c_next = [R(1, 2), R(-1, 2)]
    mean, contrast = probe_outputs(phi, 4, m, z, M, c, r, drift, c_next)
    for i in range(2):
        coeffs = leading(mean[i], 2 * r)
        assert all(x == 0 for x in coeffs[: 2 * r])
        assert coeffs[2 * r] == sympy.expand(z[i] * H)
    for a in range(len(c)):
        for i in range(2):
            coeffs = leading(contrast[i, a], 3 * r)
            assert all(x == 0 for x in coeffs[: 3 * r])
            assert coeffs[3 * r] == sympy.expand(c[a] * z[i] * K)


@pytest.mark.parametrize("phi", ["exp", "cosh"])
def test_line_probe_orders_exact_normalizer(phi):
    """The true exp and cosh (g = 1, g' = 0; g = tanh, g' = sech^2), r = 1, n = 4."""
    c = C_PROBES["n4"]
    m, z, M = m_PROBE, z_PROBE, M_PROBE
    s = sympy.Symbol("s")
    H, K = signatures(Normalizer(phi).expr.subs(Normalizer(phi).s, s), s, m, z, M)
    mean, contrast = probe_outputs(phi, None, m, z, M, c, 1)
    for i in range(2):
        coeffs = leading(mean[i], 2)
        assert [sympy.simplify(x) for x in coeffs[:2]] == [0, 0]
        assert sympy.simplify((coeffs[2] - z[i] * H).rewrite(sympy.exp)) == 0
    for a in range(len(c)):
        for i in range(2):
            coeffs = leading(contrast[i, a], 3)
            assert [sympy.simplify(x) for x in coeffs[:3]] == [0, 0, 0]
            assert sympy.simplify((coeffs[3] - c[a] * z[i] * K).rewrite(sympy.exp)) == 0
    if phi == "exp":  # H = m^T M z and K = z^T M z exactly (eq. 10-11)
        assert H == (m.T * M * z)[0] and K == (z.T * M * z)[0]


@pytest.mark.slow
def test_line_probe_with_sympy_series():
    """The same leading coefficients by sympy.series (slow: ~10 s per entry)."""
    c = C_PROBES["n2"]
    m, z, M = m_PROBE, z_PROBE, M_PROBE
    s = sympy.Symbol("s")
    H, K = signatures(sympy.exp(s), s, m, z, M)
    mean, contrast = probe_outputs("exp", None, m, z, M, c, 1)
    e = sympy.Symbol("eps")
    series = sympy.series(sympy.sympify(mean[0]), e, 0, 3).removeO()
    assert sympy.expand(series) == sympy.expand(z[0] * H * e**2)
    series = sympy.series(sympy.sympify(contrast[1, 0]), e, 0, 4).removeO()
    assert sympy.expand(series) == sympy.expand(c[0] * z[1] * K * e**3)
