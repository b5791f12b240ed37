r"""Beyond the paper: transformer-block layer parts (biases, :math:`W_O`, LayerNorm, MLP), checked.

No theorem of the paper covers these layers; this script checks that symattn computes
them right. (1) The graph of a full post-norm layer (biases on :math:`Q, K, V`, output
projection, LayerNorm :math:`g \odot (y - \bar y)/\sqrt{\operatorname{var} y + \varepsilon} + s`,
MLP :math:`W_2 f(W_1 y + b_1) + b_2` with ``tanh`` and GELU) evaluated in mpmath equals a
direct evaluation written here from the formulas, token by token. (2) The exact Taylor
coefficients of the elementwise functions (``rsqrt`` at a rational square, ``tanh`` and
``sigmoid`` at 0, a polynomial at a rational point) equal sympy's series. (3) The exact
spectrum along the collapse path of one post-norm (with and without skip) and one pre-norm
layer, over Q on a bank whose LayerNorm constants are rational squares, equals the
numerical spectrum at 300 digits of the same stack on a generic bank: orders,
multiplicities, rank, declared kernel and unexplained kernel; and the spectrum computed exactly
in Q adjoined the stack's constants at a generic bank (the constants route: LayerNorm's square
roots with their relations, the activations' values free; a proved frame) is certified and
equals the numerical one, its gap the unexplained kernel; the Taylor data in that field equal
mpmath's derivatives. (4) Every symmetry the block
parts declare (softmax key bias, bias transfer, MLP interface, MLP scaling, LayerNorm shift,
LayerNorm interface) is verified as an exact kernel vector of an exact Jacobian (the
spectrum stops with a failed check otherwise), and each kind occurs. (5) The dimension of
block stacks two ways that share no code: the exact tier (jets from :math:`X = 0` over Q or
:math:`\mathbb F_p`, where every constant is rational: :math:`\varepsilon = 1/4`, a polynomial
MLP) and the ball tier (a certified minor of the bank Jacobian at a generic point in ball
arithmetic, the tier of irrational constants): each one's lower bound is at most the other's
upper bound, and where both are certified they agree. (6) The conjecture engine on the
block families: every row's rank and kernel add up to the native parameter count.
"""

from __future__ import annotations

from collections import Counter

import math
from fractions import Fraction

import flint
import mpmath
import numpy as np
import sympy

from symattn.analyses.bank import family_bank, least_bank
from symattn.analyses.collapse import kernel_product
from symattn.analyses.dimension import neuromanifold_dimension
from symattn.analyses.contact import setup
from symattn.analyses.numerical_spectrum import numerical_path_spectrum
from symattn.testing.banks import square_bank
from symattn.analyses.path_rank import path_rank, rank_route
from symattn.analyses.spectrum import native_spectrum
from symattn.core.algebras import MPMath, exact_series
from symattn.core.algebras.constants import ConstantField, constant_series
from symattn.core.algebras.functions import Elementwise, activation
from symattn.model.architecture import Architecture
from symattn.model.network import evaluate, native_network
from symattn.model.parameters import random_bank, random_point
from symattn.render.derivation import Derivation
from symattn.analyses.conjectures import FAMILY_KINDS, family_table
from symattn.theorems.registry import main_for

NAME = "transformer-block-parts"
STATEMENT = "Beyond the paper: transformer-block parts (biases, W_O, LayerNorm, MLP)"
KIND = "numerical"


