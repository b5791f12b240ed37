r"""App. E.2: the boundary of the analytic argument (a smooth, flat normalizer).

Let :math:`b(0) = 0`, :math:`b(s) = e^{-1/s^2}` (:math:`s \neq 0`) and
:math:`\phi(s) = e^{s\,b(s)}`. Every derivative of :math:`b` is a polynomial in
:math:`1/s` times :math:`e^{-1/s^2}`, so :math:`\phi - 1` is smooth and flat at 0:
every Taylor coefficient of :math:`\phi` beyond :math:`\phi(0) = 1` vanishes. Yet
:math:`\phi > 0` and :math:`(s b)' = b\,(1 + 2/s^2) > 0` for :math:`s \neq 0`, so
:math:`\phi` is strictly increasing and injective. For one layer, two scalar
tokens and unit value, every jet of :math:`S^\phi_c` equals that of the mean
map :math:`A(X) = \mu(X)\mathbf 1^\top` for every :math:`N` and :math:`c`, while

.. math::

   S^\phi_c(r, 0)_1 = \frac{r\,\phi(cr^2)}{\phi(cr^2) + 1}

distinguishes :math:`c = 1` from :math:`c = 2` for every :math:`r > 0`: the
function carries score information that every finite jet misses. Finally
:math:`b_+ = b\,\mathbf 1_{s>0}` and :math:`b_- = b\,\mathbf 1_{s<0}` are
nonzero arbitrarily close to 0 but :math:`b_+ b_- = 0`: the smooth germ ring
has zero divisors.

:class:`symattn.normalizer.Normalizer` rightly rejects this non-analytic
:math:`\phi`, so the script works with sympy directly. It proves flatness for
every derivative up to the chosen order by a derivation on
:math:`\mathbb Q[s^{\pm1}, B]` (:math:`B` standing for :math:`b(s)`,
:math:`dB/ds = 2B/s^3`): :math:`\phi^{(j)} = \phi R_j` with every monomial of
:math:`R_j` divisible by :math:`B`, checked against sympy's derivatives and
limits for small :math:`j`; the layer output is derived symbolically from the
definition of :math:`S`, and the separation of :math:`c = 1, 2` is evaluated
with mpmath (``expm1``, so the flat part is not rounded away).
"""

from __future__ import annotations

import mpmath
import sympy

from symattn.derivation import Derivation
from symattn.prove import main_for

STATEMENT = "App. E.2: flat smooth injective phi; jets miss the score; zero divisors"
KIND = "exact"

s = sympy.Symbol("s", real=True, nonzero=True)
B = sympy.Symbol("B", positive=True)
b_expr = sympy.exp(-1 / s**2)
phi_expr = sympy.exp(s * b_expr)


def _d(f: sympy.Expr) -> sympy.Expr:
    """d/ds on Q[s, 1/s, B] with B = b(s), b' = 2 b / s^3."""
    return sympy.expand(sympy.diff(f, s) + 2 * B / s**3 * sympy.diff(f, B))


def ratios(order: int) -> list[sympy.Expr]:
    """``R_j = phi^(j) / phi`` for ``j = 0..order`` as polynomials in ``1/s`` and ``B``."""
    g = _d(s * B)  # (s b)'
    out = [sympy.Integer(1)]
    for _ in range(order):
        out.append(sympy.expand(_d(out[-1]) + out[-1] * g))
    return out


def flat_phi(u: sympy.Expr) -> sympy.Expr:
    """phi(u) = exp(u b(u)) with b(0) = 0."""
    return sympy.Integer(1) if u == 0 else sympy.exp(u * sympy.exp(-1 / u**2))


def layer_output(c: sympy.Expr, x1: sympy.Expr, x2: sympy.Expr, phi) -> sympy.Expr:
    """First output token of one layer on two scalar tokens (x1, x2), unit value, score c (eq. 1)."""
    w = [phi(x1 * c * xb) for xb in (x1, x2)]
    return (w[0] * x1 + w[1] * x2) / (w[0] + w[1])


