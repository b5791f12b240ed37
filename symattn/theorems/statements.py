"""The paper's theorems as statements: a label, a precondition on the architecture, a closed form.

An analysis that depends on what the paper proves asks a :class:`Statement`,
never the kind of a layer: whether it :meth:`~Statement.covers` the
architecture, its :attr:`~Statement.label` (``"Theorem 4 / Prop. D.1 ..."``, or
:data:`NO_THEOREM` in the text and ``theorem: null`` in the JSON when nothing
covers it), and its closed form (:meth:`~Statement.closed_form`, from
:mod:`symattn.theorems.formulas`). The statements consulted:

* :data:`THEOREM_1`, :data:`THEOREM_2`, :data:`PROP_C6`: the effective fiber
  (:mod:`symattn.analyses.fibers` classifies by them where they cover, and only
  computes evidence elsewhere);
* :data:`THEOREM_3` (Prop. C.1), :data:`PROP_C3`, :data:`COR_C2`: sharp jet
  degrees (the formula columns of ``symattn jet`` and of the sweeps);
* :data:`THEOREM_4` (Prop. D.1): the native contact spectrum and its label;
  :data:`APP_D2` (the divisibility exponents: the lower bound of the
  ``conditional`` certificate), :data:`APP_D3` (the divided frame ``E(0)``: the
  bank's stopping rule and the spectrum's blocks);
* :data:`EQ_40`: the rank formula ``d^2 + sum r_i (2 d - r_i)`` (the dimension's label).

Every statement needs the paper's model (eq. 1-3: every layer one summed head,
no skip, no mask; :attr:`~symattn.model.architecture.Architecture.in_paper_model`,
defined in the model floor so that a new layer part is outside it without a
change here), plus its own hypotheses (equal widths, ``r_i <= d``, two tokens).

Examples
--------
>>> from symattn.model.architecture import Architecture
>>> THEOREM_4.covers(Architecture.uniform(3, 4, 2, 4)), THEOREM_4.closed_form(Architecture.uniform(3, 4, 2, 4))
(True, [1, 5, 17])
>>> causal = Architecture.uniform(2, 2, 1, 3, mask="causal")
>>> label(THEOREM_4, causal), outside_note(causal) == NO_THEOREM
(None, True)
>>> THEOREM_4.why_not(Architecture((2, 3, 2), (1, 1), 2, causal.normalizers))
'needs equal widths d_0 = ... = d_D'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from symattn.model.architecture import Architecture
from symattn.theorems import formulas

__all__ = [
    "NO_THEOREM", "Statement", "STATEMENTS", "THEOREM_1", "THEOREM_2", "THEOREM_3", "THEOREM_4",
    "PROP_C3", "PROP_C6", "COR_C2", "APP_D2", "APP_D3", "EQ_40", "label", "outside_note", "frame",
]

#: The label of every result no statement of the paper covers (text; ``theorem: null`` in JSON).
NO_THEOREM = "computed; no theorem in the paper covers this architecture"

Precondition = Callable[[Architecture], "str | None"]


def paper_model(arch: Architecture) -> str | None:
    """The paper's model (Section 2): every layer one summed head, no skip, no mask."""
    if arch.in_paper_model:
        return None
    return f"outside the paper's model ({arch.parts()})"


def equal_widths(arch: Architecture) -> str | None:
    return None if len(set(arch.widths)) == 1 else "needs equal widths d_0 = ... = d_D"


def ranks_at_most_width(arch: Architecture) -> str | None:
    bad = [i for i, r in enumerate(arch.ranks, 1) if r > arch.widths[i - 1]]
    return None if not bad else f"needs r_i <= d (layer {bad[0]})"


def two_tokens(arch: Architecture) -> str | None:
    return None if arch.tokens == 2 else "is for two tokens"


