"""The forward check: the audit proves it read the file right before it prints any figure.

The model the audit rebuilt (:class:`~symattn.audit.modules.TorchStack`, from the
blocks it read) is run on seeded N(0, 1) tokens beside the file's own model,
layer by layer, and each head of the audit's reading (the
:class:`~symattn.audit.model.Head` every per-head figure is computed from) beside
a per-head forward pass of the file's own attention module (its other heads'
output columns left out). The file's own model is, in this order:

* a Hugging Face folder with ``transformers`` installed: ``AutoModel`` loaded by
  ``transformers`` itself from the folder (``local_files_only``, float64, PyTorch's
  SDPA attention), so neither symattn's reader nor its mapping of the names is
  between the file and the reference;
* a Hugging Face folder without ``transformers``: the naive reference of the
  family's documented formula (LayerNorm, softmax attention, the MLP, the
  residual placement; ``Conv1D`` as ``x W + b``) evaluated in NumPy on the
  folder's tensors as stored, and the output says so;
* a PyTorch state dict or modules: the naive reference of
  ``nn.TransformerEncoderLayer``'s formula on the stored arrays, and per head
  ``torch.nn.MultiheadAttention`` built from the stored ``in_proj_weight`` and
  ``out_proj.weight``.

Agreement is required to :data:`TOLERANCE` relative to the output's scale;
a mismatch raises :class:`~symattn.core.errors.CheckFailed` (exit 1) naming
the first module that differs.
"""

from __future__ import annotations

import math

import numpy as np

from symattn.core.errors import CheckFailed
from symattn.audit.decoder import _naive_norm, naive_decoder_layer
from symattn.audit.model import ImportedModel

__all__ = ["TOLERANCE", "ROTARY_TOLERANCE", "forward_check", "naive_layer"]

#: Largest relative difference ``max |rebuilt - reference| / max(1, max |reference|)`` accepted (float64).
TOLERANCE = 1e-8
#: Probe inputs of the check.
PROBES = 2
#: Largest difference accepted between the audit's float64 rotary tables (cos, sin) and ``transformers``' own
#: ``rotary_emb`` (computed in float32 there: frequencies and angles rounded to 24 bits).
ROTARY_TOLERANCE = 1e-5
#: The tolerance against ``transformers``' own decoder (Llama, Mistral, Qwen2), whose RMSNorm computes in
#: float32 inside a float64 model; the same modules are then also checked against the naive reference of
#: their formula on the stored tensors at :data:`TOLERANCE`.
FLOAT32_INTERNALS_TOLERANCE = 1e-5


def _layernorm(x: np.ndarray, gain, bias, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    return y * (1.0 if gain is None else gain) + (0.0 if bias is None else bias)


def _act(name: str, x: np.ndarray) -> np.ndarray:
    if name == "relu":
        return np.maximum(x, 0.0)
    if name == "gelu":
        erf = np.vectorize(math.erf, otypes=[np.float64])
        return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))
    if name == "gelu_tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    if name == "tanh":
        return np.tanh(x)
    if name == "silu":
        return x / (1.0 + np.exp(-x))
    raise ValueError(name)


