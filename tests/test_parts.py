"""The layer-part contract: every registered part, checked the same way (issue 38).

A new part needs its module, its own test and one registration line; the tests here run on every
entry of the registry, so a part that forgets a piece of the contract (its graph builder, its naive
reference, its PyTorch module, the facts its declared symmetries rest on) fails here without a test
of its own. The last test keeps analyses from knowing a part or a normalizer by its name.
"""

from __future__ import annotations

import ast
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from symattn.core.algebras import Float64
from symattn.model.architecture import Architecture
from symattn.model.interpreter import evaluate
from symattn.model.network import Builder
from symattn.model.parts import NORM_KINDS, norm_part

PACKAGE = Path(__file__).resolve().parents[1] / "symattn"
SPELLINGS = sorted(NORM_KINDS)


class _FloatRing:
    """The scalar ring of the naive reference, in floats (a second code path: no graph, no algebra)."""

    def number(self, c):
        return float(c)

    def zero(self):
        return 0.0

    def add(self, x, y):
        return x + y

    def sub(self, x, y):
        return x - y

    def mul(self, x, y):
        return x * y

    def fn(self, x, f):
        assert f.name == "rsqrt"
        return x ** -0.5


def _data(part, width=3, tokens=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(width, tokens))
    params = {"g": rng.normal(size=(width, 1)) + 2.0, "s": rng.normal(size=(width, 1))}
    return X, {p: params[p] for p in part.parameters}


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_builder_reference_and_torch_agree(spelling):
    torch = pytest.importorskip("torch")
    part, eps = norm_part(spelling), Fraction(1, 10)
    X, params = _data(part)
    b = Builder("part")
    out = part.build(b, b.input("X"), {p: b.input(p) for p in params}, eps, X.shape[0], "N")
    b.g.graph["outputs"]["F"] = out
    A = Float64()
    graph = evaluate(b.g, A, {"X": A.const(X), **{p: A.const(v) for p, v in params.items()}})["F"]
    naive = part.reference(_FloatRing(), X.tolist(), {p: v.tolist() for p, v in params.items()}, eps)
    module = part.torch_module(X.shape[0], eps, params["g"].reshape(-1),
                               params["s"].reshape(-1) if "s" in params else None)
    with torch.no_grad():
        theirs = module(torch.tensor(X.T, dtype=torch.float64)).numpy().T
    assert type(module).__name__ == part.torch_type
    np.testing.assert_allclose(np.asarray(graph, dtype=float), np.array(naive, dtype=float), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(graph, dtype=float), theirs, rtol=1e-12)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_declared_facts_hold_on_the_outputs(spelling):
    """The normals a part declares hold on its outputs, and each interface direction maps every output
    to an output of the same part with moved parameters (checked on the naive reference)."""
    part, eps = norm_part(spelling), Fraction(1, 10)
    X, params = _data(part, width=2, tokens=5, seed=1)
    ring = _FloatRing()
    Y = np.array(part.reference(ring, X.tolist(), {p: v.tolist() for p, v in params.items()}, eps))
    gain = [Fraction(v).limit_denominator(10**6) for v in params["g"].reshape(-1)]
    params = {"g": np.array([[float(v)] for v in gain]), **({"s": params["s"]} if "s" in params else {})}
    Y = np.array(part.reference(ring, X.tolist(), {p: v.tolist() for p, v in params.items()}, eps))
    shift = [Fraction(v).limit_denominator(10**6) for v in params["s"].reshape(-1)] if "s" in params else None
    if shift is not None:
        params["s"] = np.array([[float(v)] for v in shift])
        Y = np.array(part.reference(ring, X.tolist(), {p: v.tolist() for p, v in params.items()}, eps))
    normals = part.normals(gain, shift)
    assert bool(normals) == part.removes_mean
    for w, c in normals:
        np.testing.assert_allclose(np.array(w, dtype=float) @ Y, float(c), atol=1e-9)
    assert part.parameters == (("g", "s") if part.has_shift else ("g",))
    for H in part.interface_directions(2):
        G = np.eye(2) + 1e-3 * np.array(H, dtype=float)
        if np.count_nonzero(np.array(H, dtype=float) - np.diag(np.diag(np.array(H, dtype=float)))) == 0:
            moved = {"g": G @ params["g"], **({"s": G @ params["s"]} if "s" in params else {})}
            Z = np.array(part.reference(ring, X.tolist(), {p: v.tolist() for p, v in moved.items()}, eps))
            np.testing.assert_allclose(G @ Y, Z, atol=1e-12)


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("placement, skip", [("post", "none"), ("post", "value"), ("pre", "value")])
def test_declared_symmetries_are_kernel_vectors(spelling, placement, skip):
    """Every symmetry the stack declares with this part is an exact kernel vector in Q[constants] mod t^4
    (the Jacobian times the declared directions along the collapse path, on one seeded input)."""
    from symattn.analyses.collapse import kernel_product
    from symattn.analyses.contact import setup
    from symattn.core.algebras.constants import constant_series
    from symattn.model.parameters import random_bank

    arch = Architecture.uniform(2, 2, 1, 3, "exp", skip=skip, norm=placement, norm_kind=spelling, eps="1/10")
    s = setup(arch, 0, "identity", "constants", None, lambda msg: None)
    assert s.kernel.size >= 2  # the factor gauges at least
    K = kernel_product(arch, random_bank(arch, 1, 0), s.U, s.W, s.V, s.kernel.along_path(), constant_series(4))
    assert all(v == 0 for v in np.asarray(K).reshape(-1))


