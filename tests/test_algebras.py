"""Every algebra gives the same answer on the same graph.

* Float64, MPMath(50) and Symbolic agree at rational points (tolerances only
  for the two numerical algebras, stated where used);
* exact series over Q reduce mod p to the modular series, coefficient by
  coefficient, exactly;
* exact series agree with ``sympy.series`` of the symbolic network along an
  input ray ``X = rho Y``, and forward tangents over exact series agree with
  ``sympy.diff`` of the symbolic network;
* the series primitives (mul, matmul, reciprocal, phi) agree with sympy and
  between Q and F_p (hypothesis-drawn series);
* bad input raises :class:`SymattnError`.
"""

from __future__ import annotations

import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import symengine
import sympy
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from symattn.core.algebras import (
    SECOND_PRIME,
    Dual,
    Float64,
    MPMath,
    DEFAULT_PRIME,
    Symbolic,
    Tangent,
    exact_series,
    modular_series,
)
from symattn.core.errors import SymattnError
from symattn.model.network import effective_network, evaluate, jacobian, native_network
from symattn.model.architecture import Architecture
from symattn.model.parameters import reduction
from symattn.model.normalizer import Normalizer

RHO = sympy.Symbol("rho")
T = sympy.Symbol("t")


# --------------------------------------------------------------------- helpers
def rational_array(rng: random.Random, shape, scale: int = 3, nonzero: bool = True) -> np.ndarray:
    """Seeded rationals p/q, |p| <= scale, 1 <= q <= scale (p != 0 if ``nonzero``)."""
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        num = 0
        while num == 0:
            num = rng.randint(-scale, scale)
            if not nonzero:
                break
        out[idx] = Fraction(num, rng.randint(1, scale))
    return out


def native_point(arch: Architecture, seed: int, scale: int = 3) -> dict[str, np.ndarray]:
    """Generic rational native weights (no zero entries), as a dict Q1, K1, V1, ..."""
    rng = random.Random(seed)
    return {name: rational_array(rng, shape, scale) for name, shape in arch.native_shapes()}


def effective_point(arch: Architecture, seed: int) -> dict[str, np.ndarray]:
    """The reduction of :func:`native_point` (so it is realisable), as L, M1, ..."""
    from symattn.model.parameters import NativeParams

    theta = native_point(arch, seed)
    D = arch.depth
    native = NativeParams(tuple(theta[f"Q{i}"] for i in range(1, D + 1)),
                          tuple(theta[f"K{i}"] for i in range(1, D + 1)),
                          tuple(theta[f"V{i}"] for i in range(1, D + 1)))
    return reduction(native).as_dict()


def to_residues(x: np.ndarray, p: int) -> np.ndarray:
    """Reduce an object array of fmpq mod p (denominators must be units mod p)."""
    out = np.empty(x.shape, dtype=np.int64)
    for idx, v in np.ndenumerate(x):
        num, den = int(v.p), int(v.q)
        assert den % p != 0
        out[idx] = num * pow(den, -1, p) % p
    return out


def to_sympy(v) -> sympy.Rational:
    return sympy.Rational(int(v.p), int(v.q))


def graph_and_values(kind: str, arch: Architecture, seed: int):
    if kind == "native":
        return native_network(arch), native_point(arch, seed)
    return effective_network(arch), effective_point(arch, seed)


def evaluate_at(graph, algebra, params: dict, X) -> np.ndarray:
    values = {name: algebra.const(v) for name, v in params.items()}
    values["X"] = X
    return evaluate(graph, algebra, values)["F"]


ARCHITECTURES = {
    # depth 1 and 2, equal and rectangular widths, rank 1 and 2
    "D1": lambda phi: Architecture.uniform(1, 2, 1, 3, phi),
    "D2": lambda phi: Architecture.uniform(2, 2, [1, 2], 3, phi),
    "D2rect": lambda phi: Architecture((2, 3, 2), (2, 1), 3, (Normalizer(phi),) * 2),
}


# ---------------------------------------------- Float64 vs MPMath vs Symbolic
_MPMATH_FUNCTIONS = {sympy.exp: mpmath.exp, sympy.cosh: mpmath.cosh, sympy.tanh: mpmath.tanh}


