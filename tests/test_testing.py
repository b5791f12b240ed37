"""The kit for symbolic unit tests: assertions, fixtures, strategies, and properties written with them.

The first part checks that each assertion of :mod:`symattn.testing.assertions` passes on
true statements and fails with a message that shows what differs. The second
part uses the kit as a user would: property tests drawn by the hypothesis
strategies of :mod:`symattn.testing.strategies`, checked against the paper's
statements through the fixtures of :mod:`symattn.testing.plugin`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symattn import Architecture, Normalizer, native_spectrum
from symattn.core.linalg import Matrix
from symattn.analyses.fibers import consensus_certificate, contrast_defect
from symattn.model.network import effective_network, evaluate
from symattn.core.algebras import Symbolic
from symattn.testing.strategies import (architectures, banks, normalizers, rational_matrices, skew_matrices,
                                symmetric_matrices)
from symattn.testing.assertions import (assert_contact_orders, assert_fiber, assert_identity, assert_series_equal,
                             assert_sharp_degree)

s, u = sympy.symbols("s u")


# ------------------------------------------------------------------ the assertions


def test_series_equal_lists_every_differing_coefficient() -> None:
    with pytest.raises(AssertionError) as info:
        assert_series_equal([1, 0, 2, 5, 7], [1, 1, 2, 5, 8])
    assert str(info.value) == ("series differ at 2 of 5 coefficients (first at t^1):\n"
                               "  [t^1]  computed 0  expected 1\n"
                               "  [t^4]  computed 7  expected 8")


def test_series_equal_on_arrays_shows_entries() -> None:
    a = np.array([[[1, 2]], [[3, 4]]], dtype=object)
    b = np.array([[[1, 2]], [[3, Fraction(9, 2)]]], dtype=object)
    assert_series_equal(a, a.copy())
    with pytest.raises(AssertionError, match=r"\[t\^1\] entry \(0, 1\): computed 4  expected 9/2"):
        assert_series_equal(a, b)


def test_series_equal_reads_expressions_and_checks_lengths() -> None:
    assert_series_equal(sympy.exp(2 * s), [1, 2, 2, sympy.Rational(4, 3)], variable="s", order=4)
    with pytest.raises(AssertionError, match="different lengths: computed 2 coefficients, expected 3"):
        assert_series_equal([1, 2], [1, 2, 3])
    with pytest.raises(TypeError, match="variable= and order="):
        assert_series_equal(sympy.exp(s), [1])


def test_identity_exact_and_to_an_order() -> None:
    assert_identity(sympy.tanh(u), (sympy.exp(2 * u) - 1) / (sympy.exp(2 * u) + 1))
    with pytest.raises(AssertionError, match=r"identity fails: lhs - rhs simplifies to"):
        assert_identity(sympy.sinh(u), u)
    assert_identity(sympy.sinh(u), u + u**3 / 6, u, order=5)
    with pytest.raises(AssertionError) as info:
        assert_identity(sympy.sinh(u), u, u, order=6)
    assert str(info.value).splitlines() == [
        "identity fails to order 6 in u: lhs - rhs = u**3/6 + u**5/120 + O(u^6)",
        "  [u^3]  lhs - rhs = 1/6",
        "  [u^5]  lhs - rhs = 1/120",
    ]


def test_contact_orders_table_and_kernel(symattn_softmax: Architecture) -> None:
    spectrum = native_spectrum(symattn_softmax)
    assert_contact_orders(spectrum, {0: 4, 1: 3, 5: 3}, kernel=6)
    with pytest.raises(AssertionError) as info:
        assert_contact_orders(spectrum, {0: 4, 1: 3, 3: 3}, kernel=5)
    message = str(info.value)
    assert "  t^3    0  3  <-- differs" in message and "  t^5    3  0  <-- differs" in message
    assert "kernel dimension: computed 6, expected 5" in message
    assert "(method modular, bank" in message
    with pytest.raises(TypeError, match="kernel= needs a Spectrum"):
        assert_contact_orders([0, 1], [0, 1], kernel=0)


def test_sharp_degree_message_shows_rank_profile(symattn_architecture) -> None:
    arch = symattn_architecture(depth=1, width=1, tokens=2, phi="cosh")
    result = assert_sharp_degree(arch, 5)  # 2k 3^0 + 1 with k = 2
    assert result.profile[-1] == result.parameters
    with pytest.raises(AssertionError, match=r"computed 5, expected 3 \(2 parameters") as info:
        assert_sharp_degree(arch, 3)
    assert "rank of D T_N by degree N: N=0: 0," in str(info.value)


def test_fiber_message_shows_evidence() -> None:
    fiber = assert_fiber([[1, 0]], [[[1, 0], [0, 2]], [[0, 1], [-1, 0]], [[3, 1], [0, 1]]], "exp", 2,
                         "free-suffix", first_collapse=2, free_layers=[3])
    assert fiber.verified
    with pytest.raises(AssertionError) as info:
        assert_fiber([[1, 0]], [[[1, 0], [0, 2]], [[0, 1], [-1, 0]], [[3, 1], [0, 1]]], "exp", 2,
                     "singleton", first_collapse=None)
    lines = str(info.value).splitlines()
    assert lines[0] == "fiber: computed free-suffix, expected singleton"
    assert lines[1] == "first_collapse: computed 2, expected None"
    assert any(line.startswith("  evidence ok: ") for line in lines)


def test_plugin_fixtures(symattn_normalizer: Normalizer, symattn_generic_tuple, symattn_softmax) -> None:
    assert symattn_normalizer.k >= 1 and symattn_normalizer.expr.subs(s, 0) == 1
    eta = symattn_generic_tuple(symattn_softmax, seed=1)
    assert any(v != 0 for v in eta.L.flat)
    assert all(((M + M.T) != 0).any() for M in eta.M)


# ---------------------------------------------------- the strategies, as properties


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3).flatmap(lambda r: st.tuples(st.just(r), rational_matrices(3, 4, rank=r))))
def test_rational_matrices_have_the_rank(drawn) -> None:
    rank, A = drawn
    assert A.shape == (3, 4) and Matrix.rational(A).rank() == rank


@settings(max_examples=20, deadline=None)
@given(skew_matrices(3), symmetric_matrices(3))
def test_skew_and_symmetric(J, M) -> None:
    assert (J.T == -J).all() and (J != 0).any()
    assert (M.T == M).all() and (M != 0).any()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(normalizers(max_degree=3))
def test_normalizer_taylor_data_is_rational_and_read_off_phi(phi: Normalizer) -> None:
    """k, b and phi's exact Taylor series agree with sympy's series of the drawn expression."""
    assert_series_equal(phi.rational_phi_taylor(5), phi.expr, variable=phi.s, order=6)
    h = sympy.expand(sympy.series(sympy.log(phi.expr), phi.s, 0, phi.k + 1).removeO())
    assert [h.coeff(phi.s, j) for j in range(1, phi.k + 1)] == [0] * (phi.k - 1) + [phi.b]


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(normalizers(max_degree=2))
def test_contrast_defect_formula_b1(phi: Normalizer) -> None:
    """Eq. (B.1): the two-token defect read off the layer is -(tanh(h(u)/2) + tanh(h(-u)/2))/2."""
    h = sympy.log(phi.expr)
    formula = -(sympy.tanh(h.subs(phi.s, u) / 2) + sympy.tanh(h.subs(phi.s, -u) / 2)) / 2
    assert_identity(contrast_defect(phi), formula, u, order=4)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(skew_matrices(2), normalizers(max_degree=3))
def test_two_token_skew_collapse_iff_h_odd(J, phi: Normalizer) -> None:
    """App. B.2: for two tokens a nonzero skew score collapses exactly when h is odd."""
    assert consensus_certificate(J, phi, 2) == phi.h_odd


@settings(max_examples=6, deadline=None)
@given(architectures(max_depth=2, max_width=2), st.data())
def test_consensus_inputs_give_lm(arch: Architecture, data) -> None:
    """Eq. (9): on a consensus input every output token is L m, whatever the scores."""
    X = data.draw(banks(arch, max_size=1))[0]
    X[:, 1:] = X[:, :1]
    L = data.draw(rational_matrices(2, arch.d))
    A = Symbolic()
    values = {"X": A.const(X), "L": A.const(L),
              **{f"M{i}": A.const(data.draw(rational_matrices(arch.d, arch.d))) for i in range(1, arch.depth + 1)}}
    F = evaluate(effective_network(arch), A, values)["F"]
    expected = L.dot(X[:, 0])
    # exact: simplify the difference (nsimplify is a numerical guess and may return a wrong rational)
    assert all(sympy.simplify(F[i, a] - expected[i]) == 0 for i in range(2) for a in range(arch.tokens))


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(architectures(max_depth=2, max_width=2, normalizer=st.sampled_from(["exp", "cosh", "exp(s^3)"])))
def test_theorem_4_on_drawn_architectures(arch: Architecture) -> None:
    """Theorem 4 / Prop. D.1: d^2 units and t^beta_i with multiplicity r_i(2d - r_i)."""
    ks, e, expected = [phi.k for phi in arch.normalizers], 0, {0: arch.d**2}
    for k, r in zip(ks, arch.ranks):
        beta = 2 * k - 1 + 2 * e
        expected[beta] = expected.get(beta, 0) + r * (2 * arch.d - r)
        e = 3 * e + 2 * k
    assert_contact_orders(native_spectrum(arch), expected,
                          kernel=(arch.depth - 1) * arch.d**2 + sum(r * r for r in arch.ranks))


def test_contact_orders_of_a_stack_beyond_the_paper():
    # the one Spectrum serves every architecture (the kit used to take the paper's only)
    from symattn.analyses.spectrum import native_spectrum
    from symattn.model.architecture import Architecture
    from symattn.testing import assert_contact_orders

    s = native_spectrum(Architecture.uniform(1, 2, 1, 2, "exp", skip="value"))
    assert_contact_orders(s, {0: 4, 1: 3}, kernel=1)
