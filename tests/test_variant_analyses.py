"""Jets, fibers, sensitivity and banks of stacks beyond the paper (skips, masks, heads): one
implementation each; the paper's stack keeps the theorems' answers and labels (compared with
the formulas, and field by field with the classification); every other result is computed,
labelled "no theorem" (text and ``theorem: null``), and its checks can fail."""

import json

import numpy as np
import pytest

from symattn.analyses.bank import least_bank
from symattn.cli import main
from symattn.analyses.dimension import neuromanifold_dimension
from symattn.analyses.fibers import effective_fiber, fiber
from symattn.analyses.jets import generic_effective, sharp_degree
from symattn.analyses.spectrum import bank_orders, native_spectrum
from symattn.model.architecture import Architecture
from symattn.model.network import effective_network
from symattn.model.parameters import random_bank, random_point
from symattn.analyses.sensitivity import sensitivity
from symattn.model.symmetries import head_classes, head_permutation_check
from symattn.theorems import formulas, statements
from symattn.theorems.statements import NO_THEOREM

BASE = Architecture.uniform(2, 2, 1, 3, "exp")


# ------------------------------------------------------------- the paper's case is today's
def test_plain_jet_is_theorem_3():
    for D in (1, 2):
        base = Architecture.uniform(D, 2, 1, 3, "exp")
        r = sharp_degree(base, seed=0)
        t = sharp_degree(base, generic_effective(base, 0))
        assert (r.sharp_degree, r.injective, r.lower_jets_independent_of_last, r.parameters) == \
            (t.sharp_degree, t.immersion, t.lower_jets_independent_of_last, t.parameters)
        assert r.sharp_degree == formulas.prop_c1_degree(base) and r.last_layer_enters == r.sharp_degree
        assert r.theorem == statements.THEOREM_3.label and r.map == "effective" and not r.by_seed


def test_plain_fiber_is_the_classification():
    L, M = [[1, 0]], [[[1, 0], [0, 2]], [[0, 1], [-1, 0]]]
    got = fiber(Architecture.uniform(2, 2, 1, 2, "exp"), L, [[m] for m in M])
    assert got.to_json() == effective_fiber(L, M, "exp", 2).to_json()
    assert got.theorem == "Theorem 1" and got.fiber == "singleton" and got.determined


def test_plain_sensitivity_and_bank_carry_the_theorem():
    base = Architecture.uniform(1, 2, 1, 2, "exp")
    a = sensitivity(base, t_min=0.05)
    assert a["theorem"] == statements.THEOREM_4.label == a["label"]
    assert [(b["order"], b["multiplicity"]) for b in a["bands"]] == [(0, 4), (1, 3)]
    b = least_bank(base, trials=2)
    assert b.theorem == statements.APP_D3.label and b.separating and NO_THEOREM not in b.notes


