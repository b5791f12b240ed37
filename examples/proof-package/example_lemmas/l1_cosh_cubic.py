r"""Lemma 1 (example): Theorem 4 for the normalizer :math:`\phi(s) = \cosh s + s^3`.

For :math:`\phi = \cosh s + s^3`, :math:`\log\phi = \tfrac12 s^2 + s^3 + O(s^4)`,
so the first nonconstant degree is :math:`k = 2` and Theorem 4 of the paper
predicts, for a stack of depth :math:`D`, width :math:`d = 2` and rank
:math:`r = 1`, the contact orders :math:`\beta_i = 2k\,3^{i-1} - 1`, i.e.
:math:`3, 11` at :math:`D = 2`, each with multiplicity :math:`r(2d - r) = 3`.

The script derives :math:`k` twice (symattn's Taylor data, and sympy's series
of :math:`\log\phi`), computes the native contact spectrum from the model
(certified Smith orders) and compares each band with the formula evaluated
here.
"""

from __future__ import annotations

import sympy

import symattn
from symattn.render.derivation import Derivation
from symattn.theorems.registry import main_for

STATEMENT = "Lemma 1 (example): contact orders of phi = cosh(s) + s^3"
KIND = "certified"

PHI = "cosh(s) + s^3"


def run(full: bool = False) -> Derivation:
    """Check the contact orders of Theorem 4 for :data:`PHI` (depths 1-2; 1-3 with ``full``)."""
    d = Derivation("l1_cosh_cubic", "Contact orders of $\\phi = \\cosh s + s^3$",
                   "For $\\phi = \\cosh s + s^3$ the contact orders are $\\beta_i = 2k\\,3^{i-1} - 1$ "
                   "with $k = 2$ (Theorem 4).", KIND)
    s = sympy.Symbol("s")
    log_phi = sympy.series(sympy.log(sympy.cosh(s) + s**3), s, 0, 5).removeO()
    d.show("The Taylor expansion of $\\log\\phi$ (sympy):", sympy.expand(log_phi), "\\log\\phi")
    k_sympy = min(sympy.Poly(log_phi, s).monoms())[0]
    normalizer = symattn.Normalizer(PHI)
    d.show("symattn's Taylor coefficients of $\\phi$ (exact):", normalizer.phi_taylor(5), "(\\phi_j)_{j<6}")
    d.check("first nonconstant degree $k$", normalizer.k, k_sympy, kind="exact",
            note="symattn's Taylor data against sympy's series")
    rows = []
    for depth in range(1, 4 if full else 3):
        spectrum = symattn.native_spectrum(symattn.Architecture.uniform(depth, 2, 1, 2, PHI))
        bands = [band for band in spectrum.bands if band.layer >= 1]
        expected = [2 * k_sympy * 3 ** (band.layer - 1) - 1 for band in bands]
        rows += [[depth, band.layer, band.order, band.multiplicity] for band in bands]
        d.check(f"$D = {depth}$: the spectrum is certified", spectrum.certificate, "certified",
                note="lower bounds proved from the model")
        d.check(f"Theorem 4, $D = {depth}$: orders $\\beta_i$", [b.order for b in bands], expected)
        d.check(f"Theorem 4, $D = {depth}$: multiplicities $r(2d - r)$", [b.multiplicity for b in bands],
                [3] * len(bands))
        d.case(f"$\\phi = \\cosh s + s^3$, $D = {depth}$, $d = 2$, $r = 1$")
    d.show_table("The computed bands:", ["$D$", "layer $i$", "order $\\beta_i$", "multiplicity"], rows)
    return d


if __name__ == "__main__":
    raise SystemExit(main_for(__name__))
