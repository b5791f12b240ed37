"""Hugging Face model folders: ``config.json`` and the weights, read as the family the config names.

A folder holds ``config.json`` and ``model.safetensors`` (or the shards listed
by ``model.safetensors.index.json``, or ``pytorch_model.bin``, read only through
``torch.load(weights_only=True)``). The config is parsed by symattn's own
JSON reader (size limit, no key twice) and the tensors by symattn's own
``.safetensors`` reader (:mod:`symattn.audit.readers`); ``transformers`` is
never needed to read a folder (it is used, where installed, by the forward
check of :mod:`symattn.audit.forward`).

The architecture comes from ``config.json`` alone, never guessed: its
``model_type`` names the family, and the family's documented config keys give
the heads, the width, the norm ``eps``, the activation and whether attention
is causal; the placement of the norms is the family's (:data:`FAMILIES`).
Covered families:

========== ============================ ============ ========== ===========
model_type layers                       norms        activation causal
========== ============================ ============ ========== ===========
bert       ``encoder.layer.i``          post-norm    hidden_act no
roberta    ``encoder.layer.i``          post-norm    hidden_act no
distilbert ``transformer.layer.i``      post-norm    activation no
gpt2       ``h.i`` (Conv1D, fused qkv)  pre-norm     gelu_new   yes
vit        ``encoder.layer.i``          pre-norm     hidden_act no
llama      ``layers.i`` (RMSNorm, GQA)  pre-norm     silu       yes
mistral    ``layers.i`` (RMSNorm, GQA)  pre-norm     silu       yes
qwen2      ``layers.i`` (q/k/v biases)  pre-norm     silu       yes
========== ============================ ============ ========== ===========

GPT-2's ``Conv1D`` weights are transposed on reading (``c_attn`` is the fused ``[W_q; W_k; W_v]``);
an encoder layer maps onto the parts of an ``nn.TransformerEncoderLayer``, a decoder layer onto those
of :mod:`symattn.audit.decoder` (RMSNorm, rotary GQA, SwiGLU). What a reading does not model (rotary
scaling, partial rotary, MLP biases, sliding windows, ...) and any other ``model_type`` are refused
by name; *What the audit reads and computes* (``docs/audit_reference.rst``) has the details.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from symattn.core.errors import SymattnError
from symattn.audit.model import ImportedModel, Norm
from symattn.audit.readers import (LIMITS, _config_value, check_count, check_tokens, parse_json, read_safetensors,
                                   read_torch)

__all__ = ["FAMILIES", "UNSUPPORTED", "Family", "is_hf_folder", "read_hf_config", "read_hf_weights",
           "load_hf_folder"]

#: Bytes of ``config.json`` or an index file read at most.
MAX_CONFIG_BYTES = 4 * 2 ** 20


@dataclass(frozen=True)
class Family:
    """How one ``model_type`` stores its layers (names relative to a layer's prefix) and reads its config.

    ``keys`` maps a part (``q, k, v, o, qkv, norm1, norm2, fc1, fc2``) to its
    module name(s) in the file, the first present one taken; ``conv1d`` says
    the weights are ``Conv1D``'s ``(in, out)``; ``config`` maps a property to
    the config keys that give it; ``fixed`` gives the properties the family
    fixes in its code (not in its config).
    """

    name: str
    layer: str
    keys: Mapping[str, tuple[str, ...]]
    config: Mapping[str, tuple[str, ...]]
    norm_first: bool
    causal: bool
    final_norm: tuple[str, ...] = ()
    conv1d: bool = False
    fixed: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: entries of a layer that are not weights (older GPT-2 files store the causal mask as ``attn.bias``)
    buffers: tuple[str, ...] = ()
    #: the norm part's spelling (:func:`symattn.model.parts.norm_part`)
    norm_kind: str = "layernorm"
    #: a Llama-style decoder (rotary positions, grouped-query attention, SwiGLU; :mod:`symattn.audit.decoder`)
    decoder: bool = False


_BERT_KEYS = {"q": ("attention.self.query",), "k": ("attention.self.key",), "v": ("attention.self.value",),
              "o": ("attention.output.dense",), "norm1": ("attention.output.LayerNorm",),
              "fc1": ("intermediate.dense",), "fc2": ("output.dense",), "norm2": ("output.LayerNorm",)}
_BERT_CONFIG = {"width": ("hidden_size",), "layers": ("num_hidden_layers",), "heads": ("num_attention_heads",),
                "ff": ("intermediate_size",), "activation": ("hidden_act",), "eps": ("layer_norm_eps",)}

#: The covered families by ``model_type``.
FAMILIES: dict[str, Family] = {
    "bert": Family("BERT", r"encoder\.layer\.(\d+)\.", _BERT_KEYS, _BERT_CONFIG, False, False),
    "roberta": Family("RoBERTa", r"encoder\.layer\.(\d+)\.", _BERT_KEYS, _BERT_CONFIG, False, False),
    "distilbert": Family(
        "DistilBERT", r"transformer\.layer\.(\d+)\.",
        {"q": ("attention.q_lin",), "k": ("attention.k_lin",), "v": ("attention.v_lin",),
         "o": ("attention.out_lin",), "norm1": ("sa_layer_norm",), "fc1": ("ffn.lin1",), "fc2": ("ffn.lin2",),
         "norm2": ("output_layer_norm",)},
        {"width": ("dim",), "layers": ("n_layers",), "heads": ("n_heads",), "ff": ("hidden_dim",),
         "activation": ("activation",)}, False, False, fixed={"eps": 1e-12}),
    "gpt2": Family(
        "GPT-2", r"h\.(\d+)\.",
        {"qkv": ("attn.c_attn",), "o": ("attn.c_proj",), "norm1": ("ln_1",), "fc1": ("mlp.c_fc",),
         "fc2": ("mlp.c_proj",), "norm2": ("ln_2",)},
        {"width": ("n_embd",), "layers": ("n_layer",), "heads": ("n_head",), "ff": ("n_inner",),
         "activation": ("activation_function",), "eps": ("layer_norm_epsilon",)},
        True, True, final_norm=("ln_f",), conv1d=True, buffers=("attn.bias", "attn.masked_bias")),
    "vit": Family(
        "ViT", r"(?:encoder\.layer|layers)\.(\d+)\.",
        {"q": ("attention.attention.query", "attention.q_proj"), "k": ("attention.attention.key", "attention.k_proj"),
         "v": ("attention.attention.value", "attention.v_proj"), "o": ("attention.output.dense", "attention.o_proj"),
         "norm1": ("layernorm_before",), "fc1": ("intermediate.dense", "mlp.fc1"), "fc2": ("output.dense", "mlp.fc2"),
         "norm2": ("layernorm_after",)},
        _BERT_CONFIG, True, False, final_norm=("layernorm",)),
}

_DECODER_KEYS = {"q": ("self_attn.q_proj",), "k": ("self_attn.k_proj",), "v": ("self_attn.v_proj",),
                 "o": ("self_attn.o_proj",), "norm1": ("input_layernorm",), "gate": ("mlp.gate_proj",),
                 "fc1": ("mlp.up_proj",), "fc2": ("mlp.down_proj",), "norm2": ("post_attention_layernorm",)}
_DECODER_CONFIG = {"width": ("hidden_size",), "layers": ("num_hidden_layers",), "heads": ("num_attention_heads",),
                   "kv_heads": ("num_key_value_heads",), "ff": ("intermediate_size",), "activation": ("hidden_act",),
                   "eps": ("rms_norm_eps",)}
for _name, _type in (("Llama", "llama"), ("Mistral", "mistral"), ("Qwen2", "qwen2")):
    FAMILIES[_type] = Family(_name, r"layers\.(\d+)\.", _DECODER_KEYS, _DECODER_CONFIG, True, True,
                             final_norm=("norm",), buffers=("self_attn.rotary_emb.inv_freq",),
                             norm_kind="rmsnorm", decoder=True)

#: Families recognised and refused, with the parts symattn's model lacks for them.
UNSUPPORTED: dict[str, str] = {}

#: Config flags that change the computation in a way the covered families' reading does not model.
_REFUSED_FLAGS = {
    "add_cross_attention": (True, "cross-attention (it attends to another sequence)"),
    "is_decoder": (True, "a decoder (cross-attention and causal masks of an encoder-decoder)"),
    "scale_attn_by_inverse_layer_idx": (True, "scores scaled by 1/(layer index)"),
    "scale_attn_weights": (False, "unscaled scores (no 1/sqrt(head_dim))"),
    "reorder_and_upcast_attn": (True, "reordered, upcast attention"),
}


def is_hf_folder(path: Path) -> bool:
    """Whether ``path`` is a directory with a ``config.json``."""
    return path.is_dir() and (path / "config.json").is_file()


def _read_json(path: Path, what: str) -> dict:
    if path.is_symlink() and not path.resolve().is_file():
        raise SymattnError(f"{path}: a link to no file")
    size = path.stat().st_size
    if size > MAX_CONFIG_BYTES:
        raise SymattnError(f"{path} has {size} bytes, beyond the limit {MAX_CONFIG_BYTES} of {what}")
    obj = parse_json(path.read_bytes(), str(path))
    if not isinstance(obj, dict):
        raise SymattnError(f"{path} is not a JSON object ({what})")
    return obj


def _int(config: Mapping, key: str, where: str, low: int = 1, high: int = 2 ** 20) -> int:
    value = config[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SymattnError(f"{where}: {key} = {str(value)[:40]!r} is not an integer in [{low}, {high}]")
    return value


def read_hf_config(folder: Path) -> dict:
    """The architecture a folder's ``config.json`` states, validated, with where each property came from.

    Parameters
    ----------
    folder : Path
        A Hugging Face model folder.

    Returns
    -------
    dict
        ``family`` (the :class:`Family`), ``model_type``, ``width``, ``layers``,
        ``heads``, ``kv_heads``, ``ff``, ``activation`` (symattn's name),
        ``eps``, ``norm_first``, ``causal``, ``tied`` and ``architectures``.

    Raises
    ------
    SymattnError
        A missing or malformed config, an uncovered ``model_type`` (named),
        a flag that changes the computation, a missing or invalid field.
    """
    where = str(folder / "config.json")
    config = _read_json(folder / "config.json", "a model config")
    model_type = config.get("model_type")
    if not isinstance(model_type, str):
        raise SymattnError(f"{where} has no model_type: not a Hugging Face model config")
    shown = model_type[:40]
    if model_type in UNSUPPORTED:
        raise SymattnError(f"{where}: model_type {shown!r} is not covered yet: symattn's model lacks "
                           f"{UNSUPPORTED[model_type]}")
    family = FAMILIES.get(model_type)
    if family is None:
        raise SymattnError(f"{where}: model_type {shown!r} is not covered (covered: "
                           f"{', '.join(FAMILIES)}; refused: {', '.join(UNSUPPORTED)})")
    for key, (bad, what) in _REFUSED_FLAGS.items():
        if key == "is_decoder" and family.causal:  # a decoder family says so itself
            continue
        if key in config and config[key] is bad:
            raise SymattnError(f"{where}: {key} = {str(config[key]).lower()}: {what} is not covered")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise SymattnError(f"{where}: position_embedding_type {str(config['position_embedding_type'])[:30]!r} "
                           "changes the attention scores: not covered (absolute only)")
    out: dict = {"family": family, "model_type": model_type,
                 "architectures": [str(a)[:60] for a in config.get("architectures") or []][:4]}
    for prop, keys in family.config.items():
        key = next((k for k in keys if k in config and config[k] is not None), None)
        if key is None:
            if prop == "ff" and family.conv1d:  # GPT-2: n_inner null means 4 n_embd
                continue
            if prop == "kv_heads":  # null or absent: multi-head attention (the families' documented default)
                continue
            if prop == "eps" and "eps" in family.fixed:
                continue
            raise SymattnError(f"{where} lacks {' / '.join(keys)} ({prop}): the architecture is read from "
                               f"the config, never guessed")
        if prop == "activation":
            out[prop] = _config_value("activation", config[key], f"{where}: {key}")
        elif prop == "eps":
            out[prop] = _config_value("eps", config[key], f"{where}: {key}")
        else:
            out[prop] = _int(config, key, where)
    out.setdefault("ff", 4 * out["width"])
    out.update(family.fixed)
    if out["width"] % out["heads"]:
        raise SymattnError(f"{where}: the width {out['width']} is not divisible by {out['heads']} heads")
    out.setdefault("kv_heads", out["heads"])
    if out["heads"] % out["kv_heads"]:
        raise SymattnError(f"{where}: {out['kv_heads']} key/value heads do not divide {out['heads']} attention heads")
    out["norm_kind"] = family.norm_kind
    if family.decoder:
        out.update(_decoder_config(config, out, where))
    out["norm_first"], out["causal"] = family.norm_first, family.causal
    out["tied"] = bool(config.get("tie_word_embeddings", False))
    out["qkv_bias"] = config.get("qkv_bias", True) is not False
    return out


def _decoder_config(config: Mapping, out: dict, where: str) -> dict:
    """A Llama-style config's rotary base, and refusals of what the decoder reading does not model (rotary
    scaling, partial rotary, a head width other than ``width / heads``, MLP biases, sliding windows below
    the audit's tokens are checked at load), in one line each."""
    if out["activation"] != "silu":
        raise SymattnError(f"{where}: hidden_act {out['activation']!r}: the SwiGLU reading covers silu only")
    rope = config.get("rope_parameters") if isinstance(config.get("rope_parameters"), dict) else {}
    scaling = config.get("rope_scaling")
    kind = rope.get("rope_type", "default")
    if isinstance(scaling, dict):
        kind = scaling.get("rope_type", scaling.get("type", "default"))
    elif scaling is not None:
        raise SymattnError(f"{where}: rope_scaling {str(scaling)[:30]!r} is not a map")
    if kind != "default":
        raise SymattnError(f"{where}: rope type {str(kind)[:30]!r} rescales the rotary frequencies: not covered "
                           "(default rotary only)")
    base = rope.get("rope_theta", config.get("rope_theta", 10000.0))
    if isinstance(base, bool) or not isinstance(base, (int, float)) or not 1 < base < 1e12:
        raise SymattnError(f"{where}: rope_theta {str(base)[:30]!r} is not a number in (1, 1e12)")
    partial = rope.get("partial_rotary_factor", config.get("partial_rotary_factor", 1.0))
    if partial not in (1, 1.0):
        raise SymattnError(f"{where}: partial_rotary_factor {str(partial)[:20]}: partial rotary is not covered")
    head_dim = config.get("head_dim")
    if head_dim is not None and head_dim != out["width"] // out["heads"]:
        raise SymattnError(f"{where}: head_dim {str(head_dim)[:20]} is not hidden_size / num_attention_heads = "
                           f"{out['width'] // out['heads']}: not covered")
    if (out["width"] // out["heads"]) % 2:
        raise SymattnError(f"{where}: the head width {out['width'] // out['heads']} is odd: rotary needs pairs")
    if config.get("mlp_bias") is True:
        raise SymattnError(f"{where}: mlp_bias = true: SwiGLU with biases is not covered")
    if config.get("use_sliding_window") is True:
        raise SymattnError(f"{where}: use_sliding_window = true: sliding-window attention is not covered")
    types = config.get("layer_types") or []
    if any(t != "full_attention" for t in types):
        raise SymattnError(f"{where}: layer_types other than full_attention: sliding-window layers are not covered")
    window = config.get("sliding_window") if config.get("model_type") == "mistral" else None
    if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 1):
        raise SymattnError(f"{where}: sliding_window {str(window)[:20]!r} is not a positive integer")
    return {"rope_theta": float(base), "sliding_window": window}


def _shards(folder: Path) -> list[Path]:
    """The weight files of a folder, in the order to read them."""
    single = folder / "model.safetensors"
    index = folder / "model.safetensors.index.json"
    if single.is_file():
        return [single]
    if index.is_file():
        where = str(index)
        obj = _read_json(index, "a shard index")
        wmap = obj.get("weight_map")
        if not isinstance(wmap, dict) or not wmap:
            raise SymattnError(f"{where} has no weight_map")
        files = []
        for name in wmap.values():
            if not isinstance(name, str) or "/" in name or "\\" in name or name.startswith(".") \
                    or not name.endswith(".safetensors"):
                raise SymattnError(f"{where}: shard {str(name)[:60]!r} is not a .safetensors file name "
                                   f"in the folder")
            if name not in files:
                files.append(name)
        check_count(0, len(files), where)
        paths = [folder / f for f in files]
        for p in paths:
            if not p.is_file():
                raise SymattnError(f"{where} lists {p.name}, which is not in the folder")
        return paths
    if (folder / "pytorch_model.bin").is_file():
        return [folder / "pytorch_model.bin"]
    raise SymattnError(f"{folder} has config.json but no model.safetensors, model.safetensors.index.json "
                       f"or pytorch_model.bin")


def read_hf_weights(folder: Path) -> tuple[dict[str, np.ndarray], list[str]]:
    """Every tensor of a folder (one file or its shards), by name; a name in two shards is refused.

    Returns
    -------
    (dict, list of str)
        The tensors (NumPy arrays) and the files read.

    Raises
    ------
    SymattnError
        Missing weights, unreadable or oversize files, a tensor named twice.
    """
    state: dict[str, np.ndarray] = {}
    paths = _shards(folder)
    total = 0
    for path in paths:
        size = path.stat().st_size
        total += size
        if total > LIMITS["max_file_bytes"]:
            raise SymattnError(f"{folder}: the weights have {total} bytes, beyond the limit "
                               f"{LIMITS['max_file_bytes']}")
        if path.suffix == ".bin":
            tensors, _, _ = read_torch(path)
            arrays = {str(k): v.detach().cpu().numpy() if hasattr(v, "detach") else v for k, v in tensors.items()}
        else:
            arrays = read_safetensors(path)
        for name, value in arrays.items():
            if name in state:
                raise SymattnError(f"{folder}: tensor {name[:60]!r} appears in two weight files: refused")
            state[name] = value
        check_count(sum(v.size for v in state.values()), len(state), str(folder))
    return state, [p.name for p in paths]


def _find(state: Mapping[str, Any], prefix: str, names: tuple[str, ...], param: str) -> str | None:
    for n in names:
        if f"{prefix}{n}.{param}" in state:
            return f"{prefix}{n}.{param}"
    return None


def _layer_prefixes(state: Mapping[str, Any], family: Family) -> dict[int, str]:
    """Layer index -> the prefix of its entries (an optional model prefix such as ``bert.`` included)."""
    pattern = re.compile(r"^((?:[A-Za-z_][A-Za-z0-9_]*\.)?" + family.layer + ")")
    found: dict[int, str] = {}
    for key in state:
        m = pattern.match(key)
        if m:
            i = int(m.group(2))
            if found.setdefault(i, m.group(1)) != m.group(1):
                raise SymattnError(f"layer {i} appears under two prefixes ({found[i]!r}, {m.group(1)!r})")
    return found


def _to_encoder_layout(state: Mapping[str, np.ndarray], cfg: dict, where: str) -> tuple[dict, dict, dict, list]:
    """The file's layers as ``nn.TransformerEncoderLayer`` entries under their own prefixes, the
    per-layer config, the file's module names of each part, and the entries used."""
    family: Family = cfg["family"]
    prefixes = _layer_prefixes(state, family)
    if sorted(prefixes) != list(range(cfg["layers"])):
        raise SymattnError(f"{where}: config.json says {cfg['layers']} layers, the weights hold layers "
                           f"{sorted(prefixes)[:8]}")
    out, layer_config, names, used = {}, {}, {}, []
    t = (lambda w: np.asarray(w).T) if family.conv1d else np.asarray
    for i in range(cfg["layers"]):
        p = prefixes[i]
        got: dict = {}
        for part, modules in family.keys.items():
            for param in ("weight", "bias"):
                key = _find(state, p, modules, param)
                if key is None and param == "weight":
                    raise SymattnError(f"{where}: {p}{modules[0]}.weight is missing (layer {i} of a "
                                       f"{family.name} model)")
                if key is not None:
                    got[(part, param)] = key
                    used.append(key)
        def w(part):
            return t(state[got[(part, "weight")]]) if part not in ("norm1", "norm2") else state[got[(part, "weight")]]

        def b(part):
            return state[got[(part, "bias")]] if (part, "bias") in got else None

        E = cfg["width"]
        if "qkv" in family.keys:
            w_in, b_in = w("qkv"), b("qkv")
        else:
            w_in = np.concatenate([np.asarray(w(x)) for x in "qkv"])
            biases = [b(x) for x in "qkv"]
            b_in = (None if all(x is None for x in biases) else
                    np.concatenate([np.zeros(E) if x is None else np.asarray(x, dtype=np.float64) for x in biases]))
        a = p + "self_attn."
        out[a + "in_proj_weight"], out[a + "out_proj.weight"] = w_in, w("o")
        if b_in is not None:
            out[a + "in_proj_bias"] = b_in
        if b("o") is not None:
            out[a + "out_proj.bias"] = b("o")
        for mine, part in (("linear1", "fc1"), ("linear2", "fc2"), ("norm1", "norm1"), ("norm2", "norm2")):
            out[f"{p}{mine}.weight"] = w(part)
            if b(part) is not None:
                out[f"{p}{mine}.bias"] = b(part)
        layer_config[p] = {"heads": cfg["heads"], "norm_first": cfg["norm_first"],
                           "activation": cfg["activation"], "eps": cfg["eps"]}
        names[p] = {part: got[(part, "weight")].removesuffix(".weight") for part in family.keys}
    buffers = {p + b for p in prefixes.values() for b in family.buffers}
    used += [k for k in state if k in buffers]  # the causal mask, which the family applies itself
    mine = set(used)
    for key in state:
        if key not in mine and any(key.startswith(p) for p in prefixes.values()):
            raise SymattnError(f"{where}: {key[:80]} is inside a {family.name} layer but is none of the parts "
                               f"symattn reads there (attention, norms, MLP): not covered")
    return out, layer_config, names, used


def load_hf_folder(folder: Path, tokens: int | None = None) -> ImportedModel:
    """A Hugging Face folder as an :class:`~symattn.audit.model.ImportedModel` (see the module docstring).

    Parameters
    ----------
    folder : Path
        The folder (``config.json`` and the weights; untrusted).
    tokens : int, optional
        The token count of the audit (default 4, said in a note).

    Returns
    -------
    ImportedModel
        With ``hf`` set to the config's architecture (:func:`read_hf_config`)
        and the folder's path, and ``causal`` as the family computes.

    Raises
    ------
    SymattnError
        See :func:`read_hf_config` and :func:`read_hf_weights`; weights that
        do not match the config.
    """
    from symattn.audit.conventions import from_state_dict

    cfg = read_hf_config(folder)
    state, files = read_hf_weights(folder)
    where = f"{folder}"
    family: Family = cfg["family"]
    if family.decoder:
        return _load_decoder(folder, cfg, state, files, tokens)
    layout, layer_config, names, used = _to_encoder_layout(state, cfg, where)
    n = tokens or 4
    notes = [f"read as {family.name} ({cfg['model_type']}) from config.json and {', '.join(files)}: "
             f"{cfg['layers']} layers, {cfg['heads']} heads, width {cfg['width']}, feed-forward {cfg['ff']}, "
             f"LayerNorm eps {cfg['eps']:g}, {'pre' if cfg['norm_first'] else 'post'}-norm, "
             f"{cfg['activation']}, {'causal' if cfg['causal'] else 'not causal'}"]
    if family.conv1d:
        notes.append("Conv1D weights (stored (in, out)) transposed on reading; c_attn is the fused "
                     "[W_q; W_k; W_v]")
    model = from_state_dict(layout, n, str(folder), None, "hugging-face", heads_known=False,
                            layer_config=layer_config, config={"eps": cfg["eps"]}, notes=notes)
    blocks = []
    for block in model.transformer_layers:
        p = block.name + "."
        nm = names[p]
        parts = [nm[x].split(".") for x in ("q", "k", "v", "qkv", "o") if x in nm]
        common = [c[0] for c in zip(*parts) if len(set(c)) == 1]
        attention = dataclasses.replace(block.attention, name=".".join(common), heads_from="config.json")
        norms = tuple(dataclasses.replace(norm, name=nm[part]) for norm, part in zip(block.norms, ("norm1", "norm2")))
        mlp = dataclasses.replace(block.mlp, name=f"{nm['fc1']}, {nm['fc2']}")
        blocks.append(dataclasses.replace(block, attention=attention, norms=norms, mlp=mlp,
                                          placement_from="config.json"))
    model.transformer_layers = blocks
    for key in family.final_norm:
        prefix = next((k[: -len("weight")] for k in state if k == key + ".weight"
                       or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*\." + re.escape(key) + r"\.weight", k)), None)
        if prefix is not None:
            gain = np.asarray(state[prefix + "weight"], dtype=np.float64)
            bias = state.get(prefix + "bias")
            model.final_norm = Norm(prefix.rstrip("."), gain,
                                    None if bias is None else np.asarray(bias, dtype=np.float64), cfg["eps"])
            used += [k for k in (prefix + "weight", prefix + "bias") if k in state]
    rest = [k for k in state if k not in set(used)]
    model.outside = [f"{', '.join(r[:60] for r in rest[:6])}{' and more' if len(rest) > 6 else ''}: "
                     f"embeddings, pooler and heads are not part of the attention stack (read, not audited)"] \
        if rest else []
    model.hf = {k: v for k, v in cfg.items() if k != "family"} | {
        "family": family.name, "folder": str(folder), "parts": names, "conv1d": family.conv1d,
        "final_norm": model.final_norm.name if model.final_norm is not None else None}
    model.causal = cfg["causal"]
    if tokens is None:
        model.notes.append("tokens n = 4: the default (give --tokens n or --inputs FILE)")
    return model


def _load_decoder(folder: Path, cfg: dict, state: Mapping[str, np.ndarray], files: list[str],
                  tokens: int | None) -> ImportedModel:
    """A Llama, Mistral or Qwen2 folder as decoder blocks (:mod:`symattn.audit.decoder`): RMSNorm, grouped-query
    attention with rotary positions, SwiGLU, pre-norm, causal; each query head ``h`` as the
    :class:`~symattn.audit.model.Head` ``Q_h = c W_q[h]^T``, ``K_h = W_k[g(h)]^T``, ``V_h = W_o[:, h] W_v[g(h)]``
    of its key/value head ``g(h)`` (:meth:`~symattn.model.parts.gqa.GroupedQueryAttention.group`)."""
    from symattn.audit.conventions import _scale
    from symattn.audit.model import MLP, Attention, Head, TransformerLayer
    from symattn.model.normalizer import normalizers
    from symattn.model.parts import GroupedQueryAttention, Rotary

    family: Family = cfg["family"]
    where = str(folder)
    n = tokens or 4
    check_tokens(n)
    if cfg["sliding_window"] is not None and n > cfg["sliding_window"]:
        raise SymattnError(f"{where}: {n} tokens exceed the sliding window {cfg['sliding_window']}: sliding-window "
                           f"attention is not covered (use --tokens at most {cfg['sliding_window']})")
    prefixes = _layer_prefixes(state, family)
    if sorted(prefixes) != list(range(cfg["layers"])):
        raise SymattnError(f"{where}: config.json says {cfg['layers']} layers, the weights hold layers "
                           f"{sorted(prefixes)[:8]}")
    E, H, G, ff = cfg["width"], cfg["heads"], cfg["kv_heads"], cfg["ff"]
    e = E // H
    shapes = {"q": (H * e, E), "k": (G * e, E), "v": (G * e, E), "o": (E, H * e), "norm1": (E,), "norm2": (E,),
              "gate": (ff, E), "fc1": (ff, E), "fc2": (E, ff)}
    c, note = _scale(e)
    rotary = Rotary(cfg["rope_theta"], e)
    gqa = GroupedQueryAttention(H, G)
    used: list[str] = []
    blocks, layers, names = [], [], {}
    for i in range(cfg["layers"]):
        p = prefixes[i]
        w, b, nm = {}, {}, {}
        for part, modules in family.keys.items():
            key = _find(state, p, modules, "weight")
            if key is None:
                raise SymattnError(f"{where}: {p}{modules[0]}.weight is missing (layer {i} of a {family.name} model)")
            w[part] = np.asarray(state[key], dtype=np.float64)
            if w[part].shape != shapes[part]:
                raise SymattnError(f"{where}: {key} has shape {w[part].shape}, the config gives {shapes[part]}")
            nm[part] = key.removesuffix(".weight")
            used.append(key)
            bias = _find(state, p, modules, "bias")
            if bias is not None:
                if part not in ("q", "k", "v", "o"):
                    raise SymattnError(f"{where}: {bias}: a bias of {part} is not part of a {family.name} layer: "
                                       f"not covered")
                b[part] = np.asarray(state[bias], dtype=np.float64)
                if b[part].shape != shapes[part][:1]:
                    raise SymattnError(f"{where}: {bias} has shape {b[part].shape}, expected {shapes[part][:1]}")
                used.append(bias)
        qkv_bias = [b.get(r) for r in "qkv"]
        if any(x is None for x in qkv_bias) and any(x is not None for x in qkv_bias):
            raise SymattnError(f"{where}: layer {i}: q, k and v biases must all be present or all absent")
        attn = Attention(f"{p}self_attn", np.concatenate([w["q"], w["k"], w["v"]]),
                         None if qkv_bias[0] is None else np.concatenate(qkv_bias), w["o"], b.get("o"), H,
                         "config.json", G, rotary)
        norms = tuple(Norm(nm[j], w[j], None, cfg["eps"], "given", family.norm_kind) for j in ("norm1", "norm2"))
        mlp = MLP(f"{nm['gate']}, {nm['fc1']}, {nm['fc2']}", w["fc1"], None, w["fc2"], None, "silu", "given",
                  gate=w["gate"])
        blocks.append(TransformerLayer(i + 1, p.rstrip("."), attn, norms, mlp, True, "config.json"))
        layers.append([Head(w["q"][h * e:(h + 1) * e].T.copy(), w["k"][gqa.group(h) * e:(gqa.group(h) + 1) * e].T.copy(),
                            w["v"][gqa.group(h) * e:(gqa.group(h) + 1) * e].copy(), c, w["o"][:, h * e:(h + 1) * e].copy())
                       for h in range(H)])
        names[p] = nm
    buffers = {p + x for p in prefixes.values() for x in family.buffers}
    used += [k for k in state if k in buffers]
    mine = set(used)
    for key in state:
        if key not in mine and any(key.startswith(p) for p in prefixes.values()):
            raise SymattnError(f"{where}: {key[:80]} is inside a {family.name} layer but is none of the parts "
                               f"symattn reads there (attention, norms, SwiGLU MLP): not covered")
    notes = [f"read as {family.name} ({cfg['model_type']}) from config.json and {', '.join(files)}: "
             f"{cfg['layers']} layers, {H} heads, {G} KV heads, width {E}, SwiGLU {ff}, RMSNorm eps {cfg['eps']:g}, "
             f"pre-norm, {rotary.describe()}, causal",
             "rotary positions: each head's exact facts are of its unrotated score W_q[h]^T W_k[g] (two tokens at "
             "the same position); the rotations enter the forward check and the numerical tiers (float64 tables "
             "cos/sin of position x base^(-2j/e); transformers computes them in float32)"]
    if note:
        notes.append(note)
    if G != H:
        notes.append(f"grouped-query attention: query head h reads KV head h // {H // G} (repeat_kv's order)")
    model = ImportedModel(layers, normalizers("exp", len(layers)), n, str(folder), "hugging-face", notes, [],
                          torch_layout=True, transformer_layers=blocks)
    final = next((k for k in state if k == "norm.weight" or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*\.norm\.weight", k)),
                 None)
    if final is not None:
        gain = np.asarray(state[final], dtype=np.float64)
        if gain.shape != (E,):
            raise SymattnError(f"{where}: {final} has shape {gain.shape}, expected ({E},)")
        model.final_norm = Norm(final.removesuffix(".weight"), gain, None, cfg["eps"], "given", family.norm_kind)
        used.append(final)
    rest = [k for k in state if k not in set(used)]
    model.outside = [f"{', '.join(r[:60] for r in rest[:6])}{' and more' if len(rest) > 6 else ''}: "
                     f"embeddings and heads are not part of the attention stack (read, not audited)"] if rest else []
    model.hf = {k: v for k, v in cfg.items() if k != "family"} | {
        "family": family.name, "folder": str(folder), "parts": names, "conv1d": False,
        "final_norm": model.final_norm.name if model.final_norm is not None else None}
    model.causal = True
    if tokens is None:
        model.notes.append("tokens n = 4: the default (give --tokens n or --inputs FILE)")
    return model
