"""Tests of symattn.core.certify: the majorant bounds hold for the exact coefficients."""

import math
import random
from fractions import Fraction

import numpy as np
import pytest

from symattn.core.algebras import exact_series
from symattn.core.certify import MajorantSeries, height_bound, primes_below, proved_vanishing
from symattn.model.network import jacobian, native_network
from symattn.model.architecture import Architecture
from symattn.model.parameters import native_path_values, random_bank, random_rational_matrix
from symattn.analyses.spectrum import jacobian_height_bounds, path_parameters


def _check(bounds, dens, coefficients):
    """Every exact coefficient c of u^m has D_m c integral and |D_m c| <= B_m."""
    for m, block in enumerate(coefficients):
        for c in np.asarray(block, dtype=object).reshape(-1):
            q = Fraction(int(c.p), int(c.q))
            assert (q * dens[m]).denominator == 1, (m, q, dens[m])
            assert abs(q * dens[m]) <= bounds[m], (m, q, bounds[m])


@pytest.mark.parametrize("seed", range(4))
def test_matrix_product_bounds_hold(seed):
    rng = random.Random(seed)
    M, A = MajorantSeries(3), exact_series(3)
    xs = [random_rational_matrix(rng, (2, 3, 4)) for _ in range(2)]
    ys = [random_rational_matrix(rng, (4, 5)) for _ in range(3)]
    exact = A.matmul(A.series(xs), A.series(ys))
    bound = M.matmul(M.series(xs), M.series(ys))
    _check([height_bound(h, d) for h, d in zip(bound.height[0], bound.denominator[0])],
           bound.denominator[0], exact)
    # the row and column sums propagate: they bound those of the exact product
    for m in range(3):
        absolute = np.vectorize(lambda c: abs(Fraction(int(c.p), int(c.q))))(exact[m])
        assert absolute.sum(axis=-1).max() * 2**64 <= bound.rows[0][m]
        assert absolute.sum(axis=-2).max() * 2**64 <= bound.cols[0][m]
        s = M.sum(bound, -1)  # a row sum is bounded by the row-sum bound, not only by n * height
        assert s.height[0][m] <= bound.rows[0][m]


@pytest.mark.parametrize("depth, width, rank", [(1, 2, 1), (2, 2, 1), (2, 3, 2)])
def test_jacobian_height_bounds_hold(depth, width, rank):
    # the a-priori bounds of the spectrum's proof against the exact u-Jacobian over Q
    arch = Architecture.uniform(depth, width, rank, 2, "exp")
    U, W, V = path_parameters(arch, seed=1, values="random")
    bank = random_bank(arch, 3, seed=2)
    order = 4
    bounds = jacobian_height_bounds(arch, bank, U, W, V, order)
    A = exact_series(order)
    vals = native_path_values(arch, A, U, W, V, squared=True)
    vals["X"] = A.const(bank)
    G = jacobian(native_network(arch), A, vals, [n for n, _ in arch.native_shapes()], verify=0)
    M = MajorantSeries(order)
    # recompute the denominators the bound used (B_m = D_m H_m)
    from symattn.model.network import evaluate

    mvals = {}
    for i in range(depth):
        zero, one = np.zeros(U[i].shape, dtype=int), np.ones(U[i].shape, dtype=int)
        mvals[f"Q{i + 1}"] = M.series([zero, U[i]], [one])
        mvals[f"K{i + 1}"] = M.series([W[i]], [one])
        mvals[f"V{i + 1}"] = M.series([V[i]], [np.ones(V[i].shape, dtype=int)])
    mvals["X"] = M.const(bank)
    dens = evaluate(native_network(arch), M, mvals)["F"].denominator[1]
    _check(bounds, dens, G)
    assert max(abs(Fraction(int(c.p), int(c.q))) for c in G[-1].reshape(-1)) > 0  # not vacuous


def test_primes_and_vanishing():
    ps = primes_below(2**23, 5)
    assert ps[0] == 8388593 and ps == sorted(ps, reverse=True) and len(set(ps)) == 5
    assert all(all(p % q for q in range(2, math.isqrt(p) + 1)) for p in ps[:2])
    assert proved_vanishing(math.prod(ps) // 2, ps) and not proved_vanishing(math.prod(ps) // 2 + 1, ps)


@pytest.mark.parametrize("b", range(1, 9))
def test_t_truncation_reads_u_coefficients_up_to_half(b):
    # prove_column_orders bounds J mod t^b by B_0..B_(b // 2): J mod t^b reads no later u^m
    from symattn.core.algebras import PrimeField
    from symattn.analyses.spectrum import from_u_series

    field = PrimeField(101)
    G = np.random.default_rng(b).integers(1, 101, size=(b // 2 + 3, 2, 3))
    G[0][:, 2] = 0  # the key column's u^0 coefficient vanishes
    letters = np.array(["V", "Q", "K"])
    full = from_u_series(field, G, letters, b)
    assert (from_u_series(field, G[: b // 2 + 1], letters, b) == full).all()
    changed = G.copy()
    changed[b // 2] += 1  # the last coefficient read does change J mod t^b
    changed[0][:, 2] = 0
    assert not (from_u_series(field, changed, letters, b) == full).all()


def test_wide_prime_residues_are_those_of_the_exact_series():
    """A 28-bit prime's residues (WidePrimeField: 127 products summed before a reduction) are the
    exact series reduced mod that prime: long convolutions and matrix products, and the proof's
    bank Jacobian (near the overflow of int64, where too large a capacity would wrap)."""
    from symattn.core.algebras import SeriesAlgebra
    from symattn.core.algebras.polyseries import PolySeries
    from symattn.core.certify import WIDE_PRIME_BITS, WidePrimeField
    from symattn.analyses.collapse import bank_jacobian

    q = primes_below(2**WIDE_PRIME_BITS, 1)[0]
    A, B = SeriesAlgebra(WidePrimeField(q), 300), PolySeries(q, 300)  # nmod_poly: the reference
    rng = np.random.default_rng(0)
    x, y = (rng.integers(q - 2**20, q, size=(300, 3, 127)) for _ in range(2))
    z = rng.integers(q - 2**20, q, size=(300, 127, 2))
    assert (A.mul(A.series(list(x)), A.series(list(y))) == B.coefficients(B.mul(B.series(list(x)), B.series(list(y))))).all()
    assert (A.matmul(A.series(list(x)), A.series(list(z))) == B.coefficients(B.matmul(B.series(list(x)), B.series(list(z))))).all()
    arch = Architecture.uniform(2, 3, 2, 3, "exp")
    U, W, V = path_parameters(arch, seed=1, values="random")
    bank = random_bank(arch, 4, seed=2)
    exact = bank_jacobian(arch, bank, U, W, V, exact_series(9))
    assert (bank_jacobian(arch, bank, U, W, V, SeriesAlgebra(WidePrimeField(q), 9)) == WidePrimeField(q).convert(exact)).all()
    with pytest.raises(Exception):
        WidePrimeField(2**WIDE_PRIME_BITS + 1)


def test_wide_primes_only_where_every_product_contracts_few_terms():
    from symattn.analyses.column_proof import _contracts_few_terms, _proof_primes

    assert _contracts_few_terms(Architecture.uniform(3, 4, 2, 4, "exp"))
    assert not _contracts_few_terms(Architecture.uniform(1, 2, 1, 128, "exp"))  # 128 tokens
    primes = _proof_primes(2**347)
    assert primes[0] == 8388593 and all(p.bit_length() == 28 for p in primes[1:]) and len(primes) == 13
    assert proved_vanishing(2**347, primes) and not proved_vanishing(2**347, primes[:-1])
