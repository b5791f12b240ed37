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

:class:`symattn.model.normalizer.Normalizer` rightly rejects this non-analytic
:math:`\phi`, so the script defines it by its logarithm :data:`LOG_PHI`
:math:`= s\,B` (:math:`B` standing for :math:`b(s)`, :math:`dB/ds = 2B/s^3`)
and derives everything else from it. It proves flatness for every derivative
up to the chosen order by a derivation on :math:`\mathbb Q[s^{\pm1}, B]`:
:math:`\phi^{(j)} = \phi R_j` with every monomial of :math:`R_j` divisible by
:math:`B`, checked against sympy's derivatives and limits for small
:math:`j`. The Taylor coefficients of :math:`\phi` at 0 are the limits of
:math:`R_j`; with them the effective network *graph* is run over exact series
along input rays (two normalizers' worth of scores compared, and the mean
map), and the same graph is run symbolically with the flat :math:`\phi` itself
for the layer output, whose separation of :math:`c = 1, 2` is certified in
interval arithmetic at enough digits to resolve :math:`e^{-1/(cr^2)^2}`.
Replacing :data:`LOG_PHI` by :math:`s` (softmax) makes the jet checks fail.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath
import numpy as np
import sympy

from symattn.core.algebras import Symbolic, exact_series
from symattn.render.derivation import Derivation
from symattn.model.network import effective_network, evaluate
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank, random_rational_matrix
from symattn.theorems.registry import main_for

NAME = "flat-normalizer-boundary"
STATEMENT = "App. E.2: flat smooth injective phi; jets miss the score; zero divisors"
KIND = "certified"

s = sympy.Symbol("s", real=True, nonzero=True)
B = sympy.Symbol("B", positive=True)
b_expr = sympy.exp(-1 / s**2)
#: ``h = log phi`` with ``B`` standing for ``b(s) = exp(-1/s^2)``: the flat normalizer.
LOG_PHI = s * B


def phi_expr() -> sympy.Expr:
    """phi(s) = exp(h(s)) for s != 0, from :data:`LOG_PHI`."""
    return sympy.exp(LOG_PHI.subs(B, b_expr))


def _d(f: sympy.Expr) -> sympy.Expr:
    """d/ds on Q[s, 1/s, B] with B = b(s), b' = 2 b / s^3."""
    return sympy.expand(sympy.diff(f, s) + 2 * B / s**3 * sympy.diff(f, B))


def ratios(order: int) -> list[sympy.Expr]:
    """``R_j = phi^(j) / phi`` for ``j = 0..order`` as polynomials in ``1/s`` and ``B``."""
    g = _d(LOG_PHI)  # h'
    out = [sympy.Integer(1)]
    for _ in range(order):
        out.append(sympy.expand(_d(out[-1]) + out[-1] * g))
    return out


def limit_at_zero(R: sympy.Expr) -> sympy.Expr:
    """``lim_{s -> 0} R(s, b(s))`` for a polynomial in ``s, 1/s, B``: a monomial with
    ``B`` tends to 0 (``s^a e^{-m/s^2} -> 0``), ``s^0`` keeps its coefficient, ``s^a`` (a > 0)
    tends to 0; a monomial ``s^a`` with ``a < 0`` and no ``B`` diverges (an error)."""
    total = sympy.Integer(0)
    for term in sympy.Add.make_args(sympy.expand(R)):
        powers = term.as_powers_dict()
        a, m = int(powers.get(s, 0)), int(powers.get(B, 0))
        if m == 0 and a < 0:
            raise ValueError(f"the limit of {R} at 0 diverges")
        if m == 0 and a == 0:
            total += term
    return total


def taylor_coefficients(order: int) -> list[Fraction]:
    """Taylor coefficients ``c_0..c_order`` of phi at 0: ``c_j = phi(0) lim R_j / j!``."""
    phi0 = sympy.exp(limit_at_zero(LOG_PHI))
    out = []
    for j, R in enumerate(ratios(order)):
        c = sympy.nsimplify(phi0 * limit_at_zero(R) / math.factorial(j))
        out.append(Fraction(int(c.p), int(c.q)))
    return out


def interval(expr: sympy.Expr, at: dict):
    """``expr`` (sums, products, integer powers, exp, rationals) in mpmath's interval arithmetic."""
    iv = mpmath.iv
    if expr in at:
        return at[expr]
    if expr.is_Rational:
        return iv.mpf(int(expr.p)) / int(expr.q)
    args = [interval(a, at) for a in expr.args]
    if expr.is_Add:
        return sum(args[1:], args[0])
    if expr.is_Mul:
        out = args[0]
        for a in args[1:]:
            out = out * a
        return out
    if expr.is_Pow and expr.exp.is_Integer:
        return args[0] ** int(expr.exp)
    if isinstance(expr, sympy.exp):
        return iv.exp(args[0])
    raise ValueError(f"interval evaluation of {expr.func} is not supported")


