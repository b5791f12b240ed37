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


def test_a_kernel_the_symmetries_miss_is_not_certified_away(monkeypatch):
    """A quadratic MLP of three hidden units with its polynomial redundancy left undeclared: its features
    span three dimensions, so two visible directions are a kernel; the certified rank at t = 1 stays
    below the visible columns."""
    import symattn.model.symmetry_kinds as kinds

    monkeypatch.setattr(kinds, "_mlp_redundancy", lambda *args: [])
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
    (dict(normalizer="1 + s"), "not proved positive"),
    (dict(normalizer="1/(1 - s)"), "not proved positive and real-analytic"),
])
def test_networks_not_analytic_on_the_path_are_refused(kind, why):
    # derived from the expression, never by name: 1 + s^2 + s^4 is outside the catalogue and covered
    assert analytic_on_path(Architecture.uniform(1, 2, 1, 3, "1 + s^2 + s^4")) is None
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


def _capped(monkeypatch):
    """The constants route with every exact row beyond the memory limit (the full layer's situation)."""
    from symattn.analyses import constant_spectrum as cs

    def capped(s, X, N, *args, **kwargs):
        raise Undecided(f"the exact Jacobian in Q[constants] to t^{N} did not fit the memory limit (test)")

    monkeypatch.setattr(cs, "_exact_rows", capped)


def test_the_rank_route_equals_the_exact_frame(monkeypatch):
    """Post-norm block with skip, D = 2 (orders 0 and 1): with no exact row at all the orders come
    from ranks alone, and they are those of the whole exact route, block by block."""
    from symattn.analyses import constant_spectrum as cs
    from symattn.analyses.spectrum import native_spectrum

    arch = Architecture.uniform(2, 2, 1, 3, "exp", skip="value", norm="post")
    exact = native_spectrum(arch, method="constants")  # the exact frames (no rank route first)
    assert not any(n.startswith(cs.RANKED_PREFIX) for n in exact.notes)
    _capped(monkeypatch)
    ranked = native_spectrum(arch, method="constants")
    assert ranked.certificate == exact.certificate == "certified" and ranked.undecided == 0
    assert [(b.layer, b.order, b.multiplicity) for b in ranked.bands] == \
        [(b.layer, b.order, b.multiplicity) for b in exact.bands]
    assert any(n.startswith("certificate certified: the Smith orders from ranks alone") for n in ranked.notes)


def test_the_rank_route_leaves_higher_orders_undecided(monkeypatch):
    """Attention + LayerNorm, D = 2, has orders t^5: ranks alone do not decide them (no claim)."""
    from symattn.analyses.spectrum import native_spectrum

    _capped(monkeypatch)
    with pytest.raises(Undecided, match="do not decide the orders either"):
        native_spectrum(Architecture.uniform(2, 2, 1, 3, "exp", norm="post"), method="constants")


def test_truncation_orders_refuse_a_rank_below_the_certified_one():
    import flint

    from symattn.analyses.path_rank import truncation_orders

    J = np.array([[[flint.arb(1), flint.arb(0)], [flint.arb(0), flint.arb(1)]]])   # J_0 = I
    assert truncation_orders(J, 2, 30) == ([0, 0], [2])
    with pytest.raises(CheckFailed, match="a bound is wrong"):
        truncation_orders(J, 1, 30)


def test_the_rank_route_checks_its_series_against_the_collapse_point(monkeypatch):
    """A ball series whose t^0 coefficient is off (one entry moved) fails the comparison with the
    Jacobian at t = 0 computed on its own."""
    import flint

    from symattn.analyses import collapse
    from symattn.analyses.path_rank import rank_route

    real = collapse.bank_jacobian

    def moved(*args, **kwargs):
        J = real(*args, **kwargs)
        J[0, 0, 0] = J[0, 0, 0] + flint.arb(1) / 1000
        return J

    monkeypatch.setattr(collapse, "bank_jacobian", moved)
    arch = Architecture.uniform(1, 2, 1, 3, "exp", norm="post")
    with pytest.raises(CheckFailed, match="collapse point disagree"):
        rank_route(_setup(arch), random_bank(arch, 3, 0), lambda msg: None)
