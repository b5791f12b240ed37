"""Deprecated: the former variant layer kinds, now parts of the one architecture.

Skips, masks, several heads and concatenated heads are parts of every
:class:`~symattn.model.layers.Layer`: build a stack with
``Architecture.uniform(..., skip=..., mask=..., heads=..., combine=...)``,
``arch.with_layers(skip=...)`` or :func:`symattn.model.spec.load_spec`, and use
the one graph builder (:func:`symattn.model.network.native_network`,
:func:`~symattn.model.network.effective_network`) and symmetry module
(:mod:`symattn.model.symmetries`). The names below keep working with a
:class:`DeprecationWarning` and will be removed in a later release.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from symattn.core.errors import SymattnError
from symattn.model.architecture import Architecture, mask_matrix, parse_mask  # noqa: F401  re-exported
from symattn.model.spec import load_spec  # noqa: F401  re-exported

__all__ = ["LayerKind", "VariantArchitecture", "with_layers", "variant_network", "score_network", "score_names",
           "random_variant_point", "symmetry_directions", "head_classes", "head_permutation_check",
           "parse_mask", "mask_matrix", "load_spec"]


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"symattn.model.variants.{old} is deprecated; use {new}", DeprecationWarning, stacklevel=3)


@dataclass(frozen=True)
class LayerKind:
    """Deprecated description of one layer's parts; use the keywords of
    :meth:`symattn.model.layers.Layer.with_kind` (``arch.with_layers(**kind)``)."""

    skip: str = "none"
    mask: "str | tuple[tuple[int, ...], ...]" = "none"
    heads: int = 1
    head_ranks: tuple[int, ...] | None = None
    combine: str = "sum"
    head_width: int | None = None

    def __post_init__(self) -> None:
        _deprecated("LayerKind", "Architecture.with_layers(skip=..., mask=..., heads=..., combine=...)")
        from symattn.model.architecture import Layer
        from symattn.model.normalizer import Normalizer

        width = max(self.head_width or 1, 1)
        Layer(width, width, Normalizer("exp")).with_kind(**self.as_kind())  # validates

    def as_kind(self) -> dict:
        """The keywords of :meth:`~symattn.model.layers.Layer.with_kind`."""
        return dict(skip=self.skip, mask=self.mask, heads=self.heads, head_ranks=self.head_ranks,
                    combine=self.combine, head_width=self.head_width)

    def ranks(self, r: int) -> tuple[int, ...]:
        """Head ranks ``r_h`` given the layer's rank ``r``."""
        return self.head_ranks or (r,) * self.heads


def VariantArchitecture(base: Architecture, layers: Sequence[LayerKind] = ()) -> Architecture:  # noqa: N802
    """Deprecated: ``base`` with layer ``i`` of the kind ``layers[i]``; an
    :class:`~symattn.model.architecture.Architecture`."""
    _deprecated("VariantArchitecture", "Architecture (its layers have skips, masks and heads)")
    if not layers:
        return base
    if len(layers) != base.depth:
        raise SymattnError(f"need one layer kind per layer (D = {base.depth}), got {len(layers)}")
    return Architecture(layers=tuple(layer.with_kind(**kind.as_kind()) for layer, kind in zip(base.layers, layers)),
                        tokens=base.tokens)


def with_layers(base: Architecture, kind: LayerKind) -> Architecture:
    """Deprecated: every layer of ``base`` of the one kind ``kind`` (``base.with_layers(**...)``)."""
    _deprecated("with_layers", "Architecture.with_layers(**kind)")
    return base.with_layers(**kind.as_kind())


def variant_network(arch: Architecture):
    """Deprecated: :func:`symattn.model.network.native_network`."""
    from symattn.model.network import native_network

    _deprecated("variant_network", "symattn.model.network.native_network")
    return native_network(arch)


def score_network(arch: Architecture):
    """Deprecated: :func:`symattn.model.network.effective_network`."""
    from symattn.model.network import effective_network

    _deprecated("score_network", "symattn.model.network.effective_network")
    return effective_network(arch)


def score_names(arch: Architecture) -> list[str]:
    """Deprecated: :meth:`symattn.model.architecture.Architecture.score_names`."""
    _deprecated("score_names", "Architecture.score_names()")
    return arch.score_names()


def random_variant_point(arch: Architecture, seed: int = 0, values: str = "random") -> dict[str, np.ndarray]:
    """Deprecated: :func:`symattn.model.parameters.random_point`."""
    from symattn.model.parameters import random_point

    _deprecated("random_variant_point", "symattn.model.parameters.random_point")
    return random_point(arch, seed, values)


def symmetry_directions(arch: Architecture, theta) -> list[tuple[str, np.ndarray]]:
    """Deprecated: :func:`symattn.model.symmetries.declared_symmetries` as ``(kind, vector)`` pairs."""
    from symattn.model.symmetries import declared_symmetries

    _deprecated("symmetry_directions", "symattn.model.symmetries.declared_symmetries")
    return [(s.kind, s.vector) for s in declared_symmetries(arch, theta)]


def head_classes(arch: Architecture, i: int) -> list[list[int]]:
    """Deprecated: :func:`symattn.model.symmetries.head_classes`."""
    from symattn.model import symmetries

    _deprecated("head_classes", "symattn.model.symmetries.head_classes")
    return symmetries.head_classes(arch, i)


def head_permutation_check(arch: Architecture, theta, bank, order: int = 6) -> list[dict]:
    """Deprecated: :func:`symattn.model.symmetries.head_permutation_check`."""
    from symattn.model import symmetries

    _deprecated("head_permutation_check", "symattn.model.symmetries.head_permutation_check")
    return symmetries.head_permutation_check(arch, theta, bank, order)


def __getattr__(name: str):
    if name == "NO_THEOREM":
        from symattn.theorems.statements import NO_THEOREM

        _deprecated("NO_THEOREM", "symattn.theorems.statements.NO_THEOREM")
        return NO_THEOREM
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
