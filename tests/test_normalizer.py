"""Tests of symattn.model.normalizer and the ``symattn normalizer`` command."""

import argparse
import json
import math
import re
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy

from symattn.commands import normalizer as command
from symattn.core.errors import SymattnError
from symattn.model.normalizer import CATALOGUE, Normalizer, normalizers

s = sympy.Symbol("s")

# name: (k, b, even, h_odd, slope, curvature), from the closed forms of phi
EXPECTED = {
    "exp": (1, 1, False, True, 1, 0),
    "cosh": (2, sympy.Rational(1, 2), True, False, 0, 1),
    "gauss": (2, 1, True, False, 0, 2),
    "1+s^2": (2, 1, True, False, 0, 2),
    "exp(s^2+s^3)": (2, 1, False, False, 0, 2),
    "exp(s^3)": (3, 1, False, True, 0, 0),
    "logistic": (1, sympy.Rational(1, 2), False, False, sympy.Rational(1, 2),
                 -sympy.Rational(1, 4)),
}


def test_catalogue_is_covered():
    assert set(EXPECTED) == set(CATALOGUE)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_catalogue_data(name):
    phi = Normalizer(name)
    k, b, even, h_odd, slope, curvature = EXPECTED[name]
    assert (phi.k, phi.b, phi.even, phi.h_odd) == (k, b, even, h_odd)
    assert (phi.slope, phi.curvature) == (slope, curvature)
    assert isinstance(phi.k, int) and isinstance(phi.even, bool) and isinstance(phi.h_odd, bool)
    assert phi.name == name and phi.s == s
    assert phi.expr.subs(s, 0) == 1


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_taylor_matches_sympy_series(name):
    phi = Normalizer(name)
    order = 7
    for coeffs, expr in ((phi.phi_taylor(order), phi.expr),
                         (phi.h_taylor(order), sympy.log(phi.expr))):
        series = sympy.series(expr, s, 0, order + 1).removeO()
        assert coeffs == [series.coeff(s, j) for j in range(order + 1)]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_rational_order_200(name):
    phi = Normalizer(name)
    coeffs = phi.rational_phi_taylor(200)
    assert len(coeffs) == 201 and all(isinstance(c, Fraction) for c in coeffs)
    assert coeffs[:9] == [Fraction(int(c.p), int(c.q)) for c in phi.phi_taylor(8)]


def test_exp_order_200_is_inverse_factorials():
    assert Normalizer("exp").rational_phi_taylor(200) == [
        Fraction(1, math.factorial(j)) for j in range(201)]


def test_catalogue_rescaling():
    assert Normalizer("logistic").expr == 1 + sympy.tanh(s) / 2


@pytest.mark.parametrize("spec", ["2*exp(s)", 2 * sympy.exp(s), "exp(s+1)", "3^2*exp(s)"])
def test_rescaling(spec):
    phi = Normalizer(spec)
    assert phi.expr == sympy.exp(s)
    assert phi == Normalizer("exp") and hash(phi) == hash(Normalizer("exp"))
    assert phi.phi_taylor(0) == [1]


def test_strings_and_expressions():
    assert Normalizer("exp(s^2 + s^3)").name == "exp(s^2+s^3)"  # catalogue either way
    assert Normalizer("exp(s**2)") == Normalizer("gauss")
    assert Normalizer("exp(s^2)").name == "gauss"  # known by what it computes
    assert Normalizer(sympy.exp(sympy.Symbol("s", real=True))) == Normalizer("exp")
    assert Normalizer("exp") != Normalizer("cosh")
    assert repr(Normalizer("cosh")) == "Normalizer('cosh')"


def test_analytic_expressions_off_the_fast_path():
    phi = Normalizer("sin(s)/s")
    assert (phi.k, phi.b, phi.even) == (2, -sympy.Rational(1, 6), True)
    assert phi.rational_phi_taylor(4) == [1, 0, Fraction(-1, 6), 0, Fraction(1, 120)]
    assert Normalizer("sqrt(1+s^2)").phi_taylor(4) == [1, 0, sympy.Rational(1, 2), 0,
                                                       -sympy.Rational(1, 8)]
    assert Normalizer("1/(1-s)").phi_taylor(3) == [1, 1, 1, 1]


