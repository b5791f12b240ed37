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
from symattn.coq.export import (Certificate, certificate_point, dimension_certificate, identity_certificate,
                                jet_certificate, spectrum_certificate)

__all__ = ["spectrum_case", "jet_case", "dimension_case", "PROOF_CASES", "proof_certificates", "hmk_certificates",
           "spectrum_point", "jet_point", "dimension_point"]


def _name(*parts) -> str:
    """The readable prefix of a certificate's name (:func:`~symattn.coq.export.certificate_name` makes
    it a module name and appends the point's hash)."""
    return "_".join(str(p) for p in parts)


def _orders(s) -> list[int]:
    return sorted(b.order for b in s.bands for _ in range(b.multiplicity))


def spectrum_point(arch: Architecture, s, seed: int = 0, values: str = "identity", bank="auto") -> dict:
    """The point of a printed spectrum ``s`` (:func:`~symattn.coq.export.certificate_point`): the path
    and the bank its seed and bank size give, and its orders and kernel; a certificate must be about
    exactly this point (:func:`symattn.coq.cli.write_certificates`)."""
    from symattn.analyses.collapse import path_parameters

    U, W, V = path_parameters(arch, seed, values)
    X = list(bank) if not isinstance(bank, (str, int)) else list(random_bank(arch, s.bank_size, seed))
    orders = _orders(s)
    return certificate_point("spectrum", arch, seed, {"U": list(U), "W": list(W), "V": list(V), "bank": X},
                             {"orders": orders, "kernel": int(s.kernel)}, max(orders) + 1)


def jet_point(arch: Architecture, eta, r, seed: int = 0) -> dict:
    """The point of a printed sharp degree ``r`` at the effective point ``eta``: the rays its seed
    gives, the degree, the effective parameter count and the columns of ``M_D``."""
    P = sum(m.size for m in eta.as_dict().values())
    N = int(r.sharp_degree)
    return certificate_point("jet", arch, seed, {"L": eta.L, "Ms": list(eta.M), "rays": list(random_bank(arch, r.rays, seed))},
                             {"degree": N, "parameters": P, "last": list(range(P - eta.M[-1].size, P))}, N + 1)


def dimension_point(arch: Architecture, r, seed: int = 0) -> dict:
    """The point of a printed dimension lower bound ``r``: the native point and rays its seed gives."""
    from symattn.analyses.dimension import generic_native

    theta = generic_native(arch, seed)
    N = int(r.degree)
    return certificate_point("dimension", arch, seed, {"Qs": list(theta.Q), "Ks": list(theta.K), "Vs": list(theta.V),
                                                       "rays": list(random_bank(arch, r.rays, seed))},
                             {"degree": N, "rank": int(r.lower_bound)}, N + 1)


def spectrum_case(arch: Architecture, bank="auto", seed: int = 0, values: str = "identity",
                  name: str | None = None, spectrum=None) -> Certificate:
    """The certificate of the spectrum :func:`~symattn.analyses.spectrum.native_spectrum` computes
    (or of ``spectrum``, computed with the same options)."""
    from symattn.analyses.collapse import path_parameters
    from symattn.analyses.spectrum import native_spectrum

    s = spectrum if spectrum is not None else native_spectrum(arch, bank=bank, seed=seed, values=values)
    if s.certificate == "none" or s.bank_separating is False or s.undecided:
        # (the constants route leaves separation to evidence, None: the certificate's frame witness decides it)
        raise CheckFailed(f"nothing to certify in Coq: the spectrum is not decided (certificate {s.certificate}, "
                          f"separating {s.bank_separating}, {s.undecided} undecided)")
    U, W, V = path_parameters(arch, seed, values)
    import numpy as np

    X = np.asarray(bank, dtype=object) if not isinstance(bank, (str, int)) else random_bank(arch, s.bank_size, seed)
    label = name or _name("spectrum", f"D{arch.depth}", f"d{arch.d}", "r" + "".join(map(str, arch.ranks)),
                          f"n{arch.tokens}", *[p.name for p in arch.normalizers], values, f"s{seed}")
    return spectrum_certificate(arch, X, U, W, V, _orders(s), s.kernel, name=label, seed=seed)


def jet_case(arch: Architecture, eta=None, seed: int = 0, name: str | None = None, result=None) -> Certificate:
    """The certificate of the sharp degree :func:`~symattn.analyses.jets.sharp_degree` computes."""
    from symattn.analyses.jets import generic_effective, sharp_degree

    eta = eta if eta is not None else generic_effective(arch, seed)
    r = result if result is not None else sharp_degree(arch, eta, seed=seed)
    if r.sharp_degree is None or r.lower_jets_independent_of_last is not True:
        raise CheckFailed("nothing to certify in Coq: the sharp degree is undecided")
    label = name or _name("jet", f"D{arch.depth}", f"d{arch.widths[0]}", f"n{arch.tokens}",
                          *[p.name for p in arch.normalizers], f"s{seed}")
    return jet_certificate(arch, eta, random_bank(arch, r.rays, seed), r.sharp_degree, name=label, seed=seed)


def dimension_case(arch: Architecture, seed: int = 0, name: str | None = None, result=None) -> Certificate:
    """The certificate of the dimension lower bound :func:`~symattn.analyses.dimension.neuromanifold_dimension`
    computes."""
    from symattn.analyses.dimension import generic_native, neuromanifold_dimension

    r = result if result is not None else neuromanifold_dimension(arch, seed)
    theta = generic_native(arch, seed)
    label = name or _name("dimension", "w" + "_".join(map(str, arch.widths)), "a" + "_".join(map(str, arch.ranks)),
                          f"n{arch.tokens}", *[p.name for p in arch.normalizers], f"s{seed}")
    return dimension_certificate(arch, theta, random_bank(arch, r.rays, seed), r.degree, r.lower_bound, name=label,
                                 seed=seed)


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

    >>> [c.name[:15] for c in proof_certificates("t1_effective_identifiability")]
    ['t1_identity_A3_']
    """
    builder = PROOF_CASES.get(proof_id)
    return [] if builder is None else builder(full)
