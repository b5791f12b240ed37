"""Architectures, parameters, the reduction pi and the gauges (issue: foundation)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from symattn.algebras import exact_series
from symattn.certify import rank_exact
from symattn.errors import SymattnError
from symattn.graph import evaluate, reduction_graph
from symattn.model import (Architecture, NativeParams, factor_gauges, interface_directions,
                           random_bank, random_native, rational_matrix, reduction)
from symattn.normalizer import normalizers


def test_shapes_and_sizes():
    arch = Architecture((3, 2, 4), (1, 2), 3, normalizers("exp", 2))
    assert arch.depth == 2
    assert arch.native_shapes() == [("Q1", (3, 1)), ("K1", (3, 1)), ("V1", (2, 3)),
                                    ("Q2", (2, 2)), ("K2", (2, 2)), ("V2", (4, 2))]
    assert arch.native_size == 3 + 3 + 6 + 4 + 4 + 8
    assert arch.effective_shapes() == [("L", (4, 3)), ("M1", (3, 3)), ("M2", (3, 3))]
    assert random_bank(arch, 5, seed=1).shape == (5, 3, 3)
    theta = random_native(arch, seed=2)
    theta.check(arch)
    reduction(theta).check(arch)


@pytest.mark.parametrize("call, message", [
    (lambda: Architecture.uniform(0, 2, 1, 2), "depth"),
    (lambda: Architecture.uniform(2, 2, 0, 2), "r_1"),
    (lambda: Architecture.uniform(2, 2, 1, 1), "token count"),
    (lambda: Architecture.uniform(2, 2, [1, 1, 1], 2), "rank list"),
    (lambda: Architecture.uniform(2, 2, 1, 2, "exp,exp,exp"), "1 or D"),
    (lambda: Architecture((2, 2), (1, 1), 2, normalizers("exp", 2)), "widths"),
    (lambda: rational_matrix([[0.5, 1]]), "exact rationals"),
    (lambda: random_bank(Architecture.uniform(1, 2, 1, 2), 0), "bank size"),
    (lambda: random_native(Architecture((2, 3), (1,), 2, normalizers("exp", 1)), values="identity"),
     "equal widths"),
])
def test_bad_input_is_one_clear_error(call, message):
    with pytest.raises(SymattnError, match=message):
        call()


def test_shape_mismatch_is_reported():
    arch = Architecture.uniform(2, 2, 1, 2)
    theta = random_native(arch, seed=0)
    bad = NativeParams(theta.Q, theta.K, (theta.V[0], rational_matrix([[1, 2, 3]])))
    with pytest.raises(SymattnError, match="V2 has shape"):
        bad.check(arch)


def test_rational_matrix_accepts_strings():
    assert rational_matrix([["1/3", 2]])[0, 0] == Fraction(1, 3)


@pytest.mark.parametrize("widths, ranks", [((2, 3, 1), (1, 2)), ((3, 1, 2), (2, 1)), ((2, 2, 2), (2, 2))])
def test_reduction_graph_equals_reduction(widths, ranks):
    arch = Architecture(widths, ranks, 2, normalizers("exp", 2))
    theta = random_native(arch, seed=9)
    theta.V[0][0, :] = 0  # a singular value map is allowed
    A = exact_series(1)
    out = evaluate(reduction_graph(arch), A, {k: A.const(v) for k, v in theta.as_dict().items()})
    for name, value in reduction(theta).as_dict().items():
        assert np.array_equal(out[name][0], A.const(value)[0]), name


def test_gauge_counts_and_independence():
    arch = Architecture.uniform(3, 3, [1, 2, 3], 2, "exp")
    theta = random_native(arch, seed=11)
    factor = list(factor_gauges(arch, theta))
    interface = list(interface_directions(arch, theta))
    assert len(factor) == 1 + 4 + 9 and len(interface) == 2 * 9
    assert rank_exact(np.array(factor + interface, dtype=object)) == len(factor) + len(interface)


def test_seeded_parameters_are_reproducible_and_rational():
    arch = Architecture.uniform(2, 2, 1, 2)
    a, b = random_native(arch, seed=3), random_native(arch, seed=3)
    assert all(np.array_equal(x, y) for x, y in zip(a.flat(), b.flat()))
    assert all(isinstance(v, Fraction) for v in a.flat())
    assert not np.array_equal(random_bank(arch, 2, seed=1), random_bank(arch, 2, seed=2))
