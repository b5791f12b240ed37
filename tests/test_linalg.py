"""The linear algebra layer (symattn.core.linalg) against brute-force references, and the gauge kernel."""

from __future__ import annotations

import random
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
import sympy

from symattn.core.algebras import PrimeField, Rationals, SeriesAlgebra
from symattn.model.symmetries import GaugeKernel, visible_blocks
from symattn.core.ball_field import Balls
from symattn.core.linalg import Matrix, SeriesMatrix, kernel_complement
from symattn.model.architecture import Architecture
from symattn.model.parameters import NativeParams, random_native
from symattn.analyses.spectrum import path_parameters

PRIME = 7
FIELDS = {"QQ": Rationals(), "GF(7)": PrimeField(PRIME)}


def _random_matrix(rng: random.Random, rows: int, cols: int, rank: int, field: str) -> np.ndarray:
    """A ``rows x cols`` matrix of rank at most ``rank`` (a product), small entries."""
    draw = (lambda: Fraction(rng.randint(-3, 3), rng.randint(1, 3))) if field == "QQ" else (lambda: rng.randint(0, 6))
    left, right = np.empty((rows, rank), dtype=object), np.empty((rank, cols), dtype=object)
    for idx in np.ndindex(left.shape):
        left[idx] = draw()
    for idx in np.ndindex(right.shape):
        right[idx] = draw()
    return left.dot(right) if rank else np.zeros((rows, cols), dtype=int).astype(object)


def _rank_mod_p(a: np.ndarray, p: int) -> int:
    """Gaussian elimination mod p in plain Python (the reference)."""
    m = [[int(v) % p for v in row] for row in a]
    rank, col = 0, 0
    rows, cols = len(m), len(m[0]) if m else 0
    while rank < rows and col < cols:
        pivot = next((r for r in range(rank, rows) if m[r][col]), None)
        if pivot is None:
            col += 1
            continue
        m[rank], m[pivot] = m[pivot], m[rank]
        inv = pow(m[rank][col], -1, p)
        for r in range(rows):
            if r != rank and m[r][col]:
                f = m[r][col] * inv % p
                m[r] = [(x - f * y) % p for x, y in zip(m[r], m[rank])]
        rank, col = rank + 1, col + 1
    return rank


def _reference_rank(a: np.ndarray, field: str) -> int:
    if field == "QQ":
        return sympy.Matrix(a.tolist()).rank()
    return _rank_mod_p(a, PRIME)


@pytest.mark.parametrize("field", list(FIELDS))
@pytest.mark.parametrize("seed", range(12))
def test_rank_and_nullspace_match_a_reference(field, seed):
    rng = random.Random(seed)
    rows, cols = rng.randint(1, 5), rng.randint(1, 5)
    a = _random_matrix(rng, rows, cols, rng.randint(0, min(rows, cols)), field)
    m = Matrix(a, FIELDS[field])
    rank = m.rank()
    assert rank == _reference_rank(a, field)
    basis = m.nullspace()
    assert len(basis) == cols - rank
    if basis:
        product = m @ Matrix(np.array(basis, dtype=object).T, FIELDS[field])
        assert product.is_zero()
        assert Matrix(np.array(basis, dtype=object), FIELDS[field]).rank() == len(basis)
    echelon, pivots = m.rref()
    assert len(pivots) == rank == echelon.shape[0]


def test_a_matrix_of_rationals_reduced_mod_p_keeps_its_field():
    m = Matrix.modular([[Fraction(1, 2), 1], [1, 2]], PRIME)
    assert m.field.p == PRIME and m.entries.tolist() == [[4, 1], [1, 2]]
    assert m.rank() == 1  # 1/2 * 2 = 1 mod 7: the rows are proportional


def test_inverse_and_solve_over_q():
    a = np.array([[2, 1], [1, 1]], dtype=object)
    inv = Matrix.rational(a).inverse()
    assert (Matrix.rational(a) @ inv - Matrix.rational(np.eye(2, dtype=int))).is_zero()
    x = Matrix.rational(a).solve(Matrix.rational([[3], [2]]))
    assert [str(v) for v in x.entries.reshape(-1)] == ["1", "1"]


