"""Analysis of an imported model, in tiers: what is exact, certified, predicted or numerical, and why.

:func:`audit` builds the whole :class:`Audit` (see :mod:`symattn.audit` for
what each number means); the text, JSON and plot come from
:mod:`symattn.audit.report`. Every number carries its tier
(:data:`TIERS`). Cheap exact work always runs: the effective tuple and the
per-head scores in exact rationals (python-flint matrices, so ``d = 768`` is
fine), the hypotheses of Theorems 1-4 (exact ranks and zero tests), the
certified Frobenius distances to the collapse loci, and the contact orders
that Prop. D.1 predicts where Theorem 4's hypotheses hold. Expensive work
runs only when its estimated cost fits ``budget`` seconds (:func:`estimate_work`):
the exact verification of the fiber, the certified Smith spectrum along the
model's own ray, the dense float64 Jacobian and its singular values at
``digits`` digits. The matrix-free PyTorch tier
(:func:`symattn.analyses.matrix_free.ray_spectra`) runs at any size within
``max_memory``. A request whose cheapest tier exceeds ``max_memory`` is
refused before anything is allocated.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import flint
import numpy as np

from symattn.core.errors import SymattnError
from symattn.analyses.fibers import Fiber, collapse_locus, effective_fiber
from symattn.model.architecture import Architecture, EffectiveParams, NativeParams, random_bank
from symattn.core.algebras.modular import UnluckyPrime
from symattn.analyses.numerics import (
    TORCH_HINT,
    Unresolved,
    has_torch,
    numerical_rank,
    observation_jacobian,
    positive_singular_values,
)
from symattn.theorems.formulas import divisibility_orders
from symattn.model.symmetries import GaugeKernel
from symattn.core.linalg import fmpq_is_zero, fmpq_rank
from symattn.analyses.spectrum import OutsideHypotheses, Spectrum, native_spectrum
from symattn.audit.importers import ImportedModel, rational_array

__all__ = ["Audit", "audit", "estimate_work", "CUTOFF", "FLOAT64_EPS", "FLOAT32_EPS", "TIERS",
           "DEFAULT_BUDGET", "DEFAULT_MAX_MEMORY", "PRINT_LIMIT", "DENSE_LIMIT"]

#: The relative cutoff of the numerical rank (App. F.2): ``sigma > CUTOFF * sigma_1``.
CUTOFF = 1e-10

#: The unit roundoff of binary64 (``2^-52``) and of binary32 (``2^-23``).
FLOAT64_EPS = float(np.finfo(np.float64).eps)
FLOAT32_EPS = float(np.finfo(np.float32).eps)

#: Seconds the expensive exact and high-precision tiers may take together (``--budget``).
DEFAULT_BUDGET = 30.0

#: Bytes any one tier may allocate (``--max-memory``).
DEFAULT_MAX_MEMORY = 2 * 2 ** 30

#: Widths up to which the effective matrices are kept as Fraction arrays (printed, JSON).
PRINT_LIMIT = 16

#: What each tier label means.
TIERS = {
    "exact": "exact rational arithmetic on the binary64 weights",
    "certified": "ball arithmetic: the true value lies in the stated interval",
    "predicted": "the paper's formula, its hypotheses checked exactly",
    "numerical float64": "floating point, binary64, with the stated error estimate",
    "numerical float32": "floating point, binary32, with the stated error estimate",
    "numerical high precision": "ball arithmetic at the stated digits, reported as numerical",
    "skipped": "not computed (the reason is given)",
}

#: Native parameters up to which the dense float64 Jacobian and its SVD are computed.
DENSE_LIMIT = 2048

# seconds per unit of the cost models below, measured on a 2-core machine (benchmarks page)
_SPECTRUM_SECONDS = 1.6    # certified Smith spectrum, P = 96, depth 3
_FIBER_SECONDS = 0.01      # per d^2 per layer, the fiber's exact verification
_HP_SECONDS = 1.6          # Jacobian and singular values at 50 digits, P = 96, depth 3
_KERNEL_SECONDS = 0.16     # exact gauge kernel and its integer complement, P = 96


@dataclass
class Audit:
    """The audit report of one model (see :meth:`to_json` for the keys).

    Attributes
    ----------
    model : ImportedModel
    effective : EffectiveParams or None
        ``(L, M_1..M_D)`` as Fraction arrays (single-head stacks of width
        at most :data:`PRINT_LIMIT`; larger ones are summarised in ``heads``).
    hypotheses : list of dict
        ``theorem``, ``name``, ``holds`` (True, False, or None = not decided
        by the theorem), ``detail``; all exact.
    fiber : Fiber or None
        :func:`symattn.analyses.fibers.effective_fiber` (single-head stacks);
        verified exactly when the budget allows.
    distances : dict
        Certified Frobenius norms of ``L``, ``M_i``, ``sym M_i`` and float64
        smallest singular values of the factors, per layer.
    spectrum : Spectrum or None
        The certified contact spectrum along the model's own ray.
    spectrum_note : str or None
        Why it was not computed.
    kernel : dict
        Gauge counts: ``factor_gauges``, ``interface``, ``rank`` of their span
        (exact where computed, else the count the theorems give).
    singular_values : dict
        Dense tier at ``t = 1``: ``float64`` (all ``P``), ``high_precision``
        (positive ones, on the exact complement of the gauge kernel), ``digits``.
    ranks : dict
        ``parameters``, ``kernel``, ``exact``, ``exact_kind``,
        ``float64_numerical``, ``high_precision_numerical``, ``below_cutoff``,
        ``below_float64_eps`` (None where a tier did not run).
    verdict : str
        The plain-language answer.
    heads : list of dict
        Per layer and head: exact facts on the score ``Q K^T`` and certified norms.
    predicted : list of dict
        Per layer, the contact order Prop. D.1 predicts along the model's ray.
    matrix_free : dict or None
        :func:`symattn.analyses.matrix_free.ray_spectra` (float64 and float32).
    sensitivity : list of dict
        Per layer: the strength of its query/key directions relative to
        ``sigma_1`` at the model's scale and the digits float64/float32 keep.
    tiers : dict
        Which tier produced each section, and why a tier was skipped.
    work : dict
        The cost estimates and the budget.
    """

    model: ImportedModel
    effective: EffectiveParams | None
    hypotheses: list
    fiber: Fiber | None
    distances: dict
    spectrum: Spectrum | None
    spectrum_note: str | None
    kernel: dict
    singular_values: dict
    ranks: dict
    verdict: str = ""
    heads: list = field(default_factory=list)
    predicted: list = field(default_factory=list)
    matrix_free: dict | None = None
    sensitivity: list = field(default_factory=list)
    tiers: dict = field(default_factory=dict)
    work: dict = field(default_factory=dict)
    #: multi-head or causal models: :func:`symattn.audit.variants.variant_analyses`
    variants: dict | None = None

    def to_json(self) -> dict:
        """JSON keys: ``source``, ``format``, ``architecture``, ``notes``, ``outside``,
        ``effective``, ``heads``, ``hypotheses``, ``fiber``, ``distances``,
        ``predicted``, ``spectrum``, ``spectrum_note``, ``kernel``,
        ``singular_values``, ``ranks``, ``matrix_free``, ``sensitivity``,
        ``verdict``, ``tiers``, ``work``, ``variants``, ``kinds``."""
        m = self.model
        return {
            "source": m.source, "format": m.kind,
            "architecture": {"widths": list(m.widths), "heads": list(m.heads),
                             "ranks": [layer[0].q.shape[1] for layer in m.layers],
                             "tokens": m.tokens, "depth": m.depth,
                             "normalizers": [str(phi.expr) for phi in m.normalizers],
                             "parameters": m.parameters},
            "notes": list(m.notes), "outside": list(m.outside),
            "effective": None if self.effective is None else
            {k: [[str(v) for v in row] for row in mat] for k, mat in self.effective.as_dict().items()},
            "heads": self.heads,
            "hypotheses": self.hypotheses,
            "fiber": None if self.fiber is None else self.fiber.to_json(),
            "distances": self.distances,
            "predicted": self.predicted,
            "spectrum": None if self.spectrum is None else self.spectrum.to_json(),
            "spectrum_note": self.spectrum_note,
            "kernel": self.kernel,
            "singular_values": self.singular_values,
            "ranks": self.ranks,
            "matrix_free": self.matrix_free,
            "sensitivity": self.sensitivity,
            "verdict": self.verdict,
            "tiers": self.tiers,
            "work": self.work,
            "variants": self.variants,
            "kinds": TIERS,
        }

    def to_text(self) -> str:
        """The report as aligned, labelled tables."""
        from symattn.audit.report import format_report

        return format_report(self)

    def plot(self, path: "str | Path", force: bool = False) -> None:
        """Write the singular values (dense tier, or the matrix-free tier along the ray) as a PNG
        (or PDF, SVG, by the suffix); an existing file symattn did not write needs ``force``."""
        from symattn.audit.report import plot_report

        plot_report(self, Path(path), force)


# ------------------------------------------------------------------ work estimates
def estimate_work(model: ImportedModel, bank_size: int = 8) -> dict:
    """Estimated seconds and bytes of each expensive tier (before anything is allocated).

    Returns
    -------
    dict
        ``parameters``, ``spectrum_seconds``, ``fiber_seconds``,
        ``high_precision_seconds``, ``kernel_seconds`` (the exact gauge kernel),
        ``dense_bytes`` (the float64 Jacobian),
        ``matrix_free_bytes`` (activations and directions of the PyTorch tier).

    Examples
    --------
    >>> from symattn.audit import from_arrays
    >>> w = estimate_work(from_arrays({"Q1": np.eye(4), "K1": np.eye(4), "V1": np.eye(4)},
    ...                               tokens=10000))
    >>> w["matrix_free_bytes"] > 2 ** 31
    True
    """
    P, D, n = model.parameters, model.depth, model.tokens
    d = max(model.widths)
    H = max(model.heads)
    layers = 3 ** max(D - 3, -3)
    rows = P + d * n                         # the dense tier grows its bank to about P rows
    width = 8 + 8                            # directions of the randomized range finder
    per_pass = bank_size * (H * n * n + 4 * n * d) * 8 * D * 4  # scores, tokens, autograd copies
    return {
        "parameters": P,
        "spectrum_seconds": _SPECTRUM_SECONDS * (P / 96) ** 2.2 * layers * (n / 4) ** 2,
        "fiber_seconds": _FIBER_SECONDS * d * d * D * (n / 4) ** 2,
        "high_precision_seconds": _HP_SECONDS * (P / 96) ** 2.5 * layers,
        "kernel_seconds": _KERNEL_SECONDS * (P / 96) ** 3,
        "dense_bytes": rows * P * 8,
        "matrix_free_bytes": width * (per_pass + 2 * P * 8),
    }


# ------------------------------------------------------------------ exact tier
def _skew(m: flint.fmpq_mat) -> bool:
    return fmpq_is_zero(m + m.transpose())


def _frobenius(m: flint.fmpq_mat) -> flint.arb:
    """Certified ``||m||_F``: the exact sum of squares ``trace(N^T N) / den^2`` (``m = N / den``),
    then a ball square root.

    >>> float(_frobenius(flint.fmpq_mat(1, 2, [flint.fmpq(3, 2), 2])).mid())
    2.5
    """
    numer, den = m.numer_denom()
    gram = numer.transpose() * numer
    trace = sum((gram[i, i] for i in range(gram.nrows())), flint.fmpz(0))
    return flint.arb(flint.fmpq(trace, den * den)).sqrt()


def _ball(x: flint.arb) -> dict:
    return {"value": float(x.mid()), "radius": float(x.rad())}


def _effective_exact(model: ImportedModel) -> tuple[flint.fmpq_mat, list[flint.fmpq_mat]]:
    """``(L, M_1..M_D)`` of eq. (3) for a single-head stack, exact (flint)."""
    P = None
    M = []
    for (Q, K, V), in model.exact_heads:
        S = Q * K.transpose()
        M.append(S if P is None else P.transpose() * S * P)
        P = V if P is None else V * P
    return P, M


def _head_facts(model: ImportedModel) -> list[dict]:
    """Exact facts and certified norms of every head's score ``Q K^T`` (its own input coordinates)."""
    out = []
    for i, (layer, phi) in enumerate(zip(model.exact_heads, model.normalizers), 1):
        locus = collapse_locus(phi, model.tokens)
        for h, ((Q, K, V), head) in enumerate(zip(layer, model.layers[i - 1]), 1):
            inner = None if head.v_out is None else head.v.shape[0]
            S = Q * K.transpose()
            sym = S + S.transpose()
            full, half_sym = _frobenius(S), _frobenius(sym) / 2
            out.append({
                "layer": i, "head": h, "width": Q.nrows(), "rank_r": Q.ncols(),
                "sym_nonzero": not fmpq_is_zero(sym), "rank_Q": fmpq_rank(Q), "rank_K": fmpq_rank(K),
                "rank_V": fmpq_rank(V, inner), "V_shape": [V.nrows(), V.ncols()],
                "score_frobenius": _ball(full), "sym_score_frobenius": _ball(half_sym),
                "collapse_locus": locus,
                "distance_to_collapse": (_ball(full) if locus == "zero" else
                                         _ball(half_sym) if locus == "skew" else None),
            })
    return out


