"""The atlas of a sweep store: tables and plots, each computed value beside the paper's formula.

:func:`atlas_tables` reads the rows of one symattn version from a
:class:`~symattn.sweep.store.Store` and makes one table per analysis; where the paper
has a closed form, the formula is evaluated *here*, separately from the stored
computation, and a ``check`` column says ``=`` when they agree and
``DIFFERS`` when they do not (empty where no formula applies):

* ``spectrum``: the Smith orders of ``J(t)`` by layer (bands) beside
  ``beta_i = 2 k_i - 1 + 2 e_{i-1}`` (Prop. D.1, App. D.2);
* ``jet``: the sharp zero-input jet degree beside Prop. C.1's degree;
* ``dimension``: the certified neuromanifold dimension beside eq. (40) (equal
  widths and head widths ``a <= d``), and the float32 rank estimates of the
  ``float32`` rows of the same architecture;
* ``bank``: the least separating seeded bank beside the counting lower bound
  ``ceil(visible / (d n))`` (``=`` attained, ``>`` above it: a bound, not a formula);
* ``float32``: the float32 Jacobian rank near collapse (numerical) beside the
  exact rank at the same point.

A ``failures`` table lists the cases that failed or hit a limit, with their
error. :func:`write_atlas` writes the tables as Markdown, HTML and CSV and
draws two plots (matplotlib PNG): jet degrees against depth beside Prop. C.1,
and float32 rank against the collapse scale beside the exact rank.

Caveat: rows of other symattn versions are not read (pass ``version`` to read
them instead); the atlas says which version it shows.

Examples
--------
>>> import os, tempfile
>>> from symattn.sweep.store import Store
>>> from symattn.sweep.run import parse_spec, run_sweep
>>> store = Store(os.path.join(tempfile.mkdtemp(), "a.sqlite"))
>>> summary = run_sweep(parse_spec({"analyses": ["jet"], "grid": [{"depth": [1, 2], "width": 1}]}),
...                     store, workers=0)
>>> header, rows = atlas_tables(store)["jet"]
>>> [(r[header.index("sharp degree")], r[header.index("Prop. C.1")], r[header.index("check")])
...  for r in rows]
[(3, 3, '='), (7, 7, '=')]
"""

from __future__ import annotations

import csv
import html
from pathlib import Path
from typing import Any

__all__ = ["atlas_tables", "format_bands", "write_atlas", "FORMATS"]

#: The table formats :func:`write_atlas` can write.
FORMATS = ("md", "html", "csv")

Table = tuple[list[str], list[list[Any]]]


def _mark(computed, formula) -> str:
    if formula is None or computed is None:
        return ""
    return "=" if computed == formula else "DIFFERS"


def _bound_mark(computed, bound) -> str:
    """A lower bound, not a formula: ``=`` when attained, ``>`` above it, ``BELOW BOUND`` (a bug) under it."""
    return "=" if computed == bound else ">" if computed > bound else "BELOW BOUND"


def _arch_cells(row: dict) -> list[Any]:
    a = row["architecture"]
    ranks = ",".join(map(str, a["ranks"])) if a.get("ranks") else ""
    return [a["depth"], ",".join(map(str, a["widths"])), ranks, a["tokens"],
            ",".join(dict.fromkeys(a["normalizers"])), row["seed"]]


_ARCH = ["D", "widths", "ranks", "n", "phi", "seed"]


def _architecture(row: dict):
    """The architecture of a stored row, rebuilt through the Normalizer API."""
    from symattn.sweep.run import build_architecture

    specs = row["result"]["provenance"]["inputs"]["normalizer_specs"]
    return build_architecture({**row["architecture"], "normalizer_specs": specs})


def format_bands(bands: list[dict], style: str = "text") -> str:
    r"""The bands of a stored spectrum as one cell: ``t^0 x4, t^1 x3`` (text) or LaTeX math.

    Examples
    --------
    >>> bands = [{"order": 0, "multiplicity": 4}, {"order": 5, "multiplicity": 3}]
    >>> format_bands(bands), format_bands(bands, "latex")
    ('t^0 x4, t^5 x3', 't^{0}\\,(\\times 4),\\; t^{5}\\,(\\times 3)')
    """
    if style == "latex":
        return r",\; ".join(rf"t^{{{b['order']}}}\,(\times {b['multiplicity']})" for b in bands)
    return ", ".join(f"t^{b['order']} x{b['multiplicity']}" for b in bands)


