"""Jets, fibers, sensitivity and banks of variant stacks: the default stack gives today's
answers (compared field by field with the paper's analyses); every other result is
computed, labelled "no theorem" (text and ``theorem: null``), and its checks can fail."""

import json

import numpy as np
import pytest

from symattn.analyses.bank import least_bank, least_variant_bank
from symattn.cli import main
from symattn.analyses.fibers import effective_fiber
from symattn.analyses.jets import generic_effective, sharp_degree
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank
from symattn.analyses.sensitivity import sensitivity, variant_sensitivity
from symattn.analyses.variant_fibers import variant_fiber
from symattn.analyses.variant_jets import has_effective_map, variant_jet
from symattn.analyses.variant_spectrum import bank_orders, variant_dimension, variant_spectrum
from symattn.model.variants import (NO_THEOREM, LayerKind, VariantArchitecture, head_classes,
                              head_permutation_check, random_variant_point, score_network,
                              with_layers)

BASE = Architecture.uniform(2, 2, 1, 3, "exp")


# ------------------------------------------------------------- the paper's case is today's
def test_plain_jet_is_todays_sharp_degree():
    for D in (1, 2):
        base = Architecture.uniform(D, 2, 1, 3, "exp")
        r = variant_jet(VariantArchitecture(base))
        t = sharp_degree(base, generic_effective(base, 0))
        assert (r.sharp_degree, r.injective, r.lower_jets_independent_of_last, r.parameters) == \
            (t.sharp_degree, t.immersion, t.lower_jets_independent_of_last, t.parameters)
        assert r.theorem is not None and r.map == "effective"


def test_plain_fiber_is_todays_fiber():
    L, M = [[1, 0]], [[[1, 0], [0, 2]], [[0, 1], [-1, 0]]]
    got = variant_fiber(VariantArchitecture(Architecture.uniform(2, 2, 1, 2, "exp")), L, [[m] for m in M])
    assert got.to_json() == effective_fiber(L, M, "exp", 2).to_json()


def test_plain_sensitivity_and_bank_are_todays():
    base = Architecture.uniform(1, 2, 1, 2, "exp")
    a = variant_sensitivity(VariantArchitecture(base), t_min=0.05)
    b = sensitivity(base, t_min=0.05)
    assert a.pop("theorem") is not None and a == b
    assert least_variant_bank(VariantArchitecture(base), trials=2).to_json() | {"seconds": 0} == \
        least_bank(base, trials=2).to_json() | {"seconds": 0}


