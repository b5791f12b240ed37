"""The constants route (issue 24): Q adjoined a block stack's constants (core/algebras/constants.py),
the proved frame (analyses/frame_proof.py) and the certified spectrum by it (analyses/constant_spectrum.py).

The Taylor data in the constant field are checked against mpmath's evaluation of the functions'
sympy derivatives (a second code path), its Jacobians against the mpmath series, its spectra against
the numerical tier; each safeguard of the frame proof is broken once (a hidden zero, an irrational
relation, a relation that does not raise the exact valuation, a leading minor that balls cannot
certify)."""

from __future__ import annotations

import math
from fractions import Fraction

import flint
import mpmath
import numpy as np
import pytest

from symattn.analyses.frame_proof import prove_frame
from symattn.core.algebras.constants import ConstantField, Element, NotInvertible, constant_series
from symattn.core.algebras.functions import Elementwise
from symattn.core.errors import CheckFailed, Undecided
from symattn.model.architecture import Architecture


def _array(*values):
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


def _root(F: ConstantField, c) -> Element:
    """``c^(-1/2)`` as an element of ``F``."""
    return F.jets(Elementwise("rsqrt"), _array(flint.fmpq(c)), 1)[0][0]


@pytest.mark.parametrize("name", ["rsqrt", "tanh", "sigmoid", "silu", "gelu", "gelu_tanh"])
@pytest.mark.parametrize("where", ["rational", "element"])
def test_jets_equal_mpmath_derivatives(name, where):
    """``f^(k)(c)/k!`` in the field, evaluated in balls, against mpmath's value of the sympy derivative."""
    F = ConstantField(16)
    c = flint.fmpq(7, 5) if where == "rational" else _root(F, 3) * 2 + flint.fmpq(1, 3)
    jets = F.jets(Elementwise(name), _array(c), 6)
    ctx = mpmath.mp.clone()
    ctx.dps = 50
    value = ctx.mpf(F.balls(_array(c), 60)[0].mid().str(60, radius=False))
    for k in range(6):
        got = F.balls(jets[k], 60)[0]
        want = Elementwise(name).numeric(np.array([value], dtype=object), k, "mpmath", ctx)[0] / math.factorial(k)
        assert abs(ctx.mpf(got.mid().str(55, radius=False)) - want) < ctx.mpf(10) ** -40, (name, k)
        assert got.rad() < 1e-40


def test_square_roots_keep_their_relations_and_invert():
    F = ConstantField(8)
    w = _root(F, 3)
    assert w * w == flint.fmpq(1, 3)  # reduced by w^2 = 1/3: a rational again
    c2 = w + 1
    w2 = _root(F, 1)  # a rational square: a rational root, no generator
    assert w2 == 1 and len(F.constants) == 1
    v = F.jets(Elementwise("rsqrt"), _array(c2), 1)[0][0]  # (1 + 3^(-1/2))^(-1/2): a relation in the tower
    assert len(F._relations) == 2
    assert v * v * c2 == 1
    assert F.inverse_of(c2) * c2 == 1 and F.inverse_of(v) * v == 1
    T = F.jets(Elementwise("tanh"), _array(flint.fmpq(1, 2)), 1)[0][0]  # free: no inverse in the field
    with pytest.raises(NotInvertible):
        F.inverse_of(T)
    with pytest.raises(NotInvertible):
        F.inverse_of(flint.fmpq(0))


def test_export_restore_is_exact():
    F = ConstantField(8)
    w = _root(F, 5)
    T = F.jets(Elementwise("gelu"), _array(w), 3)
    x = _array(w * 3 + 1, T[2][0], flint.fmpq(-2, 7))
    G, y = ConstantField.restore(F.export(x))
    assert [str(v) for v in y] == [str(v) for v in x]
    assert [str(b) for b in G.balls(y, 30)] == [str(b) for b in F.balls(x, 30)]
    assert y[0] * y[0] == (w * 3 + 1) * (w * 3 + 1)  # the relation travelled too: w^2 = 1/5 in G
    assert str(G._relations[0][1]) == str(F._relations[0][1])
    huge = _array(flint.fmpq(-3**9000, 7**8000) * w)  # beyond Python's 4300-digit str <-> int limit
    assert ConstantField.restore(F.export(huge))[1][0] == huge[0]


