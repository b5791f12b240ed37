"""Analysis of an imported model: hypotheses, fiber, distances, spectrum, singular values and ranks.

:func:`audit` builds the whole :class:`Audit` (see :mod:`symattn.audit` for
what each number is and how exact it is); the text, JSON and plot come from
:mod:`symattn.audit.report`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..algebras import BallAlgebra, Float64
from ..certify import rank_exact
from ..errors import SymattnError
from ..fibers import Fiber, collapse_locus, effective_fiber
from ..model import (
    Architecture,
    EffectiveParams,
    NativeParams,
    is_zero,
    random_bank,
    reduction,
    symmetric_part,
)
from ..numerics import (
    exact_kernel_vectors,
    kernel_complement,
    numerical_rank,
    observation_jacobian,
    positive_singular_values,
)
from ..spectrum import Spectrum, native_spectrum
from .importers import ImportedModel

__all__ = ["Audit", "audit", "CUTOFF", "FLOAT64_EPS"]

#: The relative cutoff of the numerical rank (App. F.2): ``sigma > CUTOFF * sigma_1``.
CUTOFF = 1e-10

#: The unit roundoff of binary64 (``2^-52``).
FLOAT64_EPS = float(np.finfo(np.float64).eps)


@dataclass
class Audit:
    """The audit report of one model (see :meth:`to_json` for the keys).

    Attributes
    ----------
    model : ImportedModel
    effective : EffectiveParams
        ``(L, M_1..M_D)``, exact rationals.
    hypotheses : list of dict
        ``theorem``, ``name``, ``holds`` (True, False, or None = not decided
        by the theorem), ``detail``; all exact.
    fiber : Fiber
        :func:`symattn.fibers.effective_fiber`, verified exactly.
    distances : dict
        Float64 norms: ``L`` and one entry per layer.
    spectrum : Spectrum or None
        The contact spectrum along the model's own ray (None if not computed).
    spectrum_note : str or None
        Why it was not computed.
    kernel : dict
        Exact gauge counts: ``factor_gauges``, ``interface``, ``rank`` of
        their span.
    singular_values : dict
        ``bank_size``, ``float64`` (all ``P``), ``high_precision`` (positive ones,
        on the exact complement of the gauge kernel), ``digits``.
    ranks : dict
        ``parameters``, ``kernel``, ``exact`` (None if unknown), ``exact_kind``,
        ``float64_numerical``, ``high_precision_numerical``, ``below_cutoff``,
        ``below_float64_eps``.
    verdict : str
        The plain-language answer.
    """

    model: ImportedModel
    effective: EffectiveParams
    hypotheses: list
    fiber: Fiber
    distances: dict
    spectrum: Spectrum | None
    spectrum_note: str | None
    kernel: dict
    singular_values: dict
    ranks: dict
    verdict: str

    def to_json(self) -> dict:
        """JSON keys: ``source``, ``format``, ``architecture``, ``notes``,
        ``effective``, ``hypotheses``, ``fiber``, ``distances``, ``spectrum``,
        ``spectrum_note``, ``kernel``, ``singular_values``, ``ranks``,
        ``verdict``, ``kinds``."""
        arch = self.model.arch
        return {
            "source": self.model.source, "format": self.model.kind,
            "architecture": {"widths": list(arch.widths), "ranks": list(arch.ranks),
                             "tokens": arch.tokens, "depth": arch.depth,
                             "normalizers": [str(phi.expr) for phi in arch.normalizers],
                             "parameters": arch.native_size},
            "notes": list(self.model.notes),
            "effective": {k: [[str(v) for v in row] for row in m]
                          for k, m in self.effective.as_dict().items()},
            "hypotheses": self.hypotheses,
            "fiber": self.fiber.to_json(),
            "distances": self.distances,
            "spectrum": None if self.spectrum is None else self.spectrum.to_json(),
            "spectrum_note": self.spectrum_note,
            "kernel": self.kernel,
            "singular_values": self.singular_values,
            "ranks": self.ranks,
            "verdict": self.verdict,
            "kinds": {"effective": "exact rationals of the binary64 weights",
                      "hypotheses": "exact", "fiber": "exact (verified by exact series and "
                      "symbolic identities)", "distances": "numerical, float64",
                      "spectrum": "exact (certified modular Smith orders)",
                      "singular_values": f"numerical: float64 and {self.singular_values['digits']} "
                                         f"digits", "ranks": "exact rank from the spectrum; "
                      "numerical ranks under the cutoff 1e-10 sigma_1"},
        }

    def to_text(self) -> str:
        """The report as aligned, labelled tables."""
        from .report import format_report

        return format_report(self)

    def plot(self, path: "str | Path") -> None:
        """Write the singular values at ``t = 1`` (float64 and high precision) as a PNG."""
        from .report import plot_report

        plot_report(self, Path(path))


def _hypotheses(model: ImportedModel, eta: EffectiveParams) -> list[dict]:
    arch, theta = model.arch, model.theta
    n, out = arch.tokens, []

    def add(theorem, name, holds, detail=""):
        out.append({"theorem": theorem, "name": name, "holds": holds, "detail": detail})

    add("1-3", "L != 0", not is_zero(eta.L))
    for i, (Mi, phi) in enumerate(zip(eta.M, arch.normalizers), 1):
        add("1, 3", f"sym M_{i} != 0", not is_zero(symmetric_part(Mi)))
    for i, phi in enumerate(arch.normalizers, 1):
        add("2", f"h_{i}'(0) != 0", phi.slope != 0, f"h_{i}'(0) = {phi.slope}")
    for i, (Mi, phi) in enumerate(zip(eta.M, arch.normalizers), 1):
        locus = collapse_locus(phi, n)
        if is_zero(Mi):
            holds, detail = True, "M = 0"
        elif not is_zero(symmetric_part(Mi)):
            holds, detail = False, "sym M != 0 (every collapse locus consists of skew matrices)"
        elif locus == "skew":
            holds, detail = True, f"nonzero skew M, n = {n}, h odd: Z = skew matrices"
        elif locus == "zero":
            holds, detail = False, "nonzero skew M, Z = {0}"
        else:
            holds, detail = None, "nonzero skew M: Theorem 2 does not decide Z here"
        add("2", f"M_{i} in Z_{i} (collapse)", holds, detail)
    ks = sorted({phi.k for phi in arch.normalizers})
    add("3, 4", "common first degree k", len(ks) == 1, "k = " + ", ".join(map(str, ks)))
    equal = len(set(arch.widths)) == 1
    add("4", "equal widths d_0 = ... = d_D", equal, f"widths {list(arch.widths)}")
    for i, (q, k, v, r) in enumerate(zip(theta.Q, theta.K, theta.V, arch.ranks), 1):
        d_in = arch.widths[i - 1]
        add("4", f"r_{i} <= d", r <= d_in, f"r = {r}, d = {d_in}")
        add("4", f"Q_{i}, K_{i} full column rank", rank_exact(q) == r and rank_exact(k) == r,
            f"ranks {rank_exact(q)}, {rank_exact(k)} of {r}")
        add("4", f"sym(Q_{i} K_{i}^T) != 0", not is_zero(symmetric_part(q.dot(k.T))))
        square = v.shape[0] == v.shape[1]
        add("4", f"V_{i} invertible", square and rank_exact(v) == v.shape[0],
            f"rank {rank_exact(v)} of {v.shape[0]} x {v.shape[1]}")
    return out


def _sigma_min(a: np.ndarray) -> float:
    return float(np.linalg.svd(a, compute_uv=False).min())


def _distances(model: ImportedModel, eta: EffectiveParams) -> dict:
    """Numerical (float64) distances to the collapse loci and degenerate factor ranks."""
    f = lambda a: np.vectorize(float, otypes=[float])(a)  # noqa: E731
    out = {"L_frobenius": float(np.linalg.norm(f(eta.L))), "layers": []}
    p = model.float_params()
    for i, (Mi, phi) in enumerate(zip(eta.M, model.arch.normalizers), 1):
        M = f(Mi)
        sym = float(np.linalg.norm((M + M.T) / 2))
        full = float(np.linalg.norm(M))
        locus = collapse_locus(phi, model.arch.tokens)
        dist = {"zero": full, "skew": sym}.get(locus)
        out["layers"].append({
            "layer": i, "M_frobenius": full, "sym_M_frobenius": sym,
            "sym_relative": sym / full if full else None, "collapse_locus": locus,
            "distance_to_collapse": dist,
            "sigma_min_Q": _sigma_min(p[f"Q{i}"]), "sigma_min_K": _sigma_min(p[f"K{i}"]),
            "sigma_min_V": _sigma_min(p[f"V{i}"]),
        })
    return out


def _ray_spectrum(model: ImportedModel, bank: "int | str", seed: int) -> tuple[Spectrum | None, str | None]:
    arch, theta = model.arch, model.theta
    if len(set(arch.widths)) != 1:
        return None, (f"not computed: symattn.spectrum.native_spectrum needs equal widths "
                      f"d_0 = ... = d_D (Theorem 4's setting); this stack has widths "
                      f"{list(arch.widths)}")
    try:
        spec = native_spectrum(arch, bank=bank, seed=seed, path=(theta.Q, theta.K, theta.V))
    except SymattnError as exc:
        return None, f"not computed: {exc}"
    return spec, None


def _kernel(arch: Architecture, theta: NativeParams) -> tuple[dict, np.ndarray]:
    from ..model import factor_gauges, interface_directions

    gauges = len(list(factor_gauges(arch, theta)))
    interface = len(list(interface_directions(arch, theta)))
    complement = kernel_complement(exact_kernel_vectors(arch, theta), arch.native_size)
    rank = arch.native_size - complement.shape[1]
    return {"factor_gauges": gauges, "interface": interface, "rank": rank}, complement


def audit(model: ImportedModel, bank: "int | str" = "auto", digits: int = 50, seed: int = 0,
          verify: bool = True) -> Audit:
    """The full audit of an imported model (see the module docstring).

    Parameters
    ----------
    model : ImportedModel
        From :func:`load_model`, :func:`from_arrays`, :func:`from_torch` or
        :func:`from_state_dict`.
    bank : int or "auto"
        Size of the seeded rational input bank (``"auto"``: grown until it
        separates the spectrum's divided frame).
    digits : int
        Working digits of the high-precision singular values.
    seed : int
        Seed of the bank and of the fiber's rays.
    verify : bool
        Verify the fiber by exact computation (:func:`symattn.fibers.effective_fiber`).

    Returns
    -------
    Audit
        Built completely before anything is printed.
    """
    if isinstance(bank, bool) or not (bank == "auto" or (isinstance(bank, int) and bank >= 1)):
        raise SymattnError(f"bank must be a positive integer or 'auto', got {bank!r}")
    if digits < 20:
        raise SymattnError(f"use at least 20 digits for the high-precision singular values, got {digits}")
    from .report import verdict as report_verdict

    arch, theta = model.arch, model.theta
    eta = reduction(theta)
    hypotheses = _hypotheses(model, eta)
    fib = effective_fiber(eta.L, eta.M, arch.normalizers, arch.tokens, verify=verify, seed=seed)
    distances = _distances(model, eta)
    spectrum, note = _ray_spectrum(model, bank, seed)
    kernel, complement = _kernel(arch, theta)
    if spectrum is not None:
        size = spectrum.bank_size
    elif bank != "auto":
        size = int(bank)
    else:
        size = -(-complement.shape[1] // (arch.widths[-1] * arch.tokens)) + 1
    X = random_bank(arch, size, seed)
    J64 = observation_jacobian(arch, model.float_params(), X, Float64())
    s64 = [float(x) for x in np.linalg.svd(J64, compute_uv=False)]
    Jhp = observation_jacobian(arch, theta.as_dict(), X, BallAlgebra(digits))
    try:
        shp = [float(s.mid()) for s in positive_singular_values(Jhp, complement, digits)]
        hp_note = None
    except SymattnError as exc:  # more kernel than the gauges (a degenerate model), or too few digits
        shp, hp_note = None, (f"not resolved: {exc}; the Jacobian at t = 1 may have a kernel beyond "
                              f"the exact gauges (a collapsed or rank-deficient layer)")
    sigma1 = shp[0] if shp else 0.0
    exact = spectrum.rank if spectrum is not None and spectrum.certified else None
    ranks = {
        "parameters": arch.native_size, "kernel": kernel["rank"], "exact": exact,
        "exact_kind": ("certified: parameters - exact kernel, Smith form over F_p[[t]] "
                       "against proven bounds") if exact is not None else
                      f"unknown (at most {arch.native_size - kernel['rank']}, the exact gauge bound)",
        "float64_numerical": numerical_rank(s64, CUTOFF),
        "high_precision_numerical": None if shp is None else numerical_rank(shp, CUTOFF),
        "below_cutoff": None if shp is None else sum(1 for s in shp if s <= CUTOFF * sigma1),
        "below_float64_eps": None if shp is None else sum(1 for s in shp if s <= FLOAT64_EPS * sigma1),
    }
    singular = {"bank_size": size, "bank": "symattn.model.random_bank(seed=%d)" % seed,
                "digits": digits, "float64": s64, "high_precision": shp,
                "high_precision_note": hp_note,
                "float64_vs_high_precision_max_relative": _agreement(s64, shp)}
    verdict = report_verdict(model, fib, kernel, spectrum, note, ranks, hypotheses)
    return Audit(model, eta, hypotheses, fib, distances, spectrum, note, kernel, singular,
                 ranks, verdict)


def _agreement(s64: list[float], shp: list[float]) -> float | None:
    """Largest relative difference of the float64 and high-precision positive singular values."""
    if not shp:  # None (not resolved) or empty
        return None
    return max(abs(a - b) / b for a, b in zip(s64, shp) if b > 0)
