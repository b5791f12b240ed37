"""Analysis of an imported model, in tiers: what is exact, certified, predicted or numerical, and why.

:func:`audit` builds the whole :class:`~symattn.audit.result.Audit` (see :mod:`symattn.audit`
for what each number means); the text, JSON and plot come from
:mod:`symattn.audit.report`, which imports the result and never this module
back. Every number carries its tier (:data:`~symattn.audit.result.TIERS`). Cheap exact
work always runs: the effective tuple and the per-head scores in exact rationals
(python-flint matrices, so ``d = 768`` is fine), the hypotheses of Theorems 1-4
(exact ranks and zero tests), the certified Frobenius distances to the collapse
loci, and the contact orders that Prop. D.1 predicts where Theorem 4's
hypotheses hold. Expensive work runs only when its estimated cost fits
``budget`` seconds (:func:`estimate_work`): the exact verification of the fiber,
the certified Smith spectrum along the model's own ray, the dense float64
Jacobian and its singular values at ``digits`` digits
(:mod:`symattn.audit.numerical`). The matrix-free PyTorch tier
(:func:`symattn.analyses.matrix_free.ray_spectra`) runs at any size within
``max_memory``. A request whose cheapest tier exceeds ``max_memory`` is refused
before anything is allocated.

Which tiers are the paper's is asked of the statements
(:data:`~symattn.theorems.statements.THEOREM_1`: the model's architecture,
:meth:`~symattn.audit.model.ImportedModel.architecture`, is the paper's stack); a
model they do not cover (several heads, ``--causal``) gets the same analyses
(:func:`~symattn.analyses.spectrum.native_spectrum`,
:func:`~symattn.analyses.dimension.neuromanifold_dimension`,
:func:`~symattn.analyses.fibers.fiber`) at its own exact weights, labelled
:data:`~symattn.theorems.statements.NO_THEOREM` (:func:`beyond_the_paper`).
"""

from __future__ import annotations

import math
from typing import Callable

import flint
import numpy as np

from symattn.core.errors import SymattnError, Undecided
from symattn.analyses.fibers import collapse_locus, effective_fiber
from symattn.core.optional import has_torch
from symattn.analyses.spectrum import Spectrum, native_spectrum
from symattn.audit.budget import MEASURE, Clock, OverBudget, bounded, cpu_seconds
from symattn.audit.model import ImportedModel, rational_array
from symattn.audit.numerical import dense_tier, layer_sensitivity, matrix_free_tier
from symattn.audit.result import (CUTOFF, DEFAULT_BUDGET, DEFAULT_MAX_MEMORY, DENSE_LIMIT, FLOAT32_EPS,  # noqa: F401
                                  FLOAT64_EPS, PRINT_LIMIT, TIERS, Audit)
from symattn.audit.verdict import module_rows, summary, verdict
from symattn.core.linalg import fmpq_is_zero, fmpq_rank
from symattn.model.parameters import EffectiveParams, reduction
from symattn.theorems import statements
from symattn.theorems.formulas import divisibility_orders

__all__ = ["Audit", "audit", "estimate_work", "beyond_the_paper", "CUTOFF", "FLOAT64_EPS", "FLOAT32_EPS",
           "TIERS", "DEFAULT_BUDGET", "DEFAULT_MAX_MEMORY", "PRINT_LIMIT", "DENSE_LIMIT", "BEYOND_PARAMETER_LIMIT"]

# seconds per unit of the cost models below, measured on a 2-core machine (benchmarks page)
_SPECTRUM_SECONDS = 1.6    # certified Smith spectrum, P = 96, depth 3
_FIBER_SECONDS = 0.01      # per d^2 per layer, the fiber's exact verification
_HP_SECONDS = 1.6          # Jacobian and singular values at 50 digits, P = 96, depth 3
_KERNEL_SECONDS = 0.16     # exact gauge kernel and its integer complement, P = 96

#: Native parameters up to which the exact analyses of a model beyond the paper run in an audit.
BEYOND_PARAMETER_LIMIT = 160