@pytest.mark.parametrize("spec, words", [
    (sympy.Abs(s), "not analytic"),
    ("Abs(s)", "not analytic"),
    ("1+Abs(s)", "not analytic"),
    ("sqrt(s)", "not analytic"),
    ("1+sqrt(s)", "not analytic"),
    ("1+s^2*log(s)", "not analytic"),
    ("1/s", "not analytic"),
    ("exp(-1/s^2)", "not analytic"),
    ("1+exp(-1/s^2)", "not analytic"),
    ("Heaviside(s)+1", "refused 'Heaviside'"),
    ("Max(s,1)", "refused 'Max'"),
    ("3", "constant"),
    (sympy.Integer(3), "constant"),
    ("-exp(s)", "phi(0) = -1"),
    ("s", "phi(0) = 0"),
    (sympy.exp(sympy.I * s), "not real"),
    ("exp(I*s)", "refused 'I'"),
    (sympy.zoo, "not finite"),
    ("zoo", "unknown normalizer"),
    ("softmax", "unknown normalizer"),
    ("sin", "unknown normalizer"),
    ("foo(s)", "refused 'foo'"),
    (sympy.Function("foo")(s), "unknown function"),
    ("exp(a*s)", "refused 'a'"),
    (sympy.exp(s * sympy.Symbol("t")), "depends on t"),
    ("|s|", "cannot parse"),
    ("exp(", "cannot parse"),
    ("", "empty"),
    ([1, 2], "string or a sympy expression"),
])
def test_bad_inputs(spec, words):
    with pytest.raises(SymattnError, match=re.escape(words)) as info:
        Normalizer(spec)
    assert "\n" not in str(info.value)


def test_irrational_coefficients():
    phi = Normalizer("exp(sqrt(2)*s)")
    assert (phi.k, phi.b, phi.even, phi.h_odd) == (1, sympy.sqrt(2), False, True)
    assert phi.phi_taylor(2) == [1, sympy.sqrt(2), 1]
    with pytest.raises(SymattnError, match="irrational Taylor coefficient c_1 = sqrt"):
        phi.rational_phi_taylor(4)


def test_derivative_taylor():
    phi = Normalizer("exp(s^2+s^3)")
    c = phi.rational_phi_taylor(12)
    for j in range(4):
        shifted = phi.rational_phi_derivative_taylor(8, j)
        assert shifted == [c[m + j] * math.factorial(m + j) / math.factorial(m)
                           for m in range(9)]
        series = sympy.series(phi.derivative_expr(j), s, 0, 9).removeO()
        assert shifted == [Fraction(str(series.coeff(s, m))) for m in range(9)]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_evaluation(name):
    phi = Normalizer(name)
    x = np.linspace(-0.9, 0.9, 7)
    for j in range(3):
        f = sympy.lambdify(s, sympy.diff(phi.expr, s, j), "math")
        expected = np.array([f(t) for t in x])
        got = phi.evaluate_float(x, derivative=j)
        assert got.shape == x.shape
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)
        with mpmath.workdps(40):
            point = mpmath.mpf("0.3")
            value = phi.evaluate_mpmath(point, derivative=j)
            exact = sympy.diff(phi.expr, s, j).subs(s, sympy.Rational(3, 10)).evalf(40)
            assert isinstance(value, mpmath.mpf)
            assert abs(value - mpmath.mpf(str(exact))) < mpmath.mpf(10) ** -35


def test_constant_derivative_broadcasts():
    phi = Normalizer("1+s^2")
    np.testing.assert_array_equal(phi.evaluate_float(np.zeros((2, 3)), 2), np.full((2, 3), 2.0))
    assert phi.evaluate_mpmath(5, 3) == 0


def test_report():
    report = Normalizer("exp(s^3)").report()
    assert set(report) == {"name", "expr", "k", "b", "even", "h_odd", "slope", "curvature",
                           "phi_taylor", "h_taylor"}
    assert (report["k"], report["b"], report["even"], report["h_odd"]) == (3, "1", False, True)
    assert len(report["phi_taylor"]) == 9 and report["phi_taylor"][3] == "1"
    assert len(Normalizer("exp").report(3)["h_taylor"]) == 4
    json.dumps(report)