def mp_value(expr: sympy.Expr, cache: dict) -> mpmath.mpf:
    """Evaluate an exact sympy expression at the current mpmath precision.

    Shared subexpressions (the symbolic network repeats each layer's output in
    every later score) are evaluated once; ``sympy.N`` would expand the tree.
    """
    if expr in cache:
        return cache[expr]
    if expr.is_Rational:
        value = mpmath.mpf(int(expr.p)) / int(expr.q)
    elif expr.is_Add:
        value = mpmath.fsum(mp_value(a, cache) for a in expr.args)
    elif expr.is_Mul:
        value = mpmath.fprod(mp_value(a, cache) for a in expr.args)
    elif expr.is_Pow:
        value = mp_value(expr.base, cache) ** mp_value(expr.exp, cache)
    elif expr.func in _MPMATH_FUNCTIONS:
        value = _MPMATH_FUNCTIONS[expr.func](mp_value(expr.args[0], cache))
    else:  # pragma: no cover - a normalizer this helper does not know
        raise TypeError(f"cannot evaluate {expr.func}")
    cache[expr] = value
    return value


@pytest.mark.parametrize("phi", ["exp", "cosh", "1+s^2", "logistic"])
@pytest.mark.parametrize("shape", ["D1", "D2rect"])
@pytest.mark.parametrize("kind", ["effective", "native"])
def test_numerical_algebras_agree_with_symbolic(kind, shape, phi):
    arch = ARCHITECTURES[shape](phi)
    graph, params = graph_and_values(kind, arch, seed=7)
    # scale the weights down so that every score stays moderate (|s| < ~10)
    params = {k: v / (4 if k[0] in "QKM" else 1) for k, v in params.items()}
    Y = rational_array(random.Random(11), (3 - arch.depth, arch.widths[0], arch.tokens))
    exact = evaluate_at(graph, Symbolic(), params, Symbolic().const(Y))
    mp = evaluate_at(graph, MPMath(50), params, MPMath(50).const(Y))
    fl = evaluate_at(graph, Float64(), params, Float64().const(Y))
    assert exact.shape == mp.shape == fl.shape == Y.shape[:1] + (arch.widths[-1], arch.tokens)
    # the symbolic result is exact: rationals and phi at exact arguments, no floats
    assert all(not e.has(sympy.Float) for e in exact.flat)
    with mpmath.workdps(80):
        cache: dict = {}
        reference = [mp_value(e, cache) for e in exact.flat]
        scale = max(1, max(abs(v) for v in reference))
        # MPMath at 50 digits: a depth-two graph of a few hundred roundings loses
        # at most a couple of digits, so 1e-45 relative to the output scale
        assert max(abs(a - b) for a, b in zip(mp.flat, reference)) < 1e-45 * scale
        # float64: unit roundoff 1.1e-16 times a modest amplification by the same
        # graph (moderate scores, softmax denominators bounded away from zero)
        assert max(abs(a - b) for a, b in zip(fl.flat, reference)) < 1e-12 * scale
        # and the three are not trivially equal: the outputs vary
        assert max(reference) - min(reference) > 0.1


def test_symbolic_is_exact_for_polynomial_phi():
    """For phi = 1 + s^2 every output is rational; check one against Fractions by hand."""
    M = np.array([[Fraction(1, 2), Fraction(-1)], [Fraction(1, 3), Fraction(2)]], dtype=object)
    X = np.array([[Fraction(1), Fraction(-2)], [Fraction(3, 4), Fraction(1, 5)]], dtype=object)
    arch = Architecture.uniform(1, 2, 1, 2, "1+s^2")
    L = np.array([[1, 0], [0, 1]], dtype=object)
    S = Symbolic()
    out = evaluate(effective_network(arch), S, {"X": S.const(X), "L": S.const(L), "M1": S.const(M)})["F"]
    Z = X.T.dot(M).dot(X)
    W = 1 + Z * Z
    A = W / W.sum(axis=1, keepdims=True)
    expected = X.dot(A.T)
    for idx, e in np.ndenumerate(out):
        assert e.is_Rational and e == sympy.Rational(expected[idx].numerator, expected[idx].denominator)


