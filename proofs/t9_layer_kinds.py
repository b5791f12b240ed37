r"""Beyond the paper: every layer kind against a second, naive evaluation of its formula.

The layer kinds of :mod:`symattn.model.layers` (a value or folded skip, a
causal, sliding-window or 0/1 mask, several summed or concatenated heads) are
not the paper's; no theorem covers them. What the analyses report about them
rests on the graph of :mod:`symattn.model.network` and the tangent rules. This
script checks that graph against :mod:`symattn.model.reference`, which
evaluates each layer's documented formula token by token over dual series
mod :math:`(u^N, \delta^2, p)` and uses neither the graph nor the tangent rules:

* the output :math:`F(\rho Y)` of the graph over exact series equals the
  reference's, for every kind, three normalizers and seeded points;
* every exact Jacobian of a non-paper stack is checked against the reference on
  a random direction inside :func:`symattn.model.interpreter.jacobian` (a
  corrupted Jacobian is refused: the check can fail);
* known answers, computed separately from both: a ``window:1`` mask is the
  identity attention, so :math:`F = V_D \cdots V_1 X` and a folded skip gives
  :math:`2^D X`; a value skip with :math:`V = 0` is the identity; the first
  query of a causal layer sees only itself; two equal summed heads are one head
  with a doubled value; concatenated heads with :math:`O_h = I` are summed heads.

The transformer-block parts (biases, :math:`W_O`, LayerNorm pre and post with its
:math:`\varepsilon`, MLP sublayers with every analytic activation) are checked the same
way: exactly on the commands' collapse path (mod p) and at :math:`\rho Y` over
:math:`\mathbb{Q}` (every constant term zero, so ``tanh``, ``sigmoid``, ``silu`` and
LayerNorm's root at a square :math:`\varepsilon` are rational), numerically in mpmath
where the constants are irrational (GELU, LayerNorm at a generic point); known answers:
biases with :math:`Q = K = 0` average the tokens, a post-norm LayerNorm on tokens
:math:`(m + \delta, m - \delta)` with :math:`\delta^2 + \varepsilon` a rational square,
and the series constants of GELU (both forms) and SiLU through an MLP sublayer.

Notes
-----
The proof's kind is numerical: its weakest checks (GELU, LayerNorm at a generic point) agree
numerically in mpmath; every other check is exact. Comparisons of the reference are exact
modulo the prime ``8388593`` (a wrong
map agrees mod p on a random direction with probability at most about
:math:`1/p`); the graph's own outputs are compared over :math:`\mathbb{Q}`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from symattn.core.algebras import exact_series, series_for
from symattn.core.errors import CheckFailed
from symattn.model.architecture import Architecture
from symattn.model.interpreter import jacobian
from symattn.model.network import evaluate, native_network
from symattn.model.parameters import random_bank, random_point
from symattn.model.reference import PRIME, reference_check, reference_outputs
from symattn.render.derivation import Derivation
from symattn.theorems.registry import main_for

NAME = "layer-kinds-match-reference"
STATEMENT = "Beyond the paper: every layer kind against its naive reference evaluation"
KIND = "numerical"  # the weakest check: GELU and LayerNorm at generic points, in mpmath

#: The layer kinds checked (keywords of Architecture.uniform).
KINDS = [
    {"skip": "value"}, {"skip": "folded"}, {"mask": "causal"}, {"mask": "window:1"}, {"mask": "window:2"},
    {"mask": ((1, 1, 0), (0, 1, 0), (1, 0, 1))}, {"heads": 2}, {"heads": 2, "combine": "concat"},
    {"heads": 2, "skip": "value", "mask": "causal"}, {"heads": 2, "head_ranks": [1, 2], "skip": "folded"},
]


def _graph_outputs(arch: Architecture, point: dict, Y: np.ndarray, order: int):
    """``F(rho Y)`` and the graph's input values over exact series (the graph's own evaluation)."""
    A = exact_series(order)
    vals = {name: A.const(value) for name, value in point.items()}
    vals["X"] = A.series([np.zeros(Y.shape, dtype=int), Y])
    return evaluate(native_network(arch), A, vals), vals, A


def _residues(F) -> np.ndarray:
    return np.vectorize(lambda v: int(v.p) * pow(int(v.q), -1, PRIME) % PRIME, otypes=[np.int64])(F)


def _describe(kind: dict) -> str:
    return ", ".join(f"{k.replace('_', ' ')} {'pattern' if isinstance(v, tuple) else str(v).replace('_', ' ')}"
                     for k, v in kind.items())


def _against_reference(der: Derivation, arch: Architecture, label: str, seed: int, order: int = 6) -> None:
    point = random_point(arch, seed, "random")
    Y = random_bank(arch, 2, seed)
    outs, vals, A = _graph_outputs(arch, point, Y, order)
    ref = reference_outputs(arch, "native", vals, {}, order, PRIME)
    der.check(f"{label}: $F(\\rho Y)$ of the graph = the naive reference (mod $p$, $\\rho^0, \\dots, \\rho^{{{order - 1}}}$)",
              bool((_residues(outs["F"]) == ref["F"][0]).all()), True, note=arch.describe())
    names = [b.name for b in arch.blocks]
    graph = native_network(arch)
    der.check(f"{label}: the graph builder marks the graph for the reference, so every command's exact "
              "Jacobian of this stack is checked against it", graph.graph.get("architecture") is not None, True)
    J = jacobian(graph, A, vals, names)  # checked inside against the reference
    directions = A.const(np.eye(arch.native_size, dtype=int))
    bad = J.copy()
    bad[1, 0, 0] = bad[1, 0, 0] + 1
    try:
        reference_check(arch, "native", vals, names, bad, ["F"], directions, None)
        refused = False
    except CheckFailed:
        refused = True
    der.check(f"{label}: the exact Jacobian passes the reference check; a corrupted one is refused",
              refused, True, note=f"{arch.native_size} columns, random direction mod {PRIME}")
    der.case(f"{label} (seed {seed})")


def _known_answers(der: Derivation) -> None:
    order = 4
    # window:1: each query sees only itself, S(X) = X
    for depth in (1, 2):
        arch = Architecture.uniform(depth, 2, 1, 3, "exp", mask="window:1")
        point = random_point(arch, 3, "random")
        Y = random_bank(arch, 2, 3)
        outs, vals, _ = _graph_outputs(arch, point, Y, order)
        chain = np.eye(2, dtype=object)
        for i in range(1, depth + 1):
            chain = np.asarray(point[f"V{i}"], dtype=object).dot(chain)
        want = np.einsum("ij,bjn->bin", chain, Y.astype(object))
        ref = reference_outputs(arch, "native", vals, {}, order, PRIME)
        got = [np.vectorize(lambda v: Fraction(int(v.p), int(v.q)), otypes=[object])(outs["F"][k]) for k in (0, 1, 2)]
        der.check(f"window:1, $D = {depth}$: $F(\\rho Y) = \\rho V_D \\cdots V_1 Y$ (graph over Q; reference mod $p$)",
                  (bool((got[1] == want).all()), bool((got[0] == 0).all() and (got[2] == 0).all()),
                   bool((ref["F"][0][1] == _residues(np.vectorize(lambda v: v, otypes=[object])(
                       exact_series(1).field.convert(want)))).all())), (True, True, True))
        der.case(f"window:1 identity attention, D = {depth}")
        folded = Architecture.uniform(depth, 2, 1, 3, "cosh", mask="window:1", skip="folded")
        outs, vals, _ = _graph_outputs(folded, random_point(folded, 3, "random"), Y, order)
        got = np.vectorize(lambda v: Fraction(int(v.p), int(v.q)), otypes=[object])(outs["F"][1])
        der.check(f"window:1 with folded skips, $D = {depth}$: $F(\\rho Y) = 2^D \\rho Y$", bool((got == 2**depth * Y).all()),
                  True)
    # value skip with V = 0 is the identity
    arch = Architecture.uniform(2, 2, 1, 3, "logistic", skip="value")
    point = random_point(arch, 4, "random")
    point.update({n: np.zeros_like(v) for n, v in point.items() if n.startswith("V")})
    Y = random_bank(arch, 2, 4)
    outs, vals, _ = _graph_outputs(arch, point, Y, order)
    got = np.vectorize(lambda v: Fraction(int(v.p), int(v.q)), otypes=[object])(outs["F"][1])
    der.check("value skip with $V = 0$: $F(\\rho Y) = \\rho Y$", bool((got == Y).all()), True)
    # causal: the first query sees only itself
    arch = Architecture.uniform(1, 2, 1, 3, "exp", mask="causal")
    point = random_point(arch, 5, "random")
    outs, vals, _ = _graph_outputs(arch, point, Y, 5)
    F = np.vectorize(lambda v: Fraction(int(v.p), int(v.q)), otypes=[object])(outs["F"])
    V = np.asarray(point["V1"], dtype=object)
    der.check("causal, first query: $F(\\rho Y)_{:,1} = \\rho V Y_{:,1}$ exactly (no higher order)",
              (bool((F[1][:, :, 0] == np.einsum("ij,bj->bi", V, Y[:, :, 0].astype(object))).all()),
               bool((F[2:, :, :, 0] == 0).all())), (True, True))
    der.case("known answers: window:1, folded window:1, value skip V = 0, causal first token")
    # two equal summed heads = one head with a doubled value; concat with O_h = I = summed heads
    one = Architecture.uniform(1, 2, 1, 3, "exp")
    two = Architecture.uniform(1, 2, 1, 3, "exp", heads=2)
    p1 = random_point(one, 6, "random")
    p2 = {f"{r}1h{h}": p1[f"{r}1"] for r in "QKV" for h in (1, 2)}
    doubled = dict(p1, V1=2 * np.asarray(p1["V1"], dtype=object))
    a = _graph_outputs(two, p2, Y, order)
    b = _graph_outputs(one, doubled, Y, order)
    ra = reference_outputs(two, "native", a[1], {}, order, PRIME)
    der.check("two equal summed heads = one head with $2V$ (graph over Q; reference mod $p$)",
              (bool((a[0]["F"] == b[0]["F"]).all()), bool((ra["F"][0] == _residues(b[0]["F"])).all())), (True, True))
    cat = Architecture.uniform(1, 2, 1, 3, "exp", heads=2, combine="concat")
    pc = dict(random_point(cat, 7, "random"))
    summed = {n: pc[n] for n in pc if not n.startswith("O")}
    pc.update({n: np.eye(2, dtype=int) for n in pc if n.startswith("O")})
    c = _graph_outputs(cat, pc, Y, order)
    s = _graph_outputs(two, summed, Y, order)
    rc = reference_outputs(cat, "native", c[1], {}, order, PRIME)
    der.check("concatenated heads with $O_h = I$ = summed heads (graph over Q; reference mod $p$)",
              (bool((c[0]["F"] == s[0]["F"]).all()), bool((rc["F"][0] == _residues(s[0]["F"])).all())), (True, True))
    der.case("known answers: equal heads, concat with O = I")


# -- transformer-block parts (biases, W_O, LayerNorm, MLP) -------------------------------------
#: Block layer kinds checked exactly (keywords of Architecture.uniform) and how: ``"path"`` (the
#: commands' collapse path: query/key factors and their biases times u, a constant bank; modular
#: where the stack allows) or ``"rho"`` (inputs rho Y, every additive block zero, eps = 1/4: every
#: constant term is zero, so tanh, sigmoid, silu and LayerNorm's root at eps are rational).
BLOCK_KINDS = [
    ({"bias": True, "skip": "value"}, "path"),
    ({"bias": True, "heads": 2, "combine": "concat"}, "path"),
    ({"bias": True, "skip": "value", "mlp": 2, "activation": "poly:0,1,1/3"}, "path"),
    ({"skip": "value", "norm": "post", "eps": "1/4"}, "rho"),
    ({"skip": "value", "norm": "pre", "eps": "1/4", "mlp": 2, "activation": "tanh"}, "rho"),
    ({"skip": "value", "mlp": 2, "activation": "sigmoid", "bias": True}, "rho"),  # sigmoid(0) != 0: D = 1 only
    ({"skip": "folded", "norm": "post", "eps": "1/9", "mlp": 3, "activation": "silu"}, "rho"),
    ({"skip": "value", "bias": True, "heads": 2, "combine": "concat", "norm": "post", "eps": "1/4", "mlp": 2,
      "activation": "poly:0,1,0,-1/2"}, "rho"),
]

#: Block layer kinds checked numerically (irrational constants: GELU, LayerNorm at a generic point).
NUMERICAL_KINDS = [
    {"skip": "value", "norm": "post", "mlp": 2, "activation": "gelu", "bias": True, "heads": 2, "combine": "concat"},
    {"skip": "value", "norm": "pre", "mlp": 2, "activation": "gelu_tanh"},
    {"skip": "value", "norm": "post", "mlp": 2, "activation": "tanh", "bias": True},
    {"norm": "post", "mlp": 2, "activation": "silu"},
    {"skip": "value", "mlp": 3, "activation": "sigmoid", "bias": True},
]


def _block_inputs(arch: Architecture, point: dict, Y: np.ndarray, order: int, mode: str):
    """Exact series inputs of a block stack (see :data:`BLOCK_KINDS`): over F_p on the path (as the
    commands), over Q for ``rho`` (LayerNorm's root needs the rational constant)."""
    A = series_for("modular", order) if mode == "path" else exact_series(order)
    vals = {}
    for b in arch.blocks:
        value = np.asarray(point[b.name], dtype=object)
        if mode == "rho" and (b.is_bias or b.is_shift):
            value = np.zeros_like(value)
        vals[b.name] = (A.series([np.zeros(value.shape, dtype=int), value]) if mode == "path" and b.is_factor
                        else A.const(value))
    vals["X"] = A.series([np.zeros(Y.shape, dtype=int), Y]) if mode == "rho" else A.const(Y)
    return vals, A


def _block_against_reference(der: Derivation, arch: Architecture, mode: str, label: str, seed: int,
                             order: int = 5) -> None:
    point = random_point(arch, seed, "random")
    Y = random_bank(arch, 2, seed)
    vals, A = _block_inputs(arch, point, Y, order, mode)
    graph = native_network(arch)
    outs = evaluate(graph, A, vals)
    field_p = getattr(A.field, "p", None)
    ref = reference_outputs(arch, "native", vals, {}, order, PRIME, field_p)
    F = np.asarray(outs["F"]) % PRIME if field_p else _residues(outs["F"])
    der.check(f"{label}: the graph's output over {'$F_p$' if field_p else '$Q$'} = the naive reference (mod $p$, to "
              f"$u^{{{order - 1}}}$, {mode})", bool((F == ref["F"][0]).all()), True, note=arch.describe())
    der.check(f"{label}: marked for the reference", graph.graph.get("architecture") is not None, True)
    names = [b.name for b in arch.blocks]
    J = jacobian(graph, A, vals, names)  # checked inside against the reference
    bad = J.copy()
    bad[1, 0, -1] = (bad[1, 0, -1] + 1) % PRIME if field_p else bad[1, 0, -1] + 1
    try:
        reference_check(arch, "native", vals, names, bad, ["F"], A.const(np.eye(arch.native_size, dtype=int)), field_p)
        refused = False
    except CheckFailed:
        refused = True
    der.check(f"{label}: the exact Jacobian passes the reference check; a corrupted one is refused", refused, True,
              note=f"{arch.native_size} columns")
    der.case(f"{label} (exact, seed {seed})")


def _numerical_against_reference(der: Derivation, arch: Architecture, label: str, seed: int, digits: int = 40) -> None:
    import mpmath

    from symattn.core.algebras import MPMath
    from symattn.model.reference import numerical_check, numerical_outputs

    point = random_point(arch, seed, "random")
    Y = random_bank(arch, 2, seed)
    A = MPMath(digits)
    vals = {name: A.const(v) for name, v in point.items()}
    vals["X"] = A.const(Y)
    graph = native_network(arch)
    F = evaluate(graph, A, vals)["F"]
    ref = numerical_outputs(arch, "native", dict(point, X=Y), digits)["F"]
    gap = max(abs(a - b) for a, b in zip(np.asarray(F).reshape(-1), ref.reshape(-1)))
    der.check(f"{label}: the graph's output in mpmath = the naive formulas (difference below $10^{{-{digits - 5}}}$, "
              f"{digits} digits)", bool(gap < mpmath.mpf(10) ** -(digits - 5)), True, kind="numerical")
    names = [b.name for b in arch.blocks]
    J = jacobian(graph, A, vals, names)  # checked inside, numerically
    bad = J.copy()
    bad[0, -1] = bad[0, -1] * (1 + mpmath.mpf(10) ** -12) + mpmath.mpf(10) ** -12
    try:
        numerical_check(arch, "native", vals, names, bad, ["F"], A.const(np.eye(arch.native_size, dtype=int)), digits)
        refused = False
    except CheckFailed:
        refused = True
    der.check(f"{label}: the mpmath Jacobian agrees with the central difference of the formulas; one entry "
              "off by $10^{-12}$ is refused", refused, True, kind="numerical")
    der.case(f"{label} (numerical at {digits} digits, seed {seed})")


def _q(M) -> np.ndarray:
    return np.vectorize(lambda v: Fraction(int(v.p), int(v.q)) if hasattr(v, "p") else Fraction(v),
                        otypes=[object])(np.asarray(M, dtype=object))


def _block_known_answers(der: Derivation) -> None:
    """Answers known without either code path (computed here entry by entry, over Q or mpmath)."""
    import mpmath

    from symattn.core.algebras import MPMath
    from symattn.model.reference import numerical_outputs

    order = 3
    # biases with Q = K = 0: every score is bQ . bK, so each query averages the tokens
    for kind in ({"bias": True, "skip": "value"}, {"bias": True, "heads": 2, "combine": "concat"}):
        arch = Architecture.uniform(1, 2, 1, 3, "exp", **kind)
        p = random_point(arch, 8, "random")
        p.update({n: np.zeros_like(v) for n, v in p.items() if n[0] in "QK"})
        Y = random_bank(arch, 2, 8).astype(object)
        A = exact_series(order)
        vals = {n: (A.series([np.zeros(v.shape, dtype=int), v]) if n.startswith("bQ") else A.const(v))
                for n, v in p.items()}
        vals["X"] = A.const(Y)
        outs = evaluate(native_network(arch), A, vals)
        ref = reference_outputs(arch, "native", vals, {}, order, PRIME)
        mean = Y.sum(axis=2, keepdims=True) / 3
        heads = [""] if "heads" not in kind else ["h1", "h2"]
        want = np.zeros(Y.shape, dtype=object) + (Y if kind.get("skip") else 0)
        for h in heads:
            term = np.einsum("ij,bjn->bin", _q(p[f"V1{h}"]), mean + 0 * Y) + _q(p[f"bV1{h}"])[None]
            if kind.get("combine") == "concat":
                term = np.einsum("ij,bjn->bin", _q(p[f"O1{h}"]), term)
            want = want + term
        if kind.get("combine") == "concat":
            want = want + _q(p["bO1"])[None]
        got = _q(outs["F"][0])
        der.check(f"biases, $Q = K = 0$ ({_describe(kind)}): $F = [X +] \\sum_h [O_h] (V_h \\bar x + b_{{V,h}}) [+ b_O]$ "
                  "(graph over Q; reference mod $p$)",
                  (bool((got == want).all()), bool((ref["F"][0][0] == _residues(A.field.convert(want))).all())),
                  (True, True))
    # post-norm LayerNorm with V = 0: F = LN(X); tokens (m + delta, m - delta) with delta^2 + eps a square
    arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value", norm="post", eps="1/10")
    p = random_point(arch, 9, "random")
    p["V1"] = np.zeros((2, 2), dtype=int)
    eps, tokens, scale = Fraction(1, 10), [], []
    for m, k in ((Fraction(1, 2), Fraction(1, 3)), (Fraction(-2), Fraction(3, 2)), (Fraction(0), Fraction(1))):
        delta = (eps - k * k) / (2 * k)
        tokens.append([m + delta, m - delta])
        scale.append(delta * 2 * k / (eps + k * k))  # delta / sqrt(delta^2 + eps)
    Y = np.array([tokens], dtype=object).transpose(0, 2, 1)
    A = exact_series(order)
    vals = {n: (A.series([np.zeros(v.shape, dtype=int), v]) if n[0] in "QK" else A.const(v)) for n, v in p.items()}
    vals["X"] = A.const(Y)
    outs = evaluate(native_network(arch), A, vals)
    ref = reference_outputs(arch, "native", vals, {}, order, PRIME)
    g, s = _q(p["attn_norm.gain1"]), _q(p["attn_norm.shift1"])
    want = np.array([[[g[i, 0] * (1 if i == 0 else -1) * scale[a] + s[i, 0] for a in range(3)] for i in range(2)]],
                    dtype=object)
    der.check("post-norm LayerNorm with $V = 0$, $d = 2$: $F = g \\odot (\\delta, -\\delta)/\\sqrt{\\delta^2 + "
              "\\varepsilon} + s$ on tokens $(m + \\delta, m - \\delta)$, $\\delta^2 + \\varepsilon$ a rational square "
              "(graph over Q; reference mod $p$)",
              (bool((_q(outs["F"][0]) == want).all()), bool((ref["F"][0][0] == _residues(A.field.convert(want))).all())),
              (True, True))
    der.case("known answers: biases with Q = K = 0, post-norm LayerNorm on rational-square tokens")
    # MLP with an identity attention term: V = 0, skip, Fa = I, fa = 0, Fb = I, fb = 0: F - X = f(X)
    digits = 50
    with mpmath.workdps(digits):
        x = mpmath.mpf(10) ** -8
        expected = {  # the even part (f(x) + f(-x))/2 = c2 x^2 + c4 x^4 + ...: c2, c4 from the series of tanh, erf
            "gelu": (1 / mpmath.sqrt(2 * mpmath.pi), -1 / (6 * mpmath.sqrt(2 * mpmath.pi))),
            "gelu_tanh": (1 / mpmath.sqrt(2 * mpmath.pi),
                          mpmath.sqrt(2 / mpmath.pi) * (mpmath.mpf("0.044715") - 2 / (3 * mpmath.pi)) / 2),
            "silu": (mpmath.mpf(1) / 4, mpmath.mpf(-1) / 48),  # x sigmoid(x), sigmoid = 1/2 + x/4 - x^3/48
        }
        for name, (c2, c4) in expected.items():
            arch = Architecture.uniform(1, 2, 1, 2, "exp", skip="value", mlp=2, activation=name)
            p = random_point(arch, 10, "random")
            p.update({"V1": np.zeros((2, 2), dtype=int), "mlp.in1": np.eye(2, dtype=int),
                      "mlp.in_bias1": np.zeros((2, 1), dtype=int), "mlp.out1": np.eye(2, dtype=int),
                      "mlp.out_bias1": np.zeros((2, 1), dtype=int)})
            X = np.array([[[1, -1], [2, -2]]], dtype=object) * Fraction(1, 10**8)
            B = MPMath(digits)
            vals = {n: B.const(v) for n, v in p.items()}
            vals["X"] = B.const(X)
            F = evaluate(native_network(arch), B, vals)["F"][0]
            R = numerical_outputs(arch, "native", dict(p, X=X), digits)["F"][0]
            got = []
            for out in (F, R):
                even = (out[0, 0] - x + out[0, 1] + x) / 2  # token 1 holds x, token 2 holds -x
                odd = (out[0, 0] - x - out[0, 1] - x) / 2
                got.append((abs((even - c2 * x**2) / x**4 - c4) < mpmath.mpf(10) ** -6, abs(odd - x / 2) < x**3))
            der.check(f"MLP {name.replace('_', ' ')} with $V = 0$, $W_1 = W_2 = I$: $f(x) - f(-x) = x$ and the even part "
                      "$c_2 x^2 + c_4 x^4$ with $c_2, c_4$ from the series of $\\operatorname{erf}$ or $\\tanh$ "
                      "(graph and reference in mpmath at 50 digits, $x = 10^{-8}$)",
                      [[bool(v) for v in pair] for pair in got], [[True, True], [True, True]], kind="numerical")
    der.case("known answers: GELU (erf and tanh forms) and SiLU through an MLP sublayer")


def _blocks(der: Derivation, full: bool) -> None:
    der.step("For the transformer-block parts the reference writes out again $q_a = Q^\\top x_a + b_Q^\\top$, "
             "$k_b = K^\\top x_b + b_K^\\top$, $z_{ab} = q_a \\cdot k_b$, $V S + b_V$, $O(\\cdot) + b_O$, "
             "$\\mathrm{LN}(y) = g \\odot (y - \\bar y)/\\sqrt{\\operatorname{var} y + \\varepsilon} + s$ and "
             "$W_2 f(W_1 y + b_1) + b_2$ with the placements of the layer (post, pre, residuals); exactly over "
             "dual series (the root of LayerNorm over Q at rational squares), and numerically in mpmath "
             "(central differences) where the constants are irrational.")
    for k, (kind, mode) in enumerate(BLOCK_KINDS):
        depth = 1 if kind.get("activation") == "sigmoid" else 2 if (full or k % 2 == 0) else 1
        arch = Architecture.uniform(depth, 2, 1, 3, ["exp", "cosh", "logistic"][k % 3], **kind)
        _block_against_reference(der, arch, mode, f"{_describe(kind)} (D = {depth})", seed=20 + k)
    for k, kind in enumerate(NUMERICAL_KINDS if full else NUMERICAL_KINDS[:3]):
        arch = Architecture.uniform(2 if k == 0 else 1, 2, 1, 3, "exp", **kind)
        _numerical_against_reference(der, arch, f"{_describe(kind)}", seed=30 + k)
    _block_known_answers(der)


def run(full: bool = False) -> Derivation:
    der = Derivation("t9_layer_kinds", STATEMENT,
                     "For every layer kind the graph's output and every exact Jacobian agree with a naive "
                     "token-by-token evaluation of the documented formula (mod p), and the known answers hold.",
                     KIND)
    der.step("The reference (symattn.model.reference) writes each layer out again: "
             "$z_{ab} = x_a^\\top A x_b$, $w = \\varphi(z)$ by Horner's rule in dual series, "
             "$\\mathrm{att}_{ab} = m_{ab} w_{ab} / \\sum_c m_{ac} w_{ac}$ with the mask recomputed from its "
             "name, $S_{:,a} = \\sum_b \\mathrm{att}_{ab} x_b$, then $V$, $O$, the sum of heads and the skip.")
    normalizers = ["exp", "cosh", "logistic"]
    cases = KINDS if full else KINDS
    for k, kind in enumerate(cases):
        for j, phi in enumerate(normalizers if full else normalizers[k % 3: k % 3 + 1]):
            depth = 2 if (full or k % 2 == 0) else 1
            arch = Architecture.uniform(depth, 2, 1, 3, phi, **kind)
            _against_reference(der, arch, f"{_describe(kind)} ({phi}, D = {depth})", seed=k + j)
    mixed = Architecture(layers=(Architecture.uniform(1, 2, 1, 3, "exp", skip="value").layers[0],
                                 Architecture.uniform(1, 2, 1, 3, "cosh", mask="window:2", heads=2).layers[0]),
                         tokens=3)
    _against_reference(der, mixed, "mixed layers (value skip; window:2 with two heads)", seed=11)
    _known_answers(der)
    _blocks(der, full)
    arch = Architecture.uniform(1, 2, 1, 3, "exp", mask="window:2")
    _, vals, _ = _graph_outputs(arch, random_point(arch, 1, "random"), random_bank(arch, 1, 1), 3)
    ref = reference_outputs(arch, "native", vals, {}, 3, PRIME)
    der.show("The window:2 mask on three tokens, recomputed by the reference from its name (query rows):",
             np.array(__import__("symattn.model.reference", fromlist=["_mask"])._mask("window:2", 3)), "m")
    der.show("The reference's $F(\\rho Y)$ at $\\rho^1$ (residues mod $p$), one input:", ref["F"][0][1][0], "F_1")
    der.show_table("Layer kinds checked (graph output and Jacobian against the reference):",
                   ["kind", "native parameters"],
                   [[_describe(kind), Architecture.uniform(1, 2, 1, 3, "exp", **kind).native_size] for kind in KINDS])
    from symattn.theorems import statements

    paper = Architecture.uniform(2, 2, 1, 3, "exp")
    labels = [statements.label(statements.THEOREM_4, Architecture.uniform(2, 2, 1, 3, "exp", **kind))
              for kind in KINDS]
    der.check("no statement of the paper labels a layer kind beyond it (Theorem 4 covers the paper's stack only)",
              (labels, statements.label(statements.THEOREM_4, paper)), ([None] * len(KINDS), statements.THEOREM_4.label))
    return der


if __name__ == "__main__":
    raise SystemExit(main_for(__name__))
