"""Linear algebra where the coefficient field travels with the matrix.

A :class:`Matrix` holds a 2-D NumPy array and the field its entries live in
(as sympy's ``DomainMatrix`` does); every routine is chosen here, from that
field, so no caller asks which field it holds:

===============================================================  =====================================  ===========
field                                                            backend                                answers are
===============================================================  =====================================  ===========
:class:`~symattn.core.algebras.Rationals` (Q)                    python-flint ``fmpq_mat``              exact
:class:`~symattn.core.algebras.PrimeField` (F_p)                 python-flint ``nmod_mat``              exact mod p
:class:`~symattn.core.ball_field.Balls` (arb balls at ``bits``)  python-flint ``arb_mat``, ``acb_mat``  numerical
===============================================================  =====================================  ===========

A :class:`SeriesMatrix` is a matrix over the truncated power series ring
``k[[t]] / t^N`` (``k`` = Q or F_p): a coefficient array ``(N, m, n)`` of a
:class:`~symattn.core.algebras.SeriesAlgebra`; it has Smith orders (pivoting on an
entry of least valuation; over F_p by :mod:`symattn.core.series_mod_p`) and the
rank profile of its leading coefficients.

What a modular answer proves (a modular rank is a lower bound on the rational
rank; modular Smith orders are upper bounds on the orders over Q[[t]]) is
stated in :mod:`symattn.core.certify`. Ball matrices are numerical: the
eigenvalues come from approximate (``algorithm="approx"``) eigen solvers; proved
lower bounds on the rank of a matrix of balls are in :mod:`symattn.core.rank_certificate`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Sequence

import flint
import numpy as np

from symattn.core.algebras.modular import PrimeField
from symattn.core.algebras.rational import Rationals
from symattn.core.algebras.series import Field, SeriesAlgebra
from symattn.core.ball_field import Balls
from symattn.core.errors import InternalError
from symattn.core.series_mod_p import smith_pivots_mod_p

__all__ = ["Matrix", "SeriesMatrix", "RANK_PRIME", "fmpq_is_zero", "fmpq_rank", "kernel_complement",
           "identity_matrix", "is_zero", "symmetric_part"]

class Matrix:
    """A 2-D matrix over ``field`` (Q, F_p or :class:`~symattn.core.ball_field.Balls`).

    Parameters
    ----------
    entries : a 2-D array-like; converted into ``field`` (rationals are
        reduced mod p over F_p)
    field : :class:`~symattn.core.algebras.Rationals`, :class:`~symattn.core.algebras.PrimeField`
        or :class:`~symattn.core.ball_field.Balls`

    Examples
    --------
    >>> Matrix.rational([[1, 2], [2, 4]]).rank()
    1
    >>> Matrix.modular([[1, 3], [2, 13]], 7).rank()
    1
    >>> [[str(x) for x in v] for v in Matrix.rational([[1, 2], [2, 4]]).nullspace()]
    [['-2', '1']]
    """

    def __init__(self, entries: Any, field: Field):
        self.field = field
        arr = np.asarray(entries)
        if arr.ndim != 2:
            if arr.size:
                raise InternalError(f"a matrix needs a 2-D array, got shape {arr.shape}")
            arr = np.zeros((0, 0), dtype=int)
        self.entries = field.convert(arr) if arr.size else np.zeros(arr.shape, dtype=field.dtype)

    @classmethod
    def rational(cls, entries: Any) -> "Matrix":
        """A matrix over Q (entries: ints, Fractions, sympy or flint rationals, binary64)."""
        return cls(entries, Rationals())

    @classmethod
    def modular(cls, entries: Any, p: int) -> "Matrix":
        """A matrix over F_p (integers are reduced mod ``p``)."""
        return cls(entries, PrimeField(p))

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.entries.shape)  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"Matrix({self.shape[0]} x {self.shape[1]}, {self.field.name})"

    # -- the flint backend, chosen by the field --------------------------------
    def _flint(self):
        rows, cols = self.shape
        flat = self.entries.reshape(-1).tolist()
        if isinstance(self.field, Rationals):
            return flint.fmpq_mat(rows, cols, flat)
        if isinstance(self.field, PrimeField):
            return flint.nmod_mat(rows, cols, flat, self.field.p)
        if isinstance(self.field, Balls):
            return flint.arb_mat(rows, cols, flat)
        raise InternalError(f"no matrix backend for the field {self.field.name}")

    def _from_flint(self, m, rows: int | None = None) -> "Matrix":
        """The flint matrix ``m`` (its first ``rows`` rows) as a Matrix of this field."""
        out = Matrix(np.zeros((0, 0), dtype=int), self.field)
        nrows, ncols = m.nrows(), m.ncols()
        rows = nrows if rows is None else rows
        if isinstance(self.field, PrimeField):
            if rows < nrows // 2:  # a few rows of a tall echelon form: no object for the zero rows
                flat = np.fromiter((int(m[i, j]) for i in range(rows) for j in range(ncols)), np.int64,
                                   rows * ncols)
            else:
                flat = np.fromiter(map(int, m.entries()), np.int64, nrows * ncols)[: rows * ncols]
            out.entries = flat.reshape(rows, ncols)
            return out
        entries = m.entries()[: rows * ncols]
        arr = np.empty(len(entries), dtype=self.field.dtype)
        arr[:] = entries
        out.entries = arr.reshape(rows, ncols)
        return out

    def _exact(self, what: str) -> None:
        if isinstance(self.field, Balls):
            raise InternalError(f"{what} is not decided over balls (no exact zero test)")

    # -- exact linear algebra (Q, F_p) ----------------------------------------------
    def rank(self) -> int:
        """The rank (exact over Q and F_p).

        >>> Matrix.rational(np.zeros((0, 3), dtype=int)).rank()
        0
        """
        self._exact("a rank")
        if 0 in self.shape:
            return 0
        return self._flint().rank()

    def rref(self) -> tuple["Matrix", list[int]]:
        """The nonzero rows of the reduced row echelon form and the pivot columns.

        >>> E, pivots = Matrix.rational([[0, 2, 4], [0, 1, 2]]).rref()
        >>> [[str(x) for x in row] for row in E.entries], pivots
        ([['0', '1', '2']], [1])
        """
        self._exact("a row echelon form")
        rows, cols = self.shape
        if 0 in self.shape:
            return Matrix(np.zeros((0, cols), dtype=int), self.field), []
        e, r = self._flint().rref()
        echelon = self._from_flint(e, r)
        pivots = [int(np.flatnonzero(~self.field.is_zero(echelon.entries[i]))[0]) for i in range(r)]
        return echelon, pivots

    def nullspace(self) -> list[np.ndarray]:
        """A basis of the right null space (from the rref), vectors in the field's dtype."""
        echelon, pivots = self.rref()
        cols = self.shape[1]
        zero, one = self.field.convert(0)[()], self.field.convert(1)[()]
        out = []
        for free in (j for j in range(cols) if j not in pivots):
            v = np.empty(cols, dtype=self.field.dtype)
            v[:] = [zero] * cols
            v[free] = one
            for i, p in enumerate(pivots):
                v[p] = self.field.reduce(np.asarray(-echelon.entries[i, free]))[()]
            out.append(v)
        return out

    def inverse(self) -> "Matrix":
        """The inverse of a square invertible matrix.

        >>> [[str(x) for x in r] for r in Matrix.rational([[2, 0], [0, 4]]).inverse().entries]
        [['1/2', '0'], ['0', '1/4']]
        """
        with self.field.working():
            return self._from_flint(self._flint().inv())

    def is_zero(self) -> bool:
        """Whether every entry is zero (exact fields only)."""
        self._exact("a zero test")
        return bool(self.field.is_zero(self.entries).all())

    # -- products and solves (every field) -------------------------------------------
    def __matmul__(self, other: "Matrix") -> "Matrix":
        with self.field.working():
            return self._from_flint(self._flint() * other._flint())

    def __sub__(self, other: "Matrix") -> "Matrix":
        with self.field.working():
            return self._from_flint(self._flint() - other._flint())

    @property
    def T(self) -> "Matrix":
        out = Matrix(np.zeros((0, 0), dtype=int), self.field)
        out.entries = self.entries.T.copy()
        return out

    def solve(self, rhs: "Matrix") -> "Matrix":
        """``X`` with ``self X = rhs`` (square invertible ``self``)."""
        with self.field.working():
            return self._from_flint(self._flint().solve(rhs._flint()))

    def real_eigenvalues(self, vectors: bool = False) -> tuple[list, "np.ndarray | None"]:
        """Approximate eigenvalues (descending midpoints) of a ball matrix with real
        spectrum, and with ``vectors`` its right eigenvectors (columns, rescaled
        by their largest entry to be real).

        >>> lam, _ = Matrix([[2, 1], [1, 2]], Balls(64)).real_eigenvalues()
        >>> [float(x) for x in lam]
        [3.0, 1.0]
        """
        if not isinstance(self.field, Balls):
            raise InternalError("eigenvalues are computed over balls only")
        with self.field.working():
            K = self._flint()
            res = flint.acb_mat(K).eig(right=vectors, algorithm="approx")
            values, vecs = (res if vectors else (res, None))
            order = sorted(range(len(values)), key=lambda i: -float(values[i].real.mid()))
            lam = [values[i].real.mid() for i in order]
            if not vectors:
                return lam, None
            n = K.nrows()
            V = np.empty((n, len(order)), dtype=object)
            for c, i in enumerate(order):
                col = [vecs[r, i] for r in range(n)]  # type: ignore[index]  # vectors: not None
                pivot = max(col, key=lambda z: float(abs(z).mid()))
                for r in range(n):
                    V[r, c] = (col[r] / pivot).real.mid()
            return lam, V


