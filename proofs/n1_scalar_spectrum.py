r"""Protocol F.1 (Section 6): the scalar depth-four softmax spectrum.

Two scalar tokens, four softmax layers with unit values and
:math:`q_i = k_i = t`; the observation is the mean of the two output tokens on
the inputs :math:`(1 + z_j, 1 - z_j)`, :math:`z_j = 0.45 + 0.2j`. The four
positive singular values of the :math:`4 \times 8` native query/key Jacobian
at :math:`t = 0.08, 0.04, 0.02` (110 digits) decay like :math:`t^{\beta_i}`,
:math:`\beta_i = 2 \cdot 3^{i-1} - 1 = 1, 5, 17, 53` (Theorem 4 with
:math:`d = r = 1`), and equal
:math:`\sigma(D_c B\,\sqrt 2\, t I_4)` (App. F.1); the other four directions
are the exact factor gauges.

The script evaluates the network graph with forward-mode tangents in ball
arithmetic, removes the exact kernel (computed from eq. 50, not thresholded),
fits the final-pair slopes and compares them with the exact orders, which it
computes separately from the certified Smith form of the same scalar stack
(:func:`symattn.analyses.spectrum.native_spectrum`) and from the closed form. It also
recomputes :math:`D_c B` with the product :math:`c_i` as a single parameter and
checks the identity :math:`\sigma_+ = \sigma(D_c B\,\sqrt2\,t)`. All numbers are
numerical at the stated digits; the orders are exact.
"""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np
import sympy

from symattn.render.derivation import Derivation
from symattn.theorems.formulas import common_k_divisibility_order
from symattn.core.linalg import kernel_complement
from symattn.model.architecture import Architecture
from symattn.analyses.numerics import BallAlgebra, observation_jacobian, positive_singular_values
from symattn.analyses.protocols import protocol_f1
from symattn.theorems.registry import main_for
from symattn.analyses.spectrum import native_spectrum

NAME = "scalar-softmax-spectrum"
STATEMENT = "App. F.1 / Sec. 6: scalar depth-four softmax spectrum (110 digits)"
KIND = "numerical"


def _dc_singular_values(depth: int, t: str, digits: int) -> list:
    """sigma(D_c B sqrt(2) t) with c_i = Q_i (K_i = 1): the effective derivative."""
    arch = Architecture.uniform(depth, 1, 1, 2, "exp")
    tq = Fraction(t)
    params = {}
    for i in range(1, depth + 1):
        params.update({f"Q{i}": [[tq * tq]], f"K{i}": [[1]], f"V{i}": [[1]]})
    bank = np.empty((4, 1, 2), dtype=object)
    for j in range(4):
        z = Fraction("0.45") + Fraction("0.2") * j
        bank[j, 0] = [1 + z, 1 - z]
    A = BallAlgebra(digits)
    J = observation_jacobian(arch, params, bank, A, [f"Q{i}" for i in range(1, depth + 1)],
                             observe=lambda T, F: T.mul(T.sum(F, axis=-1), T.const(Fraction(1, 2))))
    with A.working():
        scale = flint.arb(2).sqrt() * A.embed(tq)
        J = np.vectorize(lambda v: v * scale, otypes=[object])(J)
    return positive_singular_values(J, kernel_complement([], depth), digits)


def run(full: bool = False) -> Derivation:
    der = Derivation("n1_scalar_spectrum", "Protocol F.1 (scalar depth-four spectrum)",
                     "The positive query/key singular values of depth-four scalar softmax decay with "
                     "the final-pair slopes 1, 5, 17, 53.", KIND)
    cases = [(4, 110, ("0.08", "0.04", "0.02"))]
    if full:
        cases += [(3, 60, ("0.04", "0.02", "0.01")),
                  (2, 40, ("0.04", "0.02", "0.01")), (4, 150, ("0.02", "0.01", "0.005"))]
    else:
        cases += [(3, 60, ("0.04", "0.02", "0.01"))]
    for depth, digits, ts in cases:
        r = protocol_f1(digits=digits, ts=ts, depth=depth)
        what = f"$D = {depth}$, $t = {', '.join(ts)}$, {digits} digits"
        der.show_table(f"F.1 with {what}: the positive query/key singular values (numerical, six digits shown):",
                       ["$t$", *(f"$\\sigma_{{{i}}}$" for i in range(1, depth + 1))],
                       [[t_, *(sympy.Float(float(s.mid()), 6) for s in row)]
                        for t_, row in zip(r.t, r.singular_values, strict=True)])
        closed = [common_k_divisibility_order(i) for i in range(1, depth + 1)]
        der.show_table("The final-pair slopes $\\log(\\sigma(t_1)/\\sigma(t_2))/\\log(t_1/t_2)$ (numerical) "
                       "beside the orders $\\beta_i = 2\\cdot 3^{i-1} - 1$:",
                       ["$i$", "slope", "$\\beta_i$"],
                       [[i, sympy.Float(f"{s:.6f}", 6), b] for i, (s, b) in enumerate(zip(r.slopes, closed), 1)])
        if depth <= 4:
            spec = native_spectrum(Architecture.uniform(depth, 1, 1, 2, "exp"), bank="auto")
            exact = [b.order for b in spec.bands if b.layer >= 1]
            der.show(f"The certified Smith orders of the same stack ($D = {depth}$, bank of {spec.bank_size}), "
                     "layer by layer:", exact, "(\\beta_1, \\dots, \\beta_D)")
            der.check(f"Theorem 4 orders (certified Smith form), {what}", exact, closed,
                      kind="certified", note=f"bank of {spec.bank_size}")
        der.check(f"F.1 kernel: factor gauges $(1, -1)/\\sqrt 2$, {what}", r.kernel, depth, kind="exact")
        der.check(f"F.1 final-pair slopes round to the orders, {what}",
                  [round(s) for s in r.slopes], closed)
        err = max(abs(s - b) for s, b in zip(r.slopes, closed))
        der.check(f"F.1 $\\max |\\text{{slope}} - \\beta_i| < 0.01$, {what}", err < 0.01, True,
                  note=f"max discrepancy {err:.3g} (numerical at {digits} digits)")
        dc = _dc_singular_values(depth, ts[-1], digits)
        rel = max(float(abs((a - b) / a).mid()) for a, b in zip(r.singular_values[-1], dc))
        der.check(f"F.1 identity $\\sigma_+ = \\sigma(D_c B \\sqrt 2\\, t)$, $t = {ts[-1]}$, {what}",
                  rel < 1e-10, True,
                  note=f"largest relative difference {rel:.3g}; the digits leave at least 15 guard digits "
                       "on the weakest value, so $10^{-10}$ is loose")
        der.case(what)
    weakest = protocol_f1().weakest
    der.show("The weakest positive value at $t = 0.02$ (depth four, numerical at 110 digits):",
             sympy.Float(float(weakest.mid()), 6), "\\sigma_{\\min}")
    # "numerical at N digits" rests on the balls' working precision: 1/3 and exp(1/3) at N digits
    # must have a relative radius below 10^-N
    widths = []
    for n in (30, 110):
        A = BallAlgebra(n)
        with A.working():
            third = A.embed(Fraction(1, 3))
            widths += [float(abs(x.rad() / x.mid())) < 10.0 ** -n for x in (third, third.exp())]
    der.check("ball arithmetic at N digits: relative radius of 1/3 and exp(1/3) below $10^{-N}$ (N = 30, 110)",
              widths, [True] * 4)
    return der


if __name__ == "__main__":
    raise SystemExit(main_for(__name__))