# ------------------------------------------------ exact vs modular series
def ray_input(algebra, Y):
    """The input ray X = rho Y as a series (rho is the series variable)."""
    return algebra.series([np.zeros(Y.shape, dtype=int), Y])


@pytest.mark.parametrize("phi", ["exp", "cosh", "gauss", "1+s^2", "exp(s^2+s^3)", "logistic"])
@pytest.mark.parametrize("kind", ["effective", "native"])
@pytest.mark.parametrize("shape", ["D1", "D2rect"])
@pytest.mark.parametrize("p", [DEFAULT_PRIME, SECOND_PRIME])
def test_exact_series_reduce_to_modular_series(kind, shape, phi, p):
    arch = ARCHITECTURES[shape](phi)
    graph, params = graph_and_values(kind, arch, seed=3)
    Y = rational_array(random.Random(5), (3, arch.widths[0], arch.tokens))
    Q, F = exact_series(9), modular_series(9, p)
    exact = evaluate_at(graph, Q, params, ray_input(Q, Y))
    modular = evaluate_at(graph, F, params, ray_input(F, Y))
    assert exact.shape == modular.shape == (9, 3, arch.widths[-1], arch.tokens)
    assert np.array_equal(to_residues(exact, p), modular)
    # the comparison is not vacuous: the high orders carry the scores
    assert any(v != 0 for v in exact[3:].flat)


@pytest.mark.parametrize("phi", ["exp", "cosh"])
def test_exact_tangents_reduce_to_modular_tangents(phi):
    arch = Architecture((2, 3, 2), (1, 2), 2, (Normalizer(phi),) * 2)
    params = native_point(arch, seed=2)
    Y = rational_array(random.Random(1), (2, 2, 2))
    results = []
    for B in (exact_series(7), modular_series(7)):
        values = {name: B.const(v) for name, v in params.items()}
        values["X"] = ray_input(B, Y)  # a series input, not differentiated
        graph = native_network(arch)
        results.append((evaluate(graph, B, values)["F"], jacobian(graph, B, values, list(params), verify=0)))
    (exact, exact_J), (modular, modular_J) = results
    assert exact_J.shape == (7, 2 * 2 * 2, arch.native_size)
    assert np.array_equal(to_residues(exact, DEFAULT_PRIME), modular)
    assert np.array_equal(to_residues(exact_J, DEFAULT_PRIME), modular_J)
    assert any(v != 0 for v in exact_J.flat)


# --------------------------------------------- exact series vs sympy.series
def symengine_network(graph, params: dict, Y: np.ndarray, rho) -> np.ndarray:
    """The symbolic network (symengine backend) at X = rho Y."""
    S = Symbolic(backend="symengine")
    values = {name: S.const(as_sympy(v)) for name, v in params.items()}
    values["X"] = S.const(as_sympy(Y)) * rho
    return evaluate(graph, S, values)["F"]


def as_sympy(a: np.ndarray) -> np.ndarray:
    """Fractions (or symbols) to sympy numbers, elementwise."""
    out = np.empty(a.shape, dtype=object)
    for idx, v in np.ndenumerate(a):
        out[idx] = sympy.Rational(v.numerator, v.denominator) if isinstance(v, Fraction) else v
    return out


def coefficients_of(poly: sympy.Expr, var: sympy.Symbol, order: int) -> list[sympy.Expr]:
    poly = sympy.expand(poly)
    return [poly.coeff(var, j) for j in range(order)]


# sympy.series on the nested depth-two expressions of cosh and the logistic
# normalizer takes 5-20 s each: those cases run with --runslow only
SYMPY_CASES = [
    pytest.param(depth, phi, marks=[pytest.mark.slow] if depth == 2 and phi in ("cosh", "logistic") else [])
    for depth in (1, 2) for phi in ("exp", "cosh", "1+s^2", "logistic")
]