def atlas_tables(store, band_style: str = "text") -> dict[str, Table]:
    """One table ``(header, rows)`` per analysis present in ``store`` (see the module docstring).

    ``band_style="latex"`` writes the spectra's bands as LaTeX math (see :func:`format_bands`).
    """
    from symattn.theorems.formulas import divisibility_orders, hmk_formula, prop_c1_degree

    rows = list(store.rows())
    ok = [r for r in rows if r["status"] == "ok"]
    tables: dict[str, Table] = {}

    spectrum = [r for r in ok if r["analysis"] == "spectrum"]
    if spectrum:
        out = []
        for r in spectrum:
            res = r["result"]
            betas = divisibility_orders(_architecture(r))
            bands = [b for b in res["bands"] if b["layer"] >= 1]
            orders = [b["order"] for b in bands]
            expected = [betas[b["layer"] - 1] for b in bands]
            out.append(_arch_cells(r) + [
                format_bands(res["bands"], band_style), res["kernel"],
                " ".join(map(str, betas)), _mark(orders, expected), res["bank_size"], r["kind"]])
        tables["spectrum"] = (_ARCH + ["bands (order x multiplicity)", "kernel", "beta_i (Prop. D.1)",
                                       "check", "bank", "kind"], out)

    jet = [r for r in ok if r["analysis"] == "jet"]
    if jet:
        out = []
        for r in jet:
            formula = prop_c1_degree(_architecture(r))
            out.append(_arch_cells(r) + [r["result"]["sharp_degree"], formula,
                                         _mark(r["result"]["sharp_degree"], formula), r["kind"]])
        tables["jet"] = (_ARCH + ["sharp degree", "Prop. C.1", "check", "kind"], out)

    float32 = {(_key(r)): r["result"]["rows"] for r in ok if r["analysis"] == "float32"}
    dimension = [r for r in ok if r["analysis"] == "dimension"]
    if dimension:
        out = []
        for r in dimension:
            a, res = r["architecture"], r["result"]
            equal = len(set(a["widths"])) == 1 and len(set(a["ranks"])) == 1 and a["ranks"][0] <= a["widths"][0]
            formula = hmk_formula(a["widths"][0], a["depth"], a["ranks"][0]) if equal else None
            f32 = float32.get(_key(r))
            smallest = f32[-1] if f32 else None
            out.append(_arch_cells(r) + [
                res["parameters"], res["dimension"], formula, _mark(res["dimension"], formula),
                f32[0]["numerical_rank"] if f32 else "", smallest["numerical_rank"] if f32 else "",
                f"s = {smallest['scale']}" if f32 else "",
                _mark(smallest["numerical_rank"], res["dimension"]) if f32 else "", r["kind"]])
        tables["dimension"] = (_ARCH + ["P", "dimension", "eq. (40)", "check", "float32 rank (s = 1)",
                                        "float32 rank (small s)", "small s", "float32 check", "kind"], out)

    bank = [r for r in ok if r["analysis"] == "bank"]
    if bank:
        tables["bank"] = (_ARCH + ["least separating bank", "counting lower bound", "check", "kind"],
                          [_arch_cells(r) + [r["result"]["threshold"], r["result"]["counting_bound"],
                                             _bound_mark(r["result"]["threshold"], r["result"]["counting_bound"]),
                                             r["kind"]] for r in bank])

    if float32:
        out = []
        for r in ok:
            if r["analysis"] != "float32":
                continue
            for p in r["result"]["rows"]:
                out.append(_arch_cells(r) + [p["scale"], p["exact_rank"], p["numerical_rank"],
                                             _mark(p["numerical_rank"], p["exact_rank"]),
                                             f"{p['sigma_at_exact_rank']:.3g}", f"{p['threshold']:.3g}"])
        tables["float32"] = (_ARCH + ["scale s", "exact rank", "float32 rank", "check",
                                      "sigma at exact rank", "float32 threshold"], out)

    failed = [r for r in rows if r["status"] != "ok"]
    if failed:
        tables["failures"] = (["analysis"] + _ARCH + ["status", "error"],
                              [[r["analysis"]] + _arch_cells(r) + [r["status"], r["error"]] for r in failed])
    return tables


def _key(row: dict) -> tuple:
    a = row["architecture"]
    return (a["depth"], tuple(a["widths"]), tuple(a["ranks"] or ()), a["tokens"], tuple(a["normalizers"]),
            row["seed"])


