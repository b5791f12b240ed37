"""Matrices of power series mod ``(t^N, p)``: Smith pivots, products and Newton inverses.

The modular route of :meth:`symattn.core.linalg.SeriesMatrix.smith_orders`:
:func:`smith_pivots_mod_p` eliminates one valuation level at a time by Schur
complements, whose products and inverses of series matrices run as BLAS
products per power of ``t`` (:func:`matmul_mod`: exact residues through
float64) or, for long truncations, in python-flint ``nmod_poly`` entries with
the inverse by Newton's iteration (the precision doubles at each step). What a
modular answer proves is stated in :mod:`symattn.core.certify`.
"""

from __future__ import annotations

import flint
import numpy as np

from symattn.core.errors import InternalError

__all__ = ["FAST_SERIES_MATMUL_ORDER", "matmul_mod", "smith_pivots_mod_p"]


def _complement(n: int, idx) -> np.ndarray:
    """The indices ``0..n-1`` not in ``idx``, ascending (``np.setdiff1d`` without its
    ``np.unique``, which imports ``numpy.ma``: start-up time of the commands).

    >>> _complement(5, [3, 0]).tolist()
    [1, 2, 4]
    """
    keep = np.ones(n, dtype=bool)
    keep[np.asarray(idx, dtype=np.intp)] = False
    return np.flatnonzero(keep)


def smith_pivots_mod_p(J: np.ndarray, N: int, p: int) -> tuple[list[tuple[int, int]], int]:
    """:meth:`~symattn.core.linalg.SeriesMatrix.smith_orders` over F_p[[t]], one valuation level at a time: the pivots
    ``(order, column of J)`` in the order they are taken, and the number of columns left (undecided).

    At level ``v`` every coefficient below ``t^v`` is zero; the rank ``rho`` of
    the ``t^v`` coefficient is the number of Smith orders equal to ``v``. An
    invertible ``rho x rho`` block of it (Gaussian elimination mod p) is
    eliminated at once: the Schur complement ``M' = M_22 - M_21 B^-1 M_12`` of
    the block ``B = t^v B~`` (``B~`` a unit over F_p[[t]]) is a unimodular
    transformation, vanishes at ``t^v`` and has the remaining Smith orders.
    Products of series matrices use :func:`matmul_mod` (exact, float64 BLAS).
    """
    M = J % p
    pivots: list[tuple[int, int]] = []
    where = np.arange(M.shape[2])  # the column of J of each column of M
    v = 0
    while v < N and M.shape[1] and M.shape[2]:
        if not M[v].any():
            v += 1
            continue
        rows, cols = _pivots_mod_p(M[v], p)
        pivots += [(v, int(where[c])) for c in cols]
        rest_r, rest_c = _complement(M.shape[1], rows), _complement(M.shape[2], cols)
        where = where[rest_c]
        T = M[v:][:, rest_r][:, :, cols]
        B = M[v:][:, rows][:, :, cols]
        S = M[v:][:, rows][:, :, rest_c]
        K = N - v
        tail = (M[v:][:, rest_r][:, :, rest_c] - _schur_update(T, B, S, K, p)) % p
        if tail[0].any():
            raise InternalError("the Schur complement does not vanish at its level")  # pragma: no cover
        M = np.zeros((N, len(rest_r), len(rest_c)), dtype=np.int64)
        M[v:] = tail
        v += 1
    return pivots, int(M.shape[2])


