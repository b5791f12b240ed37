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

import importlib
import sys
import types

#: Where each public name lives: imported on first use (PEP 562), so that
#: ``import symattn`` and a command that needs no symbolic work do not pay for
#: sympy, networkx or the analyses they do not run.
_LAZY = {
    "SymattnError": "errors", "Normalizer": "normalizer", "normalizers": "normalizer",
    "Architecture": "model", "EffectiveParams": "model", "NativeParams": "model",
    "factor_gauges": "model", "interface_directions": "model", "random_bank": "model",
    "random_native": "model", "rational_matrix": "model", "reduction": "model",
    "effective_network": "graph", "evaluate": "graph", "native_network": "graph",
    "reduction_graph": "graph", "Spectrum": "spectrum", "native_spectrum": "spectrum",
    "line_probe": "signatures", "effective_fiber": "fibers", "sharp_degree": "jets",
    "hmk_table": "dimension", "neuromanifold_dimension": "dimension",
    "normal_form_chart": "geometry", "sensitivity": "precision", "audit": "audit",
    "load_model": "audit", "LayerKind": "variants", "VariantArchitecture": "variants",
    "variant_dimension": "variant_spectrum", "variant_spectrum": "variant_spectrum",
    "least_bank": "bank", "conjectures": "conjecture",
}


def __getattr__(name: str):
    """Import the module of a public name on first access (PEP 562)."""
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


class _Package(types.ModuleType):
    """The package object: the import system binds a submodule to its parent when it
    is first imported; where a public function has its module's name
    (``symattn.audit``, ``symattn.variant_spectrum``) the function keeps the name."""

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, types.ModuleType) and _LAZY.get(name) == name and hasattr(value, name):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


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
