"""The column proof at depth: the attention lemma on computed token differences (issue 41, item 2).

Independent checks of the new route: the token differences against the coefficient-array series
over Q (another code path), the lemma's orders against the exact valuations of the Jacobian's
columns (computed over Q, not bounded), and a proof that can fail (a claimed order beyond the
lemma's reach goes on to the exact route, which refutes it). Small depths only.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from symattn.analyses.collapse import bank_jacobian, path_parameters
from symattn.analyses.column_proof import (LEMMA_FROM_ORDER, attention_lemma_applies, collapse_valuations, lemma_orders,
                                           prove_column_orders, token_difference_valuations)
from symattn.core.algebras import exact_series
from symattn.core.algebras.polyseries import RationalPolySeries
from symattn.core.certify import LowerBound, settle
from symattn.core.errors import InternalError
from symattn.model.architecture import Architecture
from symattn.model.interpreter import evaluate
from symattn.model.network import native_network
from symattn.model.parameters import native_path_values, random_bank
from symattn.model.symmetries import visible_blocks


def _reference_differences(arch, bank, U, W, V, order):
    """The token differences' valuations by the coefficient-array series over Q (not the flint series)."""
    A = exact_series(order)
    vals = native_path_values(arch, A, U, W, V, squared=True)
    vals["X"] = A.const(bank)
    out = evaluate(native_network(arch), A, vals)
    states = [np.asarray(bank, dtype=object)[None]] + [out[f"X{i}"] for i in range(1, arch.depth + 1)]
    found = []
    for x in states:
        diff = x[..., 1:] - x[..., :1]
        found.append(next((m for m in range(min(order, diff.shape[0])) if any(v != 0 for v in diff[m].reshape(-1))),
                          order))
    return found


@pytest.mark.parametrize("values", ["identity", "random"])
def test_token_differences_agree_with_the_coefficient_array_series(values):
    arch = Architecture.uniform(3, 2, 1, 2, "exp")
    U, W, V = path_parameters(arch, seed=1, values=values)
    bank = random_bank(arch, 3, seed=2)
    order = 6
    assert token_difference_valuations(arch, bank, U, W, V, 3, order) == _reference_differences(
        arch, bank, U, W, V, order)


@pytest.mark.parametrize("depth,width,tokens,values", [(3, 2, 2, "identity"), (3, 2, 3, "random"),
                                                       (2, 3, 2, "random"), (4, 2, 2, "identity")])
def test_lemma_orders_hold_for_the_exact_columns(depth, width, tokens, values):
    """Every query/key column of layer i vanishes over Q below lemma_orders(...)[i - 1] (the exact
    Jacobian, computed in exact rationals, read coefficient by coefficient): the lemma's check."""
    arch = Architecture.uniform(depth, width, 1, tokens, "exp")
    U, W, V = path_parameters(arch, seed=3, values=values)
    bank = random_bank(arch, 2, seed=4)
    found = token_difference_valuations(arch, bank, U, W, V, depth - 1, 20)
    reach = lemma_orders(found)
    for layer, (_, i, columns) in enumerate(visible_blocks(arch, U)):
        if i == 0 or not columns:
            continue  # the readout's columns: not query/key columns
        target = reach[i - 1]
        J = bank_jacobian(arch, bank, U, W, V, RationalPolySeries(target + 1), columns, verify=0)
        for j in range(J.shape[2]):
            first = next(m for m in range(J.shape[0]) if any(v != 0 for v in J[m, :, j]))
            assert first >= target, (layer, i, j, first, target)
    # the bound is the true order on these generic points (the lemma is not loose here)
    assert reach == [4 * e + 1 for e in _reference_differences(arch, bank, U, W, V, 20)[: depth]]


def _layer4():
    arch = Architecture.uniform(4, 2, 1, 2, "exp")
    U, W, V = path_parameters(arch)
    return arch, U, W, V, visible_blocks(arch, U)[4][2]


def test_lemma_proves_a_long_order_and_a_higher_claim_is_refuted():
    arch, U, W, V, layer4 = _layer4()
    X = random_bank(arch, 8)
    assert 53 >= LEMMA_FROM_ORDER and attention_lemma_applies(arch)
    proof = prove_column_orders(arch, X, U, W, V, layer4, [53] * len(layer4))
    assert proof.status == "proved" and proof.structural == (53,) and proof.exact == () and proof.moduli == ()
    assert settle("certified", proof) == "certified"
    # t^54 is beyond the lemma's reach (4 * 13 + 1): the exact route computes the columns and refutes it
    assert prove_column_orders(arch, X, U, W, V, layer4, [54] * len(layer4))[0] == "refuted"
    assert prove_column_orders(arch, X, U, W, V, layer4, [53] * len(layer4), seconds=0)[0] == "too costly"
    old = prove_column_orders(arch, X, U, W, V, layer4, [53] * len(layer4), lemma=False)
    assert old.status == "proved" and old.exact == (53,) and old.structural == ()


