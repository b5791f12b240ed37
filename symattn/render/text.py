"""The terminal printer of a :class:`~symattn.render.derivation.Derivation`."""

from __future__ import annotations


from symattn.render.prose import plain

__all__ = ["SHOWN_CASES", "to_text"]

#: Cases listed by name before "... (N more)".
SHOWN_CASES = 10


def to_text(derivation) -> str:
    """Render for a terminal.

    Parameters
    ----------
    derivation : Derivation

    Returns
    -------
    str
        Title, statement, numbered steps (with their LaTeX displays as
        source), checks with ok/FAIL and kind, the cases and the verdict.
    """
    d = derivation
    lines = [f"{d.id}: {d.title} [{d.kind}]", "", d.statement, ""]
    for number, step in enumerate(d.steps, start=1):
        lines.append(f"{number}. {step.text}")
        if step.latex is not None:
            lines.append(f"     {step.latex}")
        if step.computed is not None and not step.shown:
            lines.append(f"     = {plain(step.computed)}")
    if d.steps:
        lines.append("")
    lines.append("Checks:")
    for check in d.checks:
        verdict = "ok  " if check.passed else "FAIL"
        lines.append(f"  {verdict} {check.label} [{check.kind}]")
        lines.append(f"       computed {plain(check.computed)}")
        lines.append(f"       expected {plain(check.expected)}")
        if check.note:
            lines.append(f"       {check.note}")
    cases = d.case_list
    lines.append(f"Cases checked: {len(cases)}")
    lines.extend(f"  - {case}" for case in cases[:SHOWN_CASES])
    if len(cases) > SHOWN_CASES:
        lines.append(f"  ... ({len(cases) - SHOWN_CASES} more)")
    lines.append(f"Result: {d.verdict.upper()} ({d.tally} checks)")
    return "\n".join(lines)
