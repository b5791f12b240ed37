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

Rows are untrusted (a store is a file anyone can edit): :func:`checked_rows`
checks every field the atlas reads (types, ranges, nesting) and refuses a
malformed row with one line naming it; the paper's formulas are evaluated
with each normalizer built once, under one time budget (:data:`ATLAS_SECONDS`).
Every cell is escaped for its format (:func:`symattn.core.output.markdown`,
:func:`~symattn.core.output.html_text`, :func:`~symattn.core.output.csv_cell`:
no raw HTML from a store reaches the page, no spreadsheet formula runs), and
the files go through :func:`symattn.core.output.write_folder`: an existing
file that symattn did not write is refused without ``force``, and each file is
replaced atomically.

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

import contextlib
import csv
import io
from fractions import Fraction
from pathlib import Path
from typing import Any

from symattn.core.errors import SymattnError

__all__ = ["atlas_tables", "checked_rows", "format_bands", "write_atlas", "FORMATS", "ATLAS_SECONDS"]

#: The table formats :func:`write_atlas` can write.
FORMATS = ("md", "html", "csv")
#: Seconds the paper's formulas of one atlas may take together (symbolic normalizer data).
ATLAS_SECONDS = 60.0

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


# -- checking the rows of a store (untrusted) --------------------------------------------------

def _int(value, low: int = 0) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= 2**63


def _real(value) -> bool:
    import math

    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _ints(value, count: int | None, low: int = 1) -> bool:
    return (isinstance(value, list) and (count is None or len(value) == count)
            and all(_int(v, low) for v in value))


def _texts(value, count: int) -> bool:
    return isinstance(value, list) and len(value) == count and all(
        isinstance(v, str) and 0 < len(v) <= 1000 for v in value)


def _dicts(value, fields: dict) -> bool:
    return isinstance(value, list) and len(value) <= 100_000 and all(
        isinstance(v, dict) and all(check(v.get(k)) for k, check in fields.items()) for v in value)


_RESULTS = {  # the fields the atlas reads from an ok row's result, and their checks
    "spectrum": {"bands": lambda v: _dicts(v, {"layer": _int, "order": _int, "multiplicity": _int}),
                 "kernel": _int, "bank_size": _int},
    "jet": {"sharp_degree": _int},
    "dimension": {"parameters": _int, "dimension": _int},
    "bank": {"threshold": _int, "counting_bound": _int},
    "float32": {"rows": lambda v: _dicts(v, {
        "scale": lambda x: isinstance(x, str) and _scale(x) is not None, "exact_rank": _int,
        "numerical_rank": _int, "sigma_at_exact_rank": _real, "threshold": _real})},
}


def _scale(text: str) -> "Fraction | None":
    from symattn.sweep.spec import _is_rational

    return Fraction(text) if _is_rational(text) else None


def _row_problem(row: dict) -> "str | None":
    """What is wrong with one store row for the atlas, or None."""
    from symattn.core.limits import MAX_DEPTH

    a = row["architecture"]
    if not isinstance(a, dict):
        return f"its architecture is a {type(a).__name__}, not an object"
    depth = a.get("depth")
    if not (_int(depth, 1) and depth <= MAX_DEPTH):
        return "its architecture has no valid depth"
    if not (_ints(a.get("widths"), depth + 1) and _int(a.get("tokens"), 2)
            and (a.get("ranks") is None or _ints(a.get("ranks"), depth))
            and _texts(a.get("normalizers"), depth)):
        return "its architecture's widths, ranks, tokens or normalizers are malformed"
    if not _int(row["seed"]) or row["status"] not in ("ok", "failed", "timeout", "memory"):
        return "its seed or status is malformed"
    if row["analysis"] not in _RESULTS:
        return f"it names an unknown analysis {str(row['analysis'])[:40]!r}"
    if row["status"] != "ok":
        return None if isinstance(row["error"], str) else "its error is not text"
    res = row["result"]
    if not isinstance(res, dict):
        return f"its result is {'null' if res is None else 'a ' + type(res).__name__}, not an object"
    prov = res.get("provenance")
    inputs = prov.get("inputs") if isinstance(prov, dict) else None
    if not isinstance(inputs, dict) or not _texts(inputs.get("normalizer_specs"), depth):
        return "its result has no provenance with the normalizer specs"
    if row["analysis"] == "dimension" and a.get("ranks") is None:
        return "a dimension row needs its ranks"
    for key, check in _RESULTS[row["analysis"]].items():
        if not check(res.get(key)):
            return f"its result's {key!r} is missing or malformed"
    return None