def _name_comparisons(tree: ast.AST) -> list[int]:
    """Lines comparing a ``.name``/``.norm``/``.norm_kind``/``.spelling`` attribute with a string."""
    attrs = {"name", "norm", "norm_kind", "spelling", "title"}
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        named = any(isinstance(s, ast.Attribute) and s.attr in attrs for s in sides)
        strings = any(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides) or any(
            isinstance(s, (ast.Tuple, ast.List, ast.Set)) and any(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                                                   for e in s.elts) for s in sides)
        if named and strings:
            lines.append(node.lineno)
    return lines


def test_analyses_never_compare_a_part_or_normalizer_name_with_a_string():
    """Analyses (and the symmetry declarations) ask parts and normalizers for properties."""
    files = sorted((PACKAGE / "analyses").glob("*.py")) + [PACKAGE / "model" / "symmetry_kinds.py",
                                                           PACKAGE / "model" / "symmetries.py"]
    found = {str(p.relative_to(PACKAGE)): _name_comparisons(ast.parse(p.read_text())) for p in files}
    found = {k: v for k, v in found.items() if v}
    assert not found, f"name comparisons (ask a property instead): {found}"


def test_the_name_check_catches_a_comparison():
    assert _name_comparisons(ast.parse('if layer.normalizer.name == "exp":\n    pass')) == [1]
    assert _name_comparisons(ast.parse('x = layer.norm in ("pre", "post")')) == [1]
    assert _name_comparisons(ast.parse('x = layer.pre_norm')) == []


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_homogeneous_degree_is_what_the_part_computes(spelling):
    """``homogeneous_degree``: 0 at eps = 0 (N(c y) = N(y) for c > 0, checked on the naive reference),
    None at eps > 0 (N(c y) != N(y))."""
    part = norm_part(spelling)
    X, params = _data(part, width=3, tokens=2, seed=2)
    ring = _FloatRing()
    for eps in (Fraction(0), Fraction(1, 10)):
        Y = np.array(part.reference(ring, X.tolist(), {p: v.tolist() for p, v in params.items()}, eps))
        Z = np.array(part.reference(ring, (3 * X).tolist(), {p: v.tolist() for p, v in params.items()}, eps))
        k = part.homogeneous_degree(eps)
        assert (k == 0) == np.allclose(Y, Z, rtol=1e-12)
        assert k in (0, None)


def test_parts_are_equal_by_kind_only():
    from symattn.model.parts.layernorm import LayerNorm
    from symattn.model.parts.rmsnorm import RMSNorm

    assert norm_part("layernorm") == LayerNorm() != RMSNorm() == norm_part("rmsnorm")
    assert len({LayerNorm(), RMSNorm(), LayerNorm()}) == 2
