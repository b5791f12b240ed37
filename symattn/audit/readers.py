"""Readers of untrusted model files: ``.npz``, ``.safetensors``, PyTorch ``.pt`` state dicts.

Every file is untrusted. Nothing is unpickled: ``.npz`` members are parsed
from their ``.npy`` headers (object arrays refused before any data is read),
``torch.load`` runs with ``weights_only=True``, ``.safetensors`` is a JSON
header plus raw numbers. Before any data is decompressed or converted, the
file size, the declared uncompressed size of every archive member (a zip bomb
is refused from its directory), the number of arrays and the total number of
entries are checked against :data:`LIMITS`; then every number must be finite
and at most :data:`LIMITS` ``["max_abs_weight"]`` in magnitude
(:func:`real_array`). Every refusal is one
:class:`~symattn.core.errors.SymattnError` line. What the arrays mean is
:mod:`symattn.audit.conventions`' business.
"""

from __future__ import annotations

import json
import math
import zipfile
import zlib
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from symattn.core.errors import SymattnError
from symattn.analyses.numerics import require_torch

__all__ = ["LIMITS", "real_array", "check_count", "check_tokens", "read_npz", "read_safetensors", "read_torch"]

#: Limits on untrusted input, checked before the corresponding work is done.
LIMITS = {
    "max_file_bytes": 2 ** 31,          # a model file on disk (2 GiB)
    "max_uncompressed_bytes": 2 ** 31,  # all archive members, as declared, before decompressing
    "max_arrays": 4096,                 # arrays (archive members, state-dict entries)
    "max_entries": 2 ** 25,             # numbers in all arrays together (33.5 million)
    "max_abs_weight": 1e8,              # |w| of any weight: no trained network comes near
}


def real_array(name: str, value: Any, ndim: Sequence[int] = (2,)) -> np.ndarray:
    """A finite real float64 array from untrusted ``value`` (exact for float16/32/64, small ints)."""
    arr = np.asarray(value) if not hasattr(value, "detach") else _tensor_array(name, value)
    if arr.dtype.hasobject or arr.dtype.kind not in "fiu" or arr.dtype.fields is not None:
        raise SymattnError(f"array {name} has dtype {arr.dtype}: only real numbers are supported")
    if arr.ndim not in ndim:
        raise SymattnError(f"array {name} has shape {arr.shape}: every weight must be a matrix"
                           + (" (or a stack of head matrices)" if 3 in ndim else ""))
    if arr.size > LIMITS["max_entries"]:
        raise SymattnError(f"array {name} has {arr.size} entries, beyond the limit "
                           f"{LIMITS['max_entries']}")
    if arr.dtype.kind in "iu" and arr.size and int(np.abs(arr).max()) > 2 ** 53:
        raise SymattnError(f"array {name} has integers beyond 2^53 (not exact in binary64)")
    out = arr.astype(np.float64)
    if not np.isfinite(out).all():
        bad = "NaN" if np.isnan(out).any() else "inf"
        raise SymattnError(f"array {name} contains {bad}: the audit needs finite weights")
    big = float(np.abs(out).max()) if out.size else 0.0
    if big > LIMITS["max_abs_weight"]:
        raise SymattnError(f"array {name} has an entry of magnitude {big:.3g}, beyond "
                           f"{LIMITS['max_abs_weight']:.0e}: no trained network has such weights; "
                           f"rescale the model")
    return out


def _tensor_array(name: str, value: Any) -> np.ndarray:
    torch = require_torch()
    _check_tensor(f"array {str(name)[:60]}", value)
    integer = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)
    if value.is_complex() or not (value.is_floating_point() or value.dtype in integer):
        raise SymattnError(f"array {name} has dtype {value.dtype}: only real numbers are supported")
    if value.numel() > LIMITS["max_entries"]:
        raise SymattnError(f"array {name} has {value.numel()} entries, beyond the limit "
                           f"{LIMITS['max_entries']}")
    return value.detach().cpu().double().numpy()


