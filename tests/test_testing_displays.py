"""Concise, rich results (issue 27.3): every result type has a one-line repr with its headline
figures and ``_repr_html_`` / ``_repr_latex_`` from the one mixin :class:`symattn.render.rich_result.RichResult`."""

from __future__ import annotations

import numpy as np
import pytest

from symattn import Architecture, native_spectrum, neuromanifold_dimension, sharp_degree
from symattn.analyses.bank import least_bank
from symattn.analyses.fibers import effective_fiber
from symattn.analyses.sensitivity import sensitivity
from symattn.audit import audit, from_arrays
from symattn.render.rich_result import REPR_LIMIT, RichResult
from symattn.analyses.protocols import protocol_f3

ARCH = Architecture.uniform(1, 2, 1, 2, "exp")


def _audit():
    rng = np.random.default_rng(3)
    arrays = {"Q1": rng.normal(size=(2, 1)), "K1": rng.normal(size=(2, 1)), "V1": rng.normal(size=(2, 2))}
    return audit(from_arrays(arrays, tokens=2), matrix_free=False)


RESULTS = {
    "Spectrum": (lambda: native_spectrum(ARCH), ["t^0 x4, t^1 x3", "kernel 1", "rank 7 of 8"]),
    "JetResult": (lambda: sharp_degree(ARCH), ["sharp degree N = 3", "rank 8 of 8 parameters"]),
    "Fiber": (lambda: effective_fiber([[1, 0]], [[[1, 2], [0, 1]]], "cosh", 2), ["sign-orbit", "verified"]),
    "Dimension": (lambda: neuromanifold_dimension(ARCH), ["dimension 7 of 8 parameters"]),
    "BankResult": (lambda: least_bank(ARCH), ["least random bank 3"]),
    "Sensitivity": (lambda: sensitivity(ARCH, t_min=0.05), ["float64 keeps rank", "of 7"]),
    "Architecture": (lambda: Architecture.uniform(2, 2, 1, 3, "exp", mask="causal"), ["mask causal"]),
    "Audit": (_audit, ["D = 1, widths [2, 2]", "rank"]),
    "F3": (lambda: protocol_f3(digits=40, draws=10), ["slope at zero", "numerical at 40 digits"]),
}


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_every_result_has_a_one_line_repr_and_rich_displays(name):
    make, figures = RESULTS[name]
    result = make()
    assert isinstance(result, RichResult) and type(result).__name__ == name
    text = repr(result)
    assert "\n" not in text and len(text) <= REPR_LIMIT, text
    assert all(figure in text for figure in figures), text
    html, latex = result._repr_html_(), result._repr_latex_()
    assert html.startswith('<div class="symattn-result">') and "</table></div>" in html
    assert latex.startswith("$$\\begin{array}{ll}") and latex.endswith("\\end{array}$$")
    assert latex.count("\\text{") >= 2 and "<" not in latex  # prose in \text{...}, no HTML


def test_the_audit_repr_is_short_although_the_report_holds_arrays():
    result = _audit()
    assert len(repr(result)) <= REPR_LIMIT < 156_000
    assert "Audit of a trained model" in result._repr_html_()
