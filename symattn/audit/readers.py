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
from symattn.core.optional import require_torch
from symattn.audit.model import ACTIVATIONS

__all__ = ["LIMITS", "real_array", "check_count", "check_tokens", "read_npz", "read_safetensors", "read_torch",
           "parse_config", "parse_json", "unwrap_checkpoint", "STATE_KEYS", "CONFIG_KEYS"]

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


_SAFETENSORS_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8", "I32": "<i4",
                       "I16": "<i2", "I8": "i1", "U8": "u1"}
#: Entries of a ``.safetensors`` ``__metadata__`` map read at most (all of them, up to this bound; more is refused).
MAX_METADATA = 4096
#: Bytes of a JSON header or ``config.json`` parsed at most.
MAX_JSON_BYTES = 100 * 2 ** 20


def _no_duplicates(pairs: list) -> dict:
    """A JSON object's pairs as a dict, refusing a key given twice (JSON allows it; a model file must not)."""
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise SymattnError(f"the key {str(key)[:60]!r} appears twice in one JSON object: refused "
                               "(which of the two is meant is not recorded)")
        out[key] = value
    return out


def parse_json(data: "bytes | str", where: str) -> Any:
    """Untrusted JSON text: at most :data:`MAX_JSON_BYTES`, no key twice in an object, no NaN/Infinity.

    >>> parse_json(b'{"a": 1}', "x")
    {'a': 1}
    >>> parse_json(b'{"a": 1, "a": 2}', "x")
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: x: the key 'a' appears twice in one JSON object: refused (which of the two is meant is not recorded)
    """
    if len(data) > MAX_JSON_BYTES:
        raise SymattnError(f"{where}: {len(data)} bytes of JSON, beyond the limit {MAX_JSON_BYTES}")

    def constant(name: str) -> None:
        raise SymattnError(f"{where}: {name} is not a JSON number")

    try:
        return json.loads(data, object_pairs_hook=_no_duplicates, parse_constant=constant)
    except SymattnError as exc:
        raise SymattnError(f"{where}: {str(exc).removeprefix(where + ': ')}") from None
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise SymattnError(f"{where} is not valid JSON ({type(exc).__name__})") from None


