"""Benchmark of the Coq certificates (issue 25): export every covered case, check it with ``coqc``.

Run ``python benchmarks/bench_coq.py [--full] [--dir DIR] [--json FILE] [--rst FILE]`` from the
repository root (needs ``coqc``; Coq 8.16 with its standard library).

Quick cases (target: under 2 minutes of ``coqc`` in all):

* eq. (A.3) and eq. (3) of Theorem 1 at width 2, any normalizer (the theorems of ``Identity.v``);
* Theorem 3, softmax, d = 2, n = 2: sharp degrees 3, 7, 19 (D = 1, 2, 3);
* Theorem 4 / Prop. D.1, softmax: spectra D = 1, 2, 3 at d = 2, r = 1 (orders 1, 5, 17) and D = 2 at
  d = 3, r = 2;
* Henry-Marchetti-Kohn dimension lower bounds, delta = 3, 4.

``--full`` adds cosh (k = 2) cases, random values, the HMK table up to delta = 6 and the paper's
F.2 size (softmax, d = 4, D = 3, r = 2, n = 4, a separating bank), each with a time limit.

The table lists, per certificate, the statement, the instance, the ``coqc`` wall time and CPU time,
and the result; ``--rst`` writes it for the docs page "What Coq checks".
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from symattn.coq.cases import dimension_case, jet_case, spectrum_case  # noqa: E402
from symattn.coq.export import identity_certificate, write_project  # noqa: E402
from symattn.coq.run import check_certificate, compile_theory, coqc_path  # noqa: E402
from symattn.model.architecture import Architecture  # noqa: E402


def cases(full: bool) -> list[tuple[str, str, object]]:
    """(statement, instance, builder) for every benchmarked certificate."""
    U = Architecture.uniform
    out = [("Thm 1, eq. (A.3)/(3)", "width 2, any phi, any depth and n", lambda: identity_certificate("identity_A3"))]
    for D in (1, 2, 3):
        out.append(("Thm 3 sharp degree", f"softmax D={D} d=2 n=2",
                    lambda D=D: jet_case(U(D, 2, 1, 2, "exp"), name=f"jet_D{D}")))
    for D, d, r in ((1, 2, 1), (2, 2, 1), (3, 2, 1), (2, 3, 2)):
        out.append(("Thm 4 / Prop. D.1 spectrum", f"softmax D={D} d={d} r={r} n=2",
                    lambda D=D, d=d, r=r: spectrum_case(U(D, d, r, 2, "exp"), name=f"spectrum_D{D}_d{d}_r{r}")))
    for delta in (3, 4):
        out.append(("HMK dimension lower bound", f"l=2 t=3 a=2 delta={delta}",
                    lambda delta=delta: dimension_case(U(2, delta, 2, 3, "exp"), name=f"hmk_delta{delta}")))
    if full:
        out += [("Thm 3 sharp degree", "cosh D=2 d=2 n=2", lambda: jet_case(U(2, 2, 1, 2, "cosh"), name="jet_cosh_D2")),
                ("Thm 4 spectrum (k = 2)", "cosh D=2 d=2 r=1 n=2",
                 lambda: spectrum_case(U(2, 2, 1, 2, "cosh"), name="spectrum_cosh_D2")),
                ("Thm 4 spectrum, random values", "softmax D=2 d=3 r=1 n=3",
                 lambda: spectrum_case(U(2, 3, 1, 3, "exp"), values="random", name="spectrum_random_D2_d3")),
                ("Thm 3 sharp degree", "softmax D=4 d=1 n=2 (N = 55)",
                 lambda: jet_case(U(4, 1, 1, 2, "exp"), name="jet_D4_d1"))]
        for delta in (5, 6):
            out.append(("HMK dimension lower bound", f"l=2 t=3 a=2 delta={delta}",
                        lambda delta=delta: dimension_case(U(2, delta, 2, 3, "exp"), name=f"hmk_delta{delta}")))
        out.append(("Thm 4 spectrum, paper F.2 size", "softmax D=3 d=4 r=2 n=4, separating bank",
                    lambda: spectrum_case(U(3, 4, 2, 4, "exp"), name="spectrum_F2")))
    return out


def run(full: bool, directory: str | None, timeout: float, jobs: int = 1) -> dict:
    if coqc_path() is None:
        raise SystemExit("bench_coq: coqc not found (apt-get install coq)")
    root = Path(directory or tempfile.mkdtemp(prefix="symattn-bench-coq-"))
    built = []
    for statement, instance, build in cases(full):
        start = time.perf_counter()
        cert = build()
        built.append((statement, instance, cert, time.perf_counter() - start))
    write_project(root, [c for _, _, c, _ in built])
    theory = compile_theory(root, timeout)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:  # coqc processes; the threads only wait
        runs = list(pool.map(lambda b: check_certificate(root, b[2].name, timeout), built))
    rows = []
    for (statement, instance, cert, export), r in zip(built, runs):
        rows.append({"statement": statement, "instance": instance, "file": f"certificates/{cert.name}.v",
                     "export_seconds": round(export, 2), "coqc_seconds": round(r.seconds, 2),
                     "coqc_cpu_seconds": round(r.cpu, 2), "result": r.status, "message": r.message})
        print(f"  {statement:<32} {instance:<40} coqc {r.seconds:7.2f} s (cpu {r.cpu:6.2f} s)  {r.status}",
              flush=True)
    total = sum(row["coqc_seconds"] for row in rows)
    cpu = sum(row["coqc_cpu_seconds"] for row in rows)
    print(f"  theory: {theory.status}, coqc {theory.seconds:.1f} s (cpu {theory.cpu:.1f} s)")
    print(f"  certificates: {sum(r['result'] == 'checked' for r in rows)} of {len(rows)} checked, "
          f"coqc {total:.1f} s in all (cpu {cpu:.1f} s); directory {root}")
    return {"theory": {"result": theory.status, "coqc_seconds": round(theory.seconds, 2),
                       "coqc_cpu_seconds": round(theory.cpu, 2)},
            "rows": rows, "total_seconds": round(total, 2), "total_cpu_seconds": round(cpu, 2),
            "full": full, "directory": str(root)}


def rst_table(result: dict) -> str:
    """The table of ``run`` as a reStructuredText ``list-table``."""
    lines = [".. list-table::", "   :header-rows: 1", "",
             "   * - statement", "     - instance", "     - file", "     - coqc (s)", "     - cpu (s)", "     - result"]
    for r in result["rows"]:
        lines += [f"   * - {r['statement']}", f"     - {r['instance']}", f"     - ``{r['file']}``",
                  f"     - {r['coqc_seconds']:.1f}",
                  f"     - {r['coqc_cpu_seconds']:.1f}" if r["result"] != "timeout" or r.get("cpu_measured", True)
                  else "     - not measured", f"     - {r['result']}"]
    t = result["theory"]
    lines += ["   * - the theory (once)", "     - ``coq/theories``, 11 files", "     - ``theories/*.v``",
              f"     - {t['coqc_seconds']:.1f}", f"     - {t['coqc_cpu_seconds']:.1f}", f"     - {t['result']}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also the long cases")
    parser.add_argument("--dir", default=None, help="where to write the certificates (default: a temporary folder)")
    parser.add_argument("--timeout", type=float, default=900, help="coqc time limit per file (s)")
    parser.add_argument("--jobs", type=int, default=1, help="coqc processes at a time (default 1)")
    parser.add_argument("--json", default=None, help="write the results as JSON")
    parser.add_argument("--rst", default=None, help="write the table as reStructuredText")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    result = run(args.full, args.dir, args.timeout, args.jobs)
    result["wall_seconds"] = round(time.perf_counter() - start, 1)
    print(f"  benchmark wall time (export, theory, certificates): {result['wall_seconds']:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    if args.rst:
        Path(args.rst).write_text(rst_table(result))
    return 0 if all(r["result"] == "checked" for r in result["rows"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