def _require_store(store) -> None:
    from symattn.core.validate import require_type
    from symattn.sweep.store import Store

    require_type(store, "store", Store, "a symattn.sweep.store.Store")


def checked_rows(store) -> list[dict]:
    """The rows of ``store`` (its version), each checked for every field the atlas reads.

    Raises
    ------
    SymattnError
        One line naming the first malformed row (invalid or deeply nested JSON,
        an architecture that is not an object, a missing provenance, a null or
        text result, ...): the store was changed outside symattn.
    """
    _require_store(store)
    rows = list(store.rows())
    for row in rows:
        problem = _row_problem(row)
        if problem:
            raise SymattnError(f"the store {store.path} has a malformed {str(row['analysis'])[:20]} row "
                               f"(seed {str(row['seed'])[:20]}): {problem}; it was changed outside "
                               "symattn: restore a copy, or rerun the sweep into a new store")
    return rows


class _Architectures:
    """Architectures of rows, each normalizer spec built once (through the Normalizer API)."""

    def __init__(self) -> None:
        self.normalizers: dict[str, Any] = {}

    def __call__(self, row: dict):
        from symattn.model.architecture import Architecture
        from symattn.model.normalizer import normalizers

        a = row["architecture"]
        specs = row["result"]["provenance"]["inputs"]["normalizer_specs"]
        for spec in specs:
            if spec not in self.normalizers:
                self.normalizers[spec] = normalizers(spec, 1)[0]
        return Architecture(tuple(a["widths"]), tuple(a["ranks"] or [1] * a["depth"]), a["tokens"],
                            tuple(self.normalizers[s] for s in specs))


def format_bands(bands: list[dict], style: str = "text") -> str:
    r"""The bands of a stored spectrum as one cell: ``t^0x4 t^1x3`` (text) or LaTeX math.

    Examples
    --------
    >>> bands = [{"order": 0, "multiplicity": 4}, {"order": 5, "multiplicity": 3}]
    >>> format_bands(bands), format_bands(bands, "latex")
    ('t^0x4 t^5x3', 't^{0}\\,(\\times 4),\\; t^{5}\\,(\\times 3)')
    """
    if style == "latex":
        return r",\; ".join(rf"t^{{{b['order']}}}\,(\times {b['multiplicity']})" for b in bands)
    return " ".join(f"t^{b['order']}x{b['multiplicity']}" for b in bands)


def atlas_tables(store, rows: "list[dict] | None" = None, band_style: str = "text") -> dict[str, Table]:
    """One table ``(header, rows)`` per analysis present in ``store`` (see the module docstring);
    ``rows``: the store's :func:`checked_rows`, if already read; ``band_style="latex"`` writes the
    spectra's bands as LaTeX math (see :func:`format_bands`)."""
    rows = checked_rows(store) if rows is None else rows
    with _budget(store):
        return _tables(rows, _Architectures(), band_style)


@contextlib.contextmanager
def _budget(store):
    """The time budget of the paper's formulas of one atlas (:data:`ATLAS_SECONDS`; nested, the
    outer one holds), and one line naming the store if it runs out."""
    from symattn.core.limits import time_budget

    try:
        with time_budget(ATLAS_SECONDS, "evaluating the paper's formulas for the atlas"):
            yield
    except SymattnError as exc:
        raise SymattnError(f"the store {store.path}: {exc}") from None