def test_balls_eigenvalues_and_products():
    balls = Balls.for_digits(30)
    a = Matrix([[4, 1], [1, 3]], balls)
    lam, vectors = a.real_eigenvalues(vectors=True)
    expected = sorted([(7 + 5**0.5) / 2, (7 - 5**0.5) / 2], reverse=True)
    assert [float(x) for x in lam] == pytest.approx(expected, rel=1e-14)
    with balls.working():  # the arithmetic below at the matrix's precision
        residual = (a @ Matrix(vectors, balls)).entries - vectors * np.array(lam, dtype=object)
    assert max(abs(float(v.mid())) for v in residual.reshape(-1)) < 1e-25
    with pytest.raises(Exception, match="not decided over balls"):
        a.rank()


def _poly_valuation(poly: sympy.Poly, p: int | None) -> int | None:
    coeffs = list(reversed(poly.all_coeffs()))
    for j, c in enumerate(coeffs):
        if (c % p if p else c) != 0:
            return j
    return None


def _reference_smith_orders(polys: list[list[sympy.Expr]], t: sympy.Symbol, order: int, p: int | None) -> list[int]:
    """Smith orders from the minors: ``d_k`` = least valuation of a ``k x k`` minor,
    the orders are ``d_k - d_{k-1}``; those below ``order`` are returned."""
    rows, cols = len(polys), len(polys[0])
    d, out = [0], []
    for k in range(1, min(rows, cols) + 1):
        vals = []
        for r in combinations(range(rows), k):
            for c in combinations(range(cols), k):
                det = sympy.Matrix([[polys[i][j] for j in c] for i in r]).det()
                v = _poly_valuation(sympy.Poly(sympy.expand(det), t), p)
                if v is not None:
                    vals.append(v)
        if not vals:
            break
        d.append(min(vals))
        out.append(d[-1] - d[-2])
    return [o for o in out if o < order]


@pytest.mark.parametrize("field", list(FIELDS))
@pytest.mark.parametrize("seed", range(10))
def test_smith_orders_match_the_minors(field, seed):
    rng = random.Random(100 + seed)
    t = sympy.Symbol("t")
    order, rows, cols = 6, rng.randint(1, 3), rng.randint(1, 3)
    coeffs = np.zeros((order, rows, cols), dtype=object)
    for i in range(rows):
        for j in range(cols):
            low = rng.randint(0, order)
            for k in range(low, order):
                coeffs[k, i, j] = rng.randint(-2, 2) if field == "QQ" else rng.randint(0, PRIME - 1)
    algebra = SeriesAlgebra(FIELDS[field], order)
    orders, undecided = SeriesMatrix(algebra, algebra.series(list(coeffs))).smith_orders()
    polys = [[sum(int(coeffs[k, i, j]) * t**k for k in range(order)) for j in range(cols)] for i in range(rows)]
    assert orders == _reference_smith_orders(polys, t, order, PRIME if field != "QQ" else None)


@pytest.mark.parametrize("field", list(FIELDS))
@pytest.mark.parametrize("seed", range(8))
def test_prefix_smith_orders_are_those_of_each_prefix(field, seed):
    """One elimination for every block prefix (mod p) gives each prefix's own Smith orders."""
    rng = random.Random(300 + seed)
    order, rows, cols = 7, rng.randint(1, 5), rng.randint(1, 5)
    coeffs = np.zeros((order, rows, cols), dtype=object)
    for i in range(rows):
        for j in range(cols):
            for k in range(rng.randint(0, order), order):
                coeffs[k, i, j] = rng.randint(-2, 2) if field == "QQ" else rng.randint(0, PRIME - 1)
    algebra = SeriesAlgebra(FIELDS[field], order)
    J = algebra.series(list(coeffs))
    sizes = sorted(set(rng.randint(1, cols) for _ in range(3)))
    assert SeriesMatrix(algebra, J).prefix_smith_orders(sizes) == [
        SeriesMatrix(algebra, J[:, :, :n]).smith_orders() for n in sizes]


def test_prefix_smith_orders_eliminate_a_prefix_alone_when_a_later_column_pivots_first():
    # column 1 (outside the prefix {0}) pivots at t^0 on the only row where column 0 is nonzero:
    # the elimination of both columns leaves column 0 undecided, the prefix alone has the order t^1
    algebra = SeriesAlgebra(PrimeField(PRIME), 3)
    J = algebra.series([[[0, 1], [0, 0]], [[1, 0], [0, 0]]])
    assert SeriesMatrix(algebra, J).smith_orders() == ([0], 1)
    assert SeriesMatrix(algebra, J).prefix_smith_orders([1, 2]) == [([1], 0), ([0], 1)]


