"""The certified tier of a real transformer on the one model's layer kinds (biases, W_O, LayerNorm, MLP).

The numerical tiers (:mod:`symattn.audit.modules`) differentiate PyTorch's own modules. This
module audits the same model as symattn's one :class:`~symattn.model.architecture.Architecture`:
each encoder layer becomes a :class:`~symattn.model.layers.Layer` whose blocks are the file's
weights as exact rationals of the stored binary64 numbers (:func:`block_architecture`,
:func:`block_point`); a final LayerNorm (GPT-2's ``ln_f``, ViT's ``layernorm``) is the final norm
part (:mod:`symattn.model.parts.final_norm`), a causal mask the layers' ``mask="causal"``. At the
model's exact point :func:`certified_tier` runs three checks:

* the graph check: symattn's graph in float64 against PyTorch's modules on two probe inputs
  (two code paths that share nothing); a disagreement exits 1;
* the declared symmetries (each kind proved an exact kernel vector in proof n4) as exact vectors,
  checked against the float64 Jacobian; their rank mod a prime bounds the rank by ``P - s``;
* a certified lower bound on the rank: the Jacobian in
  :class:`~symattn.core.algebras.Float64Balls` at the exact weights and
  :func:`~symattn.core.rank_certificate.certified_rank` on it (Weyl's inequality, and a Schur
  complement for the weakest directions).

What is not exact is said in every result: LayerNorm's ``1/sqrt(var + eps)``, GELU, tanh and SiLU
of rationals are irrational, so this tier is ball arithmetic, not exact series. ReLU runs only at
probe inputs where every pre-activation's ball excludes 0 (the others are named). An MLP wider
than :data:`~symattn.model.layers.MAX_MLP` has no layer kind (numerical tiers only, with the
reason). The method's details are in :func:`certified_tier`'s Notes.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from symattn.audit.budget import cpu_seconds
from symattn.audit.model import ImportedModel, exact_matrix, rational_array
from symattn.core.errors import CheckFailed, SymattnError, Undecided
from symattn.model.parts.final_norm import FinalNorm

__all__ = ["block_architecture", "block_point", "certified_tier", "column_seconds", "DIGITS"]

#: Digits of the python-flint balls of the network's values.
DIGITS = 30
#: Relative agreement required between symattn's graph and PyTorch's modules in float64.
GRAPH_TOL = 1e-9
#: Relative size of ``|J xi|`` (against ``|J| |xi|``) below which a declared symmetry passes the
#: float64 check.
SYMMETRY_TOL = 1e-9
#: The prime of the symmetries' modular rank.
PRIME = 8388593  # the largest prime below 2^23 (symattn.core.algebras.modular.PrimeField)


def block_architecture(model: ImportedModel, causal: bool = False):
    """``(arch, reasons)``: the model as the one :class:`~symattn.model.architecture.Architecture`
    of its layer kinds, or ``None`` and the reasons (one line each) why a part has no exact layer kind.
    ``causal``: every layer masked causally (``mask="causal"``, GPT-2); a final LayerNorm is the
    architecture's final norm part (:mod:`symattn.model.parts.final_norm`).

    Parameters
    ----------
    model : ImportedModel
    causal : bool, optional

    Returns
    -------
    tuple
        ``(Architecture or None, list of str)``.

    >>> from symattn.audit import from_arrays
    >>> block_architecture(from_arrays({"Q1": np.eye(2), "K1": np.eye(2), "V1": np.eye(2)}))
    (None, ['the model has no PyTorch blocks (a stack of bare attention maps: the paper tiers apply)'])
    """
    from symattn.model.architecture import Architecture
    from symattn.model.layers import MAX_MLP, Head, Layer
    from symattn.model.normalizer import Normalizer

    if not model.transformer_layers:
        return None, ["the model has no PyTorch blocks (a stack of bare attention maps: the paper tiers apply)"]
    decoders = [b.name for b in model.transformer_layers if b.decoder]
    if decoders:  # symattn.audit.decoder: the numerical tiers cover these parts
        return None, [f"{', '.join(decoders[:3])}{' ...' if len(decoders) > 3 else ''}: rotary positions, grouped-query "
                      f"attention, SwiGLU and RMSNorm have no layer kind in the model yet"]
    reasons = []
    final = None
    if model.final_norm is not None:
        n = model.final_norm
        if n.kind != "layernorm" or n.gain is None or n.bias is None:
            reasons.append(f"the final norm {n.name}: a {n.title} without gain and shift has no layer kind here")
        else:
            final = FinalNorm(n.kind, Fraction(repr(n.eps)))
    layers = []
    for b in model.transformer_layers:
        a = b.attention
        E, H = a.width, a.heads
        e = E // H
        kind: dict = dict(skip="none", combine="concat", bias=a.in_proj_bias is not None,
                          mask="causal" if causal else "none")
        if (a.in_proj_bias is None) != (a.out_proj_bias is None):
            reasons.append(f"{a.name}: in_proj and out_proj biases must both be present or both absent")
        if b.norm_first is not None:
            mlp = b.mlp
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
                        activation=mlp.activation)
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
    return Architecture(layers=tuple(layers), tokens=model.tokens, final_norm=final), []


def _column(v) -> np.ndarray:
    return rational_array(exact_matrix(np.asarray(v, dtype=np.float64).reshape(-1, 1)))


def _row(v) -> np.ndarray:
    return rational_array(exact_matrix(np.asarray(v, dtype=np.float64).reshape(1, -1)))


def block_point(model: ImportedModel, arch) -> dict:
    """The model's weights as the native blocks of ``arch`` (exact rationals of the binary64 values;
    the score scale ``c = 1/sqrt(e)`` rounded once to binary64, as PyTorch uses it)."""
    point: dict = {}
    for i, (b, layer) in enumerate(zip(model.transformer_layers, arch.layers), 1):
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
            point[parts["attn_norm.gain"].name], point[parts["attn_norm.shift"].name] = _column(n1.gain), _column(n1.bias)
            point[parts["mlp_norm.gain"].name], point[parts["mlp_norm.shift"].name] = _column(n2.gain), _column(n2.bias)
        if layer.mlp:
            m = b.mlp
            point[parts["mlp.in"].name] = rational_array(exact_matrix(m.w1))
            point[parts["mlp.in_bias"].name] = _column(m.b1)
            point[parts["mlp.out"].name] = rational_array(exact_matrix(m.w2))
            point[parts["mlp.out_bias"].name] = _column(m.b2)
    if arch.final_norm is not None:
        n, D = model.final_norm, arch.depth
        point[f"final_norm.gain{D}"], point[f"final_norm.shift{D}"] = _column(n.gain), _column(n.bias)
    return point


#: The cost model of the rank lower bound (seconds on the shared 2-core machine, one BLAS thread), so that
#: the same budget plans the same bound on any machine; the parent process stops the step at its limit
#: whatever the load. One column of the ball Jacobian on one probe input of the shipped example (2 layers,
#: d_model 8, MLP 16, n = 6) in :class:`~symattn.core.algebras.Float64Balls`, scaled by
#: :func:`column_seconds`: 0.21 ms measured there with every column seeded at once (about half of it
#: seeded layer by layer, as the full Jacobian now is), 0.42-0.83 ms on the 2-layer d_model 32 encoder
#: (20 times the forward work) by the machine's load.
COLUMN_SECONDS = 2.2e-4
#: Seconds of the network's values (python-flint balls) on one probe input of the shipped example, scaled
#: by the forward work (twice for a ReLU model: its signs are checked input by input first).
VALUE_SECONDS = 2.5e-3
#: Seconds per unit of ``R c min(R, c)`` of the SVD and the certificate's products (``R`` rows, ``c`` columns).
SVD_SECONDS = 7e-10
#: Seconds per entry of the exact symmetry vectors and their modular rank (about ``P^2 / 8`` entries).
SYMMETRY_SECONDS = 2e-6
#: Seconds of the tier's fixed steps (the graph check, the python-flint check of a few entries, start-up).
OVERHEAD_SECONDS = 2.0
#: Rows of the Jacobian per direction to certify (probe inputs times outputs): the weakest directions of a
#: trained LayerNorm encoder (its gains, whose scaling only ``eps`` breaks) need about this margin.
ROW_MARGIN = 1.7
#: Bytes of the tangents of one forward-mode evaluation at most (the interpreter keeps every node's value
#: until the end): the columns are evaluated in chunks of this size (:func:`_entries`).
CHUNK_BYTES = 384 * 2 ** 20
#: Bytes of the Jacobian's balls, its SVD and the certificate's products at most (``64 R c``).
SVD_BYTES = 512 * 2 ** 20
#: The certified tier's own peak beyond the process's start-up: a chunk, the SVD and slack; the audit
#: counts it in its memory estimate and skips the tier beyond ``--max-memory``.
CERTIFIED_BYTES = CHUNK_BYTES + SVD_BYTES + 256 * 2 ** 20
#: Directions certified through their own enclosures at most (each costs one column on every probe input).
MAX_WEAK = 16


def column_seconds(model: ImportedModel) -> float:
    """Estimated seconds of one ball-Jacobian column on one probe input: :data:`COLUMN_SECONDS` times
    ``0.9 + 0.1 w``, ``w`` the model's forward work ``D n (4 E^2 + 2 E ff + n E)`` relative to the shipped
    example's (small models are dominated by the cost of each operation, large ones by the work; the
    d_model 32 encoder, ``w = 20``, took 0.42 to 0.83 ms by the load).

    >>> from symattn.audit import from_arrays
    >>> round(column_seconds(from_arrays({"Q1": np.eye(8), "K1": np.eye(8), "V1": np.eye(8)}, tokens=6)) * 1e3, 3)
    0.204
    """
    return COLUMN_SECONDS * (0.9 + 0.1 * _work(model))


def _work(model: ImportedModel) -> float:
    """The forward work ``D n (4 E^2 + 2 E ff + n E)`` relative to the shipped example's."""
    def work(D, n, E, ff):
        return D * n * (4 * E * E + 2 * E * ff + n * E)

    ff = max((b.mlp.w1.shape[0] for b in model.transformer_layers if b.mlp is not None), default=0)
    return work(model.depth, model.tokens, max(model.widths), ff) / work(2, 6, 8, 16)