def run(full: bool = False) -> Derivation:
    der = Derivation("t7_flat_normalizer", "App. E.2 (the boundary of the analytic argument)",
                     "$\\phi(s) = \\exp(s\\,b(s))$, $b(s) = e^{-1/s^2}$: smooth, positive, injective and "
                     "flat at 0; its jets miss the score, the function does not; $b_+ b_- = 0$.", KIND)
    order = 16 if full else 8
    R = ratios(order)
    der.check("b' = 2 b / s^3 (the derivation's rule)",
              sympy.simplify(sympy.diff(b_expr, s) - 2 * b_expr / s**3), sympy.Integer(0))
    for j in range(1, 4):
        direct = sympy.diff(phi_expr, s, j) / phi_expr
        der.check(f"phi^({j}) / phi = R_{j} (sympy's derivative)",
                  sympy.simplify(direct - R[j].subs(B, b_expr)), sympy.Integer(0))
    der.step("$\\phi^{(j)} = \\phi R_j$ with $R_{j+1} = R_j' + R_j (sb)'$; every monomial "
             "$s^a B^m$ of $R_j$ ($j \\ge 1$) has $m \\ge 1$, and $s^a e^{-m/s^2} \\to 0$ as "
             "$s \\to 0$, so $\\phi^{(j)}(0) = 0$.", computed=R[2])
    der.check(f"E.2 flatness: R_j(s, B = 0) = 0 for j = 1..{order}",
              [R[j].subs(B, 0) for j in range(1, order + 1)], [0] * order)
    der.check("E.2 flatness: sympy limits of phi', phi'' at 0 from both sides",
              [sympy.limit(sympy.diff(phi_expr, s, j), s, 0, side) for j in (1, 2) for side in "+-"],
              [0, 0, 0, 0])
    der.check("phi(0) = 1 (limit)", sympy.limit(phi_expr, s, 0), sympy.Integer(1))
    der.check("E.2 (s b)' = b (1 + 2/s^2)",
              sympy.simplify(sympy.diff(s * b_expr, s) - b_expr * (1 + 2 / s**2)), sympy.Integer(0))
    der.check("E.2 (s b)' > 0 for s != 0 (sympy's sign assumptions)",
              bool((b_expr * (1 + 2 / s**2)).is_positive), True)
    der.case("flatness and monotonicity of phi")

    # Jets: the Taylor polynomial of phi of every degree is 1, so S with it is the mean map.
    c, r, x1, x2 = sympy.symbols("c r x1 x2", positive=True)
    taylor = lambda u: sympy.Integer(1)  # noqa: E731  (degree-N Taylor polynomial, every N)
    mean = sympy.simplify(layer_output(c, x1, x2, taylor))
    der.check("E.2 jets: with phi's Taylor polynomial (= 1 to every order) the layer is the mean map",
              mean, sympy.simplify((x1 + x2) / 2))
    out = layer_output(c, r, sympy.Integer(0), flat_phi)
    der.check("E.2 S_c(r, 0)_1 = r phi(c r^2) / (phi(c r^2) + 1) (from the layer's definition)",
              sympy.simplify(out - r * flat_phi(c * r**2) / (flat_phi(c * r**2) + 1)), sympy.Integer(0))
    mp = mpmath.mp.clone()
    mp.dps = 30
    radii = ["1", "0.5", "0.3", "0.2", "0.1"] + (["0.05", "0.03"] if full else [])
    gaps = []
    for rv in radii:
        rr = mp.mpf(rv)
        a1, a2 = [cc * rr**2 * mp.exp(-1 / (cc * rr**2) ** 2) for cc in (1, 2)]
        f1, f2 = mp.expm1(a1), mp.expm1(a2)  # phi - 1, kept exact in relative terms
        gaps.append(rr * (f2 - f1) / ((f2 + 2) * (f1 + 2)))
    der.step("$S_2(r, 0)_1 - S_1(r, 0)_1 = r\\,(\\phi(2r^2) - \\phi(r^2)) / ((\\phi(2r^2)+1)(\\phi(r^2)+1))$ "
             "(numerical, 30 digits):",
             computed=", ".join(f"r = {rv}: {mpmath.nstr(g, 5)}" for rv, g in zip(radii, gaps)))
    der.check("E.2 the output separates c = 1 and c = 2 at every sampled r > 0",
              all(g > 0 for g in gaps), True, kind="numerical",
              note="for every r > 0 it follows from phi strictly increasing and 2r^2 > r^2")
    der.case("one layer, two scalar tokens, c = 1 vs 2")

    b_plus = sympy.Piecewise((b_expr, s > 0), (0, True))
    b_minus = sympy.Piecewise((b_expr, s < 0), (0, True))
    der.check("E.2 zero divisors: b_+ b_- = 0", sympy.piecewise_fold(b_plus * b_minus).simplify(),
              sympy.Integer(0))
    ks = range(1, 11 if full else 6)
    der.check("E.2 b_+(1/k) > 0 and b_-(-1/k) > 0 (nonzero arbitrarily close to 0)",
              all(bool(b_plus.subs(s, sympy.Rational(1, k)).is_positive)
                  and bool(b_minus.subs(s, -sympy.Rational(1, k)).is_positive) for k in ks), True)
    der.case("zero divisors in the smooth germ ring")
    _worked_instance(der)
    return der


def _worked_instance(der: Derivation) -> None:
    """Displays computed for App. E.2: the flat function's jets and the separation."""
    R = ratios(6)
    der.show_table("Worked instance (computed by the derivation rule): $\\phi^{(j)} = \\phi R_j$ with "
                   "$B = b(s)$; every monomial of $R_j$ carries $B$, so the jet of $\\phi$ at 0 is "
                   "$1 + 0 s + 0 s^2 + \\dots$ to every order:",
                   ["$j$", "$R_j(s, B)$", "terms", "$R_j(s, 0)$"],
                   [[j, R[j], len(sympy.Add.make_args(R[j])), R[j].subs(B, 0)] for j in range(1, 7)])
    c, r = sympy.symbols("c r", positive=True)
    der.show("Through the model with any Taylor polynomial of $\\phi$ (all equal to 1): the layer "
             "output on tokens $(r, 0)$, independent of the score $c$,",
             sympy.simplify(layer_output(c, r, sympy.Integer(0), lambda u: sympy.Integer(1))),
             "S^{T_N\\phi}_c(r, 0)_1")
    out = layer_output(c, r, sympy.Integer(0), flat_phi)
    der.show("and with $\\phi$ itself (from the layer's definition):", out, "S_c(r, 0)_1")
    mp = mpmath.mp.clone()
    mp.dps = 30
    rows = []
    for rv in ("1", "0.5", "0.3"):
        rr = mp.mpf(rv)
        values = [rr * (mp.expm1(x) + 1) / (mp.expm1(x) + 2) for x in
                  (cc * rr ** 2 * mp.exp(-1 / (cc * rr ** 2) ** 2) for cc in (1, 2))]
        rows.append([f"${rv}$", f"${mpmath.nstr(values[1] - values[0], 8)}$"])
    der.show_table("The separation computed through the model (numerical, 30 digits): "
                   "$S_2(r, 0)_1 - S_1(r, 0)_1 > 0$ although every jet agrees:",
                   ["$r$", "$S_2 - S_1$"], rows)


if __name__ == "__main__":
    raise SystemExit(main_for(__name__))
