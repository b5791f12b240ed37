"""Variant layer kinds: the default is today's graph and answers; each kind computes
what its formula says; the analyses' declared symmetries are checked; specs are validated."""

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
from symattn.analyses.variant_spectrum import PAPER_SPECTRUM_THEOREM, variant_dimension, variant_spectrum
from symattn.model.variants import (NO_THEOREM, LayerKind, VariantArchitecture, load_spec, mask_matrix,
                              random_variant_point, variant_network, with_layers)

BASE = Architecture.uniform(2, 2, 1, 3, "exp")


def _float_run(arch, theta, X):
    A = Float64()
    vals = {k: A.const(np.array(v, dtype=float)) for k, v in theta.items()}
    vals["X"] = A.const(np.array(X, dtype=float))
    return evaluate(variant_network(arch), A, vals)


def _softmax_layer(X, A, mask=None):
    Z = X.T @ A @ X
    W = np.exp(Z) * (1 if mask is None else mask)
    return X @ (W / W.sum(axis=1, keepdims=True)).T


def test_default_stack_is_todays_graph():
    g, h = variant_network(VariantArchitecture(BASE)), native_network(BASE)
    assert nx.utils.graphs_equal(g, h)
    assert all(g.nodes[v]["args"] == h.nodes[v]["args"] for v in g)
    assert g.graph["outputs"] == h.graph["outputs"]


def test_default_stack_gives_todays_answers():
    s = variant_spectrum(VariantArchitecture(BASE))
    n = native_spectrum(BASE)
    assert [(b["layer"], b["order"], b["multiplicity"]) for b in s.bands] == \
        [(b.layer, b.order, b.multiplicity) for b in n.bands]
    assert (s.kernel, s.rank, s.certificate, s.theorem) == (n.kernel, n.rank, n.certificate,
                                                            PAPER_SPECTRUM_THEOREM)
    d = variant_dimension(VariantArchitecture(BASE))
    assert d.dimension == neuromanifold_dimension(BASE).dimension and d.theorem is not None


def test_full_window_through_the_generic_code_matches_theorem_4():
    # a window covering every token is no mask: the masked graph and the generic
    # spectrum code (no formula of the paper) must find Theorem 4's bands
    arch = with_layers(BASE, LayerKind(mask=f"window:{BASE.tokens}"))
    s = variant_spectrum(arch)
    n = native_spectrum(BASE)
    assert sorted((b["order"], b["multiplicity"]) for b in s.bands) == \
        sorted((b.order, b.multiplicity) for b in n.bands)
    assert s.kernel == n.kernel and s.theorem is None and NO_THEOREM in s.notes


def test_each_kind_computes_its_formula():
    X = np.array(random_bank(BASE, 1, seed=3)[0], dtype=float) / 3
    causal = mask_matrix("causal", 3)
    for kind in [LayerKind(skip="value"), LayerKind(skip="folded"), LayerKind(mask="causal"),
                 LayerKind(heads=2), LayerKind(heads=2, combine="concat", head_width=1)]:
        arch = VariantArchitecture(Architecture.uniform(1, 2, 1, 3, "exp"), (kind,))
        theta = random_variant_point(arch, seed=1)
        f = {k: np.array(v, dtype=float) for k, v in theta.items()}
        got = _float_run(arch, theta, X[None])["F"][0]
        names = arch.head_names(1)
        out = np.zeros_like(X)
        for s in names:
            S = _softmax_layer(X, f[f"Q1{s}"] @ f[f"K1{s}"].T, causal if kind.mask == "causal" else None)
            if kind.skip != "folded":
                S = f[f"V1{s}"] @ S
            if kind.combine == "concat":
                S = f[f"O1{s}"] @ S
            out += S
        if kind.skip != "none":
            out += X
        assert np.allclose(got, out), kind


def test_causal_first_token_ignores_the_scores():
    arch = with_layers(Architecture.uniform(1, 2, 1, 3, "exp"), LayerKind(mask="causal", skip="folded"))
    A = exact_series(4)
    theta = random_variant_point(arch, seed=2)
    X = random_bank(arch.base, 1, seed=2)
    vals = {k: A.series([np.zeros(v.shape, dtype=int), v]) for k, v in theta.items()}
    vals["X"] = A.const(X)
    F = evaluate(variant_network(arch), A, vals)["F"]
    first = A.field.convert(2 * X[..., 0])  # x_1 + S(X)_1 = 2 x_1 exactly
    assert (F[0][..., 0] == first).all() and A.field.is_zero(F[1:, ..., 0]).all()


def test_variant_spectrum_reports_kernel_and_theorem_null():
    s = variant_spectrum(with_layers(BASE, LayerKind(skip="value", mask="causal")))
    assert s.theorem is None and s.rank + s.kernel + s.undecided == s.parameters
    assert s.kernel_kinds == {"factor gauge": 2}
    h = variant_spectrum(with_layers(Architecture.uniform(1, 2, 1, 3, "exp"), LayerKind(heads=2)))
    assert h.head_permutations == [{"layer": 1, "classes": [[1, 2]], "group_order": 2, "generators": 1,
                                    "verified": True}]


def test_variant_dimension_bounds_meet_and_label():
    d = variant_dimension(with_layers(BASE, LayerKind(heads=2, combine="concat")))
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
    arch = with_layers(Architecture.uniform(1, 2, 1, 2, "exp"), LayerKind(mask=((1, 0), (1, 1))))
    const = [a for _, a in variant_network(arch).nodes(data=True) if a["op"] == "const" and
             "mask" in str(a["params"]["values"])]
    g = variant_network(arch)
    m = g.nodes["layer1.mask"]["params"]["values"]
    assert m[1, 0] == Fraction(1, 2) and m[0, 0] == 1 and m[0, 1] == 0 and const == []


def test_plain_jet_degree_is_theorem_3():
    # computed from the jets' ranks; compared with N_D = 2 k 3^(D-1) + 1 evaluated separately
    for D in (1, 2, 3):
        r = variant_dimension(VariantArchitecture(Architecture.uniform(D, 2, 1, 3, "exp")))
        assert r.certified and r.jet_degree == 2 * 3 ** (D - 1) + 1


def test_conjecture_json_keys():
    from symattn.theorems.conjectures import conjectures

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
