"""Claims that say what they are about (issue 39): at this point, or generic (certified or evidence)."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from symattn.analyses.genericity import dominance, generic_claim
from symattn.analyses.dimension import neuromanifold_dimension
from symattn.analyses.spectrum import native_spectrum
from symattn.core.errors import InternalError
from symattn.model.architecture import Architecture
from symattn.model.parameters import check_generic, generic_matrix, random_point


def _sums(a, n):
    a = sorted(list(a) + [math.inf] * (n - len(a)))
    out, t = [], 0
    for x in a:
        t += x
        out.append(t)
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=6), st.lists(st.integers(0, 6), min_size=1, max_size=6))
def test_dominance_is_the_partial_sums_order(a, b):
    n = max(len(a), len(b))
    sa, sb = _sums(a, n), _sums(b, n)
    want = "=" if sorted(a) == sorted(b) and len(a) == len(b) else (
        "<" if all(x <= y for x, y in zip(sa, sb)) else ">" if all(x >= y for x, y in zip(sa, sb)) else None)
    assert dominance(a, b) == want


def test_seeded_points_avoid_structure():
    arch = Architecture.uniform(3, 2, 1, 3, "exp", skip="value", norm="post", mlp=2, bias=True)
    for seed in range(20):
        point = random_point(arch, seed)
        check_generic(point)
        gains = [v for name, v in point.items() if arch.block(name).is_norm_gain]
        assert all(x != 0 for g in gains for x in np.asarray(g).reshape(-1))
    m = generic_matrix(random.Random(0), (4, 4))
    assert len({abs(v) for v in m.reshape(-1)}) == 16
    with pytest.raises(InternalError):
        check_generic({"attn_norm.shift2": np.array([[Fraction(1)], [Fraction(1)]], dtype=object)})


def test_the_paper_stack_is_generic_certified_by_its_theorem():
    s = native_spectrum(Architecture.uniform(1, 2, 1, 2, "exp"))
    assert (s.generic, s.about, s.claim["seeds"]) == ("generic (certified)", "at this point", [0])


def test_one_point_makes_no_generic_claim():
    s = native_spectrum(Architecture.uniform(1, 2, 1, 3, "exp", skip="value"), points=1)
    assert s.generic == "at this point" and "no generic claim" in s.claim["note"]


def test_a_special_seed_is_said_and_never_certifies_a_generic_claim(monkeypatch):
    """Seed 0 forced special (two MLP hidden units computing the same function); seed 1 is generic. The printed
    result stays the point's (certified at this point); the generic claim is evidence, names seed 0
    special and reports seed 1's smaller spectrum as the candidate."""
    import symattn.analyses.contact as contact

    real = contact.path_point_of

    def special(arch, seed=0, values="identity"):
        point = real(arch, seed, values)
        if seed == 0:
            point["mlp.in_bias1"] = np.array([[Fraction(0)], [Fraction(0)]], dtype=object)
            point["mlp.in1"][1, :] = point["mlp.in1"][0, :]
        return point

    monkeypatch.setattr(contact, "path_point_of", special)
    arch = Architecture.uniform(1, 2, 1, 3, "exp", mlp=2, activation="poly:0,1,1/2")
    s = native_spectrum(arch, method="constants")
    assert s.certificate == "certified" and s.about == "at this point"
    assert s.claim["special"] == [0] and s.generic.startswith("generic (evidence")
    one = native_spectrum(arch, method="constants", seed=1, points=1)
    assert s.claim["candidate"] == sorted(o for b in one.bands for o in [b.order] * b.multiplicity) + \
        [None] * one.undecided
    assert "special" in s._headline() and json.dumps(s.to_json())


def test_a_wrong_candidate_stops_the_claim(monkeypatch):
    import symattn.analyses.genericity as genericity

    arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value")
    monkeypatch.setattr(genericity, "dominance", lambda a, b: ">" if sorted(a) != sorted(b) else "=")
    with pytest.raises(InternalError, match="not the minimum"):
        generic_claim(arch, [0, 1], [[0, 1, 1], [0, 0, 1]], [True, True])


