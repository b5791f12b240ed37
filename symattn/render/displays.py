r"""LaTeX of computed objects, abbreviated when large but never dropped.

:func:`abbreviated_latex` is what every display of a derivation is made of:
small objects are shown whole, a long sum by its leading terms and its term
count, a large matrix by its top-left block and its size, a long list by its
first entries and its length. :func:`value_latex` is the same for a cell of a
check table (tighter limits), or None when the value is not mathematical (a
word, a dictionary), which the printers then show as text.

Examples
--------
>>> import sympy
>>> x = sympy.Symbol("x")
>>> abbreviated_latex(sympy.expand((1 + x)**9), terms=2)
'x^{9} + 9 x^{8} + \\cdots \\quad[\\text{10 terms}]'
>>> value_latex(sympy.expand((1 + x)**9))
'x^{9} + 9 x^{8} + 36 x^{7} + \\cdots \\quad[\\text{10 terms}]'
>>> value_latex("singleton") is None
True
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy

__all__ = ["abbreviated_latex", "as_math", "math_text", "text_in_math", "value_latex"]

#: Longest LaTeX source of one display row (about a printed line) before abbreviation.
DISPLAY_WIDTH = 240
#: Longest LaTeX source of a check-table cell; a longer value is abbreviated further.
CELL_WIDTH = 160
#: Longest LaTeX source of one row of a list in a check-table cell (about a quarter of a line).
CELL_ROW = 36
#: Digits of an integer shown in full; a longer one shows its first and last digits and its length.
DIGITS = 16

#: Characters that are LaTeX specials (escaped in text, blanked in ``\text{...}``).
LATEX_SPECIALS = {
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


def abbreviated_latex(obj: object, *, terms: int = 6, block: int = 6, width: int = 0) -> str:
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
    width : int, optional
        Longest LaTeX source of one row of a list (a longer list is laid
        out in rows); default :data:`DISPLAY_WIDTH`.

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
    value = as_math(obj)
    width = width or DISPLAY_WIDTH
    if isinstance(value, sympy.MatrixBase):
        return _matrix_latex(value, terms, block)
    if isinstance(value, list):
        shown = [abbreviated_latex(v, terms=terms, block=block, width=width) for v in value[: 2 * block]]
        if len(value) > 2 * block:
            shown.append(rf"\dots\ [\text{{{len(value)} entries}}]")
        if sum(len(item) for item in shown) <= width:
            return r"\left(" + ", ".join(shown) + r"\right)"
        lines, line = [], []
        for item in shown:  # a long list is laid out in rows, so a display never runs off the page
            if line and sum(len(x) for x in line) + len(item) > width:
                lines.append(", ".join(line))
                line = []
            line.append(item)
        lines.append(", ".join(line))
        return r"\left(\begin{array}{l}" + r",\\ ".join(lines) + r"\end{array}\right)"
    if isinstance(value, sympy.Basic):
        return _expr_latex(value, terms)
    return rf"\text{{{text_in_math(' '.join(str(value).split()))}}}"


def value_latex(obj: object) -> str | None:
    r"""LaTeX of a check's computed or expected value, or None when it is not mathematical.

    Numbers (Python, python-flint, numpy), sympy expressions and matrices and
    lists of them (words inside a list too) are mathematical; a long one is abbreviated (at most three
    leading terms, a 3 x 3 block, six list entries; then one term) so that a
    cell stays short; words and other objects are not (None).

    Parameters
    ----------
    obj : object
        The value.

    Returns
    -------
    str or None
        LaTeX math without delimiters.

    Examples
    --------
    >>> import sympy
    >>> value_latex(sympy.Rational(3, 4)), value_latex([1, 5, 17]), value_latex(True)
    ('\\frac{3}{4}', '\\left(1, 5, 17\\right)', '\\text{True}')
    >>> value_latex({"a": 1}) is None
    True
    """
    value = as_math(obj)
    if not isinstance(value, (sympy.Basic, sympy.MatrixBase, list)) or not _mathematical(value):
        return None
    rendered = abbreviated_latex(value, terms=3, block=3, width=CELL_ROW)
    if len(rendered) > CELL_WIDTH:
        rendered = abbreviated_latex(value, terms=1, block=2, width=CELL_ROW)
    return rendered


def math_text(text: str) -> str:
    r"""Words with inline ``$...$`` as LaTeX math: ``\text{...}`` outside the dollars.

    Examples
    --------
    >>> math_text("coefficient of $y_1$")
    '\\text{coefficient of } y_1'
    """
    return " ".join(part if i % 2 else rf"\text{{{text_in_math(part)}}}"
                    for i, part in enumerate(text.split("$")) if part)


def text_in_math(text: str) -> str:
    r"""Plain words for ``\text{...}`` (LaTeX and MathJax alike): specials become spaces."""
    return "".join(" " if char in LATEX_SPECIALS else char for char in text)


def as_math(obj: object) -> object:
    """Python, python-flint and numpy values as exact sympy objects (lists stay lists).

    Examples
    --------
    >>> from fractions import Fraction
    >>> as_math(Fraction(1, 3)), as_math((1, 2))
    (1/3, [1, 2])
    """
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
            return sympy.Matrix([[as_math(v) for v in row] for row in obj.tolist()])
        return [as_math(v) for v in obj.tolist()]
    if isinstance(obj, (list, tuple)):
        return [as_math(v) for v in obj]
    if isinstance(obj, np.generic):
        return as_math(obj.item())
    if callable(getattr(obj, "_sympy_", None)):  # a symengine expression
        return obj._sympy_()
    return obj


def _mathematical(value: object, inner: bool = False) -> bool:
    """Sympy objects, and lists of them (a list may hold words too, shown as text in the math)."""
    if isinstance(value, list):
        return all(_mathematical(v, True) for v in value)
    return isinstance(value, (sympy.Basic, sympy.MatrixBase)) or (inner and isinstance(value, str))


def _join_terms(rendered: list[str]) -> str:
    out = rendered[0]
    for term in rendered[1:]:
        out += f" - {term[1:].lstrip()}" if term.startswith("-") else f" + {term}"
    return out


def _expr_latex(expr: sympy.Basic, terms: int) -> str:
    if isinstance(expr, sympy.Integer) and len(str(abs(expr.p))) > DIGITS:
        return _integer_latex(int(expr.p))
    if isinstance(expr, sympy.Rational) and max(len(str(abs(expr.p))), len(str(expr.q))) > DIGITS:
        sign = "- " if expr.p < 0 else ""
        return rf"{sign}\frac{{{_integer_latex(abs(int(expr.p)))}}}{{{_integer_latex(int(expr.q))}}}"
    full = sympy.latex(expr)
    if len(full) <= _SHORT or (len(full) <= DISPLAY_WIDTH and not _long_sum(expr, terms)):
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


def _integer_latex(n: int) -> str:
    r"""An integer, or its first and last digits and its length when long.

    Examples
    --------
    >>> _integer_latex(12345), _integer_latex(-(10**40 + 7))
    ('12345', '-10000\\ldots 0007\\,[\\text{41 digits}]')
    """
    digits = str(abs(n))
    if len(digits) <= DIGITS:
        return str(n)
    sign = "-" if n < 0 else ""
    return rf"{sign}{digits[:5]}\ldots {digits[-4:]}\,[\text{{{len(digits)} digits}}]"


#: An expression whose LaTeX is at most this long is never abbreviated (the abbreviation is no shorter).
_SHORT = 32


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
    entry_terms = max(3, terms // 2) if terms > 1 else 1
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


def step_displays(step: object) -> list[str]:
    """The LaTeX displays of a derivation step: its display, then its computed object.

    The computed object is shown (abbreviated) when the step did not display
    it already and it is mathematical (see :func:`value_latex`); otherwise
    the printers show it as text.
    """
    latex, computed, shown = step.latex, step.computed, step.shown  # type: ignore[attr-defined]
    out = [latex] if latex is not None else []
    if computed is not None and not shown and _mathematical(as_math(computed)):
        out.append(abbreviated_latex(computed))
    return out


def shown_as_text(step: object) -> bool:
    """Whether a step's computed object is shown as text (not mathematical, not displayed)."""
    computed, shown = step.computed, step.shown  # type: ignore[attr-defined]
    return computed is not None and not shown and not _mathematical(as_math(computed))
