"""The numerical tiers of a real transformer: the model rebuilt from ``torch.nn`` modules, its
Jacobian spectrum, per-module strengths and dimension bounds, matrix-free, within the budget.

The blocks of an :class:`~symattn.audit.model.ImportedModel` (attention with its biases,
LayerNorms, the MLP, pre- or post-norm residuals, a final norm) are rebuilt as
``nn.TransformerEncoderLayer`` / ``nn.MultiheadAttention`` / ``nn.LayerNorm``
modules with the file's weights (PyTorch computes the forward: no symattn code
is between the weights and the outputs), and differentiated with
``torch.func.functional_call`` over the model's own parameters (weights,
biases, gains). On a bank of probe inputs (the user's ``--inputs`` or N(0, 1)
tokens at the model's sequence length):

* spectrum: the leading singular values of the bank Jacobian, float64 and
  float32 side by side, with residual error estimates
  (:func:`symattn.analyses.matrix_free.top_singular_values`, JVP/VJP only);
* per named module (each head's query/key and value/output parameters, each
  LayerNorm, each MLP): the largest singular value of the Jacobian restricted
  to its parameters, relative to ``sigma_1``, and the digits float64 and
  float32 keep of it;
* dimension: the declared symmetries of the blocks (:func:`symmetry_families`),
  each family checked as kernel directions by a random combination (``||J v||``
  against ``sigma_1 ||v||``), give the upper bound ``P - s`` on the rank; the
  rank of ``J`` on random directions gives a lower bound; where the dense
  Jacobian fits the budget its numerical rank is computed and the kernel that
  no declared symmetry explains is reported.

Every figure is numerical (float64 or float32, said); the steps run in order
while :class:`~symattn.audit.budget.Clock` has room for their measured cost, and
a step that does not fit is named as not run.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from symattn.core.optional import require_torch
from symattn.model.parts import norm_part
from symattn.audit.budget import Clock, OverBudget, bounded
from symattn.audit.model import ImportedModel
from symattn.audit.result import CUTOFF, FLOAT32_EPS, FLOAT64_EPS

__all__ = ["TorchStack", "module_tier", "symmetry_families", "memory_estimate", "DENSE_RANK_LIMIT"]

#: Parameters up to which the dense float64 Jacobian and its SVD are tried (budget permitting).
DENSE_RANK_LIMIT = 3000
#: Random directions of the rank lower bound beyond the dense limit (budget permitting).
LOWER_BOUND_DIRECTIONS = 1024
#: Random directions generated and pushed through one batched JVP at a time (the rank lower bound
#: and the symmetry checks keep at most this many parameter-sized vectors alive).
DIRECTION_CHUNK = 16
#: Parameters above which the tier computes fewer values (4, two power rounds) and the
#: per-module strengths in float64 only.
LARGE_MODEL = 100_000
#: Relative tolerance of a symmetry check: ``||J v|| <= SYMMETRY_TOL sigma_1 ||v||`` (float64).
SYMMETRY_TOL = 1e-7


#: Resident bytes of the process before the tier allocates anything (Python, PyTorch, symattn;
#: measured 0.27 GiB with ``/usr/bin/time``).
BASE_BYTES = 300 * 2 ** 20
#: Parameter-sized float64 vectors alive per direction of a batched JVP/VJP (the direction, its
#: tangents through ``functional_call`` and vmap's copies; calibrated on the encoder benchmarks).
LIVE_PER_DIRECTION = 3


def memory_estimate(model: ImportedModel, bank_size: int = 8, k: int = 8) -> dict:
    """Peak bytes of :func:`module_tier` on ``model``, estimated before anything is allocated.

    The largest step decides: the float64 and float32 stacks (``12 P`` bytes each, module and
    flat copies), the batched directions (``max(k + 8, DIRECTION_CHUNK)`` parameter vectors,
    :data:`LIVE_PER_DIRECTION` copies each), the dense Jacobian where ``P`` is at most
    :data:`DENSE_RANK_LIMIT` (about ``P + n d`` rows), and the images of the rank lower bound's
    directions; plus :data:`BASE_BYTES`.

    >>> from symattn.audit import from_arrays
    >>> m = from_arrays({"Q1": np.eye(4), "K1": np.eye(4), "V1": np.eye(4)})
    >>> e = memory_estimate(m)
    >>> e["bytes"] > BASE_BYTES, sorted(e["parts"])
    (True, ['dense', 'directions', 'lower_bound', 'stacks'])
    """
    P = model.torch_parameters
    n, d, D = model.tokens, max(model.widths), max(model.depth, 1)
    if P > LARGE_MODEL:
        bank_size, k = min(bank_size, 4), min(k, 4)
    width = max(k + 8, DIRECTION_CHUNK)
    ff = max((b.mlp.w1.shape[0] for b in model.transformer_layers if b.mlp is not None), default=0)
    H = max(model.heads)
    activations = bank_size * n * (4 * d + H * n + ff) * 8 * D * 4  # scores, tokens, hidden units, autograd
    rows = bank_size * n * d
    m = min(P, LOWER_BOUND_DIRECTIONS)
    parts = {
        "stacks": 2 * 12 * P,
        "directions": width * (LIVE_PER_DIRECTION * 8 * P + activations),
        "dense": (P + rows) * P * 8 * 2 if P <= DENSE_RANK_LIMIT else 0,
        "lower_bound": 0 if P <= DENSE_RANK_LIMIT else
        m * max(rows, m + m // 8) * 8 * 2 + DIRECTION_CHUNK * LIVE_PER_DIRECTION * 8 * P,
    }
    return {"bytes": BASE_BYTES + parts["stacks"] + max(parts["directions"], parts["dense"], parts["lower_bound"]),
            "parts": parts}


def _activation(name: str, torch) -> Any:
    """The activation part's own ``torch.nn`` module."""
    from symattn.model.parts import activation_part

    return activation_part(name).torch_module()


