"""Exact identities of the model (issue: foundation), each an exact zero, not a small number.

Expansions run in the exact series algebra along rational input rays
``X = rho Y`` (scores vanish at ``rho = 0``, as the series algebras require).
"""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from symattn.algebras import Tangent, exact_series
from symattn.graph import effective_network, evaluate, native_network
from symattn.model import (Architecture, EffectiveParams, factor_gauges, identity_matrix,
                           interface_directions, random_native, random_rational_matrix, reduction)
from symattn.normalizer import normalizers

ORDER = 8


def _ray(A, Y):
    return A.series([np.zeros(Y.shape, dtype=int), Y])


def _layer(A, phi, M, X):
    d, n = M.shape[0], X.shape[-1]
    arch = Architecture((d, d), (1,), n, normalizers(phi, 1))
    return evaluate(effective_network(arch), A, {"X": X, "L": A.const(identity_matrix(d)),
                                                 "M1": A.const(M)})["F"]


@pytest.mark.parametrize("phi", ["exp", "cosh", "1+s^2"])
def test_bilinearity_with_rectangular_P(phi):
    """S_A(P X) = P S_{P^T A P}(X) for a rectangular P (App. A.4)."""
    rng = random.Random(1)
    P = random_rational_matrix(rng, (3, 2))
    A_ = random_rational_matrix(rng, (3, 3))
    Y = random_rational_matrix(rng, (2, 3))
    A = exact_series(ORDER)
    left = _layer(A, phi, A_, _ray(A, P.dot(Y)))
    right = A.matmul(A.const(P), _layer(A, phi, P.T.dot(A_).dot(P), _ray(A, Y)))
    assert np.array_equal(left, right)
    assert any(v != 0 for v in left[2:].flat)  # the scores do enter


@pytest.mark.parametrize("widths", [(2, 2, 2), (2, 3, 1), (3, 2, 2)])
def test_native_and_effective_forms_agree(widths):
    arch = Architecture(widths, (1, 2), 3, normalizers("exp,cosh", 2))
    theta = random_native(arch, seed=4)
    Y = random_rational_matrix(random.Random(2), (2, widths[0], 3))
    A = exact_series(ORDER)
    native = evaluate(native_network(arch), A,
                      {"X": _ray(A, Y), **{k: A.const(v) for k, v in theta.as_dict().items()}})["F"]
    eff = evaluate(effective_network(arch), A,
                   {"X": _ray(A, Y), **{k: A.const(v) for k, v in reduction(theta).as_dict().items()}})["F"]
    assert np.array_equal(native, eff)


def _jvp(arch, theta, directions, Y, order=ORDER):
    """Directional derivatives of the native network along flat native directions."""
    A = exact_series(order)
    T = Tangent(A, len(directions))
    off = arch.offsets()
    D = np.array(directions, dtype=object)
    vals = {"X": _ray(A, Y)}
    for name, value in theta.as_dict().items():
        seed = D[:, off[name]: off[name] + value.size].reshape((len(directions),) + value.shape)
        vals[name] = T.variable(A.const(value), A.const(seed))
    return evaluate(native_network(arch), T, vals)["F"].tangent


def test_gauges_leave_the_output_unchanged_exactly():
    arch = Architecture((2, 3, 2), (1, 2), 2, normalizers("exp", 2))
    theta = random_native(arch, seed=5)
    gauges = list(factor_gauges(arch, theta)) + list(interface_directions(arch, theta))
    Y = random_rational_matrix(random.Random(3), (2, 2, 2))
    tangent = _jvp(arch, theta, gauges, Y)
    assert all(v == 0 for v in tangent.flat)
    bumped = gauges[0].copy()
    bumped[0] += 1  # not a gauge: must move the output
    assert any(v != 0 for v in _jvp(arch, theta, [bumped], Y).flat)


@pytest.mark.parametrize("phi, even", [("cosh", True), ("gauss", True), ("1+s^2", True), ("exp", False),
                                       ("exp(s^2+s^3)", False)])
def test_sign_of_the_score_and_even_normalizers(phi, even):
    """S_M = S_{-M} exactly for even phi; not for others (A.2)."""
    rng = random.Random(6)
    M = random_rational_matrix(rng, (2, 2))
    A = exact_series(ORDER)
    X = _ray(A, random_rational_matrix(rng, (2, 3)))
    same = np.array_equal(_layer(A, phi, M, X), _layer(A, phi, -M, X))
    assert same is even


@pytest.mark.parametrize("phi", ["exp", "cosh", "logistic"])
def test_consensus_inputs_are_fixed(phi):
    m = np.array([[Fraction(1, 3)], [Fraction(-2)]], dtype=object)
    Y = np.repeat(m, 4, axis=1)
    A = exact_series(ORDER)
    X = _ray(A, Y)
    M = random_rational_matrix(random.Random(7), (2, 2))
    assert np.array_equal(_layer(A, phi, M, X), X)


def test_effective_params_of_the_identity_stack():
    arch = Architecture.uniform(2, 2, 2, 2, "exp")
    theta = random_native(arch, seed=8, values="identity")
    eta = reduction(theta)
    assert np.array_equal(eta.L, identity_matrix(2))
    assert all(np.array_equal(M, q.dot(k.T)) for M, q, k in zip(eta.M, theta.Q, theta.K))
    assert isinstance(eta, EffectiveParams)
