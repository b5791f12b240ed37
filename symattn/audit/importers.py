"""Importers of the audit: untrusted model files and objects -> attention heads in the paper's convention.

The readers of untrusted files are in :mod:`symattn.audit.readers`, the mapping of
arrays and PyTorch modules to the paper's convention in
:mod:`symattn.audit.conventions`, the data model in :mod:`symattn.audit.model`;
:func:`load_model` reads a file with the first and interprets it with the second.
Formats:

* ``.npz`` (NumPy) and ``.safetensors``: arrays ``Q1, K1, V1, ..., QD, KD, VD``
  (tokens as columns), each a matrix (one head) or a stack ``(H, ...)`` of
  ``H`` heads (:func:`~symattn.audit.conventions.from_arrays`);
* ``.pt``/``.pth``: a PyTorch state dict of ``nn.MultiheadAttention`` layers or
  of ``nn.TransformerEncoderLayer`` layers (:func:`~symattn.audit.conventions.from_state_dict`);
* PyTorch modules in memory (:func:`~symattn.audit.conventions.from_torch`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

from symattn.core.errors import SymattnError
from symattn.audit.conventions import from_arrays, from_state_dict, from_torch
from symattn.audit.model import Head, ImportedModel, exact_matrix, rational_array
from symattn.audit.readers import LIMITS, check_tokens, parse_config, read_npz, read_safetensors, read_torch

_PAPER_KEY = re.compile(r"^[QKV][1-9][0-9]{0,3}$")

__all__ = ["Head", "ImportedModel", "LIMITS", "from_arrays", "from_torch", "from_state_dict",
           "load_model", "load_inputs", "exact_matrix", "rational_array"]


def load_model(path: "str | Path", normalizer: "str | Sequence | None" = None,
               tokens: int | None = None, heads: "int | Sequence[int] | None" = None,
               norm_first: bool | None = None, activation: str | None = None,
               norm_kind: str | None = None) -> ImportedModel:
    """Read a model: a Hugging Face folder, ``.npz`` / ``.safetensors`` arrays or a ``.pt``/``.pth`` state dict.

    Parameters
    ----------
    path : str or Path
        The file (untrusted: see the module docstring for what is checked),
        or a Hugging Face folder with ``config.json`` (:mod:`symattn.audit.hf`).
        ``.npz``/``.safetensors`` arrays named ``Q1, K1, V1, ...`` are the
        paper's convention; any other names are read as a PyTorch state dict
        (a safetensors export of a model, biases and all; its
        ``__metadata__`` as the config). A ``.pt`` file may be a state dict
        or a training checkpoint holding one (``model_state_dict``,
        ``state_dict``) and a ``config``.
    normalizer : str or sequence, optional
        For arrays (default softmax ``exp``); a PyTorch model is always softmax,
        so any other value is refused there.
    tokens : int, optional
        The token count ``n >= 2`` of the audit (default: the model's
        sequence length where its config gives it, else 4).
    heads : int or sequence, optional
        ``num_heads`` of a state dict's layers (default: the config's, else 1,
        said as assumed); arrays carry their heads in their shapes, so any
        other value is refused there.
    norm_first, activation, norm_kind : optional
        The norm placement (pre-norm when True), the MLP's activation and the
        norm kind (``"layernorm"``; ``"rmsnorm"`` only for a Llama-style
        Hugging Face folder, where it must agree with the config) of a state dict's encoder layers, which a state
        dict does not record (``--norm-first``/``--post-norm``,
        ``--activation``, ``--norm-kind``). A value that contradicts the
        file's config is refused.

    Returns
    -------
    ImportedModel

    Raises
    ------
    SymattnError
        Missing file, directory, unknown suffix, unreadable or oversize file,
        or an unsupported model.
    """
    from symattn.core.validate import require_path

    path = Path(require_path(path, "path"))
    if tokens is not None:
        check_tokens(tokens)
    if norm_kind not in (None, "layernorm", "rmsnorm"):
        raise SymattnError(f"--norm-kind must be layernorm or rmsnorm, got {str(norm_kind)[:20]!r}")
    if norm_kind == "rmsnorm" and not path.is_dir():
        raise SymattnError("--norm-kind rmsnorm: a state dict's RMSNorm encoder layers are not read yet (a Hugging "
                           "Face Llama, Mistral or Qwen2 folder is)")
    if activation is not None:
        from symattn.audit.readers import _config_value

        activation = _config_value("activation", activation, "--activation")
    stated = {k: v for k, v in (("norm_first", norm_first), ("activation", activation),
                                 ("norm_kind", norm_kind)) if v is not None}
    if path.is_dir():
        from symattn.audit.hf import is_hf_folder, load_hf_folder

        if not is_hf_folder(path):
            raise SymattnError(f"{path} is a directory without config.json: give a Hugging Face model folder "
                               f"or a model file (.npz, .safetensors, .pt)")
        if normalizer not in (None, "exp"):
            raise SymattnError("a Hugging Face model uses softmax: --normalizer must be exp (or omitted)")
        model = load_hf_folder(path, tokens)
        _agree(model, heads, stated)
        return model
    if not path.is_file():
        raise SymattnError(f"no such file: {path}")
    size = path.stat().st_size
    if size > LIMITS["max_file_bytes"]:
        raise SymattnError(f"{path} has {size} bytes, beyond the limit {LIMITS['max_file_bytes']}")
    suffix = path.suffix.lower()
    if suffix in (".npz", ".safetensors"):
        meta: dict = {}
        arrays = read_npz(path) if suffix == ".npz" else read_safetensors(path, meta)
        if any(_PAPER_KEY.match(str(k)) for k in arrays):
            if heads not in (None, 1):
                raise SymattnError("--heads is for PyTorch state dicts: arrays carry their heads as a "
                                   "leading axis (H, ...)")
            if stated:
                raise SymattnError(f"--{next(iter(stated)).replace('_', '-')}: arrays Q1, K1, V1, ... are bare "
                                   "attention layers, with no norms or MLP")
            return from_arrays(arrays, normalizer or "exp", tokens or 4, str(path), suffix[1:])
        state, config, notes = arrays, parse_config(meta, f"{path}: __metadata__"), []
        kind = f"{suffix[1:]} state dict"
    elif suffix in (".pt", ".pth"):
        if normalizer not in (None, "exp"):
            raise SymattnError("torch.nn.MultiheadAttention always uses softmax: --normalizer "
                               "must be exp (or omitted) for a PyTorch model")
        state, config, notes = read_torch(path)
        kind = "torch-state-dict"
    else:
        raise SymattnError(f"unknown model format {suffix[:20] or '(no suffix)'!r} of {path}: use .npz "
                           f"or .safetensors (arrays Q1, K1, V1, ... or a state dict) or .pt/.pth "
                           f"(a state dict or a checkpoint holding one)")
    if normalizer not in (None, "exp"):
        raise SymattnError("torch.nn.MultiheadAttention always uses softmax: --normalizer "
                           "must be exp (or omitted) for a PyTorch model")
    for key, value in stated.items():
        if key in config and config[key] != value:
            raise SymattnError(f"--{key.replace('_', '-')} {value} contradicts the file's config ({config[key]})")
    config.update(stated)
    config["stated_by"] = {k: "the command line" for k in stated}
    n = tokens or config.get("sequence_length") or 4
    model = from_state_dict(state, n, str(path), heads, kind, heads_known=heads is not None,
                            config=config, notes=notes)
    if tokens is None:
        model.notes.append(f"tokens n = {n}: " + ("the model's sequence length (its config)"
                                                   if config.get("sequence_length") else
                                                   "the default (the file does not give a sequence "
                                                   "length: give --tokens n or --inputs FILE)"))
    return model


def _agree(model: ImportedModel, heads, stated: dict) -> None:
    """Refuse a command-line property that contradicts a Hugging Face config (which is what the model computes)."""
    hf = model.hf
    said = {"heads": heads, **stated}
    for key, value in said.items():
        if value is None or (key == "norm_kind" and "norm_kind" not in hf):
            continue
        if hf[key] != value:
            flag = {"norm_first": "--norm-first/--post-norm"}.get(key, "--" + key.replace("_", "-"))
            raise SymattnError(f"{flag} {value} contradicts {hf['folder']}/config.json ({hf[key]}), which "
                               f"is what the model computes")


#: Probe inputs read from ``--inputs FILE`` at most (the numerical tiers use the first ones).
MAX_INPUTS = 256


def load_inputs(path: "str | Path", width: int):
    """Probe inputs ``(B, n, d)`` (tokens as rows, as PyTorch's ``batch_first``) from an untrusted
    ``.npz``/``.safetensors``/``.pt`` file holding one array (or one named ``inputs``).

    Raises
    ------
    SymattnError
        A file of another kind, several arrays and none named ``inputs``, a shape other than
        ``(B, n, d)`` or ``(n, d)`` with ``d`` the model's width and ``n >= 2``, NaN/inf.
    """
    import numpy as np

    from symattn.audit.readers import real_array

    path = Path(path)
    if not path.is_file():
        raise SymattnError(f"--inputs: no such file: {path}")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        arrays = read_npz(path)
    elif suffix == ".safetensors":
        arrays = read_safetensors(path)
    elif suffix in (".pt", ".pth"):
        from symattn.core.optional import require_torch

        torch = require_torch()
        try:
            obj = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:
            raise SymattnError(f"--inputs: cannot read {path} ({type(exc).__name__})") from None
        arrays = {"inputs": obj} if hasattr(obj, "shape") else dict(obj) if isinstance(obj, dict) else {}
    else:
        raise SymattnError(f"--inputs: unknown format {suffix or '(no suffix)'!r}: use .npz, .safetensors or .pt")
    if "inputs" in arrays:
        value = arrays["inputs"]
    elif len(arrays) == 1:
        value = next(iter(arrays.values()))
    else:
        raise SymattnError(f"--inputs: {path} holds {len(arrays)} arrays and none is named 'inputs'")
    x = real_array("inputs", value, ndim=(2, 3))
    x = x[None] if x.ndim == 2 else x
    if x.shape[2] != width or x.shape[1] < 2 or x.shape[0] < 1:
        raise SymattnError(f"--inputs: shape {x.shape}: expected (B, n, {width}) with n >= 2 tokens as "
                           f"rows (the model's width is {width})")
    return np.ascontiguousarray(x[:MAX_INPUTS])