def _softmax(s: np.ndarray) -> np.ndarray:
    s = s - s.max(-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(-1, keepdims=True)


def _affine(x: np.ndarray, w: np.ndarray, b, conv1d: bool) -> np.ndarray:
    """``Linear`` (``x W^T + b``, ``W`` stored ``(out, in)``) or ``Conv1D`` (``x W + b``, ``(in, out)``)."""
    y = x @ (w if conv1d else w.T)
    return y if b is None else y + b


def _attention(x: np.ndarray, p: dict, heads: int, causal: bool, conv1d: bool, only: int | None = None):
    """Multi-head softmax self-attention of ``x`` (``(B, n, E)``); ``only``: head ``only``'s term alone
    through the output projection, without its bias."""
    E = x.shape[-1]
    if "qkv" in p:
        qkv = _affine(x, p["qkv"], p.get("qkv.bias"), conv1d)
        q, k, v = qkv[..., :E], qkv[..., E:2 * E], qkv[..., 2 * E:]
    else:
        q, k, v = (_affine(x, p[r], p.get(r + ".bias"), conv1d) for r in "qkv")
    dh, n = E // heads, x.shape[-2]
    mask = np.triu(np.full((n, n), -np.inf), 1) if causal else 0.0
    ctx = np.zeros_like(q)
    for h in range(heads) if only is None else [only]:
        cols = slice(h * dh, (h + 1) * dh)
        a = _softmax(q[..., cols] @ np.swapaxes(k[..., cols], -1, -2) / math.sqrt(dh) + mask)
        ctx[..., cols] = a @ v[..., cols]
    return _affine(ctx, p["o"], None if only is not None else p.get("o.bias"), conv1d)


def naive_layer(x: np.ndarray, p: dict, heads: int, norm_first: bool, activation: str, eps: float,
                causal: bool, conv1d: bool = False) -> np.ndarray:
    """One transformer encoder layer by its formula (NumPy, float64): the reference of the forward check.

    Parameters
    ----------
    x : numpy.ndarray
        Tokens as rows, ``(B, n, E)``.
    p : dict
        The stored arrays by part: ``q, k, v`` (or the fused ``qkv``), ``o``,
        ``fc1``, ``fc2``, ``norm1``, ``norm2``, each with an optional ``.bias``.
    heads, norm_first, activation, eps, causal, conv1d
        The layer's architecture (``conv1d``: weights stored ``(in, out)``).

    Returns
    -------
    numpy.ndarray
        The layer's output tokens: pre-norm ``x + A(N1 x)`` then ``+ F(N2 .)``;
        post-norm ``N1(x + A x)`` then ``N2(. + F .)``.
    """
    def norm(j, y):
        return _layernorm(y, p.get(f"norm{j}"), p.get(f"norm{j}.bias"), eps)

    def mlp(y):
        return _affine(_act(activation, _affine(y, p["fc1"], p.get("fc1.bias"), conv1d)), p["fc2"],
                       p.get("fc2.bias"), conv1d)

    if norm_first:
        x = x + _attention(norm(1, x), p, heads, causal, conv1d)
        return x + mlp(norm(2, x))
    x = norm(1, x + _attention(x, p, heads, causal, conv1d))
    return norm(2, x + mlp(x))


def _stored_parts(model: ImportedModel) -> tuple[list[dict], dict | None, bool, str]:
    """Per layer the arrays as the file stores them (re-read for a Hugging Face folder), the final norm's,
    whether they are ``Conv1D``, and what they are (said in the output)."""
    if model.hf is not None:
        from pathlib import Path

        from symattn.audit.hf import read_hf_weights

        state, _ = read_hf_weights(Path(model.hf["folder"]))
        layers = []
        for names in model.hf["parts"].values():
            p = {}
            for part, module in names.items():
                p[part] = np.asarray(state[module + ".weight"], dtype=np.float64)
                if module + ".bias" in state:
                    p[part + ".bias"] = np.asarray(state[module + ".bias"], dtype=np.float64)
            layers.append(p)
        final = None
        if model.hf["final_norm"]:
            f = model.hf["final_norm"]
            final = {"norm": np.asarray(state[f + ".weight"], dtype=np.float64),
                     "norm.bias": np.asarray(state[f + ".bias"], dtype=np.float64) if f + ".bias" in state else None}
        return layers, final, bool(model.hf["conv1d"]), (
            "the naive reference of the family's formula on the folder's tensors as stored "
            "(transformers is not installed: pip install 'symattn[hf]' to check against the file's own model)")
    layers = []
    for b in model.transformer_layers:
        a = b.attention
        p = {"qkv": a.in_proj_weight, "qkv.bias": a.in_proj_bias, "o": a.out_proj_weight, "o.bias": a.out_proj_bias}
        if b.mlp is not None:
            p.update({"fc1": b.mlp.w1, "fc1.bias": b.mlp.b1, "fc2": b.mlp.w2, "fc2.bias": b.mlp.b2})
            for j, n in enumerate(b.norms, 1):
                p.update({f"norm{j}": n.gain, f"norm{j}.bias": n.bias})
        layers.append({k: v for k, v in p.items() if v is not None})
    final = None if model.final_norm is None else {"norm": model.final_norm.gain, "norm.bias": model.final_norm.bias}
    return layers, final, False, ("the naive reference of nn.TransformerEncoderLayer's formula on the stored "
                                  "arrays; per head, torch.nn.MultiheadAttention on the stored in_proj/out_proj")


def _hf_reference(model: ImportedModel, x: np.ndarray, causal: bool):
    """Layer outputs and per-head attention terms of the folder's own ``transformers`` model, or None
    when ``transformers`` is not installed."""
    try:
        import transformers
    except ImportError:
        return None
    import torch

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    hf = model.hf
    try:
        ref = transformers.AutoModel.from_pretrained(hf["folder"], local_files_only=True, trust_remote_code=False,
                                                     dtype=torch.float64, attn_implementation="sdpa")
    except Exception as exc:  # the file's own loader refused the folder: that is the check's finding
        raise CheckFailed(f"forward check: transformers {transformers.__version__} cannot load "
                          f"{hf['folder']} ({type(exc).__name__}: {str(exc)[:120]})") from None
    ref.eval()
    lists = [(n, m) for n, m in ref.named_modules() if isinstance(m, torch.nn.ModuleList)]
    if len(lists) != 1 or len(lists[0][1]) != len(model.transformer_layers):
        raise CheckFailed(f"forward check: the {type(ref).__name__} transformers builds from "
                          f"{hf['folder']} has {[len(m) for _, m in lists]} layers, the audit read "
                          f"{len(model.transformer_layers)}")
    name, layers = lists[0]
    n = x.shape[1]
    kwargs: dict = {}
    extra: dict = {}
    if causal:
        mask = torch.triu(torch.full((n, n), float("-inf"), dtype=torch.float64), 1)
        kwargs["attention_mask"] = mask[None, None].expand(x.shape[0], 1, n, n)
    rotary = model.transformer_layers[0].attention.rotary
    if rotary is not None:  # the layers take cos/sin; transformers' own (float32) tables checked against ours
        positions = torch.arange(n)[None].expand(x.shape[0], n)
        cos, sin = rotary.tables(n, torch, torch.float64)
        theirs = ref.rotary_emb(torch.as_tensor(x), positions)
        d = max(float((a[0] - b.double()).abs().max()) for a, b in zip(theirs, (cos, sin)))
        extra = {"rotary_tables_relative_difference": d, "rotary_tolerance": ROTARY_TOLERANCE}
        if not d <= ROTARY_TOLERANCE:
            raise CheckFailed(f"forward check: the rotary tables differ from transformers' own rotary_emb by {d:.2g} "
                              f"(tolerance {ROTARY_TOLERANCE:g}: transformers computes them in float32): the audit "
                              f"does not read the positions as the file's own model rotates them")
        kwargs.update(position_ids=positions, position_embeddings=(cos[None].expand(x.shape[0], n, -1),
                                                                   sin[None].expand(x.shape[0], n, -1)))
    captured: dict = {}
    hooks = []
    for i, layer in enumerate(layers):
        out_proj = _out_projection(layer)

        def grab(module, args, i=i):
            captured[i] = args[0].detach()
        hooks.append(out_proj.register_forward_pre_hook(grab))
    outs, h = [], torch.as_tensor(x)
    try:
        with torch.no_grad():
            for layer in layers:
                y = layer(h, **kwargs)
                h = y[0] if isinstance(y, tuple) else y
                outs.append((h.numpy().copy()))
            final = hf["final_norm"]
            if final is not None:
                try:
                    module = ref.get_submodule(final)
                except AttributeError:  # a task model's prefix (vit.layernorm): the base model's name
                    module = ref.get_submodule(final.rsplit(".", 1)[-1])
                h = module(h)
                outs.append(h.numpy().copy())
            heads = []
            for i, layer in enumerate(layers):
                ctx, out_proj = captured[i], _out_projection(layer)
                E, H = ctx.shape[-1], model.transformer_layers[i].attention.heads
                dh, zero = E // H, out_proj(torch.zeros_like(ctx))
                row = []
                for k in range(H):
                    keep = torch.zeros_like(ctx)
                    keep[..., k * dh:(k + 1) * dh] = ctx[..., k * dh:(k + 1) * dh]
                    row.append((out_proj(keep) - zero).numpy().copy())
                heads.append(row)
    finally:
        for hook in hooks:
            hook.remove()
    names = [f"{name}.{i}" for i in range(len(layers))] + ([hf["final_norm"]] if hf["final_norm"] else [])
    return outs, heads, names, (f"the folder's own model: transformers {transformers.__version__} "
                                f"{type(ref).__name__}.from_pretrained (float64)"), extra


def _out_projection(layer):
    """The output projection of a ``transformers`` layer's attention (the module after the heads)."""
    import torch

    for name in ("attention.output.dense", "attention.out_lin", "attn.c_proj", "attention.o_proj", "self_attn.o_proj"):
        try:
            module = layer.get_submodule(name)
        except AttributeError:
            continue
        if isinstance(module, torch.nn.Module):
            return module
    raise CheckFailed(f"forward check: no output projection found in a {type(layer).__name__}")


def _audit_head(head, bias: np.ndarray | None, h: int, x: np.ndarray, causal: bool, rotary=None) -> np.ndarray:
    """Head ``h``'s term as the audit read it: ``softmax(c (X W_q + b_q)(X W_k + b_k)^T) (X W_v + b_v) W_o[:, h]^T``,
    queries and keys rotated by position where the layer has ``rotary`` (``bias``: this head's three biases
    concatenated, or :class:`~symattn.audit.model.Attention`'s ``in_proj_bias`` without rotary and GQA)."""
    dh = head.q.shape[1]
    E = head.q.shape[0]
    if bias is not None and len(bias) == 3 * dh:
        bq, bk, bv = bias[:dh], bias[dh:2 * dh], bias[2 * dh:]
    else:
        b = (np.zeros(3 * E) if bias is None else bias)
        bq, bk, bv = (b[j * E + h * dh: j * E + (h + 1) * dh] for j in range(3))
    q = (x @ head.q + bq) * float(head.scale)
    k = x @ head.k + bk
    if rotary is not None:
        import torch

        q, k = (rotary.apply(torch.as_tensor(t), torch).numpy() for t in (q, k))
    n = x.shape[-2]
    mask = np.triu(np.full((n, n), -np.inf), 1) if causal else 0.0
    a = _softmax(q @ np.swapaxes(k, -1, -2) + mask)
    return (a @ (x @ head.v.T + bv)) @ head.v_out.T


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(1.0, float(np.abs(b).max())))


