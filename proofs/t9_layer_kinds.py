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

Notes
-----
Comparisons of the reference are exact modulo the prime ``8388593`` (a wrong
map agrees mod p on a random direction with probability at most about
:math:`1/p`); the graph's own outputs are compared over :math:`\mathbb{Q}`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from symattn.core.algebras import exact_series
from symattn.core.errors import CheckFailed
from symattn.model.architecture import Architecture
from symattn.model.interpreter import jacobian
from symattn.model.network import evaluate, native_network
from symattn.model.parameters import random_bank, random_point
from symattn.model.reference import PRIME, reference_check, reference_outputs
from symattn.render.derivation import Derivation
from symattn.theorems.registry import main_for

STATEMENT = "Beyond the paper: every layer kind against its naive reference evaluation"
KIND = "exact"

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
    return ", ".join(f"{k.replace('_', ' ')} {'pattern' if isinstance(v, tuple) else v}" for k, v in kind.items())


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
