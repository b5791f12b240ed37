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

The same reasoning labels the other results (:func:`dimension_claim`, :func:`degree_claim`): a rank at
a point is a lower bound on the generic rank, so a dimension whose bounds meet is generic, and a
sharp jet degree at a point is an upper bound on the generic one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

__all__ = ["GenericClaim", "dominance", "visible_orders", "theorem_orders", "generic_claim", "dimension_claim",
           "degree_claim"]


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
        if dominance(theorem, first) != "<":
            # a certified point's orders bound the generic ones from above: a closed form that is not below
            # them contradicts the certificate or is itself wrong (data checked where used)
            from symattn.core.errors import InternalError

            raise InternalError(f"Theorem 4's closed form ({_shown(theorem)}) is not below the certified orders "
                                f"({_shown(first)}) in dominance order; please report this bug")
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


def dimension_claim(certified: bool, lower: int, upper: int, upper_proved: bool = True) -> GenericClaim:
    """The claim of a neuromanifold dimension: generic, whether or not the bounds meet.

    The lower bound is a rank at a point, at most the generic rank; the upper bound is ``P`` minus the
    rank at a point of the declared symmetries (exact kernel vectors at every point), at least ``P``
    minus their generic rank, which bounds the generic dimension from above. Both bounds are therefore
    bounds on the generic dimension.

    Parameters
    ----------
    certified : bool
        Whether the bounds were proved (exact or certified ranks).
    lower, upper : int
        The lower and upper bound.
    upper_proved : bool, optional
        Whether the upper bound is proved too (False in the ball tier, whose symmetry check is
        numerical): bounds apart then claim only the lower one.

    Returns
    -------
    GenericClaim
        ``"generic (certified)"`` when the certified bounds meet, ``"generic bounds (certified)"`` when
        certified but apart (``"generic lower bound (certified)"`` without a proved upper bound), else
        ``"at this point"`` (nothing proved).

    >>> dimension_claim(True, 7, 7).label, dimension_claim(True, 6, 7).label
    ('generic (certified)', 'generic bounds (certified)')
    """
    if not certified:
        return GenericClaim("at this point", [], None, [], "at this point: the ranks are not certified")
    if lower == upper:
        return GenericClaim("generic (certified)", [], [lower], [],
                            f"generic (certified): the rank at the point ({lower}) is at most the generic rank, and "
                            "P minus the declared symmetries' rank at the point is at least the generic dimension, "
                            "so the generic dimension is their common value")
    if not upper_proved:
        return GenericClaim("generic lower bound (certified)", [], None, [],
                            f"generic lower bound (certified): the generic dimension is at least {lower} (a "
                            "certified rank at a point); the upper bound is numerical")
    if lower > upper:
        return GenericClaim("at this point", [], None, [], "at this point: the ranks are not certified")
    return GenericClaim("generic bounds (certified)", [], None, [],
                        f"generic bounds (certified): the generic dimension lies in [{lower}, {upper}] (a rank at a "
                        "point bounds the generic rank from below; the symmetries bound it from above)")


def degree_claim(by_seed: dict, theorem_degree: int | None, given: bool = False) -> GenericClaim:
    """The claim of a sharp jet degree computed at seeded points (``by_seed``: seed -> degree, None where
    undecided) or at a given point (``given``).

    The rank of ``D T_N`` at a point is at most its generic rank, so a degree at which ``D T_N`` is
    injective at some point is an upper bound on the generic sharp degree. It is the generic degree
    (certified) only where a statement of the paper gives that degree (``theorem_degree``) and the point's
    degree equals it; below it is impossible (a bug), above it the point is special.

    Parameters
    ----------
    by_seed : dict
        Seed (any key) -> the sharp degree at that point (None: undecided there).
    theorem_degree : int or None
        The generic degree a statement of the paper gives for the architecture, or None.
    given : bool
        The point was given by the user (not drawn): the claim is about it.

    Returns
    -------
    GenericClaim
        Labelled ``"generic (certified)"``, ``"generic upper bound (certified)"`` or ``"at this point"``
        (a given point without a statement, or a degree above the statement's: a special point).

    Raises
    ------
    InternalError
        A point's degree is below the theorem's generic one.

    >>> degree_claim({"0": 7, "1": 7}, None).label
    'generic upper bound (certified)'
    >>> degree_claim({"0": 9, "1": 7}, 7).label, degree_claim({"0": 9, "1": 7}, 7).special
    ('generic (certified)', ['0'])
    >>> degree_claim({"0": 9}, 7).label
    'at this point'
    """
    from symattn.core.errors import InternalError

    decided = {s: n for s, n in by_seed.items() if n is not None}
    if not decided:
        return GenericClaim("at this point", list(by_seed), None, [], "undecided at every point: no generic claim")
    least = min(decided.values())
    seeds = list(by_seed)
    if theorem_degree is not None and least < theorem_degree:
        raise InternalError(f"a sharp degree {least} below the theorem's generic degree {theorem_degree}; please "
                            "report this bug")
    special = [s for s, n in decided.items() if n > least]
    if theorem_degree is not None and least == theorem_degree:
        special = [s for s, n in decided.items() if n != theorem_degree]
        return GenericClaim("generic (certified)", seeds, [theorem_degree], special,
                            f"generic (certified): the paper's statement gives the generic degree {theorem_degree} "
                            "and the computed degree at a point equals it (a point's degree is at least the "
                            "generic one)" + (f"; seed {', '.join(map(str, special))} special" if special else ""))
    if theorem_degree is not None:
        return GenericClaim("at this point", seeds, [theorem_degree], seeds,
                            f"at this point: the computed degree {least} is above the generic degree "
                            f"{theorem_degree} the paper's statement gives (the point is special, or its rays too "
                            "few); the generic degree is the statement's")
    if given:
        return GenericClaim("at this point", [], None, [],
                            f"at this point: the given point's sharp degree {least} is an upper bound on the generic "
                            "one")
    return GenericClaim("generic upper bound (certified)", seeds, [least], special,
                        f"generic upper bound (certified): the generic sharp degree is at most {least}, the least "
                        f"over {len(decided)} point{'s' if len(decided) > 1 else ''}; no statement gives its "
                        "lower bound" + (f"; seed {', '.join(map(str, special))} special" if special else ""))
