"""Regenerate every table of ``docs/benchmarks.rst`` on the machine it runs on.

Run from the repository root with the project's virtual environment::

    python benchmarks/run.py --write        # measure, then write docs/benchmarks.rst and its plot
    python benchmarks/run.py                # measure and print the page
    python benchmarks/run.py --quick        # small cases only (a minute; for trying the script)

Every case is a fresh ``python -m symattn ...`` process (start-up included), its wall
clock from this script and its peak resident memory from ``/usr/bin/time -f %M``; the
paper's method (one ``t`` of App. F.2: a 120-digit mpmath forward-mode Jacobian of the
F.2 bank and the singular values from its Gram matrix) is measured in the same run, and
every ratio on the page is to that measurement. The cost model times
:func:`symattn.analyses.spectrum.native_spectrum` in child processes (compute only, peak
memory from ``getrusage``) along one parameter at a time and fits ``time ~ c x^a`` (``c
b^D`` for the depth); the profile shares group a cProfile of two spectra by where the
time goes. The load average before and after is printed on the page: on a shared
machine the figures are upper bounds. History of past figures:
``docs/benchmark_history.rst`` (not regenerated).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "benchmarks.rst"
PLOT = ROOT / "docs" / "benchmarks" / "cost_model.png"

#: The current tables: analysis -> [(case, command arguments, repeats)].
CASES = {
    "spectrum": [
        ("paper's F.2 size: D = 3, d = 4, r = 2, n = 4, 48 inputs",
         "spectrum --depth 3 --width 4 --rank 2 --tokens 4 --bank 48 --seed 21", 3),
        ("start-up only: ``symattn spectrum --help``", "spectrum --help", 3),
        ("F.2 size by the exact route (orders over Q: column groups)",
         "spectrum --depth 3 --width 4 --rank 2 --tokens 4 --bank 48 --seed 21 --method exact", 1),
        ("softmax D = 5, d = 2, r = 1, n = 2, bank auto", "spectrum --depth 5 --width 2 --rank 1 --tokens 2", 1),
        ("softmax D = 6, d = 2, r = 1, n = 2, bank auto", "spectrum --depth 6 --width 2 --rank 1 --tokens 2", 1),
        ("D = 3, d = 8, r = 4, n = 2, bank auto", "spectrum --depth 3 --width 8 --rank 4", 1),
        ("D = 2, d = 16, r = 4, n = 2, bank auto", "spectrum --depth 2 --width 16 --rank 4", 1),
    ],
    "jet": [
        ("softmax D = 4, d = 2", "jet --depth 4 --width 2", 1),
        ("softmax D = 5, d = 1", "jet --depth 5 --width 1", 1),
    ],
    "dimension": [
        ("widths 4, 4, 4, ranks 2, 2, n = 4", "dimension --depth 2 --widths 4,4,4 --ranks 2,2 --tokens 4", 1),
    ],
    "prove": [("proof t4 (quick cases)", "prove t4", 1)],
}
DEEP = [("softmax D = 7, d = 2, r = 1, n = 2, bank auto", "spectrum --depth 7 --width 2 --rank 1 --tokens 2", 1)]
QUICK = {"spectrum": CASES["spectrum"][:1] + [("softmax D = 4, d = 2, bank auto", "spectrum --depth 4 --width 2", 1)],
         "jet": [("softmax D = 3, d = 2", "jet --depth 3 --width 2", 1)]}

#: The cost model: parameter -> (values, keyword arguments of Architecture.uniform and the bank).
SWEEPS = {
    "D": ([2, 3, 4, 5], lambda v: dict(depth=v, width=2, rank=1, tokens=2, bank="auto")),
    "d": ([2, 3, 4, 6], lambda v: dict(depth=2, width=v, rank=1, tokens=2, bank="auto")),
    "r": ([1, 2, 3, 4], lambda v: dict(depth=2, width=4, rank=v, tokens=2, bank="auto")),
    "n": ([2, 3, 4, 6], lambda v: dict(depth=2, width=2, rank=1, tokens=v, bank="auto")),
    "bank": ([8, 16, 32, 64], lambda v: dict(depth=3, width=2, rank=1, tokens=2, bank=v)),
}
QUICK_SWEEPS = {"D": [2, 3], "d": [2, 3]}

_CHILD = """
import json, resource, sys, time
from symattn.model.architecture import Architecture
from symattn.analyses.spectrum import native_spectrum
kw = json.loads(sys.argv[1])
arch = Architecture.uniform(kw["depth"], kw["width"], kw["rank"], kw["tokens"], "exp")
t0 = time.perf_counter()
s = native_spectrum(arch, bank=kw["bank"])
print(json.dumps({"seconds": time.perf_counter() - t0, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "certificate": s.certificate, "bank": s.bank_size, "order": s.order}))
"""

_PROFILE = """
import cProfile, json, pstats, sys
from symattn.model.architecture import Architecture
from symattn.analyses.spectrum import native_spectrum
kw = json.loads(sys.argv[1])
arch = Architecture.uniform(kw["depth"], kw["width"], kw["rank"], kw["tokens"], "exp")
p = cProfile.Profile()
p.runcall(native_spectrum, arch, bank=kw["bank"], seed=kw.get("seed", 0))
rows = []
for (f, _, name), (_, _, tt, ct, callers) in pstats.Stats(p).stats.items():
    rows.append([f, name, ct, {c[2]: v[3] for c, v in callers.items()}])
