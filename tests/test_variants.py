"""Layer parts beyond the paper (skips, masks, heads): the default layer is the paper's graph and
answers; each part computes what its formula says; the analyses' declared symmetries are checked;
specs are validated; the deprecated names still work."""

import json
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest

from symattn.core.algebras import Float64, exact_series
from symattn.cli import main
from symattn.analyses.dimension import neuromanifold_dimension
from symattn.core.errors import SymattnError
from symattn.model.network import evaluate, native_network
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank
from symattn.analyses.spectrum import native_spectrum
from symattn.model.architecture import mask_matrix
from symattn.model.parameters import random_point
from symattn.model.spec import load_spec
from symattn.theorems import formulas, statements
from symattn.theorems.statements import NO_THEOREM



BASE = Architecture.uniform(2, 2, 1, 3, "exp")


def _float_run(arch, theta, X):
    A = Float64()
    vals = {k: A.const(np.array(v, dtype=float)) for k, v in theta.items()}
    vals["X"] = A.const(np.array(X, dtype=float))
    return evaluate(native_network(arch), A, vals)


def _softmax_layer(X, A, mask=None):
    Z = X.T @ A @ X
    W = np.exp(Z) * (1 if mask is None else mask)
    return X @ (W / W.sum(axis=1, keepdims=True)).T


def _paper_layer_graph(arch):
    """The paper's native stack written node by node from eq. (1) (the graph of release 0.1)."""
    from symattn.model.network import Builder, layer

    b = Builder("native")
    x = b.input("X")
    for i, phi in enumerate(arch.normalizers, 1):
        b.layer = i
        q, k, v = b.input(f"Q{i}"), b.input(f"K{i}"), b.input(f"V{i}")
        a = b.op(f"A{i}", "matmul", q, b.op(f"K{i}T", "transpose", k))
        x = b.op(f"X{i}", "matmul", v, layer(b, x, a, phi, f"layer{i}"))
        b.g.graph["outputs"][f"X{i}"] = x
    b.g.graph["outputs"]["F"] = x
    return b.g


def test_default_stack_is_the_papers_graph():
    g, h = native_network(BASE), _paper_layer_graph(BASE)
    assert nx.utils.graphs_equal(g, h)
    assert all(g.nodes[v]["args"] == h.nodes[v]["args"] for v in g)
    assert g.graph["outputs"] == h.graph["outputs"]


def test_default_stack_gives_the_theorems_answers():
    # the one implementation on the paper's stack: Theorem 4's bands and label (formulas evaluated apart)
    n = native_spectrum(BASE)
    betas = formulas.divisibility_orders(BASE)
    assert [(b.layer, b.order, b.multiplicity) for b in n.bands] == [(0, 0, 4)] + [
        (i, beta, 2 * 2 * 1 - 1) for i, beta in enumerate(betas, 1)]
    assert n.kernel == formulas.gauge_kernel_dimension(2, BASE.ranks) and n.certificate == "certified"
    assert n.theorem == statements.THEOREM_4.label and NO_THEOREM not in n.notes
    d = neuromanifold_dimension(BASE)
    assert d.dimension == formulas.native_rank(2, BASE.ranks) and d.theorem == statements.EQ_40.label


def test_full_window_through_the_generic_code_matches_theorem_4():
    # a window covering every token is no mask: the masked graph and the generic
    # spectrum route (no formula of the paper) must find Theorem 4's bands
    arch = BASE.with_layers(mask=f"window:{BASE.tokens}")
    s = native_spectrum(arch)
    n = native_spectrum(BASE)
    assert sorted((b.order, b.multiplicity) for b in s.bands) == \
        sorted((b.order, b.multiplicity) for b in n.bands)
    assert s.kernel == n.kernel and s.theorem is None and NO_THEOREM in s.notes and s.bank_separating is None


def test_each_kind_computes_its_formula():
    X = np.array(random_bank(BASE, 1, seed=3)[0], dtype=float) / 3
    causal = mask_matrix("causal", 3)
    for kind in [dict(skip="value"), dict(skip="folded"), dict(mask="causal"),
                 dict(heads=2), dict(heads=2, combine="concat", head_width=1)]:
        arch = Architecture.uniform(1, 2, 1, 3, "exp", **kind)
        layer = arch.layers[0]
        theta = random_point(arch, seed=1)
        f = {k: np.array(v, dtype=float) for k, v in theta.items()}
        got = _float_run(arch, theta, X[None])["F"][0]
        names = arch.head_names(1)
        out = np.zeros_like(X)
        for s in names:
            S = _softmax_layer(X, f[f"Q1{s}"] @ f[f"K1{s}"].T, causal if layer.mask == "causal" else None)
            if layer.skip != "folded":
                S = f[f"V1{s}"] @ S
            if layer.combine == "concat":
                S = f[f"O1{s}"] @ S
            out += S
        if layer.skip != "none":
            out += X
        assert np.allclose(got, out), kind


def test_causal_first_token_ignores_the_scores():
    arch = Architecture.uniform(1, 2, 1, 3, "exp", mask="causal", skip="folded")
    A = exact_series(4)
    theta = random_point(arch, seed=2)
    X = random_bank(arch, 1, seed=2)
    vals = {k: A.series([np.zeros(v.shape, dtype=int), v]) for k, v in theta.items()}
    vals["X"] = A.const(X)
    F = evaluate(native_network(arch), A, vals)["F"]
    first = A.field.convert(2 * X[..., 0])  # x_1 + S(X)_1 = 2 x_1 exactly
    assert (F[0][..., 0] == first).all() and A.field.is_zero(F[1:, ..., 0]).all()


