"""The reStructuredText printer of a :class:`~symattn.render.derivation.Derivation` (for the docs).

Prose becomes text with ``:math:`` roles and inline literals (everything
else escaped), displays become ``.. math::`` blocks, and the checks a table
whose computed and expected values are ``:math:`` when mathematical
(abbreviated, with their term count, when long) and literals otherwise.
"""

from __future__ import annotations

import re

from symattn.render.displays import shown_as_text, step_displays, value_latex
from symattn.render.prose import plain, render

__all__ = ["prose", "to_rst"]

_SPECIAL = re.compile(r"([\\*`|_])")


def to_rst(derivation) -> str:
    r"""Render as reStructuredText (no title): statement, steps, checks, cases.

    Parameters
    ----------
    derivation : Derivation

    Returns
    -------
    str

    Examples
    --------
    >>> from symattn.render.derivation import Derivation
    >>> d = Derivation("demo_2", "Demo", "Here $x_1 = 1$.", "exact")
    >>> d.step("Compute $x_1$.", latex="x_1 = 1")
    >>> d.check("eq. (1)", 1, 1)
    >>> print(to_rst(d))  # doctest: +ELLIPSIS
    Here :math:`x_1 = 1`.
    <BLANKLINE>
    #. Compute :math:`x_1`.
    <BLANKLINE>
       .. math::
    <BLANKLINE>
          x_1 = 1
    ...
       * - eq. (1)
         - :math:`1`
         - :math:`1`
    ...
    """
    d = derivation
    lines = [prose(d.statement), ""]
    for step in d.steps:
        lines += [f"#. {prose(step.text)}", ""]
        for display in step_displays(step):
            lines += ["   .. math::", ""] + [f"      {row}" for row in display.splitlines()] + [""]
        if shown_as_text(step):
            lines += [f"   Computed: {_literal(step.computed)}", ""]
    lines += [".. list-table::", "   :header-rows: 1", "   :widths: 36 24 24 6 10", "",
              "   * - check", "     - computed", "     - expected", "     - result", "     - kind"]
    for check in d.checks:
        label = prose(check.label + (f" ({check.note})" if check.note else ""))
        lines += [f"   * - {label}", f"     - {_cell(check.computed)}", f"     - {_cell(check.expected)}",
                  f"     - {'ok' if check.passed else '**FAIL**'}", f"     - {check.kind}"]
    lines += ["", f"Cases checked: {d.cases}. Result: {'pass' if d.passed else 'FAIL'} ({d.tally} checks).", ""]
    lines += [f"- {prose(case)}" for case in d.case_list]
    return "\n".join(lines).rstrip() + "\n"


def prose(text: str) -> str:
    r"""Prose as reStructuredText: ``:math:`` roles, inline literals, other markup escaped.

    Examples
    --------
    >>> print(prose("kind ``certified``, $x_1$ and a_b*"))
    kind ``certified``, :math:`x_1` and a\_b\*
    """
    # a role's text may not end in a space
    return render(text, lambda m: f":math:`{m.strip()}`", _literal, lambda w: _SPECIAL.sub(r"\\\1", w))


def _cell(obj: object) -> str:
    if isinstance(obj, str):
        return prose(obj) or " "
    rendered = value_latex(obj)
    return f":math:`{rendered}`" if rendered is not None else _literal(obj)


def _literal(obj: object) -> str:
    text = plain(obj).replace("``", "` `")
    return f"``{text}``" if text.strip() else " "
