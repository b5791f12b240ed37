"""The audit's plain-language verdict, built from an :class:`~symattn.audit.result.Audit`'s computed fields only.

The analysis (:mod:`symattn.audit.analysis`) stores it in the result; the report
(:mod:`symattn.audit.report`) prints it. Nothing here computes a number.
"""

from __future__ import annotations

from typing import Sequence

from symattn.audit.result import FLOAT32_EPS, FLOAT64_EPS, Audit

__all__ = ["verdict", "module_rows", "summary", "describe", "RULES"]

#: The rules of the status column, in words (a row names the one that decided it).
RULES = {
    "dead head": "fail: the head's score Q K^T is exactly zero (rank Q or K is 0): it attends uniformly "
                 "to every token whatever the input",
    "collapsed head": "fail: sym(Q K^T) = 0 exactly: on a collapse locus of the paper (uniform attention "
                      "to first order); its query/key directions cannot be recovered",
    "float32 blind": "warn: query/key directions below float32 resolution at this scale (under 10 eps_32 "
                     "sigma_1): recover them in float64 or do not trust them",
    "float64 blind": "fail: directions below float64 resolution (under 10 eps_64 sigma_1): no float "
                     "computation at this scale sees them",
    "low rank": "warn: Q or K is rank deficient: the head uses fewer query/key directions than its width",
    "zero gain": "fail: a LayerNorm gain is exactly 0: that coordinate is erased",
    "small gain": "warn: a LayerNorm gain below 1e-3 of the largest: that coordinate is nearly erased",
    "dead units": "warn: ReLU hidden units never active on the probe inputs: they contribute nothing "
                  "there (probe with the model's own data, --inputs FILE, before pruning)",
    "heads assumed": "warn: num_heads is not recorded in the file and was assumed: give --heads H or a "
                     "config, or every per-head figure may describe a different model",
    "not measured": "skip: not measured: the budget ran out before this module's figures (--budget SECONDS)",
    "ok": "pass: the module's directions are seen in float32 at this scale (at least 10 eps_32 sigma_1)",
    "exact ok": "pass: exact facts hold (nonzero score, full ranks)",
}


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
    if not model.attention_only:
        return " ".join(_read_sentences(a) + _blocks_sentences(a))
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


def _head_status(a: Audit, facts: dict, mod: dict | None) -> tuple[str, str]:
    if facts["rank_Q"] == 0 or facts["rank_K"] == 0:
        return "fail", "dead head"
    if not facts["sym_nonzero"] and facts["collapse_locus"] in ("skew", "zero"):
        return "fail", "collapsed head"
    rel = None if mod is None else mod.get("relative")
    if rel is not None and rel <= 10 * FLOAT64_EPS:
        return "fail", "float64 blind"
    if rel is not None and rel <= 10 * FLOAT32_EPS:
        return "warn", "float32 blind"
    if min(facts["rank_Q"], facts["rank_K"]) < facts["rank_r"]:
        return "warn", "low rank"
    if mod is None:
        return "pass", "exact ok"
    return "pass", "ok"


def _sensitivity_of_layer(a: Audit, layer: int) -> dict | None:
    """The attention-only tier's per-layer figures as a module entry (relative strength)."""
    s = next((s for s in a.sensitivity if s["layer"] == layer), None)
    return None if s is None else {"relative": s["relative_to_sigma_1"], "float32_digits": s["float32_digits"],
                                   "float64_digits": s["float64_digits"]}


