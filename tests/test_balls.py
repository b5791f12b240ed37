"""Binary64 balls (symattn.core.algebras.Float64Balls): every operation's radius is at least the
exact distance it must cover (checked in rationals on random and adversarial inputs), the
nonlinear maps go through python-flint balls, ReLU is exact where a ball's sign is certain and
undecided where it is not, and a Jacobian of a transformer stack lies inside the binary64 balls
wherever its python-flint balls at 30 digits say it is."""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np
import pytest

from symattn.core.algebras import BallAlgebra
from symattn.core.algebras.balls import Float64Balls, ReluUndecided
from symattn.core.algebras.functions import Elementwise
from symattn.model.architecture import Architecture

A = Float64Balls()


def _q(a: np.ndarray) -> np.ndarray:
    """The exact rationals of a binary64 array."""
    return np.vectorize(Fraction, otypes=[object])(a)


def _balls(rng: np.random.Generator, shape, tiny: bool = False) -> np.ndarray:
    """Random binary64 balls: midpoints of mixed scale (with ``tiny``, products that underflow), radii
    of mixed size and some exact zeros."""
    m = rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, size=shape)
    if tiny:
        m *= 10.0 ** rng.choice([0, -170, -310], size=shape)
    r = np.abs(rng.standard_normal(shape)) * 10.0 ** rng.integers(-18, -6, size=shape)
    r[rng.random(shape) < 0.3] = 0.0
    return np.stack([m, r])


def _covers(out: np.ndarray, exact_mid: np.ndarray, spread: np.ndarray) -> bool:
    """``|exact_mid - m| + spread <= r`` in rationals, entrywise (the radius covers the midpoint's
    rounding error plus the inputs' radii carried through)."""
    m, r = _q(out[0]), _q(out[1])
    return bool(np.all(np.abs(exact_mid - m) + spread <= r))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("tiny", [False, True])
def test_each_operation_covers_its_exact_distance(seed, tiny) -> None:
    """The radius formula of every vectorised operation, in rationals: a radius rounded down, a
    missing term or a missing underflow term fails here for some of these inputs."""
    rng = np.random.default_rng(seed)
    x, y = _balls(rng, (3, 4), tiny), _balls(rng, (3, 4), tiny)
    xm, xr, ym, yr = _q(x[0]), _q(x[1]), _q(y[0]), _q(y[1])
    with A.working():
        assert _covers(A.add(x, y), xm + ym, xr + yr)
        assert _covers(A.sub(x, y), xm - ym, xr + yr)
        assert _covers(A.mul(x, y), xm * ym, np.abs(xm) * yr + xr * (np.abs(ym) + yr))
        assert _covers(A.mul(x, y[:, :1]), xm * ym[:1], np.abs(xm) * yr[:1] + xr * (np.abs(ym[:1]) + yr[:1]))
        z = _balls(rng, (4, 5), tiny)
        zm, zr = _q(z[0]), _q(z[1])
        assert _covers(A.matmul(x, z), xm.dot(zm), np.abs(xm).dot(zr) + xr.dot(np.abs(zm) + zr))
        assert _covers(A.sum(x, -1), xm.sum(axis=-1, keepdims=True), xr.sum(axis=-1, keepdims=True))
        assert _covers(A.neg(x), -xm, xr)


@pytest.mark.parametrize("seed", range(4))
def test_matrix_products_where_radii_dominate_or_products_underflow(seed) -> None:
    """Two adversarial matrix products: zero midpoints with radii (the radius is then a BLAS sum alone,
    which may round down), and huge times subnormal midpoints (``g |B|`` underflows; its loss is
    amplified by ``|A|``, and the midpoint's own rounding error is far above the smallest normal)."""
    rng = np.random.default_rng(seed)
    a = np.stack([rng.standard_normal((3, 40)), np.abs(rng.standard_normal((3, 40)))])
    b = np.stack([np.zeros((40, 2)), np.abs(rng.standard_normal((40, 2))) * 1e-3])
    big = np.stack([rng.standard_normal((2, 3)) * 1e300, np.zeros((2, 3))])
    sub = np.stack([rng.standard_normal((3, 2)) * 1e-310, np.zeros((3, 2))])
    with A.working():
        for x, y in ((a, b), (b.transpose(0, 2, 1), a.transpose(0, 2, 1))):
            xm, xr, ym, yr = _q(x[0]), _q(x[1]), _q(y[0]), _q(y[1])
            assert _covers(A.matmul(x, y), xm.dot(ym), np.abs(xm).dot(yr) + xr.dot(np.abs(ym) + yr))
        assert _covers(A.matmul(big, sub), _q(big[0]).dot(_q(sub[0])), 0)