@pytest.mark.parametrize("depth,kind", [(2, dict(skip="value", norm="post")),
                                        (1, dict(mlp=2, activation="gelu", norm="post", skip="value"))])
def test_jacobian_equals_the_mpmath_series(depth, kind):
    """The exact Jacobian in the constant field, evaluated in balls, equals the mpmath series' Jacobian
    (normalizers and functions expanded numerically around their constants: a second code path)."""
    from symattn.analyses.collapse import bank_jacobian
    from symattn.analyses.contact import setup
    from symattn.core.algebras import mp_series
    from symattn.model.parameters import random_bank

    arch = Architecture.uniform(depth, 2, 1, 3, "exp", **kind)
    s = setup(arch, 0, "identity", "exact", None, lambda msg: None)
    X = random_bank(arch, 1, 4)
    A = constant_series(5, 32)
    J = bank_jacobian(arch, X, s.U, s.W, s.V, A, s.columns, verify=1)
    M = bank_jacobian(arch, X, s.U, s.W, s.V, mp_series(5, 60), s.columns, verify=0)
    balls = A.field.balls(J, 60)
    ctx = mpmath.mp.clone()
    ctx.dps = 60
    worst = max(abs(ctx.mpf(b.mid().str(60, radius=False)) - m) for b, m in zip(balls.reshape(-1), M.reshape(-1)))
    assert worst < ctx.mpf(10) ** -40


def _ball_of(F: ConstantField):
    return lambda v, digits=60: F.balls(v, digits)


def test_frame_refuses_a_hidden_zero():
    """An element that is not zero in the field but whose value is (tanh(0) named as a free generator):
    its balls contain 0 and the frame says so instead of taking it for a leading coefficient."""
    F = ConstantField(4)
    T = F._name("tanh", flint.fmpq(0))
    J = np.empty((2, 2, 1), dtype=object)
    J[0, 0, 0], J[0, 1, 0], J[1, 0, 0], J[1, 1, 0] = T, T * 2, flint.fmpq(1), flint.fmpq(0)
    proof = prove_frame(J, _ball_of(F), 30)
    assert proof.status == "undecided" and "balls contain 0" in proof.reason


def test_frame_refuses_an_irrational_relation():
    """Columns whose leading coefficients are related by 2^(-1/2): no rational column operation."""
    F = ConstantField(4)
    w = _root(F, 2)
    J = np.empty((2, 2, 2), dtype=object)
    J[0] = [[1, w], [3, w * 3]]
    J[1] = [[0, 1], [0, 0]]
    proof = prove_frame(J, _ball_of(F), 30)
    assert proof.status == "undecided" and "not a small rational" in proof.reason


def test_frame_checks_each_operation_exactly():
    """A dependency seen at the balls' precision that is not exact (a difference of 10^-70): the
    rational operation does not raise the exact valuation, and the frame says so."""
    eps = flint.fmpq(1, 10**70)
    J = np.empty((2, 2, 2), dtype=object)
    J[0] = [[flint.fmpq(1), 1 + eps], [flint.fmpq(2), 2 + 2 * eps]]
    J[1] = [[flint.fmpq(0), flint.fmpq(1)], [flint.fmpq(0), flint.fmpq(0)]]
    proof = prove_frame(J, _ball_of(ConstantField(1)), 30)
    assert proof.status == "undecided" and "does not raise" in proof.reason


def test_frame_needs_a_certified_leading_minor():
    """Balls too wide to certify the leading minor (a radius of 10^-6 on entries whose determinant is
    10^-8): undecided, not a rank."""
    J = np.empty((1, 2, 2), dtype=object)
    J[0] = [[flint.fmpq(1), flint.fmpq(1)], [flint.fmpq(1), 1 + flint.fmpq(1, 10**8)]]

    def wide(v, digits=30):
        return np.array([flint.arb(flint.fmpq(x) if not isinstance(x, flint.fmpq) else x, 1e-6) for x in v],
                        dtype=object)

    proof = prove_frame(J, wide, 30)
    assert proof.status == "undecided" and "certified minor" in proof.reason
    assert prove_frame(J, _ball_of(ConstantField(1)), 30).status == "proved"