def module_rows(a: Audit) -> list[dict]:
    """One row per named module (head, LayerNorm, MLP): headline figures, status, the rule that decided it."""
    model = a.model
    mods = {(m["layer"], m["head"], m["kind"], m["name"]): m for m in (a.modules or {}).get("modules", [])}
    by_head = {(m["layer"], m["head"]): m for m in mods.values() if m["kind"] == "head"}
    rows = []
    names = {b.index: b for b in model.transformer_layers}
    for facts in a.heads:
        i, h = facts["layer"], facts["head"]
        mod = by_head.get((i, h)) or (_sensitivity_of_layer(a, i) if len(model.layers[i - 1]) == 1 else None)
        status, rule = _head_status(a, facts, mod)
        block = names.get(i)
        if block is not None and block.attention.heads_from == "assumed" and status == "pass":
            status, rule = "warn", "heads assumed"
        name = (f"{block.attention.name} head {h}" if block is not None else f"layer {i} head {h}")
        figures = [f"||sym QK^T||_F {facts['sym_score_frobenius']['value']:.3g} (certified)",
                   f"rank Q/K {facts['rank_Q']}/{facts['rank_K']} of {facts['rank_r']} (exact)"]
        if mod is not None and mod.get("relative") is not None:
            figures.append(f"query/key {mod['relative']:.2g} sigma_1, float32 keeps "
                           f"{mod['float32_digits']:.1f} digits (numerical)")
        rows.append({"module": name, "kind": "head", "layer": i, "head": h, "status": status,
                     "rule": RULES[rule], "figures": figures})
    for m in mods.values():
        if m["kind"] == "head":
            continue
        rel = m.get("relative")
        status, rule = "pass", "ok"
        figures = []
        if m["kind"] == "norm":
            norm = next((n for b in model.transformer_layers for n in b.norms if n.name == m["name"]), model.final_norm)
            gain = None if norm is None else norm.gain
            if gain is not None:
                big = float(abs(gain).max()) or 1.0
                figures.append(f"|gain| {float(abs(gain).min()):.3g}..{big:.3g}, eps {norm.eps:g}")
                if (gain == 0).any():
                    status, rule = "fail", "zero gain"
                elif float(abs(gain).min()) < 1e-3 * big:
                    status, rule = "warn", "small gain"
        else:
            dead = (a.modules or {}).get("dead_units", {}).get(m["name"][: -len(" MLP")])
            figures.append(f"{m['activation']}" + (f", {dead} dead units on the probes" if dead else ""))
            if m["activation"] == "relu":
                figures.append("ReLU is not analytic: no exact series tier; in the certified rank bounds where "
                               "every pre-activation is certified nonzero" if a.certified is not None else
                               "ReLU is not analytic: no exact series tier; numerical only")
            if dead:
                status, rule = "warn", "dead units"
        if m["kind"] == "norm":
            figures.append("in the certified rank bounds (ball arithmetic: 1/sqrt(var + eps) is irrational off "
                           "the square bank, no exact series)" if a.certified is not None else
                           "numerical tier only")
        if rel is None and status == "pass":
            status, rule = "skip", "not measured"
        if rel is not None:
            figures.append(f"{rel:.2g} sigma_1, float32 keeps {m['float32_digits']:.1f} digits (numerical)")
            if rel <= 10 * FLOAT64_EPS:
                status, rule = "fail", "float64 blind"
            elif rel <= 10 * FLOAT32_EPS and status == "pass":
                status, rule = "warn", "float32 blind"
        rows.append({"module": m["name"], "kind": m["kind"], "layer": m["layer"], "head": None,
                     "status": status, "rule": RULES[rule], "figures": figures})
    order = {"head": 0, "norm": 1, "mlp": 2}
    rows.sort(key=lambda r: (r["layer"] if r["layer"] is not None else 10 ** 6, order[r["kind"]],
                             r["head"] or 0, r["module"]))
    return rows


def summary(a: Audit) -> str:
    """The report's first line: the model as an engineer names it (:func:`describe`), the counts of
    pass/warn/fail, the tiers that ran and the tiers the budget stopped, and why."""
    m = a.model
    counts = {s: sum(1 for r in a.rows if r["status"] == s) for s in ("pass", "warn", "fail", "skip")}
    shape = describe(a)
    tiers = []
    if a.fiber is not None:
        tiers.append("exact fiber")
    if a.spectrum is not None and a.spectrum.certified:
        tiers.append("certified spectrum")
    if a.certified is not None:
        tiers.append(f"certified rank >= {a.certified['rank_lower_bound']['value']}")
    if a.modules and a.modules.get("float64"):
        tiers.append("numerical spectrum (float64" + ("/float32)" if a.modules.get("float32") else ")"))
    if a.modules and a.modules.get("dimension") and a.modules["dimension"].get("numerical_rank") is not None:
        tiers.append("numerical rank")
    if a.matrix_free:
        tiers.append("numerical ray spectra")
    unproven = a.forward is not None and not a.forward.get("passed")
    worst = ("FAIL" if counts["fail"] else "WARN" if counts["warn"] or m.assumptions or unproven else "PASS")
    stopped = [f"{name} ({why})" for name, why in _stopped(a)]
    return (f"{worst}: {m.source}: {shape}, d_model {m.widths[0]}, {m.torch_parameters} parameters, "
            f"n = {m.tokens}: {counts['pass']} pass, {counts['warn']} warn, {counts['fail']} fail"
            + (f", {counts['skip']} not measured" if counts["skip"] else "")
            + (f"; assumed: {', '.join(m.assumptions)}" if m.assumptions else "")
            + ("; forward check against the file's own model passed" if a.forward and a.forward.get("passed")
               else "; forward check not run" if unproven else "") + "; "
            f"tiers: {', '.join(tiers) or 'exact facts only'}"
            + (f"; stopped: {'; '.join(stopped)}" if stopped else "")
            + f"; {a.work.get('seconds', 0):.1f} {a.work.get('budget_measure', 's').split(' of ')[0]}")