class TorchStack:
    """The model's blocks as real ``torch.nn`` modules in ``dtype``, and its flat parameter vector.

    ``names[j], shapes[j], offsets[j]`` locate the ``j``-th parameter in
    :attr:`theta`; weights a file does not have (a missing bias) stay fixed
    zeros, not parameters.
    """

    def __init__(self, model: ImportedModel, dtype: str = "float64", causal: bool = False):
        torch = self.torch = require_torch()
        nn = torch.nn
        self.model, self.causal = model, causal
        self.dtype = getattr(torch, dtype)
        mods, values = nn.ModuleList(), {}
        for b in model.transformer_layers:
            a = b.attention
            E = a.width
            if b.decoder:  # rotary, grouped-query attention, SwiGLU, RMSNorm: assembled from symattn's parts
                from symattn.audit.decoder import DecoderLayer, decoder_values

                values.update({f"{len(mods)}.{k}": v for k, v in decoder_values(b).items()})
                mods.append(DecoderLayer(b))
                continue
            if b.norm_first is None:
                m = nn.MultiheadAttention(E, a.heads, bias=True, batch_first=True)
                prefix = ""
            else:
                ff = b.mlp.w1.shape[0]
                m = nn.TransformerEncoderLayer(E, a.heads, ff, dropout=0.0,
                                               activation=_activation(b.mlp.activation, torch),
                                               layer_norm_eps=b.norms[0].eps, batch_first=True,
                                               norm_first=b.norm_first)
                prefix = "self_attn."
                for j, n in enumerate(b.norms, 1):
                    values[f"{len(mods)}.norm{j}.weight"] = n.gain
                    values[f"{len(mods)}.norm{j}.bias"] = n.bias
                for j, (w, bias) in enumerate(((b.mlp.w1, b.mlp.b1), (b.mlp.w2, b.mlp.b2)), 1):
                    values[f"{len(mods)}.linear{j}.weight"] = w
                    values[f"{len(mods)}.linear{j}.bias"] = bias
            i = len(mods)
            values[f"{i}.{prefix}in_proj_weight"] = a.in_proj_weight
            values[f"{i}.{prefix}in_proj_bias"] = a.in_proj_bias
            values[f"{i}.{prefix}out_proj.weight"] = a.out_proj_weight
            values[f"{i}.{prefix}out_proj.bias"] = a.out_proj_bias
            mods.append(m)
        if model.final_norm is not None:
            n = model.final_norm
            mods.append(nn.LayerNorm(model.widths[-1], eps=n.eps) if n.kind == "layernorm" else
                        norm_part(n.kind).torch_module(model.widths[-1], n.eps, n.gain))
            values[f"{len(mods) - 1}.weight"] = n.gain
            values[f"{len(mods) - 1}.bias"] = n.bias
        mods = mods.to(self.dtype).train()  # dropout 0; train mode keeps PyTorch off its fused path
        own = dict(mods.named_parameters())
        with torch.no_grad():
            for name, p in own.items():
                v = values.get(name)
                if v is None:  # absent from the file: a fixed zero bias (or unit gain), not a parameter
                    p.copy_(torch.ones_like(p) if name.endswith("norm1.weight") or name.endswith("norm2.weight")
                            or (model.final_norm is not None and name == f"{len(mods) - 1}.weight")
                            else torch.zeros_like(p))
                    p.requires_grad_(False)
                else:
                    p.copy_(torch.as_tensor(np.asarray(v), dtype=self.dtype))
        self.modules = mods
        self.names = [n for n, p in own.items() if values.get(n) is not None]
        self.shapes = [tuple(own[n].shape) for n in self.names]
        sizes = [math.prod(s) for s in self.shapes]
        self.offsets = list(np.cumsum([0] + sizes[:-1]))
        self.size = int(sum(sizes))
        self.theta = torch.cat([own[n].detach().reshape(-1) for n in self.names])

    def where(self, name: str) -> slice:
        """The slice of parameter ``name`` in :attr:`theta`."""
        j = self.names.index(name)
        return slice(int(self.offsets[j]), int(self.offsets[j]) + math.prod(self.shapes[j]))

    def has(self, name: str) -> bool:
        """Whether ``name`` is a parameter (not a fixed weight the file lacks)."""
        return name in self.names

    def find(self, name: str) -> slice | None:
        """:meth:`where`, or None if ``name`` is not a parameter."""
        return self.where(name) if self.has(name) else None

    def columns(self, names) -> list[int]:
        """The flat indices in :attr:`theta` of the parameters ``names`` that exist, in order."""
        return [c for name in names if self.has(name) for c in range(self.where(name).start, self.where(name).stop)]

    def norm_rows(self, i: int, layer) -> list[dict]:
        """The named-module rows of layer ``i``'s norms (``norm1``, ``norm2``: gain and bias)."""
        out = []
        for j, n in enumerate(layer.norms, 1):
            cols = self.columns(f"{i}.norm{j}.{p}" for p in ("weight", "bias"))
            if cols:
                out.append({"name": n.name, "kind": "norm", "layer": i + 1, "head": None, "columns": cols})
        return out

    def params(self, theta) -> dict:
        return {n: theta[int(o): int(o) + math.prod(s)].reshape(s)
                for n, s, o in zip(self.names, self.shapes, self.offsets)}

    def run(self, theta, x):
        """The model's output tokens (PyTorch's own modules at parameters ``theta``)."""
        from torch.func import functional_call
        from torch.nn.attention import SDPBackend, sdpa_kernel

        with sdpa_kernel(SDPBackend.MATH):  # the composite kernel: forward-mode AD goes through it
            return self._run(theta, x, functional_call)

    def layer_outputs(self, x) -> list:
        """Each module's output tokens on ``x`` (``(B, n, d)``, tokens as rows) at the model's own
        parameters: one per layer, then the final norm's (the forward check compares them)."""
        from torch.func import functional_call
        from torch.nn.attention import SDPBackend, sdpa_kernel

        out: list = []
        with sdpa_kernel(SDPBackend.MATH), self.torch.no_grad():
            self._run(self.theta, x.to(self.dtype), functional_call, out)
        return out

    def _run(self, theta, x, functional_call, collect: list | None = None):
        torch = self.torch
        n = x.shape[-2]
        mask = torch.nn.Transformer.generate_square_subsequent_mask(n, dtype=x.dtype) if self.causal else None
        p = self.params(theta)
        for i, m in enumerate(self.modules):
            mine = {k[len(f"{i}."):]: v for k, v in p.items() if k.startswith(f"{i}.")}
            if isinstance(m, torch.nn.MultiheadAttention):
                x = functional_call(m, mine, (x, x, x), {"need_weights": False, "attn_mask": mask})[0]
            elif isinstance(m, torch.nn.TransformerEncoderLayer):
                x = functional_call(m, mine, (x,), {"src_mask": mask, "is_causal": self.causal})
            elif i < len(self.model.transformer_layers) and self.model.transformer_layers[i].decoder:
                x = functional_call(m, mine, (x,), {"causal": self.causal})
            else:
                x = functional_call(m, mine, (x,))
            if collect is not None:
                collect.append(x)
        return x

    def forward(self, bank) -> Callable:
        """``theta -> flat outputs`` on ``bank`` (``(B, n, d)``)."""
        x = bank.to(self.dtype)
        return lambda theta: self.run(theta, x).reshape(-1)