def test_normalizers():
    exp, cosh = Normalizer("exp"), Normalizer("cosh")
    assert normalizers("exp", 3) == (exp, exp, exp)
    assert normalizers(cosh, 2) == (cosh, cosh)
    assert normalizers(sympy.cosh(s), 2) == (cosh, cosh)
    assert normalizers("exp, cosh", 2) == (exp, cosh)
    assert normalizers(["exp", cosh, "exp(s^2+s^3)"], 3)[2].k == 2
    halves = normalizers("exp(s*(1/2)), cosh", 2)  # no split inside parentheses
    assert halves[0].b == sympy.Rational(1, 2) and halves[1] == cosh
    layers = normalizers("exp", 4)
    assert all(phi is layers[0] for phi in layers)
    with pytest.raises(SymattnError, match="must be 1 or D"):
        normalizers("exp, cosh", 3)
    with pytest.raises(SymattnError, match="must be 1 or D"):
        normalizers([], 2)
    with pytest.raises(SymattnError, match="depth"):
        normalizers("exp", 0)


def test_order_validation():
    with pytest.raises(SymattnError, match="nonnegative integer"):
        Normalizer("exp").phi_taylor(-1)


def _cli(*argv):
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    args = parser.parse_args(["normalizer", *argv])
    return args.func(args)


def test_cli_json(capsys):
    assert _cli("cosh", "--json", "--order", "4") == 0
    report = json.loads(capsys.readouterr().out)
    assert report.pop("provenance")["kind"] == "exact"
    assert report == Normalizer("cosh").report(4)
    assert report["phi_taylor"] == ["1", "0", "1/2", "0", "1/24"]


def test_cli_table(capsys):
    assert _cli("exp(s^2+s^3)") == 0
    out = capsys.readouterr().out
    assert "exact" in out and "k (first degree of h)  2" in out


def test_cli_error():
    with pytest.raises(SymattnError, match="not analytic"):
        _cli("Abs(s)")


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_catalogue_series_match_the_expressions(name):
    # the flint series a catalogue entry computes from equals the expansion of its expression
    import sympy

    from symattn.model.taylor import sympy_taylor
    from symattn.core.parse import parse_expression

    phi = Normalizer(name)
    expr = parse_expression(CATALOGUE[name].text)
    assert Normalizer(expr) == phi and hash(Normalizer(expr)) == hash(phi)
    assert Normalizer(expr).name == name  # an expression that is a catalogue entry is that entry
    assert phi.rational_phi_taylor(40) == [Fraction(str(c)) for c in sympy_taylor(expr, 40)]
    assert phi.h_taylor(40) == [sympy.Rational(str(c)) for c in sympy_taylor(sympy.log(expr), 40)]


@pytest.mark.parametrize("text", ["exp(s)", "exp(1*s)", "exp(s+0)", "(exp(s)+exp(-s))/2"])
def test_a_normalizer_is_known_by_what_it_computes(text):
    phi = Normalizer(text)
    named = Normalizer("cosh" if "-s" in text else "exp")
    assert phi.name == named.name and phi == named
    assert (phi.exponential, phi.real_line, phi.even, phi.h_odd) == \
        (named.exponential, named.real_line, named.even, named.h_odd)


def test_normalizer_properties_are_derived_not_named():
    assert Normalizer("exp(2*s)").exponential and not Normalizer("exp(s + s^2)").exponential
    assert Normalizer("exp(2*s)").name == "exp(2*s)"  # not a catalogue entry, still exponential
    assert not Normalizer("1 + s").real_line.positive
    assert Normalizer("1/(2 + sin(s))").real_line.positive
    assert not Normalizer("1/(1 - s)").real_line.analytic


def test_catalogue_without_sympy():
    # a catalogue normalizer's rational Taylor data need no sympy (start-up time of commands)
    import subprocess
    import sys

    code = ("import sys; from symattn.model.normalizer import Normalizer, normalizers; "
            "phi = normalizers('exp, cosh', 2)[1]; "
            "assert (phi.k, phi.rational_phi_taylor(2)[2]) == (2, 1/2) and hash(phi) and phi != normalizers('exp', 1)[0]; "
            "assert 'sympy' not in sys.modules, 'sympy imported'; "
            "assert str(phi.b) == '1/2' and 'sympy' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
