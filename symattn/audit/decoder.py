"""Decoder layers (Llama, Mistral, Qwen2) in the audit: rebuilt, referenced, and their declared symmetries.

A decoder layer (:attr:`~symattn.audit.model.TransformerLayer.decoder`) is pre-norm::

    x + A(N_1 x),  then  y + SwiGLU(N_2 y)

with ``N_1, N_2`` RMSNorms (:func:`symattn.model.parts.norm_part`), ``A`` grouped-query attention
(:mod:`symattn.model.parts.gqa`) whose queries and keys are rotated by position
(:mod:`symattn.model.parts.rotary`), causal, and the SwiGLU MLP (:mod:`symattn.model.parts.swiglu`).
This module assembles those parts:

* :class:`DecoderLayer`: the layer as a ``torch.nn.Module`` (differentiated with ``torch.func``;
  parameters ``norm1.weight``, ``q.weight``, ``q.bias``, ..., ``gate.weight``, ``down.weight``);
* :func:`naive_decoder_layer`: the same layer by the parts' naive reference formulas in NumPy (the
  forward check's reference where ``transformers`` is not installed);
* :func:`decoder_families`: the declared continuous symmetries in the layer's parameters, each a
  family of tangent directions that the numerical tier checks as kernel directions of the
  Jacobian (``||J v|| <= 1e-7 sigma_1 ||v||``, a check that can fail): per key/value head the
  rotary query/key gauge (the matrices commuting with the rotations, ``e`` each) and the
  value/output gauge shared by the group's query heads (``e^2`` each); each RMSNorm's gain folded
  into the linear maps that read it (``d`` each); the SwiGLU up/down scaling of each hidden unit;
* :func:`discrete_checks`: the discrete symmetries (SwiGLU hidden-unit permutations, query heads
  permuted inside a key/value group, key/value groups permuted with their query heads) applied to
  the file's weights and the model's outputs compared (numerical, with the digits they agree to),
  and the rotary gauge's commutation with the rotations checked in integers (exact).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from symattn.audit.model import TransformerLayer
from symattn.model.parts import norm_part
from symattn.model.parts.gqa import GroupedQueryAttention
from symattn.model.parts.swiglu import SwiGLU

__all__ = ["DecoderLayer", "decoder_values", "naive_decoder_layer", "decoder_families", "decoder_modules",
           "discrete_checks", "split_qkv"]


def split_qkv(block: TransformerLayer) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple]:
    """``W_q, W_k, W_v`` of a decoder block's ``in_proj_weight`` (``[W_q; W_k; W_v]``, grouped-query shapes)
    and the row slices of each."""
    a = block.attention
    E, kvd = a.heads * a.head_dim, a.kv * a.head_dim
    rows = (slice(0, E), slice(E, E + kvd), slice(E + kvd, E + 2 * kvd))
    W = a.in_proj_weight
    return W[rows[0]], W[rows[1]], W[rows[2]], rows


def decoder_values(block: TransformerLayer) -> dict[str, np.ndarray]:
    """The layer's stored arrays under :class:`DecoderLayer`'s parameter names (absent biases left out)."""
    a, m = block.attention, block.mlp
    wq, wk, wv, rows = split_qkv(block)
    out = {"q.weight": wq, "k.weight": wk, "v.weight": wv, "o.weight": a.out_proj_weight,
           "norm1.weight": block.norms[0].gain, "norm2.weight": block.norms[1].gain,
           "gate.weight": m.gate, "up.weight": m.w1, "down.weight": m.w2}
    if a.in_proj_bias is not None:
        out.update({f"{r}.bias": a.in_proj_bias[s] for r, s in zip("qkv", rows)})
    if a.out_proj_bias is not None:
        out["o.bias"] = a.out_proj_bias
    for j, n in enumerate(block.norms, 1):
        if n.bias is not None:
            out[f"norm{j}.bias"] = n.bias
    return {k: v for k, v in out.items() if v is not None}


@functools.cache
def _module_class():
    import torch

    class _DecoderLayer(torch.nn.Module):
        """A pre-norm decoder layer assembled from symattn's parts (module docstring)."""

        def __init__(self, block: TransformerLayer):
            super().__init__()
            nn = torch.nn
            a, m = block.attention, block.mlp
            E, e = a.width, a.head_dim
            self.gqa = GroupedQueryAttention(a.heads, a.kv)
            self.rotary, self.e = a.rotary, e
            self.register_buffer("kv_index", torch.tensor([self.gqa.group(h) for h in range(a.heads)]),
                                 persistent=False)
            bias = a.in_proj_bias is not None
            self.norm1 = norm_part(block.norms[0].kind).torch_module(E, block.norms[0].eps, np.ones(E), np.zeros(E))
            self.q = nn.Linear(E, a.heads * e, bias=bias)
            self.k = nn.Linear(E, a.kv * e, bias=bias)
            self.v = nn.Linear(E, a.kv * e, bias=bias)
            self.o = nn.Linear(a.heads * e, E, bias=a.out_proj_bias is not None)
            self.norm2 = norm_part(block.norms[1].kind).torch_module(E, block.norms[1].eps, np.ones(E), np.zeros(E))
            ff = m.w1.shape[0]
            self.gate = nn.Linear(E, ff, bias=False)
            self.up = nn.Linear(E, ff, bias=False)
            self.down = nn.Linear(ff, E, bias=False)

        def attention(self, h, causal: bool, only: int | None = None):
            B, n, _ = h.shape
            H, G, e = self.gqa.heads, self.gqa.kv_heads, self.e
            q = self.q(h).reshape(B, n, H, e).transpose(1, 2)
            k = self.k(h).reshape(B, n, G, e).transpose(1, 2)
            v = self.v(h).reshape(B, n, G, e).transpose(1, 2)
            if self.rotary is not None:
                q, k = self.rotary.apply(q, torch), self.rotary.apply(k, torch)
            k, v = k.index_select(1, self.kv_index), v.index_select(1, self.kv_index)
            s = q @ k.transpose(-1, -2) / math.sqrt(e)
            if causal:
                s = s + torch.triu(torch.full((n, n), float("-inf"), dtype=s.dtype), 1)
            ctx = (torch.softmax(s, dim=-1) @ v).transpose(1, 2)
            if only is not None:
                keep = torch.zeros(H, 1, dtype=ctx.dtype)
                keep[only] = 1.0
                ctx = ctx * keep
                return torch.nn.functional.linear(ctx.reshape(B, n, H * e), self.o.weight)
            return self.o(ctx.reshape(B, n, H * e))

        def forward(self, x, causal: bool = True):
            x = x + self.attention(self.norm1(x), causal)
            return x + SwiGLU.forward(self.norm2(x), self.gate.weight, self.up.weight, self.down.weight, torch)

    return _DecoderLayer


