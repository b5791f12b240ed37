"""Jupyter displays of results, and a worked instance of a proof computed at run time."""

from __future__ import annotations

import sympy

from symattn import Architecture, Normalizer, effective_fiber, native_spectrum, sharp_degree
from symattn.render.derivation import Derivation


def test_spectrum_html() -> None:
    html = native_spectrum(Architecture.uniform(1, 2, 1, 2, "exp"))._repr_html_()
    assert "Native contact spectrum (Theorem 4)" in html
    assert r"\(t^{1} \times 3\)</span> (layer 1 query/key)" in html
    assert r"\(0 \times 1\)</span> (exact kernel)" in html and "7 of 8 native parameters" in html


def test_jet_html() -> None:
    html = sharp_degree(Architecture.uniform(1, 1, 1, 2, "cosh"))._repr_html_()
    assert r"\(N = 5\)" in html and "Zero-input jets (Theorem 3)" in html


def test_fiber_html() -> None:
    html = effective_fiber([[1, 0]], [[[1, 2], [0, 1]]], "cosh", 2)._repr_html_()
    assert "Effective fiber (Theorem 1)" in html and "<td>sign-orbit</td>" in html
    assert "evidence (ok)" in html


def test_normalizer_latex_and_html() -> None:
    phi = Normalizer("cosh")
    assert phi._repr_latex_() == (r"$\phi(s) = \cosh{\left(s \right)},\quad k = 2,\ b = \frac{1}{2},"
                                  r"\quad h'(0) = 0,\ h''(0) = 1$")
    assert r"\(1 + \frac{s^{2}}{2} + \frac{s^{4}}{24} + \frac{s^{6}}{720} + O(s^{7})\)" in phi._repr_html_()


def test_t3_worked_instance_shows_where_m2_enters() -> None:
    """The rho-coefficients are computed over Q[M_2]: M_2 is absent below rho^7 and present at it."""
    from symattn.proofs.t3_sharp_taylor import _worked_instance

    d = Derivation("t3", "t", "s", "exact")
    _worked_instance(d)
    table = d.checks, d._steps[0].computed  # rows [j, coefficient]
    rows = table[1]
    m2 = {s for s in rows[7][1].free_symbols}
    assert len(m2) == 4 and all("M^{(2)}" in s.name for s in m2)
    assert all(not sympy.sympify(c).free_symbols for _, c in rows[:7])
    assert [step.latex.split(" = ")[0] for step in d._steps[-2:]] == ["C_{7}", "M_2"]
