"""The layer-part contract: every registered part, checked the same way (issue 38).

A new part needs its module, its own test and one registration line; the tests here run on every
entry of the registries (norms, activations, skips, head combinations, biases, heads), so a part that forgets a piece of the contract (its graph builder, its naive
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
from symattn.model.parts import (ACTIVATION_KINDS, BIAS_KINDS, COMBINE_KINDS, NORM_KINDS, SKIP_KINDS, activation_part,
                                 bias_part, combine_part, norm_part, skip_part)

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

    def activation(self, x, part):
        import mpmath

        return float(part.mp_formula(mpmath.mp)(mpmath.mpf(x)))


def _data(part, width=3, tokens=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(width, tokens))
    params = {"gain": rng.normal(size=(width, 1)) + 2.0, "shift": rng.normal(size=(width, 1))}
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
    module = part.torch_module(X.shape[0], eps, params["gain"].reshape(-1),
                               params["shift"].reshape(-1) if "shift" in params else None)
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
    gain = [Fraction(v).limit_denominator(10**6) for v in params["gain"].reshape(-1)]
    params = {"gain": np.array([[float(v)] for v in gain]), **({"shift": params["shift"]} if "shift" in params else {})}
    Y = np.array(part.reference(ring, X.tolist(), {p: v.tolist() for p, v in params.items()}, eps))
    shift = [Fraction(v).limit_denominator(10**6) for v in params["shift"].reshape(-1)] if "shift" in params else None
    if shift is not None:
        params["shift"] = np.array([[float(v)] for v in shift])
        Y = np.array(part.reference(ring, X.tolist(), {p: v.tolist() for p, v in params.items()}, eps))
    normals = part.normals(gain, shift)
    assert bool(normals) == part.removes_mean
    for w, c in normals:
        np.testing.assert_allclose(np.array(w, dtype=float) @ Y, float(c), atol=1e-9)
    assert part.parameters == (("gain", "shift") if part.has_shift else ("gain",))
    for H in part.interface_directions(2):
        G = np.eye(2) + 1e-3 * np.array(H, dtype=float)
        if np.count_nonzero(np.array(H, dtype=float) - np.diag(np.diag(np.array(H, dtype=float)))) == 0:
            moved = {"gain": G @ params["gain"], **({"shift": G @ params["shift"]} if "shift" in params else {})}
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
    attrs = {"name", "norm", "norm_kind", "spelling", "title", "skip", "combine"}
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
    files = sorted((PACKAGE / "analyses").glob("*.py")) + [
        PACKAGE / "model" / name for name in ("symmetry_kinds.py", "symmetries.py", "symmetry_counts.py", "network.py")]
    found = {str(p.relative_to(PACKAGE)): _name_comparisons(ast.parse(p.read_text())) for p in files}
    found = {k: v for k, v in found.items() if v}
    assert not found, f"name comparisons (ask a property instead): {found}"


def test_the_name_check_catches_a_comparison():
    assert _name_comparisons(ast.parse('if layer.normalizer.name == "exp":\n    pass')) == [1]
    assert _name_comparisons(ast.parse('x = layer.norm in ("pre", "post")')) == [1]
    assert _name_comparisons(ast.parse('x = layer.pre_norm')) == []
    assert _name_comparisons(ast.parse('x = nxt.skip != "none"')) == [1]


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


# -- activation parts ----------------------------------------------------------------------------
#: every registered activation, and polynomials that are odd, even, a monomial and none of these
ACTIVATIONS = [k for k in ACTIVATION_KINDS if k != "poly"] + [
    "poly:0,1,0,-1/3", "poly:1,0,1/2", "poly:0,0,2", "poly:1/2,1,0,1/3"]


def test_every_algebra_activation_is_a_registered_part():
    from symattn.core.algebras.functions import ACTIVATIONS as ALGEBRA_NAMES

    assert set(ACTIVATION_KINDS) == set(ALGEBRA_NAMES)
    for spelling in ACTIVATIONS:
        part = activation_part(spelling)
        assert activation_part(str(part)) == part and str(part) == spelling
        assert part.is_analytic == part.function.analytic
        assert not part.is_entire or part.is_analytic


@pytest.mark.parametrize("spelling", ACTIVATIONS)
def test_activation_builder_reference_and_torch_agree(spelling):
    """The graph node (the algebras' sympy expression), the part's own mpmath formula and its PyTorch
    module compute the same function."""
    torch = pytest.importorskip("torch")
    part = activation_part(spelling)
    x = np.linspace(-2.5, 2.5, 11).reshape(1, -1)
    b = Builder("act")
    b.g.graph["outputs"]["F"] = part.build(b, b.input("X"), "act")
    A = Float64()
    graph = np.asarray(evaluate(b.g, A, {"X": A.const(x)})["F"], dtype=float)
    naive = np.array([[part.reference(_FloatRing(), float(v)) for v in x[0]]])
    with torch.no_grad():
        theirs = part.torch_module()(torch.tensor(x, dtype=torch.float64)).numpy()
    assert type(part.torch_module()).__name__ == part.torch_type or part.is_polynomial
    np.testing.assert_allclose(graph, naive, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(graph, theirs, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("spelling", ACTIVATIONS)
def test_activation_properties_are_what_it_computes(spelling):
    """``is_odd``, ``is_even``, ``homogeneous_degree`` and ``rational_at_zero`` checked on the part's own
    reference formula at sample points (numerical, a check that can fail), and ``is_odd``/``is_even``
    against the exact identities ``f(-s) +- f(s) == 0`` the symmetry declarations use."""
    from symattn.core.algebras.functions import NotRational
    from symattn.core.algebras.rational import Rationals

    part, ring = activation_part(spelling), _FloatRing()
    xs = [0.3, 0.7, 1.1, 2.3]
    f = lambda v: part.reference(ring, v)  # noqa: E731
    assert part.is_odd == all(abs(f(-v) + f(v)) < 1e-12 for v in xs) == part.odd_identity()
    assert part.is_even == all(abs(f(-v) - f(v)) < 1e-12 for v in xs) == part.even_identity()
    k = part.homogeneous_degree()
    assert (k is not None) == all(abs(f(3 * v) - 3 ** (k or 1) * f(v)) < 1e-9 for v in (*xs, *(-v for v in xs)))
    if part.is_analytic:
        Q = Rationals()
        try:
            part.function.jets(Q, Q.convert([0]), 4)
            rational = True
        except NotRational:
            rational = False
        assert rational == part.rational_at_zero
        assert (part.taylor_text is not None) or part.is_polynomial or not part.rational_at_zero


def test_odd_identity_refuses_a_wrong_declaration():
    """A part that declared itself odd without being odd is caught by its own formula."""
    from symattn.model.parts.activation import Gelu

    class OddGelu(Gelu):
        is_odd = True

    assert OddGelu().is_odd and not OddGelu().odd_identity()


# -- hidden-unit sign flips of odd activations (issue 39) ----------------------------------------
@pytest.mark.parametrize("activation, odd", [("tanh", True), ("poly:0,1,0,-1/3", True), ("gelu", False),
                                             ("poly:1,0,1/2", False), ("poly:0,1,1/2", False)])
@pytest.mark.parametrize("seed", [0, 1])
def test_hidden_sign_flips_of_odd_activations(activation, odd, seed):
    """Declared exactly for the odd activations, as a finite group of order 2^m; each generator checked
    exactly (series over Q) and in float64 at two seeded points; a flip of an odd unit changes each
    weight block it touches, so the check compares different parameters."""
    from symattn.model.parameters import random_bank, random_point
    from symattn.model.symmetries import hidden_sign_flip, hidden_sign_flip_check

    arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value", mlp=3, activation=activation)
    theta = random_point(arch, seed)
    found = hidden_sign_flip_check(arch, theta, random_bank(arch, 2, seed))
    assert bool(found) == odd == activation_part(activation).is_odd
    for entry in found:
        assert entry == {"layer": 1, "units": 3, "group_order": 8, "generators": 3,
                         "identity": f"f(-s) + f(s) = 0 ({activation})", "verified": True, "numerical": True}
    flipped = hidden_sign_flip(arch, theta, 1, 1)
    for name in ("mlp.in1", "mlp.in_bias1", "mlp.out1"):
        assert any(a != b for a, b in zip(np.asarray(flipped[name]).reshape(-1), np.asarray(theta[name]).reshape(-1)))


def test_hidden_sign_flips_with_a_norm_are_checked_in_float64():
    """A LayerNorm's 1/sqrt leaves the exact check undecided (None, said so); float64 still decides."""
    from symattn.model.parameters import random_bank, random_point
    from symattn.model.symmetries import hidden_sign_flip_check

    arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value", norm="post", mlp=2, activation="tanh")
    [entry] = hidden_sign_flip_check(arch, random_point(arch), random_bank(arch, 2))
    assert entry["verified"] is None and entry["numerical"] is True


def test_a_wrong_oddness_declaration_fails_the_sign_flip_check():
    """An activation that claims oddness (and an identity) it does not have: the flips change the network."""
    from symattn.core.errors import CheckFailed
    from symattn.model.parameters import random_bank, random_point
    from symattn.model.parts.activation import Sigmoid
    from symattn.model.symmetries import hidden_sign_flip_check

    class LyingSigmoid(Sigmoid):
        is_odd = True

        def odd_identity(self):
            return True

    arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value", mlp=2, activation=LyingSigmoid())
    with pytest.raises(CheckFailed, match="sign flip"):
        hidden_sign_flip_check(arch, random_point(arch), random_bank(arch, 2))
    found = hidden_sign_flip_check(arch, random_point(arch), random_bank(arch, 2), strict=False)
    assert found[0]["verified"] is False and found[0]["numerical"] is False


def test_spectrum_lists_the_sign_flips(capsys):
    from symattn.cli import main

    assert main(["spectrum", "--depth", "1", "--width", "2", "--rank", "1", "--tokens", "3", "--mlp", "2",
                 "--activation", "poly:0,1,0,1/3", "--json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    [entry] = data["hidden_sign_flips"]
    assert entry["group_order"] == 4 and entry["verified"] is True and entry["numerical"] is True


def test_sign_flips_need_the_identity_not_only_the_declaration():
    """A part that declares oddness its formula does not prove gets no sign flips declared."""
    from symattn.model.parameters import random_bank, random_point
    from symattn.model.parts.activation import Gelu
    from symattn.model.symmetries import hidden_sign_flip_check

    class OddGelu(Gelu):
        is_odd = True

    arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value", mlp=2, activation=OddGelu())
    assert hidden_sign_flip_check(arch, random_point(arch), random_bank(arch, 2)) == []


def test_old_part_names_are_read_with_a_warning():
    """Points written with the names before release 0.2 (``gA1``, ``Fa1``) still read."""
    from symattn.model.parameters import point_of

    with pytest.warns(DeprecationWarning, match="'Fa1' is read as 'mlp.in1'"):
        point = point_of({"Fa1": [[1]], "gA2": [[2]], "Q1": [[3]]})
    assert sorted(point) == ["Q1", "attn_norm.gain2", "mlp.in1"]


def test_layer_part_names_are_readable():
    """No two block names of a layer differ only by case, and the norm and MLP blocks say what they are."""
    arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value", norm="post", mlp=2, bias=True, combine="concat")
    names = [b.name for b in arch.blocks]
    assert len({n.lower() for n in names}) == len(names)
    assert {"attn_norm.gain1", "attn_norm.shift1", "mlp_norm.gain1", "mlp_norm.shift1", "mlp.in1", "mlp.in_bias1",
            "mlp.out1", "mlp.out_bias1", "bO1"} <= set(names)


# -- skip parts ----------------------------------------------------------------------------------
@pytest.mark.parametrize("spelling", sorted(SKIP_KINDS))
def test_skip_builder_reference_and_properties_agree(spelling):
    """The graph node and the naive formula compute the same sum, ``is_residual`` is what they compute
    (the output minus the sublayer's is the input, or nothing), and ``has_values`` is whether the layer's
    heads get a value map."""
    part = skip_part(spelling)
    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    b = Builder("skip")
    b.g.graph["outputs"]["F"] = part.build(b, b.input("X"), b.input("Y"), "res")
    A = Float64()
    graph = np.asarray(evaluate(b.g, A, {"X": A.const(X), "Y": A.const(Y)})["F"], dtype=float)
    naive = np.array(part.reference(_FloatRing(), X.tolist(), Y.tolist()), dtype=float)
    np.testing.assert_allclose(graph, naive, rtol=1e-15)
    np.testing.assert_allclose(naive - Y, X if part.is_residual else 0 * X, atol=1e-15)
    arch = Architecture.uniform(1, 2, 1, 3, "exp", skip=spelling)
    assert arch.layers[0].skip_part is part or arch.layers[0].skip_part == part
    assert ("V" in arch.layers[0].head_blocks(1)[0]) == part.has_values
    assert any(blk.role == "V" for blk in arch.blocks) == part.has_values
    assert str(part) == spelling and skip_part(str(part)) == part


# -- head combinations (W_O) ---------------------------------------------------------------------
@pytest.mark.parametrize("spelling", sorted(COMBINE_KINDS))
def test_combine_builder_reference_blocks_and_torch_agree(spelling):
    """The graph node and the naive formula agree; ``has_output_projection`` is whether the layer gets
    ``O`` blocks (and, with biases, ``bO``) of the shapes ``value_shape`` gives; the value gauges the
    stack declares are ``value_gauge_dimension`` per head; ``torch_attribute`` names a module of
    ``nn.MultiheadAttention`` holding ``W_O``."""
    from symattn.model.parameters import random_point
    from symattn.model.symmetries import declared_symmetries

    part = combine_part(spelling)
    rng = np.random.default_rng(4)
    O, Y = rng.normal(size=(3, 2)), rng.normal(size=(2, 4))
    b = Builder("combine")
    o = b.input("O") if part.has_output_projection else None
    b.g.graph["outputs"]["F"] = part.build(b, o, b.input("Y"), "OVS")
    A = Float64()
    graph = np.asarray(evaluate(b.g, A, {"Y": A.const(Y), **({"O": A.const(O)} if o else {})})["F"], dtype=float)
    naive = np.array(part.reference(_FloatRing(), O.tolist() if o else None, Y.tolist()), dtype=float)
    np.testing.assert_allclose(graph, naive, rtol=1e-14)
    np.testing.assert_allclose(naive, O @ Y if part.has_output_projection else Y, rtol=1e-14)
    arch = Architecture.uniform(1, 3, 1, 3, "exp", heads=2, combine=spelling, head_width=2, bias=True, skip="value")
    layer, shapes = arch.layers[0], dict(arch.layers[0].blocks(1))
    assert any(blk.role == "O" for blk in shapes) == part.has_output_projection == ("bO" in layer.layer_blocks(1))
    for blocks, head in zip(layer.head_blocks(1), layer.heads):
        assert shapes[blocks["V"]] == part.value_shape(3, 3, layer.value_width(head))
    gauges = sum(s.kind == "value gauge" for s in declared_symmetries(arch, random_point(arch)))
    assert gauges == sum(part.value_gauge_dimension(layer.value_width(h)) for h in layer.heads)
    if part.torch_attribute is not None:
        torch = pytest.importorskip("torch")
        assert hasattr(torch.nn.MultiheadAttention(4, 2), part.torch_attribute)
    assert str(part) == spelling and combine_part(str(part)) == part


# -- biases --------------------------------------------------------------------------------------
@pytest.mark.parametrize("flag", sorted(BIAS_KINDS))
def test_bias_builder_reference_blocks_and_key_directions_agree(flag):
    """The score and value nodes agree with the naive formulas and with the formula written out; the
    layer's bias blocks are ``b{role}`` for the part's ``roles``; each declared key bias direction leaves
    every softmax row unchanged (checked on the reference scores); ``torch_attribute`` names a parameter
    of ``nn.MultiheadAttention(bias=True)``."""
    part = bias_part(flag)
    rng = np.random.default_rng(5)
    X, Q, K = rng.normal(size=(3, 4)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    bQ, bK, Y, bV = rng.normal(size=(1, 2)), rng.normal(size=(1, 2)), rng.normal(size=(3, 4)), rng.normal(size=(3, 1))
    b = Builder("bias")
    names = {n: b.input(n) for n in ("X", "Q", "K", "bQ", "bK", "Y", "bV")}
    b.g.graph["outputs"]["Z"] = part.scores(b, names["X"], names["Q"], names["K"], names["bQ"], names["bK"], "h")
    b.g.graph["outputs"]["W"] = part.values(b, names["Y"], names["bV"], "VSb")
    A = Float64()
    values = dict(X=X, Q=Q, K=K, bQ=bQ, bK=bK, Y=Y, bV=bV)
    out = evaluate(b.g, A, {n: A.const(v) for n, v in values.items()})
    ring = _FloatRing()
    naive_z = np.array(part.reference_scores(ring, X.tolist(), Q.tolist(), K.tolist(), bQ.tolist(), bK.tolist()))
    naive_w = np.array(part.reference_values(ring, Y.tolist(), bV.tolist()))
    offset = (lambda v: v) if part.present else (lambda v: 0 * v)
    written = (Q.T @ X + offset(bQ).T).T @ (K.T @ X + offset(bK).T)
    np.testing.assert_allclose(np.asarray(out["Z"], dtype=float), naive_z, rtol=1e-13)
    np.testing.assert_allclose(naive_z, written, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(out["W"], dtype=float), naive_w, rtol=1e-14)
    np.testing.assert_allclose(naive_w, Y + offset(bV), rtol=1e-14)
    arch = Architecture.uniform(1, 3, 2, 3, "exp", bias=flag, skip="value")
    [blocks] = arch.layers[0].head_blocks(1)
    assert {r[1:] for r in blocks if r.startswith("b")} == set(part.roles)
    directions = part.key_bias_directions(2, True)
    assert len(directions) == (2 if part.present else 0) and part.key_bias_directions(2, False) == []
    for E in directions:
        moved = np.array(part.reference_scores(ring, X.tolist(), Q.tolist(), K.tolist(), bQ.tolist(),
                                               (bK + np.array(E, dtype=float)).tolist()))
        rows = lambda Z: np.exp(Z) / np.exp(Z).sum(axis=1, keepdims=True)  # noqa: E731
        np.testing.assert_allclose(rows(moved), rows(naive_z), rtol=1e-12)
        assert not np.allclose(moved, naive_z)
    if part.torch_attribute is not None:
        torch = pytest.importorskip("torch")
        assert getattr(torch.nn.MultiheadAttention(4, 2, bias=True), part.torch_attribute) is not None
    assert bias_part(part.present) == part


# -- heads ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("rank", [1, 2])
def test_head_score_reference_shapes_and_factor_gauges_agree(rank):
    """The head's score node and naive formula are ``Q K^T``; its factors have ``factor_shape``; each factor
    gauge ``(Q B, -K B^T)`` leaves ``Q K^T`` unchanged to first order (exactly); the stack declares
    ``rank^2`` per head; ``torch_attribute`` is a parameter of ``nn.MultiheadAttention``."""
    from symattn.model.parameters import random_point
    from symattn.model.parts import Head
    from symattn.model.symmetries import declared_symmetries

    head = Head(rank)
    rng = np.random.default_rng(6)
    Q, K = rng.normal(size=(3, rank)), rng.normal(size=(3, rank))
    b = Builder("head")
    b.g.graph["outputs"]["A"] = head.score(b, b.input("Q"), b.input("K"), "A", "KT")
    A = Float64()
    graph = np.asarray(evaluate(b.g, A, {"Q": A.const(Q), "K": A.const(K)})["A"], dtype=float)
    naive = np.array(head.reference_score(_FloatRing(), Q.tolist(), K.tolist()), dtype=float)
    np.testing.assert_allclose(graph, naive, rtol=1e-14)
    np.testing.assert_allclose(naive, Q @ K.T, rtol=1e-14)
    Qx = np.array([[Fraction(int(v * 8), 7) for v in row] for row in Q], dtype=object)
    Kx = np.array([[Fraction(int(v * 8), 5) for v in row] for row in K], dtype=object)
    moves = list(head.factor_gauges(Qx, Kx))
    assert len(moves) == rank ** 2 == len(list(head.factor_gauge_units()))
    for dq, dk in moves:
        assert (dq.dot(Kx.T) + Qx.dot(dk.T) == 0).all() and dq.any()
    arch = Architecture.uniform(1, 3, rank, 3, "exp", heads=2)
    assert all(shape == head.factor_shape(3) for blk, shape in arch.layers[0].blocks(1) if blk.is_factor)
    gauges = [s for s in declared_symmetries(arch, random_point(arch)) if s.kind == "factor gauge"]
    assert len(gauges) == 2 * rank ** 2
    torch = pytest.importorskip("torch")
    assert hasattr(torch.nn.MultiheadAttention(4, 2), Head.torch_attribute)
