"""The Coq-checked cases of the proof scripts, and the certificates of one analysis.

Each builder runs symattn's own analysis (the claims come from its computation,
never typed in) and exports its certificate. :data:`PROOF_CASES` maps a proof id
to the builder of its Coq cases; ``symattn prove --coq`` and
``benchmarks/bench_coq.py`` use it.
"""

from __future__ import annotations

from typing import Callable

from symattn.core.errors import CheckFailed
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank
from symattn.coq.export import (Certificate, dimension_certificate, identity_certificate, jet_certificate,
                                spectrum_certificate)

__all__ = ["spectrum_case", "jet_case", "dimension_case", "PROOF_CASES", "proof_certificates", "hmk_certificates"]


def _name(*parts) -> str:
    return "_".join(str(p).replace(",", "_").replace("(", "").replace(")", "").replace("^", "")
                    .replace("+", "p").replace(" ", "") for p in parts)


def spectrum_case(arch: Architecture, bank="auto", seed: int = 0, values: str = "identity",
                  name: str | None = None, spectrum=None) -> Certificate:
    """The certificate of the spectrum :func:`~symattn.analyses.spectrum.native_spectrum` computes
    (or of ``spectrum``, computed with the same options)."""
    from symattn.analyses.collapse import path_parameters
    from symattn.analyses.spectrum import native_spectrum

    s = spectrum if spectrum is not None else native_spectrum(arch, bank=bank, seed=seed, values=values)
    if s.certificate == "none" or not s.bank_separating or s.undecided:
        raise CheckFailed(f"nothing to certify in Coq: the spectrum is not decided (certificate {s.certificate}, "
                          f"separating {s.bank_separating}, {s.undecided} undecided)")
    U, W, V = path_parameters(arch, seed, values)
    import numpy as np

    X = np.asarray(bank, dtype=object) if not isinstance(bank, (str, int)) else random_bank(arch, s.bank_size, seed)
    orders = sorted(b.order for b in s.bands for _ in range(b.multiplicity))
    label = name or _name("spectrum", f"D{arch.depth}", f"d{arch.d}", "r" + "".join(map(str, arch.ranks)),
                          f"n{arch.tokens}", *[p.name for p in arch.normalizers[:1]], values, f"s{seed}")
    return spectrum_certificate(arch, X, U, W, V, orders, s.kernel, name=label)


def jet_case(arch: Architecture, eta=None, seed: int = 0, name: str | None = None, result=None) -> Certificate:
    """The certificate of the sharp degree :func:`~symattn.analyses.jets.sharp_degree` computes."""
    from symattn.analyses.jets import generic_effective, sharp_degree

    eta = eta if eta is not None else generic_effective(arch, seed)
    r = result if result is not None else sharp_degree(arch, eta, seed=seed)
    if r.sharp_degree is None or r.lower_jets_independent_of_last is not True:
        raise CheckFailed("nothing to certify in Coq: the sharp degree is undecided")
    label = name or _name("jet", f"D{arch.depth}", f"d{arch.widths[0]}", f"n{arch.tokens}",
                          arch.normalizers[0].name, f"s{seed}")
    return jet_certificate(arch, eta, random_bank(arch, r.rays, seed), r.sharp_degree, name=label)


def dimension_case(arch: Architecture, seed: int = 0, name: str | None = None, result=None) -> Certificate:
    """The certificate of the dimension lower bound :func:`~symattn.analyses.dimension.neuromanifold_dimension`
    computes."""
    from symattn.analyses.dimension import generic_native, neuromanifold_dimension

    r = result if result is not None else neuromanifold_dimension(arch, seed)
    theta = generic_native(arch, seed)
    label = name or _name("dimension", "w" + "_".join(map(str, arch.widths)), "a" + "_".join(map(str, arch.ranks)),
                          f"n{arch.tokens}", arch.normalizers[0].name, f"s{seed}")
    return dimension_certificate(arch, theta, random_bank(arch, r.rays, seed), r.degree, r.lower_bound, name=label)


def hmk_certificates(deltas=(3, 4), seed: int = 0) -> list[Certificate]:
    """The HMK table's lower bounds (``l = 2``, ``t = 3``, ``a = 2``, width ``delta``)."""
    return [dimension_case(Architecture.uniform(2, delta, 2, 3, "exp"), seed, name=f"hmk_delta{delta}")
            for delta in deltas]


def _t1(full: bool) -> list[Certificate]:
    return [identity_certificate("t1_identity_A3")]


def _t3(full: bool) -> list[Certificate]:
    cases = [(D, "exp") for D in (1, 2, 3)] + ([(1, "cosh"), (2, "cosh")] if full else [])
    return [jet_case(Architecture.uniform(D, 2, 1, 2, phi), name=_name("t3_jet", f"D{D}", phi)) for D, phi in cases]


def _t4(full: bool) -> list[Certificate]:
    cases = [(1, 2, 1), (2, 2, 1), (3, 2, 1), (2, 3, 2)]
    out = [spectrum_case(Architecture.uniform(D, d, r, 2, "exp"), name=_name("t4_spectrum", f"D{D}", f"d{d}", f"r{r}"))
           for D, d, r in cases]
    if full:
        out += [spectrum_case(Architecture.uniform(D, 2, 1, 2, "cosh"), name=_name("t4_spectrum_cosh", f"D{D}"))
                for D in (1, 2)]
        out.append(spectrum_case(Architecture.uniform(2, 3, 1, 3, "exp"), values="random",
                                 name="t4_spectrum_D2_d3_r1_random"))
    return out


#: Proof id -> builder of its Coq-checked cases (``full`` adds the long ones).
PROOF_CASES: dict[str, Callable[[bool], list[Certificate]]] = {
    "t1_effective_identifiability": _t1,
    "t3_sharp_taylor": _t3,
    "t4_native_spectrum": _t4,
}


def proof_certificates(proof_id: str, full: bool = False) -> list[Certificate]:
    """The certificates of ``proof_id``'s Coq cases (empty when none are covered).

    >>> [c.name for c in proof_certificates("t1_effective_identifiability")]
    ['t1_identity_A3']
    """
    builder = PROOF_CASES.get(proof_id)
    return [] if builder is None else builder(full)