@pytest.mark.slow
def test_the_seed_zero_block_of_issue_39(monkeypatch):
    """The 14th case of issue 39 (about 40 s CPU per spectrum, two spectra). The seeds now drawn are generic:
    seed 0 gives the architecture's spectrum (the issue's independent computation: t^0 x 10, t^1 x 3, t^5 x 2,
    t^17 x 2), seed 1 agrees. At the issue's special point (seed 0's old draw: layer 2's LayerNorm shift
    (1, 1), V_3 = I; the Jacobian at t = 0 has rank 9 there) the second point contradicts the first: seed 0
    is said special, the candidate is seed 1's, and no generic claim is certified."""
    import symattn.analyses.contact as contact

    arch = Architecture.uniform(3, 2, 1, 3, "exp", norm="post", eps="1/100")
    s = native_spectrum(arch)
    generic = [0] * 10 + [1] * 3 + [5] * 2 + [17] * 2
    assert (s.generic, s.claim["special"]) == ("generic (evidence, 2 points)", [])
    assert sorted(o for b in s.bands for o in [b.order] * b.multiplicity) == generic and s.undecided == 0
    real = contact.path_point_of

    def special(arch, seed=0, values="identity"):
        point = real(arch, seed, values)
        if seed == 0:
            point["attn_norm.shift2"] = np.array([[Fraction(1)], [Fraction(1)]], dtype=object)
        return point

    monkeypatch.setattr(contact, "path_point_of", special)
    s = native_spectrum(arch)
    assert s.generic != "generic (certified)" and s.claim["special"] == [0]
    assert s.claim["candidate"] == generic and "seed 0 special" in s._headline()


# -- dimensions, jet degrees and fibers say what they are about ---------------------------------


def test_a_dimension_is_a_generic_claim():
    from symattn.analyses.genericity import dimension_claim

    assert dimension_claim(True, 7, 7).label == "generic (certified)"
    assert dimension_claim(True, 6, 7).label == "generic bounds (certified)"
    assert dimension_claim(False, 7, 7).label == "at this point"
    r = neuromanifold_dimension(Architecture.uniform(1, 2, 1, 2, "exp"))
    out = r.to_json()
    assert (out["about"], out["generic"], r.certified) == ("generic", "generic (certified)", True)
    assert "generic (certified)" in r._headline() and json.dumps(out)


def test_a_ball_dimension_without_meeting_bounds_claims_only_its_lower_bound():
    from symattn.analyses.dimension import Dimension

    d = Dimension(None, 10, 6, 8, "numerical", False, 8, None, 0, 2, 0.0,
                  tier="certified lower bound (balls at 60 digits)")
    assert d.generic == "generic lower bound (certified)"
    exact = Dimension(None, 10, 6, 8, "modular", False, 8, None, 3, 2, 0.0)
    assert exact.generic == "generic bounds (certified)"


def test_degree_claims():
    from symattn.analyses.genericity import degree_claim

    assert degree_claim({"0": 7}, 7).label == "generic (certified)"
    assert degree_claim({"0": 9, "1": 7}, 7).special == ["0"]
    assert degree_claim({"0": 9}, 7).label == "at this point"          # above the statement: special
    assert degree_claim({"0": 7, "1": 9}, None).label == "generic upper bound (certified)"
    assert degree_claim({"0": 7, "1": 9}, None).special == ["1"]
    assert degree_claim({"0": 7}, None, given=True).label == "at this point"
    assert degree_claim({"0": None}, None).label == "at this point"
    with pytest.raises(InternalError, match="below the theorem"):
        degree_claim({"0": 5}, 7)


def test_jet_degrees_say_what_they_are_about():
    from symattn.analyses.jets import generic_effective, sharp_degree

    paper = Architecture.uniform(1, 1, 1, 2, "exp")
    drawn = sharp_degree(paper)
    assert (drawn.generic, drawn.about) == ("generic (certified)", "at this point")
    assert sharp_degree(paper, generic_effective(paper, 2)).generic == "at this point"
    native = sharp_degree(Architecture.uniform(1, 2, 1, 3, "exp", skip="value"))
    assert native.generic == "generic upper bound (certified)"
    assert native.claim["seeds"] == ["0", "1", "2"] and json.dumps(native.to_json())