def identity_matrix(n: int) -> np.ndarray:
    """The exact ``n x n`` identity (object array of Fractions).

    >>> identity_matrix(2).tolist()
    [[Fraction(1, 1), Fraction(0, 1)], [Fraction(0, 1), Fraction(1, 1)]]
    """
    out = np.full((n, n), Fraction(0), dtype=object)
    for a in range(n):
        out[a, a] = Fraction(1)
    return out


def is_zero(A: np.ndarray) -> bool:
    """Whether every entry of an exact array (any shape) is zero.

    >>> is_zero(np.array([[0, Fraction(0)]], dtype=object)), is_zero([[0, 1]])
    (True, False)
    """
    return all(v == 0 for v in np.asarray(A, dtype=object).flat)


def symmetric_part(M: np.ndarray) -> np.ndarray:
    """``sym M = (M + M^T) / 2``, exact.

    >>> symmetric_part(np.array([[0, 1], [0, 0]], dtype=object)).tolist()
    [[Fraction(0, 1), Fraction(1, 2)], [Fraction(1, 2), Fraction(0, 1)]]
    """
    return (M + M.T) * Fraction(1, 2)


#: The prime of the modular rank bound of :func:`fmpq_rank` (``rank over Q >= rank mod p``
#: for an integer matrix).
RANK_PRIME = 2 ** 61 - 1


