"""The audit's plain-language verdict, built from an :class:`~symattn.audit.result.Audit`'s computed fields only.

The analysis (:mod:`symattn.audit.analysis`) stores it in the result; the report
(:mod:`symattn.audit.report`) prints it. Nothing here computes a number.
"""

from __future__ import annotations

from typing import Sequence

from symattn.audit.result import Audit

__all__ = ["verdict"]


def _layers(xs: Sequence[int]) -> str:
    if not xs:
        return ""
    if len(xs) > 2 and list(xs) == list(range(xs[0], xs[-1] + 1)):
        return f"M_{xs[0]}..M_{xs[-1]}"
    return ", ".join(f"M_{i}" for i in xs)


def _fiber_sentence(a: Audit) -> str:
    fib, D = a.fiber, a.model.depth
    checked = "verified exactly" if fib.verified else "exact classification, not verified by series"
    determined = [i for i in range(1, D + 1) if i not in fib.free_layers]
    if fib.fiber == "singleton":
        first = f"The function determines L and {_layers(list(range(1, D + 1)))} exactly"
    elif fib.fiber == "sign-orbit":
        first = (f"The function determines L and {_layers(list(range(1, D + 1)))} exactly up to "
                 f"independent sign flips of {_layers(fib.sign_flip_layers)} (even normalizer)")
    elif fib.fiber == "free-suffix":
        first = (f"The function determines L and {_layers(determined)} exactly; layer "
                 f"{fib.first_collapse} maps every input to consensus, so {_layers(fib.free_layers)} "
                 f"cannot be determined at all")
    elif fib.fiber == "zero-readout":
        first = "The function is identically zero (L = 0): no score matrix can be determined"
    else:
        first = f"The paper's theorems do not decide this model's fiber: {fib.sentence}"
    return f"{first} ({fib.theorem}, {checked})."


def _variant_sentence(v: dict) -> str:
    """The verdict's sentence on the variant analyses (labelled: no theorem covers them)."""
    text = (f"This model is outside the paper's hypotheses ({v['architecture']}); computed on its variant "
            f"graph, with no theorem covering it: {v['fiber']['sentence']}")
    s = v["spectrum"]
    if s is not None and not s["undecided"]:
        bands = ", ".join(f"t^{b['order']} ({b['multiplicity']}, {b['block']})" for b in s["bands"] if b["order"])
        text += (f" Along the model's own ray t (Q, K) the directions weaken like {bands} "
                 + ("(certified)." if s["certified"] else "(modular upper bounds, not certified)."))
    return text


def verdict(a: Audit) -> str:
    """The plain-language answer of an audit, built from its computed fields only."""
    model, kernel, ranks, spectrum = a.model, a.kernel, a.ranks, a.spectrum
    parts = []
    if a.fiber is not None:
        parts.append(_fiber_sentence(a))
    elif a.variants and a.variants.get("fiber"):
        parts.append(_variant_sentence(a.variants))
    elif a.work.get("causal"):
        parts.append("This audit is of the causally masked map: the paper's theorems are about "
                     "unmasked self-attention, so they do not say what its function determines; "
                     "the exact facts about the weights are listed per head and the singular "
                     "values are numerical.")
    else:
        parts.append(f"This stack has {', '.join(map(str, model.heads))} heads per layer: the "
                     f"paper's theorems are about single-head layers, so they do not say what its "
                     f"function determines; each head alone is the paper's layer, and its exact "
                     f"facts are listed per head.")
    if kernel:
        gauge = (f"It cannot determine the query/key factorization ({kernel['factor_gauges']} "
                 f"directions Q_i B, K_i B^-T)")
        if kernel["interface"]:
            gauge += f" or the intermediate value maps ({kernel['interface']} directions)"
        gauge += (f": {kernel['rank']} native directions are exact zeros of the Jacobian"
                  if kernel.get("tier") == "exact" else
                  f": {kernel['rank']} native directions by the theorems' gauge count")
        if model.torch_layout:
            extra = sum(d * d for d in model.widths[1:])
            gauge += (f"; in PyTorch's own parameters, the split of each V_i = W_o W_v into "
                      f"out_proj and value projection adds {extra} more (when W_v is invertible)")
        parts.append(gauge + ".")
    if ranks["exact"] is not None and ranks["below_cutoff"] is not None:
        lost = ranks["exact"] - ranks["float64_numerical"]
        parts.append(
            f"Of the {ranks['exact']} identifiable directions (exact rank), "
            f"{ranks['below_cutoff']} fall below the numerical-rank cutoff 1e-10 sigma_1 on this "
            f"bank at the model's own scale, and {ranks['below_float64_eps']} below float64 "
            f"resolution (eps sigma_1): float64 reports rank {ranks['float64_numerical']}"
            + (f", {lost} short of the exact rank." if lost > 0 else
               ", the exact rank." if lost == 0 else "."))
    elif ranks["float64_numerical"] is not None:
        why = a.spectrum_note or ("the high-precision singular values are not resolved"
                                  if ranks["exact"] is not None else "the spectrum is not certified")
        parts.append(f"The exact rank is not established here ({why}); float64 sees rank "
                     f"{ranks['float64_numerical']} of at most "
                     f"{ranks['parameters'] - ranks['kernel']} (parameters minus the "
                     f"{'exact' if kernel.get('tier') == 'exact' else 'predicted'} gauges).")
    if spectrum is not None and not spectrum.certified:
        failed = [h["name"] for h in a.hypotheses if h["theorem"] == "4" and h["holds"] is False]
        parts.append("The contact orders along the model's own ray are not certified"
                     + (f" (Theorem 4 needs {', '.join(failed)})" if failed else "")
                     + "; no sensitivity scaling is claimed.")
    elif spectrum is not None:
        bands = [b for b in spectrum.bands if b.order > 0]
        if bands:
            orders = ", ".join(f"t^{b.order} ({b.multiplicity} directions of layer {b.layer})"
                               for b in bands)
            worst = max(bands, key=lambda b: b.order)
            parts.append(f"Along the model's own ray t (Q, K) the identifiable query/key directions "
                         f"weaken like {orders} as t -> 0: near collapse, halving the query/key "
                         f"scale divides layer {worst.layer}'s singular values by about "
                         f"2^{worst.order} = {2 ** worst.order}.")
    elif a.predicted:
        orders = ", ".join(f"t^{p['order']} (layer {p['layer']})" for p in a.predicted)
        parts.append(f"Theorem 4's hypotheses hold (checked exactly), so along the model's own ray "
                     f"t (Q, K) the query/key directions are predicted to weaken like {orders} as "
                     f"t -> 0 (Prop. D.1; the exact spectrum: {a.spectrum_note}).")
    blind32 = [s["layer"] for s in a.sensitivity if not s["float32_sees"]]
    blind64 = [s["layer"] for s in a.sensitivity if not s["float64_sees"]]
    if a.sensitivity:
        parts.append(
            "At the model's own scale (matrix-free, N(0, 1) tokens), "
            + (f"float32 cannot see the query/key directions of layer(s) "
               f"{', '.join(map(str, blind32))} (below 10 eps_32 sigma_1)" if blind32 else
               "float32 sees the query/key directions of every layer")
            + (f", and float64 cannot see those of layer(s) {', '.join(map(str, blind64))}"
               if blind64 else "") + ".")
    return " ".join(parts)
