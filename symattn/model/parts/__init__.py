"""Layer parts, one module each, and their registry.

A part owns everything about it (:mod:`symattn.model.parts.norm` lists what a norm part owns);
adding one is its module, its test and one registration line below. The layer
(:class:`~symattn.model.layers.Layer`) holds a part's spelling and asks :func:`norm_part` for the
object; analyses ask the object's properties.
"""

from __future__ import annotations

from symattn.core.errors import SymattnError
from symattn.model.parts.layernorm import LayerNorm
from symattn.model.parts.norm import Norm
from symattn.model.parts.rmsnorm import RMSNorm

__all__ = ["NORM_KINDS", "norm_part"]  # Norm is documented in symattn.model.parts.norm

#: The norm parts by spelling (``--norm-kind``, the spec key ``norm_kind``).
NORM_KINDS: dict[str, Norm] = {part.spelling: part for part in (LayerNorm(), RMSNorm())}


def norm_part(spelling: str) -> Norm:
    """The norm part spelled ``spelling``.

    >>> norm_part("layernorm").title
    'LayerNorm'
    >>> norm_part("batchnorm")
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: norm kind must be one of layernorm, rmsnorm, got 'batchnorm'
    """
    if not isinstance(spelling, str) or spelling not in NORM_KINDS:
        raise SymattnError(f"norm kind must be one of {', '.join(NORM_KINDS)}, got {spelling!r}")
    return NORM_KINDS[spelling]


# the decoder parts (Llama, Mistral, Qwen2): rotary positions, SwiGLU, grouped-query attention
from symattn.model.parts.gqa import GroupedQueryAttention  # noqa: E402
from symattn.model.parts.rotary import Rotary  # noqa: E402
from symattn.model.parts.swiglu import SwiGLU  # noqa: E402

#: The decoder parts by spelling (classes; the audit builds them from a model's config).
DECODER_PARTS: dict[str, type] = {part.spelling: part for part in (Rotary, SwiGLU, GroupedQueryAttention)}
__all__ += ["DECODER_PARTS"]