def fmpq_is_zero(m: flint.fmpq_mat) -> bool:
    """Whether a python-flint rational matrix is zero (exact).

    >>> fmpq_is_zero(flint.fmpq_mat(2, 2)), fmpq_is_zero(flint.fmpq_mat(1, 1, [1]))
    (True, False)
    """
    return m == flint.fmpq_mat(m.nrows(), m.ncols())


def fmpq_rank(m: flint.fmpq_mat, bound: int | None = None) -> int:
    """The exact rank over Q of a python-flint rational matrix. The rank mod
    :data:`RANK_PRIME` of the integer matrix ``den * m`` is a lower bound; when it
    reaches ``bound`` (an upper bound: the smaller dimension, or the inner dimension
    of a product) it is the rank. Otherwise the exact rational elimination decides.

    >>> fmpq_rank(flint.fmpq_mat(2, 2, [1, 2, 2, 4]))
    1
    """
    bound = min(m.nrows(), m.ncols()) if bound is None else min(bound, m.nrows(), m.ncols())
    numer, _ = m.numer_denom()
    if flint.nmod_mat(numer, RANK_PRIME).rank() == bound:
        return bound
    return m.rank()


def kernel_complement(vectors: Sequence[np.ndarray], size: int) -> np.ndarray:
    """An integer basis (columns) of the orthogonal complement of the span of
    exact rational ``vectors`` in Q^size (python-flint ``fmpz_mat.nullspace``).

    >>> B = kernel_complement([np.array([Fraction(1, 2), Fraction(-1, 2)])], 2)
    >>> B.shape, B[0, 0] == B[1, 0] != 0
    ((2, 1), True)
    """
    if not len(vectors):
        return np.array([[int(i == j) for j in range(size)] for i in range(size)], dtype=object)
    rows = []
    for v in vectors:
        q = [Fraction(x) if not isinstance(x, flint.fmpq) else Fraction(int(x.p), int(x.q)) for x in v]
        den = math.lcm(*[x.denominator for x in q])
        rows.append([int(x * den) for x in q])
    basis, nullity = flint.fmpz_mat(rows).nullspace()
    out = np.empty((size, nullity), dtype=object)
    for i in range(size):
        for j in range(nullity):
            out[i, j] = int(basis[i, j])
    return out