# ------------------------------------------------------------------ work estimates
def estimate_work(model: ImportedModel, bank_size: int = 8) -> dict:
    """Estimated seconds and bytes of each expensive tier (before anything is allocated).

    Returns
    -------
    dict
        ``parameters``, ``spectrum_seconds``, ``fiber_seconds``,
        ``high_precision_seconds``, ``kernel_seconds`` (the exact gauge kernel),
        ``dense_bytes`` (the float64 Jacobian),
        ``matrix_free_bytes`` (activations and directions of the PyTorch tier),
        ``modules_bytes`` (peak of the numerical tiers on PyTorch's own modules, for a model
        with LayerNorm/MLP/bias/residual parts: :func:`symattn.audit.modules.memory_estimate`;
        None otherwise), ``certified_bytes`` (the certified tier's peak on the layer kinds, start-up
        included: :data:`symattn.audit.certified.CERTIFIED_BYTES`, which its plan keeps to; None for a
        bare attention stack), ``peak_bytes`` (the process's estimated peak, start-up included).

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
    out = {
        "parameters": P,
        "spectrum_seconds": _SPECTRUM_SECONDS * (P / 96) ** 2.2 * layers * (n / 4) ** 2,
        "fiber_seconds": _FIBER_SECONDS * d * d * D * (n / 4) ** 2,
        "high_precision_seconds": _HP_SECONDS * (P / 96) ** 2.5 * layers,
        "kernel_seconds": _KERNEL_SECONDS * (P / 96) ** 3,
        "dense_bytes": rows * P * 8,
        "matrix_free_bytes": width * (per_pass + 2 * P * 8),
        "modules_bytes": _modules_bytes(model),
        "certified_bytes": _certified_bytes(model),
    }
    out["peak_bytes"] = _peak_bytes(model, out)
    return out


def _peak_bytes(model: ImportedModel, work: dict) -> int:
    """The process's estimated peak: the module tier's (block models), else the resident start-up
    bytes plus the largest of the matrix-free and dense tiers (the bench compares it with the measured
    peak)."""
    from symattn.audit.modules import BASE_BYTES

    if work["modules_bytes"] is not None:
        return max(work["modules_bytes"], work["certified_bytes"] or 0)
    dense = work["dense_bytes"] if model.parameters <= DENSE_LIMIT else 0
    return BASE_BYTES + max(work["matrix_free_bytes"], dense)


def _certified_bytes(model: ImportedModel) -> int | None:
    """The certified tier's peak: the process's start-up plus its own bound (its plan keeps to it); None
    where it cannot run (a bare attention stack, a part without a layer kind)."""
    from symattn.audit.certified import CERTIFIED_BYTES, block_architecture
    from symattn.audit.modules import BASE_BYTES

    if model.attention_only or block_architecture(model)[0] is None:
        return None
    return BASE_BYTES + CERTIFIED_BYTES


def _modules_bytes(model: ImportedModel) -> int | None:
    """Peak bytes of the numerical tiers on PyTorch's own modules (models with block parts)."""
    if model.attention_only:
        return None
    from symattn.audit.modules import memory_estimate

    return memory_estimate(model)["bytes"]



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


def _predicted(model: ImportedModel, hypotheses: list[dict], covered: bool) -> list[dict]:
    """Contact orders of Prop. D.1 along the ray where Theorem 4's hypotheses hold."""
    if not covered or _theorem4(hypotheses):
        return []
    arch = model.arch
    return [{"layer": i, "order": beta, "directions": 2 * arch.widths[i - 1] * r - r * r,
             "tier": "predicted"}
            for i, (beta, r) in enumerate(zip(divisibility_orders(arch), arch.ranks), 1)]



def _gauge_counts(model: ImportedModel) -> dict:
    """The gauge count the theorems give (factor ``r_i^2``, interface ``d_i^2`` for ``i < D``)."""
    arch = model.arch
    factor = sum(r * r for r in arch.ranks)
    interface = sum(d * d for d in arch.widths[1:-1])
    return {"factor_gauges": factor, "interface": interface, "rank": factor + interface,
            "tier": "predicted"}