print(json.dumps(rows))
"""

#: Where the time goes: (label, function, caller or None for every caller); cumulative wall time
#: (waiting for the proof's forked workers included) as a share of native_spectrum's.
PARTS = [
    ("Jacobian mod the main prime (with its check)", "bank_jacobian", "jacobian"),
    ("Jacobian checks of a growing bank (fast series, apart)", "check_inputs", None),
    ("Smith forms mod p", "prefix_smith_orders", None),
    ("divided frame E(0)", "divided_frame", None),
    ("exact kernel (gauges)", "path_split", None),
    ("column proof: majorant bounds (orders below t^48)", "jacobian_height_bounds", "prove_column_orders"),
    ("column proof: columns over Q (orders from t^48)", "_vanish_over_q", "prove_column_orders"),
    ("column proof: the primes (orders below t^48)", "prove_column_orders", None),
]


def _env() -> dict:
    """The children's environment: bytecode cached (as an installed package has it; compiled once by
    :func:`main`), one BLAS thread."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def command(arguments: str) -> dict:
    """One fresh ``python -m symattn ARGS`` process: seconds, peak GiB and its JSON (if any)."""
    json_flag = [] if arguments.startswith("prove") else ["--json"]
    t0 = time.perf_counter()
    run = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "symattn", *arguments.split(),
                          *json_flag], capture_output=True, text=True, env=_env(), cwd=ROOT)
    seconds = time.perf_counter() - t0
    kb = int(run.stderr.strip().splitlines()[-1])
    try:
        out = json.loads(run.stdout)
    except json.JSONDecodeError:
        out = {}
    kind = out.get("certificate") or out.get("method") or ("PASS" if run.returncode == 0 else f"exit {run.returncode}")
    return {"seconds": seconds, "gib": kb / 2**20, "kind": kind, "exit": run.returncode, "order": out.get("order"),
            "bank": out.get("bank_size"), "phases": phases(run.stderr, out.get("seconds"))}


#: The progress lines that open each phase of a spectrum (``symattn spectrum``'s stderr).
_PHASE_STARTS = (("checks", "checking the Jacobian on inputs"), ("smith", "Smith forms of"),
                 ("proof", "proving the column orders"))