def test_the_cli_prints_the_claims(capsys):
    from symattn.cli import main

    assert main(["jet", "--depth", "1", "--width", "1", "--tokens", "2"]) == 0
    assert "generic claim" in capsys.readouterr().out
    assert main(["dimension", "--depth", "1", "--widths", "2", "--ranks", "1", "--tokens", "2"]) == 0
    assert "generic (certified)" in capsys.readouterr().out


def test_a_fiber_is_about_its_tuple():
    from symattn.analyses.fibers import effective_fiber

    f = effective_fiber([[1, 0]], [[[1, 2], [0, 1]]], "exp", 2)
    assert f.to_json()["about"] == "at this point"


# -- the user's own command kills the seeding and dominance mutants (issue 39, "What it must show") ------------


def test_the_users_command_refuses_a_seeded_point_with_equal_entries(monkeypatch, capsys):
    """The mutant ``seed-generic-duplicates-allowed`` seen from ``symattn spectrum``: a seed generator that
    returns equal entries (equal LayerNorm shifts, as seed 0 of issue 39) stops the command as a bug (exit 70,
    one line), never a result about a special point."""
    import symattn.analyses.collapse as collapse
    import symattn.model.parameters as parameters
    from symattn.cli import main

    real = parameters.generic_matrix

    def repeats(rng, shape, seen=None):
        m = real(rng, shape, seen)
        m[...] = m.reshape(-1)[0]
        return m

    monkeypatch.setattr(parameters, "generic_matrix", repeats)
    monkeypatch.setattr(collapse, "generic_matrix", repeats)
    assert main(["spectrum", "--depth", "1", "--width", "2", "--tokens", "3", "--norm", "post"]) == 70
    err = capsys.readouterr().err
    assert "has a zero or an entry whose absolute value another entry of the point has" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_the_users_command_refuses_a_reversed_dominance(monkeypatch, capsys):
    """The mutant ``genericity-dominance-reversed`` seen from ``symattn spectrum`` at a special seed (seed 0
    forced special as above): the larger spectrum would become the generic candidate; the candidate's
    second code path stops the command (exit 70). Unpatched, the same command names seed 0 special."""
    import symattn.analyses.contact as contact
    import symattn.analyses.genericity as genericity
    from symattn.cli import main

    real_point = contact.path_point_of

    def special(arch, seed=0, values="identity"):
        point = real_point(arch, seed, values)
        if seed == 0:
            point["mlp.in_bias1"] = np.array([[Fraction(0)], [Fraction(0)]], dtype=object)
            point["mlp.in1"][1, :] = point["mlp.in1"][0, :]
        return point

    monkeypatch.setattr(contact, "path_point_of", special)
    argv = ["spectrum", "--depth", "1", "--width", "2", "--tokens", "3", "--mlp", "2", "--activation",
            "poly:0,1,1/2", "--method", "constants"]
    assert main(argv) == 0
    assert "seed 0 special" in capsys.readouterr().out
    real = genericity.dominance
    monkeypatch.setattr(genericity, "dominance", lambda a, b: {"<": ">", ">": "<"}.get(real(a, b), real(a, b)))
    assert main(argv) == 70
    err = capsys.readouterr().err
    bug = [line for line in err.splitlines() if not line.startswith("[")]  # (progress lines start with [)
    assert len(bug) == 1 and "not the minimum in dominance order" in bug[0] and "Traceback" not in err


def test_a_certified_point_below_theorem_4_is_a_bug():
    # a point's certified orders bound the generic ones from above: orders below the closed form
    # (or a closed form not below them) mean a wrong computation or a wrong formula, never a claim
    from symattn.analyses.genericity import generic_claim, theorem_orders
    from symattn.core.errors import InternalError
    from symattn.model.architecture import Architecture

    arch = Architecture.uniform(2, 2, 1, 2, "exp")
    theorem = theorem_orders(arch)
    assert generic_claim(arch, [0], [theorem], [True]).label == "generic (certified)"
    special = sorted(theorem[:-1] + [theorem[-1] + 1])
    assert generic_claim(arch, [0], [special], [True]).special == [0]
    below = sorted(theorem[:-1] + [theorem[-1] - 1])
    with pytest.raises(InternalError, match="not below the certified orders"):
        generic_claim(arch, [0], [below], [True])
