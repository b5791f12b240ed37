r"""Beyond the paper: the audit of a real transformer reads the model in the file, and says what it computed.

No theorem of the paper is about reading a state dict; this script checks the audit
(:mod:`symattn.audit`) on small in-memory models. (1) A 12-layer post-norm encoder state dict
(NumPy arrays, the names of ``nn.TransformerEncoder``: ``layers.10`` sorts before ``layers.2``) with
a config of 2 heads is read in module order with 2 heads per layer, and its output through symattn's
layer kinds (:func:`symattn.audit.certified.block_architecture`, float64 graph) equals a direct
evaluation written here from PyTorch's formulas (multi-head softmax attention with biases,
post-norm LayerNorm, GELU MLP), token by token. (2) The audit of a one-layer encoder (PyTorch),
with a GELU MLP and with a ReLU MLP: its certified rank lower bound (singular values of the
Jacobian in binary64 balls bounded below; for ReLU where every pre-activation is certified nonzero)
is at most the float64 rank of the Jacobian that ``torch.func.jacrev`` gives of PyTorch's own
modules here, which is at most the declared symmetries' upper bound (with ReLU, the rescaling of
each hidden unit among them), and here the certified bound reaches the upper bound: the rank is
determined; the numerical tiers are labelled numerical, the certified one certified. (3) A bounded
step is stopped at its limit, and a memory limit below the audit's estimate is refused before
anything runs. (4) A 2-layer Llama-style decoder (RMSNorm, rotary positions, 4 query heads sharing
2 key/value heads, SwiGLU) read from a Hugging Face config and state dict (a config without
``num_key_value_heads`` is read as multi-head attention, the families' default): the layers the audit
rebuilds from symattn's parts (:mod:`symattn.audit.decoder`) compute a direct evaluation written here
from the Llama formulas (``repeat_kv``, ``rotate_half``), token by token; each query head's module (where
the per-head figures are taken) holds exactly the weights its own term depends on; its declared symmetries (the
rotary query/key gauge per KV head, the value/output gauge shared by each group, the RMSNorm gains
folded into the next linear maps, the SwiGLU up/down scaling) are kernel directions of the Jacobian of
those layers, its discrete ones (permutations) keep the outputs, and a declaration that is not a
symmetry (the full query/key gauge of a head without positions) is not.
"""

from __future__ import annotations

import math

import numpy as np

from symattn.audit import audit, from_state_dict
from symattn.audit.certified import block_architecture, block_point
from symattn.audit.budget import OverBudget, bounded
from symattn.audit.readers import parse_config
from symattn.core.algebras import Float64
from symattn.core.errors import SymattnError
from symattn.model.network import evaluate, native_network
from symattn.render.derivation import Derivation
from symattn.theorems.registry import main_for

NAME = "audit-reads-the-model"
STATEMENT = "Beyond the paper: the audit reads the model in the file and labels what it computed"
KIND = "numerical"

E, H, FF, N, LAYERS = 4, 2, 3, 3, 12


def _state(rng: np.random.Generator, layers: int) -> dict:
    """A post-norm encoder state dict in PyTorch's names and module order (NumPy arrays)."""
    sd = {}
    for i in range(layers):
        p = f"layers.{i}."
        sd[p + "self_attn.in_proj_weight"] = rng.normal(size=(3 * E, E)) * 0.6
        sd[p + "self_attn.in_proj_bias"] = rng.normal(size=3 * E) * 0.1
        sd[p + "self_attn.out_proj.weight"] = rng.normal(size=(E, E)) * 0.6
        sd[p + "self_attn.out_proj.bias"] = rng.normal(size=E) * 0.1
        sd[p + "linear1.weight"] = rng.normal(size=(FF, E)) * 0.6
        sd[p + "linear1.bias"] = rng.normal(size=FF) * 0.1
        sd[p + "linear2.weight"] = rng.normal(size=(E, FF)) * 0.6
        sd[p + "linear2.bias"] = rng.normal(size=E) * 0.1
        for j in (1, 2):
            sd[p + f"norm{j}.weight"] = 1 + 0.2 * rng.normal(size=E)
            sd[p + f"norm{j}.bias"] = 0.1 * rng.normal(size=E)
    return sd