def _graph_bank(bank: np.ndarray) -> np.ndarray:
    """Probe inputs ``(B, n, d)`` (tokens as rows, float64) as the graph's exact bank ``(B, d, n)``."""
    out = np.empty((bank.shape[0], bank.shape[2], bank.shape[1]), dtype=object)
    for j in range(bank.shape[0]):
        out[j] = rational_array(exact_matrix(bank[j].T))
    return out


def _relu_rescalings(arch, point: dict) -> list:
    """The ReLU rescalings of the hidden units (``relu(l z) = l relu(z)`` for ``l > 0``): unit ``j``'s row
    of ``mlp.in`` and entry of ``mlp.in_bias`` times ``l``, its column of ``mlp.out`` times ``1/l``; at
    ``l = 1`` the exact direction ``(mlp.in[j], mlp.in_bias[j], -mlp.out[:, j])``. Where every pre-activation of the probe inputs is nonzero the
    network is differentiable and invariant along the group, so the direction is an exact kernel vector there.
    """
    from symattn.model.parameters import flat_vector
    from symattn.model.symmetry_kinds import Symmetry

    out = []
    for i, layer in enumerate(arch.layers, 1):
        act = layer.activation  # positively homogeneous of degree 1, not a polynomial (those: MLP scaling)
        if not layer.mlp or act.homogeneous_degree() != 1 or act.is_polynomial:
            continue
        Fa, fa, Fb = (layer.layer_blocks(i)[p].name for p in ("mlp.in", "mlp.in_bias", "mlp.out"))
        for j in range(layer.mlp):
            move = {n: np.zeros(point[n].shape, dtype=object) for n in (Fa, fa, Fb)}
            move[Fa][j], move[fa][j], move[Fb][:, j] = point[Fa][j], point[fa][j], -point[Fb][:, j]
            out.append(Symmetry("ReLU rescaling", i, None, flat_vector(arch, move)))
    return out


