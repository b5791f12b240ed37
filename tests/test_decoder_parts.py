"""The decoder parts (issue 40 item 2): rotary positions, SwiGLU and grouped-query attention, each against
its naive reference formula, and the facts their declared symmetries rest on."""

from __future__ import annotations

import math

import numpy as np
import pytest

from symattn.model.parts import DECODER_PARTS, GroupedQueryAttention, Rotary, SwiGLU

torch = pytest.importorskip("torch")


def test_registry() -> None:
    assert DECODER_PARTS == {"rotary": Rotary, "swiglu": SwiGLU, "gqa": GroupedQueryAttention}


def test_rotary_vectorised_equals_naive_and_scores_depend_on_the_offset_only() -> None:
    r = Rotary(10000.0, 8)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 8))
    assert np.allclose(r.apply(torch.as_tensor(x), torch).numpy(), r.reference(x), atol=1e-14)
    q, k = rng.standard_normal(8), rng.standard_normal(8)
    Q, K = r.reference(np.tile(q, (6, 1))), r.reference(np.tile(k, (6, 1)))
    # q_a . k_b depends on b - a only: the same offset at two places gives the same score
    assert math.isclose(Q[1] @ K[3], Q[2] @ K[4], rel_tol=1e-12)
    assert not math.isclose(Q[1] @ K[3], Q[1] @ K[4], rel_tol=1e-6)
    assert Rotary(10000.0, 8).frequencies()[0] == 1.0 and r.distinct()
    with pytest.raises(ValueError, match="even head width"):
        Rotary(10000.0, 3)


def test_rotary_commutant_keeps_every_score() -> None:
    """M in the commutant on the query, M^-T on the key: every rotated score unchanged (to float64); a generic
    A (not commuting) changes them."""
    r = Rotary(100.0, 4)
    rng = np.random.default_rng(1)
    M = np.eye(4) + 0.3 * sum(c * b for c, b in zip(rng.standard_normal(4), r.commutant()))
    X = rng.standard_normal((5, 4))
    Y = rng.standard_normal((5, 4))

    def scores(A):
        return r.reference(X @ A.T) @ r.reference(Y @ np.linalg.inv(A)).T

    assert np.allclose(scores(M), scores(np.eye(4)), atol=1e-12)
    A = np.eye(4) + 0.3 * rng.standard_normal((4, 4))
    assert not np.allclose(scores(A), scores(np.eye(4)), atol=1e-6)


def test_swiglu_forward_equals_naive_and_its_symmetries() -> None:
    rng = np.random.default_rng(2)
    g, u, d = rng.standard_normal((6, 4)), rng.standard_normal((6, 4)), rng.standard_normal((4, 6))
    x = rng.standard_normal((3, 4))
    ref = SwiGLU.reference(x, g, u, d)
    got = SwiGLU.forward(*(torch.as_tensor(a) for a in (x, g, u, d)), torch).numpy()
    assert np.allclose(got, ref, atol=1e-13)
    assert np.allclose(SwiGLU.reference(x, *SwiGLU.permute(g, u, d, rng.permutation(6))), ref, atol=1e-13)
    lam = np.exp(0.5 * rng.standard_normal(6))
    assert np.allclose(SwiGLU.reference(x, g, lam[:, None] * u, d / lam[None, :]), ref, atol=1e-12)
    # the gate has no such scaling (silu is not homogeneous): the check can fail
    assert not np.allclose(SwiGLU.reference(x, lam[:, None] * g, u, d / lam[None, :]), ref, atol=1e-6)
    du, dd = SwiGLU.scaling(u, d, np.ones(6))
    assert np.array_equal(du, u) and np.array_equal(dd, -d)


def test_gqa_groups_and_reference() -> None:
    part = GroupedQueryAttention(6, 2)
    assert [part.group(h) for h in range(6)] == [0, 0, 0, 1, 1, 1]
    with pytest.raises(ValueError, match="do not divide"):
        GroupedQueryAttention(6, 4)
    rng = np.random.default_rng(3)
    E, e = 12, 2
    p = {"q": rng.standard_normal((6 * e, E)), "k": rng.standard_normal((2 * e, E)),
         "v": rng.standard_normal((2 * e, E)), "o": rng.standard_normal((E, 6 * e))}
    x = rng.standard_normal((1, 4, E))
    total = part.reference(x, p, e, Rotary(10.0, e), True)
    heads = sum(part.reference(x, p, e, Rotary(10.0, e), True, only=h) for h in range(6))
    assert np.allclose(total, heads, atol=1e-12)
    # the first token attends to itself alone under the causal mask
    one = part.reference(x[:, :1], p, e, None, True)
    v = x[0, 0] @ p["v"].T
    assert np.allclose(one[0, 0], sum(v[part.group(h) * e:(part.group(h) + 1) * e] @ p["o"][:, h * e:(h + 1) * e].T
                                      for h in range(6)))
    assert part.gauge_counts(e, rotary=False) == {"query/key": 8, "value/output": 8}
