"""What a computed spectrum says about the architecture: *at this point*, or *generic*.

A certificate proves the Smith orders of the Jacobian at the parameter point it was computed at.
Specialisation only raises the valuations of the gcds of minors, so the orders at any point bound
the generic ones from above in the *dominance order* (for every ``k``, the sum of the ``k`` smallest
orders; an order not found below the truncation counts as infinite), and a point's rank bounds the
generic rank from below. A generic claim therefore needs a lower bound that holds at every point:

* **generic (certified)**: a statement of the paper covers the stack (Theorem 4) and the point's
  certified orders equal its closed form (they cannot be lower than the generic ones, and the
  theorem says which are generic);
* **generic (evidence, K points)**: the minimum in dominance order over ``K`` independent seeded
  points (:func:`~symattn.model.parameters.random_point`, seeds ``S, S + 1, ...``); where two points
  differ, the seed is *special*: the output says so and reports the smaller spectrum as the
  generic candidate;
* **at this point**: one point only (``points = 1``), no generic claim.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

__all__ = ["GenericClaim", "dominance", "visible_orders", "theorem_orders", "generic_claim"]


def visible_orders(bands, undecided: int, past: int = 0) -> list[float]:
    """The visible Smith orders of a spectrum, ascending: each band's order times its multiplicity,
    then one infinity per order not decided (``past``: of those, proved finite but not valued: also
    infinite here, the dominance then compares only what is proved)."""
    out: list[float] = sorted(o for b in bands for o in [b.order] * b.multiplicity)
    return out + [math.inf] * undecided


def dominance(a: Sequence[float], b: Sequence[float]) -> str | None:
    """Compare two order lists in the dominance order: ``"="`` equal, ``"<"`` ``a`` below ``b`` (``a`` is
    the more generic), ``">"`` above, None incomparable. The shorter is padded with infinities.

    >>> dominance([0, 0, 1], [0, 1, 1]), dominance([0, 2, 2], [1, 1, 1]), dominance([0, 1], [0, 1])
    ('<', None, '=')
    >>> dominance([0, 1, 5, 5], [0, 1, 5, math.inf])
    '<'
    """
    n = max(len(a), len(b))
    a = sorted(list(a) + [math.inf] * (n - len(a)))
    b = sorted(list(b) + [math.inf] * (n - len(b)))
    if a == b:
        return "="
    below = above = True
    sa = sb = 0.0
    for x, y in zip(a, b):
        sa, sb = sa + x, sb + y
        if sa == sb:
            continue
        if sa > sb:
            below = False
        else:
            above = False
    return "<" if below else ">" if above else None


def theorem_orders(arch) -> list[int] | None:
    """Theorem 4's visible orders for ``arch`` where it covers the stack (``d^2`` units, ``beta_i`` with
    multiplicity ``r_i (2 d - r_i)``), else None."""
    from symattn.theorems import formulas, statements

    if not statements.THEOREM_4.covers(arch):
        return None
    d = arch.widths[0]
    out = [0] * (d * d)
    for beta, r in zip(formulas.divisibility_orders(arch), arch.ranks):
        out += [beta] * (r * (2 * d - r))
    return sorted(out)


@dataclass
class GenericClaim:
    """The generic claim a spectrum makes (module docstring)."""

    #: ``"generic (certified)"``, ``"generic (evidence, K points)"`` or ``"at this point"``
    label: str
    #: the seeds of the points compared, the first the printed one
    seeds: list[int] = field(default_factory=list)
    #: the generic candidate's visible orders (the minimum in dominance order), or None
    candidate: list[float] | None = None
    #: the seeds whose spectrum is above the candidate (special points)
    special: list[int] = field(default_factory=list)
    note: str = ""

    def to_json(self) -> dict:
        cand = None if self.candidate is None else [o if o != math.inf else None for o in self.candidate]
        return {"label": self.label, "seeds": self.seeds, "candidate": cand, "special": self.special,
                "note": self.note}


def _shown(orders: Sequence[float]) -> str:
    from collections import Counter

    counts = Counter(orders)
    return ", ".join(f"t^{o if o != math.inf else '?'} x{m}" for o, m in sorted(counts.items()))


def _check_candidate(candidate: Sequence[float], orders: Sequence[Sequence[float]]) -> None:
    """A second code path for the minimum (data checked where used): the candidate is one of the points,
    and its running sums of ascending orders are at most every point's (itertools, not :func:`dominance`)."""
    import itertools

    from symattn.core.errors import InternalError

    n = max(len(o) for o in orders)

    def sums(o):
        return list(itertools.accumulate(sorted(list(o) + [math.inf] * (n - len(o)))))

    mine = sums(candidate)
    if not any(sorted(candidate) == sorted(o) for o in orders) or any(
            a > b for o in orders for a, b in zip(mine, sums(o))):
        raise InternalError("the generic candidate is not the minimum in dominance order of the points' spectra; "
                            "please report this bug")


