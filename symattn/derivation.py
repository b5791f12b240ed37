"""A record of a computed argument: prose steps, displays and named checks.

A :class:`Derivation` is what every proof script returns. It collects the
steps of the argument (prose with an optional LaTeX display and the object the
step computed), the named checks that compare a computed value with the
theorem's formula evaluated independently, and a count of the cases covered.
It renders as terminal text (:meth:`Derivation.to_text`) or as a LaTeX
fragment (:meth:`Derivation.to_latex`).

Checks compare with ``==``: structural equality for sympy expressions (expand
or simplify both sides first if that is what equality means), value equality
for rationals, integers and python-flint types, and :func:`numpy.array_equal`
when either side is a numpy array. No tolerance is ever applied; a numerical
check compares numbers the script has already rounded or certified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import sympy

from symattn.errors import SymattnError

__all__ = ["KINDS", "Check", "Derivation", "Kind", "Step"]

#: The exactness of a check or a proof (see the exactness ladder).
Kind = Literal["exact", "certified", "conditional", "numerical"]
#: The kinds, from strongest to weakest (``conditional``: rests on a quoted statement).
KINDS: tuple[Kind, ...] = ("exact", "certified", "conditional", "numerical")

_TEXT_WIDTH = 200
_SHOWN_CASES = 10


@dataclass(frozen=True)
class Step:
    """One step of a derivation.

    Attributes
    ----------
    text : str
        Prose, possibly with inline LaTeX math ``$...$``.
    latex : str or None
        A display (LaTeX source without delimiters) shown after the prose.
    computed : object
        The object the step computed, or None.
    """

    text: str
    latex: str | None
    computed: object


@dataclass(frozen=True)
class Check:
    """One named comparison of a computed value with an expected value.

    Attributes
    ----------
    label : str
        The paper's label of the claim, e.g. ``"Theorem 4, eq. (48)"``.
    computed : object
        The value computed from the model.
    expected : object
        The theorem's formula, evaluated independently of the computation.
    passed : bool
        Whether ``computed == expected``.
    kind : str
        ``"exact"``, ``"certified"`` or ``"numerical"``.
    note : str
        Free text shown with the check.
    """

    label: str
    computed: object
    expected: object
    passed: bool
    kind: Kind
    note: str


class Derivation:
    """A computed argument: statement, steps, named checks and cases.

    Parameters
    ----------
    id : str
        The proof id, e.g. ``"t4_native_spectrum"``.
    title : str
        A short title, e.g. ``"Theorem 4 (complete native contact spectrum)"``.
    statement : str
        The claim in words (LaTeX math allowed).
    kind : str
        The default kind of the checks: ``"exact"``, ``"certified"`` or
        ``"numerical"``.

    Raises
    ------
    SymattnError
        If ``kind`` is not one of :data:`KINDS`.

    Examples
    --------
    >>> import sympy
    >>> x = sympy.Symbol("x")
    >>> d = Derivation("demo", "Binomial square", "$(x+1)^2 = x^2 + 2x + 1$", "exact")
    >>> d.step("Expand the square.", latex="(x+1)^2", computed=sympy.expand((x + 1)**2))
    >>> d.check("eq. (1)", sympy.expand((x + 1)**2), x**2 + 2*x + 1)
    >>> d.case("x symbolic")
    >>> d.passed, d.cases, len(d.checks)
    (True, 1, 1)

    A failing check is recorded, then raised:

    >>> d.check("eq. (2)", sympy.Integer(1), sympy.Integer(2), note="deliberately wrong")
    Traceback (most recent call last):
    ...
    AssertionError: demo: check 'eq. (2)' failed: computed 1, expected 2 (deliberately wrong)
    >>> d.passed
    False
    """

    def __init__(self, id: str, title: str, statement: str, kind: Kind) -> None:
        self.id = id
        self.title = title
        self.statement = statement
        self.kind = _validate_kind(kind)
        self._steps: list[Step] = []
        self._checks: list[Check] = []
        self._cases: list[str] = []

    def __repr__(self) -> str:
        return (
            f"Derivation({self.id!r}, kind={self.kind!r}, steps={len(self._steps)}, "
            f"checks={len(self._checks)}, cases={self.cases}, passed={self.passed})"
        )

    def step(self, text: str, latex: str | None = None, computed: object = None) -> None:
        """Record a step of the argument.

        Parameters
        ----------
        text : str
            Prose, possibly with inline math ``$...$``.
        latex : str, optional
            A display, LaTeX source without the ``\\[ \\]`` delimiters.
        computed : object, optional
            The object the step computed; rendered with :func:`sympy.latex`
            when it is a sympy object, else with :class:`str`.
        """
        self._steps.append(Step(text, latex, computed))

    def check(
        self,
        label: str,
        computed: object,
        expected: object,
        *,
        kind: Kind | None = None,
        note: str = "",
    ) -> None:
        """Record a named check of ``computed == expected``; raise if it fails.

        Parameters
        ----------
        label : str
            The paper's label, e.g. ``"Theorem 4, eq. (48)"``.
        computed : object
            The value computed from the model.
        expected : object
            The theorem's formula evaluated independently of the computation.
        kind : str, optional
            Kind of this check; defaults to the derivation's kind.
        note : str, optional
            Free text shown with the check (the witness, the case, ...).

        Raises
        ------
        AssertionError
            If the values differ; the check is recorded first.
        SymattnError
            If ``kind`` is not one of :data:`KINDS`.
        """
        passed = _equal(computed, expected)
        check_kind = self.kind if kind is None else _validate_kind(kind)
        self._checks.append(Check(label, computed, expected, passed, check_kind, note))
        if not passed:
            suffix = f" ({note})" if note else ""
            raise AssertionError(
                f"{self.id}: check {label!r} failed: computed {_plain(computed)}, "
                f"expected {_plain(expected)}{suffix}"
            )

    def case(self, description: str) -> None:
        """Count one checked case (a dimension, depth, normalizer, ...).

        Parameters
        ----------
        description : str
            What the case is, e.g. ``"softmax, d=4, D=3, r=2"``.
        """
        self._cases.append(description)

    @property
    def cases(self) -> int:
        """Number of cases counted with :meth:`case`."""
        return len(self._cases)

    @property
    def checks(self) -> list[Check]:
        """The recorded checks, in order (a copy)."""
        return list(self._checks)

    @property
    def passed(self) -> bool:
        """True when at least one check was recorded and every check passed."""
        return bool(self._checks) and all(check.passed for check in self._checks)

    def to_text(self) -> str:
        """Render for a terminal.

        Returns
        -------
        str
            Title, statement, numbered steps, checks with ok/FAIL and kind, the
            cases and the verdict.
        """
        lines = [f"{self.id}: {self.title} [{self.kind}]", "", self.statement, ""]
        for number, step in enumerate(self._steps, start=1):
            lines.append(f"{number}. {step.text}")
            if step.latex is not None:
                lines.append(f"     {step.latex}")
            if step.computed is not None:
                lines.append(f"     = {_plain(step.computed)}")
        if self._steps:
            lines.append("")
        lines.append("Checks:")
        for check in self._checks:
            verdict = "ok  " if check.passed else "FAIL"
            lines.append(f"  {verdict} {check.label} [{check.kind}]")
            lines.append(f"       computed {_plain(check.computed)}")
            lines.append(f"       expected {_plain(check.expected)}")
            if check.note:
                lines.append(f"       {check.note}")
        lines.append(f"Cases checked: {self.cases}")
        lines.extend(f"  - {case}" for case in self._cases[:_SHOWN_CASES])
        if self.cases > _SHOWN_CASES:
            lines.append(f"  ... ({self.cases - _SHOWN_CASES} more)")
        passed = sum(check.passed for check in self._checks)
        verdict = "PASS" if self.passed else "FAIL"
        lines.append(f"Result: {verdict} ({passed}/{len(self._checks)} checks)")
        return "\n".join(lines)

    def to_latex(self) -> str:
        r"""Render as a LaTeX fragment.

        The fragment has the title and statement, then the steps numbered
        ``Step 1.``, ``Step 2.``, ... with their displays in ``\[ ... \]``, then
        a ``tabular`` of the checks with ok/fail and kind. Prose, labels and
        notes are text with inline math in ``$...$`` (everything outside the
        dollars is escaped); computed objects that are not sympy objects are
        escaped and set in ``\texttt``. It compiles with ``amsmath`` and
        ``amssymb``.

        Returns
        -------
        str
            The fragment; it needs no package beyond plain LaTeX.

        Examples
        --------
        >>> d = Derivation("demo_1", "Demo", "One equals one.", "exact")
        >>> d.check("eq. (1)", 1, 1)
        >>> print(d.to_latex())
        \paragraph{demo\_1: Demo (exact).}
        One equals one.
        <BLANKLINE>
        \begin{tabular}{rlllll}
        \# & check & computed & expected & result & kind \\ \hline
        1 & eq. (1) & \texttt{1} & \texttt{1} & ok & exact \\
        \end{tabular}
        <BLANKLINE>
        Cases checked: 0. Result: pass (1/1 checks).
        """
        parts = [
            rf"\paragraph{{{_escape(self.id)}: {_latex_prose(self.title)} ({self.kind}).}}",
            _latex_prose(self.statement),
            "",
        ]
        for number, step in enumerate(self._steps, start=1):
            parts.append(rf"Step {number}. {_latex_prose(step.text)}")
            if step.latex is not None:
                parts.append(rf"\[ {step.latex} \]")
            if step.computed is not None:
                value = _inline(step.computed)
                parts.append(rf"\[ {value[1:-1] if value.startswith('$') else value} \]")
            parts.append("")
        parts.append(r"\begin{tabular}{rlllll}")
        parts.append(r"\# & check & computed & expected & result & kind \\ \hline")
        for number, check in enumerate(self._checks, start=1):
            label = _latex_prose(f"{check.label} ({check.note})" if check.note else check.label)
            verdict = "ok" if check.passed else r"\textbf{fail}"
            parts.append(
                rf"{number} & {label} & {_inline(check.computed)} & "
                rf"{_inline(check.expected)} & {verdict} & {check.kind} \\"
            )
        parts.append(r"\end{tabular}")
        parts.append("")
        passed = sum(check.passed for check in self._checks)
        verdict = "pass" if self.passed else "fail"
        parts.append(
            f"Cases checked: {self.cases}. Result: {verdict} ({passed}/{len(self._checks)} checks)."
        )
        return "\n".join(parts)


    def to_rst(self) -> str:
        r"""Render as reStructuredText for the documentation (no title).

        Inline ``$...$`` in prose becomes ``:math:``; displays become
        ``.. math::`` blocks; the checks become a table with the computed and
        expected values, ok/FAIL and kind; then the cases and the verdict.

        Examples
        --------
        >>> d = Derivation("demo_2", "Demo", "Here $x_1 = 1$.", "exact")
        >>> d.step("Compute $x_1$.", latex="x_1 = 1")
        >>> d.check("eq. (1)", 1, 1)
        >>> print(d.to_rst())  # doctest: +ELLIPSIS
        Here :math:`x_1 = 1`.
        <BLANKLINE>
        #. Compute :math:`x_1`.
        <BLANKLINE>
           .. math::
        <BLANKLINE>
              x_1 = 1
        ...
        """
        lines = [_rst_prose(self.statement), ""]
        for step in self._steps:
            lines += [f"#. {_rst_prose(step.text)}", ""]
            displays = [step.latex] if step.latex is not None else []
            if _is_sympy(step.computed):
                displays.append(sympy.latex(step.computed))
            for display in displays:
                lines += ["   .. math::", ""] + [f"      {row}" for row in display.splitlines()] + [""]
            if step.computed is not None and not _is_sympy(step.computed):
                lines += [f"   Computed: ``{_rst_literal(step.computed)}``", ""]
        lines += [".. list-table::", "   :header-rows: 1", "   :widths: 30 25 25 8 12", "",
                  "   * - check", "     - computed", "     - expected", "     - result", "     - kind"]
        for check in self._checks:
            label = _rst_prose(check.label + (f" ({check.note})" if check.note else ""))
            lines += [f"   * - {label}", f"     - ``{_rst_literal(check.computed)}``",
                      f"     - ``{_rst_literal(check.expected)}``",
                      f"     - {'ok' if check.passed else '**FAIL**'}", f"     - {check.kind}"]
        passed = sum(check.passed for check in self._checks)
        lines += ["", f"Cases checked: {self.cases}. Result: {'pass' if self.passed else 'FAIL'} "
                      f"({passed}/{len(self._checks)} checks).", ""]
        lines += [f"- {_rst_prose(case)}" for case in self._cases]
        return "\n".join(lines).rstrip() + "\n"


def _validate_kind(kind: str) -> Kind:
    if kind not in KINDS:
        raise SymattnError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    return kind  # type: ignore[return-value]


def _equal(computed: Any, expected: Any) -> bool:
    if isinstance(computed, np.ndarray) or isinstance(expected, np.ndarray):
        return bool(np.array_equal(computed, expected))
    return bool(computed == expected)


def _is_sympy(obj: object) -> bool:
    return isinstance(obj, (sympy.Basic, sympy.MatrixBase))


def _plain(obj: object) -> str:
    text = " ".join(str(obj).split())
    if len(text) > _TEXT_WIDTH:
        return text[: _TEXT_WIDTH - 3] + "..."
    return text


#: Longest LaTeX rendering of a computed value shown in full; longer ones are
#: shown abbreviated as text (the check itself compares the full values).
_LATEX_LIMIT = 600


def _inline(obj: object) -> str:
    if _is_sympy(obj):
        rendered = sympy.latex(obj)
        if len(rendered) <= _LATEX_LIMIT:
            return f"${rendered}$"
    return rf"\texttt{{{_escape(_plain(obj))}}}"


_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\textasciicircum{}",
    "_": r"\_",
    "%": r"\%",
    "~": r"\textasciitilde{}",
}


def _escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(char, char) for char in text)


def _latex_prose(text: str) -> str:
    """Text with ``$...$`` inline math kept and every other LaTeX special escaped."""
    return "".join(f"${part}$" if i % 2 else _escape(part) for i, part in enumerate(text.split("$")))


_RST_SPECIAL = re.compile(r"([\\*`|_])")


def _rst_prose(text: str) -> str:
    """Prose with ``$...$`` math as ``:math:`` roles and other markup escaped."""
    parts = text.split("$")
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f":math:`{part}`")
        else:
            out.append(_RST_SPECIAL.sub(r"\\\1", " ".join(part.split("\n"))))
    return "".join(out)


def _rst_literal(obj: object) -> str:
    return _plain(obj).replace("``", "` `") or " "
