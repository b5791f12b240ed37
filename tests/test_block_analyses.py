"""The analyses on transformer-block stacks (issue 24 item 2): dimension (ball tier), jets
(undecided where the exact series refuse), fiber evidence at native weights, sensitivity,
the conjecture engine and the sweep over block families. Every number here is computed."""

from __future__ import annotations

import numpy as np
import pytest

from symattn.analyses.dimension import ball_dimension, neuromanifold_dimension
from symattn.analyses.jets import refuse_biased_jets, sharp_degree
from symattn.core.errors import CheckFailed, SymattnError, Undecided
from symattn.model.architecture import Architecture


def _cli(capsys, *argv):
    from symattn.cli import main

    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err.strip().splitlines()


# ---------------------------------------------------------------- dimension: the ball tier
def test_ball_tier_certifies_one_post_norm_layer_and_agrees_with_the_exact_tier():
    arch = Architecture.uniform(1, 2, 1, 3, "exp", norm="post", eps="1/4")  # eps a square: jets run over Q
    exact = neuromanifold_dimension(arch, method="exact")
    balls = neuromanifold_dimension(arch, method="numerical", digits=40)
    assert (exact.dimension, balls.dimension) == (9, 9)
    assert balls.tier.startswith("certified lower bound (balls") and exact.tier == "exact"
    assert balls.symmetries == {"factor gauge": 1, "LayerNorm shift": 2} and balls.unexplained == 0


def test_ball_tier_reports_the_unexplained_kernel(monkeypatch):
    # a quadratic MLP of three hidden units on width 2: its polynomial redundancy declared, certified 15;
    # with that declaration missing, two directions no declared symmetry explains
    arch = Architecture.uniform(1, 2, 1, 3, "exp", mlp=3, activation="poly:0,1,1/2")
    r = ball_dimension(arch, digits=40)
    assert (r.lower_bound, r.upper_bound, r.unexplained, r.dimension) == (15, 15, 0, 15)
    import symattn.model.symmetry_kinds as kinds

    monkeypatch.setattr(kinds, "_mlp_redundancy", lambda *args: [])
    r = ball_dimension(arch, digits=40)
    assert (r.lower_bound, r.upper_bound, r.unexplained, r.dimension) == (15, 17, 2, None)
    assert any("unexplained kernel: 2" in n for n in r.notes)
    monkeypatch.undo()
    # the pre-norm layer: the key's LayerNorm normal and the LayerNorm's GL(2) interface explain it all
    r = ball_dimension(Architecture.uniform(1, 2, 1, 3, "exp", skip="value", norm="pre"), digits=40)
    assert (r.lower_bound, r.upper_bound, r.unexplained, r.dimension) == (6, 6, 0, 6)
    assert (r.symmetries["LayerNorm normal"], r.symmetries["LayerNorm interface"]) == (1, 4)


def test_ball_tier_takes_each_bound_over_the_points():
    """Two post-norm blocks with skip at d = 2: the seeded points avoid LayerNorm gains with a zero
    entry (there a feature is constant and the LayerNorm normal shift is not declared), and the
    largest certified rank and the smallest P - rank(symmetries) over the points meet at 14."""
    from symattn.analyses.dimension import generic_native

    arch = Architecture.uniform(2, 2, 1, 3, "exp", skip="value", norm="post")
    gains = [v for s in range(3) for name, value in generic_native(arch, s).items() if name.startswith("attn_norm.gain")
             for v in np.asarray(value).reshape(-1)]
    assert all(v != 0 for v in gains)
    r = ball_dimension(arch)
    assert (r.lower_bound, r.upper_bound, r.unexplained, r.dimension) == (14, 14, 0, 14)
    assert r.symmetries.get("LayerNorm normal shift") == 1


def test_ball_tier_bounds_meet_across_points(monkeypatch):
    """The lower bound from one point and the upper bound from another: the first seeded point has
    a zero LayerNorm gain (fewer declared symmetries there, upper bound 15), the next ones not; the
    bounds still meet at 14."""
    from fractions import Fraction

    from symattn.analyses import dimension

    arch = Architecture.uniform(2, 2, 1, 3, "exp", skip="value", norm="post")
    real = dimension.generic_native

    def seeded(arch_, seed=0):
        point = dict(real(arch_, seed))
        if seed == 0:
            point["attn_norm.gain1"] = np.array([[Fraction(2)], [Fraction(0)]], dtype=object)
        return point

    monkeypatch.setattr(dimension, "generic_native", seeded)
    r = ball_dimension(arch)
    assert (r.lower_bound, r.upper_bound, r.dimension) == (14, 14, 14)


