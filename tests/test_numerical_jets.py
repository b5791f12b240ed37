"""The numerical jet tier (``symattn jet --method numerical``, issue 24)."""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from symattn.analyses import numerical_jets
from symattn.analyses.jets import generic_effective, ray_jacobian, sharp_degree
from symattn.analyses.numerical_jets import GapRank, gap_rank, numerical_sharp_degree
from symattn.cli import main
from symattn.core.algebras import MPMath, exact_series, mp_series
from symattn.core.errors import CheckFailed, SymattnError, Undecided
from symattn.model.architecture import Architecture
from symattn.model.interpreter import evaluate, jacobian
from symattn.model.network import native_network
from symattn.model.parameters import random_bank, random_point


def _max_error(numerical: np.ndarray, exact: np.ndarray, digits: int) -> mpmath.mpf:
    ctx = mpmath.mp.clone()
    ctx.dps = digits
    return max(abs(a - ctx.mpf(int(b.p)) / int(b.q)) for a, b in zip(numerical.ravel(), exact.ravel()))


def test_paper_stack_equals_the_modular_tier() -> None:
    arch = Architecture.uniform(2, 2, 1, 2, "exp")
    exact = sharp_degree(arch)
    r = numerical_sharp_degree(arch, digits=100)
    assert (r.sharp_degree, r.lower_jets_independent_of_last, r.last_layer_enters) == (7, True, 7)
    assert r.profile == exact.profile and r.method == "numerical" and r.digits == 100
    assert r.theorem == exact.theorem  # the statement covering the stack; the number is numerical
    assert all(kept is None or kept > -25 for kept, _ in r.gaps)  # far from the counted threshold 10^-25


def test_a_block_zero_but_for_rounding_stays_zero() -> None:
    # width 1: the degree-5 coefficients vanish identically but are rounding noise numerically;
    # M_2 must still first enter at degree 7 (each block is not scaled to its own size)
    r = numerical_sharp_degree(Architecture.uniform(2, 1, 1, 2, "exp"), digits=60)
    assert (r.sharp_degree, r.last_layer_enters, r.lower_jets_independent_of_last) == (7, 7, True)


def test_skip_stack_equals_the_exact_tier() -> None:
    arch = Architecture.uniform(2, 2, 1, 2, "exp", skip="value")  # native map modulo symmetries
    exact = sharp_degree(arch, method="exact", points=1)
    r = numerical_sharp_degree(arch, digits=100, points=1)
    assert (r.sharp_degree, r.symmetry_rank, r.profile) == (exact.sharp_degree, exact.symmetry_rank, exact.profile)
    assert r.sharp_degree == 3 and r.theorem is None


def test_series_agree_with_exact_series_at_nonzero_constants() -> None:
    # an MLP with a polynomial activation: f(W_1 y + b_1) is expanded around f(b_1) != 0, exact over Q
    arch = Architecture.uniform(1, 2, 1, 3, "exp", mlp=2, activation="poly:0,1,1/2")
    point, Y = random_point(arch, 1, "random"), random_bank(arch, 2, 1)
    exact = ray_jacobian(arch, point, Y, exact_series(5))
    numerical = ray_jacobian(arch, point, Y, mp_series(5, 100))
    assert _max_error(numerical, exact, 100) < mpmath.mpf(10) ** -90


def test_a_normalizer_is_expanded_around_its_argument() -> None:
    from symattn.model.normalizer import Normalizer

    A = mp_series(6, 60)
    for derivative in (0, 1):  # phi(3/7 + t) and phi'(3/7 + t) for phi = exp(s^2), by mpmath's Taylor series
        got = A.phi(A.series([[Fraction(3, 7)], [1]]), Normalizer("gauss"), derivative)[:, 0]
        with mpmath.workdps(60):
            c = mpmath.mpf(3) / 7
            want = mpmath.taylor(lambda s: mpmath.diff(lambda u: mpmath.exp(u * u), s, derivative), c, 5)
        assert max(abs(a - b) for a, b in zip(got, want)) < mpmath.mpf(10) ** -40


