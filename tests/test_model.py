"""Architectures, parameters, the reduction pi and the gauges (issue: foundation)."""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np
import pytest
import sympy

from symattn.core.algebras import Symbolic, exact_series
from symattn.core.linalg import Matrix, identity_matrix
from symattn.core.errors import SymattnError
from symattn.model.network import evaluate, reduction_graph
from symattn.model.architecture import Architecture
from symattn.model.parameters import EffectiveParams, NativeParams, random_bank, random_native, rational_matrix, reduction
from symattn.model.symmetries import factor_gauges, interface_directions
from symattn.model.normalizer import normalizers


# ------------------------------------------------------------------- shapes
def test_shapes_and_sizes():
    arch = Architecture((3, 2, 4), (1, 2), 3, normalizers("exp", 2))
    assert arch.depth == 2
    assert arch.native_shapes() == [("Q1", (3, 1)), ("K1", (3, 1)), ("V1", (2, 3)),
                                    ("Q2", (2, 2)), ("K2", (2, 2)), ("V2", (4, 2))]
    assert arch.native_size == 3 + 3 + 6 + 4 + 4 + 8
    assert arch.effective_shapes() == [("L", (4, 3)), ("M1", (3, 3)), ("M2", (3, 3))]
    assert arch.effective_size == 12 + 9 + 9
    assert arch.offsets() == {"Q1": 0, "K1": 3, "V1": 6, "Q2": 12, "K2": 16, "V2": 20}
    assert random_bank(arch, 5, seed=1).shape == (5, 3, 3)
    theta = random_native(arch, seed=2)
    theta.check(arch)
    reduction(theta).check(arch)


def test_the_papers_example_sizes():
    """d = 4, r = 2, D = 3: 96 native and 16 + 3 * 16 = 64 effective parameters (Sec. 6)."""
    arch = Architecture.uniform(depth=3, width=4, rank=2, tokens=4, normalizer="exp")
    assert arch.native_size == 96 and arch.effective_size == 64
    assert arch.d == 4 and arch.widths == (4, 4, 4, 4) and arch.ranks == (2, 2, 2)
    assert [phi.name for phi in arch.normalizers] == ["exp"] * 3


def test_uniform_accepts_per_layer_lists():
    arch = Architecture.uniform(3, 2, [1, 2, 1], 2, "exp, cosh, 1+s^2")
    assert arch.ranks == (1, 2, 1)
    assert [phi.name for phi in arch.normalizers] == ["exp", "cosh", "1+s^2"]
    assert Architecture.uniform(2, 2, "2,1", 2).ranks == (2, 1)


def test_flat_vector_follows_the_offsets():
    arch = Architecture((2, 3, 1), (2, 1), 2, normalizers("exp", 2))
    theta = random_native(arch, seed=6)
    flat = theta.flat()
    assert flat.shape == (arch.native_size,)
    assert list(theta.as_dict()) == [name for name, _ in arch.native_shapes()]
    off = arch.offsets()
    for name, value in theta.as_dict().items():
        assert np.array_equal(flat[off[name]: off[name] + value.size], value.reshape(-1)), name