@pytest.mark.parametrize("depth, phi", SYMPY_CASES)
@pytest.mark.parametrize("kind", ["effective", "native"])
def test_exact_series_match_sympy_series(kind, depth, phi):
    arch = Architecture.uniform(depth, 2, 1, 2, phi)
    graph, params = graph_and_values(kind, arch, seed=4 + depth)
    Y = rational_array(random.Random(2), (2, 2))
    order = 6  # coefficients of rho^0 .. rho^5
    expr = sympy.sympify(symengine_network(graph, params, Y, symengine.Symbol("rho"))[1, 0])
    expected = coefficients_of(sympy.series(expr, RHO, 0, order).removeO(), RHO, order)
    assert all(c.is_Rational for c in expected)
    A = exact_series(order)
    got = [to_sympy(c) for c in evaluate_at(graph, A, params, ray_input(A, Y))[:, 1, 0]]
    assert got == expected
    assert any(c != 0 for c in got[2:])  # the normalizer enters at rho^3


@pytest.mark.parametrize("phi", ["exp", "cosh", "gauss", "1+s^2", "exp(s^2+s^3)", "logistic"])
@pytest.mark.parametrize("depth", [1, 2, pytest.param(3, marks=pytest.mark.slow)])
def test_exact_series_match_symengine_series(depth, phi):
    """Every output entry, orders up to rho^8, rectangular widths, n = 3."""
    widths = (2, 3, 2, 3)[: depth + 1]
    arch = Architecture(widths, (1, 2, 1)[:depth], 3, (Normalizer(phi),) * depth)
    graph, params = graph_and_values("native", arch, seed=depth)
    Y = rational_array(random.Random(8), (2, 3))
    order = 9
    rho = symengine.Symbol("rho")
    exprs = symengine_network(graph, params, Y, rho)
    A = exact_series(order)
    got = evaluate_at(graph, A, params, ray_input(A, Y))
    for idx, expr in np.ndenumerate(exprs):
        expected = coefficients_of(sympy.sympify(symengine.series(expr, rho, 0, order)), RHO, order)
        assert [to_sympy(c) for c in got[(slice(None),) + idx]] == expected
    assert any(v != 0 for v in got[3:].flat)


@pytest.mark.parametrize("phis, name", [
    (["exp"], "K1"), (["cosh"], "Q1"), (["exp", "exp"], "K2"), (["logistic", "exp"], "Q1"),
    pytest.param(["exp", "cosh"], "V1", marks=pytest.mark.slow),  # 25 s in symengine.series
])
def test_tangent_matches_sympy_diff(phis, name):
    """d F[1,1] / d name[1,0] at a rational point, as a series along X = rho Y.

    At depth two the last score first enters at rho^7 (the sharp jet order
    2k 3^(D-1) + 1 of Thm. 3), so the series go to rho^9.
    """
    depth = len(phis)
    arch = Architecture.uniform(depth, 2, 1, 2, phis)
    params = native_point(arch, seed=9)
    Y = rational_array(random.Random(3), (2, 2))
    w = sympy.Symbol("w")
    entry, out_entry = (1, 0), (1, 1)
    w0 = sympy.Rational(params[name][entry].numerator, params[name][entry].denominator)
    symbolic_params = dict(params)
    symbolic_params[name] = params[name].copy()
    symbolic_params[name][entry] = w
    rho = symengine.Symbol("rho")
    expr = sympy.sympify(symengine_network(native_network(arch), symbolic_params, Y, rho)[out_entry])
    derivative = sympy.diff(expr, w).subs(w, w0)
    order = 10 if depth == 2 else 6
    if depth == 1:
        expected = coefficients_of(sympy.series(derivative, RHO, 0, order).removeO(), RHO, order)
    else:  # sympy.series needs ~40 s on the nested expression; symengine expands it
        expected = coefficients_of(sympy.sympify(symengine.series(derivative, rho, 0, order)), RHO, order)

    B = exact_series(order)
    Tg = Tangent(B, 1)
    values = {k: Tg.const(v) for k, v in params.items()}
    seed = np.zeros((1,) + params[name].shape, dtype=int)
    seed[(0,) + entry] = 1
    values[name] = Tg.variable(B.const(params[name]), B.const(seed))
    values["X"] = Dual(ray_input(B, Y))
    out = evaluate(native_network(arch), Tg, values)["F"]
    assert out.tangent.shape == (order, 1, 2, 2)
    got = [to_sympy(c) for c in out.tangent[(slice(None), 0) + out_entry]]
    assert got == expected
    assert any(c != 0 for c in got)
    # the value part is the plain series evaluation
    plain = evaluate_at(native_network(arch), B, params, ray_input(B, Y))
    assert np.array_equal(out.value, plain)