def phases(stderr: str, total: float | None) -> dict | None:
    r"""The phases of a spectrum from its progress lines (``[   t s] message``, seconds since the
    computation began) and its total (the JSON's ``seconds``): the Jacobians mod p of the growing
    bank (``jacobians``), their checks on a second code path (``checks``), the Smith forms and
    the kernel (``smith``), the column proof's orders computed over Q (``over_q``: order -> seconds,
    from their lines) and the rest of the proof (``primes``: majorant bounds and the primes of
    the short orders). None when a phase's line is missing (another route).

    >>> log = ["[   0.02 s] bank 6: Jacobian", "[   2.91 s] checking the Jacobian on inputs 0, 6",
    ...        "[   6.85 s] Smith forms of the first 4, 7", "[   7.53 s] proving the column orders",
    ...        "[   7.92 s] order t^53: 3 columns vanish below it over Q: exact rationals, 19 inputs, 0.4 s"]
    >>> p = phases("\n".join(log), 8.0)
    >>> [round(p[k], 2) for k in ("jacobians", "checks", "smith", "primes")], p["over_q"]
    ([2.91, 3.94, 0.68, 0.07], {53: 0.4})
    """
    import re

    if total is None:
        return None
    at = {}
    over_q = {}
    for line in stderr.splitlines():
        m = re.match(r"\[\s*([0-9.]+) s\] (.*)", line)
        if not m:
            continue
        t, msg = float(m.group(1)), m.group(2)
        for name, start in _PHASE_STARTS:
            if msg.startswith(start) and name not in at:
                at[name] = t
        q = re.match(r"order t\^(\d+): .* exact rationals, \d+ inputs, ([0-9.]+) s", msg)
        if q:
            over_q[int(q.group(1))] = float(q.group(2))
    if set(at) != {name for name, _ in _PHASE_STARTS}:
        return None
    return {"jacobians": at["checks"], "checks": at["smith"] - at["checks"], "smith": at["proof"] - at["smith"],
            "over_q": over_q, "primes": total - at["proof"] - sum(over_q.values())}


def paper_method_seconds() -> float:
    """One t of the paper's F.2 method, in a child process (bench_spectrum.paper_method)."""
    code = ("import time, sys; sys.path.insert(0, 'benchmarks'); from bench_spectrum import paper_method; "
            "from symattn.model.architecture import Architecture; from symattn.model.parameters import random_bank; "
            "a = Architecture.uniform(3, 4, 2, 4, 'exp'); t0 = time.perf_counter(); "
            "paper_method(a, random_bank(a, 48, seed=21), 0.1); print(time.perf_counter() - t0)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), cwd=ROOT,
                         check=True)
    return float(run.stdout.strip().splitlines()[-1])


def child(kw: dict) -> dict:
    run = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(kw)], capture_output=True, text=True,
                         env=_env(), cwd=ROOT, check=True)
    out = json.loads(run.stdout.strip().splitlines()[-1])
    out["gib"] = out.pop("rss") / 2**20
    return out


def fit(xs: list[float], ys: list[float], exponential: bool = False) -> float:
    """Least-squares slope of ``log y`` against ``log x`` (``x`` itself when ``exponential``:
    then the base ``b`` of ``y ~ c b^x`` is returned).

    >>> round(fit([1, 2, 4], [3, 12, 48]), 6), round(fit([1, 2, 3], [2, 6, 18], exponential=True), 6)
    (2.0, 3.0)
    """
    X = [x if exponential else math.log(x) for x in xs]
    Y = [math.log(y) for y in ys]
    mx, my = sum(X) / len(X), sum(Y) / len(Y)
    slope = sum((a - mx) * (b - my) for a, b in zip(X, Y)) / sum((a - mx) ** 2 for a in X)
    return math.exp(slope) if exponential else slope


