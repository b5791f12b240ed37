r"""One display for every result: a one-line ``repr``, ``_repr_html_`` and ``_repr_latex_``.

A result class derives from :class:`RichResult` and says two things about itself:
:meth:`~RichResult._headline` (the headline figures, one short line of plain text) and
:meth:`~RichResult._summary` (a title and ``(label, value)`` rows, prose with inline math
in ``$...$``). The mixin turns them into

* ``repr``: ``<Name: headline>`` on one line, at most :data:`REPR_LIMIT` characters
  (a terminal or a log shows the figures, not a dump of every array);
* ``_repr_html_``: a two-column table (:func:`symattn.render.html.summary_html`),
  for Jupyter and the docs;
* ``_repr_latex_``: the same table as a LaTeX ``array`` in display math, prose set in
  ``\text{...}`` with its special characters escaped.

Dataclasses that use it are declared ``@dataclass(repr=False)`` so that the generated
``__repr__`` does not replace the mixin's.

Examples
--------
>>> class Result(RichResult):
...     def _headline(self):
...         return "rank 3 of 4"
...     def _summary(self):
...         return "A result", [("rank", "$3$ of 4 (exact)"), ("note", "50% & more")]
>>> Result()
<Result: rank 3 of 4>
>>> print(Result()._repr_latex_())
$$\begin{array}{ll}\multicolumn{2}{l}{\textbf{A result}}\\
\text{rank} & 3\text{ of 4 (exact)}\\
\text{note} & \text{50\% \& more}
\end{array}$$
"""

from __future__ import annotations

__all__ = ["REPR_LIMIT", "RichResult", "latex_prose", "short"]

#: Most characters of a result's ``repr``.
REPR_LIMIT = 160

_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "#": r"\#", "%": r"\%", "&": r"\&",
                  "_": r"\_", "^": r"\^{}", "~": r"\~{}", "<": r"\textless{}", ">": r"\textgreater{}"}


def short(text: str, limit: int = REPR_LIMIT) -> str:
    """``text`` on one line, cut to ``limit`` characters (``...`` marks the cut).

    >>> short("a\\n b  c"), short("x" * 10, 6)
    ('a b c', 'xxx...')
    """
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def latex_prose(text: str) -> str:
    r"""Prose with inline math ``$...$`` as LaTeX math-mode content: text in ``\text{...}``.

    >>> latex_prose("rank $r_i$ of 5_a")
    '\\text{rank }r_i\\text{ of 5\\_a}'
    """
    parts = str(text).split("$")
    out = []
    for i, part in enumerate(parts):
        if i % 2:  # math
            out.append(part)
        elif part:
            out.append(r"\text{" + "".join(_LATEX_SPECIAL.get(c, c) for c in part) + "}")
    return "".join(out)


class RichResult:
    """Mixin of the result classes: the one implementation of their displays (module docstring)."""

    def _headline(self) -> str:  # pragma: no cover - every subclass says its figures
        raise NotImplementedError

    def _summary(self) -> tuple[str, list[tuple[str, str]]]:  # pragma: no cover
        raise NotImplementedError

    def __repr__(self) -> str:
        name = type(self).__name__
        return f"<{name}: {short(self._headline(), REPR_LIMIT - len(name) - 4)}>"

    def _repr_html_(self) -> str:
        from symattn.render.html import summary_html

        title, rows = self._summary()
        return summary_html(title, rows)

    def _repr_latex_(self) -> str:
        title, rows = self._summary()
        body = "\\\\\n".join(f"{latex_prose(label)} & {latex_prose(value)}" for label, value in rows)
        title = "$".join(p if i % 2 else "".join(_LATEX_SPECIAL.get(c, c) for c in p)
                         for i, p in enumerate(str(title).split("$")))  # text, its math kept in $...$
        return "$$\\begin{array}{ll}\\multicolumn{2}{l}{\\textbf{" + title + "}}\\\\\n" + body + "\n\\end{array}$$"