def direct_layer(arch: Architecture, p: dict, X: np.ndarray, ctx, phi) -> list:
    """The full post-norm layer from its formulas (tokens one by one, mpmath), for checking."""
    layer = arch.layers[0]
    d, n = layer.width_in, arch.tokens
    m = lambda a: ctx.matrix([[ctx.mpf(Fraction(v).numerator) / Fraction(v).denominator for v in row]  # noqa: E731
                              for row in np.asarray(a, dtype=object)])
    Q, K, V, O = m(p["Q1"]), m(p["K1"]), m(p["V1"]), m(p["O1"])
    bq, bk, bv, bo = m(p["bQ1"]).T, m(p["bK1"]).T, m(p["bV1"]), m(p["bO1"])
    x = [m(X[:, [a]]) for a in range(n)]
    q = [Q.T * xa + bq for xa in x]
    k = [K.T * xa + bk for xa in x]
    out = []
    for a in range(n):
        w = [phi((q[a].T * k[b])[0]) for b in range(n)]
        s = sum((w[b] * x[b] for b in range(1, n)), w[0] * x[0]) / sum(w)
        out.append(x[a] + O * (V * s + bv) + bo)

    def ln(y, g, sh):
        mean = sum(y[i] for i in range(d)) / d
        var = sum((y[i] - mean) ** 2 for i in range(d)) / d
        return ctx.matrix([[g[i] * (y[i] - mean) / ctx.sqrt(var + ctx.mpf(layer.eps.numerator) / layer.eps.denominator)
                            + sh[i]] for i in range(d)])

    f = {"tanh": ctx.tanh, "gelu": lambda v: v * (1 + ctx.erf(v / ctx.sqrt(2))) / 2}[str(layer.activation)]
    gA, sA, gF, sF = (m(p[k]) for k in ("attn_norm.gain1", "attn_norm.shift1", "mlp_norm.gain1", "mlp_norm.shift1"))
    Fa, fa, Fb, fb = (m(p[k]) for k in ("mlp.in1", "mlp.in_bias1", "mlp.out1", "mlp.out_bias1"))
    result = []
    for a in range(n):
        y = ln(out[a], gA, sA)
        h = Fa * y + fa
        z = y + Fb * ctx.matrix([[f(h[i])] for i in range(layer.mlp)]) + fb
        result.append(ln(z, gF, sF))
    return result