class SeriesMatrix:
    """A matrix over ``k[[t]] / t^N``: coefficients ``(N, m, n)`` of ``algebra``.

    Examples
    --------
    >>> from symattn.core.algebras import exact_series
    >>> A = exact_series(4)
    >>> J = SeriesMatrix(A, A.series([[[1, 0], [0, 0]], [[0, 0], [0, 0]], [[0, 0], [0, 1]]]))
    >>> J.smith_orders()
    ([0, 2], 0)
    >>> J.rank_profile()
    [1, 1, 2, 2]
    """

    def __init__(self, algebra: SeriesAlgebra, coefficients: np.ndarray):
        self.algebra = algebra
        self.coefficients = coefficients

    @property
    def field(self) -> Field:
        return self.algebra.field

    def coefficient(self, j: int) -> Matrix:
        """The matrix of ``t^j`` coefficients over ``k``."""
        return Matrix(self.coefficients[j], self.field)

    def smith_orders(self) -> tuple[list[int], int]:
        """Smith orders over ``k[[t]]``: pivots on an entry of least valuation and
        eliminates its column by row operations over ``k[[t]]`` (exact mod ``t^N``).

        Returns the sorted pivot orders below the truncation and the number of
        remaining columns that are zero to that precision (undecided: exact
        zeros or orders >= ``N``). Over F_p a whole block of pivots of one
        valuation is eliminated at once (:func:`~symattn.core.series_mod_p.smith_pivots_mod_p`).
        """
        algebra = self.algebra
        N = algebra.order
        if isinstance(self.field, PrimeField):  # one valuation level at a time, BLAS products
            pivots, undecided = smith_pivots_mod_p(np.asarray(self.coefficients, dtype=np.int64), N, self.field.p)
            return sorted(v for v, _ in pivots), undecided
        J = np.array(self.coefficients, copy=True)
        rows, cols = list(range(J.shape[1])), list(range(J.shape[2]))
        orders: list[int] = []
        while rows and cols:
            val = algebra.valuation(J[:, rows][:, :, cols])
            v = int(val.min())
            if v >= N:
                break
            i, j = np.unravel_index(int(np.argmin(val)), val.shape)
            pr, pc = rows.pop(i), cols.pop(j)
            orders.append(v)
            if not rows or not cols:
                break
            short = SeriesAlgebra(algebra.field, N - v)
            inv = short.reciprocal(J[v:, pr, pc][:, None])
            q = algebra.const(np.zeros((len(rows), 1), dtype=int))
            q[: N - v] = short.mul(J[v:, rows, pc][:, :, None], inv)
            update = algebra.mul(q, J[:, pr, cols][:, None, :])
            J[np.ix_(range(N), rows, cols)] = algebra.sub(J[:, rows][:, :, cols], update)
        return sorted(orders), len(cols)

    def prefix_smith_orders(self, sizes: Sequence[int]) -> list[tuple[list[int], int]]:
        """:meth:`smith_orders` of the first ``sizes[k]`` columns, for every ``k``.

        Over F_p one elimination of all columns serves every prefix whose own elimination it
        contains: :func:`~symattn.core.series_mod_p.smith_pivots_mod_p` takes the pivots of a level
        column by column from the first, so a prefix's pivots are chosen as they would be alone, and its columns are
        updated by its own pivots only as long as no later column has given a pivot; a prefix
        for which a later column gave a pivot before all of the prefix's columns were
        eliminated is eliminated again, alone. Over Q every prefix is eliminated alone.

        >>> from symattn.core.algebras import modular_series
        >>> A = modular_series(4, p=7)
        >>> J = SeriesMatrix(A, A.series([[[1, 0, 1], [0, 0, 0]], [[0, 0, 0], [0, 1, 0]]]))
        >>> J.prefix_smith_orders([1, 2, 3])       # columns e_1, t e_2, e_1: the last one dependent
        [([0], 0), ([0, 1], 0), ([0, 1], 1)]
        """
        sizes = [int(n) for n in sizes]
        if not isinstance(self.field, PrimeField) or not sizes:
            return [SeriesMatrix(self.algebra, self.coefficients[:, :, :n]).smith_orders() for n in sizes]
        J = np.asarray(self.coefficients, dtype=np.int64)
        pivots, _ = smith_pivots_mod_p(J[:, :, : max(sizes)], self.algebra.order, self.field.p)
        out = []
        for n in sizes:
            own = [(v, c) for v, c in pivots if c < n]
            contained = all(sum(1 for w, _ in own if w <= v) == n for v, c in pivots if c >= n)
            if contained:
                out.append((sorted(v for v, _ in own), n - len(own)))
            else:
                out.append(SeriesMatrix(self.algebra, J[:, :, :n]).smith_orders())
        return out

    def rank_profile(self) -> list[int]:
        """``rank`` of the stacked coefficient matrices of ``t^0..t^j``, for every ``j``
        (exact over Q or F_p; only an echelon basis is carried from one ``j`` to the next)."""
        J = self.coefficients
        n = J.shape[2]
        basis = np.zeros((0, n), dtype=self.field.dtype)
        out = []
        for j in range(J.shape[0]):
            stack = np.concatenate([basis, J[j]]) if J.shape[1] else basis
            echelon, pivots = Matrix(stack, self.field).rref()
            basis = echelon.entries
            out.append(len(pivots))
        return out
