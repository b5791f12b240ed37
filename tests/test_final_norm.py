"""The final norm, a model-level part (issue 40 item 6: GPT-2's ``ln_f``, ViT's ``layernorm``): its blocks,
its graph against its naive reference and PyTorch's module, its declared symmetries as kernel vectors (and
a wrong direction not one), and an architecture without it unchanged."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from symattn.core.algebras import Float64, MPMath
from symattn.core.errors import SymattnError
from symattn.core.validate import BadType
from symattn.model.architecture import Architecture
from symattn.model.network import evaluate, jacobian, native_network
from symattn.model.parameters import random_bank, random_point
from symattn.model.parts.final_norm import FinalNorm, final_norm_shifts
from symattn.model.reference import numerical_outputs
from symattn.model.symmetries import declared_symmetries

EPS = Fraction(1, 10)


def _arch(final="layernorm", **kind):
    base = dict(skip="value", norm="pre", eps="1/10", bias=True, heads=2, combine="concat", mlp=3,
                activation="gelu_tanh")
    base.update(kind)
    arch = Architecture.uniform(2, 3, 1, 3, "exp", **base)
    return arch.with_final_norm(None if final is None else FinalNorm(final, EPS))


def test_blocks_and_description():
    arch, plain = _arch(), _arch(None)
    names = [b.name for b in arch.blocks]
    assert names[:len(plain.blocks)] == [b.name for b in plain.blocks]  # the layers' blocks unchanged, first
    assert names[len(plain.blocks):] == ["final_norm.gain2", "final_norm.shift2"]
    assert arch.native_size == plain.native_size + 6 and arch.shape("final_norm.gain2") == (3, 1)
    assert arch != plain and hash(arch) != hash(plain) and arch.describe().endswith("final LayerNorm eps = 1/10")
    assert not arch.in_paper_model and not arch.has_effective_map
    assert arch.with_layers(skip="value", norm="pre", eps="1/10", mlp=2).final_norm == arch.final_norm
    rebuild, args = arch.__reduce__()
    assert rebuild(*args) == arch
    assert [b.name for b in _arch("rmsnorm").blocks][-1] == "final_norm.gain2"
    with pytest.raises(BadType, match="final_norm must be a FinalNorm"):
        Architecture(layers=arch.layers, tokens=3, final_norm="layernorm")
    with pytest.raises(SymattnError, match="eps must be an exact rational"):
        FinalNorm("layernorm", 0.1)


@pytest.mark.parametrize("final", ["layernorm", "rmsnorm"])
@pytest.mark.parametrize("mask", ["none", "causal"])
def test_graph_equals_the_naive_reference_and_torch(final, mask):
    """``F = N(X_D)``: symattn's graph in mpmath against the naive reference (its own formula, token by token),
    and in float64 against ``torch.nn.LayerNorm``/``RMSNorm`` applied to the stack's output without it."""
    arch = _arch(final, mask=mask)
    point = random_point(arch, 1, "random")
    X = random_bank(arch, 2, 1)
    A = MPMath(40)
    vals = {n: A.const(v) for n, v in point.items()}
    vals["X"] = A.const(X)
    F = np.asarray(evaluate(native_network(arch), A, vals)["F"]).reshape(-1)
    ref = numerical_outputs(arch, "native", dict(point, X=X), 40)["F"].reshape(-1)
    scale = max(1, max(abs(b) for b in ref))
    assert max(abs(a - b) for a, b in zip(F, ref)) < mpmath.mpf(10) ** -28 * scale  # 40 digits, two layers
    torch = pytest.importorskip("torch")
    floats = {n: np.vectorize(float, otypes=[float])(v) for n, v in point.items()}
    floats["X"] = np.asarray(X, dtype=float)
    got = np.asarray(evaluate(native_network(arch), Float64(), floats)["F"], dtype=float)
    below = np.asarray(evaluate(native_network(arch.with_final_norm(None)), Float64(), floats)["F"], dtype=float)
    n = arch.final_norm
    module = n.torch_module(3, floats["final_norm.gain2"].reshape(-1),
                            floats["final_norm.shift2"].reshape(-1) if "final_norm.shift2" in floats else None)
    with torch.no_grad():
        want = module(torch.tensor(below.transpose(0, 2, 1))).numpy().transpose(0, 2, 1)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _float_jacobian_times(arch, point, X, directions):
    floats = {n: np.vectorize(float, otypes=[float])(v) for n, v in point.items()}
    floats["X"] = np.asarray(X, dtype=float)
    J = np.asarray(jacobian(native_network(arch), Float64(), floats, [b.name for b in arch.blocks]), dtype=float)
    J = J.reshape(-1, arch.native_size)
    D = np.array([np.vectorize(float, otypes=[float])(v) for v in directions])
    return np.abs(J @ D.T).max(axis=0) / (np.abs(J).max() * np.abs(D).sum(axis=1))


@pytest.mark.parametrize("mask", ["none", "causal"])
def test_shifts_through_the_final_norm_are_kernel_vectors(mask):
    """The LayerNorm shifts through a mean-removing final norm are declared (the writers of the residual
    stream along 1) and lie in the kernel of the Jacobian; a direction moved off them does not; none
    without the final norm, with an RMSNorm, or with a post-norm layer."""
    arch = _arch(mask=mask)
    point = {n: v * Fraction(1, 4) if arch.block(n).is_factor else v for n, v in random_point(arch, 2, "random").items()}
    X = random_bank(arch, 3, 2) * Fraction(1, 4)  # scores well inside float64's exp
    shifts = final_norm_shifts(arch)
    # per layer: 2 heads x 3 columns of O, 1 x bO, 3 columns of mlp.out, 1 x mlp.out_bias
    assert len(shifts) == 2 * (2 * 3 + 1 + 3 + 1)
    syms = declared_symmetries(arch, point)
    assert sum(s.kind == "LayerNorm shift" for s in syms) == len(shifts)
    assert _float_jacobian_times(arch, point, X, [s.vector for s in syms]).max() < 1e-11
    broken = next(s for s in syms if s.kind == "LayerNorm shift").vector.copy()
    broken[np.flatnonzero(broken != 0)[0]] += 1  # no longer along 1: visible
    assert _float_jacobian_times(arch, point, X, [broken]).max() > 1e-6
    assert final_norm_shifts(_arch(None)) == [] and final_norm_shifts(_arch("rmsnorm")) == []
    assert final_norm_shifts(_arch(norm="post")) == []
