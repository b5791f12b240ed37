"""The naive reference on the transformer-block layer kinds (issue 23 item 1, issue 24 item 1):
it agrees with the graph, is run by the commands' Jacobians, and fails when a block part is broken."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from symattn.analyses.numerical_spectrum import numerical_path_spectrum
from symattn.testing.banks import square_bank
from symattn.analyses.spectrum import native_spectrum
from symattn.core.algebras import MPMath, exact_series, series_for
from symattn.core.errors import CheckFailed, SymattnError
from symattn.model.architecture import Architecture
from symattn.model.interpreter import jacobian
from symattn.model.network import evaluate, native_network
from symattn.model.parameters import random_bank, random_point
from symattn.model import reference
from symattn.model.reference import PRIME, covers, numerical_check, numerical_outputs, reference_outputs


def _path_values(arch, order=4, seed=0):
    """The commands' setting: query/key factors and their biases times u, a constant bank, mod p."""
    A = series_for("modular", order)
    vals = {}
    for b in arch.blocks:
        v = random_point(arch, seed, "random")[b.name]
        vals[b.name] = A.series([np.zeros(v.shape, dtype=int), v]) if b.is_factor else A.const(v)
    vals["X"] = A.const(random_bank(arch, 2, seed))
    return A, vals


def _rho_values(arch, order=4, seed=0):
    """Inputs u Y over Q, every additive block zero: each constant term is zero (LayerNorm at eps)."""
    A = exact_series(order)
    point = random_point(arch, seed, "random")
    vals = {}
    for b in arch.blocks:
        v = point[b.name]
        vals[b.name] = A.const(np.zeros_like(v) if b.is_bias or b.is_shift else v)
    Y = random_bank(arch, 2, seed)
    vals["X"] = A.series([np.zeros(Y.shape, dtype=int), Y])
    return A, vals


def _residues(F):
    return np.vectorize(lambda v: int(v.p) * pow(int(v.q), -1, PRIME) % PRIME, otypes=[np.int64])(F)


@pytest.mark.parametrize("kind", [{"bias": True, "skip": "value"},
                                  {"bias": True, "heads": 2, "combine": "concat"},
                                  {"skip": "value", "mlp": 2, "activation": "poly:0,1,1/2", "bias": True}])
def test_reference_agrees_with_the_graph_on_the_path(kind):
    arch = Architecture.uniform(2, 2, 1, 3, "cosh", **kind)
    A, vals = _path_values(arch)
    graph = native_network(arch)
    assert graph.graph.get("architecture") is arch  # marked: every exact Jacobian is checked
    F = np.asarray(evaluate(graph, A, vals)["F"]) % PRIME
    assert (reference_outputs(arch, "native", vals, {}, 4, PRIME, A.field.p)["F"][0] == F).all()
    jacobian(graph, A, vals, [b.name for b in arch.blocks])  # the hook passes


@pytest.mark.parametrize("kind", [{"skip": "value", "norm": "post", "eps": "1/4"},
                                  {"skip": "value", "norm": "pre", "eps": "1/9", "mlp": 2, "activation": "tanh"},
                                  {"norm": "post", "eps": "1/4", "mlp": 2, "activation": "silu", "skip": "folded"}])
def test_reference_agrees_with_the_graph_over_q(kind):
    arch = Architecture.uniform(2, 2, 1, 3, "exp", **kind)
    A, vals = _rho_values(arch)
    F = evaluate(native_network(arch), A, vals)["F"]
    assert (reference_outputs(arch, "native", vals, {}, 4, PRIME)["F"][0] == _residues(F)).all()
    jacobian(native_network(arch), A, vals, [b.name for b in arch.blocks])


def test_exact_layer_norm_on_the_square_bank_is_checked(monkeypatch):
    arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value", norm="post", eps="1/10")
    calls = []
    real = reference.reference_check
    monkeypatch.setattr(reference, "reference_check", lambda *a, **k: calls.append(1) or real(*a, **k))
    s = native_spectrum(arch, bank=square_bank(arch, 6), method="exact")
    assert calls and s.certificate == "exact"


