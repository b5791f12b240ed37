"""Tests of :mod:`symattn.analyses.geometry`: normal-form chart, ranks of D pi, residual ideals, thresholds."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy

from symattn.core.linalg import Matrix
from symattn.core.errors import SymattnError
from symattn.analyses.dimension import gauge_bound
from symattn.analyses.geometry import (chart_rank, consensus_derivatives, first_zero_ideal, from_chart, native_suffix_free,
                              ideal_intersection, loss_decay, minimal_primes, newton_threshold,
                              normal_form_chart, reduction_jacobian, residual_generators)
from symattn.model.architecture import Architecture
from symattn.model.parameters import NativeParams, random_native, reduction


def _same(a: NativeParams, b: NativeParams) -> bool:
    return all((x == y).all() for x, y in zip(a.as_dict().values(), b.as_dict().values()))


@pytest.mark.parametrize("depth, d, rank, seed", [(1, 2, 1, 0), (2, 3, [1, 3], 1), (3, 2, 2, 5), (4, 2, 1, 2)])
def test_chart_round_trip_and_scores(depth: int, d: int, rank, seed: int) -> None:
    arch = Architecture.uniform(depth, d, rank, 2, "exp")
    theta = random_native(arch, seed=seed)
    chart = normal_form_chart(theta)
    assert _same(from_chart(chart), theta)
    eta = reduction(theta)
    assert (eta.L == chart.L).all() and all((m == s).all() for m, s in zip(eta.M, chart.scores()))
    assert len(chart.P) == depth - 1
    assert all(isinstance(v, Fraction) for v in chart.Qt[-1].reshape(-1))


@pytest.mark.parametrize("depth, d, rank", [(2, 2, 1), (3, 3, [1, 2, 3]), (2, 3, [3, 1])])
def test_rank_and_fiber_dimension(depth: int, d: int, rank) -> None:
    arch = Architecture.uniform(depth, d, rank, 2, "exp")
    theta = random_native(arch, seed=7)
    r = Matrix.rational(reduction_jacobian(arch, theta)).rank()
    assert r == d * d + sum(ri * (2 * d - ri) for ri in arch.ranks)
    assert chart_rank(normal_form_chart(theta)) == r
    assert gauge_bound(arch, theta) == r             # the gauges span ker D pi
    assert arch.native_size - r == (depth - 1) * d * d + sum(ri * ri for ri in arch.ranks)


def test_rank_drops_at_deficient_factor() -> None:
    arch = Architecture.uniform(1, 3, 2, 2, "exp")
    theta = random_native(arch, seed=1)
    theta.Q[0][:, 1] = theta.Q[0][:, 0]          # rank-one query factor: D mu loses rank
    assert Matrix.rational(reduction_jacobian(arch, theta)).rank() == 9 + (2 * 3 + 1 * 3 - 1 * 2)


def test_singular_value_is_refused() -> None:
    arch = Architecture.uniform(2, 2, 1, 2, "exp")
    theta = random_native(arch, seed=0)
    theta.V[1][1] = theta.V[1][0]
    with pytest.raises(SymattnError, match="V2 is singular .*invertible value matrices"):
        normal_form_chart(theta)


def test_rectangular_value_is_refused() -> None:
    arch = Architecture((2, 3), (1,), 2, Architecture.uniform(1, 2, 1, 2).normalizers)
    with pytest.raises(SymattnError, match="V1 has shape"):
        normal_form_chart(random_native(arch, seed=0))


def test_singular_chart_point_is_refused() -> None:
    chart = normal_form_chart(random_native(Architecture.uniform(2, 2, 1, 2, "exp"), seed=0))
    chart.P[0][:] = 0
    with pytest.raises(SymattnError, match="P1 is singular"):
        from_chart(chart)


def test_unknown_block() -> None:
    arch = Architecture.uniform(1, 2, 1, 2, "exp")
    with pytest.raises(SymattnError, match="unknown native blocks"):
        reduction_jacobian(arch, random_native(arch), ["Q7"])


def test_first_zero_ideal_and_control() -> None:
    arch = Architecture.uniform(2, 1, 1, 2, "exp")
    r = first_zero_ideal(arch, 1)
    assert (r.visible_rank, r.visible_parameters, r.suffix_parameters, r.suffix_zero) == (2, 2, 1, True)
    assert first_zero_ideal(arch, 1, zero=False).suffix_zero is False


@pytest.mark.parametrize("s, normalizer, error", [(0, "exp", "first zero layer"), (3, "exp", "first zero layer"),
                                                  (1, "cosh", "slope 0")])
def test_first_zero_ideal_bad_input(s: int, normalizer: str, error: str) -> None:
    with pytest.raises(SymattnError, match=error):
        first_zero_ideal(Architecture.uniform(2, 1, 1, 2, normalizer), s)


def test_native_suffix_free_and_bad_layer() -> None:
    arch = Architecture.uniform(3, 1, 1, 2, "exp")
    assert native_suffix_free(arch, 1, seed=2) is True
    assert native_suffix_free(arch, 1, seed=2, zero=False) is False
    with pytest.raises(SymattnError, match="a suffix needs"):
        native_suffix_free(arch, 3)


def test_consensus_derivatives() -> None:
    assert consensus_derivatives("exp", 1, 2) == (True, True)


def test_serial_ideal_is_intersection() -> None:
    gens, xs = residual_generators(2, 2)
    q1, k1 = xs[0:2], xs[2:4]
    assert {x for g in gens for x in g.free_symbols} == set(q1 + k1)
    G = list(sympy.groebner(gens, *xs, order="grevlex").exprs)
    assert G == ideal_intersection(q1, k1, xs)
    assert [set(p) for p in minimal_primes(gens, xs)] == [set(q1), set(k1)]


def test_independent_components() -> None:
    gens, xs = residual_generators(3, 1, range(1, 4))
    assert len(minimal_primes(gens, xs)) == 8


def test_bad_ideal_input() -> None:
    x, y = sympy.symbols("x y")
    with pytest.raises(SymattnError, match="squarefree monomial"):
        minimal_primes([x + y], [x, y])
    with pytest.raises(SymattnError, match="nonempty subset"):
        residual_generators(2, 2, (3,))
    with pytest.raises(SymattnError, match="squared monomials"):
        newton_threshold(x * y, [x, y])


@pytest.mark.parametrize("K, expected", [("x**2 + y**4", (Fraction(3, 4), 1)), ("x**2*y**2 + z**2", (Fraction(1), 2)),
                                         ("x**4*y**2", (Fraction(1, 4), 1)), ("x**2*y**2 + x**2*z**2", (Fraction(1, 2), 1))])
def test_newton_threshold_known_cases(K: str, expected: tuple) -> None:
    xs = sympy.symbols("x y z")
    assert newton_threshold(sympy.sympify(K), list(xs)) == expected


def test_serial_and_independent_thresholds() -> None:
    gens, xs = residual_generators(2, 2)
    assert newton_threshold(sum(g**2 for g in gens), xs) == (Fraction(1), 2)
    gens, xs = residual_generators(2, 2, (1, 2))
    assert newton_threshold(sum(g**2 for g in gens), xs) == (Fraction(2), 3)


def test_loss_decay_slope_rises_towards_threshold() -> None:
    slopes = [float(y) for _, y in loss_decay(2, [10**4, 10**8], digits=20)]
    assert 0.85 < slopes[0] < slopes[1] < 1.0


def test_proof_script_runs() -> None:
    from symattn.proofs import t5_residual_ideal

    der = t5_residual_ideal.run()
    assert der.passed and der.cases >= 20
    assert np.all([c.passed for c in der.checks])