def DecoderLayer(block: TransformerLayer):  # noqa: N802  (a class made on first use: PyTorch is optional)
    """The decoder block ``block`` as a ``torch.nn.Module`` (float32 parameters, unset; the caller copies
    :func:`decoder_values` in), see the module docstring.

    Parameters
    ----------
    block : TransformerLayer
        A block with :attr:`~symattn.audit.model.TransformerLayer.decoder` set.

    Returns
    -------
    torch.nn.Module
        Its ``forward(x, causal=True)`` maps tokens as rows ``(B, n, d)`` to the layer's output.
    """
    return _module_class()(block)


def naive_decoder_layer(x: np.ndarray, p: dict, block: TransformerLayer, causal: bool) -> np.ndarray:
    """The decoder layer by its parts' naive reference formulas (NumPy, float64; forward check).

    Parameters
    ----------
    x : numpy.ndarray
        Tokens as rows, ``(B, n, d)``.
    p : dict
        The arrays as the file stores them: ``q, k, v, o`` (with ``.bias`` where stored),
        ``norm1``, ``norm2``, ``gate``, ``fc1`` (up), ``fc2`` (down).
    block : TransformerLayer
        The block as read (its heads, key/value heads, rotary part, norm kinds and ``eps``).
    causal : bool
        Mask the scores causally.

    Returns
    -------
    numpy.ndarray
        ``y + SwiGLU(N_2 y)`` with ``y = x + A(N_1 x)``.
    """
    a = block.attention

    def norm(j, y):
        n = block.norms[j - 1]
        return _naive_norm(y, p[f"norm{j}"], p.get(f"norm{j}.bias"), n.eps, n.kind)

    gqa = GroupedQueryAttention(a.heads, a.kv)
    y = x + gqa.reference(norm(1, x), p, a.head_dim, a.rotary, causal)
    return y + SwiGLU.reference(norm(2, y), p["gate"], p["fc1"], p["fc2"])


