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
>>> s = symattn.native_spectrum(symattn.Architecture.uniform(2, 2, 1, 2, "exp"))
>>> [(b.order, b.multiplicity) for b in s.bands], s.kernel, s.certified
([(0, 4), (1, 3), (5, 3)], 6, True)
"""

from .errors import SymattnError
from .normalizer import Normalizer, normalizers
from .model import (Architecture, EffectiveParams, NativeParams, factor_gauges,
                    interface_directions, random_bank, random_native, rational_matrix,
                    reduction)
from .graph import effective_network, evaluate, native_network, reduction_graph
from .spectrum import Spectrum, native_spectrum
from .signatures import line_probe
from .fibers import effective_fiber
from .jets import sharp_degree
from .dimension import hmk_table, neuromanifold_dimension
from .geometry import normal_form_chart
from .precision import sensitivity
from .audit import audit, load_model
from .variants import LayerKind, VariantArchitecture
from .variant_spectrum import variant_dimension, variant_spectrum
from .bank import least_bank
from .conjecture import conjectures

__version__ = "0.1.0"

__all__ = [
    "SymattnError", "Normalizer", "normalizers", "Architecture", "EffectiveParams",
    "NativeParams", "factor_gauges", "interface_directions", "random_bank",
    "random_native", "rational_matrix", "reduction", "effective_network", "evaluate",
    "native_network", "reduction_graph", "Spectrum", "native_spectrum", "line_probe",
    "effective_fiber", "sharp_degree", "hmk_table", "neuromanifold_dimension",
    "normal_form_chart", "sensitivity", "audit", "load_model",
    "LayerKind", "VariantArchitecture", "variant_spectrum", "variant_dimension", "least_bank",
    "conjectures",
]
