"""The closed-form counts of the declared symmetry kinds (issue 42, item 1): a second path from the
architecture alone, compared with the declarations, and the check that ``symattn dimension`` runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from symattn.core.errors import CheckFailed
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_point
from symattn.model.symmetries import KINDS, GaugeKernel
from symattn.model.symmetry_counts import COUNTS, check_counts, kind_counts

ROOT = Path(__file__).resolve().parents[1]

#: n6's and bench_blocks' families, and more parts in combination (layer options of Architecture.uniform)
FAMILIES = {
    "LayerNorm post": dict(norm="post"),
    "LayerNorm post skip": dict(skip="value", norm="post"),
    "LayerNorm pre": dict(skip="value", norm="pre"),
    "RMSNorm post skip": dict(skip="value", norm="post", norm_kind="rmsnorm"),
    "RMSNorm post": dict(norm="post", norm_kind="rmsnorm"),
    "RMSNorm pre": dict(skip="value", norm="pre", norm_kind="rmsnorm"),
    "RMSNorm post MLP": dict(norm="post", norm_kind="rmsnorm", mlp=2),
    "RMSNorm post concat biases": dict(norm="post", norm_kind="rmsnorm", heads=2, combine="concat", bias=True),
    "MLP poly m = 3": dict(mlp=3, activation="poly:0,1,1/2"),
    "MLP poly m = 1": dict(mlp=1, activation="poly:0,1,1/2"),
    "MLP poly m = 4": dict(mlp=4, activation="poly:0,1,1/2"),
    "MLP tanh": dict(mlp=2, activation="tanh"),
    "MLP biases": dict(mlp=2, bias=True),
    "biases": dict(bias=True),
    "two summed heads": dict(heads=2),
    "two summed biased heads": dict(heads=2, bias=True),
    "concatenated heads": dict(heads=2, combine="concat", head_width=1),
    "concatenated biased heads": dict(heads=2, combine="concat", bias=True),
    "full post-norm tanh": dict(skip="value", norm="post", mlp=2, bias=True, combine="concat", activation="tanh"),
    "full post-norm GELU": dict(skip="value", norm="post", mlp=2, bias=True, combine="concat", activation="gelu"),
    "pre-norm biases": dict(skip="value", norm="pre", bias=True),
    "post-norm biases": dict(norm="post", bias=True),
    "post-norm biases skip": dict(norm="post", bias=True, skip="value"),
    "post-norm MLP poly skip": dict(norm="post", skip="value", mlp=2, activation="poly:0,1,1/2"),
    "pre-norm MLP": dict(skip="value", norm="pre", mlp=2),
    "post-norm MLP": dict(norm="post", mlp=2),
    "folded": dict(skip="folded"),
    "folded post-norm": dict(skip="folded", norm="post"),
}


def test_every_kind_has_a_count_function():
    assert set(COUNTS) == set(KINDS)


@pytest.mark.parametrize("width", [2, 3, 4])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_formulas_equal_the_declared_counts(family, width):
    """Every kind with a formula declares exactly its count, at D = 1, 2, 3 (a seeded, generic point)."""
    for D in (1, 2, 3) if width < 4 else (1, 2):
        arch = Architecture.uniform(D, width, 1, 3, "exp", **FAMILIES[family])
        declared = GaugeKernel(arch, random_point(arch, seed=5)).kinds()
        compared = check_counts(arch, declared)
        # every kind has a formula, but the polynomial redundancy of an MLP behind a norm or wider than 3
        missing = {k for k, c in kind_counts(arch).items() if c is None}
        assert missing <= {"MLP polynomial redundancy"}
        assert set(declared) - missing <= set(compared)


def test_the_rmsnorm_rotation_is_counted_and_declared():
    """After a post-norm RMSNorm layer without skip, so(d) acts (one direction at d = 2, three at d = 3)."""
    for d, want in ((2, 1), (3, 3)):
        arch = Architecture.uniform(2, d, 1, 3, "exp", norm="post", norm_kind="rmsnorm")
        assert kind_counts(arch)["norm rotation"].value == want
        assert GaugeKernel(arch, random_point(arch)).kinds()["norm rotation"] == want


def test_a_kind_off_its_formula_fails_in_one_line():
    arch = Architecture.uniform(2, 2, 1, 3, "exp", heads=2)
    declared = dict(GaugeKernel(arch, random_point(arch)).kinds())
    declared["interface"] -= 1
    with pytest.raises(CheckFailed, match=r"^symmetry kind 'interface' declares 3 directions, its formula gives 4 "
                                          r"\(exact\)$"):
        check_counts(arch, declared)
    with pytest.raises(CheckFailed, match="'made up' has no closed-form count"):
        check_counts(arch, {"made up": 1})


def test_a_given_point_compares_the_exact_counts_only():
    arch = Architecture.uniform(2, 2, 1, 3, "exp", norm="post", norm_kind="rmsnorm")
    declared = dict(GaugeKernel(arch, random_point(arch)).kinds())
    declared["norm rotation"] = 0  # a gain 0 at a given point: none declared there
    assert "norm rotation" not in check_counts(arch, declared, generic=False)
    with pytest.raises(CheckFailed, match="norm rotation"):
        check_counts(arch, declared)


def test_symattn_dimension_fails_when_a_kind_is_off_its_formula(tmp_path):
    """The user's command: exit 1 and one line naming the kind, declared versus formula."""
    script = tmp_path / "run.py"
    script.write_text(
        "import sys\n"
        "import symattn.model.symmetry_counts as sc\n"
        "from symattn.model.symmetry_counts import Count\n"
        "sc.COUNTS['factor gauge'] = lambda arch: Count(3, 'exact')\n"
        "from symattn.cli import main\n"
        "sys.exit(main(['dimension', '--depth', '2', '--widths', '2', '--ranks', '1', '--heads', '2']))\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 1, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "symmetry kind 'factor gauge' declares 4 directions, its formula gives 3" in lines[0]


def test_symattn_dimension_passes_with_the_counts():
    from symattn.analyses.dimension import neuromanifold_dimension

    r = neuromanifold_dimension(Architecture.uniform(2, 2, 1, 3, "exp", heads=2))
    assert r.symmetries == {"factor gauge": 4, "interface": 4}


def _rms_stack(p: dict, X, eps: float):
    """A plain float forward of two post-norm RMSNorm attention layers without skip (a second path:
    features are rows, the scores ``X^T Q K^T X`` normalised by softmax over the keys)."""
    import numpy as np

    def rms(Y, g):
        return g[:, None] * Y / np.sqrt((Y ** 2).mean(0) + eps)

    def att(X, Q, K, V):
        S = X.T @ Q @ K.T @ X
        E = np.exp(S - S.max(1, keepdims=True))
        return V @ X @ (E / E.sum(1, keepdims=True)).T

    Y = rms(att(X, p["Q1"], p["K1"], p["V1"]), p["attn_norm.gain1"])
    return rms(att(Y, p["Q2"], p["K2"], p["V2"]), p["attn_norm.gain2"])


def test_the_declared_rmsnorm_rotations_are_kernel_vectors_of_a_plain_forward():
    """Each declared norm rotation at d = 3 moves the output of a plain float forward at second order
    only (``h -> h / 10`` divides the change by about 100), where a random direction moves it at first
    order."""
    import numpy as np

    arch = Architecture.uniform(2, 3, 1, 3, "exp", norm="post", norm_kind="rmsnorm", eps="1/10")
    point = random_point(arch, seed=2)
    p = {name: np.asarray(v, dtype=float).reshape(arch.shape(name)) for name, v in point.items()}
    p["attn_norm.gain1"], p["attn_norm.gain2"] = p["attn_norm.gain1"].reshape(-1), p["attn_norm.gain2"].reshape(-1)
    rng = np.random.default_rng(0)
    banks = [rng.normal(size=(3, 3)) for _ in range(3)]
    kernel = GaugeKernel(arch, point)
    rotations = [s.vector for s in kernel.symmetries if s.kind == "norm rotation"]
    assert len(rotations) == 3

    def change(direction, h):
        moved = {n: v + h * direction[n].reshape(v.shape) for n, v in p.items()}
        return max(np.abs(_rms_stack(moved, X, 0.1) - _rms_stack(p, X, 0.1)).max() for X in banks)

    def blocks(vec):
        return {n: np.array([float(vec[c]) for c in arch.columns(n)]) for n in p}

    for vec in rotations:
        xi = blocks(vec)
        assert change(xi, 1e-3) / change(xi, 1e-4) > 50
    random_move = {n: rng.normal(size=v.size) for n, v in p.items()}
    assert change(random_move, 1e-3) / change(random_move, 1e-4) < 20