@pytest.mark.parametrize("depth,kind", [(1, dict(norm="post")), (2, dict(norm="post")),
                                        (1, dict(skip="value", norm="pre")), (1, dict(mlp=2, activation="tanh"))])
def test_certified_spectrum_equals_the_numerical_tier(depth, kind):
    from symattn.analyses.numerical_spectrum import numerical_path_spectrum
    from symattn.analyses.spectrum import native_spectrum

    arch = Architecture.uniform(depth, 2, 1, 3, "exp", **kind)
    s = native_spectrum(arch, method="constants")
    n = numerical_path_spectrum(arch, digits=120)
    bands = sorted({(b.order, sum(c.multiplicity for c in s.bands if c.order == b.order)) for b in s.bands})
    assert s.certificate == "certified" and s.method == "constants" and s.theorem is None
    assert (bands, s.rank, s.kernel, s.undecided) == (n.bands, n.rank, n.declared, n.unexplained)


def test_the_default_route_proves_a_rational_gap(monkeypatch):
    """A quadratic MLP of three hidden units on width 2, its polynomial redundancy declared: certified
    modularly with no gap. Without that declaration the modular rank falls short of P minus the declared
    symmetries (the quadratic features span only three dimensions), and the default route proves the
    finite orders with the gap, exactly over Q."""
    import symattn.model.symmetry_kinds as kinds
    from symattn.analyses.spectrum import native_spectrum

    arch = Architecture.uniform(1, 2, 1, 3, "exp", mlp=3, activation="poly:0,1,1/2")
    s = native_spectrum(arch, points=1)
    assert (s.certificate, s.rank, s.undecided, s.kernel_kinds["MLP polynomial redundancy"]) == ("certified", 15, 0, 2)
    monkeypatch.setattr(kinds, "_mlp_redundancy", lambda *args: [])
    s = native_spectrum(arch)
    assert (s.certificate, s.method, s.rank, s.undecided) == ("certified", "constants", 15, 2)
    assert any("over Q (every constant of this bank is rational)" in n for n in s.notes)
    # the gap is a kernel: the rank at the path point t = 1 certifies no more orders than the frame
    assert s.past == 0 and any(n.startswith("path rank: rank J(t) >= 15 ") for n in s.notes)


def test_a_wrong_symmetry_fails_the_exact_kernel_check(monkeypatch):
    """The last declared direction moved by 1 in one entry along the path: the exact kernel check fails."""
    from symattn.analyses import contact
    from symattn.analyses.spectrum import native_spectrum
    from symattn.model.symmetries import GaugeKernel

    class Broken(GaugeKernel):
        def along_path(self):
            xi = super().along_path().copy()
            part = 0 if any(v != 0 for v in xi[0][-1]) else 1
            xi[part][-1][np.flatnonzero(xi[part][-1] != 0)[0]] += 1
            return xi

    monkeypatch.setattr(contact, "GaugeKernel", Broken)
    with pytest.raises(CheckFailed):
        native_spectrum(Architecture.uniform(1, 2, 1, 3, "exp", mlp=2, activation="tanh"), method="constants")


def test_the_budget_is_enforced():
    from symattn.analyses.constant_spectrum import constant_route
    from symattn.analyses.contact import setup

    arch = Architecture.uniform(1, 2, 1, 3, "exp", norm="post")
    s = setup(arch, 0, "identity", "exact", None, lambda msg: None)
    with pytest.raises(Undecided, match="time limit"):
        constant_route(s, 4, None, lambda msg: None, seconds=0)
    # a budget shorter than one input's rows (about 3 s CPU each here): the children are stopped at it

    from symattn.model.parameters import random_bank

    arch = Architecture.uniform(3, 2, 1, 3, "exp", norm="post")
    s = setup(arch, 0, "identity", "exact", None, lambda msg: None)
    import resource

    def cpu() -> float:  # this process and its finished children: a busy machine does not add to it
        return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                      resource.getrusage(resource.RUSAGE_CHILDREN)))

    start = cpu()
    with pytest.raises(Undecided, match="time limit"):
        constant_route(s, random_bank(arch, 4, 0), 21, lambda msg: None, seconds=1)
    # CPU time, not the wall clock: the limit (one second of each of two workers), a poll and the
    # forks, never the inputs' whole run (about 3 s of CPU each)
    assert cpu() - start < 5


