"""The certified tier of a real transformer on the one model's layer kinds (biases, W_O, LayerNorm, MLP).

The numerical tiers (:mod:`symattn.audit.modules`) differentiate PyTorch's own modules. This
module audits the same model as symattn's one :class:`~symattn.model.architecture.Architecture`:
each ``nn.TransformerEncoderLayer`` becomes a :class:`~symattn.model.layers.Layer` with
``skip="value"``, ``combine="concat"``, ``bias=True``, ``norm="post"`` or ``"pre"``, the
LayerNorm's ``eps`` and the MLP's width and activation; each head's blocks are the file's
weights (``Q_h = c W_q[h]^T``, ``K_h = W_k[h]^T``, ``V_h = W_v[h]``, ``O_h = W_o[:, h]``, the
biases likewise, ``c`` the binary64 rounding of ``1/sqrt(e)``), as exact rationals of the stored
binary64 numbers (:func:`block_architecture`, :func:`block_point`). Then, at the model's exact
point (:func:`certified_tier`):

* the graph check: symattn's graph in float64 against PyTorch's modules on two probe inputs
  (two code paths that share nothing); a disagreement is a failed check (exit 1), never a
  silent fallback;
* the declared symmetries of the layer kinds (:func:`symattn.model.symmetries.declared_symmetries`:
  the factor and value gauges per head, the softmax key bias, the bias transfer, the LayerNorm
  shifts, ...; each kind proved an exact kernel vector in proof n4) as exact vectors at the
  model's point, checked here against the float64 Jacobian of one probe input; the rank of their
  span modulo a prime (at most its rank over Q) bounds the rank of the Jacobian from above by
  ``P - s``;
* a certified lower bound on that rank: the Jacobian of the bank observation in python-flint
  ball arithmetic at 30 digits on as many probe inputs (exact binary64 rationals) and parameter
  blocks as the time share allows, and a ``k x k`` minor whose ball determinant excludes 0
  (rows and columns chosen by pivoting on the balls' midpoints): ``rank >= k``, certified.

What is *not* exact, and said in every result: a LayerNorm takes ``1/sqrt(var + eps)`` of a
constant that is a rational square only on the special bank of
:func:`~symattn.analyses.numerical_spectrum.square_bank` (one layer of width 2); GELU, tanh and
SiLU of a nonzero rational are transcendental. So the exact series tiers do not run on a real
model, and the certified tier is ball arithmetic (rigorous enclosures), not exact series. ReLU is
not analytic: a model with a ReLU MLP gets no exact or certified tier (numerical only, said in
its MLP's row); a final LayerNorm (``nn.TransformerEncoder(norm=...)``) has no layer kind, and
neither has an MLP wider than :data:`~symattn.model.layers.MAX_MLP`: such models get the
numerical tiers only, with the reason.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from symattn.audit.model import ImportedModel, exact_matrix, rational_array
from symattn.core.errors import CheckFailed, SymattnError

__all__ = ["block_architecture", "block_point", "certified_tier", "column_seconds", "CERTIFIED_LIMIT", "DIGITS"]

#: PyTorch parameters up to which the certified tier is tried (budget permitting).
CERTIFIED_LIMIT = 5000
#: Digits of the ball arithmetic.
DIGITS = 30
#: Largest minor whose ball determinant is computed (its cost grows like ``k^3``).
MAX_MINOR = 400
#: Relative agreement required between symattn's graph and PyTorch's modules in float64.
GRAPH_TOL = 1e-9
#: Relative size of ``|J xi|`` (against ``|J| |xi|``) below which a declared symmetry passes the
#: float64 check.
SYMMETRY_TOL = 1e-9
#: The prime of the symmetries' modular rank.
PRIME = 8388593  # the largest prime below 2^23 (symattn.core.algebras.modular.PrimeField)


def block_architecture(model: ImportedModel):
    """``(arch, reasons)``: the model as the one :class:`~symattn.model.architecture.Architecture`
    of its layer kinds, or ``None`` and the reasons (one line each) why a part has no exact layer kind.

    >>> from symattn.audit import from_arrays
    >>> block_architecture(from_arrays({"Q1": np.eye(2), "K1": np.eye(2), "V1": np.eye(2)}))
    (None, ['the model has no PyTorch blocks (a stack of bare attention maps: the paper tiers apply)'])
    """
    from symattn.model.architecture import Architecture
    from symattn.model.layers import MAX_MLP, Head, Layer
    from symattn.model.normalizer import Normalizer

    if not model.blocks:
        return None, ["the model has no PyTorch blocks (a stack of bare attention maps: the paper tiers apply)"]
    reasons = []
    if model.final_norm is not None:
        reasons.append(f"the final LayerNorm {model.final_norm.name} has no layer kind in the model")
    layers = []
    for b in model.blocks:
        a = b.attention
        E, H = a.width, a.heads
        e = E // H
        kind: dict = dict(skip="none", combine="concat", bias=a.in_proj_bias is not None)
        if (a.in_proj_bias is None) != (a.out_proj_bias is None):
            reasons.append(f"{a.name}: in_proj and out_proj biases must both be present or both absent")
        if b.norm_first is not None:
            mlp = b.mlp
            if mlp.activation == "relu":
                reasons.append(f"{mlp.name}: ReLU is not analytic (no exact or certified series); "
                               f"numerical tier only")
            if mlp.w1.shape[0] > MAX_MLP:
                reasons.append(f"{mlp.name}: MLP width {mlp.w1.shape[0]} beyond the layer kinds' limit {MAX_MLP}")
            if any(n.gain is None or n.bias is None for n in b.norms):
                reasons.append(f"{b.name}: a LayerNorm without gain or bias (elementwise_affine=False)")
            if mlp.b1 is None or mlp.b2 is None:
                reasons.append(f"{mlp.name}: an MLP without biases")
            eps = {n.eps for n in b.norms}
            if len(eps) != 1:
                reasons.append(f"{b.name}: its two LayerNorms have different eps")
            kind.update(skip="value", norm="pre" if b.norm_first else "post",
                        eps=Fraction(repr(b.norms[0].eps)), mlp=int(mlp.w1.shape[0]),
                        activation="tanh" if mlp.activation == "relu" else mlp.activation)
            if not kind["bias"]:
                reasons.append(f"{a.name}: an encoder layer without attention biases")
        if reasons:  # a part without a layer kind: no layer is built (its limits would refuse it)
            continue
        try:
            layers.append(Layer(E, E, Normalizer("exp"), tuple(Head(e, e) for _ in range(H)), **kind))
        except SymattnError as exc:  # a limit of the layer kinds (heads, widths)
            reasons.append(f"{b.name}: {exc}")
    if reasons:
        return None, reasons
    return Architecture(layers=tuple(layers), tokens=model.tokens), []


def _column(v) -> np.ndarray:
    return rational_array(exact_matrix(np.asarray(v, dtype=np.float64).reshape(-1, 1)))


def _row(v) -> np.ndarray:
    return rational_array(exact_matrix(np.asarray(v, dtype=np.float64).reshape(1, -1)))


def block_point(model: ImportedModel, arch) -> dict:
    """The model's weights as the native blocks of ``arch`` (exact rationals of the binary64 values;
    the score scale ``c = 1/sqrt(e)`` rounded once to binary64, as PyTorch uses it)."""
    point: dict = {}
    for i, (b, layer) in enumerate(zip(model.blocks, arch.layers), 1):
        a = b.attention
        E, H = a.width, a.heads
        e = E // H
        c = 1.0 / math.sqrt(e)
        W, bias, Wo = a.in_proj_weight, a.in_proj_bias, a.out_proj_weight
        for h, blocks in enumerate(layer.head_blocks(i)):
            r = slice(h * e, (h + 1) * e)
            values = {"Q": (W[:E][r] * c).T, "K": W[E:2 * E][r].T, "V": W[2 * E:][r], "O": Wo[:, r]}
            for role, block in blocks.items():
                if role in values:
                    point[block.name] = rational_array(exact_matrix(values[role]))
            if layer.bias:
                point[blocks["bQ"].name] = _row(bias[:E][r] * c)
                point[blocks["bK"].name] = _row(bias[E:2 * E][r])
                point[blocks["bV"].name] = _column(bias[2 * E:][r])
        parts = layer.layer_blocks(i)
        if "bO" in parts:
            point[parts["bO"].name] = _column(a.out_proj_bias)
        if layer.norm != "none":
            n1, n2 = b.norms
            point[parts["gA"].name], point[parts["sA"].name] = _column(n1.gain), _column(n1.bias)
            point[parts["gF"].name], point[parts["sF"].name] = _column(n2.gain), _column(n2.bias)
        if layer.mlp:
            m = b.mlp
            point[parts["Fa"].name] = rational_array(exact_matrix(m.w1))
            point[parts["fa"].name] = _column(m.b1)
            point[parts["Fb"].name] = rational_array(exact_matrix(m.w2))
            point[parts["fb"].name] = _column(m.b2)
    return point


#: Seconds of one column of the ball Jacobian on one probe input of the shipped example (2 layers, d_model 8,
#: MLP 16, n = 6), measured on the shared 2-core machine; :func:`column_seconds` scales it by the forward cost.
COLUMN_SECONDS = 0.0156


def column_seconds(model: ImportedModel) -> float:
    """Estimated seconds of one ball-Jacobian column on one probe input: :data:`COLUMN_SECONDS` times the
    model's forward cost ``D n (4 E^2 + 2 E ff + n E)`` relative to the shipped example's.

    >>> from symattn.audit import from_arrays
    >>> round(column_seconds(from_arrays({"Q1": np.eye(8), "K1": np.eye(8), "V1": np.eye(8)}, tokens=6)), 4)
    0.0042
    """
    def work(D, n, E, ff):
        return D * n * (4 * E * E + 2 * E * ff + n * E)

    ff = max((b.mlp.w1.shape[0] for b in model.blocks if b.mlp is not None), default=0)
    return COLUMN_SECONDS * work(model.depth, model.tokens, max(model.widths), ff) / work(2, 6, 8, 16)


def _graph_bank(bank: np.ndarray) -> np.ndarray:
    """Probe inputs ``(B, n, d)`` (tokens as rows, float64) as the graph's exact bank ``(B, d, n)``."""
    out = np.empty((bank.shape[0], bank.shape[2], bank.shape[1]), dtype=object)
    for j in range(bank.shape[0]):
        out[j] = rational_array(exact_matrix(bank[j].T))
    return out


