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
========== ============================ ============ ========== ===========

GPT-2's ``Conv1D`` stores its weights transposed (``y = x W + b``, ``W`` of
shape ``(in, out)``); they are transposed on reading, and ``c_attn`` is the
fused ``[W_q; W_k; W_v]``. Each layer is mapped onto the parts of an
``nn.TransformerEncoderLayer`` (attention, ``norm1``, ``norm2``, MLP, residuals)
under the names it has in the file. Embeddings, poolers and heads are outside
the audited stack (named as such). Llama, Mistral and Qwen2 style decoders are
refused by name with the parts symattn's model does not have yet (RMSNorm,
rotary positions, SwiGLU, grouped-query attention); any other ``model_type``
is refused by name.
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
from symattn.audit.readers import LIMITS, _config_value, check_count, parse_json, read_safetensors, read_torch

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

_DECODER_PARTS = "RMSNorm, rotary position embeddings, SwiGLU and grouped-query attention"
#: Families recognised and refused, with the parts symattn's model lacks for them.
UNSUPPORTED = {
    "llama": _DECODER_PARTS, "mistral": _DECODER_PARTS, "qwen2": _DECODER_PARTS,
}

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
    out["kv_heads"] = out["heads"]
    out["norm_first"], out["causal"] = family.norm_first, family.causal
    out["tied"] = bool(config.get("tie_word_embeddings", False))
    out["qkv_bias"] = config.get("qkv_bias", True) is not False
    return out


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
    layout, layer_config, names, used = _to_encoder_layout(state, cfg, where)
    family: Family = cfg["family"]
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