def _naive_norm(y: np.ndarray, gain, bias, eps: float, kind: str) -> np.ndarray:
    """The norm part's reference formula on each token (a row of ``y``), through a float ring."""
    part = norm_part(kind)
    flat = y.reshape(-1, y.shape[-1])
    out = np.empty_like(flat)
    values = {"gain": gain, "shift": bias if bias is not None else np.zeros(len(gain))}
    params = {name: [[float(v)] for v in values[name]] for name in part.parameters}
    for t in range(flat.shape[0]):
        col = part.reference(_FloatRing, [[float(v)] for v in flat[t]], params, eps)
        out[t] = [row[0] for row in col]
    return out.reshape(y.shape)


class _FloatRing:
    """The float64 ring of a norm part's :meth:`~symattn.model.parts.norm.Norm.reference`."""

    @staticmethod
    def number(v):
        return float(v)

    @staticmethod
    def zero():
        return 0.0

    add = staticmethod(lambda a, b: a + b)
    sub = staticmethod(lambda a, b: a - b)
    mul = staticmethod(lambda a, b: a * b)

    @staticmethod
    def fn(v, f):
        if f.name != "rsqrt":
            raise ValueError(f.name)
        return 1.0 / math.sqrt(v)


# ------------------------------------------------------------------ symmetries
def decoder_families(stack, i: int, block: TransformerLayer, add, vec, theta) -> None:
    """Add the declared continuous symmetries of decoder layer ``i`` (its parameters ``{i}.q.weight``, ...
    in ``stack``) as families ``add(name, count, sample)`` (see the module docstring)."""
    torch = stack.torch
    a = block.attention
    E, e, H, G = a.width, a.head_dim, a.heads, a.kv
    gqa = GroupedQueryAttention(H, G)
    label = f"layer {i + 1}"

    def where(name):
        return stack.find(f"{i}.{name}")

    def mat(name, shape):
        return theta[where(name)].reshape(shape)

    q, k, v, o = (where(f"{r}.weight") for r in "qkvo")
    bq, bk, bv = (where(f"{r}.bias") for r in "qkv")
    rot = a.rotary
    basis = [torch.tensor(m) for m in rot.commutant()] if rot is not None and rot.distinct() else None

    def qk(rng):
        out = vec()
        wq, wk = mat("q.weight", (H * e, E)), mat("k.weight", (G * e, E))
        dq, dk = torch.zeros_like(wq), torch.zeros_like(wk)
        dbq = torch.zeros(H * e, dtype=torch.float64) if bq is not None else None
        dbk = torch.zeros(G * e, dtype=torch.float64) if bk is not None else None
        for g in range(G):
            if basis is not None:
                M = sum(float(c) * b for c, b in zip(rng.normal(size=len(basis)), basis))
            else:
                M = torch.tensor(rng.normal(size=(e, e)))
            rk = slice(g * e, (g + 1) * e)
            dk[rk] = -M.T @ wk[rk]
            if dbk is not None:
                dbk[rk] = -M.T @ theta[bk][rk]
            for h in gqa.members(g):
                rq = slice(h * e, (h + 1) * e)
                dq[rq] = M @ wq[rq]
                if dbq is not None:
                    dbq[rq] = M @ theta[bq][rq]
        out[q], out[k] = dq.reshape(-1), dk.reshape(-1)
        if dbq is not None:
            out[bq], out[bk] = dbq, dbk
        return out

    def vo(rng):
        out = vec()
        wv, wo = mat("v.weight", (G * e, E)), mat("o.weight", (E, H * e))
        dv, do = torch.zeros_like(wv), torch.zeros_like(wo)
        dbv = torch.zeros(G * e, dtype=torch.float64) if bv is not None else None
        for g in range(G):
            B = torch.tensor(rng.normal(size=(e, e)))
            rv = slice(g * e, (g + 1) * e)
            dv[rv] = B @ wv[rv]
            if dbv is not None:
                dbv[rv] = B @ theta[bv][rv]
            for h in gqa.members(g):
                c = slice(h * e, (h + 1) * e)
                do[:, c] = -wo[:, c] @ B
        out[v], out[o] = dv.reshape(-1), do.reshape(-1)
        if dbv is not None:
            out[bv] = dbv
        return out

    if basis is not None:
        add(f"{label}: rotary query/key gauge per KV head (M commuting with the rotations, M^-T)", G * e, qk)
    elif rot is None:
        add(f"{label}: query/key gauge per KV head (A, A^-T)", G * e * e, qk)
    add(f"{label}: value/output gauge per KV head, shared by its {H // G} query heads (B, B^-1)", G * e * e, vo)
    readers = {1: [(q, H * e), (k, G * e), (v, G * e)], 2: [(where("gate.weight"), None), (where("up.weight"), None)]}
    ff = block.mlp.w1.shape[0]
    for j in (1, 2):
        g = where(f"norm{j}.weight")
        n = block.norms[j - 1]
        if g is None or n.bias is not None:  # a shift would move with the gain: not declared here
            continue

        def fold(rng, g=g, maps=readers[j]):
            out = vec()
            c = torch.tensor(rng.normal(size=E))
            out[g] = c * theta[g]
            for sl, _ in maps:
                w = theta[sl].reshape(-1, E)
                out[sl] = (-w * c[None, :]).reshape(-1)
            return out

        add(f"{label}: {n.title} norm{j} gain folded into the next linear maps "
            f"({'q, k, v' if j == 1 else 'gate, up'})", E, fold)
    up, down = where("up.weight"), where("down.weight")

    def scale(rng):
        out = vec()
        c = torch.tensor(rng.normal(size=ff))
        du, dd = SwiGLU.scaling(mat("up.weight", (ff, E)), mat("down.weight", (E, ff)), c)
        out[up], out[down] = du.reshape(-1), dd.reshape(-1)
        return out

    add(f"{label}: SwiGLU up/down scaling of each hidden unit", ff, scale)


