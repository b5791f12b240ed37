"""Tests of :mod:`symattn.analyses.jets` and ``symattn jet``: sharp degrees, adaptive orders, inverse."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from symattn.core.algebras import exact_series, modular_series
from symattn.cli import main
from symattn.core.errors import SymattnError
from symattn.theorems.formulas import adaptive_degree, all_tuples_degree, prop_c1_degree
from symattn.analyses.inverse import inverse_chart, local_inverse, taylor_observation
from symattn.analyses.jets import (
    first_dependence,
    generic_effective,
    ray_jacobian,
    sharp_degree,
)
from symattn.core.linalg import SeriesMatrix
from symattn.model.architecture import Architecture
from symattn.model.parameters import EffectiveParams, random_bank


def _equal(a: EffectiveParams, b: EffectiveParams) -> bool:
    return all((x == y).all() for x, y in zip(a.as_dict().values(), b.as_dict().values()))


@pytest.mark.parametrize("depth, expected", [(1, 3), (2, 7), (3, 19)])
def test_softmax_sharp_degrees(depth: int, expected: int) -> None:
    r = sharp_degree(Architecture.uniform(depth, 1, 1, 2, "exp"))
    assert (r.sharp_degree, r.lower_jets_independent_of_last, r.immersion) == (expected, True, True)
    assert r.profile[expected - 1] < r.parameters == r.profile[expected]


def test_sharp_degree_width_two_three_tokens_exact_method() -> None:
    r = sharp_degree(Architecture.uniform(2, 2, 1, 3, "exp"), method="exact")
    assert (r.sharp_degree, r.lower_jets_independent_of_last) == (7, True)


@pytest.mark.parametrize("spec", ["gauss", "exp,gauss", "gauss,exp", "exp(s^3),exp", "cosh,exp"])
def test_heterogeneous_degrees_match_prop_c1(spec: str) -> None:
    arch = Architecture.uniform(2, 1, 1, 2, spec)
    assert sharp_degree(arch).sharp_degree == prop_c1_degree(arch)


def test_prop_c1_formula_common_k() -> None:
    for k, spec in [(1, "exp"), (2, "gauss"), (3, "exp(s^3)")]:
        for D in (1, 2, 3):
            assert prop_c1_degree(Architecture.uniform(D, 1, 1, 2, spec)) == 2 * k * 3 ** (D - 1) + 1


@pytest.mark.parametrize("spec, skew", [("exp(s+s^2)", [True, False]), ("exp(s+s^4)", [True, False]),
                                        ("logistic", [False, True, False])])
def test_two_token_adaptive_orders(spec: str, skew: list[bool]) -> None:
    arch = Architecture.uniform(len(skew), 2, 2, 2, spec)
    eta = generic_effective(arch, seed=2, skew=skew)
    assert sharp_degree(arch, eta).sharp_degree == adaptive_degree(arch, skew)


def test_all_skew_prefix_meets_corollary_c2() -> None:
    arch = Architecture.uniform(2, 2, 2, 2, "exp(s+s^2)")
    eta = generic_effective(arch, seed=1, skew=[True, False])
    assert sharp_degree(arch, eta).sharp_degree == all_tuples_degree(2) == 11


def test_adaptive_degree_rejects_collapsing_skew_prefix() -> None:
    with pytest.raises(SymattnError, match="collapses"):
        adaptive_degree(Architecture.uniform(2, 2, 2, 2, "exp"), [True, False])


def test_corollary_4_1_skew_first_score_three_tokens() -> None:
    arch = Architecture.uniform(2, 2, 2, 3, "exp")
    r = sharp_degree(arch, generic_effective(arch, seed=4, skew=[True, False]))
    assert (r.sharp_degree, r.lower_jets_independent_of_last) == (7, True)


def test_corollary_4_1_zero_first_score() -> None:
    arch = Architecture.uniform(2, 2, 2, 3, "exp")
    eta = generic_effective(arch, seed=4, zero=(1,))
    Y = random_bank(arch, 3, seed=0)
    assert first_dependence(arch, eta, "M2", Y, 12) is None      # M_2 never enters
    assert first_dependence(arch, eta, "M1", Y, 12) == 3
    assert sharp_degree(arch, eta, blocks=["L", "M1"], hint=3).sharp_degree == 3


def test_zero_readout_hides_every_score() -> None:
    arch = Architecture.uniform(2, 2, 2, 2, "exp")
    eta = generic_effective(arch, seed=0)
    eta = EffectiveParams(eta.L * 0, eta.M)
    J = ray_jacobian(arch, eta, random_bank(arch, 2), modular_series(8), blocks=["M1", "M2"])
    assert not J.any()


def test_ray_jacobian_is_odd_in_rho_and_rank_profile_grows() -> None:
    arch = Architecture.uniform(1, 2, 1, 2, "exp")
    A = exact_series(5)
    J = ray_jacobian(arch, generic_effective(arch), random_bank(arch, 3), A)
    assert all(A.field.is_zero(J[N]).all() for N in (0, 2, 4))
    assert SeriesMatrix(A, J).rank_profile() == [0, 4, 4, 8, 8]


@pytest.mark.parametrize("depth, width, tokens", [(1, 2, 2), (2, 2, 2), (2, 2, 3), (3, 2, 2), (2, 3, 4)])
def test_rational_local_inverse_round_trip(depth: int, width: int, tokens: int) -> None:
    arch = Architecture.uniform(depth, width, width, tokens, "exp")
    for seed in (0, 7):
        eta = generic_effective(arch, seed=seed)
        Z, l = inverse_chart(arch, eta, seed)
        back = local_inverse(arch, taylor_observation(arch, eta, Z), Z, l)
        assert _equal(back, eta)


def test_local_inverse_other_slope_and_arbitrary_final_score() -> None:
    arch = Architecture.uniform(2, 2, 2, 2, "logistic")
    eta = generic_effective(arch, seed=3)
    eta = EffectiveParams(eta.L, (eta.M[0], np.array([[Fraction(1), Fraction(2)], [Fraction(-2), Fraction(0)]],
                                                      dtype=object)))
    Z, l = inverse_chart(arch, eta)
    assert _equal(local_inverse(arch, taylor_observation(arch, eta, Z), Z, l), eta)


def test_local_inverse_detects_a_wrong_observation() -> None:
    arch = Architecture.uniform(2, 2, 2, 2, "exp")
    eta = generic_effective(arch, seed=1)
    Z, l = inverse_chart(arch, eta)
    obs = taylor_observation(arch, eta, Z)
    obs[7] = obs[7] + 1
    assert not _equal(local_inverse(arch, obs, Z, l), eta)


def test_local_inverse_needs_nonzero_slope() -> None:
    arch = Architecture.uniform(1, 2, 2, 2, "gauss")
    with pytest.raises(SymattnError, match="h'\\(0\\) = 0"):
        local_inverse(arch, {}, np.eye(2, dtype=object), 0)


def test_undecided_beyond_max_degree() -> None:
    arch = Architecture.uniform(2, 1, 1, 2, "exp")
    r = sharp_degree(arch, max_degree=5, hint=3, rays=2)
    assert (r.sharp_degree, r.immersion) == (None, False)
    assert "undecided" in r.notes[0]


def test_cli_jet_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["jet", "--depth", "2", "--width", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["sharp_degree"], out["lower_jets_independent_of_last"], out["immersion"]) == (7, True, True)
    assert out["method"] == "modular" and out["formula"] == 7 and out["seconds"] >= 0


def test_cli_jet_table_and_skew(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["jet", "--depth", "2", "--width", "2", "--normalizer", "exp(s+s^2)", "--skew", "1"]) == 0
    out = capsys.readouterr().out
    assert "sharp degree N" in out and "11" in out and "Prop. C.3" in out


@pytest.mark.parametrize("argv, message", [
    (["--depth", "0", "--width", "1"], "argument --depth: expected an integer >= 1"),
    (["--depth", "2", "--width", "1", "--skew", "2"], "prefix layer"),
    (["--depth", "2", "--width", "1", "--skew", "x"], "layer numbers"),
    (["--depth", "3", "--width", "1", "--max-degree", "10"], "exceeds --max-degree"),
    (["--depth", "1", "--width", "1", "--tokens", "1"], "argument --tokens: expected an integer in [2, 4096]"),
    (["--depth", "7", "--width", "1"], "beyond the degree"),
    (["--depth", "1", "--width", "1", "--max-degree", "2000"], "argument --max-degree: expected an integer in [1, 600]"),
])
def test_cli_jet_bad_input(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main(["jet", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_softmax_depth_four_degree_55() -> None:
    r = sharp_degree(Architecture.uniform(4, 1, 1, 2, "exp"))
    assert (r.sharp_degree, r.lower_jets_independent_of_last) == (55, True)


def test_sharp_degree_adds_rays_instead_of_reporting_a_higher_degree():
    # Regression: a dense 4 x 4 tuple (the shipped example model) needs more than the
    # default rays at degree 19; too few rays used to report 21.
    from pathlib import Path

    from symattn.audit import load_model
    from symattn.model.parameters import reduction

    model = load_model(Path(__file__).resolve().parents[1] / "examples" / "example_model.npz")
    r = sharp_degree(model.arch, reduction(model.theta))
    assert (r.sharp_degree, r.lower_jets_independent_of_last) == (19, True)
