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

from pathlib import Path
from typing import Sequence

from symattn.core.errors import SymattnError
from symattn.audit.conventions import from_arrays, from_state_dict, from_torch
from symattn.audit.model import Head, ImportedModel, exact_matrix, rational_array
from symattn.audit.readers import LIMITS, check_tokens, read_npz, read_safetensors, read_torch

__all__ = ["Head", "ImportedModel", "LIMITS", "from_arrays", "from_torch", "from_state_dict",
           "load_model", "exact_matrix", "rational_array"]


def load_model(path: "str | Path", normalizer: "str | Sequence | None" = None,
               tokens: int = 4, heads: "int | Sequence[int] | None" = None) -> ImportedModel:
    """Read a model file: ``.npz`` / ``.safetensors`` arrays or a ``.pt``/``.pth`` state dict.

    Parameters
    ----------
    path : str or Path
        The file (untrusted: see the module docstring for what is checked).
    normalizer : str or sequence, optional
        For arrays (default softmax ``exp``); a PyTorch model is always softmax,
        so any other value is refused there.
    tokens : int
        The token count ``n >= 2`` of the audit.
    heads : int or sequence, optional
        ``num_heads`` of a state dict's layers (default 1); arrays carry their
        heads in their shapes, so any other value is refused there.

    Raises
    ------
    SymattnError
        Missing file, directory, unknown suffix, unreadable or oversize file,
        or an unsupported model.
    """
    from symattn.core.validate import require_path

    path = Path(require_path(path, "path"))
    check_tokens(tokens)
    if path.is_dir():
        raise SymattnError(f"{path} is a directory: give a model file (.npz, .safetensors, .pt)")
    if not path.is_file():
        raise SymattnError(f"no such file: {path}")
    size = path.stat().st_size
    if size > LIMITS["max_file_bytes"]:
        raise SymattnError(f"{path} has {size} bytes, beyond the limit {LIMITS['max_file_bytes']}")
    suffix = path.suffix.lower()
    if suffix in (".npz", ".safetensors"):
        if heads not in (None, 1):
            raise SymattnError("--heads is for PyTorch state dicts: arrays carry their heads as a "
                               "leading axis (H, ...)")
        arrays = read_npz(path) if suffix == ".npz" else read_safetensors(path)
        return from_arrays(arrays, normalizer or "exp", tokens, str(path), suffix[1:])
    if suffix in (".pt", ".pth"):
        if normalizer not in (None, "exp"):
            raise SymattnError("torch.nn.MultiheadAttention always uses softmax: --normalizer "
                               "must be exp (or omitted) for a PyTorch file")
        return from_state_dict(read_torch(path), tokens, str(path), 1 if heads is None else heads,
                               heads_known=heads is not None)
    raise SymattnError(f"unknown model format {suffix[:20] or '(no suffix)'!r} of {path}: use .npz "
                       f"or .safetensors (arrays Q1, K1, V1, ...) or .pt/.pth (a state dict)")