def certified_tier(model: ImportedModel, arch, bank: np.ndarray, seconds: float, seed: int = 0) -> dict:
    """The graph check, the declared symmetries' upper bound and a certified rank lower bound
    (see the module docstring), within about ``seconds``. ``bank``: probe inputs ``(B, n, d)``
    (tokens as rows). Returns a JSON-ready dict; raises :class:`~symattn.core.errors.CheckFailed`
    when symattn's graph and PyTorch's modules disagree or a declared symmetry is not a kernel
    vector."""
    import torch

    from symattn.analyses.numerics import observation_jacobian
    from symattn.audit.modules import TorchStack
    from symattn.core.algebras import BallAlgebra, Float64
    from symattn.core.linalg import Matrix, ball_minor_rank
    from symattn.core.algebras.modular import PrimeField
    from symattn.model.network import evaluate, native_network
    from symattn.model.symmetries import declared_symmetries

    start = time.perf_counter()
    P = arch.native_size
    point = block_point(model, arch)
    X = _graph_bank(bank)
    out: dict = {"architecture": arch.describe(), "parameters": P, "digits": DIGITS,
                 "theorem": None, "notes": []}
    # 1. the graph check: symattn's layer kinds against PyTorch's modules, float64
    stack = TorchStack(model, "float64")
    with torch.no_grad():
        want = stack.run(stack.theta, torch.tensor(bank[:2], dtype=torch.float64)).numpy()
    floats = {k: np.vectorize(float, otypes=[float])(v) for k, v in point.items()}
    floats["X"] = np.vectorize(float, otypes=[float])(X[:2])
    got = np.asarray(evaluate(native_network(arch), Float64(), floats)["F"], dtype=float).transpose(0, 2, 1)
    diff = float(np.abs(got - want).max() / max(np.abs(want).max(), 1.0))
    if not diff <= GRAPH_TOL:
        raise CheckFailed(f"the model's layer kinds and PyTorch's own modules disagree on the probe inputs "
                          f"(relative difference {diff:.3g} > {GRAPH_TOL:g}): a bug in the audit's mapping "
                          f"or in the graph; please report it")
    out["graph_check"] = {"relative_difference": diff, "inputs": 2,
                          "tier": "numerical float64 (symattn's graph vs PyTorch's modules)"}
    # 2. the declared symmetries: exact vectors, checked on the float64 Jacobian of one input
    syms = declared_symmetries(arch, point)
    kinds: dict = {}
    for s in syms:
        kinds[s.kind] = kinds.get(s.kind, 0) + 1
    J1 = observation_jacobian(arch, point, X[:1], Float64()).astype(float)
    scale = float(np.abs(J1).max()) or 1.0
    worst = 0.0
    for s in syms:
        xi = np.vectorize(float, otypes=[float])(s.vector)
        worst = max(worst, float(np.abs(J1 @ xi).max()) / (scale * float(np.abs(xi).sum())))
    if not worst <= SYMMETRY_TOL:
        raise CheckFailed(f"a declared symmetry of the model's layer kinds is not a kernel vector of its "
                          f"float64 Jacobian (|J xi| = {worst:.3g} |J| |xi|): a bug; please report it")
    span = Matrix(np.array([s.vector for s in syms], dtype=object), PrimeField(PRIME)).rank() if syms else 0
    out["symmetries"] = {"count": len(syms), "span": span, "kinds": kinds, "worst_residual": worst,
                         "upper_bound": P - span,
                         "tier": f"exact vectors at the model's point; span rank mod {PRIME} (at most its rank "
                                 f"over Q, so P - span is an upper bound); each kind proved a kernel vector in "
                                 f"proof n4, checked here on the float64 Jacobian of one input"}
    # 3. the certified lower bound: a nonzero minor of the ball Jacobian
    order = {"Q": 0, "V": 1, "F": 2, "K": 3, "O": 4, "N": 5}
    blocks = sorted(arch.blocks, key=lambda b: (b.part == "bias", order[b.role], b.part != "Fa", b.layer,
                                                b.head or 0))
    sizes = dict(arch.native_shapes())
    rows_per_input = arch.widths[-1] * arch.tokens
    # columns c and inputs i with c about the rows, c * i column-inputs within 60 % of the seconds (a cost
    # model, not a measurement: the same budget gives the same bound on any machine; the parent process
    # stops the step at its limit whatever the machine's load)
    per_column = column_seconds(model)
    budget_columns = max(int(seconds * 0.6 / per_column), 1)
    inputs = max(1, min(len(X), int(math.sqrt(budget_columns / rows_per_input))))
    seeds, columns = [], 0
    for b in blocks:
        size = math.prod(sizes[b.name])
        if columns and (columns + size) * inputs > budget_columns:
            break
        if columns >= min(inputs * rows_per_input, MAX_MINOR):
            break
        seeds.append(b.name)
        columns += size
    J = observation_jacobian(arch, point, X[:inputs], BallAlgebra(DIGITS), seeds=seeds)
    # at most four minors, each a quarter smaller (a ball too wide, or a numerically singular pivot);
    # the parent stops the step at its limit
    certified, selected = ball_minor_rank(J, DIGITS, max_size=MAX_MINOR, attempts=4)
    out["rank_lower_bound"] = {
        "value": certified, "minor": certified, "inputs": inputs, "columns": columns, "blocks": seeds,
        "numerical_rank_of_selection": selected,
        "tier": (f"certified: a {certified} x {certified} minor of the ball-arithmetic Jacobian ({DIGITS} digits) "
                 f"at the model's exact binary64 weights on {inputs} probe input(s) (exact rationals), its ball "
                 f"determinant excludes 0" if certified else "not certified: no minor's ball excludes 0"),
    }
    out["rank_bounds"] = [certified, P - span]
    out["determined"] = certified == P - span
    out["seconds"] = round(time.perf_counter() - start, 2)
    out["notes"].append("LayerNorm constants 1/sqrt(var + eps) and the activation's values are irrational at the "
                        "model's inputs (off the square bank of one width-2 layer): ball arithmetic "
                        "(certified enclosures), not exact series")
    return out
