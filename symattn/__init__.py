"""symattn: exact computer algebra for deep normalized attention.

A computer-algebra companion to P. V. Konda, "Identifiability and
Observability of Deep Normalized Attention" (2026): the network is one
expression graph (:mod:`symattn.graph`) evaluated in several algebras
(:mod:`symattn.algebras`); the paper's statements are recomputed exactly,
with a certificate, or numerically at a stated precision.

Examples
--------
>>> import symattn
>>> symattn.Normalizer("exp").k
1
"""

from .errors import SymattnError
from .normalizer import Normalizer, normalizers
from .model import (Architecture, EffectiveParams, NativeParams, factor_gauges,
                    interface_directions, random_bank, random_native, rational_matrix,
                    reduction)
from .graph import effective_network, evaluate, native_network, reduction_graph

__version__ = "0.1.0"

__all__ = [
    "SymattnError", "Normalizer", "normalizers", "Architecture", "EffectiveParams",
    "NativeParams", "factor_gauges", "interface_directions", "random_bank",
    "random_native", "rational_matrix", "reduction", "effective_network", "evaluate",
    "native_network", "reduction_graph",
]