# ------------------------------------------------------------------ audit
def _check_request(model: ImportedModel, bank, digits: int, budget: float) -> None:
    if isinstance(bank, bool) or not (bank == "auto" or (isinstance(bank, int) and bank >= 1)):
        raise SymattnError(f"bank must be a positive integer or 'auto', got {bank!r}")
    if digits < 20:
        raise SymattnError(f"use at least 20 digits for the high-precision singular values, got {digits}")
    if not budget >= 0 or not math.isfinite(budget):
        raise SymattnError(f"the budget must be a finite number of seconds >= 0, got {budget!r}")
    if isinstance(model.tokens, bool) or not isinstance(model.tokens, int) or model.tokens < 2:
        raise SymattnError(f"the token count n must be an integer >= 2, got {model.tokens!r}")


def audit(model: ImportedModel, bank: "int | str" = "auto", digits: int = 50, seed: int = 0,
          verify: bool = True, budget: float = DEFAULT_BUDGET,
          max_memory: int = DEFAULT_MAX_MEMORY, matrix_free: "bool | None" = None,
          causal: bool = False, inputs: "np.ndarray | None" = None,
          progress: "Callable[[str], None] | None" = None, clock: "Clock | None" = None) -> Audit:
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
        Seconds the whole analysis may take, enforced: an exact step runs in a
        child process killed at its share of the budget, a numerical step
        starts only when its measured cost fits what is left
        (:mod:`symattn.audit.budget`); what was stopped is said.
    max_memory : int
        Bytes any one tier may allocate; the audit is refused if even the
        matrix-free tier needs more.
    matrix_free : bool, optional
        Run the PyTorch tier (default: when PyTorch is installed).
    causal : bool
        Audit the causally masked map (``is_causal``): outside the paper's
        model, so the paper's tiers give only the exact facts about the
        weights and the matrix-free tier; the analyses beyond the paper
        (:func:`beyond_the_paper`, labelled) run on the masked map, as for
        multi-head stacks.
    inputs : numpy.ndarray, optional
        Probe inputs ``(B, n, d_0)`` (tokens as rows) for the numerical tiers
        (``--inputs FILE``); default N(0, 1) tokens at the model's ``n``.
    progress : callable, optional
        Receives one line per step (the command line writes them to stderr).
    clock : Clock, optional
        The budget's clock (default ``Clock(budget, progress)``: CPU seconds of
        the process tree from the call); tests inject one with their own timer.

    Returns
    -------
    Audit
        Built completely before anything is printed.

    Raises
    ------
    SymattnError
        For a bad argument, or a model whose cheapest tier needs more than ``max_memory``.
    """
    _check_request(model, bank, digits, budget)
    work = estimate_work(model)
    work.update({"budget_seconds": budget, "max_memory_bytes": max_memory,
                 "budget_measure": clock.measure if clock is not None else MEASURE})
    cheapest = work["modules_bytes"] if work["modules_bytes"] is not None else work["matrix_free_bytes"]
    if cheapest > max_memory:
        raise SymattnError(f"an audit with n = {model.tokens} tokens at width {max(model.widths)} "
                           f"needs about {cheapest / 2 ** 30:.2f} GiB even in its "
                           f"cheapest tier, beyond --max-memory {max_memory / 2 ** 30:.2f} GiB: use "
                           f"fewer --tokens or raise --max-memory")
    clock = clock or Clock(budget, progress)
    clock.say(f"{model.source}: {model.depth} layers, {model.torch_parameters} parameters; "
              f"budget {clock.describe(budget)}")
    forward = _forward_tier(model, seed, causal, clock)
    blocks = not model.attention_only  # LayerNorm, MLP, biases or residuals: beyond the paper's layer
    covered = statements.THEOREM_1.covers(model.architecture(causal)) and not blocks  # the paper's model
    tiers: dict = {"effective": "exact" if not blocks else "skipped: the model is not a chain of bare "
                   "attention maps (its LayerNorm/MLP/bias/residual parts are read, analysed numerically)",
                   "heads": "exact (scores), certified (norms)"}
    heads = _head_facts(model)
    effective, hypotheses, fib, L, M = _exact_tier(model, covered, causal, verify, seed, work, clock, tiers,
                                                   budget)
    distances = _distances(model, L, M)
    tiers["distances"] = "certified (Frobenius norms, ball arithmetic); numerical float64 (sigma_min)"
    predicted = _predicted(model, hypotheses, covered)
    tiers["predicted"] = ("predicted (Prop. D.1 along the ray; Theorem 4's hypotheses hold)" if predicted
                          else "skipped: " + ("Theorem 4 needs " + ", ".join(_theorem4(hypotheses))
                                              if covered else "causal mask" if causal
                                              else "LayerNorm/MLP/bias/residual parts" if blocks
                                              else "multi-head layers"))
    spectrum, spectrum_note = (_spectrum_tier(model, covered, causal, bank, seed, work, clock, budget)
                               if not blocks else (None, _BLOCKS_NOTE))
    tiers["spectrum"] = ("exact (certified modular Smith orders)" if spectrum is not None and
                         spectrum.certified else "skipped: " + (spectrum_note or "not certified"))
    kernel, singular, ranks, dense = _dense_tiers(model, covered, spectrum, bank, digits, seed, work, clock,
                                                  max_memory, tiers, budget)
    mf = modules = None
    want_mf = has_torch() if matrix_free is None else matrix_free
    if want_mf and not blocks:
        try:
            mf, tiers["matrix_free"] = bounded(lambda: matrix_free_tier(model, seed, causal),
                                               clock.left() * (0.5 if model.transformer_layers else 1.0),
                                               "matrix-free spectra along the ray", clock)
        except OverBudget as exc:
            tiers["matrix_free"] = f"stopped: {exc}"
    elif not want_mf:
        tiers["matrix_free"] = "skipped: the dense tier covers this model" if dense else "skipped"
    certified = (_certified_tier(model, want_mf, causal, inputs, seed, clock, budget, tiers,
                                 (work["certified_bytes"] or 0) <= max_memory) if blocks else None)
    if want_mf and model.transformer_layers:
        from symattn.audit.modules import module_tier

        clock.say("numerical tiers on PyTorch's own modules")
        modules = module_tier(model, clock, clock.left(), inputs=inputs, seed=seed, causal=causal)
        tiers["modules"] = modules["tier"] + (f"; not run: {'; '.join(modules['not_run'])}"
                                              if modules["not_run"] else "")
    _check_labels(modules, certified, tiers)
    sensitivity = layer_sensitivity(mf, predicted, singular, spectrum)
    variants = None
    if not covered and not blocks:  # outside the paper's hypotheses: the same analyses, labelled
        try:
            variants = bounded(lambda: beyond_the_paper(model, causal, seed, clock.left()), clock.left(),
                               "exact analyses beyond the paper", clock)
        except OverBudget as exc:
            variants = {"label": statements.NO_THEOREM, "theorem": None, "architecture": None,
                        "spectrum": None, "dimension": None, "fiber": None, "notes": [str(exc)]}
        tiers["variants"] = "exact / certified (the analyses beyond the paper; computed, no theorem covers them)"
    work["seconds"] = round(clock.elapsed(), 3)
    work["causal"] = causal
    report = Audit(model, effective, hypotheses, fib, distances, spectrum, spectrum_note, kernel,
                   singular, ranks, heads=heads, predicted=predicted, matrix_free=mf,
                   sensitivity=sensitivity, tiers=tiers, work=work, variants=variants, modules=modules,
                   certified=certified, forward=forward)
    report.rows = module_rows(report)
    report.verdict = verdict(report)
    work["seconds"] = round(clock.elapsed(), 3)
    report.summary = summary(report)
    clock.say("done")
    return report


def _forward_tier(model: ImportedModel, seed: int, causal: bool, clock: Clock) -> dict | None:
    """The forward check (:func:`symattn.audit.forward.forward_check`) of a model with blocks, before any
    figure; a mismatch raises :class:`~symattn.core.errors.CheckFailed`. None for bare arrays."""
    if not model.transformer_layers:
        return None
    if not has_torch():
        return {"passed": None, "reference": "not run: PyTorch is not installed (pip install 'symattn[torch]')"}
    from symattn.audit.forward import forward_check

    clock.say("forward check: the audit's reading against the file's own model")
    return forward_check(model, seed, causal)


_BLOCKS_NOTE = ("not computed: the exact spectrum covers chains of attention layers; this model's "
                "LayerNorm/MLP/bias/residual parts are read and analysed numerically (see the module rows)")


def _certified_tier(model: ImportedModel, want_torch: bool, causal: bool, inputs, seed: int, clock: Clock,
                    budget: float, tiers: dict, fits: bool) -> dict | None:
    """The certified tier on the model's own layer kinds (:mod:`symattn.audit.certified`), or why not (in
    ``tiers``); ``fits``: its memory bound is within ``--max-memory``."""
    from symattn.audit.certified import block_architecture, certified_tier

    arch, reasons = block_architecture(model, causal)
    if not fits:
        reasons.append(f"its memory bound {(_certified_bytes(model) or 0) / 2 ** 30:.2f} GiB is beyond --max-memory")
    if not want_torch:
        reasons.append("the graph check against PyTorch's modules needs PyTorch (pip install 'symattn[torch]')")
    if reasons:
        tiers["certified"] = "skipped: " + "; ".join(reasons)
        return None
    from symattn.analyses.matrix_free import gaussian_bank

    probe = (np.asarray(inputs[:CERTIFIED_INPUTS], dtype=np.float64) if inputs is not None else
             gaussian_bank(model.widths[0], model.tokens, CERTIFIED_INPUTS, seed).numpy())
    plan = min(CERTIFIED_SHARE * budget, CERTIFIED_SECONDS)  # what the step plans for (deterministic)
    share = min(plan / 0.85 + 5.0, clock.left() - 0.5 * budget)  # where it is stopped
    if share < plan:
        tiers["certified"] = (f"skipped: {max(share, 0):.0f} s left of the budget, the certified tier plans "
                              f"{plan:.0f} s (--budget SECONDS)")
        return None
    try:
        out = bounded(lambda: certified_tier(model, arch, probe, plan, seed, causal), share,
                      "certified rank bounds on the model's own layer kinds (ball arithmetic)", clock)
    except OverBudget as exc:
        tiers["certified"] = f"stopped: {exc} (--budget SECONDS)"
        return None
    except Undecided as exc:
        tiers["certified"] = f"undecided: {exc}"
        return None
    sy = out["symmetries"]
    tiers["certified"] = (f"certified (ball arithmetic on the model's own layer kinds, values in python-flint balls at "
                          f"{out['digits']} digits and the Jacobian in binary64 balls, graph checked against "
                          f"PyTorch's modules): rank >= {out['rank_lower_bound']['value']}; "
                          + (f"upper bound {sy['upper_bound']} from {sy['span']} declared symmetries (exact vectors)"
                             if sy["upper_bound"] is not None else "no certified upper bound (" + sy["tier"] + ")"))
    return out


def _check_labels(modules: dict | None, certified: dict | None, tiers: dict) -> None:
    """The post-condition of the block tiers' labels, in one place: a float computation (the tiers on
    PyTorch's modules) is never labelled exact or certified; a certified rank bound is labelled so only
    when a positive rank was certified, and it lies below the declared-symmetry upper bound.
    A wrong label is a bug (exit 70); bounds that contradict each other are a failed check (exit 1)."""
    from symattn.core.errors import CheckFailed, InternalError

    labels = []
    if modules is not None:
        dim = modules.get("dimension") or {}
        labels = [modules["tier"]] + [dim[k] for k in ("tier", "rank_tier") if dim.get(k)]
    wrong = [x for x in labels if not x.startswith("numerical")]
    if certified is not None:
        lb = certified["rank_lower_bound"]
        if lb["tier"].startswith("certified") != (lb["value"] > 0) or not tiers["certified"].startswith("certified"):
            wrong.append(lb["tier"])
        upper = certified["symmetries"]["upper_bound"]
        if upper is not None and lb["value"] > upper:
            raise CheckFailed(f"the certified rank lower bound {lb['value']} exceeds the declared symmetries' upper "
                              f"bound {upper}: one of them is wrong")
    if wrong:
        raise InternalError(f"a tier label claims more than its computation: {wrong[0][:120]!r}; please report this bug")


#: Fraction of the budget the certified tier of a model with block parts plans for, and at most
#: :data:`CERTIFIED_SECONDS` seconds (its bound depends on the budget only, not on the machine's load).
CERTIFIED_SHARE = 0.35
CERTIFIED_SECONDS = 300.0
#: Probe inputs offered to the certified tier (it takes as many as its plan needs).
CERTIFIED_INPUTS = 64


def _share(clock: Clock, budget: float) -> float:
    """Seconds one exact step may take: what is left, less a quarter of the budget kept for the numerical tiers."""
    return clock.left() - 0.25 * budget


def _exact_tier(model: ImportedModel, covered: bool, causal: bool, verify: bool, seed: int, work: dict,
                clock: Clock, tiers: dict, budget: float) -> tuple:
    """The effective tuple, the hypotheses and the fiber of a model the paper covers."""
    effective = fib = L = M = None
    hypotheses: list = []
    if covered:
        L, M = _effective_exact(model)
        if max(model.widths) <= PRINT_LIMIT:
            effective = EffectiveParams(rational_array(L), tuple(rational_array(m) for m in M))
        hypotheses = _hypotheses(model, L, M)
        tiers["hypotheses"] = "exact"
        eff = (rational_array(L), [rational_array(m) for m in M])
        stopped = None
        if verify and work["fiber_seconds"] <= _share(clock, budget):
            try:
                fib = bounded(lambda: effective_fiber(*eff, model.normalizers, model.tokens, verify=True,
                                                      seed=seed), _share(clock, budget),
                              "the fiber's exact verification", clock)
            except OverBudget as exc:
                stopped = str(exc)
        if fib is None:
            fib = effective_fiber(*eff, model.normalizers, model.tokens, verify=False, seed=seed)
        tiers["fiber"] = ("exact (verified by exact series and symbolic identities)" if fib.verified
                          else f"exact classification by Theorems 1-2 from exact hypotheses; "
                               f"verification {stopped}" if stopped else
                          f"exact classification by Theorems 1-2 from exact hypotheses; "
                          f"verification skipped (estimated {work['fiber_seconds']:.0f} s, "
                          f"beyond the budget)" if verify else "exact classification")
    elif not model.attention_only:
        tiers["hypotheses"] = "exact, per head (the theorems are about bare attention layers)"
        tiers["fiber"] = ("skipped: the paper's fiber theorems cover chains of bare attention maps; this "
                          "model's LayerNorm/MLP/bias/residual parts are read but not analysed exactly")
    elif causal:
        tiers["hypotheses"] = "exact, per head (the theorems are about unmasked attention)"
        tiers["fiber"] = ("skipped: a causal mask is outside the paper's model (its theorems are "
                          "about unmasked self-attention); see the variant analyses")
    else:
        tiers["hypotheses"] = "exact, per head (the theorems are about single-head layers)"
        tiers["fiber"] = ("skipped: the paper's fiber theorems cover single-head stacks; a layer "
                          "with several heads sums their maps; see the variant analyses")
    return effective, hypotheses, fib, L, M


def _spectrum_tier(model: ImportedModel, covered: bool, causal: bool, bank, seed: int, work: dict,
                   clock: Clock, budget: float) -> tuple[Spectrum | None, str | None]:
    """The certified Smith spectrum along the model's own ray (budgeted), or why not."""
    if causal:
        return None, ("not computed here: Theorem 4's spectrum is for unmasked attention; see the "
                      "variant analyses")
    if not covered:
        return None, ("not computed here: Theorem 4's spectrum is for single-head stacks; see the "
                      "variant analyses")
    if len(set(model.widths)) != 1:
        return None, (f"not computed: symattn.analyses.spectrum.native_spectrum needs equal widths "
                      f"d_0 = ... = d_D (Theorem 4's setting); this stack has widths "
                      f"{list(model.widths)}")
    if work["spectrum_seconds"] > _share(clock, budget):
        return None, (f"not computed: estimated {work['spectrum_seconds']:.3g} s, beyond the "
                      f"remaining budget of {max(_share(clock, budget), 0):.0f} s (--budget SECONDS)")
    theta = model.theta
    try:
        return bounded(lambda: native_spectrum(model.arch, bank=bank, seed=seed,
                                               path=(theta.Q, theta.K, theta.V)),
                       _share(clock, budget), "the certified spectrum along the ray", clock), None
    except Undecided as exc:  # outside Theorem 4's setting at this point, or an unlucky prime
        return None, f"not computed: {exc}"
    except OverBudget as exc:
        return None, f"not computed: {exc} (--budget SECONDS)"


