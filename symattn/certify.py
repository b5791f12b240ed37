"""Exact and modular ranks, and what a modular computation proves.

The certificates symattn relies on (MATH.md, "exactness ladder"):

* a matrix of rationals reduced mod a prime ``p`` (no denominator divisible by
  ``p``) has ``rank_p <= rank_Q``: a nonzero minor mod p is a nonzero rational
  minor, so a full modular rank is an exact lower bound;
* for a matrix of power series the t-adic valuation of every minor can only
  rise under reduction mod p and under a constant left multiplication
  (Cauchy-Binet), so modular Smith orders are *upper bounds* on the cumulative
  orders over Q[[t]]; they are exact when they meet a proven lower bound
  (the divisibility of App. D.2) or a separated divided frame (App. D.3).
"""

from __future__ import annotations

import flint
import numpy as np

from .algebras.rational import to_fmpq

__all__ = ["fmpq_matrix", "nullspace_exact", "rank_exact", "rank_mod_p"]


def fmpq_matrix(matrix) -> flint.fmpq_mat:
    """A python-flint ``fmpq_mat`` from a 2-D array of rationals (exact)."""
    a = np.asarray(matrix, dtype=object)
    return flint.fmpq_mat(a.shape[0], a.shape[1], [to_fmpq(v) for v in a.reshape(-1)])


def nullspace_exact(matrix) -> list[np.ndarray]:
    """A basis of the right null space of a rational matrix (exact, from the rref).

    >>> [list(map(str, v)) for v in nullspace_exact([[1, 2], [2, 4]])]
    [['-2', '1']]
    """
    a = np.asarray(matrix, dtype=object)
    cols = a.shape[1]
    e, r = fmpq_matrix(a).rref()
    pivots, i = [], 0
    for j in range(cols):
        if i < r and e[i, j] != 0:
            pivots.append(j)
            i += 1
    out = []
    for f in (j for j in range(cols) if j not in pivots):
        v = np.array([flint.fmpq(0)] * cols, dtype=object)
        v[f] = flint.fmpq(1)
        for i, p in enumerate(pivots):
            v[p] = -e[i, f]
        out.append(v)
    return out


def rank_exact(matrix) -> int:
    """Exact rank over Q of a 2-D array of rationals (python-flint ``fmpq_mat``).

    >>> rank_exact([[1, 2], [2, 4]])
    1
    """
    a = np.asarray(matrix, dtype=object)
    if a.size == 0:
        return 0
    return fmpq_matrix(a).rank()


def rank_mod_p(matrix, p: int) -> int:
    """Rank over F_p of a 2-D integer array already reduced mod ``p``.

    >>> rank_mod_p([[1, 2], [3, 4]], 2)
    1
    """
    a = np.asarray(matrix, dtype=np.int64) % p
    if a.size == 0:
        return 0
    return flint.nmod_mat(a.tolist(), p).rank()