def test_reduction_shapes_for_rectangular_widths():
    arch = Architecture((3, 5, 2, 4), (2, 1, 3), 2, normalizers("exp", 3))
    eta = reduction(random_native(arch, seed=1))
    assert eta.L.shape == (4, 3)
    assert [M.shape for M in eta.M] == [(3, 3)] * 3
    assert list(eta.as_dict()) == ["L", "M1", "M2", "M3"]


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("call, message", [
    (lambda: Architecture.uniform(0, 2, 1, 2), r"depth D must be at least 1, got 0"),
    (lambda: Architecture((2,), (), 2, ()), r"depth D must be at least 1"),
    (lambda: Architecture.uniform(2, 2, 0, 2), r"r_1 must be at least 1, got 0"),
    (lambda: Architecture.uniform(2, 2, [1, -1], 2), r"r_2 must be at least 1, got -1"),
    (lambda: Architecture.uniform(2, 2, 1, 1), r"token count n must be at least 2, got 1"),
    (lambda: Architecture.uniform(2, 0, 1, 2), r"widths must be positive"),
    (lambda: Architecture.uniform(2, 2, [1, 1, 1], 2), r"rank list has 3 entries; give 1 or D = 2"),
    (lambda: Architecture.uniform(2, 2, 1, 2, "exp,exp,exp"), r"1 or D = 2"),
    (lambda: Architecture((2, 2), (1, 1), 2, normalizers("exp", 2)), r"need D \+ 1 = 3 widths"),
    (lambda: Architecture((2, 2, 2), (1, 1), 2, normalizers("exp", 1)),
     r"one normalizer per layer \(D = 2\), got 1"),
    (lambda: rational_matrix([[0.5, 1]]), r"float entry 0.5.*exact rationals"),
    (lambda: random_bank(Architecture.uniform(1, 2, 1, 2), 0), r"bank size must be positive, got 0"),
    (lambda: random_native(Architecture((2, 3), (1,), 2, normalizers("exp", 1)), values="identity"),
     r"equal widths"),
    (lambda: Architecture((2, 3), (1,), 2, normalizers("exp", 1)).d, r"equal widths, got \(2, 3\)"),
])
def test_bad_input_is_one_clear_error(call, message):
    with pytest.raises(SymattnError, match=message):
        call()


def test_symattn_error_is_a_value_error():
    with pytest.raises(ValueError):
        Architecture.uniform(1, 2, 1, 1)


def test_shape_mismatch_is_reported():
    arch = Architecture.uniform(2, 2, 1, 2)
    theta = random_native(arch, seed=0)
    bad = NativeParams(theta.Q, theta.K, (theta.V[0], rational_matrix([[1, 2, 3]])))
    with pytest.raises(SymattnError, match=r"V2 has shape \(1, 3\), the architecture needs \(2, 2\)"):
        bad.check(arch)
    short = NativeParams(theta.Q[:1], theta.K[:1], theta.V[:1])
    with pytest.raises(SymattnError, match=r"Q2 has shape None"):
        short.check(arch)
    eta = reduction(theta)
    with pytest.raises(SymattnError, match=r"M2 has shape \(1, 2\)"):
        EffectiveParams(eta.L, (eta.M[0], eta.M[1][:1])).check(arch)


def test_rational_matrix_accepts_strings_ints_and_fractions():
    m = rational_matrix([["1/3", 2], [Fraction(-5, 7), "-4"]])
    assert m.dtype == object
    assert m.tolist() == [[Fraction(1, 3), Fraction(2)], [Fraction(-5, 7), Fraction(-4)]]
    assert all(isinstance(v, Fraction) for v in m.flat)


# ---------------------------------------------------------------- reduction
def _singular(theta: NativeParams) -> NativeParams:
    """Zero the first row of V1 and make V2's last column a copy of its first."""
    V = [v.copy() for v in theta.V]
    V[0][0, :] = 0
    V[-1][:, -1] = V[-1][:, 0]
    return NativeParams(theta.Q, theta.K, tuple(V))


@pytest.mark.parametrize("widths, ranks", [((2, 3, 1), (1, 2)), ((3, 1, 2), (2, 1)),
                                           ((2, 2, 2), (2, 2)), ((2, 4, 3, 2), (1, 3, 2))])
def test_reduction_graph_equals_reduction(widths, ranks):
    arch = Architecture(widths, ranks, 2, normalizers("exp", len(ranks)))
    theta = _singular(random_native(arch, seed=9))
    A = exact_series(1)
    out = evaluate(reduction_graph(arch), A, {k: A.const(v) for k, v in theta.as_dict().items()})
    eta = reduction(theta).as_dict()
    assert set(out) == set(eta)
    for name, value in eta.items():
        assert np.array_equal(out[name][0], A.const(value)[0]), name


