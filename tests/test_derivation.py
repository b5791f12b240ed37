"""Tests of symattn.render.derivation: recording, checking and rendering."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from symattn.render.derivation import KINDS, Derivation
from symattn.core.errors import SymattnError

x = sympy.Symbol("x")


def _demo() -> Derivation:
    d = Derivation("t0_demo", "Demo theorem", "$(x+1)^2 = x^2 + 2x + 1$", "exact")
    d.step("Expand the square.", latex="(x+1)^2", computed=sympy.expand((x + 1) ** 2))
    d.step("Count the terms.", computed=[1, 2, 1])
    d.check("Theorem 0, eq. (1)", sympy.expand((x + 1) ** 2), x**2 + 2 * x + 1)
    d.check("Theorem 0, eq. (2)", 3, 3, kind="certified", note="three terms")
    d.case("x symbolic")
    d.case("x = 2")
    return d


def test_kinds_are_the_ladder() -> None:
    assert KINDS == ("exact", "certified", "conditional", "numerical")


def test_records_checks_cases_and_passes() -> None:
    d = _demo()
    assert d.passed is True
    assert d.cases == 2
    assert [c.label for c in d.checks] == ["Theorem 0, eq. (1)", "Theorem 0, eq. (2)"]
    assert [c.kind for c in d.checks] == ["exact", "certified"]
    assert all(c.passed for c in d.checks)


def test_checks_property_is_a_copy() -> None:
    d = _demo()
    d.checks.clear()
    assert len(d.checks) == 2


def test_failing_check_is_recorded_then_raised() -> None:
    d = _demo()
    with pytest.raises(AssertionError, match=r"t0_demo: check 'bad' failed: computed 1, expected 2 \(why\)"):
        d.check("bad", 1, 2, note="why")
    assert d.passed is False
    assert d.checks[-1].label == "bad"
    assert d.checks[-1].passed is False


def test_no_check_means_not_passed() -> None:
    assert Derivation("t0", "empty", "nothing", "exact").passed is False


def test_comparison_is_exact_not_approximate() -> None:
    d = Derivation("t0", "exact", "s", "exact")
    with pytest.raises(AssertionError):
        d.check("rational", sympy.Rational(1, 3), sympy.Float(1 / 3))
    with pytest.raises(AssertionError):
        d.check("structural", (x + 1) ** 2, x**2 + 2 * x + 1)


def test_numpy_arrays_compare_elementwise_with_shape() -> None:
    d = Derivation("t0", "arrays", "s", "numerical")
    d.check("same", np.array([1, 2]), np.array([1, 2]))
    with pytest.raises(AssertionError):
        d.check("broadcast is not equality", np.array([1, 1]), 1)
    with pytest.raises(AssertionError):
        d.check("different", np.array([1, 2]), np.array([1, 3]))
    assert [c.passed for c in d.checks] == [True, False, False]


@pytest.mark.parametrize("kind", ["proved", "", "Exact"])
def test_unknown_kind_is_rejected(kind: str) -> None:
    with pytest.raises(SymattnError, match="kind must be one of"):
        Derivation("t0", "t", "s", kind)  # type: ignore[arg-type]
    d = Derivation("t0", "t", "s", "exact")
    with pytest.raises(SymattnError):
        d.check("c", 1, 1, kind=kind)  # type: ignore[arg-type]


def test_to_text() -> None:
    text = _demo().to_text()
    assert text.splitlines()[0] == "t0_demo: Demo theorem [exact]"
    assert "1. Expand the square." in text
    assert "     (x+1)^2" in text
    assert "     = x**2 + 2*x + 1" in text
    assert "2. Count the terms." in text
    assert "ok   Theorem 0, eq. (2) [certified]" in text
    assert "Cases checked: 2" in text
    assert "  - x = 2" in text
    assert text.splitlines()[-1] == "Result: PASS (2/2 checks)"


def test_to_text_marks_failure_and_truncates_long_values() -> None:
    d = Derivation("t0", "t", "s", "exact")
    with pytest.raises(AssertionError):
        d.check("long", "a" * 500, "b")
    text = d.to_text()
    assert "FAIL long [exact]" in text
    assert "computed " + "a" * 197 + "..." in text
    assert text.splitlines()[-1] == "Result: FAIL (0/1 checks)"


def test_to_text_shows_at_most_ten_cases() -> None:
    d = Derivation("t0", "t", "s", "exact")
    for n in range(13):
        d.case(f"case {n}")
    text = d.to_text()
    assert "  - case 9" in text
    assert "case 10" not in text
    assert "  ... (3 more)" in text


def test_to_latex() -> None:
    latex = _demo().to_latex()
    assert latex.startswith(r"\paragraph{t0\_demo: Demo theorem (exact).}")
    assert "Step 1. Expand the square.\n\\[ (x+1)^2 \\]\n\\[ x^{2} + 2 x + 1 \\]" in latex
    assert "Step 2. Count the terms.\n\\[ \\left(1, 2, 1\\right) \\]" in latex  # a list of numbers is math
    assert r"\begin{longtable}" in latex
    assert r"1 & Theorem 0, eq. (1) & $x^{2} + 2 x + 1$ & $x^{2} + 2 x + 1$ & ok, exact \tabularnewline" in latex
    assert r"2 & Theorem 0, eq. (2) (three terms) & $3$ & $3$ & ok, certified \tabularnewline" in latex
    assert latex.endswith("Cases checked: 2. Result: pass (2/2 checks).")


def test_to_latex_escapes_plain_values_and_marks_failure() -> None:
    d = Derivation("t0", "t", "s", "exact")
    with pytest.raises(AssertionError):
        d.check("c", {"a_b": "50%"}, "x^y & z")
    latex = d.to_latex()
    assert r"\texttt{\{'a\_b': '50\%'\}}" in latex
    assert r" & x\textasciicircum{}y \& z & " in latex  # a word is prose, escaped
    assert r"\textbf{fail}" in latex


def test_sympy_matrix_renders_as_latex() -> None:
    d = Derivation("t0", "t", "s", "exact")
    d.step("A matrix.", computed=sympy.Matrix([[1, 0], [0, x]]))
    assert r"\left[\begin{matrix}1 & 0\\0 & x\end{matrix}\right]" in d.to_latex()


# ------------------------------------------------------------ computed displays


def test_show_records_the_object_and_renders_it_once() -> None:
    d = Derivation("t0", "t", "s", "exact")
    d.show("The tenth power:", sympy.expand((1 + x) ** 10), "(1+x)^{10}", terms=3)
    step = d_steps(d)[0]
    assert step.shown and step.computed == sympy.expand((1 + x) ** 10)
    assert step.latex == r"(1+x)^{10} = x^{10} + 10 x^{9} + 45 x^{8} + \cdots \quad[\text{11 terms}]"
    assert d.to_latex().count("x^{10}") == 1  # not shown a second time from the computed object
    assert d.to_rst().count("x^{10}") == 1


def d_steps(d: Derivation):
    return d._steps  # the recorded steps (tests only)


def test_abbreviated_latex_keeps_small_and_abbreviates_large() -> None:
    from fractions import Fraction

    from symattn.render.derivation import abbreviated_latex

    assert abbreviated_latex(x**2 + 1) == "x^{2} + 1"
    assert abbreviated_latex(Fraction(-3, 4)) == r"- \frac{3}{4}"
    assert abbreviated_latex(np.array([[1, Fraction(1, 2)]], dtype=object)) == \
        r"\left[\begin{matrix}1 & \frac{1}{2}\end{matrix}\right]"
    big = sympy.Matrix(9, 7, lambda i, j: i + j)
    rendered = abbreviated_latex(big, block=3)
    assert rendered.endswith(r"\end{matrix}\right]_{9 \times 7}") and r"\ddots" in rendered
    assert abbreviated_latex(list(range(30)), block=2) == r"\left(0, 1, 2, 3, \dots\ [\text{30 entries}]\right)"
    product = sympy.Mul(x + 1, sympy.expand((x + 2) ** 12), evaluate=False)
    assert r"[\text{13 terms}]" in abbreviated_latex(product, terms=2)
    rows = abbreviated_latex([sympy.Symbol(f"q_{i}") * 10**20 for i in range(12)])
    assert rows.startswith(r"\left(\begin{array}{l}")  # a long list is laid out in rows


def test_show_table_renders_math_headers_and_cells() -> None:
    d = Derivation("t0", "t", "s", "exact")
    d.show_table("Orders:", ["$j$", "coefficient of $y_1$"], [[0, "none to $\\rho^7$"], [1, x / 2]])
    assert d_steps(d)[0].latex == (r"\begin{array}{cc} j & \text{coefficient of } y_1 \\ \hline "
                                   r"0 & \text{none to } \rho^7 \\ 1 & \frac{x}{2} \end{array}")


def test_section_heading_and_document() -> None:
    from symattn.render.derivation import latex_document

    latex = _demo().to_latex(heading="section")
    assert latex.startswith("\\section{Demo theorem}\\label{proof:t0_demo}\n\\texttt{t0\\_demo} (exact).")
    doc = latex_document([_demo()], "All $x$", preface="Computed & checked.")
    assert "\\title{All $x$}" in doc and "Computed \\& checked." in doc
    assert doc.index("\\tableofcontents") < doc.index("\\section{Demo theorem}") < doc.index("\\end{document}")


def test_jupyter_reprs() -> None:
    d = _demo()
    markdown = d._repr_markdown_()
    assert markdown.startswith("**t0_demo**: Demo theorem (*exact*)\n\n$(x+1)^2 = x^2 + 2x + 1$")
    assert "   $$(x+1)^2$$" in markdown and "| 2 | Theorem 0, eq. (2) (three terms) | $3$ | $3$ | ok | certified |" in markdown
    html = d._repr_html_()
    assert '<span class="math notranslate nohighlight">\\((x+1)^2 = x^2 + 2x + 1\\)</span>' in html
    assert '<div class="math notranslate nohighlight">\\[x^{2} + 2 x + 1\\]</div>' in html
    assert "<td>certified</td>" in html and "<strong>pass</strong> (2/2 checks)" in html


# ------------------------------------------------------------ prose and check tables


def _marked() -> Derivation:
    d = Derivation("t0_marked", "Marked", "Kind ``certified`` and $S_{P^T A P}$ (50%).", "exact")
    d.step("Run ``symattn prove t4``.", latex="x")
    d.check("long sum", sympy.expand((1 + x) ** 12), sympy.expand((1 + x) ** 12))
    d.check("a word", "singleton", "singleton")
    return d


def test_prose_code_and_math_in_every_printer() -> None:
    d = _marked()
    latex = d.to_latex()
    assert r"Kind \texttt{certified} and $S_{P^T A P}$ (50\%)." in latex
    assert "``" not in latex and r"\_\{" not in latex
    rst = d.to_rst()
    assert "Kind ``certified`` and :math:`S_{P^T A P}` (50%)." in rst and r"\`" not in rst
    html = d._repr_html_()
    assert "Kind <code>certified</code> and" in html and "``" not in html
    assert "Kind `certified` and $S_{P^T A P}$" in d._repr_markdown_()


def test_check_tables_typeset_values_as_math_with_their_term_count() -> None:
    d = _marked()
    cell = r"$x^{12} + 12 x^{11} + 66 x^{10} + \cdots \quad[\text{13 terms}]$"
    assert f"1 & long sum & {cell} & {cell} & ok, exact" in d.to_latex()
    assert "2 & a word & singleton & singleton & ok, exact" in d.to_latex()
    assert r"- :math:`x^{12} + 12 x^{11} + 66 x^{10} + \cdots \quad[\text{13 terms}]`" in d.to_rst()
    assert "x*" not in d.to_latex()  # no raw sympy string
