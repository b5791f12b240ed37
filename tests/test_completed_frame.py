"""The completed frame of the constants route (issue 41): every visible column exact to the numerical
guide's largest jump, the columns its frame leaves in the gap alone exact to the whole truncation.

Its orders are checked against the whole truncation's exact frame and the numerical tier; each of its
safeguards is broken once (a coefficient not computed taken for a zero, a leading coefficient that
rests on one, the two evaluations of the gap's columns not compared)."""

from __future__ import annotations

import flint
import numpy as np
import pytest

from symattn.analyses import constant_spectrum as cs
from symattn.analyses.contact import setup
from symattn.analyses.frame_proof import prove_frame
from symattn.core.errors import CheckFailed
from symattn.model.architecture import Architecture

POST = Architecture.uniform(2, 2, 1, 3, "exp", norm="post")


def _balls(v):
    return np.array([flint.arb("0 +/- inf") if isinstance(x, type(cs.UNKNOWN)) else flint.arb(x) for x in v],
                    dtype=object)


def test_a_coefficient_not_computed_is_never_a_zero():
    """A column 0, ?, 1 (the t^1 coefficient not computed) has no proved order: not t^2."""
    J = np.empty((3, 1, 1), dtype=object)
    J[0, 0, 0], J[1, 0, 0], J[2, 0, 0] = flint.fmpq(0), cs.UNKNOWN, flint.fmpq(1)
    proof = prove_frame(J, _balls, 30)
    assert proof.status != "proved" and proof.orders != [2]
    assert (cs.UNKNOWN + 1) is cs.UNKNOWN and (flint.fmpq(2) * cs.UNKNOWN) is cs.UNKNOWN and cs.UNKNOWN != 0


def test_a_leading_coefficient_on_a_coefficient_not_computed_is_refused():
    from fractions import Fraction

    from symattn.analyses.frame_proof import FrameProof

    J = np.empty((2, 2, 2), dtype=object)
    J[0] = [[0, 0], [0, 0]]
    J[1] = [[1, cs.UNKNOWN], [0, 1]]
    one = [[(0, 0, Fraction(1))], [(1, 0, Fraction(1))]]
    assert cs.rests_on_unknown(J, FrameProof("proved", [1, 1], one, 2))
    assert not cs.rests_on_unknown(J, FrameProof("proved", [1, None], one, 2))  # a gap column has no leading one
    both = [[(0, 0, Fraction(1))], [(0, 0, Fraction(-1)), (1, 0, Fraction(1))]]
    assert cs.rests_on_unknown(J, FrameProof("proved", [1, 1], both, 2))


def test_the_completed_frame_proves_the_whole_spectrum():
    """Attention + LayerNorm (post-norm), D = 2: the guide's orders jump from t^1 to t^5, so the frame is
    exact to t^2 on all 13 columns and to t^7 on the two of its gap; its orders are the whole truncation's
    (exact on every column) and the numerical tier's."""
    from symattn.analyses.numerical_spectrum import numerical_path_spectrum

    s = setup(POST, 0, "identity", "modular", None, lambda msg: None)
    said = []
    r = cs.constant_route(s, "auto", None, said.append)
    assert r["proved"] and r["N"] == 6 and r["exact_order"] == 6 and r["proof"].gap == 0
    assert r["nested"][-1] == [0] * 8 + [1] * 3 + [5] * 2
    assert r["completed"].startswith("completed frame: ") and "mod t^2 on all 13" in r["completed"]
    assert "mod t^6 on the 2 columns" in r["completed"]
    assert any("exact Jacobian (2 columns) in Q[constants] to t^6" in m for m in said)
    whole = cs.constant_route(s, "auto", 7, lambda msg: None)  # an order given: the whole truncation
    assert whole.get("completed") is None and whole["nested"] == r["nested"]
    n = numerical_path_spectrum(POST)
    assert sorted(n.bands) == [(0, 8), (1, 3), (5, 2)]


def test_the_spectrum_names_the_completed_frame():
    from symattn.analyses.spectrum import native_spectrum

    s = native_spectrum(POST, method="constants", points=1)
    assert s.certificate == "certified" and s.rank == 13 and s.undecided == 0
    assert sum(1 for n in s.notes if n.startswith("completed frame: ")) == 1


def test_without_a_completion_the_whole_truncation(monkeypatch):
    """A gap wider than the share the completion takes: the whole truncation, the same orders."""
    monkeypatch.setattr(cs, "COMPLETION_SHARE", 0.0)
    s = setup(POST, 0, "identity", "modular", None, lambda msg: None)
    r = cs.constant_route(s, "auto", None, lambda msg: None)
    assert r.get("completed") is None and r["N"] == 7 and r["nested"][-1] == [0] * 8 + [1] * 3 + [5] * 2


def test_the_gap_columns_alone_must_agree_with_all_the_columns(monkeypatch):
    """The gap's columns computed alone (a perturbed t^0 entry) disagree with the rows of all the columns."""
    real = cs.bank_jacobian
    s = setup(POST, 0, "identity", "modular", None, lambda msg: None)

    def perturbed(*args, **kwargs):
        J = real(*args, **kwargs)
        if len(args[6]) < len(s.columns):
            J[0, 0, 0] = J[0, 0, 0] + 1
        return J

    monkeypatch.setattr(cs, "bank_jacobian", perturbed)
    with pytest.raises(CheckFailed, match="disagree"):
        cs.constant_route(s, "auto", None, lambda msg: None)