@pytest.mark.parametrize("widths, ranks", [((2, 3, 1), (1, 2)), ((3, 2, 2, 1), (2, 1, 1))])
def test_reduction_is_the_polynomial_map_of_eq_3(widths, ranks):
    """On generic symbols: M_i = P_{i-1}^T Q_i K_i^T P_{i-1}, L = P_D, for both
    :func:`reduction` (with sympy entries) and the reduction graph (Symbolic)."""
    arch = Architecture(widths, ranks, 2, normalizers("exp", len(ranks)))
    sym = {name: sympy.Matrix(*shape, lambda a, b, name=name: sympy.Symbol(f"{name}_{a}{b}"))
           for name, shape in arch.native_shapes()}
    P = sympy.eye(widths[0])
    expected = {}
    for i in range(1, len(ranks) + 1):
        expected[f"M{i}"] = P.T * sym[f"Q{i}"] * sym[f"K{i}"].T * P
        P = sym[f"V{i}"] * P
    expected["L"] = P
    S = Symbolic()
    as_array = {k: np.array(v.tolist(), dtype=object) for k, v in sym.items()}
    out = evaluate(reduction_graph(arch), S, {k: S.const(v) for k, v in as_array.items()})
    D = len(ranks)
    eta = reduction(NativeParams(tuple(as_array[f"Q{i}"] for i in range(1, D + 1)),
                                 tuple(as_array[f"K{i}"] for i in range(1, D + 1)),
                                 tuple(as_array[f"V{i}"] for i in range(1, D + 1)))).as_dict()
    for name, want in expected.items():
        assert sympy.expand(sympy.Matrix(out[name].tolist()) - want) == sympy.zeros(*want.shape), name
        assert sympy.expand(sympy.Matrix(eta[name].tolist()) - want) == sympy.zeros(*want.shape), name


def test_reduction_with_singular_values_loses_the_killed_directions():
    """V1 = e1 e1^T (rank one): every M_i, i >= 2, and L see only the first input coordinate."""
    arch = Architecture.uniform(2, 3, 1, 2, "exp")
    theta = random_native(arch, seed=3)
    V1 = np.full((3, 3), Fraction(0), dtype=object)
    V1[0, 0] = Fraction(1)
    theta = NativeParams(theta.Q, theta.K, (V1, theta.V[1]))
    eta = reduction(theta)
    assert all(v == 0 for v in eta.M[1][1:, :].flat) and all(v == 0 for v in eta.M[1][:, 1:].flat)
    assert all(v == 0 for v in eta.L[:, 1:].flat)
    assert eta.M[1][0, 0] == theta.Q[1][0, 0] * theta.K[1][0, 0]


# ------------------------------------------------------------------- gauges
def _rank_fmpq(rows) -> int:
    rows = list(rows)
    return flint.fmpq_mat(len(rows), len(rows[0]), [flint.fmpq(v.numerator, v.denominator)
                                                    for row in rows for v in row]).rank()


@pytest.mark.parametrize("depth, width, ranks", [(3, 3, [1, 2, 3]), (2, 4, [2, 2]), (1, 2, [2]),
                                                 (3, 4, [2, 2, 2])])
def test_gauge_counts_and_independence(depth, width, ranks):
    """sum r_i^2 factor gauges and (D - 1) d^2 interface directions, all
    linearly independent at a generic rational point (exact rank over Q)."""
    arch = Architecture.uniform(depth, width, ranks, 2, "exp")
    theta = random_native(arch, seed=11)
    factor = list(factor_gauges(arch, theta))
    interface = list(interface_directions(arch, theta))
    assert len(factor) == sum(r * r for r in ranks)
    assert len(interface) == (depth - 1) * width**2
    assert all(v.shape == (arch.native_size,) for v in factor + interface)
    total = len(factor) + len(interface)
    assert _rank_fmpq(factor + interface) == total
    assert Matrix.rational(np.array(factor + interface, dtype=object)).rank() == total


def test_the_papers_kernel_dimension():
    """d = 4, r = 2, D = 3: (D - 1) d^2 + sum r_i^2 = 32 + 12 = 44 = 96 - 52 (Thm. 4)."""
    arch = Architecture.uniform(3, 4, 2, 4, "exp")
    theta = random_native(arch, seed=21, values="identity")
    gauges = list(factor_gauges(arch, theta)) + list(interface_directions(arch, theta))
    assert len(gauges) == 44
    assert _rank_fmpq(gauges) == 44
    rank = 16 + sum(r * (2 * 4 - r) for r in arch.ranks)
    assert arch.native_size - len(gauges) == rank == 52