def _hypotheses(model: ImportedModel, L: flint.fmpq_mat, M: list[flint.fmpq_mat]) -> list[dict]:
    arch, n, out = model.arch, model.tokens, []

    def add(theorem, name, holds, detail=""):
        out.append({"theorem": theorem, "name": name, "holds": holds, "detail": detail})

    add("1-3", "L != 0", not fmpq_is_zero(L))
    for i, Mi in enumerate(M, 1):
        add("1, 3", f"sym M_{i} != 0", not _skew(Mi))
    for i, phi in enumerate(arch.normalizers, 1):
        add("2", f"h_{i}'(0) != 0", phi.slope != 0, f"h_{i}'(0) = {phi.slope}")
    for i, (Mi, phi) in enumerate(zip(M, arch.normalizers), 1):
        locus = collapse_locus(phi, n)
        if fmpq_is_zero(Mi):
            holds, detail = True, "M = 0"
        elif not _skew(Mi):
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
    add("4", "equal widths d_0 = ... = d_D", len(set(arch.widths)) == 1, f"widths {list(arch.widths)}")
    for i, ((q, k, v),) in enumerate(model.exact_heads, 1):
        r, d_in = q.ncols(), q.nrows()
        add("4", f"r_{i} <= d", r <= d_in, f"r = {r}, d = {d_in}")
        head = model.layers[i - 1][0]
        rq, rk = fmpq_rank(q), fmpq_rank(k)
        rv = fmpq_rank(v, None if head.v_out is None else head.v.shape[0])
        add("4", f"Q_{i}, K_{i} full column rank", rq == r and rk == r, f"ranks {rq}, {rk} of {r}")
        add("4", f"sym(Q_{i} K_{i}^T) != 0", not _skew(q * k.transpose()))
        add("4", f"V_{i} invertible", v.nrows() == v.ncols() and rv == v.nrows(),
            f"rank {rv} of {v.nrows()} x {v.ncols()}")
    return out


