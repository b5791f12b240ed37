"""The same cases in several trees of symattn, in one run: the before/after table of issue 22.

Run from the repository root with the project's virtual environment::

    python benchmarks/before_after.py --tree before=/path/to/old --tree after=. --write

Each ``--tree NAME=PATH`` is a source tree of symattn (a checkout or ``git archive``
of a commit; its own dependencies need not be installed beyond this environment's).
Every case runs as a fresh ``python -m symattn ... --json`` process in each tree in
turn (``PYTHONPATH`` and the working directory are the tree), the trees alternating
case by case so that the load of a shared machine falls on all of them alike; a case's
time is the best of its repeats (start-up included). The answer of each run (the
bands, kernel, rank and certificate of a spectrum, the degree of a jet, the bounds of
a dimension) is compared with the first tree's: ``same`` or ``differs``. The line
count of each tree's package (every ``symattn/**/*.py``) is measured too. ``--write``
writes the table to ``docs/before_after.rst``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "before_after.rst"

#: The cases of issue 22: (label, command arguments, repeats).
CASES = [
    ("spectrum, the paper's F.2 size (D = 3, d = 4, r = 2, n = 4, 48 inputs)",
     "spectrum --depth 3 --width 4 --rank 2 --tokens 4 --bank 48 --seed 21", 3),
    ("spectrum, softmax D = 5, d = 2, r = 1, n = 2", "spectrum --depth 5 --width 2 --rank 1 --tokens 2", 1),
    ("spectrum, softmax D = 6, d = 2, r = 1, n = 2", "spectrum --depth 6 --width 2 --rank 1 --tokens 2", 1),
    ("spectrum, two heads, causal, skips (D = 3, d = 4, r = 1, n = 4)",
     "spectrum --depth 3 --width 4 --rank 1 --tokens 4 --heads 2 --mask causal --residual value", 1),
    ("jet, softmax D = 4, d = 2", "jet --depth 4 --width 2", 1),
    ("dimension, widths 4, 4, 4, ranks 2, 2, n = 4",
     "dimension --depth 2 --widths 4,4,4 --ranks 2,2 --tokens 4", 3),
]

#: The keys of a JSON result that make its answer (what must not change between trees).
ANSWER_KEYS = ("kernel", "rank", "certificate", "sharp_degree", "immersion", "dimension", "lower_bound",
               "upper_bound", "certified")


def answer(result: dict) -> dict:
    """The answer of a JSON result: its :data:`ANSWER_KEYS` and the bands as triples.

    >>> answer({"bands": [{"layer": 1, "order": 3, "multiplicity": 2, "block": "Q1"}], "kernel": 4, "x": 1})
    {'kernel': 4, 'bands': [(1, 3, 2)]}
    """
    out = {k: result[k] for k in ANSWER_KEYS if k in result}
    if "bands" in result:
        out["bands"] = [(b["layer"], b["order"], b["multiplicity"]) for b in result["bands"]]
    return out


def run_case(tree: Path, args: str, timeout: float) -> tuple[float, dict | None, str]:
    """One fresh process ``python -m symattn ARGS --json`` in ``tree``: (seconds, answer, error)."""
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONWARNINGS="ignore")
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "symattn", *args.split(), "--json"], cwd=tree, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - start, None, f"timeout after {timeout:g} s"
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        return seconds, None, (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1][:200]
    return seconds, answer(json.loads(proc.stdout)), ""


def package_lines(tree: Path) -> tuple[int, int]:
    """(lines, modules) of every ``symattn/**/*.py`` of ``tree``."""
    files = sorted((tree / "symattn").rglob("*.py"))
    return sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files), len(files)


def which_symattn(tree: Path) -> str:
    """The file ``import symattn`` loads in ``tree`` (to be sure the tree, not the install, runs)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    return subprocess.run([sys.executable, "-c", "import symattn; print(symattn.__file__)"], cwd=tree, env=env,
                          capture_output=True, text=True, check=True).stdout.strip()


def measure(trees: dict[str, Path], cases, timeout: float) -> list[dict]:
    rows = []
    for label, args, repeats in cases:
        row = {"case": label, "command": f"symattn {args}", "times": {}, "answers": {}, "errors": {}}
        for _ in range(repeats):
            for name, tree in trees.items():  # alternate the trees: the same load on each
                seconds, ans, err = run_case(tree, args, timeout)
                print(f"  {name:8s} {seconds:8.2f} s  {args}" + (f"  ({err})" if err else ""), file=sys.stderr,
                      flush=True)
                if err:
                    row["errors"][name] = err
                    continue
                row["times"][name] = min(seconds, row["times"].get(name, float("inf")))
                row["answers"][name] = ans
        rows.append(row)
    return rows


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "unknown"


