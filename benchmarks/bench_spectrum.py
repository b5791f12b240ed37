"""Benchmarks of the exact native contact spectrum (issue: exact spectra).

Run: ``python benchmarks/bench_spectrum.py [--skip-paper] [--exact]``. Prints, for
each case, the best of ``--repeat`` wall-clock times (seconds) on this machine:

1. the paper's F.2 size (softmax, d = 4, r = 2, D = 3, n = 4, 48 inputs):
   spectrum with certificate ``certified`` (modular Smith orders as upper
   bounds, column orders proved over Q by primes with a-priori height bounds;
   App. D.2 not used), and the share of it spent on the independent Jacobian
   check (bank Jacobian with and without it);
2. with ``--exact``: the same size by the exact route (Smith form over Q[[t]],
   certificate ``exact``; several minutes);
3. softmax D = 4 (orders up to 53; d = 2, r = 1 and d = 3, r = 2) and D = 5,
   d = 2, r = 1 (orders up to 161), banks grown automatically;
4. the paper's method on the same Jacobian at one t: a 120-digit mpmath
   forward-mode Jacobian (numpy object arrays of mpf, all 96 directions) and
   the singular values from the eigenvalues of its Gram matrix.

``--depths`` measures the paper's stack by depth (issue 41: softmax, d = 2, r = 1, n = 2, bank auto,
D = 5 to 8, each a fresh ``symattn spectrum`` process): CPU seconds (user + system, the forked
workers included), wall seconds, peak memory, the tier and the certificate, the column proof's route,
agreement with Theorem 4's closed form (an independent reference: the formula, not the computation)
and the ratio to one t of the paper's method timed in CPU seconds in the same run; ``--write`` puts
the table in docs/benchmarks.rst (its section "The paper's stack by depth", which
``benchmarks/run.py --write`` keeps).

``--frontier`` runs instead the speed frontier of issue 17, each case a fresh
``python -m symattn spectrum ... --json`` process (start-up included; wall clock
and peak resident memory from ``/usr/bin/time -f %M``): the F.2 command (best of
``--repeat``) against one t of the paper's method measured in the same run, softmax
D = 6, d = 2, r = 1; d = 8, r = 4, D = 3; d = 16, r = 4, D = 2 (``--skip-large``
leaves out the last two).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the command line (symattn.cli), before NumPy

import argparse  # noqa: E402
import json
import subprocess
import sys
import time

import mpmath
import numpy as np

from symattn.core.algebras import MPMath
from symattn.model.network import jacobian, native_network
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank
from symattn.core.algebras import series_for
from symattn.model.symmetries import visible_blocks
from symattn.analyses.spectrum import bank_jacobian, native_spectrum, path_parameters
from timing import best_of


def paper_method(arch: Architecture, bank: np.ndarray, t: float, digits: int = 120) -> list:
    """Singular values of J(t) at one t: mpmath forward mode + Gram eigenvalues."""
    A = MPMath(digits)
    U, W, V = path_parameters(arch, seed=21)
    tt = A.const(0)[()] + mpmath.mpf(t)
    vals = {}
    for i in range(arch.depth):
        vals.update({f"Q{i + 1}": A.const(U[i]) * tt, f"K{i + 1}": A.const(W[i]) * tt,
                     f"V{i + 1}": A.const(V[i])})
    vals["X"] = A.const(bank)
    J = jacobian(native_network(arch), A, vals, [name for name, _ in arch.native_shapes()])
    with mpmath.workdps(digits):
        G = mpmath.matrix(J.T.dot(J).tolist())
        eig = mpmath.eigsy(G, eigvals_only=True)
    return sorted((mpmath.sqrt(abs(e)) for e in eig), reverse=True)


#: The speed frontier of issue 17: (label, spectrum arguments, target seconds).
FRONTIER = [
    ("F.2: D = 3, d = 4, r = 2, n = 4, 48 inputs", "--depth 3 --width 4 --rank 2 --tokens 4 --bank 48", None),
    ("softmax D = 6, d = 2, r = 1, bank auto", "--depth 6 --width 2 --rank 1", 30),
    ("D = 3, d = 8, r = 4, bank auto", "--depth 3 --width 8 --rank 4", 10),
    ("D = 2, d = 16, r = 4, bank auto", "--depth 2 --width 16 --rank 4", 60),
]


def cli_case(arguments: str) -> tuple[float, float, dict, float]:
    """One fresh ``symattn spectrum ARGS --json`` process: wall seconds, peak GiB, JSON, CPU seconds."""
    t0 = time.perf_counter()
    run = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", sys.executable, "-m", "symattn", "spectrum",
                          *arguments.split(), "--json"], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.getcwd()})
    seconds = time.perf_counter() - t0
    kb, user, system = run.stderr.strip().splitlines()[-1].split()
    return seconds, int(kb) / 2**20, json.loads(run.stdout), float(user) + float(system)


def frontier(repeat: int, skip_large: bool) -> None:
    """The speed frontier of issue 17 (see the module docstring)."""
    print(f"load: {os.getloadavg()}")
    for label, arguments, target in FRONTIER[: 2 if skip_large else None]:
        runs = [cli_case(arguments) for _ in range(repeat if target is None else 1)]
        seconds, gib, out, cpu = min(runs, key=lambda r: r[0])
        print(f"{label}: {seconds:.2f} s wall, {cpu:.2f} s CPU (fresh process; all: {[round(r[0], 2) for r in runs]}), "
              f"{gib:.2f} GiB peak; bands {[(b['order'], b['multiplicity']) for b in out['bands']]} "
              f"kernel {out['kernel']} bank {out['bank_size']} certificate {out['certificate']}"
              + (f"; target {target} s: {'met' if seconds <= target else 'NOT met'}" if target else ""))
        if target is None:
            f2_seconds = seconds
            f2 = Architecture.uniform(3, 4, 2, 4, "exp")
            cpu0 = time.process_time()
            paper, _ = best_of(lambda: paper_method(f2, random_bank(f2, 48, seed=0), 0.1), 1)
            paper_cpu = time.process_time() - cpu0
            print(f"paper's method at one t (120 digits), same run: {paper:.1f} s wall, {paper_cpu:.1f} s CPU; "
                  f"the F.2 command is {paper / f2_seconds:.1f}x faster in wall clock, {paper_cpu / cpu:.1f}x in "
                  f"CPU time (target 30x: {'met' if paper >= 30 * f2_seconds else 'NOT met'} in wall clock)")
    print(f"load: {os.getloadavg()}")


#: The paper's stack by depth (issue 41): (depth, CPU-seconds target or None).
DEPTHS = [(5, None), (6, None), (7, 60), (8, 600)]

#: The heading of the depth section of docs/benchmarks.rst (written by ``--depths --write``).
DEPTH_HEADING = "The paper's stack by depth"


def _route(out: dict) -> str:
    """How the column proof's long orders were proved, from the spectrum's notes."""
    notes = " ".join(out.get("notes", []))
    if "by the attention lemma" in notes and "from the collapse recursion" in notes:
        return "attention lemma (collapse recursion, checked mod p)"
    if "by the attention lemma" in notes:
        return "attention lemma (token differences over Q)"
    if "computed over Q itself" in notes:
        return "columns over Q"
    return "primes"


def depth_table(depths: list[int]) -> list[str]:
    """Measure the paper's stack at each depth of ``depths`` (see the module docstring) and return
    the section of docs/benchmarks.rst, lines of reStructuredText."""
    from symattn.theorems.formulas import common_k_divisibility_order

    load0 = os.getloadavg()
    f2 = Architecture.uniform(3, 4, 2, 4, "exp")
    cpu0 = time.process_time()
    paper_method(f2, random_bank(f2, 48, seed=21), 0.1)
    paper_cpu = time.process_time() - cpu0
    print(f"paper's method at one t: {paper_cpu:.1f} s CPU", flush=True)
    rows = []
    for depth, target in DEPTHS:
        if depth not in depths:
            continue
        arguments = f"--depth {depth} --width 2 --rank 1 --tokens 2"
        seconds, gib, out, cpu = cli_case(arguments)
        orders = sorted({b["order"] for b in out["bands"] if b["layer"] > 0})
        reference = [common_k_divisibility_order(i) for i in range(1, depth + 1)]
        agree = "yes" if orders == reference and out["undecided"] == 0 else f"NO: {orders} vs {reference}"
        verdict = "" if target is None else f" (target {target} s: {'met' if cpu <= target else 'NOT met'})"
        print(f"D = {depth}: {cpu:.1f} s CPU, {seconds:.1f} s wall, {gib:.2f} GiB, {out['certificate']}, "
              f"{_route(out)}, closed form {agree}{verdict}", flush=True)
        rows.append([f"D = {depth} (orders to t^{reference[-1]}, bank {out['bank_size']})",
                     f"{cpu:.1f} s{verdict}", f"{seconds:.1f} s", f"{gib:.2f} GiB",
                     f"{out['method']}, {out['certificate']}", _route(out), agree, f"{paper_cpu / cpu:.2f}x"])
    load1 = os.getloadavg()
    lines = [DEPTH_HEADING, "^" * len(DEPTH_HEADING), "",
             f"Softmax, d = 2, r = 1, n = 2, bank auto: ``symattn spectrum --depth D --width 2 --rank 1 --tokens 2``, "
             f"each a fresh process, measured by ``python benchmarks/bench_spectrum.py --depths --write`` on "
             f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC (load average {load0[0]:.1f} at the start, "
             f"{load1[0]:.1f} at the end: other jobs make every figure an upper bound, the wall clock most). "
             "CPU time is user + system of the process and its forked workers; one t of the paper's method "
             f"took **{paper_cpu:.1f} s** CPU in this run. The closed form is Theorem 4's ``2 * 3^(i-1) - 1`` "
             "(the formula, an independent reference: the computation does not use it). The column proof's "
             "long orders (from t^48) are proved by the attention lemma: a query/key column of layer i is "
             "bilinear in the token differences of its input (:func:`~symattn.analyses.column_proof.lemma_orders`), "
             "whose orders come from the collapse recursion ``e_i >= 3 e_(i-1) + 1`` "
             "(:func:`~symattn.analyses.column_proof.collapse_valuations`, checked modulo a prime on the bank; "
             "before it they were computed over Q to half the column's length in u = t^2).", ""]
    header = ["case", "CPU", "wall", "memory", "tier, certificate", "long orders proved by", "closed form",
              "paper / case (CPU)"]
    lines += [".. list-table::", "   :header-rows: 1", "   :widths: 22 14 8 8 14 18 8 8", ""]
    for row in [header] + rows:
        lines += [f"   * - {row[0]}"] + [f"     - {c}" for c in row[1:]]
    return lines + [""]


def keep_depth_section(old: str, new: str) -> str:
    """``new`` (a whole docs/benchmarks.rst) with the depth and block family sections of ``old`` put back
    before the ``symattn jet`` section (``benchmarks/run.py --write`` writes the page without them)."""
    for heading in (DEPTH_HEADING, FAMILY_HEADING):
        section = _section(old, heading)
        at = new.find("``symattn jet``")
        if section and heading not in new and at >= 0:
            new = new[:at] + section + new[at:]
    return new


def _section(text: str, heading: str) -> str:
    """The section ``heading`` of a page (to the next of these sections or the ``symattn jet`` section),
    or ``""``."""
    start = text.find(heading + "\n")
    if start < 0:
        return ""
    ends = [at for at in (text.find(mark, start + len(heading)) for mark in
                          (DEPTH_HEADING + "\n", FAMILY_HEADING + "\n", "``symattn jet``")) if at >= 0]
    return text[start:min(ends)] if ends else text[start:]


def _depth_section(text: str) -> str:
    """The depth section of a page, or ``""``."""
    return _section(text, DEPTH_HEADING)


def write_depth_section(lines: list[str]) -> None:
    """Put the depth section in docs/benchmarks.rst, replacing the one there."""
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.rst"
    text = page.read_text()
    old = _depth_section(text)
    section = "\n".join(lines) + "\n"
    text = text.replace(old, section) if old else keep_depth_section(section, text)
    page.write_text(text)
    print(f"wrote the section {DEPTH_HEADING!r} of {page}")


#: The block families of issue 41 (d = 2, r = 1, n = 3, eps = 1/100): (label, layer options of ``symattn spectrum``).
FAMILY_CASES = [
    ("attention + LayerNorm (post-norm)", "--norm post --eps 1/100"),
    ("post-norm block with skip", "--residual value --norm post --eps 1/100"),
    ("pre-norm block with skip", "--residual value --norm pre --eps 1/100"),
    ("attention + MLP (x + x^2/2, m = 3)", "--mlp 3 --activation poly:0,1,1/2"),
    ("attention + MLP (tanh, m = 2)", "--mlp 2 --activation tanh"),
    ("attention + MLP (GELU, m = 2)", "--mlp 2 --activation gelu"),
    ("full post-norm layer (biases, W_O, GELU, m = 2)",
     "--residual value --norm post --mlp 2 --bias --combine concat --activation gelu --eps 1/100"),
]

#: The heading of the block families' section of docs/benchmarks.rst (written by ``--families --write``).
FAMILY_HEADING = "Block families at depth"


def limited_case(arguments: str, seconds: float) -> tuple[float, float | None, dict | None, float | None]:
    """:func:`cli_case` stopped after ``seconds`` of wall clock (the process group it started, by its id):
    wall seconds, peak GiB, JSON and CPU seconds, the last three None when it was stopped or failed."""
    import signal

    t0 = time.perf_counter()
    proc = subprocess.Popen(["/usr/bin/time", "-f", "%M %U %S", sys.executable, "-m", "symattn", "spectrum",
                             *arguments.split(), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": os.getcwd()}, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the group this call started (symattn and its forked workers)
        proc.communicate()
        return time.perf_counter() - t0, None, None, None
    wall = time.perf_counter() - t0
    try:
        kb, user, system = err.strip().splitlines()[-1].split()
        return wall, int(kb) / 2**20, json.loads(out), float(user) + float(system)
    except (ValueError, IndexError):
        print(f"  failed (exit {proc.returncode}): {err.strip().splitlines()[-2:]}", flush=True)
        return wall, None, None, None


def _family_route(out: dict) -> str:
    """The route that certified a block spectrum, from its notes."""
    notes = " ".join(out.get("notes", []))
    if out["method"] != "constants":
        return "modular Smith form"
    for needle, route in (("the Smith orders from ranks alone", "ranks of the truncations (balls)"),
                          ("completed frame:", "completed frame (exact in Q[constants])"),
                          ("score orders:", "partial frame + score lemma"),
                          ("and its coefficients up to t^", "hybrid frame"),
                          ("truncated:", "partial frame")):
        if needle in notes:
            return route
    return "exact frame in Q[constants]"


def family_table(depths: list[int], seconds: float, paper: bool = True,
                 only: list[int] | None = None) -> list[str]:
    """Measure every block family of :data:`FAMILY_CASES` (or those of the indices ``only``) at each depth
    of ``depths`` (a fresh
    ``symattn spectrum`` process each, stopped after ``seconds`` of wall clock) and return the section
    of docs/benchmarks.rst, lines of reStructuredText."""
    load0 = os.getloadavg()
    paper_cpu = None
    if paper:
        f2 = Architecture.uniform(3, 4, 2, 4, "exp")
        cpu0 = time.process_time()
        paper_method(f2, random_bank(f2, 48, seed=21), 0.1)
        paper_cpu = time.process_time() - cpu0
        print(f"paper's method at one t: {paper_cpu:.1f} s CPU", flush=True)
    rows = []
    for depth in depths:
        for label, parts in [c for i, c in enumerate(FAMILY_CASES) if only is None or i in only]:
            arguments = f"--depth {depth} --width 2 --rank 1 --tokens 3 {parts}"
            wall, gib, out, cpu = limited_case(arguments, seconds)
            if out is None:
                print(f"{label} D = {depth}: stopped or failed after {wall:.0f} s wall", flush=True)
                rows.append([f"{label}, D = {depth}", f"not done in {seconds:.0f} s wall", f"{wall:.0f} s", "-",
                             "-", "-", "-", "-"])
                continue
            bands = ", ".join(f"t^{o} x {m}" for o, m in sorted(
                {(b["order"], sum(c["multiplicity"] for c in out["bands"] if c["order"] == b["order"]))
                 for b in out["bands"]}))
            verdict = f" (target 60 s: {'met' if cpu <= 60 else 'NOT met'})" if depth == 3 else ""
            ratio = f"{paper_cpu / cpu:.2f}x" if paper_cpu else "-"
            print(f"{label} D = {depth}: {cpu:.1f} s CPU{verdict}, {wall:.1f} s wall, {gib:.2f} GiB, {out['method']}, "
                  f"{out['certificate']}, {_family_route(out)}: {bands}; rank {out['rank']}", flush=True)
            rows.append([f"{label}, D = {depth}", f"{cpu:.1f} s{verdict}", f"{wall:.1f} s", f"{gib:.2f} GiB",
                         f"{out['certificate']}: {_family_route(out)}", f"{bands}; rank {out['rank']}, "
                         f"unexplained {out['undecided']}", ratio, f"``symattn spectrum {arguments}``"])
    load1 = os.getloadavg()
    lines = [FAMILY_HEADING, "^" * len(FAMILY_HEADING), "",
             "The block families of issue 41 (softmax, d = 2, r = 1, n = 3, LayerNorm eps = 1/100, bank auto, the "
             "generic claim's two points), each a fresh process, measured by ``python benchmarks/bench_spectrum.py "
             f"--families --write`` on {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC (load average "
             f"{load0[0]:.1f} at the start, {load1[0]:.1f} at the end: other jobs make every figure an upper bound, "
             "the wall clock most). CPU time is user + system of the process and its forked workers"
             + (f"; one t of the paper's method took **{paper_cpu:.1f} s** CPU in this run" if paper_cpu else "")
             + ". A case not done within its wall-clock limit is stopped and says so.", ""]
    header = ["case", "CPU", "wall", "memory", "certificate: route", "Smith orders x multiplicity",
              "paper / case (CPU)", "command"]
    lines += [".. list-table::", "   :header-rows: 1", "   :widths: 18 12 8 8 16 18 8 20", ""]
    for row in [header] + rows:
        lines += [f"   * - {row[0]}"] + [f"     - {c}" for c in row[1:]]
    return lines + [""]


def write_section(heading: str, lines: list[str]) -> None:
    """Put a section in docs/benchmarks.rst, replacing the one there (:func:`_section`), else before the
    ``symattn jet`` section."""
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.rst"
    text = page.read_text()
    section = "\n".join(lines) + "\n"
    old = _section(text, heading)
    if old:
        text = text.replace(old, section)
    else:
        at = text.find("``symattn jet``")
        text = text + "\n" + section if at < 0 else text[:at] + section + text[at:]
    page.write_text(text)
    print(f"wrote the section {heading!r} of {page}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-paper", action="store_true", help="skip the slow 120-digit comparison")
    ap.add_argument("--exact", action="store_true", help="also run the exact route at the F.2 size (minutes)")
    ap.add_argument("--frontier", action="store_true", help="the speed frontier of issue 17 (fresh processes)")
    ap.add_argument("--skip-large", action="store_true", help="with --frontier: leave out d = 8 and d = 16")
    ap.add_argument("--depths", nargs="?", const="5,6,7,8", default=None,
                    help="the paper's stack by depth (comma list, default 5,6,7,8; fresh processes)")
    ap.add_argument("--write", action="store_true",
                    help="with --depths or --families: write its section of docs/benchmarks.rst")
    ap.add_argument("--families", nargs="?", const="3", default=None,
                    help="the block families of issue 41 at these depths (comma list, default 3; fresh processes)")
    ap.add_argument("--limit", type=float, default=1200.0,
                    help="with --families: seconds of wall clock per case before it is stopped (default 1200)")
    ap.add_argument("--only", default=None, help="with --families: comma list of family indices (default all)")
    args = ap.parse_args()
    if args.families:
        only = None if args.only is None else [int(v) for v in args.only.split(",")]
        lines = family_table([int(v) for v in args.families.split(",")], args.limit, not args.skip_paper, only)
        print("\n".join(lines))
        if args.write:
            write_section(FAMILY_HEADING, lines)
        return
    if args.depths:
        lines = depth_table([int(v) for v in args.depths.split(",")])
        print("\n".join(lines))
        if args.write:
            write_depth_section(lines)
        return
    if args.frontier:
        frontier(args.repeat, args.skip_large)
        return

    f2 = Architecture.uniform(3, 4, 2, 4, "exp")
    sec, s = best_of(lambda: native_spectrum(f2, bank=48, seed=21), args.repeat)
    print(f"F.2 size spectrum (48 inputs): {sec:.2f} s  bands "
          f"{[(b.order, b.multiplicity) for b in s.bands]} kernel {s.kernel} certificate {s.certificate}")
    spectrum_seconds = sec

    U, W, V = path_parameters(f2, seed=21)
    bank = random_bank(f2, 48, seed=21)
    cols = [c for _, _, block in visible_blocks(f2, U) for c in block]
    A = series_for("modular", s.order)
    plain, _ = best_of(lambda: bank_jacobian(f2, bank, U, W, V, A, cols, verify=0), args.repeat)
    checked, _ = best_of(lambda: bank_jacobian(f2, bank, U, W, V, A, cols, verify=1), args.repeat)
    print(f"F.2 bank Jacobian mod p: {plain:.2f} s without, {checked:.2f} s with the independent "
          f"series check")

    if args.exact:
        sec, e = best_of(lambda: native_spectrum(f2, bank=48, seed=21, method="exact"), 1)
        print(f"F.2 size, exact route (Smith form over Q[[t]]): {sec:.1f} s  bands "
              f"{[(b.order, b.multiplicity) for b in e.bands]} certificate {e.certificate}")

    for d4 in (Architecture.uniform(4, 2, 1, 2, "exp"), Architecture.uniform(4, 3, 2, 3, "exp")):
        sec, s = best_of(lambda: native_spectrum(d4, bank="auto"), 1)
        print(f"softmax D = 4, d = {d4.d}, r = {d4.ranks[0]} (bank auto -> {s.bank_size}): {sec:.2f} s  "
              f"orders {[b.order for b in s.bands]} certificate {s.certificate}")

    d5 = Architecture.uniform(5, 2, 1, 2, "exp")
    sec, s = best_of(lambda: native_spectrum(d5, bank="auto"), 1)
    print(f"softmax D = 5, d = 2, r = 1 (bank auto -> {s.bank_size}): {sec:.2f} s  orders "
          f"{[b.order for b in s.bands]} certificate {s.certificate}")

    if not args.skip_paper:
        bank = random_bank(f2, 48, seed=21)
        sec, sv = best_of(lambda: paper_method(f2, bank, 0.1), 1)
        print(f"paper's method at one t (120 digits, mpmath forward mode, Gram eigenvalues): {sec:.1f} s; "
              f"exact spectrum is {sec / spectrum_seconds:.0f}x faster")


if __name__ == "__main__":
    main()