def write_atlas(store, output: "str | Path", formats: "tuple[str, ...]" = FORMATS, plots: bool = True
                ) -> list[Path]:
    """Write the atlas of ``store`` into the folder ``output``; return the files written.

    ``atlas.md`` and ``atlas.html`` hold every table (and the plots), and
    ``<analysis>.csv`` one table each.
    """
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    tables = atlas_tables(store)
    files: list[Path] = []
    pictures = _plots(store, out) if plots else []
    files += pictures
    title = f"symattn atlas of {store.path.name} (symattn {store.version})"
    if "csv" in formats:
        for name, (header, rows) in tables.items():
            path = out / f"{name}.csv"
            with path.open("w", newline="") as fh:
                writer = csv.writer(fh)
                writer.writerow(header)
                writer.writerows(rows)
            files.append(path)
    if "md" in formats:
        lines = [f"# {title}", ""]
        for name, (header, rows) in tables.items():
            lines += [f"## {name}", "", "| " + " | ".join(header) + " |",
                      "|" + "|".join("---" for _ in header) + "|"]
            lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
            lines.append("")
        lines += [f"![{p.stem}]({p.name})" for p in pictures]
        path = out / "atlas.md"
        path.write_text("\n".join(lines) + "\n")
        files.append(path)
    if "html" in formats:
        parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
                 "<style>td,th{border:1px solid #ccc;padding:2px 6px}table{border-collapse:collapse}"
                 ".differs{background:#fdd}</style></head><body>", f"<h1>{html.escape(title)}</h1>"]
        for name, (header, rows) in tables.items():
            parts.append(f"<h2>{html.escape(name)}</h2><table><tr>"
                         + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>")
            for row in rows:
                cls = " class='differs'" if "DIFFERS" in row else ""
                parts.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>")
            parts.append("</table>")
        parts += [f"<p><img src='{p.name}' alt='{p.stem}'></p>" for p in pictures]
        path = out / "atlas.html"
        path.write_text("\n".join(parts) + "</body></html>\n")
        files.append(path)
    return files


def _plots(store, out: Path) -> list[Path]:
    """Jet degrees against depth (with Prop. C.1) and float32 ranks against the scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    from symattn.theorems.formulas import prop_c1_degree

    files = []
    jets = [r for r in store.rows("jet") if r["status"] == "ok"]
    if jets:
        fig, ax = plt.subplots(figsize=(5, 3.5))
        seen = set()
        for r in jets:
            phi = ",".join(dict.fromkeys(r["architecture"]["normalizers"]))
            D = r["architecture"]["depth"]
            ax.scatter(D, r["result"]["sharp_degree"], marker="o", s=40, facecolors="none",
                       edgecolors="C0", label="computed" if "c" not in seen else None)
            ax.scatter(D, prop_c1_degree(_architecture(r)), marker="x", color="C1",
                       label="Prop. C.1" if "f" not in seen else None)
            ax.annotate(phi, (D, r["result"]["sharp_degree"]), fontsize=6, xytext=(4, 0),
                        textcoords="offset points")
            seen |= {"c", "f"}
        ax.set_xlabel("depth D")
        ax.set_ylabel("sharp jet degree")
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        files.append(_finish(fig, ax, "zero-input jet degree: computed (exact) vs Prop. C.1", out / "jet.png"))
    f32 = [r for r in store.rows("float32") if r["status"] == "ok"]
    if f32:
        from fractions import Fraction

        fig, ax = plt.subplots(figsize=(5, 3.5))
        for k, r in enumerate(f32):
            pts = r["result"]["rows"]
            s = [float(Fraction(p["scale"])) for p in pts]
            label = f"d={','.join(map(str, r['architecture']['widths']))} r={r['architecture']['ranks'][0]}"
            ax.plot(s, [p["numerical_rank"] / p["exact_rank"] for p in pts], "o-", color=f"C{k % 10}",
                    label=label, lw=1)
        ax.axhline(1, color="k", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_xlabel("collapse scale s  (Q, K -> s Q, s K)")
        ax.set_ylabel("float32 rank / exact rank")
        files.append(_finish(fig, ax, "where a float32 Jacobian rank misjudges the dimension",
                             out / "float32.png"))
    return files


def _finish(fig, ax, title: str, path: Path) -> Path:
    """Title, legend, save as PNG and close; return the path."""
    import matplotlib.pyplot as plt

    ax.set_title(title)
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
