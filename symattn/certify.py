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

from .algebras.rational import _to_fmpq

__all__ = ["rank_exact", "rank_mod_p"]


def rank_exact(matrix) -> int:
    """Exact rank over Q of a 2-D array of rationals (python-flint ``fmpq_mat``).

    >>> rank_exact([[1, 2], [2, 4]])
    1
    """
    a = np.asarray(matrix, dtype=object)
    if a.size == 0:
        return 0
    return flint.fmpq_mat(a.shape[0], a.shape[1], [_to_fmpq(v) for v in a.reshape(-1)]).rank()


def rank_mod_p(matrix, p: int) -> int:
    """Rank over F_p of a 2-D integer array already reduced mod ``p``.

    >>> rank_mod_p([[1, 2], [3, 4]], 2)
    1
    """
    a = np.asarray(matrix, dtype=np.int64) % p
    if a.size == 0:
        return 0
    return flint.nmod_mat(a.tolist(), p).rank()
