"""The score lemma (:mod:`symattn.analyses.score_orders`): a partial frame's gap closed by the last
layer's scores, compared with the modular Smith form where both run."""

from __future__ import annotations

import pytest

from symattn.analyses.score_orders import covered
from symattn.analyses.spectrum import native_spectrum
from symattn.model.architecture import Architecture

QUADRATIC = dict(mlp=2, activation="poly:0,1,1/2")


def _bands(s):
    return [(b.layer, b.order, b.multiplicity) for b in s.bands]


def test_score_orders_close_a_partial_frame_as_the_modular_smith_form_does():
    """Two layers of attention + a quadratic MLP: the frame proved mod t^3 leaves a gap of 4 (the
    second layer's query/key columns and a score shift); the lemma closes it at t^5 x 3, t^6, the
    orders the modular Smith form computes from the whole series."""
    arch = Architecture.uniform(2, 2, 1, 3, "exp", **QUADRATIC)
    scored = native_spectrum(arch, method="constants", order=3)
    modular = native_spectrum(arch)
    assert scored.certificate == modular.certificate == "certified"
    assert _bands(scored) == _bands(modular) and (scored.undecided, scored.past) == (0, 0)
    note = next(n for n in scored.notes if n.startswith("score orders:"))
    assert "query/key t^5" in note and "score shift t^6" in note and scored.order == 7


@pytest.mark.parametrize("kind, why", [
    (dict(skip="value", **QUADRATIC), "not a plain softmax attention"),
    (dict(norm="post", **QUADRATIC), "not a plain softmax attention"),
    (dict(), "followed by an MLP"),
])
def test_the_lemma_says_which_stacks_it_covers(kind, why):
    assert covered(Architecture.uniform(2, 2, 1, 3, "exp", **kind)) is not None
    assert why in covered(Architecture.uniform(2, 2, 1, 3, "exp", **kind))
    assert "one layer" in covered(Architecture.uniform(1, 2, 1, 3, "exp", **QUADRATIC))
    assert covered(Architecture.uniform(3, 2, 1, 3, "exp", mlp=2, activation="tanh")) is None


def test_an_overstated_lemma_order_fails_its_ball_check(monkeypatch):
    """The columns' ball series must contain 0 below the lemma's orders: a bound one too high (the
    token differences claimed to agree one order further) is a failed check, not a wrong order."""
    from symattn.analyses import score_orders
    from symattn.core.errors import CheckFailed

    real = score_orders._differences_bound
    monkeypatch.setattr(score_orders, "_differences_bound", lambda *a, **k: real(*a, **k) + 1)
    with pytest.raises(CheckFailed, match="score lemma"):
        native_spectrum(Architecture.uniform(2, 2, 1, 3, "exp", **QUADRATIC), method="constants", order=3)


def test_tokens_that_differ_at_t0_give_no_bound():
    """A residual in the first layer carries the input's distinct tokens into the last layer: the lemma
    has no bound (a = 0), says so, and the frame's gap is left to the path rank."""
    arch = Architecture.uniform(2, 2, 1, 3, "exp", **QUADRATIC).replace_layer(1, skip="value", **QUADRATIC)
    said: list[str] = []
    s = native_spectrum(arch, method="constants", order=2, progress=said.append)
    assert "no score orders: the last layer's tokens differ at t^0" in said
    assert s.certificate == "certified" and not any(n.startswith("score orders:") for n in s.notes)