def _tables(rows: list[dict], architecture: _Architectures, band_style: str = "text") -> dict[str, Table]:
    from symattn.theorems.formulas import divisibility_orders, hmk_formula, prop_c1_degree

    ok = [r for r in rows if r["status"] == "ok"]
    tables: dict[str, Table] = {}

    spectrum = [r for r in ok if r["analysis"] == "spectrum"]
    if spectrum:
        out = []
        for r in spectrum:
            res = r["result"]
            betas = divisibility_orders(architecture(r))
            bands = [b for b in res["bands"] if 1 <= b["layer"] <= len(betas)]
            orders = [b["order"] for b in bands]
            expected = [betas[b["layer"] - 1] for b in bands]
            out.append(_arch_cells(r) + [
                format_bands(res["bands"], band_style), res["kernel"],
                " ".join(map(str, betas)), _mark(orders, expected), res["bank_size"], _claim(res), r["kind"]])
        tables["spectrum"] = (_ARCH + ["bands (order x multiplicity)", "kernel", "beta_i (Prop. D.1)",
                                       "check", "bank", "claim", "kind"], out)

    jet = [r for r in ok if r["analysis"] == "jet"]
    if jet:
        out = []
        for r in jet:
            formula = prop_c1_degree(architecture(r))
            out.append(_arch_cells(r) + [r["result"]["sharp_degree"], formula,
                                         _mark(r["result"]["sharp_degree"], formula), _claim(r["result"]), r["kind"]])
        tables["jet"] = (_ARCH + ["sharp degree", "Prop. C.1", "check", "claim", "kind"], out)

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
                _mark(smallest["numerical_rank"], res["dimension"]) if f32 else "", _claim(res), r["kind"]])
        tables["dimension"] = (_ARCH + ["P", "dimension", "eq. (40)", "check", "float32 rank (s = 1)",
                                        "float32 rank (small s)", "small s", "float32 check", "claim", "kind"], out)

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


def _claim(result: dict) -> str:
    """What a stored result claims (:mod:`~symattn.analyses.genericity`); rows stored before the claims
    were recorded say so."""
    claim = result.get("generic")
    return claim if isinstance(claim, str) and claim else "at this point (stored without a claim)"


def _key(row: dict) -> tuple:
    a = row["architecture"]
    return (a["depth"], tuple(a["widths"]), tuple(a["ranks"] or ()), a["tokens"], tuple(a["normalizers"]),
            row["seed"])


def write_atlas(store, output: "str | Path", formats: "tuple[str, ...]" = FORMATS, plots: bool = True,
                force: bool = False) -> list[Path]:
    """Write the atlas of ``store`` into the folder ``output``; return the files written.

    ``atlas.md`` and ``atlas.html`` hold every table (and the plots), and
    ``<analysis>.csv`` one table each; all through
    :func:`symattn.core.output.write_folder` (an existing file symattn did not
    write is refused without ``force``; nothing is written then).
    """
    from symattn.core.output import check_folder, csv_cell, html_text, markdown, write_folder
    from symattn.core.validate import require_path

    _require_store(store)
    require_path(output, "output")
    if isinstance(formats, str) or not all(f in FORMATS for f in formats) or not formats:
        raise SymattnError(f"formats must be a tuple of {', '.join(FORMATS)}, got {formats!r:.60}")
    check_folder(output, "atlas folder")
    rows = checked_rows(store)
    with _budget(store):  # one budget for the tables and the plots
        architecture = _Architectures()
        tables = _tables(rows, architecture)
        files: dict[str, bytes] = _plots(rows, architecture) if plots else {}
    pictures = list(files)
    title = f"symattn atlas of {store.path.name} (symattn {store.version})"
    if "csv" in formats:
        for name, (header, body) in tables.items():
            text = io.StringIO(newline="")
            writer = csv.writer(text)
            writer.writerow([csv_cell(h) for h in header])
            writer.writerows([[csv_cell(c) for c in row] for row in body])
            files[f"{name}.csv"] = text.getvalue().encode()
    if "md" in formats:
        lines = [f"# {markdown(title)}", ""]
        for name, (header, body) in tables.items():
            lines += [f"## {markdown(name)}", "", "| " + " | ".join(markdown(h) for h in header) + " |",
                      "|" + "|".join("---" for _ in header) + "|"]
            lines += ["| " + " | ".join(markdown(c) for c in row) + " |" for row in body]
            lines.append("")
        lines += [f"![{Path(p).stem}]({p})" for p in pictures]
        files["atlas.md"] = ("\n".join(lines) + "\n").encode()
    if "html" in formats:
        parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html_text(title)}</title>"
                 "<style>td,th{border:1px solid #ccc;padding:2px 6px}table{border-collapse:collapse}"
                 ".differs{background:#fdd}</style></head><body>", f"<h1>{html_text(title)}</h1>"]
        for name, (header, body) in tables.items():
            parts.append(f"<h2>{html_text(name)}</h2><table><tr>"
                         + "".join(f"<th>{html_text(h)}</th>" for h in header) + "</tr>")
            for row in body:
                cls = " class='differs'" if "DIFFERS" in row else ""
                parts.append(f"<tr{cls}>" + "".join(f"<td>{html_text(c)}</td>" for c in row) + "</tr>")
            parts.append("</table>")
        parts += [f"<p><img src='{p}' alt='{Path(p).stem}'></p>" for p in pictures]
        files["atlas.html"] = ("\n".join(parts) + "</body></html>\n").encode()
    return write_folder(output, files, force, "atlas folder")