def page(trees: dict[str, Path], rows: list[dict], lines: dict, load: tuple[str, str], stamp: str) -> str:
    names = list(trees)
    first = names[0]
    out = [
        "Before and after: one model (issue 22)",
        "======================================",
        "",
        f"Measured by ``python benchmarks/before_after.py`` on {stamp}: {os.cpu_count()} cores, Python "
        f"{sys.version.split()[0]}, load average {load[0]} at the start and {load[1]} at the end (other jobs "
        "on the machine make every figure an upper bound, and the noise between two runs of one case is "
        "easily 10-20 %). The trees: " + "; ".join(f"**{n}** ``{trees[n].name}``" for n in names) + ". Every "
        "case is a fresh process per tree (start-up included), the trees alternating case by case in the "
        "same run; a time is the best of the case's repeats. *answer* compares each tree's answer (bands, "
        f"kernel, rank, certificate; degree; bounds) with **{first}**'s.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - case",
        *[f"     - {n}" for n in names],
        *[f"     - {n} / {first}" for n in names[1:]],
        "     - answer",
    ]
    for r in rows:
        base = r["times"].get(first)
        cells = [f"{r['times'][n]:.2f} s" if n in r["times"] else f"failed: {r['errors'].get(n, '?')}"
                 for n in names]
        ratios = [f"{r['times'][n] / base:.2f}" if base and n in r["times"] else "-" for n in names[1:]]
        ref = r["answers"].get(first)
        same = ["same" if r["answers"].get(n) == ref else f"{n} differs" for n in names[1:] if n in r["answers"]]
        verdict = "same" if same and all(s == "same" for s in same) else ", ".join(same) or "-"
        out += [f"   * - {r['case']}", *[f"     - {c}" for c in cells], *[f"     - {c}" for c in ratios],
                f"     - {verdict}"]
    out += ["", "Commands (``--json`` added)::", ""] + [f"    {r['command']}" for r in rows]
    differing = [(r["case"], n, r["answers"][n]) for r in rows for n in names[1:]
                 if n in r["answers"] and r["answers"][n] != r["answers"].get(first)]
    if differing:
        out += ["", "Where the answers differ (the tree's answer, then " + first + "'s):", ""]
        for case, n, ans in differing:
            ref = next(r for r in rows if r["case"] == case)["answers"].get(first)
            out += [f"* {case}, **{n}**: ``{json.dumps(ans)}``; **{first}**: ``{json.dumps(ref)}``"]
    out += ["", "The package", "-----------", "", ".. list-table::", "   :header-rows: 1", "",
            "   * - tree", "     - lines of ``symattn/**/*.py``", "     - modules"]
    for n in names:
        out += [f"   * - {n}", f"     - {lines[n][0]}", f"     - {lines[n][1]}"]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", required=True, metavar="NAME=PATH",
                        help="a source tree of symattn (repeat; the first is the reference)")
    parser.add_argument("--only", default=None, metavar="WORD", help="only the cases whose label has WORD")
    parser.add_argument("--timeout", type=float, default=3600.0, help="per process, seconds (default 3600)")
    parser.add_argument("--write", action="store_true", help=f"write {PAGE.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    trees = {}
    for spec in args.tree:
        name, _, path = spec.partition("=")
        if not name or not path or not (Path(path) / "symattn" / "__init__.py").is_file():
            parser.error(f"--tree {spec}: give NAME=PATH of a source tree with symattn/__init__.py")
        trees[name] = Path(path).absolute()
    for name, tree in trees.items():
        loaded = which_symattn(tree)
        if not Path(loaded).resolve().is_relative_to(tree.resolve()):
            parser.error(f"tree {name}: python imports symattn from {loaded}, not from {tree}")
    cases = [c for c in CASES if args.only is None or args.only in c[0]]
    load = [_load()]
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows = measure(trees, cases, args.timeout)
    load.append(_load())
    text = page(trees, rows, {n: package_lines(t) for n, t in trees.items()}, (load[0], load[1]), stamp)
    if args.write:
        PAGE.write_text(text, encoding="utf-8")
        print(f"wrote {PAGE}", file=sys.stderr)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
