"""A record of a computed argument: prose steps, displays and named checks.

A :class:`Derivation` is what every proof script returns. It collects the
steps of the argument (prose with an optional LaTeX display and the object the
step computed), the named checks that compare a computed value with the
theorem's formula evaluated independently, and a count of the cases covered.
The printers of :mod:`symattn.render` (text, LaTeX, reStructuredText, HTML,
Markdown) render it; the methods below call them. Prose (statement, step texts, labels, notes, cases) is
words with inline math ``$...$`` and code between double backquotes (see
:mod:`symattn.render.prose`).

A *display* (:meth:`Derivation.show`) records an object computed at run time
(a sympy expression or matrix, a list, a table) together with what it is; it
is rendered by :func:`~symattn.render.displays.abbreviated_latex`, which keeps
small objects whole and shows large ones by their leading terms or top-left
block and their size, so a display is never silently dropped and never
unreadably long.

Checks compare with ``==``: structural equality for sympy expressions (expand
or simplify both sides first if that is what equality means), value equality
for rationals, integers and python-flint types, and :func:`numpy.array_equal`
when either side is a numpy array. No tolerance is ever applied; a numerical
check compares numbers the script has already rounded or certified.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from symattn.core.errors import SymattnError
from symattn.render.displays import abbreviated_latex, math_text
from symattn.render.html import summary_html
from symattn.render.latex import LATEX_PREAMBLE, latex_document
from symattn.render.prose import plain

__all__ = ["KINDS", "LATEX_PREAMBLE", "Check", "Derivation", "Kind", "Step", "abbreviated_latex",
           "latex_document", "summary_html"]

#: The exactness of a check or a proof (see the exactness ladder).
Kind = Literal["exact", "certified", "conditional", "numerical"]
#: The kinds, from strongest to weakest (``conditional``: rests on a quoted statement).
KINDS: tuple[Kind, ...] = ("exact", "certified", "conditional", "numerical")


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
        body = " \\\\ ".join(" & ".join(math_text(v) if isinstance(v, str) else
                                     abbreviated_latex(v, terms=5, block=4) for v in row) for row in rows)
        head = " & ".join(math_text(h) for h in header)
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
                f"{self.id}: check {label!r} failed: computed {plain(computed)}, "
                f"expected {plain(expected)}{suffix}"
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

    @property
    def steps(self) -> list[Step]:
        """The recorded steps, in order (a copy)."""
        return list(self._steps)

    @property
    def case_list(self) -> list[str]:
        """The descriptions of the cases counted with :meth:`case` (a copy)."""
        return list(self._cases)

    @property
    def verdict(self) -> str:
        """``"pass"`` when :attr:`passed`, else ``"fail"``."""
        return "pass" if self.passed else "fail"

    @property
    def tally(self) -> str:
        """Passed checks over recorded checks, e.g. ``"5/5"``."""
        return f"{sum(check.passed for check in self._checks)}/{len(self._checks)}"

    def to_text(self) -> str:
        """Render for a terminal (see :func:`symattn.render.text.to_text`)."""
        from symattn.render.text import to_text

        return to_text(self)

    def to_latex(self, heading: Literal["paragraph", "section"] = "paragraph") -> str:
        r"""Render as a LaTeX fragment (see :func:`symattn.render.latex.to_latex`).

        Parameters
        ----------
        heading : {"paragraph", "section"}
            ``\paragraph`` for a fragment to paste, ``\section`` (with a
            ``\label{proof:ID}``) in a document.

        Examples
        --------
        >>> d = Derivation("demo_1", "Demo", "One equals one.", "exact")
        >>> d.check("eq. (1)", 1, 1)
        >>> print(d.to_latex())  # doctest: +ELLIPSIS
        \paragraph{demo\_1: Demo (exact).}
        One equals one.
        ...
        1 & eq. (1) & $1$ & $1$ & ok, exact \tabularnewline
        \end{longtable}}
        <BLANKLINE>
        Cases checked: 0. Result: pass (1/1 checks).
        """
        from symattn.render.latex import to_latex

        return to_latex(self, heading)

    def to_rst(self) -> str:
        """Render as reStructuredText for the docs (see :func:`symattn.render.rst.to_rst`)."""
        from symattn.render.rst import to_rst

        return to_rst(self)

    def _repr_markdown_(self) -> str:
        from symattn.render.markdown import to_markdown

        return to_markdown(self)

    def _repr_html_(self) -> str:
        from symattn.render.html import to_html

        return to_html(self)


def _validate_kind(kind: str) -> Kind:
    if kind not in KINDS:
        raise SymattnError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    return kind  # type: ignore[return-value]


def _equal(computed: Any, expected: Any) -> bool:
    if isinstance(computed, np.ndarray) or isinstance(expected, np.ndarray):
        return bool(np.array_equal(computed, expected))
    return bool(computed == expected)
