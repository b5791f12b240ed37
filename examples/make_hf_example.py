"""Write ``examples/gpt2_tiny/``: a small GPT-2-style Hugging Face folder with random weights.

``config.json`` and ``model.safetensors`` as ``GPT2Model.save_pretrained`` writes
them (2 layers, ``n_embd`` 16, 2 heads, ``n_inner`` 32, ``gelu_new``), with
weights drawn from NumPy's ``default_rng(2040)`` (``0.2 * N(0, 1)``; gains
``1 + 0.1 * N(0, 1)``; biases ``0.1 * N(0, 1)``) in float32. Only NumPy is
needed (no ``transformers``, no hub access): ``python
examples/make_hf_example.py`` rewrites the folder byte for byte
(``--check`` only compares). ``transformers`` reads the folder as a
``GPT2Model`` (the tests check it, where it is installed).

Then audit it::

    symattn audit examples/gpt2_tiny --plot gpt2_tiny.png
"""

from __future__ import annotations

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


if __name__ == "__main__":
    if "--check" in sys.argv[1:]:
        same = ((FOLDER / "config.json").read_text() == json.dumps(CONFIG, indent=2, sort_keys=True) + "\n"
                and (FOLDER / "model.safetensors").read_bytes() == safetensors_bytes(tensors()))
        print("examples/gpt2_tiny is up to date" if same else "examples/gpt2_tiny differs: rerun the script")
        sys.exit(0 if same else 1)
    write()
    print(f"wrote {FOLDER}")
