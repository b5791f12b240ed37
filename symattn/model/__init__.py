"""The model floor: normalizers, the architecture, its parameters, the network graph, symmetries.

:mod:`~symattn.model.normalizer` (the catalogue and exact Taylor data),
:mod:`~symattn.model.architecture` (the one description of a stack: layers with
their widths, normalizer, heads, skip, mask and head combination; blocks as
typed keys), :mod:`~symattn.model.parameters` (points, the effective tuple,
the reduction pi, banks), :mod:`~symattn.model.network` (the one graph builder)
and :mod:`~symattn.model.interpreter` (evaluate, jacobian),
:mod:`~symattn.model.symmetries` (gauges, interfaces, head permutations, sign
flips, verified as kernel vectors) and :mod:`~symattn.model.spec` (TOML stack
descriptions).

The names of the former module ``symattn.model`` are importable from here.
"""

from symattn.model.architecture import Architecture  # noqa: F401
from symattn.model.layers import Block, Head, Layer  # noqa: F401
from symattn.model.parameters import (  # noqa: F401  the former symattn.model
    EffectiveParams, NativeParams, exact_rationals, native_path_values, random_bank, random_native,
    random_rational_matrix, rational_matrix, reduction,
)
from symattn.model.symmetries import factor_gauges, gauge_directions, interface_directions  # noqa: F401

__all__ = [
    "Architecture", "Block", "Head", "Layer", "NativeParams", "EffectiveParams", "reduction", "factor_gauges",
    "interface_directions", "random_native", "random_bank", "rational_matrix", "random_rational_matrix",
    "gauge_directions", "exact_rationals", "native_path_values",
]