def test_cli_plain_jet_unchanged(capsys):
    assert main(["jet", "--depth", "2", "--width", "2", "--tokens", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sharp_degree"] == 7 and "map" not in out


# ------------------------------------------------------------------ jets of variants
def test_masked_jet_uses_the_effective_masked_map():
    arch = with_layers(BASE, LayerKind(mask="causal"))
    assert has_effective_map(arch) and not has_effective_map(with_layers(BASE, LayerKind(heads=2)))
    r = variant_jet(arch)
    assert r.map == "effective (masked)" and r.theorem is None and NO_THEOREM in r.notes
    assert r.injective and r.sharp_degree is not None and r.parameters == 2 * 2 + 2 * 4


def test_native_jet_is_injective_modulo_the_declared_symmetries():
    r = variant_jet(with_layers(BASE, LayerKind(skip="folded")))
    assert r.map.startswith("native") and r.symmetry_rank == 2 and r.injective
    assert r.last_layer_enters is not None and r.last_layer_enters <= r.sharp_degree


def test_window_one_mask_has_no_injective_jet():
    # window:1 is the identity attention: the scores never enter, nothing is claimed
    r = variant_jet(with_layers(Architecture.uniform(1, 2, 1, 2, "exp"), LayerKind(mask="window:1")),
                    max_degree=9)
    assert r.sharp_degree is None and not r.injective


# ---------------------------------------------------------------- fibers of variants
def test_causal_zero_score_does_not_free_the_suffix():
    arch = with_layers(BASE, LayerKind(mask="causal"))
    f = variant_fiber(arch, [[1, 0]], [[[[0, 0], [0, 0]]], [[[1, 0], [0, 2]]]])
    assert f.theorem is None and f.determined and f.verified
    suffix = [e for e in f.evidence if "suffix" in e.label]
    assert suffix and "exact witness" in suffix[0].detail


def test_even_normalizer_sign_flips_and_head_exchange():
    arch = with_layers(Architecture.uniform(1, 2, 1, 2, "cosh"), LayerKind(heads=2, skip="value"))
    f = variant_fiber(arch, [[1, 0]], [[[[1, 0], [0, 2]], [[0, 1], [1, 1]]]])
    assert f.sign_flips == ["1h1", "1h2"] and f.head_permutations == [1]
    assert all(e.ok for e in f.evidence) and f.fiber == "locally-determined"


def test_no_local_certificate_means_undecided():
    arch = with_layers(Architecture.uniform(1, 2, 1, 2, "exp"), LayerKind(mask="window:1"))
    f = variant_fiber(arch, [[1, 0]], [[[[1, 0], [0, 2]]]], max_degree=9)
    assert f.fiber == "undecided" and not f.determined and not f.verified


def test_zero_readout_and_bad_tuples():
    arch = with_layers(BASE, LayerKind(skip="value"))
    assert variant_fiber(arch, [[0, 0]], [[[[1, 0], [0, 1]]]] * 2).fiber == "zero-readout"
    from symattn.core.errors import SymattnError
    with pytest.raises(SymattnError, match="head"):
        variant_fiber(with_layers(BASE, LayerKind(heads=2)), [[1, 0]], [[[[1, 0], [0, 1]]]] * 2)


def test_score_network_refuses_concat():
    from symattn.core.errors import SymattnError
    with pytest.raises(SymattnError, match="concat"):
        score_network(with_layers(BASE, LayerKind(heads=2, combine="concat")))


# ------------------------------------------------------------------- head permutations
def test_full_head_permutation_group_on_classes():
    arch = VariantArchitecture(Architecture.uniform(1, 3, 1, 2, "exp"),
                               (LayerKind(heads=4, head_ranks=(1, 2, 1, 1)),))
    assert head_classes(arch, 1) == [[1, 3, 4], [2]]
    [p] = head_permutation_check(arch, random_variant_point(arch), random_bank(arch.base, 2))
    assert (p["group_order"], p["generators"], p["verified"]) == (6, 2, True)


def test_head_permutation_check_can_fail():
    # exchanging two heads' queries only (not a head permutation) changes F: the check sees it
    arch = with_layers(Architecture.uniform(1, 2, 1, 2, "exp"), LayerKind(heads=2))
    theta = random_variant_point(arch, seed=1)
    bad = dict(theta, Q1h1=theta["Q1h2"], Q1h2=theta["Q1h1"])
    from symattn.core.algebras import exact_series
    from symattn.model.network import evaluate
    from symattn.model.variants import variant_network
    A = exact_series(6)
    X = random_bank(arch.base, 2)

    def run(p):
        vals = {k: A.const(v) for k, v in p.items()}
        vals["X"] = A.series([np.zeros(X.shape, dtype=int), X])
        return evaluate(variant_network(arch), A, vals)["F"]
    assert not A.field.is_zero(A.sub(run(theta), run(bad))).all()


def test_dimension_reports_head_permutations_and_gap_fields():
    d = variant_dimension(with_layers(BASE, LayerKind(heads=3)))
    assert [p["group_order"] for p in d.head_permutations] == [6, 6]
    assert d.lower_bound <= d.upper_bound and (d.certified == (d.lower_bound == d.upper_bound))


# -------------------------------------------------------------- sensitivity and banks
def test_variant_sensitivity_bands_match_the_spectrum():
    arch = with_layers(Architecture.uniform(1, 2, 1, 2, "exp"), LayerKind(skip="value"))
    r = variant_sensitivity(arch, t_min=0.05)
    s = variant_spectrum(arch)
    assert [(b["order"], b["multiplicity"]) for b in r["bands"]] == \
        sorted((b["order"], b["multiplicity"]) for b in s.bands)
    assert r["theorem"] is None and r["label"] == NO_THEOREM and r["agreement"] < 1e-12


def test_variant_bank_prefix_reaches_certified_orders():
    arch = with_layers(Architecture.uniform(1, 2, 1, 2, "exp"), LayerKind(heads=2))
    r = least_variant_bank(arch, trials=2)
    assert r.separating and r.least_size >= r.counting_bound and r.theorem is None
    assert {"least_size", "counting_bound", "separating", "generic"} <= set(r.to_json())


def test_bank_orders_rise_on_a_smaller_bank():
    arch = with_layers(BASE, LayerKind(skip="value"))
    big, small = bank_orders(arch, random_bank(arch.base, 6), 8), bank_orders(arch, random_bank(arch.base, 1), 8)
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
    arch = with_layers(Architecture.uniform(3, 4, 1, 4, "exp"), LayerKind(skip="value", mask="causal", heads=2))
    s = variant_spectrum(arch)
    assert s.certificate == "certified" and s.undecided == 0 and s.kernel == 6 and s.theorem is None
    assert variant_jet(arch, points=1).sharp_degree == 3