def test_cli_constants_method(capsys):
    import json

    from symattn.cli import main

    status = main(["spectrum", "--depth", "1", "--width", "2", "--tokens", "3", "--mlp", "2", "--activation",
                   "gelu", "--method", "constants", "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    out = json.loads(captured.out)
    assert out["method"] == "constants" and out["certificate"] == "certified" and out["theorem"] is None
    assert out["provenance"]["inputs"]["method"] == "constants"


def test_capacity_grows_when_the_field_is_full():
    F = ConstantField(1)
    _root(F, 2)
    with pytest.raises(Undecided, match="full"):
        _root(F, 3)
    assert Fraction(str(F.balls(_array(_root(ConstantField(2), 4)), 20)[0].mid().str(5, radius=False))) == \
        Fraction(1, 2)


def test_the_new_layer_norm_directions_are_exact_kernel_vectors():
    """Two post-norm blocks with skip at d = 2: the LayerNorm interface I + 1 h^T and the LayerNorm normal
    shift are declared and checked as exact kernel vectors in Q[constants]; nothing is left unexplained."""
    from symattn.analyses.spectrum import native_spectrum

    s = native_spectrum(Architecture.uniform(2, 2, 1, 3, "exp", skip="value", norm="post"), method="constants",
                        bank=4)
    assert s.kernel_kinds.get("LayerNorm normal shift") == 1 and s.kernel_kinds.get("LayerNorm interface") == 2
    assert s.certificate == "certified"


# -- the hybrid frame: exact mod t^1, balls above (issue 24) ----------------------------------------
def test_the_mean_interface_before_a_layer_with_an_mlp_is_an_exact_kernel_vector():
    """A post-norm block with skip before a post-norm layer with an MLP (d = 2): the interface
    G = I + 1 h^T on the first LayerNorm's output moves every token by a multiple of 1, which the
    second layer's attention LayerNorm removes, MLP or not; both directions are declared and are
    exact kernel vectors in Q[constants] mod t^4."""
    from symattn.analyses.collapse import kernel_product
    from symattn.analyses.contact import setup
    from symattn.core.algebras.constants import constant_series
    from symattn.model.parameters import random_bank

    arch = Architecture.uniform(2, 2, 1, 3, "exp", skip="value", norm="post").replace_layer(
        2, skip="value", norm="post", mlp=2, activation="poly:0,1,1/2")
    s = setup(arch, 0, "identity", "constants", None, lambda msg: None)
    mine = [k for k, sym in enumerate(s.kernel.symmetries) if sym.kind == "LayerNorm interface" and sym.layer == 1]
    assert len(mine) == 2
    K = kernel_product(arch, random_bank(arch, 1, 0), s.U, s.W, s.V, s.kernel.along_path()[:, mine],
                       constant_series(4))
    assert all(v == 0 for v in np.asarray(K).reshape(-1))


def test_the_carried_layer_norm_shift_closes_the_pre_norm_kernel():
    """Two pre-norm blocks with skip (d = 2): layer 1's LayerNorm shift with V_1 delta = 1 moves the
    residual stream by 1, which layer 2's LayerNorm removes and its shift with V_2 epsilon = -1 takes
    back; declared, checked as an exact kernel vector in Q[constants], and the spectrum has no gap."""
    from symattn.analyses.spectrum import native_spectrum

    s = native_spectrum(Architecture.uniform(2, 2, 1, 3, "exp", skip="value", norm="pre"), method="constants")
    assert s.kernel_kinds.get("LayerNorm shift carried") == 1
    assert (s.certificate, s.undecided, s.rank + s.kernel) == ("certified", 0, s.parameters)


def test_the_normal_shifts_with_query_compensation_are_exact_kernel_vectors():
    """Two post-norm blocks with skip at d = 3, r = 2: besides the shift in the null space of Q^T, every
    shift of the first LayerNorm with the queries taking theirs back along its normal is declared (3
    in all) and is an exact kernel vector in Q[constants] mod t^4."""
    from symattn.analyses.collapse import kernel_product
    from symattn.analyses.contact import setup
    from symattn.core.algebras.constants import constant_series
    from symattn.model.parameters import random_bank

    arch = Architecture.uniform(2, 3, 2, 3, "exp", skip="value", norm="post")
    s = setup(arch, 0, "identity", "constants", None, lambda msg: None)
    mine = [k for k, sym in enumerate(s.kernel.symmetries) if sym.kind == "LayerNorm normal shift"]
    assert len(mine) == 3
    # those three alone (a tangent that moves only the LayerNorm's shift, broadcast in a sum: this
    # raised a shape error before the tangents grew with their values) and all declared ones at once
    X, xi = random_bank(arch, 1, 0), s.kernel.along_path()
    alone = kernel_product(arch, X, s.U, s.W, s.V, xi[:, mine], constant_series(4))
    K = kernel_product(arch, X, s.U, s.W, s.V, xi, constant_series(4))
    assert all(v == 0 for v in np.asarray(K).reshape(-1)) and all(v == 0 for v in np.asarray(alone).reshape(-1))


def test_ball_series_jacobian_contains_the_exact_one():
    """The Jacobian in ball series (python-flint ``arb``, 60 digits) contains the exact one in
    Q[constants] at every coefficient (LayerNorm's square roots; GELU's Phi and phi)."""
    from symattn.analyses.collapse import bank_jacobian
    from symattn.analyses.contact import setup
    from symattn.core.algebras.ballseries import ball_series
    from symattn.model.parameters import random_bank

    for kind in (dict(skip="value", norm="pre"), dict(skip="value", norm="post", mlp=2, bias=True,
                                                        combine="concat", activation="gelu")):
        depth = 2 if kind.get("norm") == "pre" else 1
        arch = Architecture.uniform(depth, 2, 1, 3, "exp", **kind)
        s = setup(arch, 0, "identity", "modular", None, lambda msg: None)
        x = random_bank(arch, 1, 0)
        A, C = ball_series(3, 60), constant_series(3)
        with A.field.working():
            B = bank_jacobian(arch, x, s.U, s.W, s.V, A, s.columns, verify=0)
        E = bank_jacobian(arch, x, s.U, s.W, s.V, C, s.columns, verify=0)
        exact = C.field.balls(E.reshape(-1), 60)
        assert all(b.overlaps(e) for b, e in zip(B.reshape(-1), exact))
        assert max(float(b.rad()) for b in B.reshape(-1)) < 1e-50
        # exact zeros of the exact series are exact balls 0 where they are structural (Q, K at t^0)
        assert any(b.is_exact() and b == 0 for b in B[0].reshape(-1))


def test_known_zeros_are_exact_only():
    from symattn.analyses.frame_proof import Known

    third = flint.arb(1) / 3
    assert Known(None, third - third) != 0               # a ball around 0 is a nonzero candidate
    assert not Known(None, flint.arb(0)) != 0            # the exact ball 0 is a zero
    assert not (Known(flint.fmpq(1, 3), third) + Known(flint.fmpq(-1, 3), -third)) != 0
    assert (Known(flint.fmpq(1, 3), third) + Known(None, -third)) != 0   # ball-only: never exact


def test_the_hybrid_frame_proves_the_pre_norm_spectrum():
    """Pre-norm block with skip, D = 2: exact mod t^1, balls to t^2: t^0 x 7, t^1 x 4 and no gap (the
    direction it left unexplained before is the LayerNorm shift carried into layer 2, declared)."""
    from symattn.analyses.constant_spectrum import constant_note, constant_route
    from symattn.analyses.contact import setup

    arch = Architecture.uniform(2, 2, 1, 3, "exp", skip="value", norm="pre")
    s = setup(arch, 0, "identity", "modular", None, lambda msg: None)
    r = constant_route(s, "auto", None, lambda msg: None, hybrid=True)
    assert r["proved"] and r["exact_order"] == 1 and r["N"] == 2
    assert r["nested"][-1] == [0] * 7 + [1] * 4 and r["proof"].gap == 0
    note = constant_note(r["proof"], r["fields"], r["N"], r["exact_order"])
    assert "mod t^1" in note and "balls of 300 digits" in note and "further orders" not in note


def test_the_partial_frame_proves_the_orders_below_the_jump():
    """Attention + LayerNorm (post-norm), D = 2, where the hybrid frame is undecided (its order-1
    columns need cancellations above t^0): the partial frame, exact mod t^2, proves t^0 x 8, t^1 x 3
    and the two orders past the guide's jump (t^5, from the whole exact route) as a gap >= t^2."""
    from symattn.analyses.constant_spectrum import constant_route
    from symattn.analyses.contact import setup

    arch = Architecture.uniform(2, 2, 1, 3, "exp", norm="post")
    s = setup(arch, 0, "identity", "modular", None, lambda msg: None)
    r = constant_route(s, "auto", None, lambda msg: None, hybrid=True)
    assert r["proved"] and r["N"] == r["exact_order"] == 2 and r["proof"].gap == 2
    assert r["nested"][-1] == [0] * 8 + [1] * 3
    assert r["truncated"].startswith("truncated: ") and "only >= t^2" in r["truncated"]
    whole = constant_route(s, "auto", None, lambda msg: None)  # the whole truncation, exact
    assert whole["truncated"] is None and whole["proof"].gap == 0
    assert [o for o in whole["nested"][-1] if o < 2] == r["nested"][-1]
    assert f"t^{max(whole['nested'][-1])} x 2" in r["truncated"]  # the guide's orders past the cut, named


def test_a_spectrum_past_its_memory_says_it_is_truncated(monkeypatch):
    """Where the whole truncation and the hybrid frame fail, the spectrum is the partial frame's and
    its notes say so (the orders past the cut are not claimed)."""
    from symattn.analyses import constant_spectrum as cs
    from symattn.analyses.spectrum import native_spectrum

    real = cs._exact_rows

    def capped(s, X, N, *args, **kwargs):
        if N > 2:
            raise Undecided(f"the exact Jacobian in Q[constants] to t^{N} did not fit the memory limit (test)")
        return real(s, X, N, *args, **kwargs)

    monkeypatch.setattr(cs, "_exact_rows", capped)
    s = native_spectrum(Architecture.uniform(2, 2, 1, 3, "exp", norm="post"), method="constants")
    assert s.certificate == "certified" and s.order == 2 and s.rank == 11 and s.undecided == 2
    assert sorted((b.order, b.multiplicity) for b in s.bands if b.order == 1) == [(1, 3)]
    truncated = [n for n in s.notes if n.startswith("truncated: ")]
    assert len(truncated) == 1 and "to t^7 did not fit the memory limit" in truncated[0]
    # the two orders past the cut are finite (they are t^5 x 2): the rank of J at t = 1 is 13
    assert s.past == 2 and "2 finite >= t^2; kernel 11, rank 13 of 24" in repr(s)
    assert any(n.startswith("path rank: rank J(t) >= 13 ") and "so 2 more orders are finite" in n for n in s.notes)


def test_the_hybrid_frame_checks_its_two_code_paths(monkeypatch):
    """A wrong ball at t^0 (the ball series' Jacobian perturbed in one entry) fails the agreement
    check; a ball kernel product that excludes 0 fails the kernel check."""
    from symattn.analyses import constant_spectrum as cs
    from symattn.analyses.contact import setup

    arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value", norm="pre")
    s = setup(arch, 0, "identity", "modular", None, lambda msg: None)
    real = cs.bank_jacobian

    def shifted(*args, **kwargs):
        J = real(*args, **kwargs)
        if args[5].field.name.startswith("arb"):  # the ball series only, not the exact rows
            J[0, 0, -1] = J[0, 0, -1] + flint.arb(10) ** -40
        return J

    monkeypatch.setattr(cs, "bank_jacobian", shifted)
    with pytest.raises(CheckFailed, match="disagree"):
        cs.constant_route(s, 3, None, lambda msg: None, hybrid=True)
    monkeypatch.setattr(cs, "bank_jacobian", real)
    real_product = cs.kernel_product
    monkeypatch.setattr(cs, "kernel_product", lambda *a, **k: np.array([flint.arb(1)], dtype=object)
                        if a[6].field.name.startswith("arb") else real_product(*a, **k))
    with pytest.raises(CheckFailed, match="kernel vector of J in balls"):
        cs.constant_route(s, 3, None, lambda msg: None, hybrid=True)


def test_the_ball_series_exact_zero_is_the_exact_ball_only():
    from symattn.core.algebras.ballseries import BallField

    F = BallField(30)
    third = flint.arb(1) / 3
    z = F.is_zero(np.array([third - third, flint.arb(0), third], dtype=object))
    assert list(z) == [False, True, False]
