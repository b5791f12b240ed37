"""Write ``examples/gpt2_tiny/`` and ``examples/llama_tiny/``: small Hugging Face folders with random weights.

``config.json`` and ``model.safetensors`` as ``GPT2Model.save_pretrained`` writes
them (2 layers, ``n_embd`` 16, 2 heads, ``n_inner`` 32, ``gelu_new``), with
weights drawn from NumPy's ``default_rng(2040)`` (``0.2 * N(0, 1)``; gains
``1 + 0.1 * N(0, 1)``; biases ``0.1 * N(0, 1)``) in float32. Only NumPy is
needed (no ``transformers``, no hub access): ``python
examples/make_hf_example.py`` rewrites the folder byte for byte
(``--check`` only compares). ``transformers`` reads the folder as a
``GPT2Model`` (the tests check it, where it is installed).

``examples/llama_tiny/`` is a Llama-style decoder as ``LlamaModel.save_pretrained``
writes it (2 layers, ``hidden_size`` 16, 4 heads, 2 KV heads, SwiGLU 32,
RMSNorm, rotary base 10000; weights from ``default_rng(2041)``, the same
scales). Llama, Mistral and Qwen2 folders of any size are written with
``--family``::

    python examples/make_hf_example.py --family llama --layers 6 --width 128 \
        --heads 4 --kv-heads 2 --ff 256 --out /tmp/llama_6x128

(``qwen2`` adds the q/k/v biases its layers have; ``mistral`` its
``sliding_window``). Then audit them::

    symattn audit examples/gpt2_tiny --plot gpt2_tiny.png
    symattn audit examples/llama_tiny
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from pathlib import Path

import numpy as np

SEED, LAYERS, WIDTH, HEADS, INNER, VOCAB, POSITIONS = 2040, 2, 16, 2, 32, 32, 16
FOLDER = Path(__file__).resolve().parent / "gpt2_tiny"

CONFIG = {
    "activation_function": "gelu_new", "architectures": ["GPT2Model"], "attn_pdrop": 0.0,
    "bos_token_id": 0, "embd_pdrop": 0.0, "eos_token_id": 0, "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_embd": WIDTH, "n_head": HEADS, "n_inner": INNER,
    "n_layer": LAYERS, "n_positions": POSITIONS, "reorder_and_upcast_attn": False, "resid_pdrop": 0.0,
    "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True, "tie_word_embeddings": True,
    "vocab_size": VOCAB,
}


def tensors() -> dict[str, np.ndarray]:
    """The weights by name, in GPT-2's layout (``Conv1D`` weights stored ``(in, out)``)."""
    rng = np.random.default_rng(SEED)

    def w(*shape):
        return (0.2 * rng.standard_normal(shape)).astype(np.float32)

    def gain():
        return (1 + 0.1 * rng.standard_normal(WIDTH)).astype(np.float32)

    def bias(n):
        return (0.1 * rng.standard_normal(n)).astype(np.float32)

    out = {"wte.weight": w(VOCAB, WIDTH), "wpe.weight": w(POSITIONS, WIDTH)}
    for i in range(LAYERS):
        p = f"h.{i}."
        out.update({p + "ln_1.weight": gain(), p + "ln_1.bias": bias(WIDTH),
                    p + "attn.c_attn.weight": w(WIDTH, 3 * WIDTH), p + "attn.c_attn.bias": bias(3 * WIDTH),
                    p + "attn.c_proj.weight": w(WIDTH, WIDTH), p + "attn.c_proj.bias": bias(WIDTH),
                    p + "ln_2.weight": gain(), p + "ln_2.bias": bias(WIDTH),
                    p + "mlp.c_fc.weight": w(WIDTH, INNER), p + "mlp.c_fc.bias": bias(INNER),
                    p + "mlp.c_proj.weight": w(INNER, WIDTH), p + "mlp.c_proj.bias": bias(WIDTH)})
    out.update({"ln_f.weight": gain(), "ln_f.bias": bias(WIDTH)})
    return out


LLAMA_FOLDER = Path(__file__).resolve().parent / "llama_tiny"
#: The tiny Llama folder's shape and seed.
LLAMA_TINY = dict(family="llama", layers=2, width=16, heads=4, kv_heads=2, ff=32, seed=2041)