def _dense_tiers(model: ImportedModel, covered: bool, spectrum, bank, digits: int, seed: int, work: dict,
                 clock: Clock, max_memory: int, tiers: dict, budget: float) -> tuple[dict, dict, dict, bool]:
    """The kernel, the singular values at ``t = 1`` and the ranks (paper's model only)."""
    kernel: dict = _gauge_counts(model) if covered else {}
    if covered and spectrum is not None and spectrum.certified:
        kernel.update({"rank": spectrum.kernel, "tier": "exact"})
        tiers["kernel"] = "exact (parameters minus the rank of the certified spectrum)"
    elif covered:
        tiers["kernel"] = "predicted (the theorems' gauge count: r_i^2 factor, d_i^2 interface)"
    singular: dict = {"bank_size": None, "float64": None, "high_precision": None, "digits": digits,
                      "high_precision_note": None, "float64_vs_high_precision_max_relative": None}
    ranks = {"parameters": model.parameters, "kernel": kernel.get("rank"), "exact": None,
             "exact_kind": "unknown", "float64_numerical": None, "high_precision_numerical": None,
             "below_cutoff": None, "below_float64_eps": None}
    dense = covered and work["dense_bytes"] <= max_memory and model.parameters <= DENSE_LIMIT
    if covered and not dense:
        tiers["singular_values"] = (f"skipped: the dense Jacobian has about {work['dense_bytes']:.3g} "
                                    f"bytes / {model.parameters} columns (limit {DENSE_LIMIT}); see "
                                    f"the matrix-free tier")
    if dense:
        share = _share(clock, budget)
        run_exact = work["kernel_seconds"] <= share
        run_high = run_exact and work["kernel_seconds"] + work["high_precision_seconds"] <= share

        def run():
            parts = (dict(kernel), dict(singular), dict(ranks), dict(tiers))
            dense_tier(model, bank, digits, seed, spectrum, *parts, run_exact=run_exact,
                       run_high_precision=run_high, work=work)
            return parts

        try:
            parts = bounded(run, max(share, 5.0), "the dense tier (exact kernel, singular values)", clock)
        except OverBudget as exc:  # again without the exact kernel and the high precision
            tiers["kernel_note"] = str(exc)
            try:
                parts = bounded(lambda: _cheap_dense(model, bank, digits, seed, spectrum, kernel, singular,
                                                     ranks, tiers, work),
                                max(clock.left(), 5.0), "the dense tier in float64 only", clock)
            except OverBudget as again:
                parts = (kernel, singular, ranks, dict(tiers, singular_values=f"stopped: {again}"))
        for target, got in zip((kernel, singular, ranks, tiers), parts):
            if got is not target:
                target.clear()
                target.update(got)
    return kernel, singular, ranks, dense


