"""The certified lower bound on the path rank from one point (``symattn.analyses.path_rank``): it
certifies the finite orders past a frame's truncation, never more than the rank, and refuses
networks that are not analytic on the whole path."""

from __future__ import annotations

import numpy as np
import pytest

from symattn.analyses.contact import setup
from symattn.analyses.path_rank import analytic_on_path, path_rank
from symattn.core.errors import CheckFailed, Undecided
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank


def _setup(arch):
    return setup(arch, 0, "identity", "constants", None, lambda msg: None)


def test_the_rank_at_the_path_point_bounds_the_proved_rank():
    """Attention + LayerNorm, D = 2: the frame proves rank 13 (t^0 x 8, t^1 x 3, t^5 x 2); J(1) has
    rank 13 too, certified (never more than the visible columns)."""
    arch = Architecture.uniform(2, 2, 1, 3, "exp", norm="post")
    s = _setup(arch)
    r = path_rank(s, random_bank(arch, 6, 0))
    assert (r.rank, r.visible) == (13, 13) and r.rank <= r.numerical
    assert "so 2 more orders are finite (>= t^2" in r.note(11, 2)


def test_a_kernel_the_symmetries_miss_is_not_certified_away():
    """A quadratic MLP of three hidden units: its features span three dimensions, so two visible
    directions are a kernel; the certified rank at t = 1 stays below the visible columns."""
    arch = Architecture.uniform(1, 2, 1, 3, "exp", mlp=3, activation="poly:0,1,1/2")
    s = _setup(arch)
    r = path_rank(s, random_bank(arch, 8, 0))
    assert r.rank == r.numerical == s.visible - 2


def test_a_wrong_symmetry_fails_at_the_path_point():
    arch = Architecture.uniform(1, 2, 1, 3, "exp", norm="post")
    s = _setup(arch)
    xi = s.kernel.directions[-1]
    xi[np.flatnonzero(xi != 0)[0]] += 1
    with pytest.raises(CheckFailed, match="at the path point t = 1: the declared"):
        path_rank(s, random_bank(arch, 3, 0))


@pytest.mark.parametrize("kind, why", [
    (dict(norm="post", eps=0), "eps = 0"),
    (dict(normalizer="1 + s^2 + s^4"), "not from the catalogue"),
])
def test_networks_not_analytic_on_the_path_are_refused(kind, why):
    normalizer = kind.pop("normalizer", "exp")
    arch = Architecture.uniform(1, 2, 1, 3, normalizer, **kind)
    assert why in analytic_on_path(arch)
    with pytest.raises(Undecided, match="no path rank"):
        path_rank(_setup(arch), random_bank(arch, 3, 0))


def test_the_time_budget_stops_the_digits():
    """With no time left after the first level the rank is that level's (60 digits); given time, the
    full layer at D = 2 needs 240 digits for its certified rank 32: all its visible columns (its
    kernel is the declared symmetries, the LayerNorm interface before the second layer included)."""
    arch = Architecture.uniform(2, 2, 1, 3, "exp", skip="value", norm="post", mlp=2, bias=True, combine="concat",
                                activation="gelu")
    s = _setup(arch)
    X = random_bank(arch, 14, 0)
    quick = path_rank(s, X, seconds=0)
    assert quick.digits == 60 and quick.rank < 32
    full = path_rank(s, X)
    assert (full.rank, full.visible) == (32, 32) and full.digits >= 240