def decoder_modules(stack, i: int, block: TransformerLayer) -> list[dict]:
    """The named modules of decoder layer ``i`` (the entries of
    :func:`symattn.audit.modules.named_modules`): each query head (its query rows and its key/value
    head's key rows; value: its value rows and its output columns), the two norms, the SwiGLU MLP."""
    a = block.attention
    E, e, H = a.width, a.head_dim, a.heads
    gqa = GroupedQueryAttention(H, a.kv)
    out = []

    def rows(name, r, width):
        sl = stack.find(f"{i}.{name}")
        if sl is None:
            return []
        if name.endswith("bias"):
            return [sl.start + x for x in r]
        return [sl.start + x * width + c for x in r for c in range(width)]

    o = stack.where(f"{i}.o.weight")
    for h in range(H):
        g = gqa.group(h)
        rq, rk = range(h * e, (h + 1) * e), range(g * e, (g + 1) * e)
        qk = rows("q.weight", rq, E) + rows("q.bias", rq, 1) + rows("k.weight", rk, E) + rows("k.bias", rk, 1)
        vo = rows("v.weight", rk, E) + rows("v.bias", rk, 1)
        vo += [o.start + r * (H * e) + c for r in range(E) for c in range(h * e, (h + 1) * e)]
        out.append({"name": f"{a.name} head {h + 1}", "kind": "head", "layer": i + 1, "head": h + 1,
                    "columns": qk, "value": vo})
    out += stack.norm_rows(i, block)
    cols = stack.columns(f"{i}.{p}" for p in ("gate.weight", "up.weight", "down.weight"))
    out.append({"name": f"{block.name} MLP", "kind": "mlp", "layer": i + 1, "head": None, "columns": cols,
                "activation": f"SwiGLU ({block.mlp.activation})"})
    return out


#: Digits two float64 outputs must agree to for a discrete symmetry to pass (relative to the output's scale).
DISCRETE_DIGITS = 12