def test_ball_tier_catches_a_wrong_symmetry(broken_kernel):
    from symattn.analyses import dimension

    broken_kernel(dimension)
    with pytest.raises(CheckFailed, match="not a kernel vector"):
        ball_dimension(Architecture.uniform(1, 2, 1, 3, "exp", norm="post"), digits=30)


def test_certified_rank_is_a_certified_minor():
    import flint

    from symattn.analyses.dimension import _certified_rank

    C = np.eye(2, dtype=int).astype(object)
    full = np.array([[flint.arb(1), flint.arb(2)], [flint.arb(3), flint.arb(5)]], dtype=object)
    assert _certified_rank(full, C, 30) == (2, 2)
    low = np.array([[flint.arb(1), flint.arb(2)], [flint.arb(2), flint.arb(4)]], dtype=object)
    assert _certified_rank(low, C, 30) == (1, 1)
    wide = flint.arb(4) + flint.arb(10) ** -10 + flint.arb(0, 1e-3)  # midpoint off rank one, radius 1e-3
    fuzzy = np.array([[flint.arb(1), flint.arb(2)], [flint.arb(2), wide]], dtype=object)
    assert _certified_rank(fuzzy, C, 30) == (1, 2)  # numerically rank 2, its 2 x 2 minor's ball contains 0


# ---------------------------------------------------------------- refusals: undecided, one line, exit 1
@pytest.mark.parametrize("kind, layer, why", [
    (dict(bias=True), 1, "biases"), (dict(skip="value", norm="pre"), 1, "pre-norm"),
    (dict(norm="post"), 2, "constant output"), (dict(mlp=2, activation="poly:0,1"), 2, "constant output")])
def test_jets_refuse_nonzero_scores_at_the_origin(kind, layer, why):
    with pytest.raises(Undecided, match=f"layer {layer}'s scores are nonzero at X = 0 .*{why}"):
        refuse_biased_jets(Architecture.uniform(2, 2, 1, 3, "exp", **kind))
    refuse_biased_jets(Architecture.uniform(1, 2, 1, 3, "exp", norm="post"))  # layer 1 reads X = 0


def test_cli_dimension_and_jet_on_blocks(capsys):
    base = ["--depth", "1", "--tokens", "3"]
    code, _, err = _cli(capsys, "dimension", *base, "--widths", "2", "--ranks", "1", "--bias")
    assert code == 1 and len(err) == 1 and err[0].startswith("symattn: undecided:") and "--method numerical" in err[0]
    code, _, err = _cli(capsys, "jet", *base, "--width", "2", "--norm", "post")
    assert code == 1 and len(err) == 1 and err[0].startswith("symattn: undecided:")
    code, out, _ = _cli(capsys, "dimension", *base, "--widths", "2", "--ranks", "1", "--bias", "--method",
                        "numerical", "--digits", "30")
    assert code == 0 and "certified lower bound (balls at 30 digits)" in out and "unexplained kernel  0" in out


def test_sharp_degree_of_a_polynomial_mlp_layer():
    """Two hidden units: the MLP scalings of the shifted monomial (x + 1)^2/2 - 1/2 complete the kernel and
    the degree is 3; three hidden units: the MLP's polynomial redundancy (declared) completes it too;
    without that declaration the dimension (15) falls short of P - rank(symmetries) = 17, undecided."""
    r = sharp_degree(Architecture.uniform(1, 2, 1, 3, "exp", mlp=2, activation="poly:0,1,1/2"), max_degree=7)
    assert (r.map, r.theorem, r.sharp_degree) == ("native modulo the declared symmetries", None, 3)
    arch = Architecture.uniform(1, 2, 1, 3, "exp", mlp=3, activation="poly:0,1,1/2")
    r = sharp_degree(arch, max_degree=7)
    assert (r.map, r.theorem, r.sharp_degree) == ("native modulo the declared symmetries", None, 3)
    import symattn.model.symmetry_kinds as kinds

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kinds, "_mlp_redundancy", lambda *args: [])
        r = sharp_degree(arch, max_degree=7)
    assert r.sharp_degree is None and "undecided" in r.notes[-1]


