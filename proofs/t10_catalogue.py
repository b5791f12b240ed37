r"""Catalogue data checked: every named normalizer's fast series against its expression.

A catalogue normalizer (:data:`symattn.model.catalogue.CATALOGUE`) takes its
Taylor data from a python-flint builder
(:data:`~symattn.model.catalogue.CATALOGUE_SERIES`), not from the expression
shown beside it. Every use is checked where it happens
(:func:`symattn.model.expansion.catalogue_check`, called by the normalizer
itself); this script checks the whole catalogue to order 24 three ways:

* the flint coefficients of :math:`\varphi` against a naive expansion of the
  expression over Fractions (:func:`symattn.model.expansion.independent_taylor`)
  and against ``sympy.series`` (:func:`symattn.model.taylor.sympy_taylor`);
* the flint coefficients of :math:`h = \log\varphi` against the identity
  :math:`h'\varphi = \varphi'` with the independent :math:`\varphi`, and against
  ``sympy.series`` of :math:`\log\varphi`;
* a corrupted coefficient is refused by the check (it can fail).
"""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np

from symattn.core.errors import CheckFailed
from symattn.model.catalogue import CATALOGUE
from symattn.model.normalizer import Normalizer
from symattn.model.expansion import catalogue_check, independent_taylor
from symattn.model.taylor import flint_taylor
from symattn.render.derivation import Derivation
from symattn.theorems.registry import main_for

NAME = "catalogue-series-match-expressions"
STATEMENT = "Catalogue: every named normalizer's python-flint series = its expression (order 24)"
KIND = "exact"

ORDER = 24


def _flint(name: str, which: str, order: int) -> list[Fraction]:
    build = CATALOGUE[name].series
    if which == "phi":
        return flint_taylor(lambda: build(flint.fmpq_series([0, 1])), order)
    return flint_taylor(lambda: build(flint.fmpq_series([0, 1])).log(), order)


def _properties(der: Derivation) -> None:
    """Normalizers are known by what they compute: a catalogue entry written as an expression is that
    entry, and the properties the analyses ask (h linear; positive and analytic on R) are derived from
    the expression, each against an independent witness."""
    import mpmath

    same = [("exp", "exp(s)"), ("exp", "exp(1*s)"), ("cosh", "(exp(s) + exp(-s))/2"), ("gauss", "exp(s*s)")]
    der.check("an expression that computes a catalogue entry is that entry (name, Taylor data, properties)",
              [(Normalizer(b).name, Normalizer(b).exponential, Normalizer(b).phi_taylor(6))
               for _, b in same],
              [(a, Normalizer(a).exponential, Normalizer(a).phi_taylor(6)) for a, _ in same],
              note="; ".join(f"``{b}`` = ``{a}``" for a, b in same))
    near = ("exp(s) + s^7", "cosh(s) + s^8/7", "1 + s^2 + s^9")
    der.check("an expression that agrees with a catalogue entry to a few Taylor orders only is not that entry",
              [Normalizer(t).name == t for t in near], [True] * len(near), note=", ".join(f"``{t}``" for t in near))
    # h linear, against the witness phi(1) phi(1/3) = phi(4/3) at 40 digits (an independent evaluation)
    mpmath.mp.dps = 40
    tried = ("exp", "exp(2*s)", "2^s", "cosh", "logistic", "exp(s + s^3/1000)")
    witness = [abs(Normalizer(t).evaluate_mpmath(1) * Normalizer(t).evaluate_mpmath(mpmath.mpf(1) / 3)
                   - Normalizer(t).evaluate_mpmath(mpmath.mpf(4) / 3)) < mpmath.mpf(10) ** -30 for t in tried]
    der.check("phi(a + b) = phi(a) phi(b) (derived: h'' = 0) agrees with phi(1) phi(1/3) = phi(4/3) at 40 digits",
              [Normalizer(t).exponential for t in tried], witness, note=", ".join(f"``{t}``" for t in tried))
    # positive on R: derived by interval bounds; the witness: phi at 2001 points of [-20, 20] (a necessary condition)
    tried = tuple(CATALOGUE) + ("1 + s", "1 + s^3", "1/(2 + sin(s))", "1/2 + sin(s)", "2 + cos(s)")
    grid = [mpmath.mpf(k) / 5 for k in range(-100, 101)]
    sampled = [all(Normalizer(t).evaluate_mpmath(x) > 0 for x in grid) for t in tried]
    derived = [Normalizer(t).real_line.positive for t in tried]
    der.check("derived positivity on R never contradicts phi's values on a grid of 201 points of [-20, 20] "
              "(a derived True has positive values there)",
              [not d or w for d, w in zip(derived, sampled)], [True] * len(tried))
    der.check("every catalogue entry is derived positive and real-analytic on R (the path rank needs it)",
              [(Normalizer(n).real_line.positive, Normalizer(n).real_line.analytic) for n in CATALOGUE],
              [(True, True)] * len(CATALOGUE))
    der.check("``1 + s`` and ``1 + s^3`` are not positive on R; ``1/(1 - s)`` is not analytic on R",
              (Normalizer("1 + s").real_line.positive, Normalizer("1 + s^3").real_line.positive,
               Normalizer("1/(1 - s)").real_line.analytic), (False, False, False))