def run(full: bool = False) -> Derivation:
    der = Derivation("n4_transformer_blocks", "Transformer-block parts (beyond the paper)",
                     "Biases, $W_O$, LayerNorm and MLP sublayers: the graph against the formulas, exact "
                     "Taylor coefficients against sympy, the exact spectrum against the numerical one, and "
                     "the declared symmetries as exact kernel vectors.", KIND)
    # (1) the graph against a direct evaluation
    A = MPMath(40)
    normalizers = {"exp": A.ctx.exp, "1+s^2": lambda z: 1 + z * z}
    tex = {"exp": "$\\phi = \\exp$", "1+s^2": "$\\phi = 1 + s^2$"}
    for act, normalizer in (("tanh", "exp"), ("gelu", "exp"), ("tanh", "1+s^2")):
        arch = Architecture.uniform(1, 2, 2, 3, normalizer, skip="value", norm="post", eps="1/10", bias=True, mlp=3,
                                    combine="concat", activation=act)
        p, X = random_point(arch, 5), random_bank(arch, 1, 5)
        vals = {k: A.const(v) for k, v in p.items()}
        vals["X"] = A.const(X)
        F = evaluate(native_network(arch), A, vals)["F"][0]
        ref = direct_layer(arch, p, X[0], A.ctx, normalizers[normalizer])
        gap = max(abs(F[i, a] - ref[a][i]) for a in range(arch.tokens) for i in range(2))
        der.check(f"full post-norm layer ({act}, {tex[normalizer]}): graph = formulas (difference below "
                  "$10^{-30}$, 40 digits)", bool(gap < mpmath.mpf(10) ** -30), True, kind="numerical")
        der.case(f"full post-norm layer, {act}, {tex[normalizer]}, $d = 2$, $r = 2$, $n = 3$")
        if act == "tanh" and normalizer == "exp":
            der.show("The layer's output on one input (graph, mpmath at 40 digits; tokens as columns):",
                     sympy.Matrix(2, arch.tokens, lambda i, a: sympy.Float(mpmath.nstr(F[i, a], 12), 12)), "F(X)")
    # (2) exact Taylor coefficients against sympy's series
    s = sympy.Symbol("s")
    Q = exact_series(1).field
    for f, c, expr in ((Elementwise("rsqrt"), Fraction(9, 4), 1 / sympy.sqrt(s)),
                       (Elementwise("tanh"), Fraction(0), sympy.tanh(s)),
                       (Elementwise("sigmoid"), Fraction(0), 1 / (1 + sympy.exp(-s))),
                       (activation("poly:1,-2,0,1/3"), Fraction(-3, 5), 1 - 2 * s + s**3 / 3)):
        got = [Fraction(str(v[0])) for v in f.jets(Q, Q.convert([c]), 6)]
        series = sympy.series(expr.subs(s, s + sympy.Rational(c.numerator, c.denominator)), s, 0, 6).removeO()
        want = [Fraction(str(sympy.Poly(series, s).coeff_monomial(s**k))) for k in range(6)]
        der.check(f"Taylor coefficients of {f} at {c} = sympy's series", got, want)
        if f.name == "rsqrt":
            der.show("Exact Taylor coefficients of $x^{-1/2}$ at $9/4$ (the LayerNorm scale):",
                     sympy.Matrix([[sympy.Rational(q.numerator, q.denominator) for q in got]]), "a_k")
    # (3) exact spectrum (rational-square bank) against the numerical one (generic bank)
    kinds: dict = {}
    for kind in (dict(norm="post"), dict(skip="value", norm="post"), dict(skip="value", norm="pre")):
        arch = Architecture.uniform(1, 2, 1, 3, "exp", eps="1/10", **kind)
        e = native_spectrum(arch, bank=square_bank(arch, 6), method="exact")
        nspec = numerical_path_spectrum(arch, digits=120 if not full else 300)
        exact = (sorted((b.order, b.multiplicity) for b in e.bands), e.rank, e.kernel, e.undecided)
        numeric = (nspec.bands, nspec.rank, nspec.declared, nspec.unexplained)
        der.check(f"one {kind.get('norm')}-norm layer{' with skip' if 'skip' in kind else ''}: exact spectrum "
                  "(orders, rank, declared, unexplained) = numerical at the same path", numeric, exact,
                  kind="numerical")
        der.case(f"LayerNorm {kind.get('norm')}-norm{' with skip' if 'skip' in kind else ''}, $D = 1$, $d = 2$, $n = 3$")
        if kind == dict(norm="post"):
            der.show("Exact Smith orders and multiplicities of the post-norm layer (over Q, rational-square bank):",
                     sympy.Matrix(exact[0]), "(\\beta, m)")
        for k, v in e.kernel_kinds.items():
            kinds[k] = kinds.get(k, 0) + v
    # (3b) the constants route: exact in Q adjoined the stack's constants at a generic bank, certified,
    # against the numerical tier on its own grown bank
    cases = [(1, dict(norm="post")), (1, dict(skip="value", norm="pre")), (1, dict(mlp=2, activation="tanh")),
             (1, dict(skip="value", norm="post", norm_kind="rmsnorm"))]
    if full:
        cases += [(2, dict(norm="post")), (2, dict(skip="value", norm="post")),
                  (1, dict(skip="value", norm="post", mlp=2, bias=True, combine="concat", activation="gelu"))]
    for depth, kind in cases:
        arch = Architecture.uniform(depth, 2, 1, 3, "exp", **kind)
        c = native_spectrum(arch, method="constants")
        nspec = numerical_path_spectrum(arch, digits=120 if not full else 300)
        certified = (sorted({(b.order, sum(x.multiplicity for x in c.bands if x.order == b.order)) for b in c.bands}),
                     c.rank, c.kernel, c.undecided)
        name = ", ".join(f"``{k}`` {v}" if "_" in k else f"{k} {v}" for k, v in kind.items())
        der.check(f"{name}, D = {depth}, eps = 1/100000: the spectrum exact in Q adjoined the constants (a proved "
                  "frame, leading minor in balls) is certified", c.certificate, "certified", kind="certified")
        der.check(f"{name}, D = {depth}: certified (orders, rank, declared, gap) = numerical (orders, rank, "
                  "declared, unexplained) on a grown bank", (nspec.bands, nspec.rank, nspec.declared,
                                                            nspec.unexplained), certified, kind="numerical")
        der.case(f"constants route, {name}, $D = {depth}$, $d = 2$, $n = 3$")
        if depth == 1 and kind == dict(mlp=2, activation="tanh"):
            der.show("Certified Smith orders and multiplicities of attention + a tanh MLP (exact in "
                     "$\\mathbb Q(\\tanh c_1, \\dots)$, generic bank):", sympy.Matrix(certified[0]), "(\\beta, m)")
        # the rank of J at the path point t = 1 in balls (a lower bound on the rank over R((t))) against
        # the frame's finite orders: a second code path (a point, no series) for the rank
        st = setup(arch, 0, "identity", "modular", None, lambda msg: None)
        found = path_rank(st, random_bank(arch, c.bank_size, 0))
        der.check(f"{name}, D = {depth}: the certified rank of J at the path point t = 1 (balls) = the frame's "
                  "number of finite orders", found.rank, c.rank + c.past, kind="certified")
        # the orders from ranks alone (ball series, no exact arithmetic) against the exact frame
        ranked = rank_route(st, random_bank(arch, c.bank_size, 0), lambda msg: None)
        der.check(f"{name}, D = {depth}: the Smith orders from the ranks of the truncations (balls) = the exact "
                  "frame's", sorted(ranked["nested"][-1]) if ranked else None,
                  sorted(o for b in c.bands for o in [b.order] * b.multiplicity), kind="certified")
    # a kernel no declared symmetry explains stays one: the quadratic features of three hidden units
    # span three dimensions, and the rank at t = 1 certifies no order past the frame's
    arch = Architecture.uniform(1, 2, 1, 3, "exp", mlp=3, activation="poly:0,1,1/2")
    c, nspec = native_spectrum(arch), numerical_path_spectrum(arch, digits=120)
    der.check("a quadratic MLP of three hidden units: the frame's rank with the finite orders the rank at t = 1 "
              "adds, and the unexplained kernel left = the numerical tier's rank and unexplained kernel",
              (c.rank + c.past, c.undecided - c.past), (nspec.rank, nspec.unexplained), kind="numerical")
    der.case("path rank, quadratic MLP $m = 3$, $D = 1$ (a gap that is kernel)")
    # the score lemma: a frame proved mod t^3 only, its gap (the second layer's query/key columns and a
    # score shift) closed through the last layer's scores, against the modular Smith form of the whole series
    arch = Architecture.uniform(2, 2, 1, 3, "exp", mlp=2, activation="poly:0,1,1/2")
    scored, modular = native_spectrum(arch, method="constants", order=3), native_spectrum(arch)
    der.check("two layers of attention + a quadratic MLP: the orders of a frame proved mod $t^3$ with its gap "
              "closed by the score lemma = the modular Smith form's",
              [(b.layer, b.order, b.multiplicity) for b in scored.bands] + [scored.undecided],
              [(b.layer, b.order, b.multiplicity) for b in modular.bands] + [0], kind="certified")
    der.case("score lemma, quadratic MLP, $D = 2$, $d = 2$, $n = 3$ (frame mod $t^3$)")
    # (3b') the hybrid frame: exact mod t^1 in Q[constants], certified ball series above (the route
    # where the whole truncation does not fit), against the numerical tier
    from symattn.analyses.constant_spectrum import constant_route

    arch = Architecture.uniform(2, 2, 1, 3, "exp", skip="value", norm="pre")
    run = constant_route(setup(arch, 0, "identity", "modular", None, lambda msg: None), "auto", None,
                         lambda msg: None, hybrid=True)
    nspec = numerical_path_spectrum(arch, digits=120 if not full else 300)
    orders = run["nested"][-1] if run["proved"] else []
    der.check("pre-norm with skip, D = 2: the hybrid frame (exact mod $t^1$, balls of 300 digits above) is proved "
              "with its truncation one past the largest numerical order", (run["proved"], run["exact_order"],
                                                                           run["N"]),
              (True, 1, 1 + max(o for o, _ in nspec.bands)), kind="certified")
    der.check("pre-norm with skip, D = 2: hybrid (orders, rank, gap) = numerical (orders, rank, unexplained)",
              (nspec.bands, nspec.rank, nspec.unexplained),
              (sorted(Counter(orders).items()), len(orders), run["proof"].gap), kind="numerical")
    der.case("hybrid frame, pre-norm with skip, $D = 2$, $d = 2$, $n = 3$")
    # the hybrid frame's ball series against the exact series in Q[constants], every coefficient to t^3
    from symattn.analyses.collapse import bank_jacobian
    from symattn.core.algebras.ballseries import ball_series

    for depth, kind in ((2, dict(skip="value", norm="pre")), (1, dict(mlp=2, activation="tanh")),
                        (1, dict(skip="value", norm="post", mlp=2, bias=True, combine="concat", activation="gelu"))):
        arch = Architecture.uniform(depth, 2, 1, 3, "exp", **kind)
        st = setup(arch, 0, "identity", "modular", None, lambda msg: None)
        x = random_bank(arch, 1, 1)
        A, C = ball_series(4, 60), constant_series(4)
        with A.field.working():
            B = bank_jacobian(arch, x, st.U, st.W, st.V, A, st.columns, verify=0).reshape(-1)
        E = C.field.balls(bank_jacobian(arch, x, st.U, st.W, st.V, C, st.columns, verify=0).reshape(-1), 60)
        name = ", ".join(f"``{k}`` {v}" if "_" in k else f"{k} {v}" for k, v in kind.items())
        der.check(f"{name}, D = {depth}: the ball series' Jacobian (60 digits) contains the exact one in Q[constants] "
                  "at every coefficient to $t^3$, radius below $10^{-50}$, its exact zeros exact",
                  (all(b.overlaps(e) for b, e in zip(B, E)), max(float(b.rad()) for b in B) < 1e-50,
                   all(not (b.is_exact() and b == 0) or (e.is_exact() and e == 0) for b, e in zip(B, E))),
                  (True, True, True), kind="certified")
        der.case(f"ball series against Q[constants], {name}, $D = {depth}$, to $t^3$")
    # (3c) the constant field's Taylor data against mpmath's derivatives (a second code path)
    F = ConstantField(16)
    root = F.jets(Elementwise("rsqrt"), np.array([flint.fmpq(3)], dtype=object), 1)[0][0]
    ctx = mpmath.mp.clone()
    ctx.dps = 50
    for name in ("rsqrt", "tanh", "sigmoid", "silu", "gelu", "gelu_tanh"):
        worst = mpmath.mpf(0)
        for c in (flint.fmpq(7, 5), root * 2 + flint.fmpq(1, 3)):
            cell = np.empty(1, dtype=object)
            cell[0] = c
            value = ctx.mpf(F.balls(cell, 60)[0].mid().str(60, radius=False))
            for k, jet in enumerate(F.jets(Elementwise(name), cell, 6)):
                want = Elementwise(name).numeric(np.array([value], dtype=object), k, "mpmath", ctx)[0] / math.factorial(k)
                worst = max(worst, abs(ctx.mpf(F.balls(jet, 60)[0].mid().str(55, radius=False)) - want))
        der.check(f"``{name}``: Taylor coefficients in Q adjoined the constants (at $7/5$ and at an element of "
                  "$\\mathbb{Q}(3^{-1/2})$), evaluated in balls, = mpmath's derivatives (difference below $10^{-40}$)",
                  bool(worst < mpmath.mpf(10) ** -40), True, kind="numerical")
    # (4) every block symmetry, verified exactly inside the spectra
    for depth, kind in ((1, dict(bias=True, combine="concat")), (1, dict(mlp=2, activation="poly:0,0,1")),
                        (1, dict(mlp=2, activation="poly:0,1,1/2", bias=True, heads=2)),
                        (2, dict(mlp=2, activation="poly:0,1,1/2"))):
        arch = Architecture.uniform(depth, 2, 1, 3, "exp", **kind)
        spec = native_spectrum(arch)
        for k, v in spec.kernel_kinds.items():
            kinds[k] = kinds.get(k, 0) + v
        if depth == 2:
            der.check("two layers of attention + a quadratic MLP: the MLP scalings of the shifted monomial "
                      "$(x + 1)^2/2 - 1/2$, the interface after the MLP and its shift orthogonal to the next "
                      "queries explain the whole kernel (certified, no gap)", (spec.certificate, spec.undecided),
                      ("certified", 0), kind="certified")
        der.case(f"{', '.join(f'{k} {v}' for k, v in kind.items())}, $D = {depth}$, $d = 2$, $n = 3$")
    arch = Architecture.uniform(2, 2, 1, 3, "exp", skip="value", norm="post")
    spec = native_spectrum(arch, method="constants")
    for k, v in spec.kernel_kinds.items():
        kinds[k] = kinds.get(k, 0) + v
    der.check("two post-norm blocks with skip at d = 2: the LayerNorm interface $I + 1 h^T$ and the LayerNorm normal "
              "shift explain the whole kernel (certified in Q[constants], no gap)", (spec.certificate, spec.undecided),
              ("certified", 0), kind="certified")
    der.case("post-norm with skip, $D = 2$, $d = 2$, $n = 3$ (constants route)")
    # each declared kind on its own: its kernel product (a tangent that moves only some blocks, e.g.
    # a LayerNorm's shift, broadcast in sums) is exactly zero and the same as its columns of the
    # product with every declared direction
    arch = Architecture.uniform(2, 3, 2, 3, "exp", skip="value", norm="post")
    s = setup(arch, 0, "identity", "constants", None, lambda msg: None)
    X, xi = random_bank(arch, 1, 0), s.kernel.along_path()
    every = kernel_product(arch, X, s.U, s.W, s.V, xi, constant_series(4))
    alone = {}
    for kind in sorted({sym.kind for sym in s.kernel.symmetries}):
        mine = [k for k, sym in enumerate(s.kernel.symmetries) if sym.kind == kind]
        own = kernel_product(arch, X, s.U, s.W, s.V, xi[:, mine], constant_series(4))
        alone[kind] = (all(v == 0 for v in np.asarray(own).reshape(-1)),
                       bool((np.asarray(own) == np.asarray(every)[..., mine]).all()))
    der.check("two post-norm blocks with skip at d = 3, r = 2: each declared kind on its own is an exact kernel "
              "vector mod $t^4$ in Q[constants], the same as its columns of the product with all of them",
              alone, {kind: (True, True) for kind in alone}, kind="exact")
    der.case("post-norm with skip, $D = 2$, $d = 3$, $r = 2$, $n = 3$, each kind alone")
    # LayerNorm normals of biased readers (Q, K, V and the MLP's first map): the numerical tier
    # checks every declared direction as a kernel vector of its 300-digit ball Jacobian
    for kind in (dict(skip="value", norm="pre", bias=True, mlp=2, activation="tanh"),
                 dict(skip="value", norm="post", bias=True, mlp=2, activation="tanh")):
        arch = Architecture.uniform(1, 2, 1, 3, "exp", **kind)
        nspec = numerical_path_spectrum(arch, digits=120 if not full else 300)
        for k, v in nspec.kernel_kinds.items():
            kinds[k] = kinds.get(k, 0) + v
        der.check(f"{kind['norm']}-norm layer with biases and an MLP: its declared directions (LayerNorm normals "
                  "of their readers, LayerNorm bias transfers and interfaces, through the residual where it "
                  "carries the output on, among them) are kernel vectors at 120 digits, and both kinds are "
                  "declared (a bias transfer the LayerNorm interface contains is counted as an interface)",
                  (nspec.kernel_kinds.get("LayerNorm normal", 0) >= 2,
                   nspec.kernel_kinds.get("LayerNorm bias transfer", 0)
                   + nspec.kernel_kinds.get("LayerNorm interface", 0) >= 2), (True, True), kind="numerical")
        der.case(f"{', '.join(f'{k} {v}' for k, v in kind.items())}, $D = 1$, $d = 2$, $n = 3$ (numerical tier)")
    arch = Architecture.uniform(2, 2, 1, 3, "exp", norm="post")  # no biases: no shift passes into the readers
    nspec = numerical_path_spectrum(arch, digits=120 if not full else 300)
    der.check("two post-norm layers without biases: every declared direction is a kernel vector at 120 digits, "
              "and no LayerNorm bias transfer is declared (the next layer's query and value maps have no bias)",
              nspec.kernel_kinds.get("LayerNorm bias transfer", 0), 0, kind="numerical")
    der.case("post-norm, $D = 2$, $d = 2$, $n = 3$, no biases (numerical tier)")
    wanted = ["softmax key bias", "bias transfer", "MLP interface", "MLP scaling", "interface shift",
              "LayerNorm shift", "LayerNorm interface", "LayerNorm normal", "LayerNorm bias transfer",
              "LayerNorm normal shift"]
    der.check("every block symmetry kind occurs and is verified as an exact kernel vector",
              [w for w in wanted if kinds.get(w, 0) > 0], wanted)
    # (4b) the numerical least bank against the exact one, on the paper's stack (where both run)
    arch = Architecture.uniform(2, 2, 1, 2, "exp")
    exact_bank = least_bank(arch, trials=1)
    num_bank = least_bank(arch, trials=1, method="numerical", digits=120)
    exact_spec = native_spectrum(arch, bank=family_bank(arch, exact_bank.least_size, "random", 0))
    ref = num_bank.reference
    der.check("numerical least bank (120 digits) = the exact least bank (divided frame, proved mod p), "
              "the same sizes tried, its reference = the exact spectrum, labelled numerical and not proved below",
              (num_bank.least_size, num_bank.tried, [tuple(b) for b in ref["bands"]], ref["rank"], num_bank.tier,
               num_bank.below_proved),
              (exact_bank.least_size, exact_bank.tried,
               sorted((b.order, b.multiplicity) for b in exact_spec.bands), exact_spec.rank,
               "numerical at 120 digits", False), kind="numerical")
    der.case("least bank, $D = 2$, $d = 2$, $r = 1$, $n = 2$, exact and numerical")
    # (5) the dimension: exact tier (jets from X = 0) against the ball tier (bank Jacobian, balls)
    rows = []
    for kind in (dict(norm="post", eps="1/4"), dict(skip="value", norm="post", eps="1/4"),
                 dict(mlp=2, activation="poly:0,1,1/2")):
        arch = Architecture.uniform(1, 2, 1, 3, "exp", **kind)
        jets = neuromanifold_dimension(arch, method="exact")
        balls = neuromanifold_dimension(arch, method="numerical", digits=40)
        consistent = jets.lower_bound <= balls.upper_bound and balls.lower_bound <= jets.upper_bound
        agree = not (jets.certified and balls.certified) or jets.dimension == balls.dimension
        name = ", ".join(f"``{k}`` {v}" if "_" in k else f"{k} {v}" for k, v in kind.items())
        der.check(f"dimension of one layer ({name}): exact-tier bounds [{jets.lower_bound}, {jets.upper_bound}] "
                  f"and ball-tier bounds [{balls.lower_bound}, {balls.upper_bound}] are consistent and agree "
                  "where both are certified", (consistent, agree), (True, True), kind="certified")
        der.check(f"ball tier ({name}): a certified rank, at least the exact tier's proven lower bound",
                  balls.lower_bound >= min(jets.lower_bound, balls.upper_bound) > 0, True, kind="certified")
        rows.append([name, jets.lower_bound, jets.upper_bound, balls.lower_bound, balls.upper_bound])
        der.case(f"dimension, {name}, $D = 1$, $d = 2$, $n = 3$")
    # two layers: the ball tier's bounds are the largest certified rank and the smallest P - rank(symmetries)
    # over its points (each valid at any point), which meet here
    arch = Architecture.uniform(2, 2, 1, 3, "exp", skip="value", norm="post")
    balls = neuromanifold_dimension(arch, method="numerical")
    der.check(f"dimension of two post-norm blocks with skip: ball-tier bounds [{balls.lower_bound}, "
              f"{balls.upper_bound}] meet, no unexplained kernel", (balls.certified, balls.unexplained), (True, 0),
              kind="certified")
    der.case("dimension, post-norm with skip, $D = 2$, $d = 2$, $n = 3$")
    der.show("Dimension bounds of one block layer, exact tier against ball tier (lower, upper each):",
             sympy.Matrix([r[1:] for r in rows]), r"[\ell_J, u_J, \ell_B, u_B]")
    # (6) the conjecture engine's rows on the block families add up
    for family in ("ln-post", "mlp-poly"):
        table = family_table(family, depths=(1, 2))
        P = [Architecture.uniform(r["depth"], 2, 1, 3, "exp", **FAMILY_KINDS[family]).native_size for r in table]
        der.check(f"conjecture engine, family {family}, D = 1, 2: rank + kernel + unexplained = P and the "
                  "bands' multiplicities add up to the rank",
                  [(r["rank"] + r["kernel"] + r["unexplained"], sum(m for _, _, m in r["bands"])) for r in table],
                  [(p, r["rank"]) for p, r in zip(P, table)])
        der.case(f"conjecture engine, family {family}, $D = 1, 2$")
    _generic_claims(der)
    return der


