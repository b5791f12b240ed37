"""Transformer-block layer kinds against PyTorch's own modules (float64 ``torch.func.jacrev``).

Each new layer kind's Jacobian in all its parameters is computed by symattn (exact series
over Q where every constant is rational; otherwise certified balls) and compared with
``torch.func.jacrev`` of the same block built from ``torch.nn`` modules (never from
symattn's code) at several points. Skipped without PyTorch.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from symattn.core.algebras import BallAlgebra, exact_series, modular_series
from symattn.core.algebras.functions import Elementwise, NotRational
from symattn.core.errors import SymattnError
from symattn.model.architecture import Architecture
from symattn.model.network import jacobian, native_network, Builder
from symattn.model.parts.layernorm import LayerNorm
from symattn.model.parameters import random_point, random_bank

try:
    import torch
except ImportError:  # the comparisons with torch.nn are skipped, the other tests run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (pip install 'symattn[torch]')")

#: PyTorch warns that vmap over its CPU attention kernel falls back to a loop (harmless here).
pytestmark = pytest.mark.filterwarnings("ignore:There is a performance drop:UserWarning")


def _ours(arch, point, bank, algebra):
    names = [b.name for b in arch.blocks]
    with algebra.working():
        vals = {n: algebra.const(point[n]) for n in names}
        vals["X"] = algebra.const(bank)
        J = jacobian(native_network(arch), algebra, vals, names + ["X"])
    J = J[0] if J.ndim == 3 else J
    return np.vectorize(lambda v: float(v.mid()) if hasattr(v, "mid") else float(v), otypes=[float])(J)


def _torch_block(arch, point, bank):
    """``jacrev`` of the layer built from torch.nn modules, in every parameter and the input."""
    layer = arch.layers[0]
    d, H = layer.width_in, len(layer.heads)
    r = layer.heads[0].rank
    f = lambda a: torch.tensor(np.vectorize(float)(np.asarray(a, dtype=object)), dtype=torch.float64)  # noqa: E731
    names = [b.name for b in arch.blocks]
    flat0 = torch.cat([f(point[n]).reshape(-1) for n in names] + [f(bank).reshape(-1)])
    shapes = [np.shape(point[n]) for n in names] + [np.shape(bank)]
    act = {"tanh": torch.tanh, "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu,
           "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh")}

    def fwd(flat):
        parts, off = {}, 0
        for n, s in zip(names + ["X"], shapes):
            size = int(np.prod(s))
            parts[n] = flat[off: off + size].reshape(s)
            off += size
        X = parts["X"].transpose(1, 2)  # (B, n, d), tokens as rows
        mha = torch.nn.MultiheadAttention(d, H, bias=layer.bias, batch_first=True, dtype=torch.float64)
        sfx = [""] if H == 1 else [f"h{h}" for h in range(1, H + 1)]
        scale = math.sqrt(r)
        wq = torch.cat([scale * parts[f"Q1{s}"].T for s in sfx])
        wk = torch.cat([parts[f"K1{s}"].T for s in sfx])
        wv = torch.cat([parts[f"V1{s}"] for s in sfx])
        params = {"in_proj_weight": torch.cat([wq, wk, wv]), "out_proj.weight": torch.cat([parts[f"O1{s}"] for s in sfx], 1)}
        if layer.bias:
            params["in_proj_bias"] = torch.cat([scale * torch.cat([parts[f"bQ1{s}"].reshape(-1) for s in sfx]),
                                                torch.cat([parts[f"bK1{s}"].reshape(-1) for s in sfx]),
                                                torch.cat([parts[f"bV1{s}"].reshape(-1) for s in sfx])])
            params["out_proj.bias"] = parts["bO1"].reshape(-1)
        att = lambda z: torch.func.functional_call(mha, params, (z, z, z), {"need_weights": False})[0]  # noqa: E731

        def ln(z, which):
            norm = torch.nn.LayerNorm(d, eps=float(layer.eps), dtype=torch.float64)
            return torch.func.functional_call(norm, {"weight": parts[f"{which}.gain1"].reshape(-1),
                                                     "bias": parts[f"{which}.shift1"].reshape(-1)}, (z,))

        def ff(z):
            lin1 = torch.nn.Linear(d, layer.mlp, dtype=torch.float64)
            lin2 = torch.nn.Linear(layer.mlp, d, dtype=torch.float64)
            h = torch.func.functional_call(lin1, {"weight": parts["mlp.in1"], "bias": parts["mlp.in_bias1"].reshape(-1)}, (z,))
            if layer.activation.is_polynomial:
                h = sum(float(c) * h**k for k, c in enumerate(layer.activation.coefficients))
            else:
                h = act[str(layer.activation)](h)
            return torch.func.functional_call(lin2, {"weight": parts["mlp.out1"], "bias": parts["mlp.out_bias1"].reshape(-1)}, (h,))

        res = layer.skip != "none"
        pre, post = layer.norm == "pre", layer.norm == "post"
        y = att(ln(X, "attn_norm") if pre else X)
        y = X + y if res else y
        y = ln(y, "attn_norm") if post else y
        if layer.mlp:
            z = ff(ln(y, "mlp_norm") if pre else y)
            z = y + z if res else z
            y = ln(z, "mlp_norm") if post else z
        return y.transpose(1, 2).reshape(-1)

    return torch.func.jacrev(fwd)(flat0).numpy()


KINDS = {
    "biases, W_O": dict(combine="concat", bias=True),
    "two heads, biases": dict(combine="concat", bias=True, heads=2),
    "MLP poly": dict(combine="concat", mlp=3, activation="poly:1/2,1,0,1/3"),
    "MLP tanh": dict(combine="concat", mlp=3, activation="tanh"),
    "MLP gelu": dict(combine="concat", mlp=2, activation="gelu"),
    "MLP gelu_tanh": dict(combine="concat", mlp=2, activation="gelu_tanh"),
    "MLP silu": dict(combine="concat", mlp=2, activation="silu"),
    "post-norm": dict(combine="concat", norm="post", eps="1/10"),
    "post-norm skip": dict(combine="concat", skip="value", norm="post", eps="1/10"),
    "pre-norm skip": dict(combine="concat", skip="value", norm="pre", eps="1/10"),
    "full post-norm layer": dict(combine="concat", skip="value", norm="post", eps="1/10", bias=True, mlp=3),
    "full pre-norm layer": dict(combine="concat", skip="value", norm="pre", eps="1/10", bias=True, mlp=3,
                                activation="gelu"),
}


@needs_torch
@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_block_jacobian_matches_torch(kind, seed):
    heads = KINDS[kind].get("heads", 1)
    width = 2 * heads  # PyTorch's heads have query/key and value width d / H
    arch = Architecture.uniform(1, width, 2, 3, "exp", head_width=2, **KINDS[kind])
    point, bank = random_point(arch, seed), random_bank(arch, 2, seed)
    algebra = BallAlgebra(30)  # scores away from 0: exp(score) is irrational, so certified balls
    ours, ref = _ours(arch, point, bank, algebra), _torch_block(arch, point, bank)
    assert ours.shape == ref.shape
    assert np.allclose(ours, ref, rtol=1e-7, atol=1e-9 * np.abs(ref).max())  # float64 cancellation in torch


@needs_torch
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_layer_norm_exact_series_matches_torch(seed):
    """LayerNorm alone, exactly over Q, at tokens whose variance plus eps is a rational square
    (d = 2: var = delta^2, and delta = (eps - k^2) / (2k) gives delta^2 + eps = ((eps + k^2) / (2k))^2)."""
    rng = np.random.default_rng(seed)
    eps, n = Fraction(1, 10), 3
    X = np.empty((2, n), dtype=object)
    for a in range(n):
        k, mid = Fraction(int(rng.integers(1, 9)), int(rng.integers(1, 9))), Fraction(int(rng.integers(-5, 5)), 3)
        delta = (eps - k * k) / (2 * k)
        X[:, a] = [mid + delta, mid - delta]
    g = np.array([[Fraction(3, 2)], [Fraction(-1, 3)]], dtype=object)
    s = np.array([[Fraction(1, 5)], [Fraction(2)]], dtype=object)
    b = Builder("ln")
    out = LayerNorm().build(b, b.input("X"), {"gain": b.input("g"), "shift": b.input("s")}, eps, 2, "LN")
    b.g.graph["outputs"]["F"] = out
    A = exact_series(1)
    J = jacobian(b.g, A, {"X": A.const(X), "g": A.const(g), "s": A.const(s)}, ["X", "g", "s"])[0]
    ours = np.vectorize(float)(J)
    norm = torch.nn.LayerNorm(2, eps=float(eps), dtype=torch.float64)
    f = lambda a: torch.tensor(np.vectorize(float)(a), dtype=torch.float64)  # noqa: E731

    def fwd(flat):
        x, gg, ss = flat[:6].reshape(2, 3), flat[6:8], flat[8:10]
        y = torch.func.functional_call(norm, {"weight": gg, "bias": ss}, (x.T,))
        return y.T.reshape(-1)

    ref = torch.func.jacrev(fwd)(torch.cat([f(X).reshape(-1), f(g).reshape(-1), f(s).reshape(-1)])).numpy()
    assert np.allclose(ours, ref, rtol=1e-12, atol=1e-12)


def test_exact_series_refuse_irrational_constants():
    A = exact_series(3)
    with pytest.raises(NotRational, match="not the square of a rational"):
        A.fn(A.series([[2], [1]]), Elementwise("rsqrt"))
    with pytest.raises(NotRational, match="transcendental"):
        A.fn(A.series([[1], [1]]), Elementwise("tanh"))
    with pytest.raises(NotRational, match="irrational"):
        A.fn(A.series([[0], [1]]), Elementwise("gelu"))
    M = modular_series(3)
    with pytest.raises(NotRational, match="sign"):
        M.fn(M.series([[4], [1]]), Elementwise("rsqrt"))
    with pytest.raises(SymattnError, match="ReLU is not analytic"):
        A.fn(A.series([[0], [1]]), Elementwise("relu"))
    assert [str(v) for v in A.fn(A.series([[0], [1]]), Elementwise("tanh"))[:, 0]] == ["0", "1", "0"]
    from symattn.model.parts import activation_part

    assert activation_part("poly:0,0,1").homogeneous_degree() == 2


def test_relu_runs_in_float64_only():
    from symattn.core.algebras import Float64

    arch = Architecture.uniform(1, 2, 1, 3, "exp", combine="concat", mlp=2, activation="relu")
    A = Float64()
    vals = {k: A.const(v) for k, v in random_point(arch).items()}
    vals["X"] = A.const(random_bank(arch, 1))
    J = jacobian(native_network(arch), A, vals, [b.name for b in arch.blocks])
    assert J.shape[1] == arch.native_size


# ---------------------------------------------------------------- symmetries as exact kernel vectors
def _exact_jacobian_times(arch, point, bank, directions):
    """``J xi`` exactly over Q at a rational point (normalizer 1 + s^2 and polynomial activations keep
    every value rational; sympy Rationals)."""
    from symattn.core.algebras import Symbolic

    A = Symbolic()
    vals = {n: A.const(point[n]) for n in point}
    vals["X"] = A.const(bank)
    return jacobian(native_network(arch), A, vals, [b.name for b in arch.blocks],
                    directions=A.const(np.array(directions, dtype=object)))


@pytest.mark.parametrize("kind, expected", [
    (dict(bias=True, combine="concat"), {"factor gauge", "value gauge", "bias transfer", "interface",
                                         "interface bias shift"}),
    (dict(bias=True, heads=2), {"factor gauge", "bias transfer", "interface", "interface bias shift"}),
    (dict(mlp=2, activation="poly:0,0,3"), {"factor gauge", "MLP interface", "MLP scaling", "interface"}),
    (dict(mlp=2, activation="poly:1,1,1", bias=True), {"factor gauge", "MLP interface", "MLP scaling",
                                                        "interface", "interface bias shift"}),
    (dict(mlp=2, activation="poly:0,1,0,1"), {"factor gauge", "MLP interface", "interface"}),
    (dict(mlp=3, activation="poly:0,1,1/2"), {"factor gauge", "MLP interface", "MLP scaling", "interface",
                                              "MLP polynomial redundancy"}),
])
def test_block_symmetries_are_exact_kernel_vectors(kind, expected):
    """Every declared direction of two block layers is an exact kernel vector of the Jacobian (over Q:
    normalizer 1 + s^2, polynomial activations): the MLP scalings of a shifted monomial (1 + x + x^2
    is one; x + x^3 is none) and the interface after an MLP among them."""
    from symattn.model.symmetries import declared_symmetries

    arch = Architecture.uniform(2, 2, 1, 3, "1+s^2", **kind)
    point, bank = random_point(arch, 3), random_bank(arch, 2, 3)
    sym = declared_symmetries(arch, point)
    assert {s.kind for s in sym} == expected
    assert all(v == 0 for v in _exact_jacobian_times(arch, point, bank, [s.vector for s in sym]).reshape(-1))
    broken = sym[-1].vector.copy()
    broken[np.flatnonzero(broken != 0)[0]] += 1  # a wrong direction is not in the kernel
    assert any(v != 0 for v in _exact_jacobian_times(arch, point, bank, [broken]).reshape(-1))


@pytest.mark.parametrize("kind", [dict(norm="post"), dict(skip="value", norm="post"), dict(skip="value", norm="pre")])
def test_layer_norm_symmetries_exact_on_a_square_bank(kind):
    """The LayerNorm symmetries (and the spectrum) exactly over Q: the bank makes every LayerNorm
    constant a rational square; the numerical tier agrees."""
    from symattn.analyses.numerical_spectrum import numerical_path_spectrum
    from symattn.testing.banks import square_bank
    from symattn.analyses.spectrum import native_spectrum

    arch = Architecture.uniform(1, 2, 1, 3, "exp", eps="1/10", **kind)
    s = native_spectrum(arch, bank=square_bank(arch, 6), method="exact")
    assert {"LayerNorm shift", "LayerNorm interface"} & set(s.kernel_kinds)
    assert any("exact over Q" in note for note in s.notes)
    n = numerical_path_spectrum(arch, digits=80)
    assert (n.bands, n.rank, n.declared, n.unexplained) == (
        sorted((b.order, b.multiplicity) for b in s.bands), s.rank, s.kernel, s.undecided)


# ---------------------------------------------------------------- spec, options, refusals
def test_spec_and_cli_options_accept_block_parts(tmp_path):
    from symattn.model.spec import load_spec

    arch = load_spec('width = 2\ntokens = 3\n[[layer]]\nskip = "value"\nnorm = "pre"\neps = "1e-5"\n'
                     'mlp = 3\nactivation = "gelu"\nbias = true\ncombine = "concat"\nrepeat = 2')
    assert arch.depth == 2 and arch.layers[1].eps == Fraction(1, 100000) and arch.layers[1].mlp == 3
    for bad, message in (('norm = "middle"', "norm must be"), ('activation = "swish"', "activation must be"),
                         ("eps = 0.1", "eps must be a string"), ('norm = "pre"', "pre-norm layer needs")):
        with pytest.raises(SymattnError, match=message):
            load_spec(f"width = 2\ntokens = 3\n[[layer]]\n{bad}")


def test_cli_says_why_the_exact_tier_refuses(capsys):
    """The exact route over Q refuses a LayerNorm's square root (undecided, one line); the default route
    says that the modular series refuse it and continues in Q adjoined the constants."""
    from symattn.cli import main

    assert main(["spectrum", "--depth", "1", "--width", "2", "--tokens", "3", "--norm", "post",
                 "--method", "exact"]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("symattn: undecided:") and "1/sqrt" in err
    assert main(["spectrum", "--depth", "1", "--width", "2", "--tokens", "3", "--norm", "post"]) == 0
    out = capsys.readouterr().out
    assert "note: the modular series refuse this stack (a square root" in out and "certificate: certified" in out
    assert main(["spectrum", "--depth", "1", "--width", "2", "--tokens", "3", "--mlp", "2",
                 "--activation", "relu"]) == 2
    assert "ReLU is not analytic" in capsys.readouterr().err


def test_docs_table_is_computed():
    """A row of the committed docs table, recomputed (the table is written by benchmarks/bench_blocks.py)."""
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_blocks import rst, spectrum_row

    row = spectrum_row("post-norm block with skip", 1)
    table = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "blocks_table.inc").read_text()
    lines = rst([row], {}).splitlines()
    mine = lines[lines.index("   * - post-norm block with skip"):][:10]
    start = table.splitlines().index(mine[0])
    assert table.splitlines()[start: start + 9] == mine[:9]  # every column but the seconds, the claim included
    assert mine[8] == "     - generic (evidence, 2 points) (seeds 0, 1)"


@pytest.mark.parametrize("phi, kind", [
    ("exp", dict(norm="post")),
    ("1+s^2", dict(norm="post", bias=True)),
    ("exp", dict(skip="value", norm="pre", bias=True, mlp=2, activation="tanh")),
    ("1+s^2", dict(norm="post", bias=True, mlp=2, activation="poly:0,1,1/2")),
    ("exp", dict(skip="value", norm="post", bias=True, mlp=2, activation="gelu", heads=2, combine="concat")),
])
@pytest.mark.parametrize("zero_gain", [False, True])
def test_layer_norm_normals_are_kernel_vectors(phi, kind, zero_gain):
    """A LayerNorm's output has 1^T xhat = 0: every map reading it, moved by e_k (1/g)^T with its
    bias moved by -c e_k (c = (1/g)^T s), or by e_k e_j^T where the gain g_j is 0, keeps the
    function; with biases, so does the LayerNorm's shift moved into the readers' biases (and the
    residual's). Ball arithmetic at 60 digits: J xi within 10^-40 of 0; a wrong compensation is
    caught (a ball of J xi excluding 0) for at least one of them."""
    from symattn.analyses.numerics import observation_jacobian
    from symattn.core.algebras import BallAlgebra
    from symattn.model.symmetries import declared_symmetries

    arch = Architecture.uniform(2, 2, 1, 3, phi, eps="1/1000", **kind)
    point, bank = random_point(arch, 5), random_bank(arch, 2, 5)
    gains = sorted(n for n in point if arch.block(n).is_norm_gain)
    for g in gains:  # the random point's zero gains made a constant LayerNorm output (and F)
        point[g][point[g] == 0] = Fraction(3, 2)
    if zero_gain:
        point[gains[0]][0] = 0
    declared = declared_symmetries(arch, point)
    normals = [s for s in declared if s.kind == "LayerNorm normal"]
    assert normals and all(s.values_only for s in normals)
    if kind.get("bias"):  # every reader has a bias: the LayerNorm's shift passes into them (declared where
        # independent of the rest: at width 2 the LayerNorm's GL(2) interface spans some of them)
        normals += [s for s in declared if s.kind == "LayerNorm bias transfer"]
    J = observation_jacobian(arch, point, bank, BallAlgebra(60))
    scale = max(abs(float(v.mid())) for v in J.reshape(-1))

    def times(xi):
        import flint

        from symattn.core.algebras.balls import digits_to_bits, precision

        with precision(digits_to_bits(60)):
            return J.dot(np.array([flint.arb(v.numerator) / v.denominator for v in map(Fraction, xi)],
                                  dtype=object))

    for s in normals:
        products = times(s.vector)
        assert all(abs(float(v.mid())) < 1e-40 * scale and v.rad() < 1e-30 for v in products)
    caught = []
    for normal in normals:
        broken = normal.vector.copy()
        moved = np.flatnonzero(broken != 0)
        bias = [c for c in moved if arch.column_blocks()[c].part == "bias"]
        if bias:
            broken[bias[0]] += 1  # the bias compensation off by one
        else:  # a softmax key without bias: a column off the normal (a unit normal: another entry)
            block = arch.column_blocks()[moved[0]].name
            broken[moved[0] if len(moved) > 1 else [c for c in arch.columns(block) if c != moved[0]][0]] += 1
        caught.append(any(not v.contains(0) for v in times(broken)))
    assert any(caught)  # (one parameter's derivative may vanish at the point)


def test_dependent_layer_norm_normals_are_dropped_before_the_path_split():
    """With concatenated heads the value gauges and LayerNorm shifts span part of the V normals;
    the dependent ones are not declared, so the full post-norm layer at D = 2 reaches its real
    refusal (the square root mod p), not a dependent kernel split."""
    from symattn.analyses.spectrum import native_spectrum
    from symattn.core.linalg import Matrix
    from symattn.model.symmetries import declared_symmetries

    arch = Architecture.uniform(2, 2, 1, 3, "exp", skip="value", norm="post", mlp=2, bias=True,
                                combine="concat", activation="gelu")
    syms = declared_symmetries(arch, random_point(arch, 1))
    assert Matrix.rational(np.array([s.vector for s in syms], dtype=object)).rank() == len(syms)
    with pytest.raises(NotRational, match="square root"):
        native_spectrum(arch, fallback=False)


def test_docs_table_rows_render_the_table():
    """The rows saved beside the docs table (read back by ``bench_blocks.py --only``) render it exactly."""
    import pathlib
    import sys

    root = pathlib.Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "benchmarks"))
    from bench_blocks import FAMILIES, _load_rows, fits, rst

    rows = _load_rows(str(root / "docs" / "blocks_table.inc"))
    table = (root / "docs" / "blocks_table.inc").read_text()
    assert rst(rows, {family: fits(rows, family) for family in FAMILIES}) == table