def forward_check(model: ImportedModel, seed: int = 0, causal: bool = False) -> dict:
    """Compare the audit's reading with the file's own model on seeded N(0, 1) tokens (module docstring).

    Parameters
    ----------
    model : ImportedModel
        A model with blocks (a PyTorch or Hugging Face model); bare attention
        arrays in the paper's convention have nothing to check (they are the
        model).
    seed : int
        Seed of the probe tokens.
    causal : bool
        Whether the audited map is causally masked.

    Returns
    -------
    dict
        ``reference`` (what the file's own model is), ``tolerance``,
        ``layers`` (module name, relative difference), ``heads`` (the largest
        per-head difference), ``passed`` (True).

    Raises
    ------
    CheckFailed
        A module whose output differs beyond :data:`TOLERANCE` (the first one
        is named), or a head whose term differs.
    """
    from symattn.audit.modules import TorchStack

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((PROBES, model.tokens, model.widths[0]))
    stack = TorchStack(model, "float64", causal)
    import torch

    rebuilt = [y.numpy() for y in stack.layer_outputs(torch.as_tensor(x))]
    got = _hf_reference(model, x, causal) if model.hf is not None else None
    extra: dict = {}
    decoder = any(b.decoder for b in model.transformer_layers)
    tol = TOLERANCE
    if got is not None:
        outs, heads_ref, names, reference, extra = got
        if decoder:  # transformers' RMSNorm and rotary tables run in float32: also the naive formula at TOLERANCE
            tol = FLOAT32_INTERNALS_TOLERANCE
            naive = _naive_outputs(model, x, causal)
            extra["naive_reference"] = naive[3].split(" (")[0]
            extra["naive_max_relative_difference"] = _compare(rebuilt, naive[0], naive[2], naive[3], TOLERANCE)
    else:
        outs, heads_ref, names, reference = _naive_outputs(model, x, causal)
    layer_rows: list = []
    _compare(rebuilt, outs, names, reference, tol, layer_rows)
    # per head: the audit's reading of each head against the file's own attention module, head by head
    h = x
    worst = 0.0
    for i, b in enumerate(model.transformer_layers):
        a = b.attention
        n1 = b.norms[0] if b.norms else None
        attn_in = (h if not b.norm_first else _layernorm(h, n1.gain, n1.bias, n1.eps) if n1.kind == "layernorm"
                   else _naive_norm(h, n1.gain, n1.bias, n1.eps, n1.kind))
        checks = [(heads_ref[i], tol)]
        if b.decoder:  # the grouped-query part's naive formula, at float64's tolerance
            checks = [(r, t) for r, t in checks if r is not None] + [(_gqa_heads(b, attn_in, causal), TOLERANCE)]
        elif heads_ref[i] is None:
            checks = [(_mha_heads(a, attn_in, causal), tol)]
        for k, head in enumerate(model.layers[i]):
            mine = _audit_head(head, _head_bias(a, k), k, attn_in, causal, a.rotary)
            for ref, t in checks:
                d = _relative(mine, ref[k])
                worst = max(worst, d) if t == tol else worst
                if not d <= t:
                    raise CheckFailed(f"forward check: {a.name} head {k + 1}: the audit's reading differs from "
                                      f"the file's own attention module run on that head alone by {d:.2g} "
                                      f"(relative, tolerance {t:g}): the per-head figures would describe another "
                                      f"head")
        h = outs[i]
    return {"reference": reference, "tolerance": tol, "probes": f"{PROBES} x N(0, 1) tokens, seed {seed}",
            "layers": layer_rows, "heads_max_relative_difference": worst, "passed": True, **extra}


