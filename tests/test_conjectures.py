"""The conjecture engine fits generic values only (issue 39 item 5): rows whose claim is "at this point"
(or that carry no claim) are left out, listed with the reason, in symattn.analyses.conjectures and in the
docs tables of benchmarks/bench_blocks.py."""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

import symattn.analyses.conjectures as conj
from symattn.analyses.conjectures import conjectures, split_by_claim

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def _row(D, rank, claim="generic (evidence, 2 points)", top=None, **more):
    """A fake row of :func:`family_table` (the residual family's shape: rank 7 D, kernel D, top 3)."""
    top = 3 if top is None else top
    return dict({"depth": D, "bands": [(D, top, rank)], "top_order_last_layer": top, "kernel": D, "rank": rank,
                 "unexplained": 0, "past": 0, "undecided": 0, "jet_degree": 3, "jet_degree_by_seed": [3, 3, 3],
                 "certificate": "certified", "tier": "fake", "seconds": 0.0, "claim": claim, "candidate": None,
                 "special": [], "jet_claim": "generic upper bound (certified)"}, **more)


def test_split_by_claim_keeps_generic_rows_only():
    rows = [{"claim": "generic (certified)"}, {"claim": "generic (evidence, 3 points)"},
            {"claim": "at this point"}, {"claim": "generic bounds (certified)"}, {}]
    kept, excluded = split_by_claim(rows)
    assert kept == rows[:2]
    assert [why for _, why in excluded] == [
        "claim at this point: a result about its point, not the architecture's generic one",
        "claim generic bounds (certified): a result about its point, not the architecture's generic one",
        "no claim: computed before the generic claims, at one point"]


def test_an_at_this_point_row_is_not_fitted(monkeypatch):
    """A fake "at this point" row at a held-out depth is excluded (said, with the reason) and tests nothing;
    the same row at a fitted depth leaves no formula: its value (a wrong rank 99) never enters a fit."""
    table = [_row(1, 7), _row(2, 14), _row(3, 99, claim="at this point (numerical, one point)")]
    monkeypatch.setattr(conj, "family_table", lambda *a, **k: [dict(r) for r in table])
    out = conjectures("residual", max_depth=3, fit=2)
    rank = next(c for c in out["conjectures"] if c["quantity"] == "rank")
    assert rank["formula"] == "x_D = 7 D" and rank["held_out"] == [] and not rank["held_out_ok"]
    assert rank["excluded"] == [{"depth": 3, "claim": "at this point (numerical, one point)",
                                 "reason": "claim at this point (numerical, one point): a result about its point, "
                                           "not the architecture's generic one"}]
    table[1] = _row(2, 99, claim="at this point")
    table[2] = _row(3, 21)
    out = conjectures("residual", max_depth=3, fit=2)
    for c in out["conjectures"][:3]:  # the spectrum's quantities: depth 2 excluded, no formula
        assert c["formula"] is None and not c["held_out_ok"] and [e["depth"] for e in c["excluded"]] == [2]
    assert out["conjectures"][3]["formula"] == "x_D = 3"  # the jet degree has its own claim
    json.dumps(out)


def test_a_special_seed_is_fitted_by_its_generic_candidate(monkeypatch):
    """At a special seed the generic candidate's rank and largest order are fitted, not the point's."""
    special = _row(2, 13, top=5, special=[0], candidate=[1] * 12 + [3, 3], bands=[(1, 1, 12), (2, 5, 1)],
                   undecided=1, unexplained=1)
    table = [_row(1, 7, top=3), special, _row(3, 21, top=3)]
    monkeypatch.setattr(conj, "family_table", lambda *a, **k: [dict(r) for r in table])
    out = {c["quantity"]: c for c in conjectures("residual", max_depth=3, fit=2)["conjectures"]}
    assert out["rank"]["formula"] == "x_D = 7 D" and out["rank"]["held_out_ok"]
    assert out["top order of the last layer"]["formula"] == "x_D = 3" and not out["rank"]["excluded"]
    special.update(bands=[(2, 1, 12), (1, 5, 1)], top_order_last_layer=1)  # the largest order not in the last layer
    out = {c["quantity"]: c for c in conjectures("residual", max_depth=3, fit=2)["conjectures"]}
    top = out["top order of the last layer"]
    assert top["formula"] is None and "the seed is special" in top["excluded"][0]["reason"]


def test_the_blocks_fits_leave_out_rows_at_this_point():
    """bench_blocks' fits take the generic rows; a fake "at this point" row is listed as not fitted."""
    from bench_blocks import FAMILIES, fits, not_fitted, rst

    family = next(iter(FAMILIES))
    base = dict(family=family, d=2, r=1, n=3, P=12, bands=[(0, 6), (1, 3)], declared=3, unexplained=0,
                kinds={}, tier="fake", error=None, past=[], finite=0, candidate=None, seconds=0.0, cpu=0.0,
                seeds=[0, 1])
    rows = [dict(base, depth=D, rank=4 * D + 5, top=4 * D - 3, declared=8 * D - 5,
                 claim="generic (evidence, 2 points)") for D in (1, 2)]
    rows.append(dict(base, depth=3, rank=99, top=99, declared=19, claim="at this point (numerical, one point)"))
    rows.append(dict(base, family="post-norm block with skip", depth=1, rank=9, top=1))  # saved before the claims
    fitted = fits(rows, family)
    assert [(q, f, check) for q, f, check in fitted][1] == ("rank", "x_D = 4 D + 5", "")  # D = 3 tests nothing
    assert [r["depth"] for r, _ in not_fitted(rows)] == [3, 1]
    text = rst(rows, {family: fitted})
    assert "Not fitted (the conjecture engine fits generic values only): " in text
    assert "not recomputed: computed at seed 0 alone before the generic claims" in text
    assert "generic (evidence, 2 points) (seeds 0, 1)" in text


@pytest.mark.parametrize("name", ["blocks_table", "blocks_dimensions"])
def test_every_published_row_is_labelled(name):
    """Each row of the committed tables carries a claim: generic (certified or evidence), at this point, a
    dimension's generic bounds, or (blocks table) says that it was not recomputed."""
    rows = json.loads((ROOT / "docs" / f"{name}.json").read_text())
    allowed = ("generic (certified)", "generic (evidence, ", "at this point", "generic bounds (certified)",
               "generic lower bound (certified)")
    for r in rows:
        assert r.get("claim", "").startswith(allowed) or (name == "blocks_table" and "claim" not in r), r["family"]


def test_the_dimension_table_renders_from_its_rows():
    from bench_blocks import dimension_rst

    rows = json.loads((ROOT / "docs" / "blocks_dimensions.json").read_text())
    assert dimension_rst(rows) == (ROOT / "docs" / "blocks_dimensions.inc").read_text()
    assert "     - claim" in dimension_rst(rows)
