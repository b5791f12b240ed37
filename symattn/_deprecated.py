"""Deprecated names of the former variant analyses: each delegates to the one implementation.

Before release 0.2 every analysis existed twice, once for the paper's stack and
once for "variant" stacks (skips, masks, several heads). There is now one
:class:`~symattn.model.architecture.Architecture` and one implementation of each
analysis; the old names below keep working with a :class:`DeprecationWarning`
and will be removed in a later release. The former modules
``symattn.variant_spectrum``, ``symattn.variant_jets`` and
``symattn.variant_fibers`` import this module.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

__all__ = ["variant_spectrum", "variant_dimension", "variant_jet", "variant_fiber", "variant_sensitivity",
           "least_variant_bank", "has_effective_map", "jet_jacobian", "bank_orders", "path_at"]


def _warn(old: str, new: str) -> None:
    warnings.warn(f"{old} is deprecated: use {new} (one implementation for every architecture)",
                  DeprecationWarning, stacklevel=3)


def variant_spectrum(arch, bank="auto", seed: int = 0, values: str = "identity", method: str = "modular",
                     order=None, progress=None, point=None):
    """Deprecated: :func:`symattn.analyses.spectrum.native_spectrum` (``point`` is its ``path``)."""
    from symattn.analyses.spectrum import native_spectrum

    _warn("variant_spectrum", "symattn.native_spectrum")
    return native_spectrum(arch, bank=bank, seed=seed, values=values, method=method, order=order,
                           progress=progress, path=point)


def variant_dimension(arch, seed: int = 0, degree=None, rays=None, point=None):
    """Deprecated: :func:`symattn.analyses.dimension.neuromanifold_dimension`."""
    from symattn.analyses.dimension import neuromanifold_dimension

    _warn("variant_dimension", "symattn.neuromanifold_dimension")
    return neuromanifold_dimension(arch, seed=seed, degree=degree, rays=rays, point=point)


def variant_jet(arch, seed: int = 0, method: str = "modular", max_degree: int = 200, points: int = 3):
    """Deprecated: :func:`symattn.analyses.jets.sharp_degree`."""
    from symattn.analyses.jets import sharp_degree

    _warn("variant_jet", "symattn.sharp_degree")
    return sharp_degree(arch, seed=seed, method=method, max_degree=max_degree, points=points)


def variant_fiber(arch, L, M, *, verify: bool = True, seed: int = 0, rays: int = 2, max_degree: int = 200):
    """Deprecated: :func:`symattn.analyses.fibers.fiber`."""
    from symattn.analyses.fibers import fiber

    _warn("variant_fiber", "symattn.analyses.fibers.fiber")
    return fiber(arch, L, M, verify=verify, seed=seed, rays=rays, max_degree=max_degree)


def variant_sensitivity(arch, t_min: float = 0.01, t_ref: float = 0.25, bank="auto", digits=None, seed: int = 0,
                        eps: float | None = None):
    """Deprecated: :func:`symattn.analyses.sensitivity.sensitivity`."""
    from symattn.analyses.sensitivity import sensitivity

    _warn("variant_sensitivity", "symattn.sensitivity")
    extra = {} if eps is None else {"eps": eps}
    return sensitivity(arch, t_min, t_ref, bank, digits, seed=seed, **extra)


def least_variant_bank(arch, family: str = "random", trials: int = 3, seed: int = 0, max_size: int = 64):
    """Deprecated: :func:`symattn.analyses.bank.least_bank`."""
    from symattn.analyses.bank import least_bank

    _warn("least_variant_bank", "symattn.least_bank")
    return least_bank(arch, family, trials, seed, max_size)


def has_effective_map(arch) -> bool:
    """Deprecated: :attr:`symattn.model.architecture.Architecture.has_effective_map`."""
    _warn("has_effective_map", "Architecture.has_effective_map")
    return arch.has_effective_map


def jet_jacobian(arch, point, degree: int, rays: int, seed: int = 0, method: str = "modular", graph=None,
                 names=None):
    """Deprecated: :func:`symattn.analyses.jets.jet_jacobian`."""
    from symattn.analyses import jets

    _warn("jet_jacobian", "symattn.analyses.jets.jet_jacobian")
    return jets.jet_jacobian(arch, point, degree, rays, seed, method, graph, names)


def bank_orders(arch, bank, order: int, seed: int = 0, values: str = "identity"):
    """Deprecated: :func:`symattn.analyses.spectrum.bank_orders`."""
    from symattn.analyses import spectrum

    _warn("bank_orders", "symattn.analyses.spectrum.bank_orders")
    return spectrum.bank_orders(arch, bank, order, seed, values)


def path_at(arch, seed: int, values: str, t: Fraction) -> dict:
    """Deprecated: the spectrum path's point ``theta(t)`` (``path_point_of`` with the factors times ``t``)."""
    from symattn.analyses.spectrum import path_point_of

    _warn("path_at", "symattn.analyses.spectrum.path_point_of")
    return {name: value * t if arch.block(name).is_factor else value
            for name, value in path_point_of(arch, seed, values).items()}


def __getattr__(name: str):
    """The former result types and labels (no warning: they are the one implementation's)."""
    from symattn.theorems import statements

    if name == "VariantSpectrum":
        from symattn.analyses.spectrum import Spectrum
        return Spectrum
    if name == "VariantDimension":
        from symattn.analyses.dimension import Dimension
        return Dimension
    if name == "VariantJet":
        from symattn.analyses.jets import JetResult
        return JetResult
    if name == "VariantFiber":
        from symattn.analyses.fibers import Fiber
        return Fiber
    if name == "PAPER_SPECTRUM_THEOREM":
        return statements.THEOREM_4.label
    if name == "JET_THEOREM":
        return statements.THEOREM_3.label
    if name == "NO_THEOREM":
        return statements.NO_THEOREM
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