def run(full: bool = False) -> Derivation:
    import sympy

    from symattn.core.parse import parse_expression
    from symattn.model.taylor import sympy_taylor

    der = Derivation("t10_catalogue", STATEMENT,
                     "For every catalogue name, the Taylor coefficients $c_0..c_{24}$ of $\\varphi$ and "
                     "$h_0..h_{24}$ of $h = \\log\\varphi$ from its python-flint builder equal those of its "
                     "expression, expanded independently.", KIND)
    der.step("Independent expansions: a naive Fraction power-series evaluation of the expression's syntax "
             "tree (exp, log, cosh, sinh, tanh by their recurrences), sympy.series, and for $h$ the identity "
             "$h'\\varphi = \\varphi'$ solved term by term.")
    order = 48 if full else ORDER
    for name, entry in CATALOGUE.items():
        text = entry.text
        expr = parse_expression(text)
        phi = _flint(name, "phi", order)
        h = _flint(name, "h", order)
        sym_phi = [Fraction(str(c)) for c in sympy_taylor(expr, order)]
        sym_h = [Fraction(str(c)) for c in sympy_taylor(sympy.log(expr), order)]
        der.check(f"``{name}``: flint $\\varphi$ = naive expansion of ``{text}`` = sympy.series ($s^0 \\dots s^{{{order}}}$)",
                  (phi == independent_taylor(text, order), phi == sym_phi), (True, True))
        catalogue_check(name, "phi", phi)
        catalogue_check(name, "h", h)
        der.check(f"``{name}``: flint $h = \\log\\varphi$: $h'\\varphi = \\varphi'$ with the naive $\\varphi$; = sympy.series of $\\log\\varphi$",
                  h == sym_h, True)
        normalizer = Normalizer(name)  # the check where used: the normalizer's own coefficients
        der.check(f"``{name}``: the normalizer's coefficients (checked where used) are the flint ones",
                  [Fraction(str(c)) for c in normalizer.phi_taylor(order)], phi)
        der.case(f"``{name}`` = ``{text}``")
    bad = _flint("logistic", "phi", ORDER)
    bad[3] += Fraction(1, 7)
    try:
        catalogue_check("logistic", "phi", bad)
        refused = False
    except CheckFailed:
        refused = True
    der.check("a coefficient changed at $s^3$ is refused by the check where used", refused, True)
    der.show("The independent expansion of ``1 + tanh(s)/2`` to $s^7$:", np.array(independent_taylor("1 + tanh(s)/2", 7), dtype=object), "c")
    der.show("The flint $h$ of ``cosh`` to $s^8$:", np.array(_flint("cosh", "h", 8), dtype=object), "h")
    der.show_table("Catalogue checked:", ["name", "expression"], [[n, e.text] for n, e in CATALOGUE.items()])
    _properties(der)
    # the whitelist parser that reads every normalizer string, against sympy's own constructors
    s = sympy.Symbol("s")
    written = {"exp(-s)": sympy.exp(-s), "1/(1 + exp(-s))": 1 / (1 + sympy.exp(-s)), "s - s^3/3": s - s**3 / 3,
               "-(s^2) + cosh(2*s)": -s**2 + sympy.cosh(2 * s), "(1 + s)^(-2)": (1 + s) ** -2}
    written["(4 + s)^(1/2)"] = sympy.sqrt(4 + s)
    der.check("the expression parser reads signs, quotients and powers as sympy builds them",
              [sympy.simplify(parse_expression(text) - expr) == 0 for text, expr in written.items()],
              [True] * len(written), note="; ".join(f"``{t}``" for t in written))
    from symattn.model.taylor import flint_eval

    der.check("the python-flint expansion of each sympy expression (negative and fractional powers, exp, cosh) "
              "= the naive expansion of its text ($s^0 \\dots s^{10}$)",
              [flint_taylor(lambda e=expr: flint_eval(e), 10) == independent_taylor(text, 10)
               for text, expr in written.items()], [True] * len(written))
    return der


if __name__ == "__main__":
    raise SystemExit(main_for(__name__))