# ------------------------------------------------------------------ named modules
def named_modules(stack: TorchStack) -> list[dict]:
    """One entry per named module: ``name`` (the file's), ``kind`` (head, norm, mlp), ``layer``,
    ``head``, and the flat indices ``columns`` (for a head: its query/key parameters) and ``value``
    (a head's value/output parameters)."""
    out = []
    model = stack.model
    for i, b in enumerate(model.transformer_layers):
        if b.decoder:
            from symattn.audit.decoder import decoder_modules

            out += decoder_modules(stack, i, b)
            continue
        a = b.attention
        E, H = a.width, a.heads
        e = E // H
        pre = f"{i}.self_attn." if b.norm_first is not None else f"{i}."
        w, bias = stack.where(pre + "in_proj_weight"), (stack.where(pre + "in_proj_bias")
                                                        if stack.has(pre + "in_proj_bias") else None)
        wo = stack.where(pre + "out_proj.weight")
        for h in range(H):
            qk, vo = [], []
            for part, dest in ((0, qk), (1, qk), (2, vo)):
                rows = range(part * E + h * e, part * E + (h + 1) * e)
                dest += [w.start + r * E + c for r in rows for c in range(E)]
                if bias is not None:
                    dest += [bias.start + r for r in rows]
            vo += [wo.start + r * E + c for r in range(E) for c in range(h * e, (h + 1) * e)]
            out.append({"name": f"{a.name} head {h + 1}", "kind": "head", "layer": i + 1, "head": h + 1,
                        "columns": qk, "value": vo})
        out += stack.norm_rows(i, b)
        if b.mlp is not None:
            cols = stack.columns(f"{i}.{p}" for p in ("linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"))
            out.append({"name": f"{b.name} MLP", "kind": "mlp", "layer": i + 1, "head": None, "columns": cols,
                        "activation": b.mlp.activation})
    if model.final_norm is not None:
        k = len(model.transformer_layers)
        cols = stack.columns(f"{k}.{p}" for p in ("weight", "bias"))
        if cols:
            out.append({"name": model.final_norm.name, "kind": "norm", "layer": None, "head": None,
                        "columns": cols})
    return out


