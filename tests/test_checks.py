"""The independent checks of issue 23: each one fails when what it checks is broken."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from symattn.core.algebras import exact_series
from symattn.core.certify import LowerBound, MajorantSeries, settle
from symattn.core.errors import CheckFailed, InternalError
from symattn.model.architecture import Architecture
from symattn.model.interpreter import jacobian
from symattn.model.network import evaluate, native_network
from symattn.model.parameters import random_bank, random_point
from symattn.model.expansion import catalogue_check, independent_taylor
from symattn.model.reference import PRIME, reference_check, reference_outputs


def _values(arch, order=5, seed=0):
    A = exact_series(order)
    vals = {k: A.const(v) for k, v in random_point(arch, seed, "random").items()}
    Y = random_bank(arch, 2, seed)
    vals["X"] = A.series([np.zeros(Y.shape, dtype=int), Y])
    return A, vals


@pytest.mark.parametrize("kind", [{"skip": "folded"}, {"mask": "window:2"}, {"heads": 2, "combine": "concat"}])
def test_reference_agrees_with_the_graph(kind):
    arch = Architecture.uniform(1, 2, 1, 3, "cosh", **kind)
    A, vals = _values(arch)
    F = evaluate(native_network(arch), A, vals)["F"]
    residues = np.vectorize(lambda v: int(v.p) * pow(int(v.q), -1, PRIME) % PRIME, otypes=[np.int64])(F)
    assert (reference_outputs(arch, "native", vals, {}, 5, PRIME)["F"][0] == residues).all()


def test_reference_refuses_a_wrong_jacobian():
    arch = Architecture.uniform(1, 2, 1, 3, "exp", mask="causal")
    A, vals = _values(arch)
    names = [b.name for b in arch.blocks]
    J = jacobian(native_network(arch), A, vals, names)  # the hook passes the right one
    J[2, 1, 0] = J[2, 1, 0] + 1
    with pytest.raises(CheckFailed, match="naive"):
        reference_check(arch, "native", vals, names, J, ["F"], A.const(np.eye(arch.native_size, dtype=int)), None)


def test_jacobian_hook_catches_a_graph_that_drops_the_skip(monkeypatch):
    import symattn.model.network as network

    def no_skip(b, i, layer, x, terms):
        b.g.graph["outputs"][f"X{i}"] = terms[0]
        return terms[0]

    monkeypatch.setattr(network, "_combine", no_skip)
    arch = Architecture.uniform(1, 2, 1, 2, "exp", skip="folded")
    A, vals = _values(arch)
    with pytest.raises(CheckFailed, match="naive"):
        jacobian(native_network(arch), A, vals, [b.name for b in arch.blocks])


def test_independent_taylor_and_catalogue_check():
    assert independent_taylor("exp(s^2 + s^3)", 4) == [1, 0, 1, Fraction(1), Fraction(1, 2)]
    catalogue_check("logistic", "h", [0, Fraction(1, 2), Fraction(-1, 8), Fraction(-1, 8)])
    with pytest.raises(CheckFailed, match="logistic"):
        catalogue_check("logistic", "h", [0, Fraction(1, 2), Fraction(-1, 8), Fraction(1, 8)])


def test_a_wrong_catalogue_builder_stops_the_normalizer(monkeypatch):
    from symattn.model import catalogue
    from symattn.model.normalizer import Normalizer

    monkeypatch.setitem(catalogue.CATALOGUE, "logistic", catalogue.Entry("1 + tanh(s)/2", lambda s: 1 + s.sinh() / 2))
    with pytest.raises(CheckFailed, match="catalogue normalizer logistic"):
        Normalizer("logistic").phi_taylor(4)


def test_settle_is_the_post_condition():
    assert settle("certified", LowerBound("proved", 2, (5,), (10**5,), ((1009, 1013),))) == "certified"
    assert settle("conditional", LowerBound("too costly", 400, (485,))) == "conditional"
    assert settle("certified", LowerBound("proved", 0)) == "certified"  # nothing to prove
    for bad in (None, LowerBound("too costly", 400, (485,)), LowerBound("proved", 1, (5,), (2**40,), ((8388593,),)),
                LowerBound("proved", 2, (5, 9), (10,), ((1009, 1013),)), LowerBound("proved", 2, (5,), (10,), ((1000, 1013),))):
        with pytest.raises(InternalError):
            settle("certified", bad)


def test_majorant_soundness_fails_on_a_short_reciprocal(monkeypatch):
    from symattn.core.soundness import majorant_soundness
    from symattn.model.normalizer import Normalizer

    assert len(majorant_soundness([Normalizer("cosh")], order=6)) == 16
    original = MajorantSeries.reciprocal

    def short(self, x):
        y = original(self, x)
        y.height[0][1:] = [h // 4 for h in y.height[0][1:]]
        return y

    monkeypatch.setattr(MajorantSeries, "reciprocal", short)
    with pytest.raises(CheckFailed, match="reciprocal"):
        majorant_soundness([], order=6)


def test_bank_post_condition():
    from symattn.analyses.bank import _too_few_rows

    _too_few_rows(3, True, 9, 4)  # 2 inputs give 8 < 9 rows: proved
    _too_few_rows(3, False, 7, 4)
    with pytest.raises(InternalError):
        _too_few_rows(3, True, 7, 4)  # 8 rows for 7 columns: not proved


def test_dimension_refuses_a_bound_below_the_rank(monkeypatch):
    import symattn.analyses.dimension as dimension

    monkeypatch.setattr(dimension, "rank_condition_bound", lambda arch, theta: 1)
    with pytest.raises(CheckFailed, match="exceeds the upper bound"):
        dimension.neuromanifold_dimension(Architecture.uniform(1, 2, 1, 2, "exp"))


def test_spectrum_not_attempted_is_conditional(monkeypatch):
    import symattn.analyses.spectrum as spectrum

    monkeypatch.setattr(spectrum, "MAX_PROOF_PRIMES", 1)
    s = spectrum.native_spectrum(Architecture.uniform(2, 2, 1, 2, "exp"))
    assert s.certificate == "conditional" and any("not attempted" in n for n in s.notes)