def _distances(model: ImportedModel, L: flint.fmpq_mat | None, M: list | None) -> dict:
    """Certified Frobenius distances to the collapse loci; float64 smallest singular values."""
    out: dict = {"L_frobenius": None if L is None else float(_frobenius(L).mid()), "layers": []}
    if M is None:
        return out
    for i, (Mi, phi, layer) in enumerate(zip(M, model.normalizers, model.layers), 1):
        full, sym = _frobenius(Mi), _frobenius(Mi + Mi.transpose()) / 2
        locus = collapse_locus(phi, model.tokens)
        dist = {"zero": full, "skew": sym}.get(locus)
        Q, K, V = layer[0].floats()
        out["layers"].append({
            "layer": i, "M_frobenius": float(full.mid()), "sym_M_frobenius": float(sym.mid()),
            "radius": max(float(full.rad()), float(sym.rad())),
            "sym_relative": float((sym / full).mid()) if full > 0 else None,
            "collapse_locus": locus,
            "distance_to_collapse": None if dist is None else float(dist.mid()),
            "sigma_min_Q": _sigma_min(Q), "sigma_min_K": _sigma_min(K), "sigma_min_V": _sigma_min(V),
        })
    return out


def _sigma_min(a: np.ndarray) -> float:
    return float(np.linalg.svd(a, compute_uv=False).min())


