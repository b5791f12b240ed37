"""A certified lower bound on the rank of the path Jacobian ``J(t)`` from one point of the path.

The contact spectrum's orders are the Smith orders of ``J(t)`` over ``R[[t]]``; the frame proofs
certify those they reach, and the orders past their truncation stay a *gap*. Where every function
the network applies is real-analytic on the whole path (:func:`analytic_on_path`), a minor of
``J(t)`` that is nonzero at ``t = 1`` has a nonzero Taylor series at 0, so the rank over ``R((t))``
is at least the certified rank of ``J(1)`` (:func:`path_rank`, in balls: **certified**; every
declared symmetry is checked as a kernel vector of ``J(1)`` first). :func:`truncation_orders` and
:func:`rank_route` certify orders from the ranks of the truncations alone, with no exact series.
The arguments are in the functions' Notes.

Examples
--------
>>> from symattn.model.architecture import Architecture
>>> from symattn.analyses.contact import setup
>>> from symattn.model.parameters import random_bank
>>> arch = Architecture.uniform(1, 2, 1, 3, "exp", norm="post")
>>> s = setup(arch, 0, "identity", "constants", None, lambda m: None)
>>> r = path_rank(s, random_bank(arch, 3, 0))
>>> r.rank, r.numerical, r.visible
(9, 9, 9)
>>> analytic_on_path(Architecture.uniform(1, 2, 1, 3, "exp", norm="post", eps=0))
'a LayerNorm with eps = 0 (1/sqrt of a variance that may vanish on the path)'
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from symattn.core.errors import CheckFailed, Undecided
from symattn.model.architecture import Architecture

__all__ = ["PathRank", "path_rank", "analytic_on_path", "truncation_orders", "rank_route", "PATH_RANK_DIGITS",
           "PATH_RANK_SECONDS", "RANK_ROUTE_DIGITS", "RANK_ROUTE_ORDER"]

#: Digits of the balls of ``J(1)`` at first (doubled while the certified rank grows, as in the ball
#: tier of the dimension: :func:`~symattn.analyses.dimension._ball_rank`).
PATH_RANK_DIGITS = 60

#: Seconds :func:`path_rank` may spend: the next precision only while four times the last one's
#: time fits what is left.
PATH_RANK_SECONDS = 120.0


@dataclass
class PathRank:
    """What :func:`path_rank` proved: ``rank J(t) >= rank`` over ``R((t))`` on the ``visible`` columns
    (certified), with the numerical rank of ``J(1)`` at ``digits`` digits beside it (not proved)."""

    rank: int
    numerical: int
    visible: int
    digits: int
    seconds: float

    def finite(self, proved: int) -> int:
        """How many orders past the ``proved`` ones this rank shows to be finite."""
        return max(0, self.rank - proved)

    def note(self, proved: int, order: int) -> str:
        """The certificate in words, for a spectrum that proved ``proved`` orders mod ``t^order``."""
        finite = self.finite(proved)
        what = (f"so {finite} more orders are finite (>= t^{order}: finite, their values not proved)"
                if finite else "no more than the orders proved")
        return (f"path rank: rank J(t) >= {self.rank} over R((t)) on the {self.visible} visible columns, certified: "
                f"a {self.rank} x {self.rank} minor of J at the path point t = 1 (the same bank; python-flint balls "
                f"at {self.digits} digits) is nonzero, and every function of the network is real-analytic on the "
                f"path, so that minor's series is not zero; {what}; the unexplained kernel is at most "
                f"{self.visible - self.rank}")


def analytic_on_path(arch: Architecture) -> str | None:
    """None where every function the network applies is real-analytic along the whole path (every
    ``t`` in ``R``): normalizers derived positive and analytic on ``R``
    (:attr:`~symattn.model.normalizer.Normalizer.real_line`), analytic activations,
    LayerNorms with ``eps > 0``; else the reason, in words.

    Parameters
    ----------
    arch : Architecture
        The architecture.

    Returns
    -------
    str or None
    """
    for layer in arch.layers:
        line = layer.normalizer.real_line  # derived from the expression, never by name
        if not (line.positive and line.analytic):
            return (f"the normalizer {layer.normalizer.name} is not proved positive and real-analytic on all of R "
                    "(analytic near 0 only, perhaps not on the whole path)")
        if layer.has_norm and layer.eps <= 0:
            return "a LayerNorm with eps = 0 (1/sqrt of a variance that may vanish on the path)"
        if layer.mlp and not layer.activation.is_analytic:
            return f"the activation {layer.activation} is not analytic"
    return None


def path_rank(s, X: np.ndarray, seconds: float | None = None) -> PathRank:
    """The certified rank of ``J(1)`` on the visible columns of the setup ``s`` (a
    :class:`~symattn.analyses.contact.Setup`) for the bank ``X``: a lower bound on the rank of
    ``J(t)`` over ``R((t))`` (Notes). The digits start at :data:`PATH_RANK_DIGITS` and
    double until the rank is all the visible columns, or certified and numerical ranks agree with
    the previous level's, or the next level would not fit ``seconds`` (default
    :data:`PATH_RANK_SECONDS`): :func:`~symattn.analyses.dimension._ball_rank`, the ball tier's.
    :class:`~symattn.core.errors.Undecided` where the network is not analytic on the path;
    :class:`~symattn.core.errors.CheckFailed` where a declared symmetry is not a kernel vector of
    ``J(1)``.

    Parameters
    ----------
    s : Setup
        The contact setup (:class:`~symattn.analyses.contact.Setup`).
    X : numpy.ndarray
        The bank.
    seconds : float, optional
        The time the doubling may take (default :data:`PATH_RANK_SECONDS`).

    Returns
    -------
    PathRank

    Raises
    ------
    Undecided
        No rank could be certified.
    CheckFailed
        The Jacobian at the path point ``t = 1`` fails its check.

    Notes
    -----
    The contact spectrum's orders are the Smith orders of ``J(t)`` over ``R[[t]]``; their number is the
    rank of ``J(t)`` over ``R((t))``. Orders past the frame proofs' truncation stay a *gap*: visible
    columns that vanish mod ``t^N``, a kernel no declared symmetry explains or orders past ``t^N``,
    which the series alone cannot tell apart. One point can: where every function the network applies is
    real-analytic on the whole path (the catalogue normalizers, analytic activations, LayerNorms with
    ``eps > 0``), every ``k x k`` minor of ``J(t)`` is real-analytic on an interval containing ``[0, 1]``,
    so a minor nonzero at ``t = 1`` has a nonzero Taylor series at ``0`` (the identity theorem). ``J(1)``
    is the Jacobian of the same bank at the path's point ``Q = U, K = W`` (its other blocks fixed), in
    python-flint balls; its rank on the visible columns is certified by
    :func:`~symattn.core.rank_certificate.certified_rank` (Weyl's inequality, else a minor whose
    determinant ball excludes 0). The gap's orders that this rank exceeds the proved ones by are then
    finite (``>= t^N``), and the unexplained kernel is at most ``visible - rank``. The check that can
    fail: every declared symmetry is a kernel vector of ``J(1)`` (each entry of ``J(1) xi`` a ball
    containing 0), so a wrong point, bank or Jacobian shows before its rank is used.
    """
    from symattn.analyses.dimension import _ball_rank

    why = analytic_on_path(s.arch)
    if why is not None:
        raise Undecided(f"no path rank: {why}")
    start = time.perf_counter()
    try:
        rank, numerical, digits = _ball_rank(s.arch, s.point, s.kernel, X, PATH_RANK_DIGITS, upper=s.visible,
                                             seconds=PATH_RANK_SECONDS if seconds is None else float(seconds),
                                             columns=s.columns)
    except CheckFailed as exc:
        raise CheckFailed(f"at the path point t = 1: {exc}") from None
    return PathRank(rank, numerical, s.visible, digits, round(time.perf_counter() - start, 3))


#: Digits of the ball series of :func:`rank_route` at first (doubled while a rank bound falls short).
RANK_ROUTE_DIGITS = (300, 600, 1200)


def _toeplitz(J: np.ndarray, k: int) -> np.ndarray:
    """The block lower-triangular Toeplitz matrix of the coefficients ``J[0..k]`` (balls)."""
    import flint

    m, n = J.shape[1:]
    T = np.empty(((k + 1) * m, (k + 1) * n), dtype=object)
    T[...] = flint.arb(0)
    for i in range(k + 1):
        for j in range(i + 1):
            T[i * m:(i + 1) * m, j * n:(j + 1) * n] = J[i - j]
    return T


def truncation_orders(J: np.ndarray, rank: int, digits: int) -> tuple[list[int] | None, list[int]]:
    """The Smith orders of ``J(t)`` over ``R[[t]]`` from the ranks of its truncations, where they are
    decided (Notes), else None. ``J``: coefficients ``(K, m, n)`` (python-flint balls,
    ``J[k]`` the ``t^k`` one); ``rank``: the rank of ``J(t)`` over ``R((t))`` (exact). For each ``k``
    the number ``n_k`` of orders ``k`` lies between ``rank T_k`` certified in balls minus what the
    known orders give, and the rank left (at ``k = 0`` also the columns of ``J_0`` that are not
    exactly zero); the orders are decided while the two meet. Returns the orders (None where not
    all are decided) and the certified ranks of the truncations it computed (at more digits they
    may grow: graded scales hide singular values below a precision's cutoff).
    :class:`~symattn.core.errors.CheckFailed` where the lower bound passes the upper one.

    Parameters
    ----------
    J : numpy.ndarray
        Ball series coefficients ``(K, m, n)``.
    rank : int
        The exact rank of ``J(t)`` over ``R((t))``.
    digits : int
        The balls' precision.

    Returns
    -------
    tuple
        ``(orders or None, bounds)``: the decided orders, and the certified truncation ranks.

    Raises
    ------
    CheckFailed
        A certified truncation rank exceeds what ``rank`` allows.

    Notes
    -----
    With ``J(t) = E(t) diag(t^e_i) F(t)`` (``E, F`` unimodular over ``R[[t]]``) the block Toeplitz matrix
    ``T_k`` of the coefficients ``J_0, ..., J_k`` (the map ``J(t)`` on vectors mod ``t^(k+1)``) has rank
    ``rho_k = sum_i max(0, k + 1 - e_i)``. Certified ranks of ``T_k`` in balls bound ``rho_k`` from below;
    from above, ``J_0`` has no more rank than its columns that are not exactly zero (balls of radius 0 at
    0: the query and key columns, whose ``t^0`` coefficient vanishes identically), and ``rho_k`` no more
    than the orders already known plus the rank left (the path rank, where it is all the visible
    columns). Where the bounds meet at every ``k`` the orders are certified without any exact series:
    the full post-norm layer, whose exact ``t^0`` rows do not fit in memory, has every order 0 or 1 and
    is certified this way.

    Examples
    --------
    >>> import flint
    >>> J = np.array([[[flint.arb(1), flint.arb(0)], [flint.arb(0), flint.arb(0)]],   # J_0 = diag(1, 0)
    ...               [[flint.arb(0), flint.arb(0)], [flint.arb(0), flint.arb(2)]]])  # J_1 = diag(0, 2)
    >>> truncation_orders(J, 2, 30)                    # diag(1, 2 t): orders 0 and 1
    ([0, 1], [1, 3])
    >>> truncation_orders(J[:1], 2, 30)                # mod t: the second order is not decided
    (None, [1])
    """
    from symattn.core.algebras.ballseries import BallField
    from symattn.core.rank_certificate import certified_rank

    nonzero = int((~BallField(digits).is_zero(J[0])).any(axis=0).sum())  # columns not exactly zero
    orders: list[int] = []
    ranks: list[int] = []
    for k in range(len(J)):
        if len(orders) == rank:
            break
        ranks.append(certified_rank(_toeplitz(J, k), digits=digits).rank)
        lower = ranks[-1] - sum(k + 1 - o for o in orders)
        upper = rank - len(orders) if k else min(rank, nonzero)
        if lower > upper:
            raise CheckFailed(f"the certified rank of the truncation mod t^{k + 1} exceeds what the rank {rank} "
                              "and the orders below allow: a bound is wrong")
        if lower < upper:
            return None, ranks
        orders += [k] * upper
    return (orders if len(orders) == rank else None), ranks


#: The truncation of :func:`rank_route`'s ball series: the bounds of :func:`truncation_orders` meet at
#: ``k`` only where every order left is ``k``, and at ``k = 0`` where ``J_0`` has the rank of its
#: columns that are not exactly zero; so past ``t^1`` nothing more is decided.
RANK_ROUTE_ORDER = 2


def rank_route(s, X: np.ndarray, say, seconds: float | None = None) -> dict | None:
    """The Smith orders of every block prefix of the setup ``s`` on the bank ``X`` from ranks alone
    (:func:`truncation_orders` of the ball series mod ``t^2``, :data:`RANK_ROUTE_ORDER`; the rank from
    :func:`path_rank`, where it is all the visible columns, so every prefix has full column rank), or
    None where they are not all decided
    within :data:`RANK_ROUTE_DIGITS` (the next only while the certified ranks change and it fits
    ``seconds``, default :data:`PATH_RANK_SECONDS` times four).
    Returns ``nested`` (the orders of each prefix), ``digits`` and ``path`` (the :class:`PathRank`).
    The ``t^0`` coefficient of the ball series must overlap the Jacobian at the collapse point
    ``t = 0`` computed on its own (a point, no series; :class:`~symattn.core.errors.CheckFailed`
    otherwise).

    Parameters
    ----------
    s : Setup
        The contact setup.
    X : numpy.ndarray
        The bank.
    say : callable
        Progress lines.
    seconds : float, optional
        The time budget (default :data:`PATH_RANK_SECONDS` times four).

    Returns
    -------
    dict or None

    Raises
    ------
    CheckFailed
        The ball series' ``t^0`` coefficient disagrees with the Jacobian at the collapse point.
    """
    from symattn.analyses.collapse import bank_jacobian
    from symattn.analyses.numerics import observation_jacobian
    from symattn.core.algebras import BallAlgebra
    from symattn.core.algebras.ballseries import ball_series

    budget = 4 * PATH_RANK_SECONDS if seconds is None else float(seconds)
    start = time.perf_counter()
    prefixes = [np.concatenate(s.block_idx[: k + 1]) for k in range(len(s.blocks))]
    found = path_rank(s, X, seconds=budget / 2)
    if found.rank < found.visible:  # a kernel or an order the point misses: the rank is not known exactly
        say(f"rank route: the path rank {found.rank} is not all {found.visible} visible columns")
        return None
    ranks = [len(cols) for cols in prefixes]  # full column rank: every prefix of the columns too
    # the path at t = 0 (as numerical_spectrum._scaled_point; not imported: numerical_spectrum imports this module)
    collapse = {n: (v * 0 if s.arch.block(n).is_factor else v) for n, v in s.point.items()}
    last = None
    for digits in RANK_ROUTE_DIGITS:
        level = time.perf_counter()
        say(f"rank route: the Jacobian mod t^{RANK_ROUTE_ORDER} in ball series ({digits} digits), ranks of its "
            "truncations")
        A = ball_series(RANK_ROUTE_ORDER, digits)
        with A.field.working():
            J = bank_jacobian(s.arch, X, s.U, s.W, s.V, A, s.columns, verify=0)
            point = observation_jacobian(s.arch, collapse, X, BallAlgebra(digits))[:, s.columns]
            if not all(a.overlaps(b) for a, b in zip(J[0].reshape(-1), point.reshape(-1))):
                raise CheckFailed("the t^0 coefficient of the ball series and the Jacobian at the collapse point "
                                  "disagree: one of the two code paths is wrong")
            decided = [truncation_orders(J[:, :, cols], r, digits) for cols, r in zip(prefixes, ranks)]
        nested = [orders for orders, _ in decided]
        if all(o is not None for o in nested):
            return dict(nested=nested, digits=digits, path=found)
        now = time.perf_counter()
        ranked = [ranks for _, ranks in decided]
        if ranked == last:  # the same certified ranks at two precisions: orders past 1, not more digits
            say("rank route: the ranks are the same at two precisions and their bounds do not meet")
            break
        last = ranked
        if (now - start) + 4 * (now - level) > budget:
            break
    return None