def test_gauge_counts_for_rectangular_widths():
    arch = Architecture((2, 3, 1, 2), (1, 2, 1), 2, normalizers("exp", 3))
    theta = random_native(arch, seed=4)
    assert len(list(factor_gauges(arch, theta))) == 1 + 4 + 1
    assert len(list(interface_directions(arch, theta))) == 9 + 1


def test_factor_gauge_blocks():
    """The gauge E_ab moves exactly Q_i by Q_i E_ab and K_i by -K_i E_ba (eq. 50)."""
    arch = Architecture.uniform(2, 3, 2, 2, "exp")
    theta = random_native(arch, seed=5)
    off = arch.offsets()
    gauges = list(factor_gauges(arch, theta))
    xi = gauges[4 + 1]  # layer 2, (a, b) = (0, 1)
    E = np.full((2, 2), Fraction(0), dtype=object)
    E[0, 1] = Fraction(1)
    assert np.array_equal(xi[off["Q2"]: off["Q2"] + 6].reshape(3, 2), theta.Q[1].dot(E))
    assert np.array_equal(xi[off["K2"]: off["K2"] + 6].reshape(3, 2), -theta.K[1].dot(E.T))
    untouched = np.concatenate([xi[: off["Q2"]], xi[off["V2"]:]])
    assert all(v == 0 for v in untouched)


def test_gauges_vanish_in_the_first_order_variation_of_the_reduction():
    """d pi . xi = 0 by exact finite differences: pi(theta + h xi) - pi(theta) = O(h^2)."""
    arch = Architecture((2, 3, 2), (2, 1), 2, normalizers("exp", 2))
    theta = random_native(arch, seed=7)
    gauges = list(factor_gauges(arch, theta)) + list(interface_directions(arch, theta))
    off = arch.offsets()

    def moved(h, xi):
        blocks = {}
        for name, value in theta.as_dict().items():
            blocks[name] = value + h * xi[off[name]: off[name] + value.size].reshape(value.shape)
        D = arch.depth
        return reduction(NativeParams(tuple(blocks[f"Q{i}"] for i in range(1, D + 1)),
                                      tuple(blocks[f"K{i}"] for i in range(1, D + 1)),
                                      tuple(blocks[f"V{i}"] for i in range(1, D + 1)))).as_dict()

    base = reduction(theta).as_dict()
    for xi in gauges:
        # pi(theta + h xi) is a polynomial of degree 2D = 4 in h; its odd part is
        # a1 h + a3 h^3, and a1 = (8 (f(1) - f(-1)) - (f(2) - f(-2))) / 12 exactly
        f1, fm1, f2, fm2 = moved(1, xi), moved(-1, xi), moved(2, xi), moved(-2, xi)
        for name in base:
            linear = (8 * (f1[name] - fm1[name]) - (f2[name] - fm2[name])) / 12
            assert all(v == 0 for v in linear.flat), name
    # a non-gauge direction moves pi at first order
    bump = np.zeros(arch.native_size, dtype=object)
    bump[off["Q1"]] = Fraction(1)
    f1, fm1, f2, fm2 = moved(1, bump), moved(-1, bump), moved(2, bump), moved(-2, bump)
    assert any(v != 0 for v in ((8 * (f1["M1"] - fm1["M1"]) - (f2["M1"] - fm2["M1"])) / 12).flat)


# --------------------------------------------------------------- seeding
def test_seeded_parameters_are_reproducible_and_rational():
    arch = Architecture.uniform(2, 2, 1, 2)
    a, b = random_native(arch, seed=3), random_native(arch, seed=3)
    assert all(np.array_equal(x, y) for x, y in zip(a.flat(), b.flat()))
    assert all(isinstance(v, Fraction) for v in a.flat())
    assert not np.array_equal(random_native(arch, seed=4).flat(), a.flat())
    assert not np.array_equal(random_bank(arch, 2, seed=1), random_bank(arch, 2, seed=2))
    assert np.array_equal(random_bank(arch, 2, seed=1), random_bank(arch, 2, seed=1))


def test_identity_values():
    arch = Architecture.uniform(2, 3, 1, 2, "exp")
    theta = random_native(arch, seed=1, values="identity")
    assert all(np.array_equal(v, identity_matrix(3)) for v in theta.V)
