"""Tests of :mod:`symattn.analyses.numerics` and the ``reproduce`` / ``sensitivity`` commands.

Tolerances: the Jacobians here are numerical, so comparisons between float64
and high precision use relative tolerances a few hundred times binary64's
epsilon (the depth of the graph), and fitted final-pair slopes are compared
with the exact orders to within 0.1 (the final-pair estimator's error is
O(t), below 0.1 at the small t used; at t = 0.02 the coarse rational
path of the small test stack is not yet asymptotic).
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction

import numpy as np
import pytest

from symattn.core.algebras import Float64, MPMath
from symattn.cli import main
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank
from symattn.model.symmetries import GaugeKernel
from symattn.core.linalg import kernel_complement
from symattn.analyses.numerics import (BallAlgebra, autodiff_jacobian, final_pair_slopes, numerical_rank,
                              observation_jacobian, positive_singular_values)
from symattn.analyses.sensitivity import sensitivity
from symattn.analyses.protocols import path_theta, protocol_f1, protocol_f2, protocol_f3
from symattn.analyses.spectrum import native_spectrum, path_parameters


def _small():
    arch = Architecture.uniform(2, 2, 1, 2, "exp")
    spec = native_spectrum(arch, bank="auto")
    U, W, _ = path_parameters(arch, 0, "identity")
    return arch, spec, U, W, random_bank(arch, spec.bank_size, 0)


def _floats(J):
    return np.vectorize(lambda v: float(v.mid()) if hasattr(v, "mid") else float(v))(J)


def test_f1_slopes_match_the_orders_and_are_stable_in_precision():
    r = protocol_f1()
    assert r.predicted == [1, 5, 17, 53]
    assert r.kernel == 4
    assert max(abs(s - p) for s, p in zip(r.slopes, r.predicted)) < 0.1
    assert 1e-95 < float(r.weakest.mid()) < 1e-85
    more = protocol_f1(digits=140)
    change = max(float(abs((a - b) / a).mid()) for ra, rb in zip(r.singular_values, more.singular_values)
                 for a, b in zip(ra, rb))
    assert change < 1e-10  # 110 digits leave ~14 significant digits on the weakest value


def test_numerical_bands_agree_with_the_exact_spectrum():
    arch, spec, U, W, X = _small()
    sig = []
    for t in ("0.002", "0.001"):
        theta = path_theta(U, W, Fraction(t))
        comp = GaugeKernel(arch, theta).complement()
        J = observation_jacobian(arch, theta.as_dict(), X, BallAlgebra(60))
        sig.append(positive_singular_values(J, comp, 60))
    slopes = final_pair_slopes(("0.002", "0.001"), tuple(sig))
    exact = [b.order for b in sorted(spec.bands, key=lambda b: b.order) for _ in range(b.multiplicity)]
    assert len(slopes) == spec.rank
    assert all(abs(s - o) < 0.1 for s, o in zip(slopes, exact)), (slopes, exact)


def test_exact_kernel_is_annihilated_and_complemented_exactly():
    arch, spec, U, W, X = _small()
    theta = path_theta(U, W, Fraction(1, 5))
    gauges = GaugeKernel(arch, theta)
    vecs = gauges.directions
    assert len(vecs) == spec.kernel
    comp = gauges.complement()
    assert comp.shape == (arch.native_size, spec.rank)
    assert all(sum(Fraction(v[i]) * comp[i, j] for i in range(len(v))) == 0
               for v in vecs for j in range(comp.shape[1]))
    J = observation_jacobian(arch, theta.as_dict(), X, BallAlgebra(50))
    Jv = _floats(J).dot(np.array([[float(x) for x in v] for v in vecs]).T)
    assert np.abs(Jv).max() < 1e-14  # float64 rounding of an exactly zero product


def test_float64_mpmath_and_ball_jacobians_agree():
    arch, spec, U, W, X = _small()
    params = path_theta(U, W, Fraction(1, 3)).as_dict()
    Jb = _floats(observation_jacobian(arch, params, X, BallAlgebra(40)))
    Jf = observation_jacobian(arch, params, X, Float64())
    Jm = np.vectorize(float)(observation_jacobian(arch, params, X[:2], MPMath(30)))
    assert np.abs(Jf - Jb).max() < 1e-13 * np.abs(Jb).max()
    assert np.abs(Jm - Jb[: Jm.shape[0]]).max() < 1e-13 * np.abs(Jb).max()


def test_autodiff_matches_the_graph():
    pytest.importorskip("torch")
    arch = Architecture.uniform(2, 3, [1, 2], 3, "gauss")
    rng = np.random.default_rng(1)
    params = {n: 0.4 * rng.standard_normal(s) for n, s in arch.native_shapes()}
    X = rng.standard_normal((4, 3, 3))
    Ja = autodiff_jacobian(arch, params, X)
    Jf = observation_jacobian(arch, params, X, Float64())
    assert Ja.shape == Jf.shape == (36, arch.native_size)
    assert np.abs(Ja - Jf).max() < 1e-12 * np.abs(Jf).max()


def test_sensitivity_prediction_matches_measured_float64_rank():
    arch = Architecture.uniform(3, 2, 1, 2, "exp")
    report = sensitivity(arch, t_min=0.05)
    assert [b["order"] for b in report["bands"]] == [0, 1, 5, 17]
    U, W, _ = path_parameters(arch, 0, "identity")
    X = random_bank(arch, report["bank_size"], 0)
    J = observation_jacobian(arch, path_theta(U, W, Fraction("0.05")).as_dict(), X, Float64())
    s = np.linalg.svd(J, compute_uv=False)
    # kept bands are >= 1e-7 sigma_1 here, lost ones sit at the float64 noise (~1e-15 sigma_1)
    assert numerical_rank(s, 1e-12) == report["float64_rank_at_t_min"] == 10


def test_f3_inverts_the_mean_map_and_b_is_the_slope():
    r = protocol_f3(digits=40, alphas=("0",), draws=3, steps=60)
    assert r.rows[0]["relative_rmse"] < 1e-12  # 60 bisection steps on [0, 0.09]
    assert float(abs((r.b - r.slope) / r.b).mid()) < 1e-30
    assert 1.56e-6 < float(r.b.mid()) < 1.57e-6


def test_reproduce_f1_json_and_plot(tmp_path, capsys):
    png = tmp_path / "f1.png"
    assert main(["reproduce", "f1", "--json", "--plot", str(png)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"t", "digits", "singular_values", "slopes", "weakest"}
    assert data["digits"] == 110 and len(data["singular_values"]) == 3
    assert png.stat().st_size > 1000


@pytest.mark.parametrize("argv, message", [
    (["reproduce", "f7"], "unknown protocol 'f7'"),
    (["reproduce", "f1", "--digits", "60"], "needs at least 106 digits"),
    (["sensitivity", "--depth", "2", "--width", "2", "--t-min", "5"], "argument --t-min: expected a number in [1e-100, 0.999]"),
])
def test_reproduce_bad_input(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_reproduce_f2_without_torch(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)
    assert main(["reproduce", "f2"]) == 2
    assert "pip install 'symattn[torch]'" in capsys.readouterr().err


def test_unresolved_singular_values_raise():
    from symattn.core.errors import Undecided

    J = np.array([[1, 0], [0, 0]], dtype=object)  # rank 1 on a 2-dimensional complement
    with pytest.raises(Undecided, match="not resolved"):  # undecided at these digits, not bad input
        positive_singular_values(J, kernel_complement([], 2), 20)


def test_sensitivity_command(capsys):
    assert main(["sensitivity", "--depth", "2", "--width", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(b["order"], b["multiplicity"]) for b in data["bands"]] == [(0, 4), (1, 3), (5, 3)]


@pytest.mark.slow
def test_f2_full_protocol():
    pytest.importorskip("torch")
    r = protocol_f2()
    assert (r.rank, r.kernel) == (52, 44)
    assert [(b["order"], b["multiplicity"]) for b in r.bands] == [(0, 16), (1, 12), (5, 12), (17, 12)]
    assert all(abs(b["slope_min"] - b["order"]) < 0.1 and abs(b["slope_max"] - b["order"]) < 0.1
               for b in r.bands)
    assert r.ad_relative_error < 1e-12
    assert r.float64_numerical_rank[-1] == r.high_precision_numerical_rank[-1] == 40


@pytest.mark.parametrize("name", ["exp", "cosh", "gauss", "1+s^2", "exp(s^2+s^3)", "exp(s^3)",
                                  "logistic"])
def test_sensitivity_works_for_every_catalogue_normalizer(name):
    """Once 'raise the digits' for gauss, exp(s^3), logistic, 1+s^2 (python-flint's arb ** int is
    NaN on a ball around 0): now the precision is chosen and verified by a second run."""
    from symattn.model.normalizer import Normalizer

    arch = Architecture.uniform(2, 2, 1, 2, name)
    r = sensitivity(arch, t_min=0.05)
    k = Normalizer(name).k
    assert [b["order"] for b in r["bands"]] == [0, 2 * k - 1, 2 * k - 1 + 4 * k]
    assert r["verified_at_digits"] > r["digits"] and r["agreement"] < 1e-12
    assert all(c > 0 for b in r["bands"] for c in b["leading_coefficients"])


def test_ball_normalizer_with_integer_powers_on_a_ball_around_zero():
    """exp(s^2) at [0 +/- 1e-60]: python-flint's ``arb ** 2`` would give NaN there."""
    import flint

    from symattn.model.normalizer import Normalizer

    A = BallAlgebra(30)
    with A.working():
        for name in ("gauss", "1+s^2", "exp(s^3)", "logistic"):
            for derivative in (0, 1, 2):
                v = A.phi(np.array([flint.arb(0, 1e-60)], dtype=object), Normalizer(name), derivative)[0]
                assert v.is_finite() and float(v.rad()) < 1e-50, (name, derivative, v)
