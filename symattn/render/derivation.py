"""A record of a computed argument: prose steps, displays and named checks.

A :class:`Derivation` is what every proof script returns. It collects the
steps of the argument (prose with an optional LaTeX display and the object the
step computed), the named checks that compare a computed value with the
theorem's formula evaluated independently, and a count of the cases covered.
It renders as terminal text (:meth:`Derivation.to_text`), as a LaTeX
fragment (:meth:`Derivation.to_latex`) or a complete LaTeX document of several
derivations (:func:`latex_document`), as reStructuredText for the docs
(:meth:`Derivation.to_rst`), and in Jupyter (``_repr_markdown_`` and
``_repr_html_``).

A *display* (:meth:`Derivation.show`) records an object computed at run time
(a sympy expression or matrix, a list, a table) together with what it is; it
is rendered by :func:`abbreviated_latex`, which keeps small objects whole and
shows large ones by their leading terms or top-left block and their size, so
a display is never silently dropped and never unreadably long.

Checks compare with ``==``: structural equality for sympy expressions (expand
or simplify both sides first if that is what equality means), value equality
for rationals, integers and python-flint types, and :func:`numpy.array_equal`
when either side is a numpy array. No tolerance is ever applied; a numerical
check compares numbers the script has already rounded or certified.
"""

from __future__ import annotations

import re
from html import escape
from dataclasses import dataclass
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Literal

import numpy as np
import sympy

from symattn.core.errors import SymattnError

