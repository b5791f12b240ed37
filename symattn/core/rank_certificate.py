"""Certified lower bounds on the rank of a matrix of balls.

:func:`certified_rank` proves ``rank J >= r`` for every real matrix inside
binary64 balls ``mid +- rad``: Weyl's inequality on ``X^T J Y`` (``X, Y`` float64
singular vectors of the midpoints, every rounding bounded), weak directions
through their own enclosures and a Schur complement, and, as a high-precision
stage, a ``k x k`` minor whose python-flint ball determinant excludes 0
(:func:`ball_minor_rank`, columns chosen by :func:`pivot_columns`). What is
proved is stated in a :class:`RankCertificate`; the numerical rank of the
midpoints is reported beside it, never in its place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import flint
import numpy as np

from symattn.core.algebras.balls import ETA, U, Precise, digits_to_bits, floating_point_undecided, gamma, precision
from symattn.core.errors import InternalError, Undecided

__all__ = ["RankCertificate", "ball_minor_rank", "certified_rank", "pivot_columns"]


def pivot_columns(M: np.ndarray, digits: int | None = None) -> list[int]:
    """Columns of ``M`` chosen by Gram-Schmidt with column pivoting, strongest first, while the
    remaining norm exceeds a floor times the largest column norm: in float64 with the floor
    ``10^-10`` when ``digits`` is None, else in mpmath at ``digits`` digits with the floor
    ``10^(-3 digits / 4)``. ``M`` holds balls (their midpoints are used), integers or floats.
    Numerical: it only chooses which minor :func:`ball_minor_rank` tries.

    >>> pivot_columns(np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 1.0]]))
    [1, 2]
    >>> pivot_columns(np.array([[1, 2, 0], [0, 0, 1]], dtype=object), digits=30)
    [1, 2]
    """
    M = np.asarray(M)
    if digits is None:
        mid = (lambda v: float(v.mid())) if M.dtype == object else float
        r = np.vectorize(mid, otypes=[float])(M) if M.size else np.zeros(M.shape)
        top = float(np.linalg.norm(r, axis=0).max()) if r.size else 0.0
        chosen: list[int] = []
        for _ in range(min(r.shape)):
            norms = np.linalg.norm(r, axis=0)
            norms[chosen] = -1.0
            j = int(np.argmax(norms))
            if not norms[j] > 1e-10 * top:
                break
            chosen.append(j)
            q = r[:, j] / norms[j]
            r -= np.outer(q, q @ r)
        return chosen
    import mpmath

    ctx = mpmath.mp.clone()
    ctx.dps = digits
    A: Any = np.array([[ctx.mpf(v.mid().str(digits + 5, radius=False) if hasattr(v, "mid") else str(v))
                        for v in row] for row in M], dtype=object).reshape(M.shape)
    norms = [ctx.sqrt(sum(x * x for x in A[:, j])) for j in range(A.shape[1])]
    floor = max(norms, default=ctx.mpf(0)) * ctx.mpf(10) ** (-(3 * digits // 4))
    chosen = []
    while len(chosen) < min(A.shape):
        norms = [ctx.mpf(0) if j in chosen else ctx.sqrt(sum(x * x for x in A[:, j])) for j in range(A.shape[1])]
        j = max(range(A.shape[1]), key=lambda k: norms[k])
        if not norms[j] > floor:
            break
        chosen.append(j)
        q = A[:, j] / norms[j]
        A = A - np.outer(q, q.dot(A))
    return chosen


def ball_minor_rank(A: np.ndarray, digits: int, pivot_digits: int | None = None, max_size: int | None = None,
                    attempts: int | None = None, above: int = 0) -> tuple[int, int]:
    """``(certified, numerical)`` for a matrix ``A`` of balls (python-flint ``arb``): ``numerical``
    is the number of columns :func:`pivot_columns` chooses on the midpoints (at ``pivot_digits``;
    at most ``max_size``), and ``certified`` the largest ``k`` tried whose ``k x k`` minor (the
    first ``k`` chosen columns, rows chosen the same way on them) has a determinant ball at
    ``digits`` digits excluding 0: a proved lower bound ``rank A >= certified``. The sizes tried
    are ``numerical, numerical - 1, ...`` down to ``above + 1`` (0 when none is certified) or, with
    ``attempts``, at most that many, each a quarter smaller than the last (a bounded cost). The
    high-precision stage of :func:`certified_rank`.

    >>> import flint
    >>> A = np.array([[flint.arb(1), flint.arb(2)], [flint.arb(2), flint.arb(4)]], dtype=object)
    >>> ball_minor_rank(A, 30)
    (1, 1)
    >>> ball_minor_rank(np.array([[flint.arb(1), flint.arb(0)], [flint.arb(0), flint.arb(1)]]), 30)
    (2, 2)
    """
    A = np.asarray(A, dtype=object)
    chosen = pivot_columns(A, pivot_digits)[:max_size]
    numerical, k, tried = len(chosen), len(chosen), 0
    with precision(digits_to_bits(digits)):
        while k > above and (attempts is None or tried < attempts):
            cols = chosen[:k]
            rows = pivot_columns(A[:, cols].T, pivot_digits)
            tried += 1
            if len(rows) == k and not flint.arb_mat([[A[r, c] for c in cols] for r in rows]).det().contains(0):
                return k, numerical
            k = k - 1 if attempts is None else k * 3 // 4
    return 0, numerical


@dataclass
class RankCertificate:
    """What :func:`certified_rank` proved: every real matrix inside the balls has rank at least
    :attr:`rank` (a theorem: Weyl's inequality, a Schur complement, rigorous error bounds; see
    :func:`certified_rank`). :attr:`numerical` is the numerical rank of the midpoints (not proved);
    :attr:`strong` directions are certified by Weyl's inequality on the whole enclosure,
    :attr:`weak` more through their own enclosures (a Schur complement), :attr:`minor` by a
    nonzero ball determinant (:func:`ball_minor_rank`, the high-precision stage)."""

    rank: int
    numerical: int
    strong: int = 0
    weak: int = 0
    minor: int = 0
    #: the radius term ``||X|| ||rad||_F ||Y||`` of the strong stage, relative to ``sigma_1`` (numerical)
    relative_error: float = 0.0

    @property
    def method(self) -> str:
        """How :attr:`rank` was proved, in words."""
        parts = []
        if self.strong or self.weak:
            parts.append(f"sigma_min of the {self.strong + self.weak} x {self.strong + self.weak} matrix X^T J Y "
                         f"bounded below by Weyl's inequality (X, Y float64 singular vectors of the midpoints; "
                         f"every rounding bounded)" + (f", {self.weak} weak direction(s) through their own "
                                                       f"enclosures J y and a Schur complement" if self.weak else ""))
        if self.minor:
            parts.append(f"a {self.minor} x {self.minor} minor whose ball determinant excludes 0")
        return "; ".join(parts) or "nothing certified"


def _up(x: float) -> float:
    return math.nextafter(x, math.inf)


def _down(x: float) -> float:
    return math.nextafter(x, -math.inf)


def _fro_up(A: np.ndarray) -> float:
    """An upper bound of the Frobenius norm of the binary64 array ``A`` (its entries exact):
    ``fl(sum a^2)`` is at least ``(1 - gamma_N)(1 - U)`` of ``sum a^2`` minus ``N ETA`` (squares that
    underflow), and ``sqrt`` is correctly rounded.

    >>> _fro_up(np.array([[3.0, 4.0]])) >= 5.0
    True
    """
    A = np.asarray(A, dtype=np.float64)
    if not A.size:
        return 0.0
    with floating_point_undecided():
        total = float(np.sum(np.square(A)))
    N = A.size
    return _up(math.sqrt(_up(_up(total + N * ETA) * _up(1.0 + 2 * gamma(N + 1)))))


def _prefix_fro_up(O: np.ndarray) -> np.ndarray:
    """Upper bounds of ``||O[:j, :j]||_F`` for ``j = 1..k`` (``O`` square, binary64, its entries
    exact): the two cumulative sums add each square through at most ``2 k`` roundings."""
    k = O.shape[0]
    if not k:
        return np.zeros(0)
    with floating_point_undecided():
        cum = np.cumsum(np.cumsum(np.square(O), axis=0), axis=1)
    squares = np.diagonal(cum).copy()
    factor = _up(1.0 + 2 * gamma(2 * k + 2))
    sizes = (np.arange(1, k + 1, dtype=np.float64) ** 2) * ETA  # squares that underflow
    with floating_point_undecided():
        bound = np.nextafter(np.nextafter(squares + sizes, np.inf) * factor, np.inf)
        return np.nextafter(np.sqrt(bound), np.inf)


def _product_error(A: np.ndarray, B: np.ndarray) -> float:
    """An upper bound of ``||fl(A B) - A B||_F``: ``gamma_n |A||B| + n ETA`` entrywise (any order
    of summation, fused multiply-adds or not), and ``|| |A||B| ||_F <= ||A||_F ||B||_F``."""
    n = A.shape[1]
    cells = A.shape[0] * B.shape[1]
    return _up(_up(gamma(n) * _up(_fro_up(A) * _fro_up(B))) + _up(n * ETA * math.sqrt(cells) + ETA))


def _spectral_up(X: np.ndarray) -> float:
    """An upper bound of ``||X||_2``: ``||X||_2^2 = ||X^T X||_2 <= 1 + ||X^T X - I||_F`` (for
    columns near-orthonormal, as singular vectors are), ``X^T X`` computed with its error bound."""
    k = X.shape[1]
    G = X.T @ X
    G[np.diag_indices(k)] -= 1.0  # rounds: |exact - computed| <= U |computed|
    off = _up(_up(_fro_up(G) * (1.0 + 2 * U)) + _product_error(X.T, X))
    return _up(math.sqrt(_up(1.0 + off)))


def certified_rank(J: np.ndarray, at_most: int | None = None,
                   directions: Callable[[np.ndarray], np.ndarray] | None = None, max_weak: int = 64,
                   digits: int | None = None) -> RankCertificate:
    """A proved lower bound on the rank of every real matrix inside the balls ``J``: binary64 balls
    ``(2, m, n)`` (midpoints, radii; :class:`~symattn.core.algebras.Float64Balls`) or an object
    array of python-flint ``arb`` balls (enclosed in binary64 balls first, with the high-precision
    stage below). The one certified rank routine of symattn (the audit's certified tier, the ball
    tier of :func:`~symattn.analyses.dimension.neuromanifold_dimension`).

    The theorem: for any matrices ``X`` (``m x k``) and ``Y`` (``n x k``), ``rank J >= rank(X^T J Y)``.
    ``X``, ``Y`` are the float64 singular vectors of the midpoints (``k`` the numerical rank, at most
    ``at_most``), so ``C = X^T J Y`` is nearly ``D = diag(sigma)``, and

    1. **strong directions**: by Weyl's inequality ``sigma_min(C_j) >= sigma_j - ||C_j - D_j||_F -
       ||E||_F`` for the leading ``j x j`` block, where ``E`` (the enclosure's radius ``||X||_2
       ||rad||_F ||Y||_2`` and the rounding of the float products, ``gamma_n ||A||_F ||B||_F``)
       bounds the difference between the computed and the true ``C``; the largest ``j`` whose
       bound is positive is ``strong``;
    2. **weak directions** (singular values below the radius): with ``directions`` (a map from
       float64 directions ``w x n`` to binary64 balls ``(2, m, w)`` enclosing ``J`` applied to them,
       computed on their own, e.g. as directional derivatives, whose radii scale with the
       direction, not with all of ``J``), the next ``v`` right singular vectors ``Y_W`` give
       ``C = [[C11, C12], [C21, C22]]``; ``C`` is nonsingular when ``C11`` is (step 1) and the
       Schur complement is: ``sigma_min(C22) - ||C21|| ||C12|| / sigma_min(C11) > 0``;
    3. for ``arb`` balls at ``digits`` digits, when the float64 stages fall short of the numerical
       rank at those digits (singular values below ``10^-16 sigma_1``), the high-precision minor of
       :func:`ball_minor_rank`.

    Every norm is an upper bound computed with upward steps (``math.nextafter``) and the error
    bounds of :mod:`symattn.core.algebras.balls`; an overflow raises
    :class:`~symattn.core.errors.Undecided`.

    >>> J = np.zeros((2, 3, 3)); J[0] = [[2, 0, 0], [0, 1, 0], [0, 0, 0]]; J[1] = 1e-3
    >>> c = certified_rank(J)
    >>> c.rank, c.numerical, c.strong
    (2, 2, 2)
    >>> J[1] = 0.6                     # radii too large for the second direction
    >>> certified_rank(J).rank
    1
    """
    arr = np.asarray(J)
    precise = arr.dtype == object
    balls = Precise(arr).enclosure() if precise else arr
    if balls.ndim != 3 or balls.shape[0] != 2:
        raise InternalError(f"certified_rank needs binary64 balls (2, m, n), got shape {balls.shape}")
    mid, rad = np.asarray(balls[0], dtype=np.float64), np.asarray(balls[1], dtype=np.float64)
    m, n = mid.shape
    if not (np.isfinite(mid).all() and np.isfinite(rad).all()) or (rad < 0).any():
        raise Undecided("the balls of the matrix are not finite: no rank certified")
    if precise and directions is None:
        def directions(D: np.ndarray, A: np.ndarray = arr) -> np.ndarray:
            with precision(digits_to_bits(digits or 30)):
                return Precise(np.asarray(A.dot(np.vectorize(flint.arb, otypes=[object])(D.T)), dtype=object)).enclosure()
    out = _certify(mid, rad, at_most, directions, max_weak) if min(m, n) else RankCertificate(0, 0)
    if precise and digits is not None:  # the high-precision stage (small matrices: the ball tier)
        minor, numerical = ball_minor_rank(arr, digits, pivot_digits=digits, max_size=at_most, above=out.rank)
        out.numerical = numerical
        if minor > out.rank:
            out.rank, out.minor, out.strong, out.weak = minor, minor, 0, 0
    return out


def _certify(mid: np.ndarray, rad: np.ndarray, at_most: int | None,
             directions: Callable[[np.ndarray], np.ndarray] | None, max_weak: int) -> RankCertificate:
    """Steps 1 and 2 of :func:`certified_rank` on binary64 balls ``mid +- rad``."""
    m, n = mid.shape
    with floating_point_undecided():
        try:
            Uf, s, Vt = np.linalg.svd(mid, full_matrices=False)
        except np.linalg.LinAlgError as exc:
            raise Undecided(f"the SVD of the midpoints failed ({exc}): no rank certified") from None
        numerical = int((s > s[0] * max(m, n) * np.finfo(np.float64).eps).sum()) if s.size and s[0] > 0 else 0
        k = numerical if at_most is None else min(numerical, int(at_most))
        if k == 0:
            return RankCertificate(0, numerical)
        X, Y, sk = Uf[:, :k], Vt[:k].T, s[:k]
        nX, nY = _spectral_up(X), _spectral_up(Y)
        P1 = mid @ Y
        C = X.T @ P1
        radius = _up(_up(nX * _fro_up(rad)) * nY)
        # ||computed C - X^T J Y||_F: the radius, the rounding of J Y (times ||X||), of X^T (J Y)
        err = _up(_up(radius + _up(nX * _product_error(mid, Y))) + _product_error(X.T, P1))
        O = C.copy()
        O[np.diag_indices(k)] -= sk
        fro = np.nextafter(_prefix_fro_up(O) * (1.0 + 2 * U), np.inf)  # the diagonal's subtraction rounds
        need = np.nextafter(fro + err, np.inf)
        ok = np.flatnonzero(sk > need)
    strong = int(ok[-1]) + 1 if ok.size else 0
    out = RankCertificate(strong, numerical, strong=strong, relative_error=float(radius / s[0]))
    if strong == k or directions is None:
        return out
    w = min(k - strong, max_weak)
    W = np.ascontiguousarray(Y[:, strong:strong + w].T)
    MW = np.asarray(directions(W), dtype=np.float64)  # (2, m, w): encloses J W^T
    if MW.shape != (2, m, w) or not np.isfinite(MW).all():
        raise InternalError(f"the directional enclosure has shape {MW.shape}, not (2, {m}, {w}), or is not finite")
    with floating_point_undecided():
        XW = X[:, :strong + w]
        CW = XW.T @ MW[0]  # (strong + w) x w: [C12; C22]
        errW = _up(_up(nX * _fro_up(MW[1])) + _product_error(XW.T, MW[0]))
        a = _down(sk[strong - 1] - need[strong - 1]) if strong else math.inf  # sigma_min(C11) >= a > 0
        for v in range(w, 0, -1):
            O22 = CW[strong:strong + v, :v].copy()
            O22[np.diag_indices(v)] -= sk[strong:strong + v]
            fro22 = _up(_up(_fro_up(O22) * (1.0 + 2 * U)) + errW)
            schur = 0.0
            if strong:
                n21 = _up(_fro_up(C[strong:strong + v, :strong]) + err)
                n12 = _up(_fro_up(CW[:strong, :v]) + errW)
                schur = _up(_up(n21 * n12) / a)
            if sk[strong + v - 1] > _up(fro22 + schur):
                out.rank, out.weak = strong + v, v
                break
    return out
