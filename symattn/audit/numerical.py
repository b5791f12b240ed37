"""The audit's dense and numerical tiers: the gauge kernel's complement, the float64 and high-precision
singular values of the bank Jacobian at ``t = 1``, the matrix-free spectra along the ray and the
per-layer sensitivity (each number labelled with its tier, see :data:`symattn.audit.result.TIERS`).
"""

from __future__ import annotations

import math

import numpy as np

from symattn.analyses.numerics import (
    Unresolved,
    numerical_rank,
    observation_jacobian,
    positive_singular_values,
)
from symattn.audit.model import ImportedModel
from symattn.core.optional import TORCH_HINT, has_torch
from symattn.audit.result import CUTOFF, FLOAT32_EPS, FLOAT64_EPS
from symattn.model.architecture import Architecture
from symattn.model.parameters import NativeParams, random_bank
from symattn.model.symmetries import GaugeKernel

__all__ = ["dense_tier", "exact_kernel", "matrix_free_tier", "layer_sensitivity"]


def exact_kernel(arch: Architecture, theta: NativeParams) -> tuple[dict, np.ndarray]:
    kernel = GaugeKernel(arch, theta)
    complement = kernel.complement()
    rank = arch.native_size - complement.shape[1]
    return {"factor_gauges": len(kernel.factor_gauges), "interface": len(kernel.interface_directions),
            "rank": rank, "tier": "exact"}, complement


def dense_tier(model, bank, digits, seed, spectrum, kernel, singular, ranks, tiers, run_exact,
                run_high_precision, work):
    from symattn.core.algebras import BallAlgebra

    arch, theta = model.arch, model.theta
    complement = None
    if run_exact:
        counts, complement = exact_kernel(arch, theta)
        kernel.update(counts)
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
    singular.update({"bank_size": size, "bank": "symattn.model.parameters.random_bank(seed=%d)" % seed,
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
    from symattn.core.optional import require_torch

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


def matrix_free_tier(model: ImportedModel, seed: int, causal: bool) -> tuple[dict | None, str]:
    if not has_torch():
        return None, f"skipped: {TORCH_HINT}"
    from symattn.analyses.matrix_free import ray_spectra

    layers = [[h.floats() for h in layer] for layer in model.layers]
    result = ray_spectra(layers, model.normalizers, model.tokens, (1.0, 0.5, 0.25), seed=seed,
                         causal=causal)
    return result, ("numerical float64 and float32 side by side (randomized subspace iteration "
                    "on JVP/VJP products; residual error estimates)")


def layer_sensitivity(mf: dict | None, predicted: list, singular: dict, spectrum) -> list[dict]:
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