# ------------------------------------------------------------------ symmetries
def symmetry_families(stack: TorchStack) -> list[dict]:
    """The declared symmetries of the blocks in the model's own parameters, as families.

    Each family has ``name``, ``count`` (its dimension) and ``sample(rng)``, a
    random element of its span (a tangent vector of ``theta``). Per head: the
    query/key gauge ``(W_q, b_q) -> A (W_q, b_q)``, ``(W_k, b_k) -> A^-T (W_k,
    b_k)`` (``e^2``), the value/output gauge ``(W_v, b_v) -> B (W_v, b_v)``,
    ``W_o[:, h] -> W_o[:, h] B^-1`` (``e^2``); per attention with biases: the
    key bias (softmax over keys cancels ``q^T b_k``, ``E``) and the value bias
    moved into the output bias (``b_v += delta``, ``b_o -= W_o delta``, ``E``);
    post-norm: what the next LayerNorm's mean removal cancels (``W_o += 1
    w^T``, ``b_o += c 1``, and the same for ``linear2``: ``E + 1`` and ``ff +
    1``); pre-norm: a LayerNorm whose output feeds only a linear map passes its
    gain and bias into it (``2 E`` per norm when that map has a bias, ``E``
    otherwise); ReLU: positive rescaling of each hidden unit (``ff``).
    """
    torch = stack.torch
    theta = stack.theta.detach().double()
    P = stack.size
    fams: list[dict] = []

    def add(name, count, make):
        fams.append({"name": name, "count": count, "sample": make})

    def vec():
        return torch.zeros(P, dtype=torch.float64)

    def mat(sl, shape):
        return theta[sl].reshape(shape)

    for i, b in enumerate(stack.model.transformer_layers):
        if b.decoder:  # rotary, grouped-query attention, SwiGLU, RMSNorm (symattn.audit.decoder)
            from symattn.audit.decoder import decoder_families

            decoder_families(stack, i, b, add, vec, theta)
            continue
        a = b.attention
        E, H = a.width, a.heads
        e = E // H
        pre = f"{i}.self_attn." if b.norm_first is not None else f"{i}."
        W = stack.where(pre + "in_proj_weight")
        Wo = stack.where(pre + "out_proj.weight")
        has_b = stack.has(pre + "in_proj_bias")
        Bi = stack.where(pre + "in_proj_bias") if has_b else None
        has_bo = stack.has(pre + "out_proj.bias")
        Bo = stack.where(pre + "out_proj.bias") if has_bo else None
        label = f"layer {i + 1}"

        def qk(rng, W=W, Bi=Bi, E=E, H=H, e=e):
            v = vec()
            w = mat(W, (3 * E, E))
            dw = torch.zeros(3 * E, E, dtype=torch.float64)
            db = torch.zeros(3 * E, dtype=torch.float64)
            for h in range(H):
                A = torch.tensor(rng.normal(size=(e, e)))
                q, k = slice(h * e, (h + 1) * e), slice(E + h * e, E + (h + 1) * e)
                dw[q], dw[k] = A @ w[q], -A.T @ w[k]
                if Bi is not None:
                    bb = theta[Bi]
                    db[q], db[k] = A @ bb[q], -A.T @ bb[k]
            v[W] = dw.reshape(-1)
            if Bi is not None:
                v[Bi] = db
            return v

        def vo(rng, W=W, Bi=Bi, Wo=Wo, E=E, H=H, e=e):
            v = vec()
            w, wo = mat(W, (3 * E, E)), mat(Wo, (E, E))
            dw = torch.zeros(3 * E, E, dtype=torch.float64)
            db = torch.zeros(3 * E, dtype=torch.float64)
            dwo = torch.zeros(E, E, dtype=torch.float64)
            for h in range(H):
                B = torch.tensor(rng.normal(size=(e, e)))
                r = slice(2 * E + h * e, 2 * E + (h + 1) * e)
                c = slice(h * e, (h + 1) * e)
                dw[r], dwo[:, c] = B @ w[r], -wo[:, c] @ B
                if Bi is not None:
                    db[r] = B @ theta[Bi][r]
            v[W], v[Wo] = dw.reshape(-1), dwo.reshape(-1)
            if Bi is not None:
                v[Bi] = db
            return v

        add(f"{label}: query/key gauge per head (A, A^-T)", H * e * e, qk)
        add(f"{label}: value/output gauge per head (B, B^-1)", H * e * e, vo)
        if has_b:
            def key_bias(rng, Bi=Bi, E=E):
                v = vec()
                v[Bi.start + E: Bi.start + 2 * E] = torch.tensor(rng.normal(size=E))
                return v

            add(f"{label}: key bias (softmax over keys cancels it)", E, key_bias)
            if has_bo:
                def value_bias(rng, Bi=Bi, Bo=Bo, Wo=Wo, E=E):
                    v = vec()
                    d = torch.tensor(rng.normal(size=E))
                    v[Bi.start + 2 * E: Bi.start + 3 * E] = d
                    v[Bo] = -mat(Wo, (E, E)) @ d
                    return v

                add(f"{label}: value bias moved into the output bias", E, value_bias)
        if b.norm_first is None:
            continue
        ff = b.mlp.w1.shape[0]
        L1, L2 = stack.where(f"{i}.linear1.weight"), stack.where(f"{i}.linear2.weight")
        b1 = stack.find(f"{i}.linear1.bias")
        b2 = stack.find(f"{i}.linear2.bias")
        if not b.norm_first:  # post-norm: norm1 follows attention, norm2 follows the MLP
            for (wsl, bsl, width, what) in ((Wo, Bo, E, "attention output"), (L2, b2, ff, "linear2")):
                def mean(rng, wsl=wsl, bsl=bsl, width=width, E=E):
                    v = vec()
                    w = torch.tensor(rng.normal(size=width))
                    v[wsl] = torch.outer(torch.ones(E, dtype=torch.float64), w).reshape(-1)
                    if bsl is not None:
                        v[bsl] = float(rng.normal()) * torch.ones(E, dtype=torch.float64)
                    return v

                add(f"{label}: {what} along (1, ..., 1), removed by the next LayerNorm's mean",
                    width + (bsl is not None), mean)
            # a post-norm LayerNorm's bias shifts the residual stream; the next sublayer's input bias
            # and output bias take the shift back before the next LayerNorm sees it
            nxt = stack.model.transformer_layers[i + 1] if i + 1 < len(stack.model.transformer_layers) else None
            moves = [(1, L1, b1, ff, b2, "linear1/linear2 biases")]
            if nxt is not None and nxt.norm_first is False:
                npre = f"{i + 1}.self_attn."
                if stack.has(npre + "in_proj_bias") and stack.has(npre + "out_proj.bias"):
                    moves.append((2, stack.where(npre + "in_proj_weight"), stack.where(npre + "in_proj_bias"),
                                  3 * E, stack.where(npre + "out_proj.bias"), f"layer {i + 2} attention biases"))
            for j, wsl, bsl, rows, osl, what in moves:
                beta = stack.find(f"{i}.norm{j}.bias")
                if beta is None or bsl is None or osl is None:
                    continue

                def shift(rng, wsl=wsl, bsl=bsl, rows=rows, osl=osl, beta=beta, E=E):
                    v = vec()
                    d = torch.tensor(rng.normal(size=E))
                    v[beta] = d
                    v[bsl] = -mat(wsl, (rows, E)) @ d
                    v[osl] = -d
                    return v

                add(f"{label}: norm{j} bias moved into the {what}", E, shift)
        else:  # pre-norm: norm1 feeds only in_proj, norm2 only linear1
            for j, (wsl, bsl, rows) in ((1, (W, Bi, 3 * E)), (2, (L1, b1, ff))):
                g = stack.find(f"{i}.norm{j}.weight")
                beta = stack.find(f"{i}.norm{j}.bias")
                if g is None:
                    continue

                def absorb(rng, wsl=wsl, bsl=bsl, rows=rows, g=g, beta=beta, E=E):
                    v = vec()
                    c = torch.tensor(rng.normal(size=E))
                    w = mat(wsl, (rows, E))
                    v[g] = c * theta[g]
                    if beta is not None:
                        v[beta] = c * theta[beta]
                    v[wsl] = (-w * c[None, :]).reshape(-1)
                    if bsl is not None and beta is not None:
                        d = torch.tensor(rng.normal(size=E))
                        v[beta] += d
                        v[bsl] = -w @ d
                    return v

                add(f"{label}: norm{j} gain and bias passed into the next linear map",
                    E * (2 if bsl is not None and beta is not None else 1), absorb)
        # a LayerNorm's outputs y = gain (x - mean) / sd + beta satisfy (1 / gain)^T (y - beta) = 0:
        # a linear map W y + b reading them is unchanged by W += a c^T, b -= a c^T beta (c = 1 / gain)
        nxt = stack.model.transformer_layers[i + 1] if i + 1 < len(stack.model.transformer_layers) else None
        readers = [(1, L1, b1, ff, "linear1")]
        if b.norm_first:
            readers.append((2, L1, b1, ff, "linear1"))
            readers[0] = (1, W, Bi, 3 * E, "in_proj")
        elif nxt is not None:
            npre = f"{i + 1}.self_attn." if nxt.norm_first is not None else f"{i + 1}."
            if stack.has(npre + "in_proj_bias"):
                readers.append((2, stack.where(npre + "in_proj_weight"), stack.where(npre + "in_proj_bias"),
                                3 * E, f"layer {i + 2} in_proj"))
        for j, wsl, bsl, rows, what in readers:
            g = stack.find(f"{i}.norm{j}.weight")
            beta = stack.find(f"{i}.norm{j}.bias")
            if bsl is None:
                continue

            def plane(rng, wsl=wsl, bsl=bsl, rows=rows, g=g, beta=beta, E=E):
                v = vec()
                c = 1 / theta[g] if g is not None else torch.ones(E, dtype=torch.float64)
                shift = float(c @ theta[beta]) if beta is not None else 0.0
                a = torch.tensor(rng.normal(size=rows))
                v[wsl] = torch.outer(a, c).reshape(-1)
                v[bsl] = -a * shift
                return v

            if g is None or bool((theta[g] != 0).all()):
                add(f"{label}: {what} along the normal of norm{j}'s output plane", rows, plane)
        if b.mlp.activation == "relu":
            def relu(rng, L1=L1, L2=L2, b1=b1, ff=ff, E=E):
                v = vec()
                c = torch.tensor(rng.normal(size=ff))
                v[L1] = (c[:, None] * mat(L1, (ff, E))).reshape(-1)
                if b1 is not None:
                    v[b1] = c * theta[b1]
                v[L2] = (-mat(L2, (E, ff)) * c[None, :]).reshape(-1)
                return v

            add(f"{label}: ReLU rescaling of each hidden unit", ff, relu)
    _stream_family(stack, add, vec, theta)
    return fams