def test_cli_plain_jet_unchanged(capsys):
    assert main(["jet", "--depth", "2", "--width", "2", "--tokens", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # one JSON schema: the paper's stack has the same keys as every other, its map the effective one
    assert out["sharp_degree"] == 7 and out["map"] == "effective" and out["theorem"] == statements.THEOREM_3.label
    assert (out["formula"], out["formula_source"]) == (7, "Prop. C.1")


# ------------------------------------------------------------------ jets of variants
def test_masked_jet_uses_the_effective_masked_map():
    arch = BASE.with_layers(mask="causal")
    assert arch.has_effective_map and not BASE.with_layers(heads=2).has_effective_map
    r = sharp_degree(arch)
    assert r.map == "effective (masked)" and r.theorem is None and NO_THEOREM in r.notes
    assert r.injective and r.sharp_degree is not None and r.parameters == 2 * 2 + 2 * 4


def test_native_jet_is_injective_modulo_the_declared_symmetries():
    r = sharp_degree(BASE.with_layers(skip="folded"))
    assert r.map.startswith("native") and r.symmetry_rank == 2 and r.injective
    assert r.last_layer_enters is not None and r.last_layer_enters <= r.sharp_degree


def test_window_one_mask_has_no_injective_jet():
    # window:1 is the identity attention: the scores never enter, nothing is claimed
    r = sharp_degree(Architecture.uniform(1, 2, 1, 2, "exp", mask="window:1"), max_degree=9)
    assert r.sharp_degree is None and not r.injective


# ---------------------------------------------------------------- fibers of variants
def test_causal_zero_score_does_not_free_the_suffix():
    arch = BASE.with_layers(mask="causal")
    f = fiber(arch, [[1, 0]], [[[[0, 0], [0, 0]]], [[[1, 0], [0, 2]]]])
    assert f.theorem is None and f.determined and f.verified
    suffix = [e for e in f.evidence if "suffix" in e.label]
    assert suffix and "exact witness" in suffix[0].detail


def test_even_normalizer_sign_flips_and_head_exchange():
    arch = Architecture.uniform(1, 2, 1, 2, "cosh", heads=2, skip="value")
    f = fiber(arch, [[1, 0]], [[[[1, 0], [0, 2]], [[0, 1], [1, 1]]]])
    assert f.sign_flips == ["1h1", "1h2"] and f.head_permutations == [1]
    assert all(e.ok for e in f.evidence) and f.fiber == "locally-determined"


def test_no_local_certificate_means_undecided():
    arch = Architecture.uniform(1, 2, 1, 2, "exp", mask="window:1")
    f = fiber(arch, [[1, 0]], [[[[1, 0], [0, 2]]]], max_degree=9)
    assert f.fiber == "undecided" and not f.determined and not f.verified


def test_zero_readout_and_bad_tuples():
    arch = BASE.with_layers(skip="value")
    assert fiber(arch, [[0, 0]], [[[[1, 0], [0, 1]]]] * 2).fiber == "zero-readout"
    from symattn.core.errors import SymattnError
    with pytest.raises(SymattnError, match="head"):
        fiber(BASE.with_layers(heads=2), [[1, 0]], [[[[1, 0], [0, 1]]]] * 2)


def test_score_network_refuses_concat():
    from symattn.core.errors import SymattnError
    with pytest.raises(SymattnError, match="concat"):
        effective_network(BASE.with_layers(heads=2, combine="concat"))


# ------------------------------------------------------------------- head permutations
def test_full_head_permutation_group_on_classes():
    arch = Architecture.uniform(1, 3, 1, 2, "exp", heads=4, head_ranks=(1, 2, 1, 1))
    assert head_classes(arch, 1) == [[1, 3, 4], [2]]
    [p] = head_permutation_check(arch, random_point(arch), random_bank(arch, 2))
    assert (p["group_order"], p["generators"], p["verified"]) == (6, 2, True)


def test_head_permutation_check_can_fail():
    # exchanging two heads' queries only (not a head permutation) changes F: the check sees it
    arch = Architecture.uniform(1, 2, 1, 2, "exp", heads=2)
    theta = random_point(arch, seed=1)
    bad = dict(theta, Q1h1=theta["Q1h2"], Q1h2=theta["Q1h1"])
    from symattn.core.algebras import exact_series
    from symattn.model.network import evaluate, native_network
    A = exact_series(6)
    X = random_bank(arch, 2)

    def run(p):
        vals = {k: A.const(v) for k, v in p.items()}
        vals["X"] = A.series([np.zeros(X.shape, dtype=int), X])
        return evaluate(native_network(arch), A, vals)["F"]
    assert not A.field.is_zero(A.sub(run(theta), run(bad))).all()


def test_dimension_reports_head_permutations_and_gap_fields():
    d = neuromanifold_dimension(BASE.with_layers(heads=3))
    assert [p["group_order"] for p in d.head_permutations] == [6, 6]
    assert d.lower_bound <= d.upper_bound and (d.certified == (d.lower_bound == d.upper_bound))


# -------------------------------------------------------------- sensitivity and banks
def test_sensitivity_bands_match_the_spectrum_beyond_the_paper():
    arch = Architecture.uniform(1, 2, 1, 2, "exp", skip="value")
    r = sensitivity(arch, t_min=0.05)
    s = native_spectrum(arch)
    assert [(b["order"], b["multiplicity"]) for b in r["bands"]] == \
        sorted((b.order, b.multiplicity) for b in s.bands)
    assert r["theorem"] is None and r["label"] == NO_THEOREM and r["agreement"] < 1e-12


def test_bank_prefix_reaches_certified_orders_beyond_the_paper():
    arch = Architecture.uniform(1, 2, 1, 2, "exp", heads=2)
    r = least_bank(arch, trials=2)
    assert r.separating and r.least_size >= r.counting_bound and r.theorem is None
    assert {"least_size", "counting_bound", "separating", "generic"} <= set(r.to_json())


def test_bank_orders_rise_on_a_smaller_bank():
    arch = BASE.with_layers(skip="value")
    big, small = bank_orders(arch, random_bank(arch, 6), 8), bank_orders(arch, random_bank(arch, 1), 8)
    assert len(small) <= len(big) and sum(small) >= sum(big[: len(small)])


# ------------------------------------------------------------------------- command line
@pytest.mark.parametrize("argv", [
    ["jet", "--depth", "2", "--width", "2", "--tokens", "3", "--residual", "--json"],
    ["fiber", "--normalizer", "exp", "--tokens", "3", "--L", "[[1,0]]", "--M",
     "[[1,0],[0,2]]|[[0,1],[1,1]]", "--heads", "2", "--json"],
    ["sensitivity", "--depth", "1", "--width", "2", "--mask", "causal", "--residual", "--json"],
    ["bank", "--depth", "1", "--width", "2", "--residual", "--trials", "1", "--json"],
])
def test_cli_variant_results_say_no_theorem(argv, capsys):
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["theorem"] is None


def test_cli_variant_text_labels(capsys):
    assert main(["jet", "--depth", "1", "--width", "2", "--heads", "2"]) == 0
    assert NO_THEOREM in capsys.readouterr().out
    assert main(["fiber", "--normalizer", "exp", "--tokens", "3", "--L", "[[1,0]]", "--M",
                 "[[1,0],[0,2]]", "--mask", "causal"]) == 0
    assert NO_THEOREM in capsys.readouterr().out


def test_cli_fiber_head_count_mismatch_is_bad_input(capsys):
    assert main(["fiber", "--normalizer", "exp", "--tokens", "3", "--L", "[[1,0]]", "--M",
                 "[[1,0],[0,2]]", "--heads", "2"]) == 2
    assert "head" in capsys.readouterr().err


def test_cli_spec_for_sensitivity_bank_jet_fiber(tmp_path, capsys):
    spec = tmp_path / "mixed.toml"
    spec.write_text('width = 2\ntokens = 3\n[[layer]]\nskip = "value"\n[[layer]]\nmask = "causal"\nheads = 2\n')
    for argv in (["sensitivity", "--spec", str(spec), "--json"], ["bank", "--spec", str(spec), "--trials", "1", "--json"],
                 ["jet", "--spec", str(spec), "--json"],
                 ["fiber", "--spec", str(spec), "--normalizer", "exp", "--tokens", "3", "--L", "[[1,0]]",
                  "--M", "[[1,0],[0,2]];[[0,1],[1,1]]|[[1,1],[0,1]]", "--json"]):
        assert main(argv) == 0, argv
        assert json.loads(capsys.readouterr().out)["theorem"] is None
    assert main(["bank", "--spec", str(spec), "--depth", "2"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["sensitivity"]) == 2
    assert "--depth" in capsys.readouterr().err


def test_plain_spec_gives_the_theorem(tmp_path, capsys):
    spec = tmp_path / "plain.toml"
    spec.write_text("width = 2\ntokens = 2\n[[layer]]\nrepeat = 2\n")
    assert main(["bank", "--spec", str(spec), "--trials", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["theorem"] is not None
    assert main(["jet", "--spec", str(spec), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["theorem"] is not None and out["sharp_degree"] == 7


@pytest.mark.slow
def test_issue_target_stack_spectrum_and_jet():
    # the issue's target: depth 3, d = 4, two heads, causal masks, skips (benchmarks/bench_variants.py)
    arch = Architecture.uniform(3, 4, 1, 4, "exp", skip="value", mask="causal", heads=2)
    s = native_spectrum(arch)
    assert s.certificate == "certified" and s.undecided == 0 and s.kernel == 6 and s.theorem is None
    assert sharp_degree(arch, points=1).sharp_degree == 3