def _naive_outputs(model: ImportedModel, x: np.ndarray, causal: bool) -> tuple[list, list, list, str]:
    """Each module's output by the naive reference of its formula on the stored arrays (module docstring)."""
    layers, final, conv1d, reference = _stored_parts(model)
    outs, heads_ref, names, h = [], [], [], x
    for b, p in zip(model.transformer_layers, layers):
        a = b.attention
        if b.mlp is None:
            y = _attention(h, p, a.heads, causal, conv1d)
        elif b.decoder:
            y = naive_decoder_layer(h, p, b, causal)
        else:
            y = naive_layer(h, p, a.heads, bool(b.norm_first), b.mlp.activation, b.norms[0].eps, causal, conv1d)
        heads_ref.append(None)
        outs.append(y)
        names.append(b.name)
        h = y
    if final is not None:
        f = model.final_norm
        outs.append(_layernorm(h, final["norm"], final.get("norm.bias"), f.eps) if f.kind == "layernorm" else
                    _naive_norm(h, final["norm"], final.get("norm.bias"), f.eps, f.kind))
        names.append(f.name)
    return outs, heads_ref, names, reference


def _compare(rebuilt: list, outs: list, names: list, reference: str, tol: float, rows: list | None = None) -> float:
    """The largest relative difference of the rebuilt modules' outputs from the reference's; the first beyond
    ``tol`` is named in a :class:`~symattn.core.errors.CheckFailed`."""
    worst = 0.0
    for name, mine, theirs in zip(names, rebuilt, outs):
        d = _relative(mine, theirs)
        worst = max(worst, d)
        if rows is not None:
            rows.append({"module": name, "relative_difference": d})
        if not d <= tol:
            raise CheckFailed(f"forward check: {name} differs from {reference.split(':')[0]} by {d:.2g} "
                              f"(relative, tolerance {tol:g}): the audit did not read this file as its "
                              f"own model computes it")
    if len(rebuilt) != len(outs):
        raise CheckFailed(f"forward check: the audit rebuilt {len(rebuilt)} modules, the reference has {len(outs)}")
    return worst


