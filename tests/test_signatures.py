"""Line-probe expansions and signatures (App. A) computed by :mod:`symattn.analyses.signatures`.

* one layer: orders 2r / 3r and the closed forms H_M, K_M of (A.1) with a
  generic normalizer (independent ratio symbols), for n = 2, 3;
* softmax two tokens, eqs. (10)-(11); generic ratios specialised to exp agree
  with the concrete normalizer;
* the expansion agrees with ``sympy.series`` of the Symbolic algebra (an
  independent evaluation of the same graph);
* amplitudes and layer isolation (A.2) at depth 2 and 3;
* the sign branches of App. A.2; bad input raises SymattnError.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy

from symattn.core.algebras import Symbolic
from symattn.core.errors import SymattnError
from symattn.model.network import effective_network, evaluate
from symattn.model.architecture import Architecture
from symattn.model.normalizer import Normalizer, normalizers
from symattn.analyses.signatures import (
    ProbeAlgebra,
    amplitudes,
    cloud_probe,
    line_probe,
    lowest_homogeneous,
    sign_branches,
    to_sympy,
)


@pytest.mark.parametrize("c", [(1, -1), (1, 0, -1), (2, -1, 1, -2)])
def test_one_layer_orders_and_closed_forms(c):
    e = line_probe("exp", [None], c=c, order=4)
    H, K = e.closed_forms(1)
    inc = e.means[1] - e.means[0]
    assert e.valuation(inc) == 2 and e.valuation(e.centered[1]) == 3
    assert list(e.coefficient(inc, 2)) == [e.mu2 * zi * H for zi in e.z]
    assert e.coefficient(e.centered[1], 3).tolist() == [[e.mu2 * ca * zi * K for ca in e.c] for zi in e.z]


def test_spread_order_r_two():
    e = line_probe("exp", [None], r=2, order=7)
    K = e.closed_forms(1)[1]
    assert e.valuation(e.means[1] - e.means[0]) == 4 and e.valuation(e.centered[1]) == 6
    assert list(e.coefficient(e.centered[1], 6)[:, 0]) == [zi * K for zi in e.z]


def test_softmax_two_tokens_eqs_10_11():
    e = line_probe("exp", [None], order=4, generic=False)
    v, w = e.m.dot(e.M[0]).dot(e.z), e.z.dot(e.M[0]).dot(e.z)
    assert list(e.coefficient(e.means[1], 2)) == [zi * v for zi in e.z]
    assert list(e.coefficient(e.centered[1], 3)[:, 0]) == [zi * w for zi in e.z]
    assert list(e.coefficient(e.centered[1], 3)[:, 1]) == [-zi * w for zi in e.z]


def test_generic_ratios_specialise_to_concrete():
    generic = line_probe("exp", [[[1, 2], [3, -1]]], order=6)
    concrete = line_probe("exp", [[[1, 2], [3, -1]]], order=6, generic=False)
    ones = {sympy.Symbol(f"p1_{j}"): 1 for j in range(1, 6)}
    for j in range(6):
        for g, c in zip(generic.centered[1][j].flat, concrete.centered[1][j].flat):
            assert sympy.expand(to_sympy(g).subs(ones) - to_sympy(c)) == 0


def test_expansion_agrees_with_sympy_series():
    """The same graph in the Symbolic algebra, expanded by sympy.series (independent)."""
    eps = sympy.Symbol("eps")
    e = line_probe("exp", [[[3]]], m=[Fraction(1, 2)], z=[Fraction(2, 3)], order=5, generic=False)
    arch = Architecture((1, 1), (1,), 2, normalizers("exp", 1))
    A = Symbolic()
    X = np.array([[sympy.Rational(1, 2) + eps * sympy.Rational(2, 3),
                   sympy.Rational(1, 2) - eps * sympy.Rational(2, 3)]], dtype=object)
    F = evaluate(effective_network(arch), A, {"X": X, "L": A.const([[1]]), "M1": A.const([[3]])})["F"]
    series = sympy.series(F[0, 0], eps, 0, 5).removeO()
    token = e.means[1][:, 0] + e.centered[1][:, 0, 0]
    assert [to_sympy(token[j]) for j in range(5)] == [series.coeff(eps, j) for j in range(5)]


def test_amplitudes_and_layer_isolation_depth_two():
    third = Fraction(1, 3)
    e = line_probe("exp", [[[1, 2], [0, -1]], [[third, 1], [2, 1]]], L=[[1, 2], [3, -1]],
                   c=(1, 0, -1), order=10)
    forms = [e.closed_forms(i) for i in (1, 2)]
    a = amplitudes([K for _, K in forms], e.mu2)
    for j in (1, 2):
        assert e.valuation(e.centered[j]) == 3 ** j
        assert e.coefficient(e.centered[j], 3 ** j).tolist() == [[a[j] * ca * zi for ca in e.c] for zi in e.z]
        valuation, coeff = e.isolated(j)
        Lz = e.L.dot(e.z)
        assert valuation == 2 * 3 ** (j - 1)
        assert list(coeff) == [a[j - 1] ** 2 * e.mu2 * Lz[i] * forms[j - 1][0] for i in range(2)]


@pytest.mark.parametrize("generic", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_layer_isolation_depth_three_rational_probe(generic):
    Ms = [[[1, 2], [0, -1]], [[Fraction(1, 3), 1], [2, 1]], [[1, -1], [1, 2]]]
    e = line_probe("exp", Ms, L=[[1, 2]], m=[1, 2], z=[Fraction(1, 2), -1], order=19, generic=generic)
    forms = [e.closed_forms(i) for i in (1, 2, 3)]
    a = amplitudes([K for _, K in forms], e.mu2)
    valuation, coeff = e.isolated(3)
    assert valuation == 18
    assert coeff[0] == a[2] ** 2 * e.mu2 * e.L.dot(e.z)[0] * forms[2][0]


def test_wrong_closed_form_is_detected():
    e = line_probe("exp", [None], order=4)
    K = e.closed_forms(1)[1]
    assert list(e.coefficient(e.means[1], 2)) != [zi * K for zi in e.z]


def test_cloud_probe_covariance_b3():
    e = cloud_probe("exp", [None], tokens=3)
    Y = sympy.Matrix([[to_sympy(v) for v in row] for row in e.spread])
    M = sympy.Matrix(2, 2, lambda i, j: to_sympy(e.M[0][i, j]))
    m = sympy.Matrix([to_sympy(v) for v in e.m])
    mean2 = sympy.Matrix([to_sympy(v) for v in e.coefficient(e.means[1], 2)])
    assert sympy.expand(mean2 - Y * Y.T / 3 * M.T * m) == sympy.zeros(2, 1)


def test_sign_branches_and_homogeneous_part():
    assert sign_branches(1) == [1] and sign_branches(2) == [-1, 1] and sign_branches(5) == [1]
    x, y = sympy.symbols("x y")
    assert lowest_homogeneous(x ** 4 + 3 * x * y ** 2 + x ** 3, [x, y]) == (3, 3 * x * y ** 2 + x ** 3)


def test_bad_input():
    with pytest.raises(SymattnError, match="summing to 0"):
        line_probe("exp", [None], c=(1, 1))
    with pytest.raises(SymattnError, match="not a polynomial"):
        line_probe("cosh", [None], order=3, generic=False)
    with pytest.raises(SymattnError, match="irrational"):
        line_probe("cosh", [[[1]]], m=[1], z=[1], order=3, generic=False)
    with pytest.raises(SymattnError, match="shape"):
        line_probe("exp", [[[1, 2]]])
    with pytest.raises(SymattnError, match="zero row sums"):
        cloud_probe("exp", [None], Y=[[1, 1, 0], [0, 0, 0]])
    A = ProbeAlgebra(3, ["x"], depth=1)
    scores = A.series([[A.gen("x"), 0], [1, 1]])  # constant terms x and 0 differ
    with pytest.raises(SymattnError, match="share one value at eps = 0"):
        A.phi(scores, Normalizer("exp"), layer=1)