def direct(sd: dict, layers: int, x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """The encoder from PyTorch's formulas, tokens as rows, layer by layer in module order."""
    def ln(y, g, b):
        m = y.mean(axis=1, keepdims=True)
        v = ((y - m) ** 2).mean(axis=1, keepdims=True)
        return (y - m) / np.sqrt(v + eps) * g + b

    gelu = np.vectorize(lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))))
    e = E // H
    for i in range(layers):
        p = f"layers.{i}."
        W, b = sd[p + "self_attn.in_proj_weight"], sd[p + "self_attn.in_proj_bias"]
        q, k, v = (x @ W[j * E:(j + 1) * E].T + b[j * E:(j + 1) * E] for j in range(3))
        heads = []
        for h in range(H):
            c = slice(h * e, (h + 1) * e)
            s = q[:, c] @ k[:, c].T / math.sqrt(e)
            a = np.exp(s - s.max(axis=1, keepdims=True))
            heads.append((a / a.sum(axis=1, keepdims=True)) @ v[:, c])
        att = np.concatenate(heads, axis=1) @ sd[p + "self_attn.out_proj.weight"].T + sd[p + "self_attn.out_proj.bias"]
        y = ln(x + att, sd[p + "norm1.weight"], sd[p + "norm1.bias"])
        f = gelu(y @ sd[p + "linear1.weight"].T + sd[p + "linear1.bias"]) @ sd[p + "linear2.weight"].T
        x = ln(y + f + sd[p + "linear2.bias"], sd[p + "norm2.weight"], sd[p + "norm2.bias"])
    return x