class TaylorNormalizer:
    """What the series algebra needs of a normalizer: Taylor coefficients of its
    derivatives, here from :func:`taylor_coefficients` (coefficient m of phi^(j) is
    c_{m+j} (m+j)!/m!); ``expr`` in the variable ``s`` (with phi(0) = 1) for the
    symbolic algebra."""

    name = "flat"

    def __init__(self, order: int):
        self.c = taylor_coefficients(order)
        self.s = sympy.Symbol("u")
        u = self.s
        self.expr = sympy.Piecewise((1, sympy.Eq(u, 0)), (phi_expr().subs(s, u), True))

    def rational_phi_derivative_taylor(self, order: int, j: int) -> list[Fraction]:
        return [self.c[m + j] * math.perm(m + j, j) for m in range(order + 1)]


def flat_network(arch: Architecture, normalizer: TaylorNormalizer):
    """The effective network graph of ``arch`` with every phi node the flat phi."""
    return effective_network([normalizer] * arch.depth)


def _ray_jets(arch, g, L, M, Y, order):
    """Coefficients of F(rho Y) through rho^(order-1), exact over Q."""
    A = exact_series(order)
    values = {"X": A.series([np.zeros(Y.shape, dtype=int), Y]), "L": A.const(L),
              **{f"M{i}": A.const(m) for i, m in enumerate(M, 1)}}
    return A.coefficients(evaluate(g, A, values)["F"])


