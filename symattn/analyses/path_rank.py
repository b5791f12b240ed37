"""A certified lower bound on the rank of the path Jacobian ``J(t)`` from one point of the path.

The contact spectrum's orders are the Smith orders of ``J(t)`` over ``R[[t]]``; their number is
the rank of ``J(t)`` over ``R((t))``. The frame proofs certify the orders they reach; orders past
their truncation stay a *gap*: visible columns that vanish mod ``t^N``, a kernel no declared
symmetry explains or orders past ``t^N``, which the series alone cannot tell apart. One point
can: where every function the network applies is real-analytic on the whole path (the catalogue
normalizers, analytic activations, LayerNorms with ``eps > 0``), every ``k x k`` minor of ``J(t)``
is a real-analytic function of ``t`` on an interval containing ``[0, 1]``, so a minor that is
nonzero at ``t = 1`` has a nonzero Taylor series at ``0`` (the identity theorem): the rank over
``R((t))`` is at least the rank of ``J(1)``. :func:`path_rank` computes ``J(1)``, the Jacobian of the
same bank at the path's point ``Q = U, K = W`` (its other blocks fixed), in python-flint balls
and certifies its rank on the visible columns by :func:`~symattn.core.linalg.certified_rank`
(Weyl's inequality, else a minor whose determinant ball excludes 0): **certified**. The gap's
orders that this rank exceeds the proved ones by are then finite (``>= t^N``), and the
unexplained kernel is at most ``visible - rank``.

The check that can fail: every declared symmetry is a kernel vector of ``J(1)`` (each entry of
``J(1) xi`` a ball containing 0, :class:`~symattn.core.errors.CheckFailed` otherwise), so a wrong
point, bank or Jacobian shows before its rank is used.

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
from symattn.model.catalogue import CATALOGUE

__all__ = ["PathRank", "path_rank", "analytic_on_path", "PATH_RANK_DIGITS", "PATH_RANK_SECONDS"]

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

    def note(self, proved: int, order: int) -> str:
        """The certificate in words, for a spectrum that proved ``proved`` orders mod ``t^order``."""
        finite = max(0, min(self.rank, self.visible) - proved)
        what = (f"so {finite} more orders are finite (>= t^{order}: finite, their values not proved)"
                if finite else "no more than the orders proved")
        return (f"path rank: rank J(t) >= {self.rank} over R((t)) on the {self.visible} visible columns, certified: "
                f"a {self.rank} x {self.rank} minor of J at the path point t = 1 (the same bank; python-flint balls "
                f"at {self.digits} digits) is nonzero, and every function of the network is real-analytic on the "
                f"path, so that minor's series is not zero; {what}; the unexplained kernel is at most "
                f"{self.visible - self.rank}")


def analytic_on_path(arch: Architecture) -> str | None:
    """None where every function the network applies is real-analytic along the whole path (every
    ``t`` in ``R``): catalogue normalizers (positive and analytic on ``R``), analytic activations,
    LayerNorms with ``eps > 0``; else the reason, in words."""
    for layer in arch.layers:
        if layer.normalizer.name not in CATALOGUE:
            return (f"the normalizer {layer.normalizer.name} is not from the catalogue (analytic near 0 only, "
                    "perhaps not on the whole path)")
        if layer.norm != "none" and layer.eps <= 0:
            return "a LayerNorm with eps = 0 (1/sqrt of a variance that may vanish on the path)"
        if layer.mlp and not layer.activation.analytic:
            return f"the activation {layer.activation.name} is not analytic"
    return None


def path_rank(s, X: np.ndarray, seconds: float | None = None) -> PathRank:
    """The certified rank of ``J(1)`` on the visible columns of the setup ``s`` (a
    :class:`~symattn.analyses.contact.Setup`) for the bank ``X``: a lower bound on the rank of
    ``J(t)`` over ``R((t))`` (module docstring). The digits start at :data:`PATH_RANK_DIGITS` and
    double until the rank is all the visible columns, or certified and numerical ranks agree with
    the previous level's, or the next level would not fit ``seconds`` (default
    :data:`PATH_RANK_SECONDS`): :func:`~symattn.analyses.dimension._ball_rank`, the ball tier's.
    :class:`~symattn.core.errors.Undecided` where the network is not analytic on the path;
    :class:`~symattn.core.errors.CheckFailed` where a declared symmetry is not a kernel vector of
    ``J(1)``."""
    from symattn.analyses.dimension import _ball_rank

    why = analytic_on_path(s.arch)
    if why is not None:
        raise Undecided(f"no path rank: {why}")
    start = time.perf_counter()
    try:
        rank, numerical, digits = _ball_rank(s.arch, s.point, s.kernel, X, PATH_RANK_DIGITS, upper=len(s.columns),
                                             seconds=PATH_RANK_SECONDS if seconds is None else float(seconds),
                                             columns=s.columns)
    except CheckFailed as exc:
        raise CheckFailed(f"at the path point t = 1: {exc}") from None
    return PathRank(rank, numerical, len(s.columns), digits, round(time.perf_counter() - start, 3))