def _head_bias(a, k: int) -> np.ndarray | None:
    """Query head ``k``'s ``(b_q, b_k, b_v)`` (its key/value head's for ``b_k``, ``b_v``), concatenated, or None."""
    if a.in_proj_bias is None:
        return None
    if a.kv == a.heads and a.rotary is None:
        return a.in_proj_bias  # the MultiheadAttention layout: sliced by _audit_head
    from symattn.model.parts.gqa import GroupedQueryAttention

    e, E = a.head_dim, a.heads * a.head_dim
    g = GroupedQueryAttention(a.heads, a.kv).group(k)
    b = a.in_proj_bias
    kv = a.kv * e
    return np.concatenate([b[k * e:(k + 1) * e], b[E + g * e:E + (g + 1) * e], b[E + kv + g * e:E + kv + (g + 1) * e]])


def _gqa_heads(block, x: np.ndarray, causal: bool) -> list[np.ndarray]:
    """Each query head's term by the grouped-query part's naive formula on the stored arrays (no output bias)."""
    from symattn.audit.decoder import split_qkv
    from symattn.model.parts.gqa import GroupedQueryAttention

    a = block.attention
    wq, wk, wv, rows = split_qkv(block)
    p = {"q": wq, "k": wk, "v": wv, "o": a.out_proj_weight}
    if a.in_proj_bias is not None:
        p.update({f"{r}.bias": a.in_proj_bias[s] for r, s in zip("qkv", rows)})
    part = GroupedQueryAttention(a.heads, a.kv)
    return [part.reference(x, p, a.head_dim, a.rotary, causal, only=k) for k in range(a.heads)]


def _mha_heads(a, x: np.ndarray, causal: bool) -> list[np.ndarray]:
    """Each head's term of ``torch.nn.MultiheadAttention`` built from the stored weights, output bias left out."""
    import torch

    E = a.width
    mha = torch.nn.MultiheadAttention(E, a.heads, bias=True, batch_first=True).double().eval()
    dh = E // a.heads
    n = x.shape[-2]
    mask = torch.nn.Transformer.generate_square_subsequent_mask(n, dtype=torch.float64) if causal else None
    out = []
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.as_tensor(a.in_proj_weight))
        mha.in_proj_bias.copy_(torch.zeros(3 * E, dtype=torch.float64) if a.in_proj_bias is None
                               else torch.as_tensor(a.in_proj_bias))
        mha.out_proj.bias.zero_()
        xt = torch.as_tensor(x)
        for k in range(a.heads):
            w = torch.zeros(E, E, dtype=torch.float64)
            w[:, k * dh:(k + 1) * dh] = torch.as_tensor(a.out_proj_weight[:, k * dh:(k + 1) * dh])
            mha.out_proj.weight.copy_(w)
            out.append(mha(xt, xt, xt, need_weights=False, attn_mask=mask)[0].numpy().copy())
    return out