def test_symengine_backend_embeds_fractions():
    """The model's parameters are Fractions; every algebra's const must take them."""
    S = Symbolic(backend="symengine")
    assert sympy.sympify(S.const([Fraction(1, 3)])[0]) == sympy.Rational(1, 3)


# -------------------------------------------------- series primitives vs sympy
def series_poly(coeffs, var=T):
    return sum(to_sympy(c) * var**j for j, c in enumerate(coeffs))


def truncated(expr, order, var=T):
    return [sympy.expand(expr).coeff(var, j) for j in range(order)]


def test_mul_matmul_reciprocal_match_sympy():
    rng = random.Random(17)
    N = 6
    A = exact_series(N)
    x = A.series([rational_array(rng, (2, 3), nonzero=False) for _ in range(N)])
    y = A.series([rational_array(rng, (3, 2), nonzero=False) for _ in range(N)])
    z = A.series([rational_array(rng, (2, 3), nonzero=False) for _ in range(N)])
    X = sympy.Matrix(2, 3, lambda i, j: series_poly(x[:, i, j]))
    Yy = sympy.Matrix(3, 2, lambda i, j: series_poly(y[:, i, j]))
    Z = sympy.Matrix(2, 3, lambda i, j: series_poly(z[:, i, j]))
    prod = A.matmul(x, y)
    expected = X * Yy
    for i in range(2):
        for j in range(2):
            assert [to_sympy(c) for c in prod[:, i, j]] == truncated(expected[i, j], N)
    had = A.mul(x, z)
    for i in range(2):
        for j in range(3):
            assert [to_sympy(c) for c in had[:, i, j]] == truncated(X[i, j] * Z[i, j], N)
    # a unit: make the constant terms nonzero
    u = A.add(x, A.const(np.full((2, 3), 5, dtype=object)))
    assert all(v != 0 for v in u[0].flat)
    inv = A.reciprocal(u)
    for i in range(2):
        for j in range(3):
            ref = sympy.series(1 / series_poly(u[:, i, j]), T, 0, N).removeO()
            assert [to_sympy(c) for c in inv[:, i, j]] == truncated(ref, N)
    # and it really is the inverse mod t^N
    one = A.mul(u, inv)
    assert all(v == 1 for v in one[0].flat) and all(v == 0 for v in one[1:].flat)


def test_broadcasting_of_series_products():
    """A batch of matrices times one matrix, and an elementwise row scaling."""
    rng = random.Random(4)
    A = exact_series(4)
    x = A.series([rational_array(rng, (5, 2, 3)) for _ in range(4)])
    y = A.series([rational_array(rng, (3, 2)) for _ in range(4)])
    r = A.series([rational_array(rng, (2, 1)) for _ in range(4)])
    prod = A.matmul(x, y)
    assert A.shape(prod) == (5, 2, 2)
    scaled = A.mul(x, r)
    assert A.shape(scaled) == (5, 2, 3)
    for b in range(5):
        Xb = sympy.Matrix(2, 3, lambda i, j, b=b: series_poly(x[:, b, i, j]))
        Yb = sympy.Matrix(3, 2, lambda i, j: series_poly(y[:, i, j]))
        expected = Xb * Yb
        for i in range(2):
            for j in range(2):
                assert [to_sympy(c) for c in prod[:, b, i, j]] == truncated(expected[i, j], 4)
        for i in range(2):
            assert [to_sympy(c) for c in scaled[:, b, i, 2]] == truncated(
                Xb[i, 2] * series_poly(r[:, i, 0]), 4)


