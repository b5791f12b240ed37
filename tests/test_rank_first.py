"""The rank route first (issue 41): where the numerical guide's orders are all 0 and 1, the constants
route certifies the orders from ranks alone (:func:`~symattn.analyses.path_rank.rank_route`) before
any exact series in Q[constants].

Its results are compared with the exact frames (the route as it was, the rank route switched off) on
every block family whose guide allows it at D = 1, 2 (eps = 1/100, d = 2, r = 1, n = 3); a guide with
a higher order keeps the exact frames; a rank route that declines hands over to them."""

from __future__ import annotations

import pytest

from symattn.analyses import constant_spectrum as cs
from symattn.analyses.spectrum import native_spectrum
from symattn.model.architecture import Architecture

FAMILIES = {
    "post-norm block with skip": dict(skip="value", norm="post"),
    "pre-norm block with skip": dict(skip="value", norm="pre"),
    "attention + LayerNorm (post-norm)": dict(norm="post"),
    "attention + MLP (tanh, m = 2)": dict(mlp=2, activation="tanh"),
}


def _arch(family: str, depth: int) -> Architecture:
    parts = dict(FAMILIES[family])
    if "norm" in parts:
        parts["eps"] = "1/100"
    return Architecture.uniform(depth, 2, 1, 3, "exp", **parts)


def _bands(s):
    return [(b.layer, b.order, b.multiplicity) for b in s.bands]


def _ranked(s) -> bool:
    return any(n.startswith(cs.RANKED_PREFIX) for n in s.notes)


def test_rank_route_first_reads_the_guide():
    assert cs.rank_route_first([(0, 12), (1, 7)]) and cs.rank_route_first([(0, 3)])
    assert not cs.rank_route_first([(0, 8), (1, 3), (5, 2)]) and not cs.rank_route_first([(1, 2), (2, 1)])
    assert not cs.rank_route_first([])  # no guide (a given bank): the exact frames


@pytest.mark.parametrize("family,depth", [("post-norm block with skip", 1), ("post-norm block with skip", 2),
                                          ("pre-norm block with skip", 1), ("pre-norm block with skip", 2),
                                          ("attention + LayerNorm (post-norm)", 1),
                                          ("attention + MLP (tanh, m = 2)", 1)])
def test_the_rank_route_first_equals_the_exact_frames(family, depth):
    """The certified answer by ranks equals the exact frame's on every block, at both points of the
    generic claim; only the route (and its note) differs."""
    arch = _arch(family, depth)
    said: list[str] = []
    ranked = native_spectrum(arch, progress=said.append)
    assert _ranked(ranked) and any("orders are all 0 and 1" in m for m in said)
    exact = native_spectrum(arch, method="constants")  # asks for the exact frames: no rank route first
    assert not _ranked(exact)
    assert ranked.certificate == exact.certificate == "certified"
    assert _bands(ranked) == _bands(exact)
    assert (ranked.rank, ranked.kernel, ranked.undecided, ranked.past) == \
        (exact.rank, exact.kernel, exact.undecided, exact.past)
    assert ranked.generic == exact.generic


def test_a_guide_past_order_one_keeps_the_exact_frames():
    """Attention + LayerNorm at D = 2 has t^5 (ranks cannot decide it): no rank route is tried."""
    said: list[str] = []
    s = native_spectrum(_arch("attention + LayerNorm (post-norm)", 2), progress=said.append)
    assert not _ranked(s) and not any("rank route" in m for m in said)
    assert (5, 2) in {(b.order, b.multiplicity) for b in s.bands}


def test_a_declining_rank_route_hands_over_to_the_exact_frames(monkeypatch):
    said: list[str] = []
    monkeypatch.setattr(cs, "_ranked", lambda *args: None)
    s = native_spectrum(_arch("post-norm block with skip", 1), progress=said.append)
    assert s.certificate == "certified" and not _ranked(s)
    assert any("do not decide: the exact frames" in m for m in said)
    assert s.rank == 9 and s.undecided == 0


@pytest.mark.slow
@pytest.mark.parametrize("family,bands", [("post-norm block with skip", [(0, 12), (1, 7)]),
                                          ("pre-norm block with skip", [(0, 10), (1, 6)])])
def test_depth_three_by_ranks(family, bands):
    """D = 3: the rows of the blocks table (eps 1/100 000 there, 1/100 here), by ranks alone."""
    s = native_spectrum(_arch(family, 3))
    assert _ranked(s) and s.certificate == "certified" and s.undecided == 0
    found: dict[int, int] = {}
    for b in s.bands:
        found[b.order] = found.get(b.order, 0) + b.multiplicity
    assert sorted(found.items()) == bands


def test_method_constants_asks_for_the_exact_frames():
    said: list[str] = []
    s = native_spectrum(_arch("post-norm block with skip", 1), method="constants", progress=said.append)
    assert not _ranked(s) and not any("rank route" in m for m in said)