def test_an_input_with_equal_tokens_does_not_lift_the_others():
    """The valuations are the least over the bank: an input whose tokens are equal (its differences
    vanish at every order) leaves the others' orders, and a claim beyond them is refuted."""
    arch, U, W, V, layer4 = _layer4()
    X = random_bank(arch, 4)
    X[0] = np.array([[Fraction(1, 2)] * 2, [Fraction(-3)] * 2], dtype=object)
    assert token_difference_valuations(arch, X[:1], U, W, V, 3, 20) == [20] * 4
    assert token_difference_valuations(arch, X, U, W, V, 3, 20) == [0, 1, 4, 13]
    assert prove_column_orders(arch, X, U, W, V, layer4, [54] * len(layer4))[0] == "refuted"


def test_lemma_only_for_the_softmax_stack():
    assert attention_lemma_applies(Architecture.uniform(3, 2, 1, 2, "exp"))
    assert not attention_lemma_applies(Architecture.uniform(3, 2, 1, 2, "exp", skip="value"))
    assert not attention_lemma_applies(Architecture.uniform(3, 2, 1, 2, "1+s+s^2/2"))


def test_settle_needs_a_proof_for_structural_orders():
    assert settle("certified", LowerBound("proved", 0, (53,), structural=(53,))) == "certified"
    with pytest.raises(InternalError):
        settle("certified", LowerBound("too costly", 0, (53,), structural=(53,)))
    with pytest.raises(InternalError):  # an order neither structural, exact nor with a bound
        settle("certified", LowerBound("proved", 0, (17, 53), structural=(53,)))


# -- the collapse recursion (issue 41): the token differences' orders from the structure, checked mod p

@pytest.mark.parametrize("depth,width,tokens,values", [(4, 2, 2, "identity"), (3, 2, 3, "random"),
                                                       (3, 3, 2, "random")])
def test_collapse_recursion_is_a_lower_bound_and_sharp(depth, width, tokens, values):
    """The recursion's powers are lower bounds on the exact valuations over Q (and equal to them on
    these generic points: the recursion is not loose)."""
    arch = Architecture.uniform(depth, width, 1, tokens, "exp")
    U, W, V = path_parameters(arch, seed=5, values=values)
    bank = random_bank(arch, 3, seed=6)
    exact = token_difference_valuations(arch, bank, U, W, V, depth - 1, 20)
    bounds = collapse_valuations(depth - 1)
    assert all(min(b, 20) <= e for b, e in zip(bounds, exact)), (bounds, exact)
    assert [min(b, 20) for b in bounds] == exact


def test_the_recursion_proves_what_the_exact_route_proves():
    """D = 4, t^53: the lemma's orders from the recursion (no series over Q) and from the token
    differences over Q agree, and the record says which route found the powers."""
    arch, U, W, V, layer4 = _layer4()
    X = random_bank(arch, 6)
    said: list[str] = []
    rec = prove_column_orders(arch, X, U, W, V, layer4, [53] * len(layer4), said.append)
    exact = prove_column_orders(arch, X, U, W, V, layer4, [53] * len(layer4), recursion=False)
    assert rec.status == exact.status == "proved" and rec.structural == exact.structural == (53,)
    assert (rec.collapse, exact.collapse) == ("recursion", "over Q")
    assert any("checked modulo" in m for m in said)
    # t^54 is past the recursion's reach: the columns over Q refute it
    assert prove_column_orders(arch, X, U, W, V, layer4, [54] * len(layer4))[0] == "refuted"


def test_an_overclaiming_recursion_fails_its_check(monkeypatch):
    """A recursion that claims one power of u more than the structure gives is refuted by the token
    differences modulo the prime: a failed check (exit 1), never a proved order."""
    from symattn.analyses import column_proof
    from symattn.core.errors import CheckFailed

    arch, U, W, V, layer4 = _layer4()
    X = random_bank(arch, 4)
    monkeypatch.setattr(column_proof, "collapse_valuations", lambda layers: [0] + [3 ** i // 2 + 1 for i in
                                                                              range(1, layers + 1)])
    with pytest.raises(CheckFailed, match="collapse recursion"):
        prove_column_orders(arch, X, U, W, V, layer4, [53] * len(layer4))


def test_the_spectrum_at_depth_four_says_the_recursion():
    """The user's command at D = 4 (t^53 by the lemma): certified, the note names the recursion."""
    from symattn.analyses.spectrum import native_spectrum

    s = native_spectrum(Architecture.uniform(4, 2, 1, 2, "exp"))
    assert s.certificate == "certified"
    assert sorted({b.order for b in s.bands}) == [0, 1, 5, 17, 53]
    assert any("collapse recursion e_i >= 3 e_(i-1) + 1" in n for n in s.notes)