def test_rounding_that_goes_down_is_covered() -> None:
    """Sums whose midpoints round (1 + 2^-53 + 2^-80 is not binary64) and radii whose own sum rounds:
    the computed radius still covers the exact distance."""
    x = np.array([[1.0, 3.0], [2.0 ** -60, 1e-17]])
    y = np.array([[2.0 ** -53 + 2.0 ** -80, 2.0 ** -52 * 3], [2.0 ** -60 * 3, 3e-17]])
    with A.working():
        assert _covers(A.add(x[:, None], y[:, None]), _q(x[0]) + _q(y[0]), _q(x[1]) + _q(y[1]))
        assert _covers(A.mul(x[:, None], y[:, None]), _q(x[0]) * _q(y[0]),
                       np.abs(_q(x[0])) * _q(y[1]) + _q(x[1]) * (np.abs(_q(y[0])) + _q(y[1])))


def test_nonlinear_maps_go_through_python_flint_balls() -> None:
    """exp, 1/x and GELU of exact values: the binary64 ball contains the 60-digit value."""
    from symattn.model.normalizer import Normalizer

    with A.working():
        x = A.const(np.array([Fraction(1, 3), Fraction(-7, 2)], dtype=object))
        e = A.phi(x, Normalizer("exp")).enclosure()
        inv = A.reciprocal(x).enclosure()
        g = A.fn(x, Elementwise("gelu")).enclosure()
    with flint.ctx.workprec(200):
        for j, q in enumerate((flint.fmpq(1, 3), flint.fmpq(-7, 2))):
            v = flint.arb(q)
            gelu = v * (1 + (v / flint.arb(2).sqrt()).erf()) / 2
            for ball, exact in ((e, v.exp()), (inv, 1 / v), (g, gelu)):
                assert abs(exact - ball[0][j]) < ball[1][j] < 1e-14 * abs(ball[0][j]) + 1e-300


def test_relu_is_exact_where_the_sign_is_certain_and_undecided_where_not() -> None:
    relu = Elementwise("relu")
    with A.working():
        x = A.const(np.array([Fraction(1, 3), Fraction(-2)], dtype=object))
        assert [str(v) for v in A.fn(x, relu).balls] == [str(flint.arb(flint.fmpq(1, 3))), "0"]
        assert [(v.is_exact(), float(v.mid())) for v in A.fn(x, relu, 1).balls] == [(True, 1.0), (True, 0.0)]
        for zero in (A.const(np.array([0], dtype=object)), np.array([[0.5], [1.0]])):
            with pytest.raises(ReluUndecided):  # an exact zero, and a binary64 ball 0.5 +- 1
                A.fn(zero, relu)
    with pytest.raises(ReluUndecided):
        BallAlgebra(30).fn(np.array([flint.arb(0, 1e-3)], dtype=object), relu)


@pytest.mark.parametrize("activation", ["gelu", "relu"])
def test_jacobian_of_a_block_stack_inside_its_binary64_balls(activation) -> None:
    """The Jacobian of a 2-layer post-norm stack with biases, LayerNorm and an MLP: every entry's
    30-digit python-flint ball meets its binary64 ball (both enclose the exact derivative), and the
    binary64 radii are small (relative 1e-6 at most at this random point, whose scores and
    LayerNorm variances amplify the roundings; 1e-10 at the shipped example's weights)."""
    from symattn.analyses.numerics import observation_jacobian
    from symattn.model.parameters import random_bank, random_point

    arch = Architecture.uniform(2, 3, 2, 3, "exp", skip="value", norm="post", mlp=2, activation=activation,
                                bias=True)
    point = random_point(arch, seed=1)
    X = random_bank(arch, 2, seed=2)
    J = observation_jacobian(arch, point, X, Float64Balls(30))
    B = observation_jacobian(arch, point, X, BallAlgebra(30))
    assert J.shape == (2,) + B.shape
    far = [(i, j) for (i, j), b in np.ndenumerate(B)
           if abs(b - J[0][i, j]) > J[1][i, j]]  # the exact value is within both; the 30-digit ball is tiny
    assert far == []
    assert float((J[1] / (np.abs(J[0]) + 1)).max()) < 1e-6


def test_a_ball_function_keeps_pi_at_the_precision_of_each_call() -> None:
    """A lambdified ball function made at 30 digits and called at 300: its pi is made at 300 digits
    (a pi frozen at the first call made every later GELU derivative in the process 30-digit
    accurate, and the 300-digit numerical tier failed its reference check after the audit's)."""
    import sympy

    from symattn.core.algebras.balls import ball_function, digits_to_bits, precision

    s = sympy.Symbol("s")
    with precision(digits_to_bits(30)):
        f = ball_function(s, sympy.exp(-s**2 / 2) / sympy.sqrt(2 * sympy.pi))
    with precision(digits_to_bits(300)):
        assert f(flint.arb(1)).rad() < flint.arb(10) ** -290