def profile_shares(kw: dict) -> list[tuple[str, float]]:
    run = subprocess.run([sys.executable, "-c", _PROFILE, json.dumps(kw)], capture_output=True, text=True,
                         env=_env(), cwd=ROOT, check=True)
    rows = json.loads(run.stdout.strip().splitlines()[-1])

    def cumulative(name: str, caller: str | None = None) -> float:
        return sum((ct if caller is None else callers.get(caller, 0.0)) for _, n, ct, callers in rows if n == name)

    total = cumulative("native_spectrum") or 1.0
    shares = [(label, cumulative(name, caller)) for label, name, caller in PARTS]
    # the primes: the proof less its bounds and its columns over Q
    shares[-1] = (shares[-1][0], shares[-1][1] - shares[-2][1] - shares[-3][1])
    shares.append(("other", total - sum(t for _, t in shares)))
    return [(label, 100 * t / total) for label, t in shares]


def _table(header: list[str], rows: list[list[str]], widths: str) -> list[str]:
    out = [".. list-table::", "   :header-rows: 1", f"   :widths: {widths}", ""]
    for row in [header] + rows:
        out.append(f"   * - {row[0]}")
        out += [f"     - {cell}" for cell in row[1:]]
    return out + [""]


def plot(sweeps: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(sweeps), figsize=(3 * len(sweeps), 5.5), squeeze=False)
    for j, (name, points) in enumerate(sweeps.items()):
        xs = [p[0] for p in points]
        for i, (key, label) in enumerate((("seconds", "seconds"), ("gib", "peak GiB"))):
            ax = axes[i][j]
            ax.plot(xs, [p[1][key] for p in points], "o-")
            ax.set_yscale("log")
            if name != "D":
                ax.set_xscale("log")
            ax.set_xlabel(name)
            ax.set_ylabel(label)
    fig.suptitle("symattn spectrum: measured cost along one parameter at a time")
    fig.tight_layout()
    PLOT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(PLOT, dpi=80)


def _profile_section(quick: bool) -> list[str]:
    lines = ["Where the time goes", "-------------------", "",
             "cProfile of ``native_spectrum`` in a child process: the cumulative wall time of its steps "
             "(waiting for the column proof's forked workers included) as percentages of the whole.", ""]
    prof_cases = [("F.2 (48 inputs)", dict(depth=3, width=4, rank=2, tokens=4, bank=48, seed=21))]
    if not quick:
        prof_cases.append(("softmax D = 5, d = 2", dict(depth=5, width=2, rank=1, tokens=2, bank="auto")))
    shares = [profile_shares(kw) for _, kw in prof_cases]
    rows = [[label] + [f"{s[i][1]:.0f} %" for s in shares] for i, (label, _) in enumerate(shares[0])]
    return lines + _table(["part"] + [label for label, _ in prof_cases], rows, "40" + " 30" * len(prof_cases))


