"""Sections of the audit's report that an engineer reads first: the module rows with their status,
the model as read, the numerical tiers on PyTorch's own modules, the glossary, the per-layer plot.

Nothing here computes a number: the rows come from
:func:`symattn.audit.verdict.module_rows`, the figures from
:func:`symattn.audit.modules.module_tier`, both stored in the
:class:`~symattn.audit.result.Audit`.
"""

from __future__ import annotations

import math

from pathlib import Path

from symattn.audit.result import FLOAT32_EPS, FLOAT64_EPS, Audit

__all__ = ["row_lines", "model_lines", "module_tier_lines", "certified_lines", "GLOSSARY", "glossary_lines", "plot_layers"]

#: The paper's notation, in words (printed at the end of every report).
GLOSSARY = (
    ("Q_i, K_i, V_i", "query, key and value maps of layer i in the paper's convention (tokens as columns); "
                      "for PyTorch, Q = W_q^T / sqrt(head_dim), K = W_k^T, V = W_o[:, h] W_v[h]"),
    ("Q K^T, score", "the bilinear form of a head's attention logits x_a^T Q K^T x_b"),
    ("sym M", "(M + M^T) / 2, the symmetric part: where it is 0 the head is on a collapse locus"),
    ("L, M_i", "the effective tuple of eq. (3): the readout and the scores seen from the input"),
    ("Z_i", "the collapse locus of layer i: scores at which attention is uniform to first order"),
    ("t^k", "along the ray t -> (t Q, t K, V): singular values shrink like t^k as t -> 0"),
    ("sigma_1", "the largest singular value of the bank Jacobian (outputs on the probe inputs, "
                "differentiated in the parameters)"),
    ("eps_32, eps_64", "unit roundoff of float32 (1.2e-7) and float64 (2.2e-16): a direction below "
                       "10 eps sigma_1 is lost in that precision"),
    ("declared symmetry", "a family of parameter changes that leaves the function unchanged (a gauge), "
                          "checked here as kernel directions of the Jacobian"),
)


def row_lines(a: Audit) -> list[str]:
    """One line per named module: status, name, headline figures; then the rules that decided them."""
    if not a.rows:
        return []
    width = max(len(r["module"]) for r in a.rows)
    lines = ["modules (status: the rule in words below; figures exact, certified or numerical as marked)"]
    for r in a.rows:
        lines.append(f"  {r['status'].upper():<4}  {r['module']:<{width}}  {'; '.join(r['figures'])}")
    used = []
    for r in a.rows:
        if r["rule"] not in used:
            used.append(r["rule"])
    lines.append("  rules applied:")
    lines += [f"    {rule}" for rule in used]
    lines.append("")
    return lines


def model_lines(a: Audit) -> list[str]:
    """The layers as read from the file, in module order, with where each fact came from."""
    m = a.model
    if not m.transformer_layers:
        return []
    lines = ["the model as read (module order)"]
    for b in m.transformer_layers:
        at = b.attention
        text = (f"  layer {b.index}: {b.name}: {b.kind}, {at.heads} heads (from {at.heads_from})"
                + (f", {at.kv} KV heads" if at.kv != at.heads else "")
                + (f", {at.rotary.describe()}" if at.rotary is not None else "")
                + f", d_model {at.width}, attention biases {'yes' if at.in_proj_bias is not None else 'no'}")
        if b.norm_first is not None:
            text += (f", {'pre' if b.norm_first else 'post'}-norm (from {b.placement_from}), "
                     f"{'SwiGLU' if b.mlp.gate is not None else 'MLP'} {b.mlp.w1.shape[0]} {b.mlp.activation}, "
                     f"{b.norms[0].title} eps {b.norms[0].eps:g}")
        lines.append(text)
    if m.final_norm is not None:
        lines.append(f"  final {m.final_norm.title}: {m.final_norm.name}")
    lines.append("")
    return lines


def _f(x, fmt: str = ".4g") -> str:
    return "n/a" if x is None else format(x, fmt)


def certified_lines(a: Audit) -> list[str]:
    """The certified tier on the model's own layer kinds: graph check, symmetries, rank bounds."""
    c = a.certified
    if c is None:
        return ([f"certified tier on the model's layer kinds: {a.tiers['certified']}", ""]
                if "certified" in a.tiers else [])
    lb, sy = c["rank_lower_bound"], c["symmetries"]
    lines = [f"certified tier on the model's own layer kinds (theorem: none; {c['seconds']} s)",
             f"  layer kinds: {c['architecture']}",
             f"  graph check: symattn's graph vs PyTorch's modules, relative difference "
             f"{c['graph_check']['relative_difference']:.1e} ({c['graph_check']['tier']})",
             (f"  declared symmetries: {sy['span']} independent (" +
              ", ".join(f"{k} {v}" for k, v in sy["kinds"].items()) + f"): rank <= {sy['upper_bound']} ({sy['tier']})"
              if sy["upper_bound"] is not None else f"  declared symmetries: {sy['tier']}"),
             f"  rank >= {lb['value']} ({lb['tier']}; numerical rank of the midpoints {lb['numerical_rank']}, "
             f"{lb['strong']} directions by Weyl's inequality, {lb['weak']} through their own enclosures)"]
    lines += [f"  note: {n}" for n in c["notes"]]
    return lines + [""]