def decoder_config(family: str, layers: int, width: int, heads: int, kv_heads: int, ff: int, vocab: int = 32) -> dict:
    """``config.json`` of a Llama, Mistral or Qwen2 model as ``transformers`` 5 writes it (the keys symattn reads
    and the ones ``transformers`` needs to build the model)."""
    name = {"llama": "LlamaModel", "mistral": "MistralModel", "qwen2": "Qwen2Model"}[family]
    config = {"architectures": [name], "attention_dropout": 0.0, "hidden_act": "silu", "hidden_size": width,
              "initializer_range": 0.02, "intermediate_size": ff, "max_position_embeddings": 64,
              "model_type": family, "num_attention_heads": heads, "num_hidden_layers": layers,
              "num_key_value_heads": kv_heads, "rms_norm_eps": 1e-06,
              "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}, "tie_word_embeddings": False,
              "use_cache": False, "vocab_size": vocab}
    if family == "llama":
        config.update({"attention_bias": False, "head_dim": width // heads, "mlp_bias": False})
    elif family == "mistral":
        config.update({"head_dim": width // heads, "sliding_window": 4096})
    else:
        config.update({"layer_types": ["full_attention"] * layers, "sliding_window": None,
                       "use_sliding_window": False, "max_window_layers": layers})
    return config


def decoder_tensors(family: str, layers: int, width: int, heads: int, kv_heads: int, ff: int, seed: int,
                    vocab: int = 32) -> dict[str, np.ndarray]:
    """A decoder's weights by name, as ``LlamaModel`` (``MistralModel``, ``Qwen2Model``) stores them:
    ``0.2 N(0, 1)`` weights (``0.2 / sqrt(width / 16)`` beyond width 16, so the scores stay moderate), RMSNorm
    gains ``1 + 0.1 N(0, 1)``, Qwen2's q/k/v biases ``0.1 N(0, 1)``."""
    rng = np.random.default_rng(seed)
    scale = 0.2 / max(1.0, (width / 16) ** 0.5)
    e = width // heads

    def w(*shape):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    def gain():
        return (1 + 0.1 * rng.standard_normal(width)).astype(np.float32)

    out = {"embed_tokens.weight": w(vocab, width)}
    for i in range(layers):
        p = f"layers.{i}."
        out.update({p + "input_layernorm.weight": gain(), p + "self_attn.q_proj.weight": w(heads * e, width),
                    p + "self_attn.k_proj.weight": w(kv_heads * e, width),
                    p + "self_attn.v_proj.weight": w(kv_heads * e, width),
                    p + "self_attn.o_proj.weight": w(width, heads * e),
                    p + "post_attention_layernorm.weight": gain(), p + "mlp.gate_proj.weight": w(ff, width),
                    p + "mlp.up_proj.weight": w(ff, width), p + "mlp.down_proj.weight": w(width, ff)})
        if family == "qwen2":
            for r, rows in (("q", heads * e), ("k", kv_heads * e), ("v", kv_heads * e)):
                out[p + f"self_attn.{r}_proj.bias"] = (0.1 * rng.standard_normal(rows)).astype(np.float32)
    out["norm.weight"] = gain()
    return out


def write_decoder(folder: Path, family: str, layers: int, width: int, heads: int, kv_heads: int, ff: int,
                  seed: int) -> None:
    """Write a decoder folder (``config.json`` and ``model.safetensors``) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    config = decoder_config(family, layers, width, heads, kv_heads, ff)
    (folder / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    (folder / "model.safetensors").write_bytes(
        safetensors_bytes(decoder_tensors(family, layers, width, heads, kv_heads, ff, seed)))


def safetensors_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """A ``.safetensors`` file: an 8-byte header length, the JSON header, the raw little-endian numbers."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name], dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        blobs.append(a.tobytes())
        offset += a.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data start 8-aligned, as the safetensors library writes
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def write(folder: Path = FOLDER) -> None:
    """Write ``config.json`` and ``model.safetensors`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(CONFIG, indent=2, sort_keys=True) + "\n")
    (folder / "model.safetensors").write_bytes(safetensors_bytes(tensors()))


def _same(folder: Path, config: dict, arrays: dict) -> bool:
    return ((folder / "config.json").is_file()
            and (folder / "config.json").read_text() == json.dumps(config, indent=2, sort_keys=True) + "\n"
            and (folder / "model.safetensors").read_bytes() == safetensors_bytes(arrays))


def main(argv: list[str] | None = None) -> int:
    """The command line (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only compare the shipped folders")
    ap.add_argument("--family", choices=("llama", "mistral", "qwen2"), help="write a decoder folder of this family")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--ff", type=int, default=None, help="SwiGLU width (default 2 x width)")
    ap.add_argument("--seed", type=int, default=2041)
    ap.add_argument("--out", type=Path, help="the folder to write (with --family)")
    args = ap.parse_args(argv)
    if args.family:
        if args.out is None:
            ap.error("--family needs --out FOLDER")
        write_decoder(args.out, args.family, args.layers, args.width, args.heads, args.kv_heads,
                      args.ff or 2 * args.width, args.seed)
        print(f"wrote {args.out}")
        return 0
    t = dict(LLAMA_TINY)
    fam, seed = t.pop("family"), t.pop("seed")
    if args.check:
        ok = [_same(FOLDER, CONFIG, tensors()),
              _same(LLAMA_FOLDER, decoder_config(fam, **t), decoder_tensors(fam, **t, seed=seed))]
        for folder, same in zip((FOLDER, LLAMA_FOLDER), ok):
            print(f"examples/{folder.name} is up to date" if same else f"examples/{folder.name} differs: rerun the script")
        return 0 if all(ok) else 1
    write()
    write_decoder(LLAMA_FOLDER, fam, seed=seed, **t)
    print(f"wrote {FOLDER} and {LLAMA_FOLDER}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