def test_series_agree_with_evaluation_where_scores_are_nonzero() -> None:
    # post-norm: layer 2 reads constant tokens at X = 0, so its normalizer is expanded around
    # nonzero scores; the ray series and its Jacobian must match F(rho Y) and DF(rho Y) at small rho
    # (with the skip, so that the tokens differ at rho^1 and the expansion's y^2 term enters by rho^3)
    arch = Architecture.uniform(2, 2, 1, 3, "exp", skip="value", norm="post", eps="1/10")
    point, Y = random_point(arch, 0, "random"), random_bank(arch, 1, 0)
    names = [b.name for b in arch.blocks]
    graph = native_network(arch)
    order, digits = 5, 150  # with the skip, layer 2's scores depend on the token at rho^1
    S = mp_series(order, digits)
    vals = {n: S.const(v) for n, v in point.items()}
    vals["X"] = S.series([np.zeros(Y.shape, dtype=int), Y])
    F_series = evaluate(graph, S, vals)["F"]
    J_series = ray_jacobian(arch, point, Y, S)
    A = MPMath(digits)
    rho = A.ctx.mpf(10) ** -20
    vals = {n: A.const(v) for n, v in point.items()}
    vals["X"] = A.const(Y) * rho
    F = evaluate(graph, A, vals)["F"]
    J = jacobian(graph, A, vals, names)
    for exact, series in ((F, F_series), (J, J_series)):
        summed = sum(series[k] * rho ** k for k in range(order))
        scale = max(abs(v) for v in np.asarray(exact).ravel())
        error = max(abs(a - b) for a, b in zip(np.asarray(exact).ravel(), summed.ravel()))
        assert error < scale * A.ctx.mpf(10) ** -90  # the truncation rho^5 = 10^-100, no rounding beyond


def test_cli_decides_a_post_norm_layer(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["jet", "--depth", "1", "--width", "2", "--tokens", "3", "--norm", "post", "--json"]
    assert main(args) == 1  # the exact tiers refuse it
    assert "--method numerical" in capsys.readouterr().err
    assert main(args + ["--method", "numerical"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["sharp_degree"], out["immersion"], out["theorem"], out["method"], out["digits"]) == \
        (3, True, None, "numerical", 300)
    assert out["symmetry_rank"] == 3 and out["by_seed"] == {"0": 3, "1": 3, "2": 3}
    assert out["provenance"]["kind"] == "numerical at 300 digits"
    assert all(kept > -10 and dropped < -140 for kept, dropped in out["gaps"][1:])


def test_cli_decides_an_mlp_layer(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["jet", "--depth", "1", "--width", "2", "--tokens", "3", "--mlp", "2", "--method", "numerical"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "sharp degree N                  3           numerical at 300 digits" in text
    assert "exact (rank" not in text and "numerical at 300 digits" in text.splitlines()[2]


def test_a_wrong_declared_symmetry_is_caught(broken_kernel) -> None:
    broken_kernel(numerical_jets)
    with pytest.raises(CheckFailed, match="not a kernel vector of the numerical jet Jacobian"):
        numerical_sharp_degree(Architecture.uniform(1, 2, 1, 3, "exp", norm="post"), digits=60, points=1)


def test_an_unclear_gap_is_undecided(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert gap_rank([mpmath.mpf(1), mpmath.mpf("1e-20"), mpmath.mpf("1e-290")], 300).rank == 2
    assert gap_rank([mpmath.mpf(1), mpmath.mpf("1e-160")], 300).rank is None  # sigma 10^-80: in the gap
    assert gap_rank([mpmath.mpf(1), mpmath.mpf("1e-140")], 300).rank == 2     # sigma 10^-70: counted
    assert gap_rank([mpmath.mpf(1), mpmath.mpf("1e-230")], 300).rank == 1     # sigma 10^-115: zero
    monkeypatch.setattr(numerical_jets, "gap_rank", lambda lams, digits: GapRank(None, None, None, "blurred"))
    with pytest.raises(Undecided, match="blurred"):
        numerical_sharp_degree(Architecture.uniform(2, 1, 1, 2, "exp"), digits=40)
    from symattn.analyses.numerical_jets import _decided_sharp

    too_many = [GapRank(2, -1.0, None), GapRank(5, -1.0, None)]
    assert _decided_sharp(too_many, 4)[0] is None and "exceeds" in _decided_sharp(too_many, 4)[1]
    assert main(["jet", "--depth", "1", "--width", "2", "--tokens", "3", "--bias", "--method", "numerical"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("symattn: undecided: numerical jet at 300 digits") and err.count("\n") == 1


@pytest.mark.parametrize("extra", [["--max-degree", "100"], ["--coq", "somewhere"], ["--method", "ball"]])
def test_bad_input_exits_2(extra: list[str], capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    args = ["jet", "--depth", "1", "--width", "2", "--tokens", "3", "--norm", "post", "--method", "numerical"]
    assert main(args + extra) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_bad_api_input() -> None:
    arch = Architecture.uniform(1, 1, 1, 2, "exp")
    with pytest.raises(SymattnError, match="digits"):
        numerical_sharp_degree(arch, digits=10)
    with pytest.raises(SymattnError, match="max_degree"):
        numerical_sharp_degree(arch, max_degree=0)
    with pytest.raises(SymattnError, match="numerical_sharp_degree"):  # no silent route from the exact API
        sharp_degree(arch, generic_effective(arch), method="numerical")