def _cheap_dense(model, bank, digits, seed, spectrum, kernel, singular, ranks, tiers, work) -> tuple:
    parts = (dict(kernel), dict(singular), dict(ranks), dict(tiers))
    dense_tier(model, bank, digits, seed, spectrum, *parts, run_exact=False, run_high_precision=False,
               work=work)
    return parts


# ------------------------------------------------------------------ beyond the paper
def beyond_the_paper(model: ImportedModel, causal: bool, seed: int, seconds_left: float) -> dict:
    """Spectrum, dimension and fiber of a model no theorem covers (several heads, causal), at its weights.

    The model as an :class:`~symattn.model.architecture.Architecture` (summed heads with their
    own ``V_h = W_o[:, h] W_v[h]``, ``mask = causal``) at its exact weights:

    * the contact spectrum along the model's own ray ``t -> (t Q, t K, V)``
      (:func:`~symattn.analyses.spectrum.native_spectrum` with ``path``);
    * the dimension bounds at the model's point
      (:func:`~symattn.analyses.dimension.neuromanifold_dimension` with ``point``): the rank of
      the jet Jacobian there and ``P`` minus the declared symmetries, the head permutation
      group, a gap reported;
    * the fiber: a causal single-head stack has an effective masked map, so
      :func:`~symattn.analyses.fibers.fiber` tests its tuple; with several heads the local
      certificate is the rank at the model's point reaching the upper bound
      (:func:`~symattn.analyses.fibers.point_fiber`).

    Every result is labelled :data:`~symattn.theorems.statements.NO_THEOREM` and carries
    ``theorem: None``. Each analysis starts only while the remaining budget lasts (checked
    before it starts, not estimated: one analysis of a stack at :data:`BEYOND_PARAMETER_LIMIT`
    parameters takes up to about a minute on 2 cores). A model's binary64 weights give
    rational relations too tall for the two-prime reconstruction of the spectrum's
    certificate, so its orders may be reported as modular upper bounds (``certificate:
    none``), said so. Returns a dict with ``label``, ``theorem`` (None), ``architecture``,
    ``spectrum``, ``dimension``, ``fiber`` (each a JSON dict or None) and ``notes`` (why an
    analysis did not run).
    """
    from symattn.analyses.dimension import neuromanifold_dimension
    from symattn.analyses.fibers import fiber, point_fiber

    out: dict = {"label": statements.NO_THEOREM, "theorem": None, "architecture": None, "spectrum": None,
                 "dimension": None, "fiber": None, "notes": []}
    if len(set(model.widths)) != 1:
        out["notes"].append(f"not computed: the variant analyses need equal widths; this stack has "
                            f"{list(model.widths)}")
        return out
    if model.parameters > BEYOND_PARAMETER_LIMIT:
        out["notes"].append(f"not computed: {model.parameters} native parameters, beyond the exact "
                            f"variant analyses' limit {BEYOND_PARAMETER_LIMIT} in an audit (use "
                            f"symattn variant on a smaller stack)")
        return out
    start = cpu_seconds()
    arch = model.architecture(causal)
    point = model.point()
    out["architecture"] = arch.describe()
    results: dict = {}
    steps = [("spectrum", lambda: native_spectrum(arch, seed=seed, path=point)),
             ("dimension", lambda: neuromanifold_dimension(arch, seed=seed, point=point))]
    if arch.has_effective_map:  # causal single-head: the effective masked map
        eta = reduction(model.theta)
        steps.append(("fiber", lambda: fiber(arch, eta.L, [[m] for m in eta.M], seed=seed)))
    for name, run in steps:
        if cpu_seconds() - start > seconds_left:
            out["notes"].append(f"{name} not computed: beyond the remaining budget (--budget SECONDS)")
            continue
        try:
            results[name] = run()
        except (SymattnError, Undecided) as exc:  # e.g. dependent symmetries at the model's point
            out["notes"].append(f"{name} not computed: {exc}")
    if "fiber" not in results and "dimension" in results:
        results["fiber"] = point_fiber(arch, results["dimension"])
    out.update({name: result.to_json() for name, result in results.items()})
    return out
