"""The Markdown printer of a :class:`~symattn.render.derivation.Derivation` (Jupyter's ``_repr_markdown_``).

Markdown as Jupyter renders it: ``$...$`` and ``$$...$$`` math, backquoted
code, a pipe table of the checks (math values in ``$...$``).
"""

from __future__ import annotations

from symattn.render.displays import shown_as_text, step_displays, value_latex
from symattn.render.prose import plain, render

__all__ = ["prose", "to_markdown"]


def to_markdown(derivation) -> str:
    r"""Render as Markdown.

    Parameters
    ----------
    derivation : Derivation
        The record to render (:class:`~symattn.render.derivation.Derivation`; not imported here,
        since the derivation imports its printers).

    Examples
    --------
    >>> from symattn.render.derivation import Derivation
    >>> d = Derivation("demo_3", "Demo", "Here $x = 1$.", "exact")
    >>> d.show("The value:", 1, "x")
    >>> d.check("eq. (1)", 1, 1)
    >>> print(to_markdown(d))  # doctest: +ELLIPSIS
    **demo_3**: Demo (*exact*)
    <BLANKLINE>
    Here $x = 1$.
    <BLANKLINE>
    1. The value:
    <BLANKLINE>
       $$x = 1$$
    ...
    | 1 | eq. (1) | $1$ | $1$ | ok | exact |
    ...
    """
    d = derivation
    lines = [f"**{d.id}**: {prose(d.title)} (*{d.kind}*)", "", prose(d.statement), ""]
    for number, step in enumerate(d.steps, start=1):
        lines += [f"{number}. {prose(step.text)}", ""]
        lines += [f"   $${display}$$\n" for display in step_displays(step)]
        if shown_as_text(step):
            lines += [f"   Computed: `{_literal(step.computed)}`", ""]
    lines += ["| # | check | computed | expected | result | kind |", "|---|---|---|---|---|---|"]
    for number, check in enumerate(d.checks, start=1):
        label = prose(check.label + (f" ({check.note})" if check.note else "")).replace("|", r"\|")
        lines.append(f"| {number} | {label} | {_cell(check.computed)} | {_cell(check.expected)} | "
                     f"{'ok' if check.passed else '**FAIL**'} | {check.kind} |")
    lines += ["", f"Cases checked: {d.cases}. Result: **{d.verdict}** ({d.tally} checks)."]
    return "\n".join(lines)


def prose(text: str) -> str:
    """Prose as Markdown: math in dollars, code in backquotes."""
    return render(text, lambda m: f"${m}$", lambda c: f"`{c}`", str)


def _cell(obj: object) -> str:
    if isinstance(obj, str):
        return prose(obj).replace("|", r"\|")
    rendered = value_latex(obj)
    return f"${rendered}$".replace("|", r"\|") if rendered is not None else f"`{_literal(obj)}`"


def _literal(obj: object) -> str:
    return plain(obj).replace("`", "'").replace("|", r"\|")