def run(full: bool = False) -> Derivation:
    der = Derivation("n5_audit", STATEMENT,
                     "The audit reads layers in module order with the config's heads, its layer kinds compute "
                     "the file's model, its certified bound lies below independent upper bounds, its labels "
                     "match its computations, and its budgets are enforced.", KIND)
    rng = np.random.default_rng(24)
    config = parse_config({"nhead": H, "norm_first": False, "activation": "gelu"}, "the proof's config")
    # (1) reading: module order, heads, and the forward against PyTorch's formulas
    sd = _state(rng, LAYERS)
    model = from_state_dict(sd, tokens=N, config=config)
    der.check("layers read in module order (layers.0 .. layers.11, not sorted names)",
              [b.name for b in model.transformer_layers], [f"layers.{i}" for i in range(LAYERS)])
    der.check("the head count from the config", [b.attention.heads for b in model.transformer_layers], [H] * LAYERS)
    arch, reasons = block_architecture(model)
    der.check("every part has a layer kind", reasons, [])
    x = rng.normal(size=(N, E))
    values = {k: np.vectorize(float, otypes=[float])(v) for k, v in block_point(model, arch).items()}
    values["X"] = x.T[None]
    got = np.asarray(evaluate(native_network(arch), Float64(), values)["F"][0], dtype=float).T
    diff = float(np.abs(got - direct(sd, LAYERS, x)).max())
    der.show(f"Twelve post-norm layers of width ${E}$, ${H}$ heads, MLP width ${FF}$ (GELU), $n = {N}$: the "
             f"first output token through the layer kinds (float64), and its largest difference from the formulas:",
             [got[0].round(6).tolist(), f"{diff:.1e}"])
    der.check("the audit's layer kinds compute the file's model (float64, below 1e-10)", diff < 1e-10, True)
    der.case(f"a {LAYERS}-layer post-norm encoder state dict with a config ({H} heads, GELU MLP): reading and forward")
    # (2) the audit of a one-layer encoder: bounds in order, labels honest
    one = from_state_dict(_state(rng, 1), tokens=N, config=config)
    try:
        import torch
    except ImportError:  # pragma: no cover - the numerical tiers need PyTorch
        der.step("PyTorch is not installed: the audit's tiers on PyTorch's modules are not checked")
        torch = None
    if torch is not None:
        from symattn.audit.modules import TorchStack

        relu = from_state_dict(_state(np.random.default_rng(25), 1), tokens=N,
                               config=parse_config({"nhead": H, "norm_first": False, "activation": "relu"},
                                                   "the proof's config"))
        rows = []
        for name, m in (("GELU", one), ("ReLU", relu)):
            report = audit(m, budget=20)
            c = report.certified
            der.check(f"the certified tier ran ({name})", c is not None, True, note=report.tiers.get("certified", ""))
            lb, upper = c["rank_lower_bound"]["value"], c["symmetries"]["upper_bound"]
            st = TorchStack(m)
            bank = torch.tensor(np.random.default_rng(5).normal(size=(40, N, E)))
            J = torch.func.jacrev(lambda th: st.run(th, bank).reshape(-1))(st.theta).numpy()
            sv = np.linalg.svd(J, compute_uv=False)
            rank64 = int((sv > 1e-10 * sv[0]).sum())
            rows.append([name, c["parameters"], lb, rank64, upper])
            der.check(f"certified lower bound <= float64 rank <= declared-symmetry upper bound ({name})",
                      lb <= rank64 <= upper and lb > 0, True)
            der.check(f"the certified lower bound reaches the declared symmetries' upper bound ({name}): "
                      f"the rank is determined", (lb == upper, c["determined"]), (True, True))
            mods = report.modules
            labels = [mods["tier"], mods["dimension"]["tier"], mods["dimension"].get("rank_tier") or "numerical"]
            der.check(f"the tiers on PyTorch's modules are labelled numerical ({name})",
                      [x.split(" ")[0] for x in labels], ["numerical"] * 3)
            der.check(f"the certified tier is labelled certified ({name})", report.tiers["certified"].split(" ")[0],
                      "certified")
            kinds = c["symmetries"]["kinds"]
            der.show(f"Declared symmetries of the layer kinds at the model's point ({name}), by kind:",
                     [f"{k}: {v}" for k, v in kinds.items()])
        der.check("the ReLU rescalings are declared, one per hidden unit", kinds.get("ReLU rescaling"), FF)
        der.show_table("One layer: the certified lower bound, the float64 rank of the Jacobian of PyTorch's "
                       "modules on 40 inputs, and the declared symmetries' upper bound:",
                       ["MLP", "parameters", "certified", "float64", "upper"], rows)
        try:
            audit(one, budget=60, max_memory=2 ** 20)
            refused = False
        except SymattnError as exc:
            refused = "--max-memory" in str(exc)
        der.check("a memory limit below the estimate is refused before anything runs", refused, True)
        der.case("the audit of a one-layer encoder (GELU and ReLU MLP): bounds, labels and the memory limit")
    # (3) a bounded step stops at its limit
    def runaway() -> None:
        while True:
            pass
    try:
        bounded(runaway, 0.3, "a runaway loop")
        stopped = False
    except OverBudget as exc:  # at its CPU seconds, not the wall clock's safety cap
        stopped = "stopped at the budget" in str(exc)
    der.check("a bounded step is stopped at its limit (0.3 CPU seconds, a runaway loop)", stopped, True)
    der.case("a bounded step of the audit's budget")
    # (4) a Llama-style decoder: reading, forward against the formulas, symmetries
    if torch is not None:
        _llama_case(der, torch)
    return der


LLAMA = dict(E=16, H=4, G=2, FF=12, LAYERS=2, BASE=10000.0, EPS=1e-6)


def _llama_state(rng: np.random.Generator) -> dict:
    E, H, G, FF = (LLAMA[k] for k in ("E", "H", "G", "FF"))
    e = E // H
    sd = {}
    for i in range(LLAMA["LAYERS"]):
        p = f"model.layers.{i}."
        sd.update({p + "input_layernorm.weight": 1 + 0.1 * rng.normal(size=E),
                   p + "self_attn.q_proj.weight": 0.3 * rng.normal(size=(H * e, E)),
                   p + "self_attn.k_proj.weight": 0.3 * rng.normal(size=(G * e, E)),
                   p + "self_attn.v_proj.weight": 0.3 * rng.normal(size=(G * e, E)),
                   p + "self_attn.o_proj.weight": 0.3 * rng.normal(size=(E, H * e)),
                   p + "post_attention_layernorm.weight": 1 + 0.1 * rng.normal(size=E),
                   p + "mlp.gate_proj.weight": 0.3 * rng.normal(size=(FF, E)),
                   p + "mlp.up_proj.weight": 0.3 * rng.normal(size=(FF, E)),
                   p + "mlp.down_proj.weight": 0.3 * rng.normal(size=(E, FF))})
    sd["model.norm.weight"] = 1 + 0.1 * rng.normal(size=E)
    return sd


