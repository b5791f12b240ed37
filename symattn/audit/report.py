"""The audit's report: the plain-language verdict, the text tables and the plot.

Nothing here computes a number: everything comes from the :class:`~symattn.audit.analysis.Audit`
built by :func:`symattn.audit.analysis.audit`.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import SymattnError
from ..fibers import Fiber
from ..spectrum import Spectrum
from .analysis import CUTOFF, FLOAT64_EPS, Audit
from .importers import ImportedModel

__all__ = ["verdict", "format_report", "plot_report"]


def _layers(xs: Sequence[int]) -> str:
    if not xs:
        return ""
    if len(xs) > 2 and list(xs) == list(range(xs[0], xs[-1] + 1)):
        return f"M_{xs[0]}..M_{xs[-1]}"
    return ", ".join(f"M_{i}" for i in xs)


def verdict(model: ImportedModel, fib: Fiber, kernel: dict, spectrum: Spectrum | None,
             note: str | None, ranks: dict, hypotheses: list[dict]) -> str:
    arch = model.arch
    D = arch.depth
    checked = "verified exactly" if fib.verified else "not verified"
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
    parts = [f"{first} ({fib.theorem}, {checked})."]
    gauge = (f"It cannot determine the query/key factorization ({kernel['factor_gauges']} "
             f"directions Q_i B, K_i B^-T)")
    if kernel["interface"]:
        gauge += f" or the intermediate value maps ({kernel['interface']} directions)"
    gauge += f": {kernel['rank']} native directions are exact zeros of the Jacobian"
    if model.torch_layout:
        extra = sum(d * d for d in arch.widths[1:])
        gauge += (f"; in PyTorch's own parameters, the split of each V_i = W_o W_v into out_proj "
                  f"and value projection adds {extra} more (when W_v is invertible)")
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
    else:
        why = note or ("the high-precision singular values are not resolved"
                       if ranks["exact"] is not None else "the spectrum is not certified")
        parts.append(f"The exact rank is not established here ({why}); float64 sees rank "
                     f"{ranks['float64_numerical']} of at most {ranks['parameters'] - ranks['kernel']} "
                     f"(parameters minus the exact gauges).")
    if spectrum is not None and not spectrum.certified:
        failed = [h["name"] for h in hypotheses if h["theorem"] == "4" and h["holds"] is False]
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
    return " ".join(parts)


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
    width = max(len(k) for k, _ in rows)
    return [f"{indent}{k:<{width}}  {v}" for k, v in rows]


def format_report(a: Audit) -> str:
    m, arch = a.model, a.model.arch
    lines = [f"symattn audit of {m.source} ({m.kind})"]
    lines += _table([
        ("widths d_0..d_D", ", ".join(map(str, arch.widths))),
        ("ranks r_i", ", ".join(map(str, arch.ranks))),
        ("tokens n", str(arch.tokens)),
        ("normalizers", ", ".join(str(phi.expr) for phi in arch.normalizers)),
        ("native parameters", str(arch.native_size)),
    ])
    lines += [f"  note: {n}" for n in m.notes]
    lines.append("")
    lines.append("effective tuple (L, M_1..M_D) of eq. (3) (exact; --json gives every p/q)")
    for name, mat in a.effective.as_dict().items():
        lines += _matrix_lines(name, mat)
    lines.append("")
    lines.append("hypotheses of Theorems 1-4 (exact)")
    lines += _table([(f"Thm {h['theorem']}: {h['name']}",
                      _yes(h["holds"]) + (f"   ({h['detail']})" if h["detail"] else ""))
                     for h in a.hypotheses])
    lines.append("")
    fib = a.fiber
    lines.append(f"effective fiber (exact; {'verified' if fib.verified else 'NOT verified'} by "
                 f"exact series and symbolic identities)")
    lines += _table([("fiber", fib.fiber), ("statement", fib.theorem),
                     ("free layers", ", ".join(map(str, fib.free_layers)) or "none"),
                     ("sign-flip layers", ", ".join(map(str, fib.sign_flip_layers)) or "none")])
    lines.append(f"  {fib.sentence}")
    lines.append("")
    lines.append("distances to the collapse loci and degenerate ranks (numerical, float64)")
    lines.append(f"  ||L||_F = {a.distances['L_frobenius']:.4g}")
    head = ("layer", "||M||_F", "||sym M||_F", "to Z_i", "smin Q", "smin K", "smin V")
    rows = [head] + [(str(d["layer"]), f"{d['M_frobenius']:.4g}", f"{d['sym_M_frobenius']:.4g}",
                      "n/a" if d["distance_to_collapse"] is None else f"{d['distance_to_collapse']:.4g}",
                      f"{d['sigma_min_Q']:.4g}", f"{d['sigma_min_K']:.4g}", f"{d['sigma_min_V']:.4g}")
                     for d in a.distances["layers"]]
    widths = [max(len(r[j]) for r in rows) for j in range(len(head))]
    lines += ["  " + "  ".join(f"{c:>{w}}" for c, w in zip(r, widths)) for r in rows]
    lines.append("")
    status = ("exact" if a.spectrum is None or a.spectrum.certified
              else "modular upper bounds, NOT certified")
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
    sv, r = a.singular_values, a.ranks
    lines.append(f"bank Jacobian at t = 1 (the model), {sv['bank_size']} seeded rational inputs "
                 f"(numerical)")
    shp = sv["high_precision"] or []
    hp = (lambda v: "n/a" if v is None else str(v))  # noqa: E731
    lines += _table([
        ("exact rank", "unknown" if r["exact"] is None else f"{r['exact']} = {r['parameters']} - "
                                                            f"{r['parameters'] - r['exact']} (exact)"),
        ("float64 numerical rank", f"{r['float64_numerical']} (cutoff 1e-10 sigma_1, float64)"),
        (f"{sv['digits']}-digit numerical rank", f"{hp(r['high_precision_numerical'])} "
                                                 f"(same cutoff, {sv['digits']} digits)"),
        ("sigma_1", f"{shp[0]:.6g} ({sv['digits']} digits)" if shp else "n/a"),
        ("smallest positive sigma", f"{shp[-1]:.6g} ({sv['digits']} digits)" if shp else "n/a"),
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
    for k in range(0, len(shp), 8):
        lines.append("    " + " ".join(f"{x:.3e}" for x in shp[k:k + 8]))
    lines.append("")
    lines.append("verdict")
    lines.append("  " + a.verdict)
    return "\n".join(lines)


def plot_report(a: Audit, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if path.suffix.lower() != ".png":
        raise SymattnError(f"--plot needs a .png file name, got {path}")
    if not path.parent.exists():
        raise SymattnError(f"cannot write {path}: no directory {path.parent}")
    sv = a.singular_values
    shp, s64 = sv["high_precision"] or [], sv["float64"]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.semilogy(range(1, len(s64) + 1), [max(x, 1e-300) for x in s64], "x", color="tab:red",
                label="float64 (all native directions)")
    ax.semilogy(range(1, len(shp) + 1), shp, "o", mfc="none", color="tab:blue",
                label=f"{sv['digits']} digits (positive, exact kernel removed)")
    if shp:
        ax.axhline(CUTOFF * shp[0], ls="--", color="gray", label="cutoff 1e-10 sigma_1")
        ax.axhline(FLOAT64_EPS * shp[0], ls=":", color="black", label="float64 eps sigma_1")
    if a.ranks["exact"] is not None:
        ax.axvline(a.ranks["exact"] + 0.5, color="tab:green", label=f"exact rank {a.ranks['exact']}")
    ax.set_xlabel("index")
    ax.set_ylabel("singular value of the bank Jacobian at t = 1")
    ax.set_title(f"symattn audit: {Path(a.model.source).name}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=110)
    except OSError as exc:
        raise SymattnError(f"cannot write {path}: {exc}") from None
    finally:
        plt.close(fig)