def _theorem4(hypotheses: list[dict]) -> list[str]:
    return [h["name"] for h in hypotheses if h["theorem"] in ("4", "3, 4") and h["holds"] is False]


def _predicted(model: ImportedModel, hypotheses: list[dict]) -> list[dict]:
    """Contact orders of Prop. D.1 along the ray where Theorem 4's hypotheses hold."""
    if not model.single_head or _theorem4(hypotheses):
        return []
    arch = model.arch
    return [{"layer": i, "order": beta, "directions": 2 * arch.widths[i - 1] * r - r * r,
             "tier": "predicted"}
            for i, (beta, r) in enumerate(zip(divisibility_orders(arch), arch.ranks), 1)]


def _kernel(arch: Architecture, theta: NativeParams) -> tuple[dict, np.ndarray]:
    kernel = GaugeKernel(arch, theta)
    complement = kernel.complement()
    rank = arch.native_size - complement.shape[1]
    return {"factor_gauges": len(kernel.factor_gauges), "interface": len(kernel.interface_directions),
            "rank": rank, "tier": "exact"}, complement


def _gauge_counts(model: ImportedModel) -> dict:
    """The gauge count the theorems give (factor ``r_i^2``, interface ``d_i^2`` for ``i < D``)."""
    arch = model.arch
    factor = sum(r * r for r in arch.ranks)
    interface = sum(d * d for d in arch.widths[1:-1])
    return {"factor_gauges": factor, "interface": interface, "rank": factor + interface,
            "tier": "predicted"}