def llama_direct(sd: dict, x: np.ndarray) -> np.ndarray:
    """The Llama formulas, written here: ``x + o(attn(rms(x)))`` then ``+ down(silu(gate y) * up y)``; queries
    and keys rotated by ``rotate_half`` with ``cos, sin`` of ``position * base^(-2j/e)``; key/value head ``h //
    (H/G)`` for query head ``h`` (``repeat_kv``); causal softmax; tokens as rows."""
    E, H, G = LLAMA["E"], LLAMA["H"], LLAMA["G"]
    e, n = E // H, x.shape[0]

    def rms(y, g):
        return g * y / np.sqrt((y * y).mean(-1, keepdims=True) + LLAMA["EPS"])

    inv = 1.0 / LLAMA["BASE"] ** (np.arange(0, e, 2) / e)
    ang = np.arange(n)[:, None] * np.concatenate([inv, inv])[None, :]

    def rope(t):
        return t * np.cos(ang) + np.concatenate([-t[:, e // 2:], t[:, :e // 2]], axis=1) * np.sin(ang)

    for i in range(LLAMA["LAYERS"]):
        p = f"model.layers.{i}."
        h = rms(x, sd[p + "input_layernorm.weight"])
        q, k, v = (h @ sd[p + f"self_attn.{r}_proj.weight"].T for r in "qkv")
        ctx = np.zeros((n, H * e))
        for j in range(H):
            g = j // (H // G)
            s = rope(q[:, j * e:(j + 1) * e]) @ rope(k[:, g * e:(g + 1) * e]).T / math.sqrt(e)
            s = s + np.triu(np.full((n, n), -np.inf), 1)
            a = np.exp(s - s.max(1, keepdims=True))
            ctx[:, j * e:(j + 1) * e] = (a / a.sum(1, keepdims=True)) @ v[:, g * e:(g + 1) * e]
        x = x + ctx @ sd[p + "self_attn.o_proj.weight"].T
        y = rms(x, sd[p + "post_attention_layernorm.weight"])
        gate = y @ sd[p + "mlp.gate_proj.weight"].T
        x = x + ((gate / (1 + np.exp(-gate))) * (y @ sd[p + "mlp.up_proj.weight"].T)) @ sd[p + "mlp.down_proj.weight"].T
    return rms(x, sd["model.norm.weight"])


def _llama_case(der: Derivation, torch) -> None:
    import dataclasses
    import json
    import tempfile
    from pathlib import Path

    from torch.func import jvp

    from symattn.audit import decoder
    from symattn.audit.decoder import discrete_checks
    from symattn.audit.hf import _load_decoder, read_hf_config
    from symattn.audit.modules import TorchStack, named_modules, symmetry_families

    E, H, G, FF, D = (LLAMA[k] for k in ("E", "H", "G", "FF", "LAYERS"))
    config = {"model_type": "llama", "hidden_size": E, "num_attention_heads": H, "num_key_value_heads": G,
              "intermediate_size": FF, "num_hidden_layers": D, "hidden_act": "silu", "rms_norm_eps": LLAMA["EPS"],
              "rope_parameters": {"rope_theta": LLAMA["BASE"], "rope_type": "default"}}
    with tempfile.TemporaryDirectory() as d:
        Path(d, "config.json").write_text(json.dumps({k: v for k, v in config.items() if k != "num_key_value_heads"}))
        mha = read_hf_config(Path(d))
        Path(d, "config.json").write_text(json.dumps(config))
        cfg = read_hf_config(Path(d))
    der.check("a config without a key-value head count is read as multi-head attention (one KV head per query head, "
              "the families' documented default)", (mha["heads"], mha["kv_heads"]), (H, H))
    sd = _llama_state(np.random.default_rng(26))
    model = _load_decoder(Path("llama-proof"), cfg, sd, ["the proof's state dict"], N + 2)
    der.check("read as decoder layers with 4 query heads, 2 KV heads, rotary, RMSNorm and SwiGLU",
              [(b.kind, b.attention.heads, b.attention.kv, b.attention.rotary is not None, b.norms[0].kind,
                b.mlp.gate is not None) for b in model.transformer_layers],
              [("decoder layer", H, G, True, "rmsnorm", True)] * D)
    stack = TorchStack(model, "float64", True)
    x = np.random.default_rng(27).normal(size=(N + 2, E))
    got = stack.layer_outputs(torch.tensor(x[None]))[-1].numpy()[0]
    diff = float(np.abs(got - llama_direct(sd, x)).max())
    der.show(f"A Llama-style decoder, {D} layers of width ${E}$, ${H}$ query heads sharing ${G}$ KV heads, SwiGLU "
             f"${FF}$, $n = {N + 2}$: the first output token as the audit rebuilds it from symattn's parts (float64), "
             f"and its largest difference from the Llama formulas written here:", [got[0].round(6).tolist(), f"{diff:.1e}"])
    der.check("the audit's decoder layers compute the Llama formulas (float64, below 1e-12)", diff < 1e-12, True)
    # the per-head modules (where the audit's per-head figures are taken) hold exactly the q, k, v and o entries
    # their own head's term depends on: the support of the gradient of that term alone (autograd, float64)
    layer = stack.modules[0]
    weights = {r: stack.where(f"0.{r}.weight") for r in "qkvo"}
    xin = torch.tensor(x[None])
    off = []
    for mod in (m for m in named_modules(stack) if m["kind"] == "head" and m["layer"] == 1):
        layer.zero_grad()
        layer.attention(xin, True, only=mod["head"] - 1).sum().backward()
        support = {weights[r].start + int(j) for r in "qkvo"
                   for j in torch.nonzero(getattr(layer, r).weight.grad.reshape(-1)).reshape(-1)}
        listed = {c for c in mod["columns"] + mod["value"] if any(w.start <= c < w.stop for w in weights.values())}
        if support != listed:
            off.append(mod["name"])
    layer.zero_grad()
    der.check("each query head's module (its per-head figures) holds exactly the $W_q, W_k, W_v, W_o$ entries its "
              "own term depends on (the support of that term's gradient)", off, [])
    bank = torch.tensor(np.random.default_rng(28).normal(size=(3, N + 2, E)))
    f = stack.forward(bank)
    scale = float(torch.linalg.vector_norm(f(stack.theta)))
    rng = np.random.default_rng(29)

    def residuals(fams):
        out = []
        for fam in fams:
            v = fam["sample"](rng)
            Jv = jvp(f, (stack.theta,), (v,))[1]
            out.append((fam["name"], fam["count"],
                        float(torch.linalg.vector_norm(Jv) / (scale * torch.linalg.vector_norm(v)))))
        return out

    rows = residuals(symmetry_families(stack))
    der.show_table("Declared symmetries of the decoder layers, each a random element checked as a kernel direction "
                   "(||J v|| / (||f|| ||v||), float64):", ["family", "directions", "residual"],
                   [[name, c, f"{r:.1e}"] for name, c, r in rows])
    der.check("every declared symmetry of the decoder layers is a kernel direction (float64, below 1e-12)",
              all(r < 1e-12 for _, _, r in rows), True)
    der.check("their dimensions per layer: rotary gauge $e G$, value/output gauge $e^2 G$, two gains $E$ each, SwiGLU $F$",
              sorted(c for name, c, _ in rows if name.startswith("layer 1")),
              sorted([E // H * G, (E // H) ** 2 * G, E, E, FF]))
    disc = discrete_checks(stack, bank)
    der.check("the discrete symmetries (SwiGLU units, query heads in a group, KV groups) keep the outputs to "
              "12 digits, and the rotary gauge commutes with the rotations (exact)", all(c["verified"] for c in disc),
              True)
    real = decoder.decoder_families

    def plain(stack_, i, block, add, vec, theta):  # the gauge of a head without positions, declared for rotary heads
        real(stack_, i, dataclasses.replace(block, attention=dataclasses.replace(block.attention, rotary=None)),
             add, vec, theta)
    decoder.decoder_families = plain
    try:
        wrong = [r for name, _, r in residuals(symmetry_families(stack)) if "query/key gauge" in name]
    finally:
        decoder.decoder_families = real
    der.check("the full query/key gauge $(A, A^{-T})$ is not a symmetry of a rotary head (residual above 1e-6)",
              min(wrong) > 1e-6, True)
    der.case(f"a {D}-layer Llama-style decoder (RMSNorm, rotary, grouped-query attention, SwiGLU): reading, "
             "forward against the formulas, declared and discrete symmetries")


if __name__ == "__main__":
    raise SystemExit(main_for(__name__))