@pytest.mark.parametrize("activation", ["gelu", "gelu_tanh", "tanh", "sigmoid", "silu"])
def test_numerical_reference_agrees_with_the_graph(activation):
    arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value", norm="post", mlp=2, activation=activation,
                                bias=True)
    point = random_point(arch, 1, "random")
    X = random_bank(arch, 2, 1)
    A = MPMath(40)
    vals = {n: A.const(v) for n, v in point.items()}
    vals["X"] = A.const(X)
    F = np.asarray(evaluate(native_network(arch), A, vals)["F"]).reshape(-1)
    ref = numerical_outputs(arch, "native", dict(point, X=X), 40)["F"].reshape(-1)
    assert max(abs(a - b) for a, b in zip(F, ref)) < mpmath.mpf(10) ** -35
    J = jacobian(native_network(arch), A, vals, [b.name for b in arch.blocks])  # the numerical hook passes
    J[3, 2] = J[3, 2] + mpmath.mpf(10) ** -15
    with pytest.raises(CheckFailed, match="numerical"):
        numerical_check(arch, "native", vals, [b.name for b in arch.blocks], J, ["F"],
                        A.const(np.eye(arch.native_size, dtype=int)), 40)


def test_numerical_spectrum_runs_the_check(monkeypatch):
    arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value", norm="pre", mlp=2, activation="gelu")
    calls = []
    real = reference.numerical_check
    monkeypatch.setattr(reference, "numerical_check", lambda *a, **k: calls.append(1) or real(*a, **k))
    numerical_path_spectrum(arch, digits=40)
    # one per path parameter t, and one per precision of the certified rank at the path point t = 1
    assert len(calls) >= 3


@pytest.mark.parametrize("part, patch", [
    ("layer_norm", "eps"), ("layer_norm", "mean"), ("mlp", "bias"), ("biased_scores", "key")])
def test_a_broken_block_part_stops_the_command(monkeypatch, part, patch):
    """A block part built wrong (as the mutants do) fails the reference in the analysis itself."""
    import symattn.model.sublayers as sublayers
    import symattn.model.network as network
    from symattn.model.parts.layernorm import LayerNorm

    if part == "layer_norm":
        real_build = LayerNorm.build

        def broken_build(self, b, y, params, eps, width, tag):
            if patch == "eps":
                eps = Fraction(0) if eps else Fraction(1, 2)
            if patch == "mean":
                params = {"gain": params["shift"], "shift": params["gain"]}  # gain and shift swapped
            return real_build(self, b, y, params, eps, width, tag)

        monkeypatch.setattr(LayerNorm, "build", broken_build)
    elif part == "biased_scores":
        from symattn.model.parts.bias import Biases

        real_scores = Biases.scores

        def broken_scores(self, b, x, q, k, bq, bk, tag):
            return real_scores(self, b, x, q, k, bq, bq, tag)  # the keys get the query bias

        monkeypatch.setattr(Biases, "scores", broken_scores)
    else:
        real = getattr(sublayers, part)

        def broken(b, *args, **kw):
            args = list(args)
            if part == "mlp" and patch == "bias":
                args[1] = dict(args[1], **{"mlp.in_bias": args[1]["mlp.out_bias"]}) \
                    if args[1]["mlp.in_bias"] != args[1]["mlp.out_bias"] else args[1]
            return real(b, *args, **kw)

        monkeypatch.setattr(network, part, broken)
    if part == "biased_scores":
        arch = Architecture.uniform(1, 2, 1, 3, "cosh", skip="value", bias=True)
        with pytest.raises(CheckFailed, match="naive reference"):
            native_spectrum(arch)
        return
    norm = {"norm": "post"} if part == "layer_norm" else {}
    arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value", mlp=2 if part == "mlp" else 0,
                                activation="tanh", **norm)
    with pytest.raises(CheckFailed, match="numerical"):
        numerical_path_spectrum(arch, digits=40)


def test_covers_every_analytic_kind_and_refuses_relu():
    assert covers(Architecture.uniform(2, 2, 1, 3, "exp", skip="value", norm="pre", mlp=2, activation="gelu",
                                       bias=True, heads=2, combine="concat"))
    relu = Architecture.uniform(1, 2, 1, 3, "exp", mlp=2, activation="relu")
    assert not covers(relu) and native_network(relu).graph.get("architecture") is None


def test_exact_reference_refuses_irrational_constants():
    arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value", norm="post", eps="1/10")
    A = exact_series(2)
    vals = {n: A.const(v) for n, v in random_point(arch, 0, "random").items()}
    vals["X"] = A.const(random_bank(arch, 1, 0))
    with pytest.raises(SymattnError, match="rational square|nonzero constant"):
        reference_outputs(arch, "native", vals, {}, 2, PRIME)