def discrete_checks(stack, bank, seed: int = 0) -> list[dict]:
    """The discrete symmetries of the decoder layers, each applied to the file's weights and checked by the
    model's outputs on ``bank`` (numerical float64: ``digits`` = how many digits the two outputs agree to;
    passes at :data:`DISCRETE_DIGITS`), and the rotary gauge's commutation with the rotations (exact, in
    integers).

    Parameters
    ----------
    stack : TorchStack
        The model rebuilt in float64 (:class:`symattn.audit.modules.TorchStack`).
    bank : torch.Tensor
        Probe inputs ``(B, n, d)``.
    seed : int
        Seed of the random permutations.

    Returns
    -------
    list of dict
        ``name``, ``layer``, ``kind`` (``"numerical"`` or ``"exact"``), ``digits`` (numerical) and
        ``verified``.
    """
    torch = stack.torch
    rng = np.random.default_rng(seed)
    theta = stack.theta.detach()
    x = bank.to(stack.dtype)
    with torch.no_grad():
        base = stack.run(theta, x)
    scale = max(float(base.abs().max()), 1.0)
    out = []

    def compare(name, i, moved):
        with torch.no_grad():
            d = float((stack.run(moved, x) - base).abs().max()) / scale
        digits = 16.0 if d == 0 else min(16.0, round(-math.log10(d), 1))
        out.append({"name": name, "layer": i + 1, "kind": "numerical", "relative_difference": d,
                    "digits": digits, "verified": digits >= DISCRETE_DIGITS,
                    "tier": f"numerical float64: outputs agree to {digits:g} digits on {x.shape[0]} inputs"})

    for i, b in enumerate(stack.model.transformer_layers):
        if not b.decoder:
            continue
        a = b.attention
        E, H, G = a.width, a.heads, a.kv
        gqa = GroupedQueryAttention(H, G)
        ff = b.mlp.w1.shape[0]
        # SwiGLU hidden units
        perm = rng.permutation(ff)
        moved = theta.clone()
        g, u, dn = (theta[stack.where(f"{i}.{p}.weight")] for p in ("gate", "up", "down"))
        g2, u2, d2 = SwiGLU.permute(g.reshape(ff, E), u.reshape(ff, E), dn.reshape(E, ff), perm)
        for p, val in (("gate", g2), ("up", u2), ("down", d2)):
            moved[stack.where(f"{i}.{p}.weight")] = val.reshape(-1)
        compare(f"layer {i + 1}: SwiGLU hidden units permuted", i, moved)
        # query heads inside a KV group, and KV groups with their query heads
        if H // G > 1:
            heads = list(range(H))
            members = gqa.members(0)
            heads[members[0]], heads[members[1]] = members[1], members[0]
            compare(f"layer {i + 1}: query heads {members[0] + 1} and {members[1] + 1} swapped inside KV head 1",
                    i, _permute_heads(stack, theta, i, b, heads, list(range(G))))
        if G > 1:
            groups = list(range(G))[::-1]
            heads = [h for g_ in groups for h in gqa.members(g_)]
            compare(f"layer {i + 1}: KV heads reversed with their query heads", i,
                    _permute_heads(stack, theta, i, b, heads, groups))
        if a.rotary is not None:
            ok = _commutes(a.rotary)
            out.append({"name": f"layer {i + 1}: rotary gauge commutes with every rotation", "layer": i + 1,
                        "kind": "exact", "digits": None, "verified": ok,
                        "tier": "exact: each basis matrix commutes with every plane's generators (integers)"})
    return out


def _commutes(rotary) -> bool:
    """Whether every matrix of ``rotary.commutant()`` commutes with each plane's identity and rotation
    generator (then with every ``R_a = sum_p cos I_p + sin J_p``), in integers."""
    gens = []
    for i, k in rotary.planes():
        eye = np.zeros((rotary.dim, rotary.dim), dtype=np.int64)
        eye[i, i] = eye[k, k] = 1
        J = np.zeros((rotary.dim, rotary.dim), dtype=np.int64)
        J[k, i], J[i, k] = 1, -1
        gens += [eye, J]
    basis = [np.rint(m).astype(np.int64) for m in rotary.commutant()]
    return all(bool((m @ g == g @ m).all()) for m in basis for g in gens)


def _permute_heads(stack, theta, i: int, block: TransformerLayer, heads: list[int], groups: list[int]):
    """``theta`` with layer ``i``'s query heads in the order ``heads`` (their rows of ``W_q``, columns of
    ``W_o``) and its key/value heads in the order ``groups``."""
    a = block.attention
    E, e, H = a.width, a.head_dim, a.heads
    moved = theta.clone()

    def rows(order):
        return [r for h in order for r in range(h * e, (h + 1) * e)]

    qr, kr = rows(heads), rows(groups)
    for name, r, width in (("q", qr, E), ("k", kr, E), ("v", kr, E)):
        w = stack.where(f"{i}.{name}.weight")
        moved[w] = theta[w].reshape(-1, width)[r].reshape(-1)
        bsl = stack.find(f"{i}.{name}.bias")
        if bsl is not None:
            moved[bsl] = theta[bsl][r]
    o = stack.where(f"{i}.o.weight")
    moved[o] = theta[o].reshape(E, H * e)[:, qr].reshape(-1)
    return moved