def _pivots_mod_p(A: np.ndarray, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of an invertible ``rank x rank`` block of ``A`` mod p
    (Gaussian elimination with row pivoting; columns taken first to last)."""
    A = A % p
    m, n = A.shape
    order = np.arange(m)
    rows, cols, r = [], [], 0
    for j in range(n):
        if r == m:
            break
        nz = np.flatnonzero(A[r:, j])
        if not len(nz):
            continue
        i = r + int(nz[0])
        if i != r:
            A[[r, i]] = A[[i, r]]
            order[[r, i]] = order[[i, r]]
        A[r, j:] = A[r, j:] * pow(int(A[r, j]), -1, p) % p
        below = A[r + 1:, j]
        hit = np.flatnonzero(below)
        if len(hit):
            A[r + 1 + hit, j:] = (A[r + 1 + hit, j:] - np.outer(below[hit], A[r, j:])) % p
        rows.append(int(order[r]))
        cols.append(j)
        r += 1
    return np.array(rows, dtype=int), np.array(cols, dtype=int)


#: From this truncation on, :func:`_schur_update` works on one ``nmod_poly`` per entry (fast
#: multiplication: Karatsuba/FFT inside ``mul_low``, the inverse by Newton's iteration) instead of
#: one BLAS product per power (``O(K^2)`` products).
FAST_SERIES_MATMUL_ORDER = 600


def _schur_update(T: np.ndarray, B: np.ndarray, S: np.ndarray, K: int, p: int) -> np.ndarray:
    """``T B^-1 S`` mod ``(t^K, p)`` for matrices of series (coefficients first; the constant term of
    the square ``B`` invertible): by powers with BLAS products below :data:`FAST_SERIES_MATMUL_ORDER`,
    from it in polynomials (:func:`_polynomial_inverse`, :func:`_polynomial_matmul`), converted once.

    >>> B = np.array([[[2]], [[1]], [[0]]]); T = np.array([[[1]], [[0]], [[3]]]); S = np.array([[[1]], [[1]], [[0]]])
    >>> _schur_update(T, B, S, 3, 7).ravel().tolist()      # (1 + 3t^2)(1 + t)/(2 + t) mod (t^3, 7)
    [4, 2, 4]
    >>> bool((_schur_update(T, B, S, 3, 7) == _polynomial_schur_update(T, B, S, 3, 7)).all())
    True
    """
    if K >= FAST_SERIES_MATMUL_ORDER:
        return _polynomial_schur_update(T, B, S, K, p)
    return _series_matmul_mod_p(_series_matmul_mod_p(T, _series_inverse_mod_p(B, K, p), K, p), S, K, p)


def _polynomial_schur_update(T: np.ndarray, B: np.ndarray, S: np.ndarray, K: int, p: int) -> np.ndarray:
    """:func:`_schur_update` in ``nmod_poly`` entries: each matrix converted once, the product
    read back once."""
    Tp, Bp, Sp = (_to_polynomials(M, K, p) for M in (T, B, S))
    update = _polynomial_matmul(_polynomial_matmul(Tp, _polynomial_inverse(Bp, K, p), K, p), Sp, K, p)
    out = np.zeros((K, len(update), len(update[0]) if update else 0), dtype=np.int64)
    for i, row in enumerate(update):
        for j, f in enumerate(row):
            cs = [int(c) for c in f.coeffs()]
            out[: len(cs), i, j] = cs
    return out


def _to_polynomials(M: np.ndarray, K: int, p: int) -> list[list]:
    """The entries of a coefficient array ``(K', m, n)`` as ``nmod_poly`` mod ``t^K``."""
    cols = np.ascontiguousarray(np.moveaxis(M[:K] % p, 0, -1))
    return [[flint.nmod_poly(cols[i, j].tolist(), p) for j in range(M.shape[2])] for i in range(M.shape[1])]


def _polynomial_matmul(a: list[list], b: list[list], K: int, p: int) -> list[list]:
    """The product of two matrices of ``nmod_poly`` series mod ``t^K`` (``mul_low``)."""
    out = []
    for row in a:
        line = []
        for j in range(len(b[0]) if b else 0):
            acc = flint.nmod_poly([], p)
            for x, col in zip(row, b):
                if x and col[j]:
                    acc += x.mul_low(col[j], K)
            line.append(acc)
        out.append(line)
    return out


def _polynomial_inverse(b: list[list], K: int, p: int) -> list[list]:
    """The inverse mod ``t^K`` of a square matrix of ``nmod_poly`` series whose constant term is
    invertible mod p, by Newton's iteration ``X <- X + X (I - B X)`` (the precision doubles each
    step: about four matrix products at length ``K`` in all, not ``K`` of them).

    >>> B = [[flint.nmod_poly([1, 1], 5)]]                       # 1 + t
    >>> _polynomial_inverse(B, 4, 5)[0][0].coeffs()              # 1 - t + t^2 - t^3 mod 5
    [1, 4, 1, 4]
    """
    r = len(b)
    inv = flint.nmod_mat(r, r, [int(f[0]) for row in b for f in row], p).inv()
    X = [[flint.nmod_poly([int(inv[i, j])], p) for j in range(r)] for i in range(r)]
    m = 1
    while m < K:
        m = min(2 * m, K)
        BX = _polynomial_matmul(b, X, m, p)
        E = [[(1 if i == j else 0) - BX[i][j] for j in range(r)] for i in range(r)]
        XE = _polynomial_matmul(X, E, m, p)
        X = [[X[i][j] + XE[i][j] for j in range(r)] for i in range(r)]
    return X


def _series_matmul_mod_p(A: np.ndarray, B: np.ndarray, K: int, p: int) -> np.ndarray:
    """The product of two matrices of series mod ``(t^K, p)`` (coefficients first), one BLAS product
    per power of ``t``.

    >>> A = np.arange(8).reshape(2, 2, 2) % 5
    >>> _series_matmul_mod_p(A, A, 2, 5)[:, 0].tolist()
    [[2, 3], [1, 1]]
    """
    out = np.zeros((K, A.shape[1], B.shape[2]), dtype=np.int64)
    small = A.shape[2] * K < 2**17  # all K * inner products of one entry fit in int64
    for i in range(K):
        if A[i].any():
            if small:
                out[i:] += np.matmul(A[i], B[: K - i])
            else:
                out[i:] = (out[i:] + matmul_mod(A[i], B[: K - i], p)) % p
    return out % p


def _series_inverse_mod_p(B: np.ndarray, K: int, p: int) -> np.ndarray:
    """The inverse of a square matrix of series mod ``(t^K, p)`` whose constant term is
    invertible: ``X_0 = B_0^-1``, ``X_k = -X_0 sum_{j=1..k} B_j X_{k-j}``."""
    r = B.shape[1]
    X = np.zeros((K, r, r), dtype=np.int64)
    inv = flint.nmod_mat(r, r, B[0].ravel().tolist(), p).inv()
    X[0] = np.array([int(e) for e in inv.entries()], dtype=np.int64).reshape(r, r)
    support = [j for j in range(1, K) if B[j].any()]
    for k in range(1, K):
        js = [j for j in support if j <= k]
        if js:  # sum_j B_j X_{k-j} as one product: [B_j1 B_j2 ...] [X_{k-j1}; X_{k-j2}; ...]
            left = np.concatenate([B[j] for j in js], axis=1)
            right = np.concatenate([X[k - j] for j in js], axis=0)
            if r * K < 2**17:  # int64 holds the sums
                X[k] = (-np.matmul(X[0], np.matmul(left, right) % p)) % p
            else:
                X[k] = (-matmul_mod(X[0], matmul_mod(left, right, p), p)) % p
    return X


def matmul_mod(C: np.ndarray, J: np.ndarray, p: int) -> np.ndarray:
    """``C @ J mod p`` for residues below ``2^23`` (``C`` 2-D, ``J`` batched), exactly,
    with float64 BLAS: the contraction is cut into pieces of 128 terms, whose sums of
    products stay below ``2^53`` (exact in binary64), and the pieces are added in int64.

    >>> C = np.array([[8388592, 2]]); J = np.array([[[8388592], [3]]])
    >>> matmul_mod(C, J, 8388593).tolist()        # (-1)(-1) + 2 * 3 = 7
    [[[7]]]
    """
    if p >= 2**23:
        raise InternalError("matmul_mod needs a prime below 2^23")  # pragma: no cover
    batch, (R, c) = J.shape[:-2], J.shape[-2:]
    flat = np.moveaxis(J, -2, 0).reshape(R, -1)  # one matrix product for the whole batch
    live = np.flatnonzero(flat.any(axis=0))  # zero columns (e.g. odd t-powers of value columns) stay zero
    flat = flat[:, live]
    Cf = C.astype(np.float64)
    part = np.zeros((C.shape[0], len(live)), dtype=np.int64)
    for k, start in enumerate(range(0, R, 128)):
        if k and k % 512 == 0:
            part %= p
        part += (Cf[:, start:start + 128] @ flat[start:start + 128].astype(np.float64)).astype(np.int64)
    out = np.zeros((C.shape[0], int(np.prod(batch, dtype=int)) * c), dtype=np.int64)
    out[:, live] = part % p
    return np.moveaxis(out.reshape((C.shape[0],) + batch + (c,)), 0, -2)