@pytest.mark.parametrize("K", [1, 5, 40])
def test_polynomial_schur_update_equals_the_power_by_power_one(K):
    """The long-truncation Schur update (nmod_poly entries, Newton inverse) against the BLAS one."""
    from symattn.core.algebras import DEFAULT_PRIME
    from symattn.core.series_mod_p import _polynomial_schur_update, _series_inverse_mod_p, _series_matmul_mod_p

    rng = np.random.default_rng(K)
    p, r = DEFAULT_PRIME, 3
    T, B, S = (rng.integers(0, p, size=(K,) + shape, dtype=np.int64) for shape in ((5, r), (r, r), (r, 4)))
    B[0] = np.triu(B[0])
    B[0][np.diag_indices(r)] = 1  # an invertible constant term (unit upper triangular)
    reference = _series_matmul_mod_p(_series_matmul_mod_p(T, _series_inverse_mod_p(B, K, p), K, p), S, K, p)
    assert (_polynomial_schur_update(T, B, S, K, p) == reference).all()


def test_rank_profile_is_the_cumulative_rank():
    algebra = SeriesAlgebra(Rationals(), 3)
    J = algebra.series([[[1, 0], [2, 0]], [[2, 0], [4, 0]], [[0, 1], [0, 0]]])
    assert SeriesMatrix(algebra, J).rank_profile() == [1, 1, 2]


def test_kernel_complement_is_orthogonal_and_full():
    vecs = [np.array([Fraction(1, 2), 1, 0]), np.array([0, 1, Fraction(-1, 3)])]
    B = kernel_complement(vecs, 3)
    assert B.shape == (3, 1)
    assert all(sum(Fraction(v[i]) * B[i, 0] for i in range(3)) == 0 for v in vecs)


# -------------------------------------------------------------- the gauge kernel
def test_gauge_kernel_counts_verifies_and_complements():
    arch = Architecture((2, 3, 2), (1, 2), 2, Architecture.uniform(2, 1, 1, 2).normalizers)
    theta = random_native(arch, seed=4)
    kernel = GaugeKernel(arch, theta)
    assert len(kernel.factor_gauges) == 1 + 4 and len(kernel.interface_directions) == 9
    assert kernel.annihilates_reduction()
    assert kernel.rank() == Matrix.rational(np.array(kernel.directions, dtype=object)).rank()
    assert kernel.upper_bound() == arch.native_size - kernel.rank()
    B = kernel.complement()
    assert B.shape == (arch.native_size, arch.native_size - kernel.rank())
    assert (Matrix.rational(np.array(kernel.directions, dtype=object)) @ Matrix.rational(B)).is_zero()
    inside = kernel.vectors(["Q1", "K1"])  # the factor gauge of layer 1 only
    assert len(inside) == 1 and inside[0].shape == (2 * 2,)


def test_gauge_kernel_refuses_a_direction_outside_the_kernel():
    arch = Architecture.uniform(2, 2, 1, 2, "exp")
    kernel = GaugeKernel(arch, random_native(arch, seed=1))
    kernel.directions[0] = kernel.directions[0].copy()
    kernel.directions[0][0] += 1
    assert not kernel.annihilates_reduction()
    with pytest.raises(Exception, match="failed to annihilate"):
        kernel.upper_bound()


def test_gauge_kernel_splits_along_the_path():
    arch = Architecture.uniform(3, 2, [1, 2, 1], 2, "exp")
    U, W, V = path_parameters(arch, seed=3, values="random")
    kernel = GaugeKernel(arch, NativeParams(tuple(U), tuple(W), tuple(V)))
    zeta, verified = kernel.path_split()
    assert verified and zeta == 1 + 4 + 1 + 2 * 4
    visible = sum(len(cols) for _, _, cols in visible_blocks(arch, U))
    assert visible + zeta == arch.native_size


# -------------------------------------------------------------- the certified rank of ball matrices
def _balls(mid, rad) -> np.ndarray:
    return np.stack([np.asarray(mid, dtype=float), np.broadcast_to(np.asarray(rad, dtype=float), np.shape(mid))])