def generic_claim(arch, seeds: Sequence[int], orders: Sequence[Sequence[float]], certified: Sequence[bool]
                  ) -> GenericClaim:
    """The generic claim of the spectra at the points ``seeds`` (their visible ``orders``, whether each is
    certified); the first is the printed one.

    >>> from symattn.model.architecture import Architecture
    >>> arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value")
    >>> generic_claim(arch, [0, 1], [[0, 0, 1], [0, 0, 1]], [True, True]).label
    'generic (evidence, 2 points)'
    >>> c = generic_claim(arch, [0, 1], [[0, 1, 1], [0, 0, 1]], [True, True])
    >>> c.special, c.candidate
    ([0], [0, 0, 1])
    """
    first = list(orders[0])
    theorem = theorem_orders(arch)
    if theorem is not None and certified[0]:
        if dominance(first, theorem) == "=":
            return GenericClaim("generic (certified)", list(seeds[:1]), theorem, [],
                                "generic (certified): Theorem 4 covers this stack and the point's certified orders "
                                "equal its closed form (a point's orders bound the generic ones from above)")
        which = f"the seed {seeds[0]}" if seeds else "the given point"
        return GenericClaim("at this point", list(seeds[:1]), theorem, list(seeds[:1]),
                            f"{which} is special: its certified orders ({_shown(first)}) are not Theorem "
                            f"4's generic ones ({_shown(theorem)}); the generic spectrum is the theorem's")
    if len(orders) == 1:
        return GenericClaim("at this point", list(seeds), None, [],
                            "at this point: one point computed (no generic claim; give more points)" if seeds else
                            "at this point: the given point (no generic claim)")
    # the minimum in dominance order over the points; incomparable points leave no candidate
    candidate: list[float] | None = first
    for other in orders[1:]:
        rel = dominance(other, candidate) if candidate is not None else None
        if rel == "<":
            candidate = list(other)
        elif rel is None:
            candidate = None
            break
    if candidate is None:
        return GenericClaim("at this point", list(seeds), None, list(seeds),
                            "the points' spectra are incomparable in dominance order: no generic candidate (the "
                            "seeds are special); each result is about its own point")
    _check_candidate(candidate, orders)
    special = [s for s, o in zip(seeds, orders) if dominance(o, candidate) != "="]
    K = len(orders)
    if special:
        note = (f"the seed{'s' if len(special) > 1 else ''} {', '.join(map(str, special))} "
                f"{'are' if len(special) > 1 else 'is'} special: the generic candidate (the minimum in dominance "
                f"order over {K} points, evidence) is {_shown(candidate)}")
    else:
        note = (f"generic (evidence, {K} points): seeds {', '.join(map(str, seeds))} give the same orders; no theorem "
                "proves that they are the generic ones")
    return GenericClaim(f"generic (evidence, {K} points)", list(seeds), candidate, special, note)