@pytest.mark.parametrize("base", [Float64(), exact_series(3)])
def test_tangent_of_a_sum_broadcasts_with_the_value(base):
    """A sum where only the operand that broadcasts moves: its tangent grows to the value's shape,
    so a product after it contracts (a tangent of shape ``(m, 3, 1)`` on a value ``(2, 3, 3)`` made
    the next matmul fail when a kernel product moved only a LayerNorm's shift)."""
    T = Tangent(base, 2)
    col = np.array([[1], [2], [3]])
    seed = np.array([np.eye(3, dtype=int)[:, :1], np.eye(3, dtype=int)[:, 1:2]])
    if hasattr(base, "order"):
        x = T.variable(base.const(col), base.const(seed))
    else:
        x = T.variable(col.astype(float), seed.astype(float))
    grid = T.const(np.ones((2, 3, 3), dtype=int))
    total = T.add(x, grid)  # (3, 1) + (2, 3, 3) -> (2, 3, 3), only x moves
    assert tuple(base.shape(total.tangent)) == (2, 2, 3, 3)
    out = T.matmul(total, T.const(np.ones((3, 3), dtype=int)))
    tangent = T.full(out)
    first = tangent[0] if hasattr(base, "order") else tangent
    # d/dx_0 of (x + 1) @ ones: x_0 is added to all of row 0, which the product sums: 3 there
    assert [[float(v) for v in row] for row in np.asarray(first[0, 1], dtype=object)] == \
        [[3.0, 3.0, 3.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]


@pytest.mark.parametrize("phi", ["exp", "cosh", "gauss", "1+s^2", "exp(s^2+s^3)", "logistic"])
@pytest.mark.parametrize("derivative", [0, 1, 2])
def test_phi_of_series_matches_sympy(phi, derivative):
    """phi^(j)(x(t)) for x with mixed valuations 1, 2, 3 and a zero entry."""
    N = 7
    A = exact_series(N)
    normalizer = Normalizer(phi)
    rng = random.Random(derivative)
    coeffs = [np.zeros(4, dtype=object) for _ in range(N)]
    for j in range(N):
        coeffs[j] = rational_array(rng, (4,), nonzero=False)
    coeffs[0][:] = 0
    coeffs[1][1:] = 0  # entry 1 has valuation >= 2
    coeffs[2][2:] = 0  # entry 2 has valuation >= 3
    for j in range(N):
        coeffs[j][3] = 0  # entry 3 is zero
    coeffs[1][0] = Fraction(2, 3)
    coeffs[2][1] = Fraction(-1, 2)
    coeffs[3][2] = Fraction(5, 7)
    x = A.series(coeffs)
    got = A.phi(x, normalizer, derivative=derivative)
    fprime = sympy.diff(normalizer.expr, normalizer.s, derivative)
    for e in range(4):
        expected = reference_composition(fprime, normalizer.s, series_poly(x[:, e]), N)
        assert [to_sympy(c) for c in got[:, e]] == expected
    assert [to_sympy(c) for c in got[:, 3]] == [fprime.subs(normalizer.s, 0)] + [0] * (N - 1)
    # without the valuation-one entry the Horner scheme stops earlier: same answer
    assert np.array_equal(A.phi(x[:, 1:], normalizer, derivative=derivative), got[:, 1:])
    assert np.array_equal(A.phi(x[:, 2:], normalizer, derivative=derivative), got[:, 2:])
    assert np.array_equal(A.phi(x[:, 3:], normalizer, derivative=derivative), got[:, 3:])  # all zero


def reference_composition(f: sympy.Expr, s: sympy.Symbol, p: sympy.Expr, N: int) -> list:
    """Coefficients of f(p(t)) mod t^N by sympy.series.

    sympy.series of powers of tanh(p(t)) takes minutes, so a polynomial in
    tanh(s) is composed with the series of tanh(p(t)) (by sympy.series) instead.
    """
    if f.has(sympy.tanh):
        u = sympy.Symbol("u")
        g = f.subs(sympy.tanh(s), u)
        assert not g.has(s)
        tanh_series = sympy.series(sympy.tanh(p), T, 0, N).removeO()
        return coefficients_of(sympy.expand(g.subs(u, tanh_series)), T, N)
    return coefficients_of(sympy.series(f.subs(s, p), T, 0, N).removeO(), T, N)


# ------------------------------------------- Q vs F_p on hypothesis-drawn series
fractions = st.fractions(min_value=-50, max_value=50, max_denominator=30)
series_lists = st.lists(fractions, min_size=1, max_size=8)


def pad(cs, N):
    return (list(cs) + [Fraction(0)] * N)[:N]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=series_lists, b=series_lists, N=st.integers(1, 8), p=st.sampled_from([DEFAULT_PRIME, SECOND_PRIME, 10007]))
