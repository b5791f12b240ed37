"""The numerical tier's second method (``numerical_spectrum.frame_check``): a column-reduced frame of
the Jacobian's ball series with real column operations, at two zero tolerances. It confirms the
slopes where they are right, corrects them where graded scales split a band (against the certified
spectrum of the constants route), and says unsettled where its tolerances disagree."""

from __future__ import annotations

import flint
import numpy as np

from symattn.analyses import frame_proof
from symattn.analyses.frame_proof import numerical_frame
from symattn.analyses.numerical_spectrum import frame_check, numerical_path_spectrum
from symattn.analyses.spectrum import native_spectrum
from symattn.core.algebras.balls import digits_to_bits, precision
from symattn.model.architecture import Architecture

FULL_LAYER = dict(skip="value", norm="post", mlp=2, bias=True, combine="concat", activation="gelu")


def _bands(s) -> list:
    out: dict = {}
    for b in s.bands:
        out[b.order] = out.get(b.order, 0) + b.multiplicity
    return sorted(out.items())


def test_the_frame_corrects_graded_slopes_to_the_certified_spectrum():
    """The full post-norm layer at D = 1 (seed 2 of the generic draw): its slopes lie about 0.49 from
    integers (LayerNorm at width 2, eps = 1e-5: graded scales); the numerical frame's bands are the
    certified ones (the frame confirms or corrects the slopes' bands)."""
    arch = Architecture.uniform(1, 2, 1, 3, "exp", **FULL_LAYER)
    n = numerical_path_spectrum(arch, digits=120, seed=2)
    certified = native_spectrum(arch, method="constants", seed=2, points=1)
    assert certified.certificate == "certified"
    assert n.frame in ("confirmed", "corrected") and n.resolved and n.max_slope_error > 0.25
    assert n.bands == _bands(certified) and n.rank == certified.rank
    # and its rank is certified at the path point t = 1: the whole visible part, no unexplained kernel
    assert n.certified_rank == n.rank == 19 and n.notes[-1].endswith("the rank and kernel are certified")


def test_the_frame_confirms_right_slopes():
    arch = Architecture.uniform(2, 2, 1, 3, "exp", norm="post")
    n = numerical_path_spectrum(arch, digits=120)
    assert n.frame == "confirmed" and n.bands == _bands(native_spectrum(arch, method="constants"))


def test_two_tolerances_that_disagree_leave_the_slopes_unsettled(monkeypatch):
    arch = Architecture.uniform(1, 2, 1, 3, "exp", norm="post", eps="1/10")
    n = numerical_path_spectrum(arch, digits=60)
    slopes = list(n.bands)
    calls = []

    def fickle(J, tolerance, max_operations=None):  # a different frame at each level's second tolerance
        calls.append(tolerance)
        return ([0] * n.rank, n.unexplained) if len(calls) % 2 else ([0] * (n.rank - 1) + [7], n.unexplained)

    monkeypatch.setattr(frame_proof, "numerical_frame", fickle)
    n.frame, n.notes = "", []
    out = frame_check(arch, n)
    assert out.frame == "unsettled" and out.bands == slopes and "does not settle up to 960 digits" in out.notes[-1]
    assert calls == [24, 52, 48, 104, 96, 208, 192, 416, 384, 832]     # 60, 120, ... 960 digits


def test_the_tolerance_decides_a_near_relation():
    """col 2 = col 1 + 10^-50 e_1 at t^0: a relation at tolerance 10^-30 (the column's order rises
    to 1), none at 10^-100 (two orders 0)."""
    with precision(digits_to_bits(120)):
        one, tiny = flint.arb(1), flint.arb(10) ** -50
        J = np.empty((2, 2, 2), dtype=object)
        J[0] = [[one, one + tiny], [one, one]]
        J[1] = [[one * 0, one], [one, one * 3]]
        assert numerical_frame(J, 30) == ([0, 1], 0)
        assert numerical_frame(J, 100) == ([0, 0], 0)
        J[0, :, 1] = [tiny, tiny * 2]          # a column whose t^0 coefficient is 10^-50: order 0 or 1
        assert numerical_frame(J, 100) == ([0, 0], 0)
        assert numerical_frame(J, 30) == ([0, 1], 0)


def test_no_kernel_split_leaves_the_slopes_unsettled(monkeypatch):
    from symattn.analyses import contact
    from symattn.core.errors import OutsideHypotheses

    arch = Architecture.uniform(1, 2, 1, 3, "exp", norm="post", eps="1/10")
    n = numerical_path_spectrum(arch, digits=60)
    slopes = list(n.bands)

    def refuse(*args, **kwargs):
        raise OutsideHypotheses("the declared symmetries are dependent at t = 0 on this path")

    monkeypatch.setattr(contact, "setup", refuse)
    n.frame, n.notes = "", []
    out = frame_check(arch, n)
    assert out.frame == "unsettled" and out.bands == slopes and out.notes[-1].startswith("no numerical frame")


def test_a_settled_frame_below_the_slopes_floor_corrects_rank_and_kernel(monkeypatch):
    """A frame the same at both tolerances with one more finite order than the slopes' rank (a
    singular value below their floor): its rank and unexplained kernel replace the slopes'."""
    arch = Architecture.uniform(1, 2, 1, 3, "exp", norm="post", eps="1/10")
    n = numerical_path_spectrum(arch, digits=60)
    rank, unexplained = n.rank, n.unexplained
    orders = sorted(o for o, m in n.bands for _ in range(m)) + [1]
    monkeypatch.setattr(frame_proof, "numerical_frame", lambda J, tol, max_operations=None: (orders, 0))
    n.frame, n.notes = "", []
    out = frame_check(arch, n)
    assert out.frame == "corrected" and (out.rank, out.unexplained) == (rank + 1, 0)
    assert f"its rank {rank + 1} and unexplained kernel 0 replace the slopes' {rank} and {unexplained}" \
        in out.notes[-1]


def test_the_frame_escalates_only_within_its_time(monkeypatch):
    from symattn.analyses import numerical_spectrum

    arch = Architecture.uniform(1, 2, 1, 3, "exp", norm="post", eps="1/10")
    n = numerical_path_spectrum(arch, digits=60)
    calls = []

    def fickle(J, tolerance, max_operations=None):
        calls.append(tolerance)
        return ([0] * n.rank, n.unexplained) if len(calls) % 2 else ([0] * (n.rank - 1) + [7], n.unexplained)

    monkeypatch.setattr(frame_proof, "numerical_frame", fickle)
    monkeypatch.setattr(numerical_spectrum, "FRAME_SECONDS", 0.0)
    n.frame, n.notes = "", []
    out = frame_check(arch, n)
    assert out.frame == "unsettled" and calls == [24, 52] and "would pass its 0 s" in out.notes[-1]
