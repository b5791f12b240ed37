"""Stack descriptions in TOML: one ``[[layer]]`` table per layer, read by :func:`load_spec`.

The file is untrusted: it is parsed by :mod:`tomllib` (never evaluated), every
key and value is validated with a one-line
:class:`~symattn.core.errors.SymattnError`, and normalizer strings go through
:class:`~symattn.model.normalizer.Normalizer` (the whitelist parser).
"""

from __future__ import annotations

import tomllib
from typing import Any

from symattn.core.errors import SymattnError
from symattn.core.limits import MAX_TOKENS
from symattn.model.architecture import Architecture, Head, Layer, parse_mask
from symattn.model.normalizer import Normalizer

__all__ = ["load_spec", "MAX_SPEC_LAYERS"]

#: Most layers a spec may describe.
MAX_SPEC_LAYERS = 16

_LAYER_KEYS = {"rank", "normalizer", "skip", "mask", "heads", "head_ranks", "combine", "head_width", "repeat",
               "bias", "norm", "norm_kind", "eps", "mlp", "activation"}
_TOP_KEYS = {"width", "tokens", "layer"}

#: Deepest nesting of arrays and tables in a ``--spec`` file (a [[layer]] mask pattern is 4).
_MAX_NESTING = 6


def _want(value: Any, kind: type, where: str) -> Any:
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise SymattnError(f"{where} must be an integer, got {value!r}")
    if kind is str and not isinstance(value, str):
        raise SymattnError(f"{where} must be a string, got {value!r}")
    return value


def _mask(value: Any, where: str):
    if isinstance(value, list):
        if not all(isinstance(row, list) and all(v in (0, 1) and not isinstance(v, bool) for v in row)
                   for row in value):
            raise SymattnError(f"{where}: a mask pattern is a list of rows of 0 and 1")
        if len({len(row) for row in value}) > 1:
            raise SymattnError(f"{where}: the rows of a mask pattern must have equal lengths "
                               f"(got {sorted({len(row) for row in value})})")
        return tuple(tuple(row) for row in value)
    return parse_mask(_want(value, str, f"{where}: mask"))


def _layer(table: dict, width: int, where: str) -> tuple[Layer, int]:
    """One ``[[layer]]`` table as a layer, and how often it repeats."""
    if not isinstance(table, dict):
        raise SymattnError(f"{where} must be a [[layer]] table")
    unknown = set(table) - _LAYER_KEYS
    if unknown:
        raise SymattnError(f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(_LAYER_KEYS)}")
    repeat = _want(table.get("repeat", 1), int, f"{where}: repeat")
    if not 1 <= repeat <= MAX_SPEC_LAYERS:
        raise SymattnError(f"{where}: repeat must be in [1, {MAX_SPEC_LAYERS}]")
    heads = _want(table.get("heads", 1), int, f"{where}: heads")
    head_ranks = table.get("head_ranks")
    if head_ranks is not None:
        if not isinstance(head_ranks, list):
            raise SymattnError(f"{where}: head_ranks must be a list of integers")
        head_ranks = tuple(_want(r, int, f"{where}: head_ranks entries") for r in head_ranks)
    mask = _mask(table.get("mask", "none"), where)
    head_width = table.get("head_width")
    skip = _want(table.get("skip", "none"), str, f"{where}: skip")
    combine = _want(table.get("combine", "sum"), str, f"{where}: combine")
    head_width = None if head_width is None else _want(head_width, int, f"{where}: head_width")
    rank = _want(table.get("rank", head_ranks[0] if head_ranks else 1), int, f"{where}: rank")
    phi = Normalizer(_want(table.get("normalizer", "exp"), str, f"{where}: normalizer"))
    bias = table.get("bias", False)
    if not isinstance(bias, bool):
        raise SymattnError(f"{where}: bias must be true or false, got {bias!r}")
    eps = table.get("eps", "1/100000")
    if not isinstance(eps, (str, int)) or isinstance(eps, bool):
        raise SymattnError(f"{where}: eps must be a string like \"1/100000\" or \"1e-5\" (an exact rational)")
    block = dict(bias=bias, norm=_want(table.get("norm", "none"), str, f"{where}: norm"), eps=eps,
                 mlp=_want(table.get("mlp", 0), int, f"{where}: mlp"),
                 activation=_want(table.get("activation", "tanh"), str, f"{where}: activation"),
                 norm_kind=_want(table.get("norm_kind", "layernorm"), str, f"{where}: norm_kind"))
    try:
        layer = Layer(width, width, phi, (Head(rank),)).with_kind(
            skip=skip, mask=mask, heads=heads, head_ranks=head_ranks, combine=combine, head_width=head_width,
            **block)
    except SymattnError as exc:
        raise SymattnError(f"{where}: {exc}") from None
    if "eps" in table and layer.norm == "none":  # a part's option without the part: never ignored
        raise SymattnError(f"{where}: eps is the LayerNorm's eps, but the layer has no norm: give norm = "
                           "\"pre\" or \"post\" with it, or drop eps")
    if "activation" in table and not layer.mlp:
        raise SymattnError(f"{where}: activation is the MLP's, but the layer has no mlp: give mlp = M "
                           "with it, or drop activation")
    return layer, repeat