# ---------------------------------------------------------------- fiber evidence
def test_fiber_of_a_block_stack(capsys, monkeypatch):
    import symattn.model.symmetry_kinds as kinds
    from symattn.analyses.fibers import fiber, native_fiber

    arch = Architecture.uniform(1, 2, 1, 3, "exp", norm="post")
    with pytest.raises(SymattnError, match="score tuple"):
        fiber(arch, [[1, 0]], [[[1, 0], [0, 1]]])
    f = native_fiber(arch)
    assert (f.fiber, f.determined, f.theorem) == ("locally-determined", True, None)
    # the MLP's polynomial redundancy not declared: the kind's count formula stops the command (issue 42)
    monkeypatch.setattr(kinds, "_mlp_redundancy", lambda *args: [])
    code, out, err = _cli(capsys, "fiber", "--normalizer", "exp", "--tokens", "3", "--native", "--depth", "1",
                          "--width", "2", "--mlp", "3", "--activation", "poly:0,1,1/2")
    assert code == 1 and len(err) == 1 and "'MLP polynomial redundancy' declares 0 directions" in err[0]
    monkeypatch.undo()
    code, _, err = _cli(capsys, "fiber", "--normalizer", "exp", "--tokens", "3", "--L", "[[1,0],[0,1]]",
                        "--M", "[[1,2],[0,1]]", "--mlp", "2")
    assert code == 2 and len(err) == 1 and "--native" in err[0]


# ---------------------------------------------------------------- sensitivity, conjectures, sweep
def test_sensitivity_of_a_layer_norm_block(monkeypatch):
    """Certified bands (the constants route) where the spectrum has no gap; the numerical ones where it has
    (a gap made by leaving the MLP's polynomial redundancy undeclared)."""
    import symattn.model.symmetry_kinds as kinds
    from symattn.analyses.sensitivity import sensitivity

    r = sensitivity(Architecture.uniform(1, 2, 1, 3, "exp", norm="post"), t_min=0.05)
    assert [(b["order"], b["multiplicity"]) for b in r["bands"]] == [(0, 6), (1, 3)]
    assert r["theorem"] is None and r["kind"].startswith("bands and rank exact")
    monkeypatch.setattr(kinds, "_mlp_redundancy", lambda *args: [])
    r = sensitivity(Architecture.uniform(1, 2, 1, 3, "exp", mlp=3, activation="poly:0,1,1/2"), t_min=0.05)
    assert r["kind"].startswith("bands and rank numerical") and r["unexplained"] == 2
    assert "bands and rank exact" not in r["kind"]  # the numerical bands are not called exact


def test_conjecture_engine_on_block_families():
    from symattn.analyses.conjectures import FAMILY_KINDS, family_table

    (row,) = family_table("ln-post", depths=(1,))
    assert row["tier"].startswith("exact in Q[constants]") and row["certificate"] == "certified"
    assert (row["rank"], row["kernel"], row["unexplained"]) == (9, 3, 0)
    (row,) = family_table("mlp-poly", depths=(1,))
    P = Architecture.uniform(1, 2, 1, 3, "exp", **FAMILY_KINDS["mlp-poly"]).native_size
    assert row["tier"].startswith("modular Smith form") and row["rank"] + row["kernel"] + row["unexplained"] == P
    assert (row["certificate"], row["unexplained"]) == ("certified", 0)  # the MLP scalings complete the kernel


def test_sweep_grid_over_block_families():
    from symattn.sweep.analyses import build_architecture
    from symattn.sweep.spec import parse_spec

    spec = parse_spec({"analyses": ["dimension"],
                       "grid": [{"depth": 1, "width": 2, "tokens": 3, "family": ["paper", "post-norm"]}]})
    paper, block = sorted(spec.cases, key=lambda c: "family" in c.architecture)
    assert "family" not in paper.architecture and block.architecture["family"] == "post-norm"
    assert "family=post-norm" in block.label
    arch = build_architecture(block.payload()["architecture"])
    assert arch.layers[0].norm == "post" and arch.layers[0].skip == "value"
    with pytest.raises(SymattnError, match="family must be"):
        parse_spec({"analyses": ["jet"], "grid": [{"depth": 1, "width": 2, "family": "transformer"}]})