def _column_order(arch) -> list[str]:
    """The native blocks in the order the rank bound takes its columns when it cannot take all: the MLP
    weights, value and output maps first (few declared symmetries per column), biases last."""
    order = {"F": 0, "V": 1, "O": 2, "Q": 3, "K": 4, "N": 5}
    return [b.name for b in sorted(arch.blocks, key=lambda b: (b.is_bias or b.part in ("mlp.in_bias", "mlp.out_bias"),
                                                                 order[b.role], b.layer, b.head or 0))]


def _plan(model: ImportedModel, arch, seconds: float, inputs: int, upper: int | None) -> tuple[list[str], int, int]:
    """``(blocks, columns, inputs)`` of the rank bound within ``seconds`` by the cost model: all columns when
    they fit, else the first ``columns`` of :func:`_column_order`'s blocks; ``ROW_MARGIN`` rows per direction."""
    sizes = dict(arch.native_shapes())
    rows = arch.widths[-1] * arch.tokens
    per = column_seconds(model)
    relu = any(layer.mlp and not layer.activation.is_analytic for layer in arch.layers)
    value = VALUE_SECONDS * _work(model) * (2 if relu else 1)

    def need(c: int) -> tuple[int, float]:
        k = c if upper is None or c < arch.native_size else min(c, upper)
        b = max(1, min(inputs, -(-int(ROW_MARGIN * k) // rows)))
        R = b * rows
        if 64 * R * c > SVD_BYTES or 16 * _entries(arch) * b > CHUNK_BYTES:
            return b, math.inf
        return b, (per * (c + MAX_WEAK) + value) * b + SVD_SECONDS * R * c * min(R, c)

    P = arch.native_size
    if need(P)[1] <= seconds:
        return [n for n, _ in arch.native_shapes()], P, need(P)[0]
    lo, hi = 0, P  # the largest c that fits (the cost grows with c)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if need(mid)[1] <= seconds else (lo, mid - 1)
    blocks, total = [], 0
    for name in _column_order(arch):
        if total >= lo:
            break
        blocks.append(name)
        total += int(np.prod(sizes[name]))
    return blocks, lo, need(lo)[0]


def _selection(arch, names: list[str], columns: int) -> np.ndarray:
    """``S`` (``columns x n``): the first ``columns`` columns of the blocks ``names`` taken in that order,
    as rows of the identity on the columns of ``names`` in native order (the columns of
    :func:`~symattn.analyses.numerics.observation_jacobian` with ``seeds=names``), sorted natively.

    >>> from symattn.model.architecture import Architecture
    >>> arch = Architecture.uniform(1, 2, 1, 2, "exp")       # Q1 (2 x 1), K1 (2 x 1), V1 (2 x 2)
    >>> _selection(arch, ["V1", "Q1"], 5).argmax(axis=1).tolist()
    [0, 2, 3, 4, 5]
    """
    sizes = dict(arch.native_shapes())
    native = [n for n in sizes if n in names]
    start = dict(zip(native, np.cumsum([0] + [int(np.prod(sizes[n])) for n in native])))
    chosen: list[int] = []
    for n in names:
        size = int(np.prod(sizes[n]))
        chosen += range(start[n], start[n] + min(size, columns - len(chosen)))
    chosen.sort()
    width = sum(int(np.prod(sizes[n])) for n in native)
    return np.eye(width)[chosen]


def _entries(arch) -> int:
    """An upper estimate of the entries of all the nodes of the network graph on one probe input (the
    interpreter keeps them all): ``D n (20 E + 6 ff + 10 H n)`` (3200 measured on the shipped example,
    4512 estimated; about 12 500 on the d_model 32 encoder, 21 504 estimated).

    >>> from symattn.model.architecture import Architecture
    >>> _entries(Architecture.uniform(2, 8, 4, 6, "exp", heads=2))   # no MLP: 2 6 (160 + 120)
    3360
    """
    E = max(arch.widths)
    ff = max(layer.mlp or 0 for layer in arch.layers)
    H = max(len(layer.heads) for layer in arch.layers)
    return arch.depth * arch.tokens * (20 * E + 6 * ff + 10 * H * arch.tokens)


def _jacobian_by_layer(arch, point: dict, probe: np.ndarray, algebra, names: list[str], S: np.ndarray) -> np.ndarray:
    """The Jacobian on the columns ``S`` of the blocks ``names``, forward mode layer by layer (a tangent
    seeded in layer ``i`` is zero below it: the layers above ``i`` carry only its columns), in chunks of
    columns whose tangents fit :data:`CHUNK_BYTES`, concatenated in native order. Each layer's blocks among
    ``names`` are seeded together (a prefix of :func:`_column_order` puts a layer's weights before its
    gains, shifts and biases, whose tangents alone would not yet hold the tokens)."""
    from symattn.analyses.numerics import observation_jacobian

    sizes = dict(arch.native_shapes())
    native = [n for n in sizes if n in names]
    chunk = max(1, CHUNK_BYTES // (16 * _entries(arch) * len(probe)))
    parts, offset = [], 0
    for layer in sorted({arch.block(n).layer for n in native}):
        group = [n for n in native if arch.block(n).layer == layer]
        width = sum(int(np.prod(sizes[n])) for n in group)
        rows = S[:, offset:offset + width]
        offset += width
        sel = rows[rows.any(axis=1)]
        for j in range(0, sel.shape[0], chunk):
            part = sel[j:j + chunk]
            parts.append(observation_jacobian(arch, point, probe, algebra, seeds=group,
                                              directions=None if part.shape[0] == width else part))
    return np.concatenate(parts, axis=-1)


def certified_tier(model: ImportedModel, arch, bank: np.ndarray, seconds: float, seed: int = 0,
                   causal: bool = False) -> dict:
    """The graph check, the declared symmetries' upper bound and a certified rank lower bound.

    Parameters
    ----------
    model : ImportedModel
        The file's model.
    arch : Architecture
        :func:`block_architecture` of ``model`` (with ``causal=True`` for a causal model).
    bank : numpy.ndarray
        Probe inputs ``(B, n, d)``, tokens as rows; the tier takes as many as its plan needs.
    seconds : float
        The tier's CPU seconds (its plan keeps to them).
    seed : int
        Seed of the plan's random choices.
    causal : bool
        Run PyTorch's modules causally masked in the graph check.

    Returns
    -------
    dict
        JSON-ready: architecture, parameters, the rank bounds and notes.

    Raises
    ------
    CheckFailed
        symattn's graph and PyTorch's modules disagree, a declared symmetry is not a kernel vector,
        or the binary64 and python-flint enclosures of the Jacobian are disjoint.

    Notes
    -----
    The declared symmetries are :func:`symattn.model.symmetries.declared_symmetries` (factor and
    value gauges per head, the softmax key bias, the bias transfer, the LayerNorm shifts, with a
    ReLU MLP the rescaling of each hidden unit, :func:`_relu_rescalings`). Their exact vectors cost
    about ``P^2 / 8`` entries and are computed when that fits a quarter of the tier's seconds.
    The lower bound is the Jacobian of the bank observation with the network's values in
    python-flint balls at :data:`DIGITS` digits and the tangents of all planned columns in binary64
    balls (every rounding bounded), on as many probe inputs and columns as the cost model fits
    (:func:`_plan`: all columns when they fit, else the MLP and value maps first); the rank
    certificate is Weyl's inequality on ``X^T J Y`` (``X``, ``Y`` float64 singular vectors of the
    midpoints) and, for the weakest directions (a trained LayerNorm's gains, whose scaling only
    ``eps`` breaks), their own enclosures ``J y`` and a Schur complement. A few entries are checked
    against python-flint balls (the two enclosures must meet). A LayerNorm's constant is a rational
    square only on :func:`~symattn.testing.banks.square_bank`, so no exact series tier runs on a real
    model.
    """
    import torch

    from symattn.analyses.numerics import observation_jacobian
    from symattn.audit.modules import TorchStack
    from symattn.core.algebras import BallAlgebra, Float64
    from symattn.core.algebras.balls import Float64Balls, ReluUndecided
    from symattn.core.algebras.modular import PrimeField
    from symattn.core.linalg import Matrix
    from symattn.core.rank_certificate import certified_rank
    from symattn.model.network import evaluate, native_network
    from symattn.model.symmetries import declared_symmetries

    start = cpu_seconds()
    P = arch.native_size
    point = block_point(model, arch)
    X = _graph_bank(bank)
    out: dict = {"architecture": arch.describe(), "parameters": P, "digits": DIGITS, "theorem": None, "notes": []}
    # 1. the graph check: symattn's layer kinds against PyTorch's modules, float64
    stack = TorchStack(model, "float64", causal=causal)
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
    relu = any(layer.mlp and not layer.activation.is_analytic for layer in arch.layers)
    # 2. the declared symmetries: exact vectors, when their cost fits
    sym_cost = SYMMETRY_SECONDS * P * P / 8
    upper = None
    if sym_cost <= 0.25 * seconds:
        syms = declared_symmetries(arch, point) + _relu_rescalings(arch, point)
        kinds: dict = {}
        for s_ in syms:
            kinds[s_.kind] = kinds.get(s_.kind, 0) + 1
        span = Matrix(np.array([s_.vector for s_ in syms], dtype=object), PrimeField(PRIME)).rank() if syms else 0
        upper = P - span
        out["symmetries"] = {"count": len(syms), "span": span, "kinds": kinds, "upper_bound": upper,
                             "tier": f"exact vectors at the model's point; span rank mod {PRIME} (at most its rank "
                                     f"over Q, so P - span is an upper bound); each kind proved a kernel vector in "
                                     f"proof n4" + (" (the ReLU rescalings: ReLU is positively homogeneous and every "
                                                    "pre-activation used is certified nonzero)" if relu else "")
                                     + ", checked here in float64 on one input"}
    else:
        syms = []
        out["symmetries"] = {"count": None, "span": None, "kinds": {}, "upper_bound": None,
                             "tier": f"not computed: the exact symmetry vectors of {P} parameters (about "
                                     f"{sym_cost:.0f} s) are beyond a quarter of the tier's {seconds:.0f} s "
                                     f"(--budget SECONDS); the numerical tier counts them"}
    # 3. the rank lower bound: the Jacobian in binary64 balls on the planned columns and inputs, where
    # every ReLU pre-activation is certified nonzero (all inputs without ReLU)
    A = Float64Balls(DIGITS)
    left = 0.85 * seconds - OVERHEAD_SECONDS - (sym_cost + len(syms) * column_seconds(model) if syms else 0.0)
    names, columns, inputs = _plan(model, arch, left, len(X), upper)
    if not columns:
        raise Undecided(f"the certified rank bound plans no column within {seconds:.0f} s (--budget SECONDS)")
    keep, excluded = list(range(len(X))), []
    if relu:
        keep = []
        with A.working():
            values = {k: A.const(np.asarray(v, dtype=object)) for k, v in point.items()}
            for j in range(len(X)):
                if len(keep) == inputs:
                    break
                try:
                    evaluate(native_network(arch), A, {**values, "X": A.const(np.asarray(X[j:j + 1], dtype=object))})
                    keep.append(j)
                except ReluUndecided:
                    excluded.append(j)
        if not keep:
            raise Undecided("no probe input has every ReLU pre-activation certified nonzero: the ReLU network "
                            "need not be differentiable there, no certified rank")
        inputs = len(keep)
    probe = X[keep[:inputs]]
    S = _selection(arch, names, columns)  # chosen columns (native order) -> the columns of `names`
    J = _jacobian_by_layer(arch, point, probe, A, names, S)

    def along(D: np.ndarray) -> np.ndarray:  # J D^T, each direction's tangent on its own (binary64 balls)
        return observation_jacobian(arch, point, probe, A, seeds=names, directions=D @ S)

    if syms:  # every declared symmetry a kernel vector (numerical check, float64, first probe input)
        rows = arch.widths[-1] * arch.tokens
        flat = np.array([np.vectorize(float, otypes=[float])(s_.vector) for s_ in syms])
        full = [n for n, _ in arch.native_shapes()]
        Jxi = observation_jacobian(arch, point, probe[:1], A, seeds=full, directions=flat)[0]
        scale = float(np.abs(J[0][:rows]).max()) or 1.0
        size = np.abs(flat).sum(axis=1)  # a zero vector (a gauge of zero weights) is trivially in the kernel
        worst = float(np.max(np.abs(Jxi).max(axis=0) / (scale * np.where(size > 0, size, 1.0)), initial=0.0))
        if not worst <= SYMMETRY_TOL:
            raise CheckFailed(f"a declared symmetry of the model's layer kinds is not a kernel vector of its "
                              f"Jacobian (|J xi| = {worst:.3g} |J| |xi|): a bug; please report it")
        out["symmetries"]["worst_residual"] = worst
    # an independent check of the enclosure: a few entries in python-flint balls must meet the binary64 balls
    check = observation_jacobian(arch, point, probe[:1], BallAlgebra(DIGITS), seeds=names, directions=S[:4])
    mid, rad = J[:, :check.shape[0], :check.shape[1]]
    for (r, c), ball in np.ndenumerate(check):
        if abs(float(ball.mid()) - mid[r, c]) > rad[r, c] + float(ball.rad()) + 4 * np.spacing(abs(mid[r, c])):
            raise CheckFailed(f"the Jacobian's binary64 balls and its python-flint balls are disjoint at entry "
                              f"({r}, {c}): one enclosure is wrong; please report it")
    at_most = upper if columns == P else None
    cert = certified_rank(J, at_most=at_most, directions=along, max_weak=MAX_WEAK)
    parts = (f"all {P} columns" if columns == P else
             f"{columns} of {P} columns (blocks {', '.join(names)})")
    out["rank_lower_bound"] = {
        "value": cert.rank, "inputs": inputs, "columns": columns, "blocks": names, "numerical_rank": cert.numerical,
        "strong": cert.strong, "weak": cert.weak, "relative_error": cert.relative_error,
        "excluded_inputs": len(excluded), "method": cert.method,
        "tier": (f"certified: rank of the Jacobian in binary64 balls (every rounding bounded; values in python-flint "
                 f"balls at {DIGITS} digits) at the model's exact binary64 weights, {parts}, on {inputs} probe "
                 f"input(s) (exact rationals): {cert.method}" if cert.rank else
                 "not certified: no direction's bound is positive"),
    }
    if excluded:
        out["notes"].append(f"{len(excluded)} probe input(s) left out: a ReLU pre-activation's ball contains 0 there "
                            f"(the network need not be differentiable; its sign is not certified)")
    if relu:
        out["notes"].append("ReLU: every pre-activation of the probe inputs used is certified nonzero (its ball "
                            "excludes 0), so the network is differentiable there and its Jacobian is that of the "
                            "units' linear pieces, exactly; no exact series tier covers ReLU")
    out["rank_bounds"] = [cert.rank, upper]
    out["determined"] = upper is not None and cert.rank == upper
    out["seconds"] = round(cpu_seconds() - start, 2)  # CPU seconds (the budget's measure)
    out["notes"].append("LayerNorm constants 1/sqrt(var + eps) and the activation's values are irrational at the "
                        "model's inputs (off the square bank of one width-2 layer): ball arithmetic "
                        "(certified enclosures), not exact series")
    return out