def _bfloat16(raw: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) as exact float32 values (the top half of a binary32)."""
    return (raw.astype(np.uint32) << 16).view(np.float32)


def read_safetensors(path: Path, metadata: dict | None = None) -> dict[str, np.ndarray]:
    """The arrays of a ``.safetensors`` file: an 8-byte header length, a JSON header, raw numbers.

    Its ``__metadata__`` (a string-to-string map) is copied into ``metadata`` when given."""
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
            header = parse_json(fp.read(n), f"{path}: the .safetensors header")
            if not isinstance(header, dict):
                raise SymattnError(f"{path}: the .safetensors header is not a JSON object")
            meta = header.pop("__metadata__", None)
            if meta is not None and (not isinstance(meta, dict) or len(meta) > MAX_METADATA):
                raise SymattnError(f"{path}: __metadata__ must be a map of at most {MAX_METADATA} strings")
            if metadata is not None and meta:
                metadata.update({str(k)[:60]: str(v)[:200] for k, v in meta.items()})
            check_count(0, len(header), str(path))
            arrays, entries, base, spans = {}, 0, 8 + n, []
            for name, spec in header.items():
                if not isinstance(spec, dict):
                    raise SymattnError(f"{path}: tensor {str(name)[:60]!r} has a malformed entry "
                                       f"({type(spec).__name__}, not an object with dtype, shape and "
                                       "data_offsets)")
                dtype_name = spec.get("dtype")
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
                raw = np.frombuffer(fp.read(stop - start), dtype=dtype).reshape(shape)
                arrays[str(name)] = _bfloat16(raw) if dtype_name == "BF16" else raw
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


#: Entries of a training checkpoint that may hold the model's state dict, in the order tried.
STATE_KEYS = ("model_state_dict", "state_dict", "model", "module", "net")
#: Entries of a checkpoint that may hold its configuration.
CONFIG_KEYS = ("config", "hparams", "hyper_parameters", "args", "model_config")
_CONFIG_NAMES = {
    "heads": ("nhead", "num_heads", "n_heads", "n_head", "heads"),
    "norm_first": ("norm_first", "pre_norm", "prenorm"),
    "activation": ("activation", "act", "hidden_act"),
    "sequence_length": ("seq_len", "sequence_length", "max_len", "max_seq_len", "seq_length",
                        "block_size", "n_ctx", "context_length", "tokens"),
    "eps": ("layer_norm_eps", "eps", "norm_eps"),
}


def _config_value(field: str, value: Any, where: str) -> Any:
    if isinstance(value, str):  # safetensors metadata are strings
        low = value.strip().lower()
        if field == "norm_first" and low in ("true", "false", "1", "0"):
            value = low in ("true", "1")
        elif field in ("heads", "sequence_length") and low.isdigit():
            value = int(low)
        elif field == "eps":
            try:
                value = float(low)
            except ValueError:
                pass
    if field in ("heads", "sequence_length"):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2 ** 20:
            raise SymattnError(f"{where}: {field} = {str(value)[:40]!r} is not a positive integer")
        if field == "sequence_length" and value < 2:
            raise SymattnError(f"{where}: the sequence length must be at least 2, got {value}")
    elif field == "norm_first":
        if not isinstance(value, bool):
            raise SymattnError(f"{where}: norm_first = {str(value)[:40]!r} is not true/false")
    elif field == "activation":
        name = str(value).strip().lower().replace("-", "_")
        name = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "swish": "silu"}.get(name, name)
        if name not in ACTIVATIONS:
            raise SymattnError(f"{where}: activation {str(value)[:40]!r} is not covered: use one of "
                               f"{', '.join(ACTIVATIONS)}")
        value = name
    elif field == "eps":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
            raise SymattnError(f"{where}: layer_norm_eps = {str(value)[:40]!r} is not in (0, 1)")
        value = float(value)
    return value


def parse_config(config: Mapping[str, Any], where: str) -> dict:
    """The fields the audit reads from a model's config (heads, ``norm_first``, activation,
    sequence length, LayerNorm ``eps``), validated; unknown keys are ignored.

    >>> parse_config({"nhead": 4, "norm_first": "false", "seq_len": 8, "lr": 0.1}, "cfg")
    {'heads': 4, 'norm_first': False, 'sequence_length': 8}
    """
    out = {}
    for field, names in _CONFIG_NAMES.items():
        for name in names:
            if name in config:
                out[field] = _config_value(field, config[name], where)
                break
    return out


def _tensors_only(state: Mapping, torch) -> bool:
    return bool(state) and all(isinstance(v, torch.Tensor) for v in state.values())


def unwrap_checkpoint(obj: Any, where: str) -> tuple[Mapping[str, Any], dict, list[str]]:
    """The state dict, the config and notes of a loaded ``.pt`` object: a state dict itself, or a
    training checkpoint ``{"model_state_dict": ..., "epoch": ..., "config": {...}}`` (the key used
    is said in a note)."""
    torch = require_torch()
    if not isinstance(obj, Mapping):
        raise SymattnError(f"{where} holds a {type(obj).__name__}, not a state dict")
    if _tensors_only(obj, torch):
        return obj, {}, []
    config: dict = {}
    for key in CONFIG_KEYS:
        if isinstance(obj.get(key), Mapping):
            config = parse_config(obj[key], f"{where}: entry {key!r}")
            break
    for key in STATE_KEYS:
        if isinstance(obj.get(key), Mapping) and _tensors_only(obj[key], torch):
            read = [key] + [k for k in CONFIG_KEYS if k in obj and config][:1]
            ignored = [str(k)[:30] for k in obj if k not in read]
            note = (f"checkpoint: the state dict is entry {key!r}"
                    + (f", the config entry {read[1]!r}" if len(read) > 1 else "")
                    + f" (ignored: {', '.join(ignored) or 'nothing'})")
            return obj[key], config, [note]
    bad = next(((k, v) for k, v in obj.items() if not isinstance(v, torch.Tensor)), None)
    keys = ", ".join(str(k)[:30] for k in list(obj)[:8])
    raise SymattnError(f"{where}: entry {str(bad[0])[:60]!r} is a {type(bad[1]).__name__}, not a "
                       f"tensor, and no entry {' / '.join(STATE_KEYS[:2])} holds a state dict "
                       f"(entries: {keys}); save torch.save(model.state_dict(), path) or "
                       f"{{'model_state_dict': model.state_dict(), ...}}")


def read_torch(path: Path) -> tuple[Mapping[str, Any], dict, list[str]]:
    """A state dict via ``torch.load(weights_only=True)`` (nothing is executed), sizes checked first;
    a training checkpoint is unwrapped (:func:`unwrap_checkpoint`). Returns the state dict, the
    config it carries (:func:`parse_config`) and notes."""
    torch = require_torch()
    if zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as zf:
                _check_zip(path, zf)
        except zipfile.BadZipFile as exc:
            raise SymattnError(f"cannot read {path} as a PyTorch file ({exc})") from None
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # UnpicklingError for anything but tensors, RuntimeError, EOFError, ...
        raise SymattnError(f"cannot read {path} as a PyTorch state dict ({type(exc).__name__}); "
                           f"save it with torch.save(model.state_dict(), path)") from None
    state, config, notes = unwrap_checkpoint(obj, str(path))
    entries = 0
    for key, value in state.items():
        _check_tensor(f"{path}: entry {str(key)[:60]!r}", value)
        entries += value.numel()
    check_count(entries, len(state), str(path))
    return state, config, notes