# ------------------------------------------------------------------ audit
def audit(model: ImportedModel, bank: "int | str" = "auto", digits: int = 50, seed: int = 0,
          verify: bool = True, budget: float = DEFAULT_BUDGET,
          max_memory: int = DEFAULT_MAX_MEMORY, matrix_free: "bool | None" = None,
          causal: bool = False) -> Audit:
    """The tiered audit of an imported model (see the module docstring).

    Parameters
    ----------
    model : ImportedModel
        From :func:`~symattn.audit.load_model` or the other importers.
    bank : int or "auto"
        Size of the seeded rational input bank of the exact and dense tiers
        (``"auto"``: grown until it separates the spectrum's divided frame).
    digits : int
        Working digits of the high-precision singular values.
    seed : int
        Seed of the banks and of the fiber's rays.
    verify : bool
        Verify the fiber by exact computation when the budget allows.
    budget : float
        Seconds the expensive tiers may take (estimated before each runs).
    max_memory : int
        Bytes any one tier may allocate; the audit is refused if even the
        matrix-free tier needs more.
    matrix_free : bool, optional
        Run the PyTorch tier (default: when PyTorch is installed).
    causal : bool
        Audit the causally masked map (``is_causal``): outside the paper's
        model, so the paper's tiers give only the exact facts about the
        weights and the matrix-free tier; the variant analyses
        (:mod:`symattn.audit.variants`, labelled) run on the masked map, as
        for multi-head stacks.

    Returns
    -------
    Audit
        Built completely before anything is printed.
    """
    from symattn.audit.report import verdict as report_verdict

    if isinstance(bank, bool) or not (bank == "auto" or (isinstance(bank, int) and bank >= 1)):
        raise SymattnError(f"bank must be a positive integer or 'auto', got {bank!r}")
    if digits < 20:
        raise SymattnError(f"use at least 20 digits for the high-precision singular values, got {digits}")
    if not budget >= 0 or not math.isfinite(budget):
        raise SymattnError(f"the budget must be a finite number of seconds >= 0, got {budget!r}")
    if isinstance(model.tokens, bool) or not isinstance(model.tokens, int) or model.tokens < 2:
        raise SymattnError(f"the token count n must be an integer >= 2, got {model.tokens!r}")
    work = estimate_work(model)
    work.update({"budget_seconds": budget, "max_memory_bytes": max_memory})
    if work["matrix_free_bytes"] > max_memory:
        raise SymattnError(f"an audit with n = {model.tokens} tokens at width {max(model.widths)} "
                           f"needs about {work['matrix_free_bytes'] / 2 ** 30:.1f} GiB even in its "
                           f"cheapest tier, beyond --max-memory {max_memory / 2 ** 30:.1f} GiB: use "
                           f"fewer --tokens or raise --max-memory")
    start = time.perf_counter()
    left = lambda: budget - (time.perf_counter() - start)  # noqa: E731
    tiers: dict = {"effective": "exact", "heads": "exact (scores), certified (norms)"}
    heads = _head_facts(model)
    single = model.single_head and not causal
    effective = fib = spectrum = None
    hypotheses: list = []
    L = M = None
    spectrum_note = None
    if single:
        L, M = _effective_exact(model)
        if max(model.widths) <= PRINT_LIMIT:
            effective = EffectiveParams(rational_array(L), tuple(rational_array(m) for m in M))
        hypotheses = _hypotheses(model, L, M)
        tiers["hypotheses"] = "exact"
        run_verify = verify and work["fiber_seconds"] <= left()
        fib = effective_fiber(rational_array(L), [rational_array(m) for m in M],
                              model.normalizers, model.tokens, verify=run_verify, seed=seed)
        tiers["fiber"] = ("exact (verified by exact series and symbolic identities)" if run_verify
                          else f"exact classification by Theorems 1-2 from exact hypotheses; "
                               f"verification skipped (estimated {work['fiber_seconds']:.0f} s, "
                               f"beyond the budget)" if verify else "exact classification")
    elif causal:
        tiers["hypotheses"] = "exact, per head (the theorems are about unmasked attention)"
        tiers["fiber"] = ("skipped: a causal mask is outside the paper's model (its theorems are "
                          "about unmasked self-attention); see the variant analyses")
    else:
        tiers["hypotheses"] = "exact, per head (the theorems are about single-head layers)"
        tiers["fiber"] = ("skipped: the paper's fiber theorems cover single-head stacks; a layer "
                          "with several heads sums their maps; see the variant analyses")
    distances = _distances(model, L, M)
    tiers["distances"] = "certified (Frobenius norms, ball arithmetic); numerical float64 (sigma_min)"
    predicted = _predicted(model, hypotheses)
    tiers["predicted"] = ("predicted (Prop. D.1 along the ray; Theorem 4's hypotheses hold)" if predicted
                          else "skipped: " + ("Theorem 4 needs " + ", ".join(_theorem4(hypotheses))
                                              if single else "causal mask" if causal
                                              else "multi-head layers"))
    # exact Smith spectrum along the model's own ray (budgeted)
    if causal:
        spectrum_note = ("not computed here: Theorem 4's spectrum is for unmasked attention; see the "
                         "variant analyses")
    elif not single:
        spectrum_note = ("not computed here: Theorem 4's spectrum is for single-head stacks; see the "
                         "variant analyses")
    elif len(set(model.widths)) != 1:
        spectrum_note = (f"not computed: symattn.analyses.spectrum.native_spectrum needs equal widths "
                         f"d_0 = ... = d_D (Theorem 4's setting); this stack has widths "
                         f"{list(model.widths)}")
    elif work["spectrum_seconds"] > left():
        spectrum_note = (f"not computed: estimated {work['spectrum_seconds']:.3g} s, beyond the "
                         f"remaining budget of {max(left(), 0):.0f} s (--budget SECONDS)")
    else:
        spectrum, spectrum_note = _ray_spectrum(model, bank, seed)
    tiers["spectrum"] = ("exact (certified modular Smith orders)" if spectrum is not None and
                         spectrum.certified else "skipped: " + (spectrum_note or "not certified"))
    # dense tier at t = 1: float64 Jacobian (stable forward) and high-precision singular values
    kernel: dict = _gauge_counts(model) if single else {}
    if single and spectrum is not None and spectrum.certified:
        kernel.update({"rank": spectrum.kernel, "tier": "exact"})
        tiers["kernel"] = "exact (parameters minus the rank of the certified spectrum)"
    elif single:
        tiers["kernel"] = "predicted (the theorems' gauge count: r_i^2 factor, d_i^2 interface)"
    singular: dict = {"bank_size": None, "float64": None, "high_precision": None, "digits": digits,
                      "high_precision_note": None, "float64_vs_high_precision_max_relative": None}
    ranks = {"parameters": model.parameters, "kernel": kernel.get("rank"), "exact": None,
             "exact_kind": "unknown", "float64_numerical": None, "high_precision_numerical": None,
             "below_cutoff": None, "below_float64_eps": None}
    dense = single and work["dense_bytes"] <= max_memory and model.parameters <= DENSE_LIMIT
    if single and not dense:
        tiers["singular_values"] = (f"skipped: the dense Jacobian has about {work['dense_bytes']:.3g} "
                                    f"bytes / {model.parameters} columns (limit {DENSE_LIMIT}); see "
                                    f"the matrix-free tier")
    if dense:
        run_exact = work["kernel_seconds"] <= left()
        _dense_tier(model, bank, digits, seed, spectrum, kernel, singular, ranks, tiers,
                    run_exact=run_exact,
                    run_high_precision=run_exact and work["kernel_seconds"] + work["high_precision_seconds"] <= left(),
                    work=work)
    # matrix-free tier
    mf = None
    want_mf = has_torch() if matrix_free is None else matrix_free
    if want_mf:
        mf, note = _matrix_free(model, seed, causal)
        tiers["matrix_free"] = note
    else:
        tiers["matrix_free"] = "skipped: the dense tier covers this model" if dense else "skipped"
    sensitivity = _sensitivity(mf, predicted, singular, spectrum)
    variants = None
    if not single:  # outside the paper's hypotheses: the variant analyses, labelled
        from symattn.audit.variants import variant_analyses

        variants = variant_analyses(model, causal, seed, left())
        tiers["variants"] = "exact / certified (variant analyses; computed, no theorem covers them)"
    work["seconds"] = round(time.perf_counter() - start, 3)
    work["causal"] = causal
    report = Audit(model, effective, hypotheses, fib, distances, spectrum, spectrum_note, kernel,
                   singular, ranks, heads=heads, predicted=predicted, matrix_free=mf,
                   sensitivity=sensitivity, tiers=tiers, work=work, variants=variants)
    report.verdict = report_verdict(report)
    return report


