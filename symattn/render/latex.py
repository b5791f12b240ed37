r"""The LaTeX printer of a :class:`~symattn.render.derivation.Derivation`, and whole documents.

A fragment (:func:`to_latex`) has the title and statement, the numbered steps
with their displays in ``\[ ... \]`` and a ``longtable`` of the checks, whose
computed and expected values are typeset as math (abbreviated, with their
term count, when long; words as text). Prose is text with inline math and
``\texttt`` code (see :mod:`symattn.render.prose`); everything else is
escaped. It compiles with ``amsmath``, ``amssymb`` and ``longtable``;
:func:`latex_document` wraps several fragments in a complete document.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from symattn.render.displays import LATEX_SPECIALS, shown_as_text, step_displays, value_latex
from symattn.render.prose import plain, render

__all__ = ["LATEX_PREAMBLE", "escape", "latex_document", "prose", "to_latex"]

#: The preamble of :func:`latex_document` (packages of TeX Live's base and recommended sets).
LATEX_PREAMBLE = r"""\documentclass[11pt]{article}
\usepackage[T1]{fontenc}
\usepackage{lmodern}
\usepackage[margin=2.2cm]{geometry}
\usepackage{amsmath,amssymb}
\usepackage{longtable,array}
\allowdisplaybreaks
\setlength{\emergencystretch}{3em}
\sloppy"""

_TABLE = (r"\begin{longtable}{@{}r >{\raggedright}p{0.25\linewidth} >{\raggedright}p{0.27\linewidth} "
          r">{\raggedright\arraybackslash}p{0.27\linewidth} l@{}}")


def to_latex(derivation, heading: Literal["paragraph", "section"] = "paragraph") -> str:
    r"""Render as a LaTeX fragment (see the module docstring).

    Parameters
    ----------
    derivation : Derivation
    heading : {"paragraph", "section"}
        The sectioning command of the title: ``\paragraph`` for a fragment
        to paste, ``\section`` (with a ``\label{proof:ID}``) in a document.

    Returns
    -------
    str
        The fragment.
    """
    d = derivation
    if heading == "section":
        parts = [rf"\section{{{prose(d.title)}}}\label{{proof:{d.id}}}",
                 rf"\texttt{{{escape(d.id)}}} ({d.kind}).", ""]
    else:
        parts = [rf"\paragraph{{{escape(d.id)}: {prose(d.title)} ({d.kind}).}}"]
    parts += [prose(d.statement), ""]
    for number, step in enumerate(d.steps, start=1):
        parts.append(rf"Step {number}. {prose(step.text)}")
        parts += [rf"\[ {display} \]" for display in step_displays(step)]
        if shown_as_text(step):
            parts.append(rf"\par\noindent Computed: {_code(step.computed)}")
        parts.append("")
    parts.append(r"{\small")
    parts.append(_TABLE)
    parts.append(r"\# & check & computed & expected & result \tabularnewline \hline")
    for number, check in enumerate(d.checks, start=1):
        label = prose(f"{check.label} ({check.note})" if check.note else check.label)
        verdict = "ok" if check.passed else r"\textbf{fail}"
        parts.append(rf"{number} & {label} & {_cell(check.computed)} & {_cell(check.expected)} & "
                     rf"{verdict}, {check.kind} \tabularnewline")
    parts.append(r"\end{longtable}}")
    parts.append("")
    parts.append(f"Cases checked: {d.cases}. Result: {d.verdict} ({d.tally} checks).")
    return "\n".join(parts)


def latex_document(derivations: Sequence, title: str, preface: str = "") -> str:
    r"""A complete LaTeX document: preamble, title, contents, one section per derivation.

    Parameters
    ----------
    derivations : sequence of Derivation
        In the order of the sections.
    title : str
        The document title (prose).
    preface : str, optional
        A paragraph before the table of contents (prose).

    Returns
    -------
    str
        The document; it compiles with ``pdflatex`` and TeX Live's base and
        recommended packages (run it twice for the table of contents).

    Examples
    --------
    >>> from symattn.render.derivation import Derivation
    >>> d = Derivation("demo_5", "Demo", "One equals one.", "exact")
    >>> d.check("eq. (1)", 1, 1)
    >>> doc = latex_document([d], "Derivations")
    >>> doc.splitlines()[0], doc.splitlines()[-1]
    ('\\documentclass[11pt]{article}', '\\end{document}')
    >>> r"\section{Demo}\label{proof:demo_5}" in doc
    True
    """
    parts = [LATEX_PREAMBLE, rf"\title{{{prose(title)}}}", r"\date{}", r"\begin{document}", r"\maketitle"]
    if preface:
        parts += [prose(preface), ""]
    parts += [r"\tableofcontents", ""]
    for derivation in derivations:
        parts += [to_latex(derivation, heading="section"), ""]
    parts.append(r"\end{document}")
    return "\n".join(parts) + "\n"


def escape(text: str) -> str:
    r"""Text with every LaTeX special escaped.

    Examples
    --------
    >>> print(escape("50% of a_b"))
    50\% of a\_b
    """
    return "".join(LATEX_SPECIALS.get(char, char) for char in text)


def prose(text: str) -> str:
    r"""Prose as LaTeX: inline math kept, code in ``\texttt``, everything else escaped.

    Examples
    --------
    >>> print(prose("kind ``certified`` at $t^{5}$ (50%)"))
    kind \texttt{certified} at $t^{5}$ (50\%)
    """
    return render(text, lambda m: f"${m}$", lambda c: rf"\texttt{{{escape(c)}}}", escape)


def _cell(obj: object) -> str:
    """A check-table cell: math when the value is mathematical, else breakable code."""
    if isinstance(obj, str):
        return prose(obj)
    rendered = value_latex(obj)
    return f"${rendered}$" if rendered is not None else _code(obj)


def _code(obj: object) -> str:
    breakable = escape(plain(obj)).replace("*", r"*\allowbreak{}").replace(",", r",\allowbreak{}")
    return rf"\texttt{{{breakable}}}"