def test_spectrum_beyond_the_paper_reports_kernel_and_theorem_null():
    s = native_spectrum(BASE.with_layers(skip="value", mask="causal"))
    assert s.theorem is None and s.rank + s.kernel + s.undecided == s.parameters
    assert s.kernel_kinds == {"factor gauge": 2}
    h = native_spectrum(Architecture.uniform(1, 2, 1, 3, "exp", heads=2))
    assert h.head_permutations == [{"layer": 1, "classes": [[1, 2]], "group_order": 2, "generators": 1,
                                    "verified": True}]


def test_dimension_beyond_the_paper_bounds_meet_and_label():
    d = neuromanifold_dimension(BASE.with_layers(heads=2, combine="concat"))
    assert d.lower_bound <= d.upper_bound and d.theorem is None
    assert d.symmetries["value gauge"] == 2 * 2 * 4  # two layers, two heads, d_v^2


@pytest.mark.parametrize("text, message", [
    ("width = 2\ntokens = 3\n[[layer]]\nfoo = 1", "unknown keys"),
    ("width = 2\ntokens = 3\n[[layer]]\nmask = [[1, 0, 0], [0, 0, 0], [0, 0, 1]]", "at least one key"),
    ("width = 2\ntokens = 3\n[[layer]]\nmask = [[1, 2], [0, 1]]", "0 and 1"),
    ("width = 2\ntokens = 3\n[[layer]]\nskip = \"maybe\"", "skip must be one of"),
    ("width = 2\ntokens = 3\n[[layer]]\nnormalizer = \"__import__('os')\"", "refused"),
    ("width = 2\ntokens = 3\n[[layer]]\nmask = [[1, 1], [1, 1]]", "n = 3 tokens"),
    ("width = 2\n[[layer]]", "needs 'tokens'"),
    ("width = = 2", "not valid TOML"),
])
def test_spec_errors_are_one_line(text, message):
    with pytest.raises(SymattnError, match=message) as exc:
        load_spec(text)
    assert "\n" not in str(exc.value)


def test_cli_variant_json_and_errors(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text('width = 2\ntokens = 3\n[[layer]]\nskip = "folded"\nmask = "window:2"\nrepeat = 2\n')
    assert main(["variant", "dimension", "--spec", str(spec), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["theorem"] is None and NO_THEOREM in out["notes"]
    assert main(["variant", "spectrum", "--spec", str(spec), "--depth", "2"]) == 2
    assert main(["spectrum", "--depth", "1", "--width", "2", "--tokens", "3", "--heads", "2",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["theorem"] is None
    mask = tmp_path / "m.txt"
    mask.write_text("1 0\n1 1\n")
    assert main(["dimension", "--depth", "1", "--widths", "2", "--ranks", "1", "--tokens", "2",
                 "--mask", str(mask), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["certified"] is True


def test_pattern_masks_exact_fractions():
    arch = Architecture.uniform(1, 2, 1, 2, "exp", mask=((1, 0), (1, 1)))
    const = [a for _, a in native_network(arch).nodes(data=True) if a["op"] == "const" and
             "mask" in str(a["params"]["values"])]
    g = native_network(arch)
    m = g.nodes["layer1.mask"]["params"]["values"]
    assert m[1, 0] == Fraction(1, 2) and m[0, 0] == 1 and m[0, 1] == 0 and const == []


def test_plain_jet_degree_is_theorem_3():
    # computed from the jets' ranks; compared with N_D = 2 k 3^(D-1) + 1 evaluated separately
    for D in (1, 2, 3):
        r = neuromanifold_dimension(Architecture.uniform(D, 2, 1, 3, "exp"))
        assert r.certified and r.jet_degree == 2 * 3 ** (D - 1) + 1


def test_conjecture_json_keys():
    from symattn.analyses.conjectures import conjectures

    out = conjectures("causal", max_depth=3, fit=2)
    assert out["theorem"] is None and out["label"] == NO_THEOREM
    for c in out["conjectures"]:
        assert set(c) >= {"quantity", "formula", "fitted_on", "held_out", "held_out_ok"}
    assert all(row["certificate"] == "certified" for row in out["table"])


def test_bank_json_keys(capsys):
    assert main(["bank", "--depth", "1", "--width", "2", "--tokens", "2", "--trials", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"least_size", "counting_bound", "separating", "generic"} <= set(out)
    assert out["separating"] and out["least_size"] >= out["counting_bound"]


def test_block_identity_is_a_typed_key():
    arch = Architecture.uniform(2, 3, 1, 2, "exp", heads=2, combine="concat")
    blocks = arch.blocks
    assert [b.name for b in blocks[:4]] == ["Q1h1", "K1h1", "V1h1", "O1h1"]
    assert arch.block("O2h2").layer == 2 and arch.block("O2h2").head == 2 and arch.block("O2h2").role == "O"
    assert all(arch.block(b.name) == b for b in blocks)
    with pytest.raises(SymattnError, match="no native block"):
        arch.block("Q3")