def _generic_claims(der: Derivation) -> None:
    """(7) Claims say what they are about (issue 39): the dominance order against running sums computed
    here, the theorem's generic claim refused at a point above its orders, two points compared."""
    import itertools
    import random

    from symattn.analyses.genericity import dominance, generic_claim, theorem_orders

    rng = random.Random(39)
    pairs = [([rng.randint(0, 5) for _ in range(5)], [rng.randint(0, 5) for _ in range(5)]) for _ in range(200)]

    def mine(a, b):
        sa, sb = list(itertools.accumulate(sorted(a))), list(itertools.accumulate(sorted(b)))
        return "=" if sorted(a) == sorted(b) else "<" if all(x <= y for x, y in zip(sa, sb)) else \
            ">" if all(x >= y for x, y in zip(sa, sb)) else None
    der.check("the dominance order (sum of the k smallest Smith orders, every k) = running sums on 200 seeded pairs",
              [dominance(a, b) for a, b in pairs], [mine(a, b) for a, b in pairs])
    paper = Architecture.uniform(2, 2, 1, 3, "exp")
    theorem = theorem_orders(paper)
    raised = sorted(theorem[:-1] + [theorem[-1] + 2])
    claims = [generic_claim(paper, [0], [theorem], [True]).label, generic_claim(paper, [0], [raised], [True]).label,
              generic_claim(paper, [0], [theorem], [False]).label]
    der.check("the paper's stack: a certified point on Theorem 4's orders is generic (certified); a point above them, "
              "or an uncertified one, is about that point only", claims,
              ["generic (certified)", "at this point", "at this point"])
    block = Architecture.uniform(1, 2, 1, 3, "exp", skip="value")
    two = generic_claim(block, [0, 1], [[0, 0, 1, 5, math.inf], [0, 0, 1, 5, 5]], [True, True])
    der.check("two points that differ: the seed above is special, the candidate is the smaller spectrum (evidence)",
              (two.label, two.special, two.candidate), ("generic (evidence, 2 points)", [0], [0, 0, 1, 5, 5]))
    s = native_spectrum(block, method="constants")
    der.check("a block stack's spectrum is certified at this point and generic only as evidence from 2 points",
              (s.certificate, s.about, s.generic, s.claim["special"]),
              ("certified", "at this point", "generic (evidence, 2 points)", []), kind="certified")
    der.case("generic claims: dominance order, Theorem 4's claim, two seeded points ($D = 1$, skip)")


if __name__ == "__main__":
    raise SystemExit(main_for(__name__))
