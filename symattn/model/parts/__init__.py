"""Layer parts, one module each, and their registry.

A part owns everything about it (:mod:`symattn.model.parts.norm` lists what a norm part owns);
adding one is its module, its test and one registration line below. The layer
(:class:`~symattn.model.layers.Layer`) holds a part's spelling (``norm_kind``, ``skip``, ``combine``,
``bias``, ``activation``) and asks :func:`norm_part`, :func:`skip_part`, :func:`combine_part`,
:func:`bias_part` or :func:`activation_part` for the object; its heads are
:class:`~symattn.model.parts.head.Head` objects. Analyses ask the objects' properties.
"""

from __future__ import annotations

from symattn.core.errors import SymattnError
from symattn.model.parts.bias import BIAS_KINDS, bias_part
from symattn.model.parts.head import Head
from symattn.model.parts.activation import Activation, Gelu, GeluTanh, Polynomial, Relu, Sigmoid, Silu, Tanh
from symattn.model.parts.layernorm import LayerNorm
from symattn.model.parts.norm import Norm
from symattn.model.parts.output import COMBINE_KINDS, combine_part
from symattn.model.parts.rmsnorm import RMSNorm
from symattn.model.parts.skip import SKIP_KINDS, skip_part

__all__ = ["NORM_KINDS", "norm_part", "ACTIVATION_KINDS", "activation_part", "SKIP_KINDS", "skip_part",
           "COMBINE_KINDS", "combine_part", "BIAS_KINDS", "bias_part", "Head"]  # the contracts: their modules

#: The norm parts by spelling (``--norm-kind``, the spec key ``norm_kind``).
NORM_KINDS: dict[str, Norm] = {part.spelling: part for part in (LayerNorm(), RMSNorm())}


def norm_part(spelling: str) -> Norm:
    """The norm part spelled ``spelling``.

    Parameters
    ----------
    spelling : str
        ``"layernorm"`` or ``"rmsnorm"`` (:data:`NORM_KINDS`).

    Returns
    -------
    Norm

    Raises
    ------
    SymattnError
        An unknown spelling (one line).

    Examples
    --------
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


#: The activation parts by spelling (``--activation``, the spec key ``activation``); ``poly:c0,c1,...``
#: spells a :class:`~symattn.model.parts.activation.Polynomial` (its entry here is ``x``).
ACTIVATION_KINDS: dict[str, Activation] = {part.spelling.split(":")[0]: part for part in (
    Tanh(), Gelu(), GeluTanh(), Silu(), Sigmoid(), Relu(), Polynomial())}


def activation_part(spelling: "str | Activation") -> Activation:
    """The activation part spelled ``spelling`` (``poly:c0,c1,...`` with rational ``c_k``).

    Parameters
    ----------
    spelling : str or Activation
        A spelling of :data:`ACTIVATION_KINDS`, ``poly:c0,c1,...``, or a part (returned as it is).

    Returns
    -------
    Activation

    Raises
    ------
    SymattnError
        An unknown spelling (one line).

    Examples
    --------
    >>> activation_part("poly:0,1,1/2").coefficients
    (Fraction(0, 1), Fraction(1, 1), Fraction(1, 2))
    >>> activation_part("tanh").is_odd, activation_part("gelu").is_odd
    (True, False)
    >>> activation_part("swish")
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: activation must be one of tanh, gelu, gelu_tanh, silu, sigmoid, relu, poly:c0,c1,..., got 'swish'
    """
    if isinstance(spelling, Activation):
        return spelling
    if hasattr(spelling, "coefficients") and hasattr(spelling, "name"):  # an algebra's Elementwise
        spelling = str(spelling)
    if isinstance(spelling, str) and spelling.startswith("poly:"):
        from symattn.core.algebras.functions import activation  # the one parser of coefficients

        return Polynomial(activation(spelling).coefficients)
    if not isinstance(spelling, str) or spelling not in ACTIVATION_KINDS or spelling == "poly":
        names = [k for k in ACTIVATION_KINDS if k != "poly"]
        raise SymattnError(f"activation must be one of {', '.join(names)}, poly:c0,c1,..., got {spelling!r}")
    return ACTIVATION_KINDS[spelling]


# the decoder parts (Llama, Mistral, Qwen2): rotary positions, SwiGLU, grouped-query attention
from symattn.model.parts.gqa import GroupedQueryAttention  # noqa: E402
from symattn.model.parts.rotary import Rotary  # noqa: E402
from symattn.model.parts.swiglu import SwiGLU  # noqa: E402

#: The decoder parts by spelling (classes; the audit builds them from a model's config).
DECODER_PARTS: dict[str, type] = {part.spelling: part for part in (Rotary, SwiGLU, GroupedQueryAttention)}
__all__ += ["DECODER_PARTS"]