def _depth_scaling(best: dict) -> list[str]:
    """The softmax D = 5, 6, 7 rows of this page split into their phases (:func:`phases`), each
    phase's growth from one depth to the next beside the factor ``(N_D / N_(D-1))^2`` of a cost
    quadratic in the truncation order ``N``, and D = 7 against the quadratic extrapolation of the
    whole run from D = 6 (issue 26, item 3)."""
    runs = {D: next((r for label, r in best.items() if label.startswith(f"softmax D = {D},")), None) for D in (5, 6, 7)}
    runs = {D: r for D, r in runs.items() if r is not None and r["order"] and r.get("phases")}
    if len(runs) < 2:
        return []

    def parts(r: dict) -> list[float]:
        ph = r["phases"]
        modular = ph["jacobians"] + ph["checks"] + ph["smith"]
        return [r["seconds"], modular, ph["jacobians"], ph["checks"], ph["smith"], sum(ph["over_q"].values()),
                ph["primes"]]

    names = ["whole run (fresh process)", "**the modular part** (the next three)",
             "Jacobians mod p (growing bank, fast series)",
             "their checks (second code path, NumPy series)", "Smith forms mod p and kernel",
             "column proof: orders from t^48 over Q", "column proof: bounds and primes (short orders)"]
    Ds = sorted(runs)
    header = ["phase"] + [f"D = {D} (N = {runs[D]['order']}, bank {runs[D]['bank']})" for D in Ds]
    header += [f"D = {a} -> {b}: factor (quadratic: {(runs[b]['order'] / runs[a]['order']) ** 2:.1f})"
               for a, b in zip(Ds, Ds[1:])]
    rows = []
    for i, name in enumerate(names):
        row = [name] + [f"{parts(runs[D])[i]:.1f} s" for D in Ds]
        row += [f"{parts(runs[b])[i] / parts(runs[a])[i]:.1f}x" if parts(runs[a])[i] > 0.05 else "-"
                for a, b in zip(Ds, Ds[1:])]
        rows.append(row)
    over_q = ["  of which " + ", ".join(f"t^{b}: {sec:.1f} s" for b, sec in sorted(runs[D]["phases"]["over_q"].items()))
              for D in Ds]
    lines = ["Where the depth goes", "^^^^^^^^^^^^^^^^^^^^", "",
             "The softmax rows above (d = 2, r = 1, n = 2, bank auto) split by their progress lines: the "
             "modular part (the Jacobians of the growing bank in the fast ``nmod_poly`` series, their checks "
             "against the expansion ``F(theta + delta v)`` in the NumPy series, the Smith forms) and the "
             "column proof (the orders from ``t^48`` computed over Q in exact rationals, one forked task "
             "per input; the shorter ones modulo primes). Wall clock on two cores; each factor is the "
             "phase's time at the larger depth over its time at the smaller one.", ""]
    lines += _table(header, rows, " ".join(["30"] + ["16"] * (len(header) - 1)))
    lines += ["Columns over Q by order: " + "; ".join(f"D = {D}: {text[len('  of which '):]}"
                                                    for D, text in zip(Ds, over_q)) + ".", ""]
    if 6 in runs and 7 in runs:
        t6, t7, n6, n7 = runs[6]["seconds"], runs[7]["seconds"], runs[6]["order"], runs[7]["order"]
        quadratic = t6 * (n7 / n6) ** 2
        lines += [f"Depth 6 to 7: the truncation order grows from {n6} to {n7}. A cost quadratic in the "
                  f"truncation order from D = 6 ({t6:.1f} s) would give {quadratic:.0f} s at D = 7; it took "
                  f"{t7:.1f} s, **{t7 / quadratic:.2f}** times that.", ""]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write docs/benchmarks.rst and its plot")
    ap.add_argument("--quick", action="store_true", help="small cases only")
    ap.add_argument("--deep", action="store_true", help="also softmax D = 7 (minutes)")
    ap.add_argument("--profile-only", action="store_true", help="redo only the profile section of the page")
    args = ap.parse_args(argv)
    if args.profile_only:
        head = PAGE.read_text().split("Where the time goes")[0]
        PAGE.write_text(head + "\n".join(_profile_section(args.quick)))
        return 0
    import compileall

    compileall.compile_dir(str(ROOT / "symattn"), quiet=1)  # start-up as installed: bytecode cached
    cases = QUICK if args.quick else {**CASES, "spectrum": CASES["spectrum"] + (DEEP if args.deep else [])}
    load0 = os.getloadavg()
    start = datetime.datetime.now(datetime.timezone.utc)
    paper = paper_method_seconds()
    print(f"paper's method, one t: {paper:.1f} s", flush=True)
    lines = ["Benchmarks", "==========", "",
             ".. This page is written by ``python benchmarks/run.py --write``; do not edit it by hand.", "",
             f"Measured by ``python benchmarks/run.py`` on {start:%Y-%m-%d %H:%M} UTC: {os.cpu_count()} cores, "
             f"Python {platform.python_version()}, load average {load0[0]:.1f} at the start and "
             "{load1} at the end (other jobs on the machine make every figure an upper bound). "
             f"One t of the paper's method (App. F.2: a 120-digit mpmath forward-mode Jacobian of the "
             f"F.2 bank, singular values from its Gram matrix) took **{paper:.1f} s** in this run; "
             "every ratio below is that time divided by the case's. Each case is a fresh process "
             "(start-up included, the package's bytecode compiled beforehand as ``pip install`` leaves it); "
             "memory is its peak resident set. Past figures: :doc:`benchmark_history`.",
             ""]
    for analysis, rows in cases.items():
        lines += [f"``symattn {analysis}``", "-" * (len(analysis) + 12), ""]
        body, bests = [], {}
        for label, arguments, repeat in rows:
            runs = [command(arguments) for _ in range(repeat)]
            best = bests[label] = min(runs, key=lambda r: r["seconds"])
            print(f"{label}: {best['seconds']:.2f} s, {best['gib']:.2f} GiB, {best['kind']}", flush=True)
            body.append([label, f"{best['seconds']:.2f} s" + (f" (best of {repeat})" if repeat > 1 else ""),
                         f"{best['gib']:.2f} GiB", str(best["kind"]), f"{paper / best['seconds']:.2f}x",
                         f"``symattn {arguments}``"])
        lines += _table(["case", "time", "memory", "certificate or method", "paper / case", "command"], body,
                        "26 12 10 12 10 30")
        if analysis == "spectrum" and args.deep:
            lines += _depth_scaling(bests)
    sweeps: dict = {}
    fits = []
    for name, (values, kwargs) in SWEEPS.items():
        if args.quick and name not in QUICK_SWEEPS:
            continue
        values = QUICK_SWEEPS[name] if args.quick else values
        points = [(v, child(kwargs(v))) for v in values]
        print(f"cost model {name}: {[(v, round(p['seconds'], 2), round(p['gib'], 2)) for v, p in points]}", flush=True)
        sweeps[name] = points
        xs = [float(v) for v in values]
        exp_ = name == "D"
        a_t = fit(xs, [p["seconds"] for _, p in points], exp_)
        a_m = fit(xs, [p["gib"] for _, p in points], exp_)
        base = kwargs(values[0])
        key = {"D": "depth", "d": "width", "r": "rank", "n": "tokens", "bank": "bank"}[name]
        fixed = ", ".join(f"{k} = {v}" for k, v in base.items() if k != key)
        form = f"c {a_t:.2f}^D" if exp_ else f"c {name}^{a_t:.2f}"
        fits.append([name, ", ".join(str(v) for v in values), fixed,
                     ", ".join(f"{p['seconds']:.2f}" for _, p in points), form,
                     f"{a_m:.2f}" + ("^D" if exp_ else ""), ", ".join(f"{p['gib']:.2f}" for _, p in points)])
    lines += ["Cost model", "----------", "",
              "``native_spectrum`` (softmax, seeded path and bank, certificate as in the tables) timed in a "
              "child process along one parameter at a time, the others fixed; compute time only (no "
              "start-up), peak resident memory of the child (about 0.1 GiB of it is the interpreter and "
              "its imports, so memory exponents are small until the series dominate). Fitted by least "
              "squares on the logarithms: ``time ~ c x^a`` (``c b^D`` along the depth, whose truncation "
              "order grows like ``3^D``).", ""]
    lines += _table(["parameter", "values", "fixed", "seconds", "time fit", "memory fit (exponent)", "GiB"],
                    fits, "8 12 22 18 12 12 16")
    if sweeps:
        plot(sweeps)
        lines += [".. image:: benchmarks/cost_model.png", "   :width: 100%",
                  "   :alt: measured time and memory of symattn spectrum against D, d, r, n and the bank size", ""]
    lines += _profile_section(args.quick)
    load1 = os.getloadavg()
    text = "\n".join(lines).replace("{load1}", f"{load1[0]:.1f}") + "\n"
    if args.write:
        from bench_spectrum import keep_depth_section  # the paper's stack by depth: bench_spectrum.py --depths

        PAGE.write_text(keep_depth_section(PAGE.read_text() if PAGE.exists() else "", text))
        print(f"wrote {PAGE.relative_to(ROOT)} and {PLOT.relative_to(ROOT)}")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