def test_certified_rank_never_exceeds_the_rank_of_a_matrix_inside_the_balls() -> None:
    """Balls that contain a singular matrix (diag(1, 0) inside diag(1, 1e-3) +- 2e-3 at (1, 1)) or a
    rank-r product: the certified rank is at most that rank, and reaches it when the radii are small."""
    from symattn.core.rank_certificate import certified_rank

    assert certified_rank(_balls(np.diag([1.0, 1e-3]), [[0, 0], [0, 2e-3]])).rank == 1
    assert certified_rank(_balls(np.diag([1.0, 1e-3]), [[0, 0], [0, 5e-4]])).rank == 2
    rng = np.random.default_rng(0)
    for r in (1, 3, 5):
        M = rng.integers(-3, 4, (8, r)) @ rng.integers(-3, 4, (r, 7))  # exact integers: no rounding
        c = certified_rank(_balls(M, 0.0))
        assert c.rank == np.linalg.matrix_rank(M) <= r
        assert certified_rank(_balls(M, 10.0)).rank == 0  # radii larger than every entry


def test_weak_directions_through_their_own_enclosures() -> None:
    """Singular values 1, 1e-3, 1e-9 under radii 1e-8: Weyl's inequality on the whole enclosure certifies
    2; the third direction's own enclosure (J y exactly) certifies 3 through the Schur complement; an
    enclosure as wide as the radii certifies nothing more."""
    from symattn.core.rank_certificate import certified_rank

    rng = np.random.default_rng(1)
    Q1, _ = np.linalg.qr(rng.standard_normal((6, 3)))
    Q2, _ = np.linalg.qr(rng.standard_normal((5, 3)))
    J = Q1 @ np.diag([1.0, 1e-3, 1e-9]) @ Q2.T
    exact = np.vectorize(Fraction, otypes=[object])(J)

    def tight(D):  # J D^T, its exact value enclosed (rationals rounded to binary64 balls)
        P = exact.dot(np.vectorize(Fraction, otypes=[object])(D.T))
        m = np.vectorize(float, otypes=[float])(P)
        return _balls(m, np.vectorize(lambda q, f: float(abs(q - Fraction(f))) * 2 + 1e-300, otypes=[float])(P, m))

    assert certified_rank(_balls(J, 1e-8)).rank == 2
    c = certified_rank(_balls(J, 1e-8), directions=tight)
    assert (c.rank, c.strong, c.weak) == (3, 2, 1)
    assert certified_rank(_balls(J, 1e-8), directions=lambda D: _balls(J @ D.T, 1e-8)).rank == 2


def test_the_schur_complement_term_is_needed() -> None:
    """J = [[1, 1e-2], [1e-2, 1e-4]] is singular and lies inside diag(1, 1e-4) +- 2e-2 off the
    diagonal. Weyl certifies 1; the weak direction e_2 enclosed exactly (J e_2 = (1e-2, 1e-4)) looks
    nonsingular on its own (C22 = 1e-4), but the Schur complement C22 - C21 C11^-1 C12 may vanish:
    nothing more is certified."""
    from symattn.core.rank_certificate import certified_rank

    singular = np.array([[1.0, 1e-2], [1e-2, 1e-4]])
    c = certified_rank(_balls(np.diag([1.0, 1e-4]), [[0, 2e-2], [2e-2, 0]]),
                       directions=lambda D: _balls(singular @ D.T, 1e-20))
    assert c.rank == 1 and c.strong == 1


def test_high_precision_stage_certifies_what_binary64_cannot() -> None:
    """python-flint balls at 60 digits of R diag(1, 1e-30) R^T (R a rotation by an exact Pythagorean
    angle): binary64 sees rank 1 and certifies it; the minors at 60 digits certify the rank 2."""
    import flint

    from symattn.core.rank_certificate import certified_rank

    R = [[Fraction(3, 5), Fraction(-4, 5)], [Fraction(4, 5), Fraction(3, 5)]]
    D = [Fraction(1), Fraction(1, 10 ** 30)]
    M = [[sum(R[i][k] * D[k] * R[j][k] for k in range(2)) for j in range(2)] for i in range(2)]
    with flint.ctx.workprec(220):
        A = np.array([[flint.arb(flint.fmpq(q.numerator, q.denominator)) for q in row] for row in M], dtype=object)
    binary = certified_rank(A)
    assert (binary.rank, binary.numerical) == (1, 1)
    c = certified_rank(A, digits=60)
    assert (c.rank, c.numerical, c.minor) == (2, 2, 2)


def test_certified_rank_beyond_the_binary64_range_is_undecided() -> None:
    """Entries whose squares overflow: undecided (said as such), never a float exception or a bound."""
    from symattn.core.errors import Undecided
    from symattn.core.rank_certificate import certified_rank

    with pytest.raises(Undecided, match="not certified"):
        certified_rank(_balls(np.diag([1e200, 1e199]), 0.0))