def _check_tensor(what: str, value: Any) -> None:
    """Refuse a tensor without plain dense data: sparse (COO, CSR, ...), meta (no data),
    quantized or nested tensors (``what`` names it in the message)."""
    torch = require_torch()
    if getattr(value, "is_meta", False) or value.device.type == "meta":
        raise SymattnError(f"{what} is a meta tensor (a shape without data): save the "
                           "trained weights, e.g. torch.save(model.state_dict(), path)")
    if value.layout != torch.strided or getattr(value, "is_nested", False):
        raise SymattnError(f"{what} is a {str(value.layout).replace('torch.', '')} tensor: only "
                           "dense weights are supported (convert with tensor.to_dense())")
    if getattr(value, "is_quantized", False):
        raise SymattnError(f"{what} is quantized ({value.dtype}): only real numbers are "
                           "supported (dequantize it first)")


def check_tokens(tokens: Any) -> int:
    """The token count ``n`` of an audit: an integer in [2, MAX_TOKENS]."""
    from symattn.core.limits import MAX_TOKENS
    from symattn.core.validate import require_int

    return require_int(tokens, "tokens (the token count n)", 2, MAX_TOKENS)


def check_count(entries: int, arrays: int, where: str) -> None:
    if arrays > LIMITS["max_arrays"]:
        raise SymattnError(f"{where} holds {arrays} arrays, beyond the limit {LIMITS['max_arrays']}")
    if entries > LIMITS["max_entries"]:
        raise SymattnError(f"{where} holds {entries} numbers, beyond the limit "
                           f"{LIMITS['max_entries']} (the audit needs far fewer)")