def _stopped(a: Audit) -> list[tuple[str, str]]:
    """The tiers that did not finish, and why, in a few words (the budget, memory, a missing package)."""
    out = []
    for name, text in a.tiers.items():
        text = str(text)
        if "not run:" in text or text.startswith("stopped"):
            why = ("budget" if "budget" in text else "memory" if "memory" in text else
                   text.split(":", 1)[-1].strip()[:60])
            out.append((name, f"{why}, --budget SECONDS" if why == "budget" else why))
    return out


def _read_sentences(a: Audit) -> list[str]:
    """What the audit assumed, and how it proved it read the file (the forward check)."""
    from symattn.audit.forward import TOLERANCE

    out = []
    assumed = a.model.assumptions
    if assumed:
        out.append(f"Assumed, not read from the file: {', '.join(assumed)} (state them with --heads, "
                   f"--norm-first/--post-norm, --activation, --norm-kind or a config): every figure below "
                   f"describes the model so assumed, so the verdict is WARN at best.")
    f = a.forward
    if f is not None and f.get("passed"):
        out.append(f"Read as the file's own model computes it: every layer's output and every head's term "
                   f"agree with {f['reference'].split(' (')[0]} to {f['tolerance']:g} (relative, on "
                   f"{f['probes']})"
                   + (f", and with {f['naive_reference'].split(' (')[0]} to {TOLERANCE:g} (largest difference "
                      f"{f['naive_max_relative_difference']:.1g}; transformers runs RMSNorm and the rotary tables "
                      f"in float32, its tables agree with the audit's to {f['rotary_tables_relative_difference']:.1g})"
                      if f.get("naive_reference") else "") + ".")
    elif f is not None:
        out.append(f"The forward check did not run ({f['reference'].removeprefix('not run: ')}): nothing "
                   f"shows that the audit read the file as its own model computes it, so the verdict is "
                   f"WARN at best.")
    return out


def describe(a: Audit) -> str:
    """The model as an engineer names it: family, layers, heads (KV heads), norm kind and placement,
    activation, causal or not; what was assumed is said so.

    >>> import numpy as np
    >>> from symattn.audit import from_arrays, audit
    >>> describe(audit(from_arrays({"Q1": np.eye(2), "K1": np.eye(2), "V1": np.eye(2)}), budget=0, matrix_free=False))
    'attention stack: 1 layers, 1 heads, no norms, no MLP, not causal'
    """
    m = a.model
    causal = "causal" if a.work.get("causal") else "not causal"
    if not m.transformer_layers or all(b.norm_first is None for b in m.transformer_layers):
        family = "attention stack" if not m.transformer_layers else "attention layers with biases"
        return (f"{family}: {m.depth} layers, {'/'.join(map(str, m.heads))} heads, no norms, no MLP, {causal}")
    assumed = set(m.assumptions)

    def said(what: str) -> str:
        return " (assumed)" if what in assumed else ""
    b = m.transformer_layers[0]
    heads = "/".join(sorted({str(x.attention.heads) for x in m.transformer_layers}))
    kv = m.hf["kv_heads"] if m.hf else heads
    family = (f"{m.hf['family']} ({m.hf['model_type']})" if m.hf else
              "PyTorch encoder" if m.kind in ("torch-modules", "torch-state-dict") else f"{m.kind} encoder")
    act = b.mlp.activation if b.mlp else "no MLP"
    if b.mlp is not None and b.mlp.gate is not None:
        act = f"SwiGLU ({act})"
    rotary = f", {b.attention.rotary.describe()}" if b.attention.rotary is not None else ""
    return (f"{family}: {m.depth} layers, {heads} heads ({kv} KV heads){said('heads')}{rotary}, "
            f"{b.norms[0].title}{said('norm kind')} {'pre' if b.norm_first else 'post'}-norm{said('norm placement')}, "
            f"{act}{said('activation')}, {causal}")


