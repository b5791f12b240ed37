"""graph.jacobian (symattn's jacfwd) and its independent series check."""

from __future__ import annotations

import numpy as np
import pytest

from symattn.core.algebras import Float64, Tangent, exact_series, modular_series
from symattn.core.errors import CheckFailed
from symattn.model.network import (effective_network, evaluate, jacobian, native_network,
                           series_derivative_check)
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank, random_native
from symattn.analyses.spectrum import native_spectrum


def _native_values(arch, algebra, bank):
    vals = {k: algebra.const(v) for k, v in random_native(arch, seed=3).as_dict().items()}
    vals["X"] = algebra.const(bank)
    return vals


def test_rows_are_output_entries_and_columns_are_wrt_entries():
    arch = Architecture.uniform(2, 2, 1, 3, "exp")
    A = Float64()
    bank = random_bank(arch, 2, seed=1)
    vals = _native_values(arch, A, bank)
    names = ["Q2", "V1"]
    J = jacobian(native_network(arch), A, vals, names)

    def F0(v):
        return evaluate(native_network(arch), A, v)["F"]

    assert J.shape == (2 * 2 * 3, 2 + 4)
    col, h = 0, 1e-6
    for name in names:
        for idx in np.ndindex(vals[name].shape):  # row-major within each block
            plus, minus = dict(vals), dict(vals)
            plus[name], minus[name] = vals[name].copy(), vals[name].copy()
            plus[name][idx] += h
            minus[name][idx] -= h
            fd = ((F0(plus) - F0(minus)) / (2 * h)).reshape(-1)  # row-major output
            assert np.allclose(J[:, col], fd, atol=1e-6)
            col += 1


def test_directions_are_combinations_of_columns():
    arch = Architecture.uniform(1, 2, 1, 2, "exp")
    A = modular_series(5)
    vals = {k: A.const(v) for k, v in random_native(arch, seed=0).as_dict().items()}
    vals["X"] = A.series([np.zeros((3, 2, 2), dtype=int), random_bank(arch, 3, seed=0)])
    names = [n for n, _ in arch.native_shapes()]
    full = jacobian(native_network(arch), A, vals, names)
    xi = np.random.default_rng(0).integers(0, 50, size=(2, arch.native_size))
    J = jacobian(native_network(arch), A, vals, names, directions=A.const(xi))
    assert (J == (np.matmul(full, xi.T) % A.field.p)).all()


def test_exact_and_modular_agree():
    arch = Architecture.uniform(2, 1, 1, 2, "exp")
    Y = random_bank(arch, 2, seed=0)
    theta = {"L": [[1]], "M1": [[2]], "M2": [[-1]]}
    out = []
    for A in (exact_series(8), modular_series(8)):
        vals = {k: A.const(v) for k, v in theta.items()}
        vals["X"] = A.series([np.zeros(Y.shape, dtype=int), Y])
        out.append(jacobian(effective_network(arch), A, vals, ["L", "M1", "M2"]))
    assert (modular_series(8).field.convert(out[0]) == out[1]).all()


@pytest.fixture
def doubled_phi_derivative(monkeypatch):
    """The mutant of issue 13: the tangent rule of phi with its derivative doubled."""
    rule = Tangent.phi

    def doubled(self, x, normalizer, derivative=0, layer=0):
        out = rule(self, x, normalizer, derivative, layer)
        if out.tangent is not None:
            out.tangent = self.base.add(out.tangent, out.tangent)
        return out

    monkeypatch.setattr(Tangent, "phi", doubled)


def test_series_check_catches_a_doubled_phi_derivative(doubled_phi_derivative):
    arch = Architecture.uniform(2, 2, 1, 2, "exp")
    with pytest.raises(CheckFailed, match="disagrees with the series expansion"):
        native_spectrum(arch, bank="auto")
    with pytest.raises(CheckFailed):
        native_spectrum(arch, bank="auto", method="exact")


def test_series_check_passes_a_correct_jacobian_with_several_outputs():
    from symattn.model.network import reduction_graph

    arch = Architecture.uniform(2, 2, 1, 2, "exp")
    A = exact_series(2)
    vals = {k: A.const(v) for k, v in random_native(arch, seed=0).as_dict().items()}
    g = reduction_graph(arch)
    names = [n for n, _ in arch.native_shapes()]
    J = jacobian(g, A, vals, names, output=list(g.graph["outputs"]), verify=0)
    eye = A.const(np.eye(arch.native_size, dtype=int))
    series_derivative_check(g, A, vals, names, J, list(g.graph["outputs"]), eye, samples=3)
    J[0, -1, 0] += 1
    with pytest.raises(CheckFailed):
        series_derivative_check(g, A, vals, names, J, list(g.graph["outputs"]), eye, samples=3)


def test_independent_check_passes_a_skip_connection() -> None:
    """X + V S(X) adds a delta-free operand on the left (regression: the check
    negated it, because bound methods were compared with ``is``)."""
    from symattn.core.algebras import series_for
    from symattn.model.architecture import Architecture
    from symattn.model.parameters import random_bank
    from symattn.model.network import native_network
    from symattn.model.parameters import random_point

    base = Architecture.uniform(1, 2, 1, 3, "exp")
    arch = base.with_layers(skip="value")
    graph = native_network(arch)
    A = series_for("modular", 3)
    vals = {k: A.const(v) for k, v in random_point(arch, 0).items()}
    vals["X"] = A.series([np.zeros((1, 2, 3), dtype=int), random_bank(base, 1, 0)])
    jacobian(graph, A, vals, [n for n in graph.graph["inputs"] if n != "X"], verify=2)