def test_mul_and_reciprocal_commute_with_reduction_mod_p(a, b, N, p):
    Q, F = exact_series(N), modular_series(N, p)
    a, b = pad(a, N), pad(b, N)
    xq = Q.series([[c] for c in a])
    yq = Q.series([[c] for c in b])
    xf = F.series([[c] for c in a])
    yf = F.series([[c] for c in b])
    assert np.array_equal(to_residues(xq, p), xf)
    assert np.array_equal(to_residues(Q.mul(xq, yq), p), F.mul(xf, yf))
    assert np.array_equal(to_residues(Q.sub(xq, yq), p), F.sub(xf, yf))
    if a[0] != 0:
        assume(a[0].numerator % p != 0)
        inv = Q.reciprocal(xq)
        assert np.array_equal(to_residues(inv, p), F.reciprocal(xf))
        one = Q.mul(inv, xq)
        assert one[0, 0] == 1 and all(v == 0 for v in one[1:].flat)


@settings(max_examples=30, deadline=None)
@given(data=st.data(), N=st.integers(1, 6), m=st.integers(1, 3), k=st.integers(1, 3))
def test_matmul_commutes_with_reduction_mod_p(data, N, m, k):
    entries = st.lists(fractions, min_size=N * m * k, max_size=N * m * k)
    xa = np.array(data.draw(entries), dtype=object).reshape(N, m, k)
    ya = np.array(data.draw(entries), dtype=object).reshape(N, k, m)
    Q, F = exact_series(N), modular_series(N)
    assert np.array_equal(to_residues(Q.matmul(Q.series(list(xa)), Q.series(list(ya))), DEFAULT_PRIME),
                          F.matmul(F.series(list(xa)), F.series(list(ya))))


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("algebra", [exact_series(4), modular_series(4)], ids=["QQ", "GFp"])
def test_phi_of_nonzero_constant_term_raises(algebra):
    x = algebra.series([[0, 1], [1, 0]])  # entries t and 1
    with pytest.raises(SymattnError, match="nonzero constant term"):
        algebra.phi(x, Normalizer("exp"))
    Tg = Tangent(algebra, 1)
    with pytest.raises(SymattnError, match="nonzero constant term"):
        Tg.phi(Tg.variable(x, algebra.const([[1, 1]])), Normalizer("cosh"))


@pytest.mark.parametrize("algebra", [exact_series(4), modular_series(4)], ids=["QQ", "GFp"])
def test_reciprocal_of_non_unit_raises(algebra):
    x = algebra.series([[1, 0, 2], [1, 1, 1]])  # 1 + t, t, 2 + t
    with pytest.raises(SymattnError, match="non-unit"):
        algebra.reciprocal(x)
    with pytest.raises(SymattnError, match="non-unit"):
        Tangent(algebra, 2).reciprocal(Tangent(algebra, 2).const([0]))


def test_network_on_nonzero_scores_raises():
    """A series input whose scores have a constant term is refused, not mis-expanded."""
    arch = Architecture.uniform(1, 2, 1, 2, "exp")
    params = effective_point(arch, seed=1)
    A = exact_series(3)
    Y = rational_array(random.Random(0), (2, 2))
    with pytest.raises(SymattnError, match="nonzero constant term"):
        evaluate_at(effective_network(arch), A, params, A.const(Y))


def test_series_rejects_bad_order_and_prime():
    with pytest.raises(SymattnError, match="order"):
        exact_series(0)
    with pytest.raises(SymattnError, match="prime"):
        modular_series(3, p=2**27)
    from symattn.core.errors import UnluckyPrime, Undecided

    with pytest.raises(UnluckyPrime, match="divisible by p") as caught:  # undecided, not bad input
        modular_series(3, p=7).const([Fraction(1, 14)])
    assert isinstance(caught.value, Undecided) and not isinstance(caught.value, SymattnError)