def _blocks_sentences(a: Audit) -> list[str]:
    """The verdict of a model with LayerNorm/MLP/bias/residual parts: only what was analysed."""
    m = a.model
    parts = [f"Read: {len(m.transformer_layers)} layers in module order ({', '.join(b.name for b in m.transformer_layers)}); "
             f"beyond the paper's bare attention maps: {', '.join(m.beyond_attention[:6])}"
             + (f" and {len(m.beyond_attention) - 6} more" if len(m.beyond_attention) > 6 else "")
             + "."]
    c = a.certified
    if c is not None:
        lb, sy = c["rank_lower_bound"], c["symmetries"]
        upper = (f" and at most {sy['upper_bound']} (its {sy['span']} declared symmetries, exact vectors)"
                 if sy["upper_bound"] is not None else "")
        columns = "" if lb["columns"] == c["parameters"] else f" on {lb['columns']} of its columns"
        parts.append(
            f"Analysed as symattn's layer kinds ({c['parameters']} parameters; checked against PyTorch's own "
            f"modules to {c['graph_check']['relative_difference']:.1g}): at the model's weights the Jacobian "
            f"of its function has rank at least {lb['value']} (certified: the Jacobian{columns} in ball "
            f"arithmetic on {lb['inputs']} probe input(s), its singular values bounded below){upper}"
            + (", so the rank is determined." if c["determined"] else
               "; the rank between them is not certified here. No theorem of the paper covers these layers, "
               "and no exact series tier runs on them (LayerNorm square roots and the activation are "
               "irrational at the model's inputs)."))
    else:
        why = a.tiers.get("certified", "skipped")
        parts.append("These parts were read but not analysed exactly or in certified arithmetic "
                     f"({why.removeprefix('skipped: ')}), so no exact or certified statement is made about what "
                     "the model's function determines; each head's score Q K^T has its exact facts listed.")
    mods = a.modules
    if not mods or not mods.get("float64"):
        parts.append("The numerical tiers did not run" + (f" ({'; '.join(mods['not_run'])})" if mods else
                                                          " (install PyTorch: pip install 'symattn[torch]')")
                     + ".")
        return parts
    top = mods["float64"]["top"]
    parts.append(f"Numerically (float64, PyTorch's own modules on {mods['bank']}), the whole model's Jacobian "
                 f"in its {mods['parameters']} parameters has sigma_1 = {top[0]:.4g}.")
    dim = mods.get("dimension")
    if dim and not dim["symmetries"]:
        parts.append("The dimension was not established: the symmetry check did not run within the budget "
                     "(--budget SECONDS).")
    elif dim:
        verified = [s for s in dim["symmetries"] if s["verified"]]
        failed = [s["name"] for s in dim["symmetries"] if not s["verified"]]
        text = (f"{dim['declared']} directions of declared symmetries ({len(verified)} families, each checked "
                f"as kernel directions) bound its rank by {dim['upper_bound']}")
        if dim.get("numerical_rank") is not None:
            text += (f"; the dense Jacobian has numerical rank {dim['numerical_rank']}, so "
                     f"{dim['unexplained_kernel']} kernel directions are explained by no declared symmetry"
                     if dim["unexplained_kernel"] else
                     f"; the dense Jacobian has numerical rank {dim['numerical_rank']}: the declared "
                     f"symmetries explain its whole kernel")
        elif dim.get("lower_bound") is not None:
            text += (f"; it is at least {dim['lower_bound']} numerically (float64 rank on random directions, "
                     f"not certified)")
        parts.append(text + (f"; not kernel directions here: {', '.join(failed)}" if failed else "") + ".")
    discrete = mods.get("discrete") or []
    if discrete:
        bad = [c["name"] for c in discrete if not c["verified"]]
        num = [c["digits"] for c in discrete if c["kind"] == "numerical"]
        parts.append(f"Discrete symmetries applied to the file's weights: {len(discrete) - len(bad)} of {len(discrete)} "
                     f"hold (the permutations of SwiGLU hidden units, of query heads inside a KV group and of KV "
                     f"groups with their heads: the outputs agree to at least {min(num, default=16):g} digits, "
                     f"numerical float64; the rotary gauge commutes with every rotation: exact)"
                     + (f"; not symmetries here: {', '.join(bad)}" if bad else "") + ".")
    blind = [r["module"] for r in a.rows if "float32" in r["rule"] and r["status"] != "pass"]
    parts.append("float32 sees the directions of every module measured at this scale." if not blind else
                 f"Below float32 resolution at this scale: {', '.join(blind)}.")
    return parts