@dataclass(frozen=True)
class Statement:
    """A statement of the paper: its :attr:`label`, its preconditions on an architecture
    (each returns None when met, else the reason) and its closed form."""

    label: str
    short: str
    claim: str
    preconditions: tuple[Precondition, ...] = (paper_model,)
    formula: Callable[..., Any] | None = field(default=None, compare=False)

    def why_not(self, arch: Architecture) -> str | None:
        """The first unmet precondition in words, or None when the statement covers ``arch``."""
        for check in self.preconditions:
            reason = check(arch)
            if reason is not None:
                return reason
        return None

    def covers(self, arch: Architecture) -> bool:
        """Whether every precondition holds for ``arch``."""
        return self.why_not(arch) is None

    def closed_form(self, arch: Architecture, *args: Any) -> Any:
        """The statement's closed form for ``arch`` (from :mod:`symattn.theorems.formulas`)."""
        if self.formula is None:
            raise ValueError(f"{self.short} has no closed form")
        return self.formula(arch, *args)


THEOREM_1 = Statement("Theorem 1", "Theorem 1",
                      "L != 0 and sym M_i != 0 for all i: the effective fiber is a point (a sign orbit for "
                      "even normalizers)")
THEOREM_2 = Statement("Theorem 2", "Theorem 2",
                      "the first collapse frees the suffix; L = 0 frees every score")
PROP_C6 = Statement("Prop. C.6", "Prop. C.6",
                    "n >= 3, nondegenerate two-plane restrictions of the prefix scores: the fiber is a point")
THEOREM_3 = Statement("Theorem 3 / Prop. C.1 (sharp zero-input jet degree)", "Theorem 3",
                      "the least N with D T_N injective is N_D of Prop. C.1",
                      formula=formulas.prop_c1_degree)
PROP_C3 = Statement("Prop. C.3", "Prop. C.3", "adaptive jet degree with skew prefix scores, two tokens",
                    (paper_model, two_tokens), formula=formulas.adaptive_degree)
COR_C2 = Statement("Cor. C.2", "Cor. C.2", "every tuple is identified by the jet of degree 4 3^(D-1) - 1",
                   formula=lambda arch: formulas.all_tuples_degree(arch.depth))
THEOREM_4 = Statement("Theorem 4 / Prop. D.1 (native contact spectrum)", "Theorem 4",
                      "along Q_i = t U_i, K_i = t W_i the Smith factors are d^2 units and t^beta_i with "
                      "multiplicity r_i (2 d - r_i)", (paper_model, equal_widths, ranks_at_most_width),
                      formula=formulas.divisibility_orders)
APP_D2 = Statement("App. D.2 (divisibility)", "App. D.2",
                   "the columns of layer i of J(t) are divisible by t^beta_i",
                   (paper_model, equal_widths, ranks_at_most_width), formula=formulas.divisibility_orders)
APP_D3 = Statement("App. D.3 (E(0) of full rank: the bank separates; Theorem 4's factors follow)", "App. D.3",
                   "a bank separates when the divided frame E(0) has full column rank",
                   (paper_model, equal_widths, ranks_at_most_width), formula=formulas.divisibility_orders)
EQ_40 = Statement("eq. (40) / HMK dimension (Theorem 4's rank formula)", "eq. (40)",
                  "the generic rank is d^2 + sum_i r_i (2 d - r_i)", (paper_model, equal_widths, ranks_at_most_width),
                  formula=lambda arch: formulas.native_rank(arch.d, arch.ranks))

#: Every statement the analyses consult.
STATEMENTS = (THEOREM_1, THEOREM_2, PROP_C6, THEOREM_3, PROP_C3, COR_C2, THEOREM_4, APP_D2, APP_D3, EQ_40)


def label(statement: Statement, arch: Architecture) -> str | None:
    """The statement's label if it covers ``arch``, else None (``theorem: null``)."""
    return statement.label if statement.covers(arch) else None


def outside_note(arch: Architecture) -> str | None:
    """:data:`NO_THEOREM` when no statement of the paper covers ``arch``, else None."""
    return None if any(s.covers(arch) for s in STATEMENTS) else NO_THEOREM


def frame(arch: Architecture, blocks: Sequence[tuple[str, int, list[int]]]) -> list[int]:
    """The exponents of the divided frame ``E(0)`` (App. D.3) of the column blocks
    ``blocks`` (``(label, layer, columns)``, layer 0 the readout): ``0`` for the readout,
    ``beta_i`` of App. D.2 for layer ``i``'s query/key columns."""
    betas = APP_D2.closed_form(arch)
    return [betas[layer - 1] if layer else 0 for _, layer, _ in blocks]