def _stream_family(stack: TorchStack, add, vec, theta) -> None:
    """Pre-norm: every LayerNorm reading the residual stream removes its per-token mean, so what
    the sublayers write along (1, ..., 1) reaches only the output: with a final LayerNorm, nothing
    (each writer's weights ``1 w^T`` and bias ``c 1``); without it, biases whose shifts sum to 0."""
    torch = stack.torch
    blocks = stack.model.transformer_layers
    if not blocks or not all(b.norm_first is True and not b.decoder for b in blocks):
        return
    norms = [n for b in blocks for n in b.norms] + ([stack.model.final_norm] if stack.model.final_norm else [])
    if not all(norm_part(n.kind).removes_mean for n in norms):
        return
    writers = []  # (weight slice, bias slice or None, input width)
    for i, b in enumerate(blocks):
        E = b.attention.width
        for w, bias, width in ((f"{i}.self_attn.out_proj.weight", f"{i}.self_attn.out_proj.bias", E),
                               (f"{i}.linear2.weight", f"{i}.linear2.bias", b.mlp.w1.shape[0])):
            writers.append((stack.where(w), stack.find(bias), width))
    E = blocks[0].attention.width
    ones = torch.ones(E, dtype=torch.float64)
    final = stack.model.final_norm is not None
    if final:
        def along(rng):
            v = vec()
            for wsl, bsl, width in writers:
                v[wsl] = torch.outer(ones, torch.tensor(rng.normal(size=width))).reshape(-1)
                if bsl is not None:
                    v[bsl] = float(rng.normal()) * ones
            return v

        add("residual stream along (1, ..., 1): removed by every LayerNorm and the final one",
            sum(w + (b is not None) for _, b, w in writers), along)
        return
    biased = [bsl for _, bsl, _ in writers if bsl is not None]
    if len(biased) < 2:
        return

    def balanced(rng):
        v = vec()
        c = rng.normal(size=len(biased))
        c -= c.mean()
        for bsl, ck in zip(biased, c):
            v[bsl] = float(ck) * ones
        return v

    add("residual stream biases along (1, ..., 1) summing to 0: removed by every LayerNorm, cancelled "
        "at the output", len(biased) - 1, balanced)


