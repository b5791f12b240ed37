"""symattn: exact computer algebra for deep normalized attention.

A computer-algebra companion to P. V. Konda, "Identifiability and
Observability of Deep Normalized Attention" (2026): the network is one
expression graph (:mod:`symattn.model.network`) evaluated in several algebras
(:mod:`symattn.core.algebras`); the paper's statements are recomputed exactly,
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
    "SymattnError": "core.errors", "Normalizer": "model.normalizer", "normalizers": "model.normalizer",
    "Architecture": "model.architecture", "Layer": "model.layers", "Head": "model.layers",
    "Block": "model.layers", "EffectiveParams": "model.parameters", "NativeParams": "model.parameters",
    "factor_gauges": "model.symmetries", "interface_directions": "model.symmetries", "random_bank": "model.parameters",
    "random_native": "model.parameters", "rational_matrix": "model.parameters", "reduction": "model.parameters",
    "effective_network": "model.network", "evaluate": "model.network", "native_network": "model.network",
    "reduction_graph": "model.network", "Spectrum": "analyses.spectrum", "native_spectrum": "analyses.spectrum",
    "line_probe": "analyses.signatures", "effective_fiber": "analyses.fibers", "sharp_degree": "analyses.jets",
    "hmk_table": "analyses.dimension", "neuromanifold_dimension": "analyses.dimension",
    "normal_form_chart": "analyses.geometry", "sensitivity": "analyses.sensitivity", "audit": "audit",
    "load_model": "audit", "load_spec": "model.spec",
    "least_bank": "analyses.bank", "conjectures": "analyses.conjectures",
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
    (``symattn.audit``) the function keeps the name."""

    def __setattr__(self, name: str, value) -> None:
        if (isinstance(value, types.ModuleType) and _LAZY.get(name, "").rsplit(".", 1)[-1] == name
                and hasattr(value, name)):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__version__ = "0.1.0"

__all__ = [
    "SymattnError", "Normalizer", "normalizers", "Architecture", "Layer", "Head", "Block", "load_spec",
    "EffectiveParams",
    "NativeParams", "factor_gauges", "interface_directions", "random_bank",
    "random_native", "rational_matrix", "reduction", "effective_network", "evaluate",
    "native_network", "reduction_graph", "Spectrum", "native_spectrum", "line_probe",
    "effective_fiber", "sharp_degree", "hmk_table", "neuromanifold_dimension",
    "normal_form_chart", "sensitivity", "audit", "load_model",
    "least_bank", "conjectures",
]
