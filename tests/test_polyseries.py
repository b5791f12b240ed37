"""PolySeries (nmod_poly series) against the NumPy series, and the forked map."""

import random
from fractions import Fraction

import numpy as np
import pytest

from symattn.core.algebras import PrimeField, SeriesAlgebra, UnluckyPrime
from symattn.core.algebras.polyseries import PolySeries, WordPrimeField
from symattn.core.parallel import map_forked
from symattn.model.parameters import random_rational_matrix
from symattn.model.normalizer import Normalizer

P = 8388593


def _pair(order):
    return SeriesAlgebra(PrimeField(P), order), PolySeries(P, order)


def _random_series(rng, shape, order, constant=None):
    cs = [random_rational_matrix(rng, shape) for _ in range(order)]
    if constant is not None:
        cs[0] = np.full(shape, Fraction(constant), dtype=object)
    return cs


@pytest.mark.parametrize("order", [1, 5, 40])
def test_ring_operations_agree_with_the_numpy_series(order):
    rng = random.Random(order)
    A, B = _pair(order)
    x, y, z = (_random_series(rng, s, order) for s in ((2, 3), (2, 3), (3, 4)))
    same = lambda a, b: np.array_equal(A.coefficients(a), B.coefficients(b))  # noqa: E731
    xa, ya, za, xb, yb, zb = A.series(x), A.series(y), A.series(z), B.series(x), B.series(y), B.series(z)
    assert same(A.add(xa, ya), B.add(xb, yb)) and same(A.sub(xa, ya), B.sub(xb, yb))
    assert same(A.mul(xa, ya), B.mul(xb, yb)) and same(A.matmul(xa, za), B.matmul(xb, zb))
    assert same(A.sum(xa, -1), B.sum(xb, -1)) and same(A.neg(xa), B.neg(xb))
    assert same(A.transpose(xa), B.transpose(xb)) and same(A.scale(xa, Fraction(3, 7)), B.scale(xb, Fraction(3, 7)))
    u = _random_series(rng, (2, 2), order, constant=Fraction(3, 2))
    assert same(A.reciprocal(A.series(u)), B.reciprocal(B.series(u)))
    w = _random_series(rng, (2, 2), order, constant=0)
    for name in ("exp", "cosh", "logistic", "1+s^2"):
        for k in (0, 1):
            assert same(A.phi(A.series(w), Normalizer(name), k), B.phi(B.series(w), Normalizer(name), k)), name
    assert (A.valuation(A.series(w)) == B.valuation(B.series(w))).all()


def test_word_primes_and_unlucky_denominators():
    q = (1 << 61) - 1
    B = PolySeries(q, 3)
    assert B.coefficients(B.reciprocal(B.const([[2]])))[0, 0, 0] * 2 % q == 1
    with pytest.raises(UnluckyPrime):
        PolySeries(7, 3).const([Fraction(1, 14)])
    with pytest.raises(Exception):
        WordPrimeField(2**62 + 1)


def test_map_forked_keeps_order_and_runs_inline_with_one_worker():
    assert list(map_forked(lambda v: v * v, range(7), workers=2)) == [v * v for v in range(7)]
    assert list(map_forked(str, [1, 2], workers=1)) == ["1", "2"]