# ------------------------------------------------------------------ the tier
def _bank(stack: TorchStack, inputs: np.ndarray | None, size: int, seed: int):
    torch = stack.torch
    if inputs is not None:
        return torch.tensor(inputs[:size], dtype=torch.float64)
    from symattn.analyses.matrix_free import gaussian_bank

    return gaussian_bank(stack.model.widths[0], stack.model.tokens, size, seed)


def module_tier(model: ImportedModel, clock: Clock, seconds: float, inputs: np.ndarray | None = None,
                seed: int = 0, k: int = 8, bank_size: int = 8, causal: bool = False) -> dict:
    """Spectrum, per-module strengths and dimension bounds of the real model (see the module docstring),
    each step run while ``seconds`` (and the clock) last. Returns a JSON-ready dict."""
    torch = require_torch()
    from symattn.analyses.matrix_free import top_singular_values

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    deadline = clock.timer() + seconds  # the clock's measure (CPU seconds of the process tree)
    out: dict = {"tier": "numerical float64 and float32 (PyTorch's own modules; JVP/VJP, matrix-free)",
                 "not_run": [], "dimension": None, "modules": [], "float64": None, "float32": None}
    try:
        stacks = {"float64": TorchStack(model, "float64", causal)}
        s64 = stacks["float64"]
        if s64.size > LARGE_MODEL:  # a smaller bank keeps each pass affordable (said in the report)
            bank_size = min(bank_size, 4)
        bank = _bank(s64, inputs, bank_size, seed)
        out.update({"parameters": s64.size, "bank": (f"{bank.shape[0]} inputs x {bank.shape[1]} tokens "
                                                     + ("from --inputs" if inputs is not None else
                                                        f"N(0, 1) (torch seed {seed})")),
                    "rows": int(bank.numel())})
        mods = named_modules(s64)
        t0 = clock.timer()
        f64 = s64.forward(bank)
        y = f64(s64.theta)
        if not bool(torch.isfinite(y).all()):
            out["not_run"].append("the forward pass is not finite on the probe inputs")
            return out
        pass_seconds = max(clock.timer() - t0, 1e-4) * 3  # a JVP or VJP costs about 3 forwards

        def step(passes: float, what: str, fn: Callable[[], Any]) -> Any:
            """``fn()`` if its estimate fits, in a child stopped at the budget; None (said) otherwise."""
            need = passes * pass_seconds
            left = min(deadline - clock.timer(), clock.left())
            if need > left:
                out["not_run"].append(f"{what}: estimated {need:.3g} s, beyond the remaining budget "
                                      f"({max(left, 0):.0f} s; --budget SECONDS)")
                return None
            try:
                return bounded(fn, left, f"{what} (estimated {need:.1f} s)", clock)
            except OverBudget as exc:
                out["not_run"].append(str(exc))
                return None

        large = s64.size > LARGE_MODEL
        if large:  # fewer values, one power round, per-module strengths in float64 only
            k, power, module_dtypes = min(k, 4), 1, ("float64",)
        else:
            power, module_dtypes = 3, ("float64", "float32")
        width = k + 8
        top_passes = width * (2 * power + 3) + 2 * k
        def spectrum(name):
            st = stacks.setdefault(name, TorchStack(model, name, causal) if name != "float64" else s64)
            top = step(top_passes * (1 if name == "float64" else 0.7), f"spectrum in {name}",
                       lambda st=st: top_singular_values(st.forward(bank), st.theta, k, power, seed))
            if top is not None:
                out[name] = {"top": top["values"], "errors": top["errors"], "finite": top["finite"]}

        # the headline figures first (spectrum, dimension), then each module, then float32
        spectrum("float64")
        s1 = out["float64"]["top"][0] if out["float64"] and out["float64"]["top"] else None
        over = 1 if large else 3
        for mod in mods:  # every named module has its entry, whether or not its figures fit the budget
            entry = {x: mod.get(x) for x in ("name", "kind", "layer", "head", "activation")}
            entry["parameters"] = len(mod["columns"]) + len(mod.get("value", []))
            out["modules"].append(entry)

        def per_module(name):
            st = stacks.get(name)
            if st is None or s1 is None:
                return
            f = st.forward(bank)
            for j, mod in enumerate(mods):
                keys = [key for key in ("columns", "value") if key in mod]
                got = step(len(keys) * (1 + over) * 6, f"{mod['name']} in {name}",
                           lambda mod=mod, keys=keys, f=f, st=st: [
                               top_singular_values(f, st.theta, 1, 1, seed + 1, columns=mod[key],
                                                   oversample=over) for key in keys])
                if got is None:
                    break
                for key, r in zip(keys, got):
                    value = r["values"][0] if r["values"] else None
                    entry = out["modules"][j]
                    tag = "" if key == "columns" else "value_"
                    entry[f"{tag}{name}"] = value
                    if name == "float64":
                        entry[f"{tag}relative"] = None if value is None else value / s1
                        rel = entry[f"{tag}relative"]
                        entry[f"{tag}float64_digits"] = (None if not rel else round(math.log10(rel / FLOAT64_EPS), 1))
                        entry[f"{tag}float32_digits"] = (None if not rel else round(math.log10(rel / FLOAT32_EPS), 1))
        out["dead_units"] = _dead_units(s64, bank)
        if any(b.decoder for b in model.transformer_layers):  # permutations applied to the file's weights, outputs compared
            from symattn.audit.decoder import discrete_checks

            out["discrete"] = step(2 * len(model.transformer_layers) + 1, "discrete symmetries (permutations)",
                                   lambda: discrete_checks(s64, bank, seed))
        if s1 is not None:
            full = _bank(s64, inputs, len(inputs), seed) if inputs is not None else bank
            out["dimension"] = _dimension(s64, f64, bank, s1, seed, step, full)
        per_module("float64")
        spectrum("float32")
        if "float32" in module_dtypes:
            per_module("float32")
    finally:
        torch.set_num_threads(threads)
    return out