def _ray_spectrum(model: ImportedModel, bank: "int | str", seed: int) -> tuple[Spectrum | None, str | None]:
    theta = model.theta
    try:
        spec = native_spectrum(model.arch, bank=bank, seed=seed, path=(theta.Q, theta.K, theta.V))
    except (OutsideHypotheses, UnluckyPrime) as exc:
        return None, f"not computed: {exc}"
    return spec, None


def _dense_tier(model, bank, digits, seed, spectrum, kernel, singular, ranks, tiers, run_exact,
                run_high_precision, work):
    from symattn.core.algebras import BallAlgebra

    arch, theta = model.arch, model.theta
    complement = None
    if run_exact:
        exact_kernel, complement = _kernel(arch, theta)
        kernel.update(exact_kernel)
    if spectrum is not None:
        size = spectrum.bank_size
    elif bank != "auto":
        size = int(bank)
    else:
        size = -(-(arch.native_size - kernel["rank"]) // (arch.widths[-1] * arch.tokens)) + 1
    X = random_bank(arch, size, seed)
    J_float64 = _stable_float64_jacobian(model, X)
    sigma_float64 = [float(x) for x in np.linalg.svd(J_float64, compute_uv=False)] if J_float64 is not None else None
    sigma_high, high_precision_note = None, None
    if run_high_precision:
        J_high = observation_jacobian(arch, theta.as_dict(), X, BallAlgebra(digits))
        try:
            sigma_high = [float(s.mid()) for s in positive_singular_values(J_high, complement, digits)]
        except Unresolved as exc:  # more kernel than the gauges, or too few digits
            high_precision_note = (f"not resolved: {exc}; the Jacobian at t = 1 may have a kernel beyond the "
                       f"exact gauges (a collapsed or rank-deficient layer)")
    else:
        high_precision_note = (f"not computed: estimated {work['kernel_seconds'] + work['high_precision_seconds']:.3g}"
                   f" s with the exact kernel, beyond the remaining budget (--budget SECONDS)")
    sigma1 = sigma_high[0] if sigma_high else 0.0
    exact = spectrum.rank if spectrum is not None and spectrum.certified else None
    ranks.update({
        "kernel": kernel["rank"], "exact": exact,
        "exact_kind": ("certified: parameters - exact kernel, Smith form over F_p[[t]] "
                       "against proven bounds") if exact is not None else
                      f"unknown (at most {arch.native_size - kernel['rank']}, the "
                      f"{'exact' if run_exact else 'predicted'} gauge bound)",
        "float64_numerical": None if sigma_float64 is None else numerical_rank(sigma_float64, CUTOFF),
        "high_precision_numerical": None if sigma_high is None else numerical_rank(sigma_high, CUTOFF),
        "below_cutoff": None if sigma_high is None else sum(1 for s in sigma_high if s <= CUTOFF * sigma1),
        "below_float64_eps": None if sigma_high is None else sum(1 for s in sigma_high if s <= FLOAT64_EPS * sigma1),
    })
    singular.update({"bank_size": size, "bank": "symattn.model.architecture.random_bank(seed=%d)" % seed,
                     "float64": sigma_float64, "high_precision": sigma_high, "high_precision_note": high_precision_note,
                     "float64_vs_high_precision_max_relative": _agreement(sigma_float64, sigma_high)})
    tiers["singular_values"] = (f"numerical float64 (stable forward, LAPACK SVD); numerical high "
                                f"precision at {digits} digits" + ("" if sigma_high else f" ({high_precision_note})"))
    if run_exact:
        tiers["kernel"] = "exact"


def _stable_float64_jacobian(model: ImportedModel, X: np.ndarray) -> np.ndarray | None:
    """The dense float64 bank Jacobian (rows (input, coordinate, token), native columns), from the
    stable PyTorch forward when PyTorch is installed, else from the graph in Float64 with
    overflow reported as None."""
    arch = model.arch
    if not has_torch():
        from symattn.core.algebras import Float64

        with np.errstate(all="ignore"):
            J = observation_jacobian(arch, model.float_params(), X, Float64())
        return J if np.isfinite(J).all() else None
    from symattn.analyses.matrix_free import stack_forward, stack_layout
    from symattn.analyses.numerics import require_torch

    torch = require_torch()
    p = model.float_params()
    layers = [[(p[f"Q{i}"], p[f"K{i}"], p[f"V{i}"])] for i in range(1, arch.depth + 1)]
    layout = stack_layout(layers)
    bank = torch.tensor(np.vectorize(float, otypes=[float])(X)).transpose(-1, -2)
    f = stack_forward(layout, arch.normalizers, bank)
    theta = torch.tensor(np.concatenate([m.reshape(-1) for layer in layers for m in layer[0]]))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        J = torch.func.jacfwd(f)(theta)  # rows: (input, token, coordinate) with tokens as rows
    finally:
        torch.set_num_threads(threads)
    B, n, d = bank.shape[0], bank.shape[1], arch.widths[-1]
    J = J.reshape(B, n, d, -1).permute(0, 2, 1, 3).reshape(B * d * n, -1).numpy()
    return J if np.isfinite(J).all() else None


def _matrix_free(model: ImportedModel, seed: int, causal: bool) -> tuple[dict | None, str]:
    if not has_torch():
        return None, f"skipped: {TORCH_HINT}"
    from symattn.analyses.matrix_free import ray_spectra

    layers = [[h.floats() for h in layer] for layer in model.layers]
    result = ray_spectra(layers, model.normalizers, model.tokens, (1.0, 0.5, 0.25), seed=seed,
                         causal=causal)
    return result, ("numerical float64 and float32 side by side (randomized subspace iteration "
                    "on JVP/VJP products; residual error estimates)")


def _sensitivity(mf: dict | None, predicted: list, singular: dict, spectrum) -> list[dict]:
    """Per layer: strength of its query/key directions relative to sigma_1 at t = 1, and the
    digits float64 and float32 keep of it (from the matrix-free float64 figures)."""
    if not mf or not mf["float64"] or not mf["float64"][0]["top"]:
        return []
    at1 = mf["float64"][0]
    s1 = at1["top"][0]
    orders = {p["layer"]: p["order"] for p in predicted}
    out = []
    for i, entry in enumerate(at1["layers"], 1):
        value = entry["value"] or 0.0
        rel = value / s1 if s1 else 0.0
        slope = None
        v2, v4 = (mf["float64"][j]["layers"][i - 1]["value"] for j in (1, 2))
        if v2 and v4 and v2 > 0 and v4 > 0:
            slope = math.log(v2 / v4) / math.log(2)
        digits = (lambda eps: None if rel <= 0 else round(math.log10(rel / eps), 1))  # noqa: E731
        out.append({"layer": i, "relative_to_sigma_1": rel, "error": entry["error"],
                    "float64_digits": digits(FLOAT64_EPS), "float32_digits": digits(FLOAT32_EPS),
                    "float32_sees": rel > FLOAT32_EPS * 10, "float64_sees": rel > FLOAT64_EPS * 10,
                    "slope_t_half_to_quarter": slope, "predicted_order": orders.get(i),
                    "tier": "numerical float64 (matrix-free); orders predicted"})
    return out


def _agreement(sigma_float64: list[float] | None, sigma_high: list[float] | None) -> float | None:
    """Largest relative difference of the float64 and high-precision positive singular values."""
    if not sigma_high or not sigma_float64:  # None (not resolved) or empty
        return None
    return max(abs(a - b) / b for a, b in zip(sigma_float64, sigma_high) if b > 0)
