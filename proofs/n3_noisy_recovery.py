r"""Protocol F.3 (Section 6, Figure 1(b)): one noisy observation with a known prefix.

Depth-two scalar softmax on the input :math:`(1.5, 0.5)` with known
:math:`q_1 = k_1 = 0.1` and unit values; the unknown final factor
:math:`q_2 = k_2 = w \in [0, 0.3]`, :math:`w_* = 0.1`, enters only through
:math:`c = w^2`. With the prefix tokens :math:`m \pm z`, the output mean is

.. math::

   f(c) = m + \tfrac z2\{\tanh(cz(m+z)) + \tanh(cz(m-z))\} = m + bc + O(c^3),
   \qquad b = m z^2,

strictly increasing on :math:`[0, 0.09]`. One observation
:math:`Y = f(w_*^2) + \tau Z`, :math:`\tau = \alpha b w_*^2`, is clipped to
:math:`[f(0), f(0.09)]` and inverted by 75 bisection steps at 100 digits. The
relative RMSE of :math:`\hat w` over 400 draws rises with the noise although
:math:`w` is uniquely determined.

The script computes :math:`f` from the network graph (ball arithmetic), the
prefix :math:`m, z` from the first layer, :math:`f'(0)` by forward-mode
tangents, and compares them with the closed forms above; the noise draws are
``numpy.random.default_rng(20261001).standard_normal(400)``. Our copy of the
paper omits the table of :math:`\alpha`; Section 6 states that :math:`\tau`
runs from :math:`1.57\times10^{-10}` to :math:`1.57\times10^{-7}`, which the
computed :math:`b w_*^2` turns into :math:`\alpha = 0.01, 0.1, 1, 10`
(:data:`symattn.analyses.protocols.F3_ALPHAS`); the script checks those endpoints.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy

from symattn.core.algebras import BallAlgebra
from symattn.render.derivation import Derivation
from symattn.model.architecture import Architecture
from symattn.analyses.protocols import F3_ALPHAS, f3_mean, protocol_f3
from symattn.theorems.registry import main_for

NAME = "noisy-recovery"
STATEMENT = "App. F.3 / Fig. 1(b): recovery of one factor from a noisy mean (100 digits)"
KIND = "numerical"


def run(full: bool = False) -> Derivation:
    der = Derivation("n3_noisy_recovery", "Protocol F.3 (one noisy observation with a known prefix)",
                     "The final factor is uniquely determined, yet its recovery error from one noisy "
                     "output mean rises with the noise.", KIND)
    r = protocol_f3(draws=400, steps=75, digits=100)
    der.show_table("The prefix tokens $m \\pm z$ and $b = m z^2$, computed through the graph (numerical at 100 "
                   "digits, twelve shown):", ["$m$", "$z$", "$b$", "$f'(0)$"],
                   [[sympy.Float(float(v.mid()), 12) for v in (r.m, r.z, r.b, r.slope)]])
    rel = float(abs((r.b - r.slope) / r.b).mid())
    der.check("F.3 $f'(0)$ (forward mode through the graph) $= b = m z^2$", rel < 1e-80, True,
              note=f"relative difference {rel:.3g}")
    A = BallAlgebra(100)
    arch = Architecture.uniform(2, 1, 1, 2, "exp")
    x = np.array([[[Fraction(3, 2), Fraction(1, 2)]]], dtype=object)
    grid = [Fraction(j, 100) for j in range(10)]
    with A.working():
        graph = f3_mean(arch, A, A.const(grid), x, Fraction(1, 10))
        m, z = r.m, r.z
        closed = [m + z / 2 * ((A.embed(c) * z * (m + z)).tanh() + (A.embed(c) * z * (m - z)).tanh())
                  for c in grid]
        worst = max(float(abs((g - f) / f).mid()) for g, f in zip(graph, closed))
        increasing = all(float((b - a).mid()) > 0 for a, b in zip(graph, graph[1:]))
    der.check("F.3 closed form of $f(c)$ agrees with the graph on $c = 0, 0.01, \\dots, 0.09$",
              worst < 1e-80, True, note=f"largest relative difference {worst:.3g}")
    der.check("F.3 $f$ strictly increasing on the grid", increasing, True)
    der.show_table("The output mean $f(c)$ from the graph beside the closed form, on the grid (numerical at "
                   "100 digits, ten shown):", ["$c$", "graph", "closed form"],
                   [[sympy.Rational(c), sympy.Float(float(g.mid()), 10), sympy.Float(float(f.mid()), 10)]
                    for c, g, f in list(zip(grid, graph, closed))[::3]])
    b_w2 = float((r.b * A.embed(Fraction(1, 100))).mid())
    taus = [float(a) * b_w2 for a in (F3_ALPHAS[0], F3_ALPHAS[-1])]
    der.check("Sec. 6 noise range $1.57\\cdot 10^{-10}$ to $1.57\\cdot 10^{-7}$ from $\\tau = \\alpha b w_*^2$",
              [float(f"{t:.3g}") for t in taus], [1.57e-10, 1.57e-7])
    der.show_table("Recovery over 400 draws (numerical at 100 digits, four shown):",
                   ["$\\alpha$", "MSE", "bias", "relative RMSE"],
                   [[sympy.Float(row["alpha"], 3), sympy.Float(row["mse"], 4), sympy.Float(row["bias"], 4),
                     sympy.Float(row["relative_rmse"], 4)] for row in r.rows])
    rmse = [row["relative_rmse"] for row in r.rows]
    der.check("F.3 relative RMSE rises with the noise", rmse == sorted(rmse), True,
              note=", ".join(f"{v:.3g}" for v in rmse))
    der.case("depth two, input $(1.5, 0.5)$, $q_1 = k_1 = 0.1$, $w_* = 0.1$, 400 draws, 75 steps")
    if full:
        more = protocol_f3(draws=400, steps=75, digits=130)
        change = max(abs(a["relative_rmse"] - b["relative_rmse"]) / b["relative_rmse"]
                     for a, b in zip(r.rows, more.rows))
        der.check("F.3 100 against 130 digits: relative RMSE unchanged to $10^{-12}$", change < 1e-12, True,
                  note=f"{change:.3g}")
        der.case("precision check at 130 digits")
    return der


if __name__ == "__main__":
    raise SystemExit(main_for(__name__))
