"""Effective fibers (Theorems 1-2), collapse loci, App. B, and ``symattn fiber``.

Each branch of the classification is exercised with a tuple whose answer the
paper states (examples (27), (28), the counterexample of App. B.4) and the
verification must confirm it; a wrong claim (a forbidden flip, a changed
prefix) must be refuted by an exact witness. The CLI is run through
``symattn.cli.main``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy

from symattn.cli import main
from symattn.core.errors import SymattnError
from symattn.analyses.fibers import (
    collapse_locus,
    consensus_certificate,
    contrast_defect,
    effective_fiber,
    generic_native_point,
    layer_map,
    ray_series,
    two_token_skew,
    vanishes,
)
from symattn.model.architecture import Architecture
from symattn.model.parameters import rational_matrix, reduction
from symattn.model.normalizer import Normalizer, normalizers

J = [[0, 1], [-1, 0]]
Z2 = [[0, 0], [0, 0]]


@pytest.mark.parametrize("L, M, spec, n, expected", [
    ([[1, 0], [0, 1]], [[[1, 2], [0, 1]], [[2, 1], [1, -1]]], "exp", 2, ("singleton", None, [], [])),
    ([[1, 1]], [[[1, 2], [0, 1]], J], "exp", 3, ("singleton", None, [], [])),  # last score arbitrary
    ([[1, 0]], [[[1, 0], [0, -1]], [[1, 1], [0, 1]]], "cosh", 2, ("sign-orbit", None, [1, 2], [])),
    ([[1, 0]], [[[1, 0], [0, -1]], [[1, 1], [0, 1]]], "cosh, exp", 2, ("sign-orbit", None, [1], [])),
    ([[1, 0]], [[[1, 0], [0, 2]], J, [[3, 1], [0, 1]]], "exp", 2, ("free-suffix", 2, [], [3])),  # (28)
    ([[0, 0]], [[[1, 0], [0, 2]], J], "exp", 2, ("zero-readout", None, [], [1, 2])),
    ([[1, 1]], [[[1, 2], [0, 1]], Z2, [[1, 1], [2, 1]]], "logistic", 3, ("free-suffix", 2, [], [3])),
    ([[1, 0]], [[[1, 0], [0, 1]], J, Z2], "logistic", 2, ("singleton", 3, [], [])),
    ([[1, 0]], [Z2, [[1, 2], [3, 4]]], "exp", 3, ("free-suffix", 1, [], [2])),
])
def test_fiber_branches_verified(L, M, spec, n, expected):
    f = effective_fiber(L, M, spec, n)
    assert (f.fiber, f.first_collapse, f.sign_flip_layers, f.free_layers) == expected
    assert f.verified and all(e.ok for e in f.evidence)


def test_classification_without_verification_is_not_verified():
    f = effective_fiber([[1, 0]], [[[1, 0], [0, 2]], J, [[3, 1], [0, 1]]], "exp", 2, verify=False)
    assert (f.fiber, f.verified, f.evidence) == ("free-suffix", False, [])


def test_forbidden_flip_has_exact_witness():
    f = effective_fiber([[1, 0]], [[[1, 0], [0, 2]], J, [[3, 1], [0, 1]]], "exp", 2)
    witnesses = [e.detail for e in f.evidence if "flipping" in e.label]
    assert len(witnesses) == 2 and all("exact witness" in w for w in witnesses)


def test_outside_hypotheses_are_reported():
    b4 = effective_fiber(np.eye(2, dtype=int).tolist(), [J, Z2], "gauss, exp", 2)
    assert (b4.fiber, b4.verified) == ("outside-hypotheses", False)
    skew3 = effective_fiber([[1, 0]], [J, Z2, [[1, 2], [3, 4]]], "exp", 3)
    assert skew3.fiber == "outside-hypotheses"


def test_counterexample_b4_prefix_is_invisible():
    """Two different skew first scores give the same function (eq. 29)."""
    L, Z = rational_matrix([[1, 0], [0, 1]]), rational_matrix(Z2)
    rays = rational_matrix([[[1, -2], [3, 1]]])
    phis = normalizers("gauss, exp", 2)
    Jm = rational_matrix(J)
    assert np.array_equal(ray_series(L, [Jm, Z], phis, rays, 12), ray_series(L, [2 * Jm, Z], phis, rays, 12))
    yp, ym, b = two_token_skew(Normalizer("gauss"))
    m1, z1 = sympy.symbols("m1 z1")
    assert vanishes(yp[0] - (m1 - z1 * sympy.tanh(2 * b ** 2)))
    assert vanishes((yp[0] + ym[0]) / 2 - m1) and not vanishes(yp[0] - ym[0])


def test_softmax_two_token_skew_output_27():
    yp, ym, b = two_token_skew(Normalizer("exp"))
    m, z = sympy.symbols("m1 m2"), sympy.symbols("z1 z2")
    for i in range(2):
        assert vanishes(yp[i] - (m[i] + z[i] * sympy.tanh(b)))
        assert vanishes(ym[i] - yp[i])


@pytest.mark.parametrize("spec, n, locus", [
    ("exp", 2, "skew"), ("exp", 3, None), ("logistic", 2, "zero"), ("logistic", 3, "zero"),
    ("gauss", 2, None), ("exp(s + s^3)", 2, "skew"), ("exp(s + s^2)", 3, "zero"),
])
def test_collapse_locus(spec, n, locus):
    phi = Normalizer(spec)
    assert collapse_locus(phi, n) == locus
    skew = consensus_certificate(rational_matrix(J), phi, n)
    if locus is not None:
        assert skew == (locus == "skew")
    assert consensus_certificate(rational_matrix(Z2), phi, n)
    assert not consensus_certificate(rational_matrix([[1, 0], [0, 0]]), phi, n)


def test_contrast_defect_b1_b2():
    u = sympy.Symbol("u")
    assert vanishes(contrast_defect(Normalizer("exp")))
    series = sympy.series(contrast_defect(Normalizer("logistic")), u, 0, 4).removeO()
    c2 = Normalizer("logistic").h_taylor(2)[2]
    assert sympy.expand(series) == -c2 / 2 * u ** 2


def test_layer_map_even_normalizer_sign():
    x = np.array([[sympy.Symbol(f"x{i}{a}") for a in range(2)] for i in range(2)], dtype=object)
    M = rational_matrix([[1, 2], [0, 1]])
    same = layer_map(M, Normalizer("cosh"), x) - layer_map(-M, Normalizer("cosh"), x)
    differ = layer_map(M, Normalizer("exp"), x) - layer_map(-M, Normalizer("exp"), x)
    assert all(sympy.simplify(v) == 0 for v in same.flat)
    assert not vanishes(differ[0, 0])


@pytest.mark.parametrize("widths, ranks", [((2, 2), (1,)), ((3, 1, 2), (2, 1)), ((1, 3, 2, 4), (1, 3, 2))])
def test_generic_native_point_a4(widths, ranks):
    arch = Architecture(widths, ranks, 2, normalizers("exp", len(ranks)))
    eta = reduction(generic_native_point(arch))
    assert any(v != 0 for v in eta.L.flat)
    assert all(any(v != 0 for v in (Mi + Mi.T).flat) for Mi in eta.M)
    assert effective_fiber(eta.L, eta.M, "exp", 2).fiber == "singleton"


@pytest.mark.parametrize("L, M, n, message", [
    ([[1, 0]], [[[1, 2, 3], [0, 1, 1]]], 2, "square"),
    ([[1, 0]], [[[1, 0], [0, 1]], [[1]]], 2, "input width"),
    ([[1, 0, 0]], [[[1, 0], [0, 1]]], 2, "columns"),
    ([[1, 0]], [[[0.5, 0], [0, 1]]], 2, "float"),
    ([[1, 0]], [[[1, 0], [0, 1]]], 1, "token count"),
])
def test_bad_input(L, M, n, message):
    with pytest.raises(SymattnError, match=message):
        effective_fiber(L, M, "exp", n)


def _cli(capsys, *args):
    code = main(["fiber", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_json_example_28(capsys):
    code, out, _ = _cli(capsys, "--normalizer", "exp", "--tokens", "2", "--L", "[[1,0]]",
                        "--M", '[[1,0],[0,2]];[[0,1],[-1,0]];[[3,1],[0,"1/3"]]', "--json")
    data = json.loads(out)
    assert code == 0
    assert {k: data[k] for k in ("fiber", "first_collapse", "sign_flip_layers", "free_layers", "verified")} \
        == {"fiber": "free-suffix", "first_collapse": 2, "sign_flip_layers": [], "free_layers": [3],
            "verified": True}


def test_cli_per_layer_normalizers_and_human_output(capsys):
    code, out, _ = _cli(capsys, "--normalizer", "cosh,exp", "--tokens", "3", "--L", "[[1,0],[0,1/3]]",
                        "--M", "[[1,0],[0,-1]];[[1,1],[0,1]]")
    assert code == 0
    assert "sign-orbit" in out and "may each flip sign" in out and "verified          yes (exact)" in out


def test_cli_outside_hypotheses_json(capsys):
    code, out, _ = _cli(capsys, "--normalizer", "gauss,exp", "--tokens", "2", "--L", "[[1,0],[0,1]]",
                        "--M", "[[0,1],[-1,0]];[[0,0],[0,0]]", "--json")
    data = json.loads(out)
    assert code == 0 and data["fiber"] == "outside-hypotheses" and data["verified"] is False


@pytest.mark.parametrize("args, message", [
    (["--normalizer", "exp", "--tokens", "2", "--L", "[[1,0]]", "--M", "[[0.3,0],[0,2]]"], "3/10"),
    (["--normalizer", "nope", "--tokens", "2", "--L", "[[1,0]]", "--M", "[[1,0],[0,2]]"], "unknown normalizer"),
    (["--normalizer", "exp", "--tokens", "2", "--L", "[[1,0]]", "--M", "[[1,0,0],[0,2,0]]"], "square"),
    (["--normalizer", "exp", "--tokens", "2", "--L", "[[1,0]]", "--M", "[[1,0],[0,2]];[[1]]"], "input width"),
    (["--normalizer", "exp", "--tokens", "2", "--L", "[[1,0]", "--M", "[[1,0],[0,2]]"], "cannot parse"),
    (["--normalizer", "exp,exp,exp", "--tokens", "2", "--L", "[[1,0]]", "--M", "[[1,0],[0,2]]"], "normalizers"),
])
def test_cli_bad_input_one_line_exit_2(capsys, args, message):
    code, _, err = _cli(capsys, *args)
    assert code == 2 and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


# -- issue 13: no verification without evidence; local certificates; C.6 -------------
def test_every_verified_answer_has_evidence_and_a_local_certificate():
    f = effective_fiber([[1, 0]], [Z2], "exp", 2)  # D = 1, M_1 = 0: used to be verified with no evidence
    assert f.fiber == "singleton" and f.verified and f.evidence
    assert any(e.label.startswith("local certificate") and e.ok for e in f.evidence)


def test_two_token_skew_prefix_looked_for_at_the_adaptive_degree():
    # Prop. C.3: with a skew prefix, M_2 enters at rho^11 (logistic) and rho^19 (exp(s+s^4)).
    for phi, degree in (("logistic", 11), ("exp(s+s^4)", 19)):
        f = effective_fiber([[1, 2]], [J, [[1, 0], [3, 2]]], phi, 2)
        assert f.fiber == "singleton" and f.verified, (phi, f.evidence)
        assert any(f"D T_{degree} injective" in e.label for e in f.evidence)
        assert any(f"rho^{degree}" in e.detail and "flipping M_2" in e.label for e in f.evidence)


def test_prop_c6_decides_a_skew_prefix_with_three_tokens(capsys):
    f = effective_fiber([[1, 0], [0, 1]], [J, [[1, 0], [0, 2]]], "exp", 3)
    assert (f.fiber, f.verified) == ("singleton", True) and "Prop. C.6" in f.theorem
    code, out, _ = _cli(capsys, "--normalizer", "exp", "--tokens", "3", "--L", "[[1,0],[0,1]]",
                        "--M", "[[0,1],[-1,0]];[[1,0],[0,2]]")
    assert code == 0 and "Prop. C.6" in out and "Theorems 1-2 do not decide" in out
    # a degenerate prefix (M_2 = 0) is outside C.6 too, and the answer says so
    g = effective_fiber([[1, 0]], [J, Z2, [[1, 2], [3, 4]]], "exp", 3)
    assert g.fiber == "outside-hypotheses" and "Prop. C.6" in g.sentence and not g.verified


def test_failed_verification_exits_1_without_a_confident_answer(capsys, monkeypatch):
    import symattn.analyses.fiber_checks as checks  # where the verification computes its certificate

    def failing(*args, **kwargs):
        return checks.Evidence("local certificate: D T_N injective at the tuple", False, "forced"), None

    monkeypatch.setattr(checks, "local_certificate", failing)
    code, out, _ = _cli(capsys, "--normalizer", "exp", "--tokens", "2", "--L", "[[1,0]]",
                        "--M", "[[1,0],[0,2]]")
    assert code == 1
    assert "NOT confirmed" in out and "no answer is claimed" in out
    assert "are determined by the function" not in out


@pytest.mark.slow
def test_five_softmax_layers_verified_through_rho_163(capsys):
    M = "[[1,0],[0,2]]"
    code, out, _ = _cli(capsys, "--normalizer", "exp", "--tokens", "2", "--L", "[[1,0]]",
                        "--M", ";".join([M] * 5))
    assert code == 0 and "verified          yes (exact)" in out and "rho^163" in out