def _check_zip(path: Path, zf: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    infos = zf.infolist()
    declared = sum(i.file_size for i in infos)
    if len(infos) > LIMITS["max_arrays"]:
        raise SymattnError(f"{path} holds {len(infos)} archive members, beyond the limit "
                           f"{LIMITS['max_arrays']}")
    if declared > LIMITS["max_uncompressed_bytes"]:
        raise SymattnError(f"{path} declares {declared} bytes uncompressed, beyond the limit "
                           f"{LIMITS['max_uncompressed_bytes']}: refused before decompressing")
    return infos


def read_npz(path: Path) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz``, parsed from their ``.npy`` headers; never unpickles."""
    arrays, entries = {}, 0
    try:
        with zipfile.ZipFile(path) as zf:
            for info in _check_zip(path, zf):
                name = info.filename
                if not name.endswith(".npy") or info.is_dir():
                    raise SymattnError(f"{path}: member {name[:60]!r} is not a .npy array")
                with zf.open(info) as fp:
                    version = np.lib.format.read_magic(fp)
                    read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                                   else np.lib.format.read_array_header_2_0)
                    shape, fortran, dtype = read_header(fp)
                    if dtype.hasobject or dtype.fields is not None or dtype.kind not in "fiu":
                        raise SymattnError(f"{path}: array {name[:-4]!r} has dtype {dtype}: only "
                                           f"real numbers are supported (object arrays are never "
                                           f"loaded)")
                    count = math.prod(shape)
                    entries += count
                    check_count(entries, len(arrays) + 1, str(path))
                    data = fp.read(count * dtype.itemsize)
                    if len(data) != count * dtype.itemsize:
                        raise SymattnError(f"{path}: array {name[:-4]!r} is truncated")
                    arrays[name[:-4]] = np.frombuffer(data, dtype=dtype).reshape(
                        shape, order="F" if fortran else "C")
    except SymattnError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError,
            KeyError, SyntaxError) as exc:
        raise SymattnError(f"cannot read {path} as a NumPy .npz archive ({type(exc).__name__}: "
                           f"{str(exc)[:80]}); write it with numpy.savez") from None
    return arrays


def _count(value: Any) -> bool:
    """A non-negative integer that is not a bool (JSON ``true`` is not a size)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


_SAFETENSORS_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4",
                       "I16": "<i2", "I8": "i1", "U8": "u1"}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a ``.safetensors`` file: an 8-byte header length, a JSON header, raw numbers."""
    size = path.stat().st_size
    try:
        with path.open("rb") as fp:
            head = fp.read(8)
            if len(head) != 8:
                raise SymattnError(f"{path} is too short to be a .safetensors file")
            n = int.from_bytes(head, "little")
            if n > min(size - 8, 100 * 2 ** 20):
                raise SymattnError(f"{path}: the .safetensors header length {n} does not fit the "
                                   f"file ({size} bytes)")
            header = json.loads(fp.read(n))
            if not isinstance(header, dict):
                raise SymattnError(f"{path}: the .safetensors header is not a JSON object")
            header.pop("__metadata__", None)
            check_count(0, len(header), str(path))
            arrays, entries, base, spans = {}, 0, 8 + n, []
            for name, spec in header.items():
                dtype_name = spec.get("dtype") if isinstance(spec, dict) else spec
                if not isinstance(dtype_name, str) or dtype_name not in _SAFETENSORS_DTYPES:
                    raise SymattnError(f"{path}: tensor {str(name)[:60]!r} has dtype "
                                       f"{str(dtype_name)[:20]}: only real numbers are supported")
                shape, offsets = spec.get("shape"), spec.get("data_offsets")
                if (not isinstance(shape, list) or len(shape) > 8
                        or not all(_count(s) for s in shape)
                        or not isinstance(offsets, list) or len(offsets) != 2
                        or not all(_count(o) for o in offsets)):
                    raise SymattnError(f"{path}: tensor {str(name)[:60]!r} has a malformed entry "
                                       "(shape and data_offsets must be lists of non-negative integers)")
                dtype = np.dtype(_SAFETENSORS_DTYPES[spec["dtype"]])
                count = math.prod(shape)
                entries += count
                check_count(entries, len(arrays) + 1, str(path))
                start, stop = offsets
                if stop - start != count * dtype.itemsize or start < 0 or base + stop > size:
                    raise SymattnError(f"{path}: tensor {str(name)[:60]!r} does not fit the file "
                                       f"(truncated or malformed)")
                spans.append((start, stop, str(name)))
                fp.seek(base + start)
                arrays[str(name)] = np.frombuffer(fp.read(stop - start), dtype=dtype).reshape(shape)
            spans.sort()
            for (_, stop, first), (start, _, second) in zip(spans, spans[1:]):
                if start < stop:
                    raise SymattnError(f"{path}: tensors {first[:40]!r} and {second[:40]!r} overlap "
                                       "in the file (malformed .safetensors data_offsets)")
    except SymattnError:
        raise
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise SymattnError(f"cannot read {path} as a .safetensors file ({type(exc).__name__})") from None
    return arrays


def read_torch(path: Path) -> Mapping[str, Any]:
    """A state dict via ``torch.load(weights_only=True)`` (nothing is executed), sizes checked first."""
    torch = require_torch()
    if zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as zf:
                _check_zip(path, zf)
        except zipfile.BadZipFile as exc:
            raise SymattnError(f"cannot read {path} as a PyTorch file ({exc})") from None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # UnpicklingError for anything but tensors, RuntimeError, EOFError, ...
        raise SymattnError(f"cannot read {path} as a PyTorch state dict ({type(exc).__name__}); "
                           f"save it with torch.save(model.state_dict(), path)") from None
    if not isinstance(state, Mapping):
        raise SymattnError(f"{path} holds a {type(state).__name__}, not a state dict")
    entries = 0
    for key, value in state.items():
        if not isinstance(value, torch.Tensor):
            raise SymattnError(f"{path}: entry {str(key)[:60]!r} is a {type(value).__name__}, "
                               f"not a tensor")
        _check_tensor(f"{path}: entry {str(key)[:60]!r}", value)
        entries += value.numel()
    check_count(entries, len(state), str(path))
    return state


