"""The audit's report: the plain-language verdict, the text tables and the plot.

Nothing here computes a number: everything comes from the
:class:`~symattn.audit.result.Audit` built by
:func:`symattn.audit.analysis.audit`, and every section names the tier that
produced it.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Sequence

import numpy as np

from symattn.core.output import plot_text, save_figure
from symattn.audit.result import CUTOFF, FLOAT32_EPS, FLOAT64_EPS, Audit
from symattn.audit.sections import certified_lines, glossary_lines, model_lines, module_tier_lines, plot_layers, row_lines
from symattn.audit.verdict import verdict  # noqa: F401  the verdict was printed from here

__all__ = ["verdict", "format_report", "plot_report", "along", "format_along", "plot_along"]


def _short(v: Fraction) -> str:
    return f"{float(v):.6g}"


def _matrix_lines(name: str, m: np.ndarray) -> list[str]:
    bits = max((v.denominator.bit_length() - 1 for v in m.flat), default=0)
    head = (f"  {name} ({m.shape[0]} x {m.shape[1]}, exact rational, denominators up to 2^{bits}; "
            f"shown rounded)")
    return [head] + ["    [" + "  ".join(f"{_short(v):>11}" for v in row) + "]" for row in m]


def _yes(v) -> str:
    return {True: "yes", False: "no", None: "undecided"}[v]


def _table(rows: Sequence[tuple[str, str]], indent: str = "  ") -> list[str]:
    if not rows:
        return []
    width = max(len(k) for k, _ in rows)
    return [f"{indent}{k:<{width}}  {v}" for k, v in rows]


def _columns(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
    return ["  " + "  ".join(f"{c:>{w}}" for c, w in zip(r, widths)) for r in rows]


def _number(x, fmt: str = ".4g") -> str:
    return "n/a" if x is None else format(x, fmt)


def format_report(a: Audit, matrices: bool = False) -> str:
    """The whole report as text: the summary line, the verdict, one row per named module, then
    every section with the tier that produced it, and the glossary. ``matrices``: print the
    effective matrices too (``--matrices``)."""
    m = a.model
    lines = [a.summary or f"symattn audit of {m.source} ({m.kind})", ""]
    lines += ["verdict", "  " + a.verdict, ""]
    lines += row_lines(a)
    lines.append(f"symattn audit of {m.source} ({m.kind})")
    lines += _table([
        ("widths d_0..d_D", ", ".join(map(str, m.widths))),
        ("heads per layer", ", ".join(map(str, m.heads))),
        ("ranks r_i (per head)", ", ".join(str(layer[0].q.shape[1]) for layer in m.layers)),
        ("tokens n", str(m.tokens)),
        ("normalizers", ", ".join(str(phi.expr) for phi in m.normalizers)),
        ("native parameters", str(m.parameters) + ("" if m.attention_only else
                                                   f" of the attention maps; {m.torch_parameters} in all")),
    ])
    lines += [f"  note: {n}" for n in m.notes]
    lines += [f"  outside the audited stack (not audited): {o}" for o in m.outside]
    lines.append("")
    lines += model_lines(a)
    if a.effective is not None and matrices:
        lines.append("effective tuple (L, M_1..M_D) of eq. (3) (exact; --json gives every p/q)")
        for name, mat in a.effective.as_dict().items():
            lines += _matrix_lines(name, mat)
        lines.append("")
    elif a.effective is not None:
        lines.append("effective tuple (L, M_1..M_D) of eq. (3): exact, not printed (--matrices prints it, "
                     "--json gives every p/q)")
        lines.append("")
    lines.append("scores Q K^T per head (exact zero tests and ranks; norms certified)")
    rows = [("layer", "head", "sym != 0", "rank Q", "rank K", "rank V", "||QK^T||_F", "||sym||_F")]
    rows += [(str(h["layer"]), str(h["head"]), _yes(h["sym_nonzero"]), str(h["rank_Q"]),
              str(h["rank_K"]), str(h["rank_V"]), _number(h["score_frobenius"]["value"]),
              _number(h["sym_score_frobenius"]["value"])) for h in a.heads]
    lines += _columns(rows)
    lines.append("")
    if a.hypotheses:
        lines.append("hypotheses of Theorems 1-4 (exact)")
        lines += _table([(f"Thm {h['theorem']}: {h['name']}",
                          _yes(h["holds"]) + (f"   ({h['detail']})" if h["detail"] else ""))
                         for h in a.hypotheses])
        lines.append("")
    lines.append(f"effective fiber ({a.tiers['fiber']})")
    if a.fiber is not None:
        fib = a.fiber
        lines += _table([("fiber", fib.fiber), ("statement", fib.theorem),
                         ("free layers", ", ".join(map(str, fib.free_layers)) or "none"),
                         ("sign-flip layers", ", ".join(map(str, fib.sign_flip_layers)) or "none")])
        lines.append(f"  {fib.sentence}")
    lines.append("")
    if a.distances["layers"]:
        lines.append("distances to the collapse loci and degenerate ranks (norms certified; "
                     "sigma_min numerical, float64)")
        lines.append(f"  ||L||_F = {a.distances['L_frobenius']:.4g}")
        head = ("layer", "||M||_F", "||sym M||_F", "to Z_i", "smin Q", "smin K", "smin V")
        rows = [head] + [(str(d["layer"]), f"{d['M_frobenius']:.4g}", f"{d['sym_M_frobenius']:.4g}",
                          _number(d["distance_to_collapse"]), f"{d['sigma_min_Q']:.4g}",
                          f"{d['sigma_min_K']:.4g}", f"{d['sigma_min_V']:.4g}")
                         for d in a.distances["layers"]]
        lines += _columns(rows)
        lines.append("")
    if a.predicted:
        lines.append("contact orders along the model's own ray predicted by Prop. D.1 (predicted; "
                     "Theorem 4's hypotheses hold, checked exactly)")
        lines += _table([(f"layer {p['layer']}", f"t^{p['order']} ({p['directions']} query/key "
                                                 f"directions modulo the factor gauge)")
                         for p in a.predicted])
        lines.append("")
    status = ("exact" if a.spectrum is not None and a.spectrum.certified else
              "modular upper bounds, NOT certified" if a.spectrum is not None else "skipped")
    lines.append(f"contact spectrum along the model's own ray t -> (t Q, t K, V) ({status})")
    if a.spectrum is None:
        lines.append(f"  {a.spectrum_note}")
    else:
        s = a.spectrum
        kind = "certified" if s.certified else "NOT certified"
        lines += _table([(f"order {b.order} ({b.block})", f"multiplicity {b.multiplicity}")
                         for b in s.bands] +
                        [("exact kernel", str(s.kernel)), ("rank", f"{s.rank} ({kind})"),
                         ("bank", f"{s.bank_size} inputs, separating: {_yes(s.bank_separating)}")])
        if not s.certified:
            lines += [f"  NOT certified: {n}" for n in s.notes]
    lines.append("")
    lines += _variant_lines(a)
    if m.attention_only:
        lines += _dense_lines(a)
        lines += _matrix_free_lines(a)
    lines += certified_lines(a)
    lines += module_tier_lines(a)
    lines += glossary_lines()
    lines.append(f"work: {a.work['seconds']:.1f} s of the audit's tiers; budget "
                 f"{a.work['budget_seconds']:g} s, enforced (--budget)")
    return "\n".join(lines)


def _variant_lines(a: Audit) -> list[str]:
    """The variant analyses of a multi-head or causal model (labelled: no theorem covers them)."""
    v = a.variants
    if v is None:
        return []
    lines = [f"variant analyses: {v['label']} (theorem: none)"]
    if v["architecture"]:
        lines.append(f"  architecture: {v['architecture']}")
    s = v["spectrum"]
    if s is not None:
        lines.append(f"  contact spectrum along the model's own ray (certificate {s['certificate']}):")
        lines += _table([(f"order {b['order']} ({b['block']})", f"multiplicity {b['multiplicity']}")
                         for b in s["bands"]] +
                        [("declared symmetries (kernel)", f"{s['kernel']} {s['kernel_kinds']}"),
                         ("rank", f"{s['rank']}, undecided {s['undecided']}")], indent="    ")
        if not s["certified"]:
            lines.append(f"    {s['notes'][-1]}")
    d = v["dimension"]
    if d is not None:
        lines.append(f"  dimension at the model's weights: lower bound {d['lower_bound']} (rank mod p), upper "
                     f"bound {d['upper_bound']} (P - declared symmetries {d['symmetries']})"
                     + (": the bounds meet" if d["certified"] else
                        f": a gap of {d['upper_bound'] - d['lower_bound']}"))
        for p in d["head_permutations"]:
            lines.append(f"    layer {p['layer']}: head permutation group of order {p['group_order']} "
                         f"(classes {p['classes']}; generators verified: {_yes(p['verified'])})")
    if v["fiber"] is not None:
        lines.append(f"  fiber: {v['fiber']['fiber']}: {v['fiber']['sentence']}")
    lines += [f"  note: {n}" for n in v["notes"]]
    lines.append("")
    return lines


def _dense_lines(a: Audit) -> list[str]:
    sv, r = a.singular_values, a.ranks
    if sv["float64"] is None and sv["high_precision"] is None:
        return [f"bank Jacobian at t = 1, dense ({a.tiers.get('singular_values', 'skipped')})", ""]
    lines = [f"bank Jacobian at t = 1 (the model), {sv['bank_size']} seeded rational inputs "
             f"(numerical)"]
    sigma_high = sv["high_precision"] or []
    hp = (lambda v: "n/a" if v is None else str(v))  # noqa: E731
    lines += _table([
        ("exact rank", "unknown" if r["exact"] is None else f"{r['exact']} = {r['parameters']} - "
                                                            f"{r['parameters'] - r['exact']} (exact)"),
        ("float64 numerical rank", f"{hp(r['float64_numerical'])} (cutoff 1e-10 sigma_1, float64)"),
        (f"{sv['digits']}-digit numerical rank", f"{hp(r['high_precision_numerical'])} "
                                                 f"(same cutoff, {sv['digits']} digits)"),
        ("sigma_1", f"{sigma_high[0]:.6g} ({sv['digits']} digits)" if sigma_high else "n/a"),
        ("smallest positive sigma", f"{sigma_high[-1]:.6g} ({sv['digits']} digits)" if sigma_high else "n/a"),
        ("below 1e-10 sigma_1", f"{hp(r['below_cutoff'])} positive singular values "
                                f"({sv['digits']} digits)"),
        ("below eps sigma_1", f"{hp(r['below_float64_eps'])} ({sv['digits']} digits)"),
        ("float64 vs high precision", "n/a" if sv["float64_vs_high_precision_max_relative"] is None
         else f"max relative difference {sv['float64_vs_high_precision_max_relative']:.2g}"),
    ])
    if sv["high_precision_note"]:
        lines.append(f"  {sv['digits']}-digit singular values {sv['high_precision_note']}")
    else:
        lines.append(f"  positive singular values ({sv['digits']} digits, on the complement of the "
                     f"exact kernel):")
    for k in range(0, len(sigma_high), 8):
        lines.append("    " + " ".join(f"{x:.3e}" for x in sigma_high[k:k + 8]))
    lines.append("")
    return lines


def _matrix_free_lines(a: Audit) -> list[str]:
    mf = a.matrix_free
    lines = [f"bank Jacobian along the ray, matrix-free ({a.tiers.get('matrix_free', 'skipped')})"]
    if not mf:
        return lines + [""]
    lines.append(f"  bank: {mf['bank']}; {mf['parameters']} parameters, {mf['rows']} rows; "
                 f"{mf['k']} leading values, {mf['power']} power rounds")
    rows = [("t", "sigma_1 float64", "+-", "sigma_1 float32", "+-")]
    for r64, r32 in zip(mf["float64"], mf["float32"]):
        rows.append((f"{r64['t']:g}", _number(r64["top"][0] if r64["top"] else None, ".8g"),
                     _number(r64["top_errors"][0] if r64["top_errors"] else None, ".2g"),
                     _number(r32["top"][0] if r32["top"] else None, ".8g"),
                     _number(r32["top_errors"][0] if r32["top_errors"] else None, ".2g")))
    lines += _columns(rows)
    lines.append(f"  float32 vs float64 (leading values): max relative difference "
                 f"{_number(mf.get('float32_vs_float64'), '.2g')}")
    lines.append("  largest singular value of each layer's query/key block (float64 | float32):")
    rows = [("layer", *[f"t={r['t']:g}" for r in mf["float64"]], "slope", "predicted",
             "f64 digits", "f32 digits")]
    sens = {s["layer"]: s for s in a.sensitivity}
    for i in range(len(mf["float64"][0]["layers"])):
        s = sens.get(i + 1, {})
        rows.append((str(i + 1), *[f"{_number(r64['layers'][i]['value'], '.3e')} | "
                                   f"{_number(r32['layers'][i]['value'], '.3e')}"
                                   for r64, r32 in zip(mf["float64"], mf["float32"])],
                     _number(s.get("slope_t_half_to_quarter"), ".2f"),
                     _number(s.get("predicted_order"), "d"),
                     _number(s.get("float64_digits"), ".1f"), _number(s.get("float32_digits"), ".1f")))
    lines += _columns(rows)
    lines.append("  slope: log2 of the ratio at t = 1/2 and 1/4 (numerical); predicted: Prop. D.1 "
                 "order as t -> 0; digits: log10 of (value / sigma_1) / eps, the digits of that "
                 f"direction float64 (eps {FLOAT64_EPS:.2g}) and float32 (eps {FLOAT32_EPS:.2g}) "
                 f"keep at t = 1")
    lines.append("")
    return lines


def _pyplot():
    """``matplotlib.pyplot`` with the Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_report(a: Audit, path: Path, force: bool = False) -> None:
    """Write a figure (PNG, PDF or SVG through :func:`symattn.core.output.save_figure`): for a
    PyTorch model one panel per layer (each module's strength relative to sigma_1, float64 and
    float32); else the dense singular values at ``t = 1`` (float64 and high precision) or,
    beyond the dense tier, the matrix-free per-layer values along the ray."""
    plt = _pyplot()
    if a.modules and a.modules.get("float64") and any(x.get("relative") for x in a.modules["modules"]):
        fig = plot_layers(plt, a, path)
        fig.tight_layout()
        save_figure(fig, path, force, dpi=110)
        return
    sv = a.singular_values
    fig, ax = plt.subplots(figsize=(7, 4))
    if sv["float64"] is not None:
        sigma_high, sigma_float64 = sv["high_precision"] or [], sv["float64"]
        ax.semilogy(range(1, len(sigma_float64) + 1), [max(x, 1e-300) for x in sigma_float64], "x", color="tab:red",
                    label="float64 (all native directions)")
        ax.semilogy(range(1, len(sigma_high) + 1), sigma_high, "o", mfc="none", color="tab:blue",
                    label=f"{sv['digits']} digits (positive, exact kernel removed)")
        if sigma_high:
            ax.axhline(CUTOFF * sigma_high[0], ls="--", color="gray", label="cutoff 1e-10 sigma_1")
            ax.axhline(FLOAT64_EPS * sigma_high[0], ls=":", color="black", label="float64 eps sigma_1")
        if a.ranks["exact"] is not None:
            ax.axvline(a.ranks["exact"] + 0.5, color="tab:green",
                       label=f"exact rank {a.ranks['exact']}")
        ax.set_xlabel("index")
        ax.set_ylabel("singular value of the bank Jacobian at t = 1")
    elif a.matrix_free:
        mf = a.matrix_free
        ts = [r["t"] for r in mf["float64"]]
        for i in range(len(mf["float64"][0]["layers"])):
            for name, style in (("float64", "-o"), ("float32", "--x")):
                ys = [r["layers"][i]["value"] for r in mf[name]]
                ax.loglog(ts, [max(y or 0.0, 1e-300) for y in ys], style,
                          label=f"layer {i + 1} ({name})" if name == "float64" or i == 0 else None)
        s1 = mf["float64"][0]["top"][0] if mf["float64"][0]["top"] else 1.0
        ax.axhline(FLOAT32_EPS * s1, ls=":", color="gray", label="float32 eps sigma_1(1)")
        ax.set_xlabel("t (query/key scale along the model's own ray)")
        ax.set_ylabel("largest query/key singular value")
    else:  # neither numerical tier ran (the budget, or no PyTorch): each head's exact facts, always there
        labels = [f"L{f['layer']}H{f['head']}" for f in a.heads]
        ax.bar(range(len(labels)), [f["sym_score_frobenius"]["value"] for f in a.heads], color="tab:blue",
               label="||sym Q K^T||_F per head (certified): the distance to the collapse locus")
        ax.set_xticks(range(len(labels)), labels, rotation=90 if len(labels) > 12 else 0, fontsize=7)
        ax.set_ylabel("||sym Q K^T||_F")
        ax.set_xlabel("head (the numerical tiers did not run: " + (a.tiers.get("modules") or
                                                                  a.tiers.get("matrix_free") or "skipped")[:60] + ")")
    ax.set_title(f"symattn audit: {plot_text(Path(a.model.source).name)}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path, force, dpi=110)


def along(reports: Sequence[Audit]) -> list[dict]:
    """Per report (e.g. training checkpoints, in order), per layer: the certified distance to
    collapse ``||sym M_i||_F``, ``||M_i||_F``, the relative strength of the layer's query/key
    directions at ``t = 1`` and the digits float64/float32 keep of them (matrix-free)."""
    rows = []
    for a in reports:
        sens = {s["layer"]: s for s in a.sensitivity}
        layers = []
        for h in a.heads:
            s = sens.get(h["layer"], {})
            layers.append({"layer": h["layer"], "head": h["head"],
                           "sym_score_frobenius": h["sym_score_frobenius"]["value"],
                           "score_frobenius": h["score_frobenius"]["value"],
                           "relative_to_sigma_1": s.get("relative_to_sigma_1"),
                           "float64_digits": s.get("float64_digits"),
                           "float32_digits": s.get("float32_digits")})
        rows.append({"source": a.model.source, "layers": layers,
                     "fiber": None if a.fiber is None else a.fiber.fiber})
    return rows


def format_along(reports: Sequence[Audit]) -> str:
    """A side-by-side summary of several audits (first the full verdict of each)."""
    lines = ["symattn audit of several files, in order (each audited alone; --json gives every "
             "report)", ""]
    for a in reports:
        lines.append(f"{a.model.source}: {a.verdict}")
        lines.append("")
    lines.append("per head score Q K^T (||sym||_F certified: the distance to the skew matrices, "
                 "where every collapse locus lies) and query/key digits kept at t = 1 (numerical, "
                 "matrix-free)")
    rows = [("file", "layer", "head", "||QK^T||_F", "||sym||_F", "rel. sigma_1", "f64 digits",
             "f32 digits")]
    for row in along(reports):
        for h in row["layers"]:
            rows.append((Path(row["source"]).name, str(h["layer"]), str(h["head"]),
                         _number(h["score_frobenius"]), _number(h["sym_score_frobenius"]),
                         _number(h["relative_to_sigma_1"], ".3g"), _number(h["float64_digits"], ".1f"),
                         _number(h["float32_digits"], ".1f")))
    lines += _columns(rows)
    return "\n".join(lines)


def plot_along(reports: Sequence[Audit], path: Path, force: bool = False) -> None:
    """Two panels along the files: ``||sym M||_F`` per head (distance to collapse, certified) and
    the digits float32 keeps of each layer's query/key directions (numerical)."""
    plt = _pyplot()
    rows = along(reports)
    x = list(range(len(rows)))
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    for j, h in enumerate(rows[0]["layers"]):
        label = f"layer {h['layer']}" + (f" head {h['head']}" if len(rows[0]["layers"]) > _depth(rows)
                                         else "")
        left.semilogy(x, [max(r["layers"][j]["sym_score_frobenius"], 1e-300) for r in rows], "-o",
                      label=label)
        right.plot(x, [r["layers"][j]["float32_digits"] for r in rows], "-o", label=label)
    right.axhline(1, ls=":", color="gray", label="1 digit left")
    for ax in (left, right):
        ax.set_xticks(x, [plot_text(Path(r["source"]).stem) for r in rows], rotation=20, fontsize=7)
        ax.legend(fontsize=7)
    left.set_ylabel("||sym Q K^T||_F (distance to collapse)")
    right.set_ylabel("float32 digits of the layer's query/key directions")
    fig.suptitle("symattn audit along the files")
    fig.tight_layout()
    save_figure(fig, path, force, dpi=110)


def _depth(rows: list[dict]) -> int:
    """The number of layers of the first report of :func:`along` (one label per head beyond)."""
    return len({h["layer"] for h in rows[0]["layers"]})