__all__ = ["KINDS", "LATEX_PREAMBLE", "Check", "Derivation", "Kind", "Step", "abbreviated_latex", "latex_document", "summary_html"]

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
    shown : bool
        True when ``latex`` already displays ``computed`` (a step recorded by
        :meth:`Derivation.show`), so renderers do not show it twice.
    """

    text: str
    latex: str | None
    computed: object
    shown: bool = False


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

    def show(self, text: str, value: object, name: str | None = None, *,
             terms: int = 6, block: int = 6) -> None:
        r"""Record a display of an object computed at run time.

        Parameters
        ----------
        text : str
            What the object is (prose, inline math ``$...$``).
        value : object
            The computed object: a sympy expression or matrix, a number
            (int, Fraction, python-flint), a numpy array or a list of these.
        name : str, optional
            LaTeX for the left-hand side; the display is ``name = value``.
        terms, block : int
            Passed to :func:`abbreviated_latex` (leading terms of a long sum,
            top-left block of a large matrix).

        Examples
        --------
        >>> import sympy
        >>> x = sympy.Symbol("x")
        >>> d = Derivation("demo", "Demo", "A sum.", "exact")
        >>> d.show("The expanded tenth power (computed):", sympy.expand((1 + x)**10), "(1+x)^{10}",
        ...        terms=3)
        >>> print(d.to_text().splitlines()[5])
             (1+x)^{10} = x^{10} + 10 x^{9} + 45 x^{8} + \cdots \quad[\text{11 terms}]
        """
        latex = abbreviated_latex(value, terms=terms, block=block)
        self._steps.append(Step(text, latex if name is None else f"{name} = {latex}", value, True))

    def show_table(self, text: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
        r"""Record a computed table (rendered as a LaTeX ``array``).

        Parameters
        ----------
        text : str
            What the table is.
        header : sequence of str
            Column titles: words, with inline math in ``$...$``.
        rows : sequence of sequences
            The computed cells, rendered by :func:`abbreviated_latex`
            (strings as the titles are).

        Examples
        --------
        >>> d = Derivation("demo", "Demo", "A table.", "exact")
        >>> d.show_table("Orders:", ["block", "order"], [[1, 1], [2, 5]])
        >>> print(d.to_text().splitlines()[5])
             \begin{array}{cc} \text{block} & \text{order} \\ \hline 1 & 1 \\ 2 & 5 \end{array}
        """
        body = " \\\\ ".join(" & ".join(_math_text(v) if isinstance(v, str) else
                                     abbreviated_latex(v, terms=5, block=4) for v in row) for row in rows)
        head = " & ".join(_math_text(h) for h in header)
        latex = (f"\\begin{{array}}{{{'c' * len(header)}}} {head} \\\\ \\hline {body} \\end{{array}}")
        self._steps.append(Step(text, latex, [list(row) for row in rows], True))

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
            if step.computed is not None and not step.shown:
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
        lines.append(f"Result: {self._verdict().upper()} ({self._tally()} checks)")
        return "\n".join(lines)

    def _verdict(self) -> str:
        return "pass" if self.passed else "fail"

    def _tally(self) -> str:
        return f"{sum(check.passed for check in self._checks)}/{len(self._checks)}"

    def _displays(self, step: Step) -> list[str]:
        """The LaTeX displays of a step: its display, then its computed object if not shown."""
        displays = [step.latex] if step.latex is not None else []
        if step.computed is not None and not step.shown and _is_sympy(step.computed):
            displays.append(sympy.latex(step.computed))
        return displays

    def to_latex(self, heading: Literal["paragraph", "section"] = "paragraph") -> str:
        r"""Render as a LaTeX fragment.

        The fragment has the title and statement, then the steps numbered
        ``Step 1.``, ``Step 2.``, ... with their displays in ``\[ ... \]``, then
        a ``longtable`` of the checks with ok/fail and kind. Prose, labels and
        notes are text with inline math in ``$...$`` (everything outside the
        dollars is escaped); computed objects that are not sympy objects are
        escaped and set in ``\texttt``. It compiles with the packages
        ``amsmath``, ``amssymb`` and ``longtable``.

        Parameters
        ----------
        heading : {"paragraph", "section"}
            The sectioning command of the title: ``\paragraph`` for a fragment
            to paste, ``\section`` (with a ``\label{proof:ID}``) in a document.

        Returns
        -------
        str
            The fragment.

        Examples
        --------
        >>> d = Derivation("demo_1", "Demo", "One equals one.", "exact")
        >>> d.check("eq. (1)", 1, 1)
        >>> print(d.to_latex())
        \paragraph{demo\_1: Demo (exact).}
        One equals one.
        <BLANKLINE>
        {\small
        \begin{longtable}{@{}r p{0.33\linewidth} p{0.2\linewidth} p{0.2\linewidth} l@{}}
        \# & check & computed & expected & result \\ \hline
        1 & eq. (1) & \texttt{1} & \texttt{1} & ok, exact \\
        \end{longtable}}
        <BLANKLINE>
        Cases checked: 0. Result: pass (1/1 checks).
        """
        if heading == "section":
            parts = [rf"\section{{{_latex_prose(self.title)}}}\label{{proof:{self.id}}}",
                     rf"\texttt{{{_escape(self.id)}}} ({self.kind}).", ""]
        else:
            parts = [rf"\paragraph{{{_escape(self.id)}: {_latex_prose(self.title)} ({self.kind}).}}"]
        parts += [_latex_prose(self.statement), ""]
        for number, step in enumerate(self._steps, start=1):
            parts.append(rf"Step {number}. {_latex_prose(step.text)}")
            parts += [rf"\[ {display} \]" for display in self._displays(step)]
            if step.computed is not None and not step.shown and not _is_sympy(step.computed):
                parts.append(rf"\par\noindent Computed: {_inline(step.computed)}")
            parts.append("")
        parts.append(r"{\small")
        parts.append(r"\begin{longtable}{@{}r p{0.33\linewidth} p{0.2\linewidth} p{0.2\linewidth} l@{}}")
        parts.append(r"\# & check & computed & expected & result \\ \hline")
        for number, check in enumerate(self._checks, start=1):
            label = _latex_prose(f"{check.label} ({check.note})" if check.note else check.label)
            verdict = "ok" if check.passed else r"\textbf{fail}"
            parts.append(
                rf"{number} & {label} & {_inline(check.computed)} & "
                rf"{_inline(check.expected)} & {verdict}, {check.kind} \\"
            )
        parts.append(r"\end{longtable}}")
        parts.append("")
        parts.append(f"Cases checked: {self.cases}. Result: {self._verdict()} ({self._tally()} checks).")
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
            for display in self._displays(step):
                lines += ["   .. math::", ""] + [f"      {row}" for row in display.splitlines()] + [""]
            if step.computed is not None and not step.shown and not _is_sympy(step.computed):
                lines += [f"   Computed: ``{_rst_literal(step.computed)}``", ""]
        lines += [".. list-table::", "   :header-rows: 1", "   :widths: 30 25 25 8 12", "",
                  "   * - check", "     - computed", "     - expected", "     - result", "     - kind"]
        for check in self._checks:
            label = _rst_prose(check.label + (f" ({check.note})" if check.note else ""))
            lines += [f"   * - {label}", f"     - ``{_rst_literal(check.computed)}``",
                      f"     - ``{_rst_literal(check.expected)}``",
                      f"     - {'ok' if check.passed else '**FAIL**'}", f"     - {check.kind}"]
        lines += ["", f"Cases checked: {self.cases}. Result: {'pass' if self.passed else 'FAIL'} "
                      f"({self._tally()} checks).", ""]
        lines += [f"- {_rst_prose(case)}" for case in self._cases]
        return "\n".join(lines).rstrip() + "\n"

    def _repr_markdown_(self) -> str:
        r"""Markdown with ``$...$`` and ``$$...$$`` math, for Jupyter.

        Examples
        --------
        >>> d = Derivation("demo_3", "Demo", "Here $x = 1$.", "exact")
        >>> d.show("The value:", 1, "x")
        >>> d.check("eq. (1)", 1, 1)
        >>> print(d._repr_markdown_())  # doctest: +ELLIPSIS
        **demo_3**: Demo (*exact*)
        <BLANKLINE>
        Here $x = 1$.
        <BLANKLINE>
        1. The value:
        <BLANKLINE>
           $$x = 1$$
        ...
        | 1 | eq. (1) | `1` | `1` | ok | exact |
        ...
        """
        lines = [f"**{self.id}**: {self.title} (*{self.kind}*)", "", self.statement, ""]
        for number, step in enumerate(self._steps, start=1):
            lines += [f"{number}. {step.text}", ""]
            lines += [f"   $${display}$$\n" for display in self._displays(step)]
            if step.computed is not None and not step.shown and not _is_sympy(step.computed):
                lines += [f"   Computed: `{_markdown_literal(step.computed)}`", ""]
        lines += ["| # | check | computed | expected | result | kind |", "|---|---|---|---|---|---|"]
        for number, check in enumerate(self._checks, start=1):
            label = (check.label + (f" ({check.note})" if check.note else "")).replace("|", r"\|")
            lines.append(f"| {number} | {label} | `{_markdown_literal(check.computed)}` | "
                         f"`{_markdown_literal(check.expected)}` | {'ok' if check.passed else '**FAIL**'} "
                         f"| {check.kind} |")
        lines += ["", f"Cases checked: {self.cases}. Result: **{self._verdict()}** ({self._tally()} checks)."]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        r"""HTML with MathJax-ready math (``\(..\)``, ``\[..\]``), for Jupyter and the docs.

        Examples
        --------
        >>> d = Derivation("demo_4", "Demo", "Here $x < 1$.", "exact")
        >>> d.check("eq. (1)", 1, 1)
        >>> html = d._repr_html_()
        >>> r'<span class="math notranslate nohighlight">\(x &lt; 1\)</span>' in html
        True
        """
        out = [f"<div class=\"symattn-derivation\"><p><strong>{escape(self.id)}</strong>: "
               f"{_html_prose(self.title)} (<em>{self.kind}</em>)</p>",
               f"<p>{_html_prose(self.statement)}</p>", "<ol>"]
        for step in self._steps:
            out.append(f"<li><p>{_html_prose(step.text)}</p>")
            out += [f"<div class=\"math notranslate nohighlight\">\\[{escape(display)}\\]</div>"
                    for display in self._displays(step)]
            if step.computed is not None and not step.shown and not _is_sympy(step.computed):
                out.append(f"<p>Computed: <code>{escape(_plain(step.computed))}</code></p>")
            out.append("</li>")
        out += ["</ol>", "<table><thead><tr><th>#</th><th>check</th><th>computed</th><th>expected</th>"
                "<th>result</th><th>kind</th></tr></thead><tbody>"]
        for number, check in enumerate(self._checks, start=1):
            label = check.label + (f" ({check.note})" if check.note else "")
            out.append(f"<tr><td>{number}</td><td>{_html_prose(label)}</td>"
                       f"<td><code>{escape(_plain(check.computed))}</code></td>"
                       f"<td><code>{escape(_plain(check.expected))}</code></td>"
                       f"<td>{'ok' if check.passed else '<strong>FAIL</strong>'}</td>"
                       f"<td>{check.kind}</td></tr>")
        out += ["</tbody></table>", f"<p>Cases checked: {self.cases}. Result: "
                f"<strong>{self._verdict()}</strong> ({self._tally()} checks).</p></div>"]
        return "\n".join(out)


def summary_html(title: str, rows: Sequence[tuple[str, str]]) -> str:
    r"""A two-column HTML summary with MathJax-ready math, for the ``_repr_html_`` of results.

    Parameters
    ----------
    title : str
        Prose, inline math in ``$...$``.
    rows : sequence of (str, str)
        Label and value, both prose with inline math in ``$...$``.

    Returns
    -------
    str
        A ``<div>`` with the title and a table; text is HTML-escaped and math
        is set in ``<span class="math">\(...\)</span>``.

    Examples
    --------
    >>> print(summary_html("Result", [("order", "$t^{5}$")]))
    <div class="symattn-result"><p><strong>Result</strong></p><table>
    <tr><th>order</th><td><span class="math notranslate nohighlight">\(t^{5}\)</span></td></tr>
    </table></div>
    """
    body = "\n".join(f"<tr><th>{_html_prose(label)}</th><td>{_html_prose(value)}</td></tr>" for label, value in rows)
    return f'<div class="symattn-result"><p><strong>{_html_prose(title)}</strong></p><table>\n{body}\n</table></div>'


#: The preamble of :func:`latex_document` (packages of TeX Live's base and recommended sets).
LATEX_PREAMBLE = r"""\documentclass[11pt]{article}
\usepackage[T1]{fontenc}
\usepackage{lmodern}
\usepackage[margin=2.2cm]{geometry}
\usepackage{amsmath,amssymb}
\usepackage{longtable}
\allowdisplaybreaks
\setlength{\emergencystretch}{3em}
\sloppy"""


def latex_document(derivations: Sequence[Derivation], title: str, preface: str = "") -> str:
    r"""A complete LaTeX document: preamble, title, contents, one section per derivation.

    Parameters
    ----------
    derivations : sequence of Derivation
        In the order of the sections.
    title : str
        The document title (prose, inline math allowed).
    preface : str, optional
        A paragraph before the table of contents (prose, inline math allowed).

    Returns
    -------
    str
        The document; it compiles with ``pdflatex`` and TeX Live's base and
        recommended packages (run it twice for the table of contents).

    Examples
    --------
    >>> d = Derivation("demo_5", "Demo", "One equals one.", "exact")
    >>> d.check("eq. (1)", 1, 1)
    >>> doc = latex_document([d], "Derivations")
    >>> doc.splitlines()[0], doc.splitlines()[-1]
    ('\\documentclass[11pt]{article}', '\\end{document}')
    >>> r"\section{Demo}\label{proof:demo_5}" in doc
    True
    """
    parts = [LATEX_PREAMBLE, rf"\title{{{_latex_prose(title)}}}", r"\date{}", r"\begin{document}",
             r"\maketitle"]
    if preface:
        parts += [_latex_prose(preface), ""]
    parts += [r"\tableofcontents", ""]
    for derivation in derivations:
        parts += [derivation.to_latex(heading="section"), ""]
    parts.append(r"\end{document}")
    return "\n".join(parts) + "\n"


def abbreviated_latex(obj: object, *, terms: int = 6, block: int = 6) -> str:
    r"""LaTeX of a computed object, abbreviated when large (never dropped).

    A sum with more than ``terms`` terms shows its leading terms (sympy's
    order: highest degree first) and the number of terms; a product or
    quotient abbreviates its factors; a matrix larger than ``block`` by
    ``block`` shows its top-left block and its size; a list shows its first
    ``2 * block`` entries and its length. Python and python-flint numbers
    and numpy arrays are converted exactly first.

    Parameters
    ----------
    obj : object
        The computed object.
    terms, block : int
        The limits above.

    Returns
    -------
    str
        LaTeX math (no delimiters).

    Examples
    --------
    >>> import sympy
    >>> from fractions import Fraction
    >>> x = sympy.Symbol("x")
    >>> abbreviated_latex(sympy.expand((1 + x)**9), terms=2)
    'x^{9} + 9 x^{8} + \\cdots \\quad[\\text{10 terms}]'
    >>> abbreviated_latex([Fraction(1, 2), 3])
    '\\left(\\frac{1}{2}, 3\\right)'
    >>> abbreviated_latex(sympy.eye(8), block=2)
    '\\left[\\begin{matrix}1 & 0 & \\cdots\\\\0 & 1 & \\cdots\\\\\\vdots & \\vdots & \\ddots\\end{matrix}\\right]_{8 \\times 8}'
    """
    value = _exact(obj)
    if isinstance(value, sympy.MatrixBase):
        return _matrix_latex(value, terms, block)
    if isinstance(value, list):
        shown = [abbreviated_latex(v, terms=terms, block=block) for v in value[: 2 * block]]
        if len(value) > 2 * block:
            shown.append(rf"\dots\ [\text{{{len(value)} entries}}]")
        if sum(len(item) for item in shown) <= _DISPLAY_WIDTH:
            return r"\left(" + ", ".join(shown) + r"\right)"
        lines, line = [], []
        for item in shown:  # a long list is laid out in rows, so a display never runs off the page
            if line and sum(len(x) for x in line) + len(item) > _DISPLAY_WIDTH:
                lines.append(", ".join(line))
                line = []
            line.append(item)
        lines.append(", ".join(line))
        return r"\left(\begin{array}{l}" + r",\\ ".join(lines) + r"\end{array}\right)"
    if isinstance(value, sympy.Basic):
        return _expr_latex(value, terms)
    return rf"\text{{{_text(_plain(value))}}}"


def _exact(obj: object) -> object:
    """Python, python-flint and numpy values as exact sympy objects (lists stay lists)."""
    if isinstance(obj, (sympy.Basic, sympy.MatrixBase)):
        return obj
    if isinstance(obj, bool):
        return sympy.true if obj else sympy.false
    if isinstance(obj, int):
        return sympy.Integer(obj)
    if isinstance(obj, Fraction):
        return sympy.Rational(obj.numerator, obj.denominator)
    if type(obj).__name__ in ("fmpz", "fmpq"):
        return sympy.Rational(int(obj.numerator), int(obj.denominator))
    if isinstance(obj, float):
        return sympy.Float(obj)
    if isinstance(obj, np.ndarray):
        if obj.ndim == 2:
            return sympy.Matrix([[_exact(v) for v in row] for row in obj.tolist()])
        return [_exact(v) for v in obj.tolist()]
    if isinstance(obj, (list, tuple)):
        return [_exact(v) for v in obj]
    if isinstance(obj, np.generic):
        return _exact(obj.item())
    return obj


#: Longest LaTeX source of one display row (about a printed line) before abbreviation.
_DISPLAY_WIDTH = 240


def _join_terms(rendered: list[str]) -> str:
    out = rendered[0]
    for term in rendered[1:]:
        out += f" - {term[1:].lstrip()}" if term.startswith("-") else f" + {term}"
    return out


def _expr_latex(expr: sympy.Basic, terms: int) -> str:
    full = sympy.latex(expr)
    if len(full) <= _DISPLAY_WIDTH and not _long_sum(expr, terms):
        return full
    if isinstance(expr, sympy.Add):
        ordered = expr.as_ordered_terms()
        head = _join_terms([_expr_latex(t, terms) for t in ordered[:terms]])
        if len(ordered) <= terms:
            return head
        return head + rf" + \cdots \quad[\text{{{len(ordered)} terms}}]"
    numerator, denominator = expr.as_numer_denom()
    if denominator != 1:
        return rf"\frac{{{_expr_latex(numerator, terms)}}}{{{_expr_latex(denominator, terms)}}}"
    if isinstance(expr, sympy.Mul):
        return " ".join(_factor_latex(f, terms) for f in expr.as_ordered_factors())
    if isinstance(expr, sympy.Pow):
        return _factor_latex(expr, terms)
    return rf"\text{{[expression with {sympy.count_ops(expr)} operations]}}"


def _long_sum(expr: sympy.Basic, terms: int) -> bool:
    """Whether ``expr`` is, or has as a factor or power base, a sum of more than ``terms`` terms."""
    if isinstance(expr, sympy.Add):
        return len(expr.args) > terms
    if isinstance(expr, sympy.Pow):
        return _long_sum(expr.base, terms)
    if isinstance(expr, sympy.Mul):
        return any(_long_sum(factor, terms) for factor in expr.args)
    return False


def _factor_latex(factor: sympy.Basic, terms: int) -> str:
    if isinstance(factor, sympy.Pow) and isinstance(factor.base, sympy.Add):
        return rf"\left({_expr_latex(factor.base, terms)}\right)^{{{sympy.latex(factor.exp)}}}"
    if isinstance(factor, sympy.Add):
        return rf"\left({_expr_latex(factor, terms)}\right)"
    return _expr_latex(factor, terms)


def _matrix_latex(matrix: sympy.MatrixBase, terms: int, block: int) -> str:
    rows, cols = matrix.shape
    entry_terms = max(3, terms // 2)
    cells = [[_expr_latex(matrix[i, j], entry_terms) for j in range(min(cols, block))]
             for i in range(min(rows, block))]
    if cols > block:
        for row in cells:
            row.append(r"\cdots")
    if rows > block:
        cells.append([r"\vdots"] * min(cols, block) + ([r"\ddots"] if cols > block else []))
    body = r"\\".join(" & ".join(row) for row in cells)
    size = rf"_{{{rows} \times {cols}}}" if rows > block or cols > block else ""
    return rf"\left[\begin{{matrix}}{body}\end{{matrix}}\right]{size}"


def _text(text: str) -> str:
    """Plain words for ``\\text{...}`` (LaTeX and MathJax alike): specials become spaces."""
    return "".join(" " if char in _LATEX_SPECIALS else char for char in text)


def _math_text(text: str) -> str:
    """Words with inline ``$...$`` as LaTeX math: ``\\text{...}`` outside the dollars."""
    return " ".join(part if i % 2 else rf"\text{{{_text(part)}}}"
                    for i, part in enumerate(text.split("$")) if part)


def _markdown_literal(obj: object) -> str:
    return _plain(obj).replace("`", "'").replace("|", r"\|")


def _html_prose(text: str) -> str:
    """Escaped prose with ``$...$`` as MathJax inline math spans."""
    return "".join(f'<span class="math notranslate nohighlight">\\({escape(part)}\\)</span>' if i % 2
                   else escape(part) for i, part in enumerate(text.split("$")))


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
    breakable = _escape(_plain(obj)).replace("*", r"*\allowbreak{}").replace(",", r",\allowbreak{}")
    return rf"\texttt{{{breakable}}}"


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