def load_spec(text: str) -> Architecture:
    """An :class:`~symattn.model.architecture.Architecture` from TOML text (parsed by
    :mod:`tomllib`, validated).

    Top level: ``width``, ``tokens``; then one ``[[layer]]`` table per layer (or
    per ``repeat`` layers) with ``rank`` (default 1), ``normalizer`` (default
    ``"exp"``), ``skip`` (``none|value|folded``), ``mask`` (``none``,
    ``causal``, ``window:W`` or a list of 0/1 rows), ``heads``, ``head_ranks``,
    ``combine`` (``sum|concat``), ``head_width``, ``repeat``, and the transformer-block parts
    ``bias`` (true/false), ``norm`` (``none|pre|post``), ``norm_kind`` (a part of :mod:`symattn.model.parts`, default ``layernorm``), ``eps`` (a string such as
    ``"1/100000"`` or ``"1e-5"``, read exactly), ``mlp`` (hidden width) and ``activation``
    (``tanh``, ``gelu``, ``gelu_tanh``, ``silu``, ``sigmoid``, ``relu``, ``poly:c0,c1,...``).

    Parameters
    ----------
    text : str
        The TOML text (untrusted: its size, nesting and every value are checked).

    Returns
    -------
    Architecture

    Raises
    ------
    SymattnError
        For text that is not TOML, nests too deeply, or names an unknown key or a bad value
        (one line, naming the layer and the key).

    Examples
    --------
    >>> b = load_spec('width = 2\\ntokens = 3\\n[[layer]]\\nskip = "value"\\nnorm = "post"\\nmlp = 4\\nbias = true')
    >>> b.layers[0].parts()
    ['skip value', 'biases', 'post-norm LayerNorm eps = 1/100000', 'MLP m = 4 tanh']

    >>> v = load_spec('width = 2\\ntokens = 3\\n[[layer]]\\nskip = "value"\\nmask = "causal"\\nrepeat = 2')
    >>> v.depth, v.layers[1].skip, v.layers[1].mask
    (2, 'value', 'causal')
    >>> load_spec('width = 2\\ntokens = 3\\n[[layer]]\\nheads = "two"')
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: spec layer 1: heads must be an integer, got 'two'
    """
    from symattn.core.validate import nesting_depth

    if not isinstance(text, str):
        raise SymattnError(f"a spec is TOML text, got {type(text).__name__}")
    try:
        spec = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SymattnError(f"spec is not valid TOML: {exc}") from None
    except RecursionError:
        raise SymattnError(f"spec nests arrays or tables too deeply (at most {_MAX_NESTING})") from None
    if nesting_depth(spec, _MAX_NESTING) > _MAX_NESTING:
        raise SymattnError(f"spec nests arrays or tables more than {_MAX_NESTING} deep (a [[layer]] "
                           "mask is 4)")
    unknown = set(spec) - _TOP_KEYS
    if unknown:
        raise SymattnError(f"unknown spec keys {sorted(unknown)}; allowed: {sorted(_TOP_KEYS)}")
    for key in ("width", "tokens", "layer"):
        if key not in spec:
            raise SymattnError(f"spec needs '{key}'" + (" (one [[layer]] table per layer)" if key == "layer" else ""))
    width = _want(spec["width"], int, "spec width")
    tokens = _want(spec["tokens"], int, "spec tokens")
    if not 1 <= width <= 64 or not 2 <= tokens <= min(64, MAX_TOKENS):
        raise SymattnError("spec width must be in [1, 64] and tokens in [2, 64]")
    if not isinstance(spec["layer"], list) or not spec["layer"]:
        raise SymattnError("spec 'layer' must be one or more [[layer]] tables")
    layers: list[Layer] = []
    for i, table in enumerate(spec["layer"], 1):
        layer, repeat = _layer(table, width, f"spec layer {i}")
        layers += [layer] * repeat
    if len(layers) > MAX_SPEC_LAYERS:
        raise SymattnError(f"spec has {len(layers)} layers; at most {MAX_SPEC_LAYERS}")
    return Architecture(layers=layers, tokens=tokens)