def run(full: bool = False) -> Derivation:
    der = Derivation("t7_flat_normalizer", "App. E.2 (the boundary of the analytic argument)",
                     "$\\phi(s) = \\exp(s\\,b(s))$, $b(s) = e^{-1/s^2}$: smooth, positive, injective and "
                     "flat at 0; its jets miss the score, the function does not; $b_+ b_- = 0$.", KIND)
    order = 16 if full else 8
    R = ratios(order)
    phi = phi_expr()
    der.check("$b' = 2b/s^3$ (the derivation's rule)",
              sympy.simplify(sympy.diff(b_expr, s) - 2 * b_expr / s**3), sympy.Integer(0))
    for j in range(1, 4):
        direct = sympy.diff(phi, s, j) / phi
        der.check(f"$\\phi^{{({j})}} / \\phi = R_{j}$ (sympy's derivative)",
                  sympy.simplify(direct - R[j].subs(B, b_expr)), sympy.Integer(0))
    der.step("$\\phi^{(j)} = \\phi R_j$ with $R_{j+1} = R_j' + R_j h'$; every monomial "
             "$s^a B^m$ of $R_j$ ($j \\ge 1$) has $m \\ge 1$, and $s^a e^{-m/s^2} \\to 0$ as "
             "$s \\to 0$, so $\\phi^{(j)}(0) = 0$.", computed=R[2])
    coeffs = taylor_coefficients(order)
    der.check(f"E.2 flatness: Taylor coefficients $c_1, \\dots, c_{{{order}}}$ of $\\phi$ at 0 (limits of $R_j$)",
              coeffs[1:], [0] * order, note="every monomial of $R_j$ carries $B = b(s)$")
    der.check("E.2 flatness: sympy limits of $\\phi'$, $\\phi''$ at 0 from both sides",
              [sympy.limit(sympy.diff(phi, s, j), s, 0, side) for j in (1, 2) for side in "+-"],
              [0, 0, 0, 0])
    der.check("$\\phi(0) = 1$ (limit)", sympy.limit(phi, s, 0), sympy.Integer(1))
    der.check("E.2 $(s b)' = b\\,(1 + 2/s^2)$",
              sympy.simplify(sympy.diff(s * b_expr, s) - b_expr * (1 + 2 / s**2)), sympy.Integer(0))
    der.check("E.2 $(s b)' > 0$ for $s \\ne 0$ (sympy's sign assumptions)",
              bool((b_expr * (1 + 2 / s**2)).is_positive), True)
    der.case("flatness and monotonicity of $\\phi$")

    # Jets: the network graph over exact series with phi's computed Taylor coefficients.
    der.step("Run the effective network graph over $\\mathbb{Q}[[\\rho]]$ along rays $X = \\rho Y$ "
             "with the computed Taylor coefficients of $\\phi$; compare the jets for two score "
             "tuples, and with the mean map $\\rho\\,L\\mu(Y)\\mathbf 1^\\top$.")
    flat = TaylorNormalizer(order)
    rng = random.Random(7)
    for depth, d, n in [(1, 1, 2), (2, 2, 3)] + ([(3, 2, 2)] if full else []):
        arch = Architecture.uniform(depth, d, 1, n, "exp")
        g = flat_network(arch, flat)
        L = random_rational_matrix(rng, (d, d))
        M = [random_rational_matrix(rng, (d, d)) for _ in range(depth)]
        M2 = [2 * m + 1 for m in M]
        Y = random_bank(arch, 2, seed=depth)
        F1, F2 = _ray_jets(arch, g, L, M, Y, order + 1), _ray_jets(arch, g, L, M2, Y, order + 1)
        mu = np.einsum("ij,bjn->bin", L, Y).sum(axis=-1) / n
        S = exact_series(order + 1)
        mean = S.coefficients(S.series([np.zeros(Y.shape, dtype=int), np.repeat(mu[..., None], n, axis=-1)]))
        what = f"$D = {depth}$, $d = {d}$, $n = {n}$, through $\\rho^{{{order}}}$, 2 rays"
        der.check("E.2 jets miss the score: $F_M$ and $F_{2M+1}$ have equal jets", bool((F1 == F2).all()),
                  True, note=what + ", exact over $\\mathbb{Q}$")
        der.check("E.2 every jet is the mean map's", bool((F1 == mean).all()), True,
                  note=what + ", exact over $\\mathbb{Q}$")
        der.case(f"jets, {what}")

    # The function: the same graph, run symbolically with the flat phi itself.
    c, r = sympy.symbols("c r", positive=True)
    g1 = flat_network(Architecture.uniform(1, 1, 1, 2, "exp"), flat)
    A = Symbolic()
    out = evaluate(g1, A, {"X": A.const([[r, 0]]), "L": A.const([[1]]), "M1": A.const([[c]])})["F"][0, 0]
    closed = r * phi.subs(s, c * r**2) / (phi.subs(s, c * r**2) + 1)
    der.check("E.2 $S_c(r, 0)_1 = r\\phi(c r^2) / (\\phi(c r^2) + 1)$ (the graph, run symbolically)",
              sympy.simplify(out - closed), sympy.Integer(0))
    gap_expr = out.subs(c, 2) - out.subs(c, 1)
    radii = ["1", "0.5", "0.3", "0.2"] + (["0.15", "0.1"] if full else [])
    lows = []
    iv = mpmath.iv
    for rv in radii:
        old = iv.dps
        try:
            # resolve e^{-1/r^4} against 1: about 0.4343 / r^4 digits, plus 30
            iv.dps = 30 + int(0.4343 / float(rv) ** 4) + 1
            box = interval(gap_expr, {r: iv.mpf(rv)})
            lows.append(box.a)
        finally:
            iv.dps = old
    der.show_table("$S_2(r, 0)_1 - S_1(r, 0)_1$ from the graph's output, in interval arithmetic (lower ends of "
                   "the enclosures, five digits shown):", ["$r$", "lower end"],
                   [[rv, sympy.Float(mpmath.nstr(mpmath.mp.make_mpf(lo._mpi_[0]), 5), 5)] for rv, lo in zip(radii, lows)])
    der.check("E.2 the output separates $c = 1$ and $c = 2$ at every sampled $r > 0$",
              all(lo > 0 for lo in lows), True, kind="certified",
              note="interval arithmetic; for every $r > 0$ it follows from $\\phi$ strictly increasing")
    der.case("one layer, two scalar tokens, $c = 1$ against $c = 2$")

    b_plus = sympy.Piecewise((b_expr, s > 0), (0, True))
    b_minus = sympy.Piecewise((b_expr, s < 0), (0, True))
    der.check("E.2 zero divisors: $b_+ b_- = 0$", sympy.piecewise_fold(b_plus * b_minus).simplify(),
              sympy.Integer(0))
    ks = range(1, 11 if full else 6)
    der.check("E.2 $b_+(1/k) > 0$ and $b_-(-1/k) > 0$ (nonzero arbitrarily close to 0)",
              all(bool(b_plus.subs(s, sympy.Rational(1, k)).is_positive)
                  and bool(b_minus.subs(s, -sympy.Rational(1, k)).is_positive) for k in ks), True)
    der.case("zero divisors in the smooth germ ring")
    _worked_instance(der, out)
    return der


def _worked_instance(der: Derivation, out: sympy.Expr) -> None:
    """Displays computed for App. E.2: the flat function's jets and the separation."""
    R = ratios(6)
    der.show_table("Worked instance (computed by the derivation rule): $\\phi^{(j)} = \\phi R_j$ with "
                   "$B = b(s)$; every monomial of $R_j$ carries $B$, so the jet of $\\phi$ at 0 is "
                   "$1 + 0 s + 0 s^2 + \\dots$ to every order:",
                   ["$j$", "$R_j(s, B)$", "terms", "$R_j(s, 0)$"],
                   [[j, R[j], len(sympy.Add.make_args(R[j])), R[j].subs(B, 0)] for j in range(1, 7)])
    der.show("The layer output on tokens $(r, 0)$ with $\\phi$ itself, computed by running the "
             "network graph symbolically (the jets above are those of the mean map, "
             "independent of $c$; this function is not):", out, "S_c(r, 0)_1")


if __name__ == "__main__":
    raise SystemExit(main_for(__name__))