def _dead_units(stack: TorchStack, bank) -> dict:
    """Per MLP with ReLU: hidden units never positive on the probe inputs (a forward hook on linear1)."""
    torch = stack.torch
    seen: dict = {}
    hooks = []
    for m, b in zip(stack.modules, stack.model.transformer_layers):
        if b.norm_first is not None and b.mlp.activation == "relu":
            def hook(_mod, _inp, output, name=b.name):
                seen[name] = int((output.reshape(-1, output.shape[-1]).max(dim=0).values <= 0).sum())
            hooks.append(m.linear1.register_forward_hook(hook))
    try:
        with torch.no_grad():
            stack.run(stack.theta, bank.to(stack.dtype))
    finally:
        for h in hooks:
            h.remove()
    return seen


def _dimension(stack: TorchStack, f, bank, s1: float, seed: int, step, full=None) -> dict:
    """Declared symmetries checked as kernel directions; bounds on the rank; the dense rank if it fits."""
    torch = stack.torch
    from torch.func import jvp

    rng = np.random.default_rng(seed)
    P = stack.size
    theta = stack.theta
    fams = symmetry_families(stack)

    def check():
        from torch.func import vmap

        out = []
        for j in range(0, len(fams), DIRECTION_CHUNK):  # a few families per batched JVP
            chunk = fams[j: j + DIRECTION_CHUNK]
            V = torch.stack([fam["sample"](rng).to(theta.dtype) for fam in chunk])
            JV = vmap(lambda v: jvp(f, (theta,), (v,))[1])(V)
            for fam, v, Jv in zip(chunk, V, JV):
                ratio = float(torch.linalg.vector_norm(Jv) / (s1 * torch.linalg.vector_norm(v)))
                out.append({"name": fam["name"], "count": fam["count"], "ratio": ratio,
                            "verified": ratio <= SYMMETRY_TOL})
        return out

    checked = step(len(fams) / 4 + 2, "declared symmetries (one random combination per family)", check) or []
    rng = np.random.default_rng(seed + 1)
    s = sum(c["count"] for c in checked if c["verified"])
    out: dict = {"parameters": P, "symmetries": checked, "declared": s,
                 "upper_bound": P - s if checked else P,
                 "tier": "numerical float64: symmetries checked by ||J v|| <= 1e-7 sigma_1 ||v||",
                 "lower_bound": None, "numerical_rank": None, "unexplained_kernel": None}
    rows = f(theta).numel()
    if P <= DENSE_RANK_LIMIT:
        per_input = rows // bank.shape[0]
        need_inputs = -(-P // per_input) + 1
        sigma = step(need_inputs * per_input / 8 + P / 50, f"dense Jacobian and SVD ({P} columns)",
                     lambda: _dense_sigma(stack, bank if full is None else full, need_inputs, seed))
        if sigma is not None:
            if checked:  # the families' span: count random elements of each, its rank
                G = np.array([fam["sample"](rng).numpy() for fam, c in zip(fams, checked) if c["verified"]
                              for _ in range(fam["count"])])
                span = int(np.linalg.matrix_rank(G, tol=1e-8 * np.linalg.norm(G, 2))) if len(G) else 0
                out.update({"declared_span": span, "independent": span == s})
                s = span
            rank = int((sigma > CUTOFF * sigma[0]).sum())
            out.update({"numerical_rank": rank, "lower_bound": rank, "dense_inputs": need_inputs,
                        "cutoff": CUTOFF, "smallest_kept": float(sigma[rank - 1]),
                        "largest_dropped": float(sigma[rank]) if rank < len(sigma) else None,
                        "unexplained_kernel": P - rank - s if checked else None, "upper_bound": P - s,
                        "rank_tier": f"numerical float64 (dense Jacobian on {need_inputs} inputs, "
                                     f"LAPACK SVD, cutoff {CUTOFF:g} sigma_1)"})
            return out
    m = min(out["upper_bound"], LOWER_BOUND_DIRECTIONS)
    per_input = rows // bank.shape[0]
    inputs = max(bank.shape[0], -(-(m + m // 8) // per_input))
    def lower():
        from torch.func import vmap

        g = torch.Generator().manual_seed(seed + 7)
        big = _extend(torch, full if full is not None else bank, inputs, seed)
        fb = stack.forward(big)
        # streamed: DIRECTION_CHUNK random directions at a time, only their images J W kept (m x rows);
        # the m x P direction matrix itself (9.8 GB at P = 1.2 million, m = 1024) is never formed
        JW = torch.cat([vmap(lambda v: jvp(fb, (theta,), (v,))[1])(
            torch.randn(min(DIRECTION_CHUNK, m - j), P, generator=g, dtype=theta.dtype))
            for j in range(0, m, DIRECTION_CHUNK)])
        sv = torch.linalg.svdvals(JW)
        return int((sv > CUTOFF * sv[0]).sum())

    bound = step(m * inputs / bank.shape[0] / 8 + m * m * inputs * per_input / 2e9,
                 f"rank on {m} random directions (a lower bound)", lower)
    if bound is not None:
        out["lower_bound"] = bound
        out["rank_tier"] = (f"numerical float64 (53-bit floats, singular values above {CUTOFF:g} sigma_1; NOT "
                            f"certified): rank of J on {m} random directions over {inputs} inputs, a lower bound "
                            f"up to rounding; the dense rank needs all {P} columns, beyond the dense limit "
                            f"{DENSE_RANK_LIMIT}; the certified tier bounds the rank on the layer kinds")
    return out


def _extend(torch, bank, inputs: int, seed: int):
    """The first ``inputs`` probe inputs; if there are fewer, N(0, 1) ones at their scale after them."""
    if bank.shape[0] < inputs:
        g = torch.Generator().manual_seed(seed + 11)
        extra = torch.randn(inputs - bank.shape[0], *bank.shape[1:], generator=g, dtype=bank.dtype)
        bank = torch.cat([bank, extra * bank.std()])
    return bank[:inputs]


def _dense_sigma(stack: TorchStack, bank, inputs: int, seed: int) -> np.ndarray:
    """Singular values of the dense float64 Jacobian on ``inputs`` probe inputs (the bank, extended
    by N(0, 1) inputs at its scale if it is shorter)."""
    torch = stack.torch
    from torch.func import jacfwd, jacrev

    if bank.shape[0] < inputs:
        g = torch.Generator().manual_seed(seed + 11)
        extra = torch.randn(inputs - bank.shape[0], *bank.shape[1:], generator=g, dtype=bank.dtype)
        bank = torch.cat([bank, extra * bank.std()])
    bank = bank[:inputs]
    rows = []
    jac = jacrev if bank[0].numel() < stack.size else jacfwd
    for b in range(inputs):
        x = bank[b: b + 1].to(stack.dtype)
        rows.append(jac(lambda th: stack.run(th, x).reshape(-1))(stack.theta))
    J = torch.cat(rows).numpy()
    return np.linalg.svd(J, compute_uv=False)