def module_tier_lines(a: Audit) -> list[str]:
    """The numerical tiers on PyTorch's own modules: spectrum, dimension, what did not run."""
    mods = a.modules
    if mods is None:
        return []
    lines = [f"spectrum and dimension of the whole model ({mods['tier']})"]
    if mods.get("bank"):
        lines.append(f"  probe inputs: {mods['bank']}; {mods.get('parameters')} parameters")
    if mods.get("float64"):
        r64, r32 = mods["float64"], mods.get("float32") or {}
        lines.append("  leading singular values (float64 +- residual | float32):")
        for j, (v, e) in enumerate(zip(r64["top"], r64["errors"])):
            v32 = r32.get("top", [])[j] if j < len(r32.get("top", [])) else None
            lines.append(f"    sigma_{j + 1} = {v:.8g} +- {e:.1g} | {_f(v32, '.8g')}")
    dim = mods.get("dimension")
    if dim:
        lines.append(f"  dimension ({dim['tier']}):")
        for s in dim["symmetries"]:
            digits = 15.0 if s["ratio"] <= 0 else min(15.0, round(-math.log10(s["ratio"]), 1))
            lines.append(f"    {'verified' if s['verified'] else 'NOT a symmetry here'}: {s['name']}: "
                         f"{s['count']} directions (numerical at {digits:g} digits: ||J v|| / sigma_1 ||v|| = "
                         f"{s['ratio']:.1e})")
        lines.append(f"    rank <= {dim['upper_bound']} (parameters {dim['parameters']} - declared "
                     f"{dim['declared']})")
        if dim.get("numerical_rank") is not None:
            lines.append(f"    numerical rank {dim['numerical_rank']} ({dim['rank_tier']}; smallest kept "
                         f"{dim['smallest_kept']:.2e}, largest dropped {_f(dim['largest_dropped'], '.2e')})")
            lines.append(f"    kernel explained by no declared symmetry: {dim['unexplained_kernel']} "
                         f"directions")
        elif dim.get("lower_bound") is not None:
            lines.append(f"    rank >= {dim['lower_bound']} ({dim['rank_tier']})")
    if mods.get("discrete"):
        lines.append("  discrete symmetries (applied to the file's weights):")
        for c in mods["discrete"]:
            lines.append(f"    {'verified' if c['verified'] else 'NOT a symmetry here'}: {c['name']} ({c['tier']})")
    for note in mods.get("not_run", []):
        lines.append(f"  not run: {note}")
    lines.append("")
    return lines


def glossary_lines() -> list[str]:
    """The paper's notation in words."""
    width = max(len(k) for k, _ in GLOSSARY)
    return ["glossary (the paper's notation)"] + [f"  {k:<{width}}  {v}" for k, v in GLOSSARY] + [""]


def plot_layers(plt, a: Audit, path: Path) -> object:
    """One panel per layer: each module's strength relative to sigma_1 (float64 bars, float32 marks),
    with the float32 and float64 resolution lines."""
    mods = [m for m in a.modules["modules"] if m.get("relative") is not None]
    layers = sorted({m["layer"] for m in mods if m["layer"] is not None})
    fig, axes = plt.subplots(1, max(len(layers), 1), figsize=(3.2 * max(len(layers), 1) + 1, 3.6),
                             squeeze=False)
    s1 = a.modules["float64"]["top"][0]
    for ax, layer in zip(axes[0], layers):
        mine = [m for m in mods if m["layer"] == layer]
        labels = [(f"h{m['head']}" if m["kind"] == "head" else m["name"].rsplit(".", 1)[-1].replace(" MLP", "")
                   if m["kind"] == "norm" else "MLP") for m in mine]
        ax.bar(range(len(mine)), [m["relative"] for m in mine], color="tab:blue", label="float64")
        f32 = [m.get("float32") for m in mine]
        ax.plot(range(len(mine)), [(v or 0.0) / s1 for v in f32], "x", color="tab:red", label="float32")
        ax.axhline(10 * FLOAT32_EPS, ls=":", color="gray", label="10 eps_32")
        ax.axhline(10 * FLOAT64_EPS, ls="--", color="black", label="10 eps_64")
        ax.set_yscale("log")
        ax.set_xticks(range(len(mine)), labels, rotation=30, fontsize=7)
        ax.set_title(f"layer {layer}", fontsize=9)
    axes[0][0].set_ylabel("module's largest singular value / sigma_1")
    axes[0][0].legend(fontsize=6)
    from symattn.core.output import plot_text

    fig.suptitle(f"symattn audit: {plot_text(Path(a.model.source).name)} (numerical, query/key of each head)",
                 fontsize=9)
    return fig