def _plots(rows: list[dict], architecture: _Architectures) -> dict[str, bytes]:
    """Jet degrees against depth (with Prop. C.1) and float32 ranks against the scale, as PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    from symattn.core.output import plot_text
    from symattn.theorems.formulas import prop_c1_degree

    files = {}
    jets = [r for r in rows if r["analysis"] == "jet" and r["status"] == "ok"]
    if jets:
        fig, ax = plt.subplots(figsize=(5, 3.5))
        seen = set()
        formulas = [prop_c1_degree(architecture(r)) for r in jets]
        for r, formula in zip(jets, formulas):
            phi = ",".join(dict.fromkeys(r["architecture"]["normalizers"]))
            D = r["architecture"]["depth"]
            ax.scatter(D, r["result"]["sharp_degree"], marker="o", s=40, facecolors="none",
                       edgecolors="C0", label="computed" if "c" not in seen else None)
            ax.scatter(D, formula, marker="x", color="C1", label="Prop. C.1" if "f" not in seen else None)
            ax.annotate(plot_text(phi[:40]), (D, r["result"]["sharp_degree"]), fontsize=6, xytext=(4, 0),
                        textcoords="offset points", annotation_clip=True)
            seen |= {"c", "f"}
        ax.set_xlabel("depth D")
        ax.set_ylabel("sharp jet degree")
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        files["jet.png"] = _finish(fig, ax, "zero-input jet degree: computed (exact) vs Prop. C.1")
    f32 = [r for r in rows if r["analysis"] == "float32" and r["status"] == "ok"]
    if f32:
        fig, ax = plt.subplots(figsize=(5, 3.5))
        for k, r in enumerate(f32):
            pts = [p for p in r["result"]["rows"] if p["exact_rank"] > 0]
            s = [float(_scale(p["scale"])) for p in pts]
            ranks = r["architecture"]["ranks"]
            label = (f"d={','.join(map(str, r['architecture']['widths']))}"
                     + (f" r={ranks[0]}" if ranks else ""))
            ax.plot(s, [p["numerical_rank"] / p["exact_rank"] for p in pts], "o-", color=f"C{k % 10}",
                    label=plot_text(label[:60]), lw=1)
        ax.axhline(1, color="k", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_xlabel("collapse scale s  (Q, K -> s Q, s K)")
        ax.set_ylabel("float32 rank / exact rank")
        files["float32.png"] = _finish(fig, ax, "where a float32 Jacobian rank misjudges the dimension")
    return files


def _finish(fig, ax, title: str) -> bytes:
    """Title, legend, the stamped PNG bytes; the figure is closed."""
    import matplotlib.pyplot as plt

    from symattn.core.output import figure_bytes

    ax.set_title(title)
    ax.legend(fontsize=6)
    fig.tight_layout()
    try:
        return figure_bytes(fig, "png", dpi=110)
    finally:
        plt.close(fig)
