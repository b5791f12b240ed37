"""``symattn sweep``: a grid of architectures x analyses on dask, kept in a store.

``symattn sweep SPEC.toml --store FILE.sqlite [--workers N] [--scheduler ADDRESS]
[--retry-failed] [--json]`` validates the spec, the store, the workers against
``--max-memory`` and the scheduler's address (exit 2 on any error, before any
work), runs the cases the store lacks on a local dask cluster (or an existing
one) and writes each result as it arrives; ``symattn sweep --status --store
FILE.sqlite`` shows how far a store is (read-only). See :mod:`symattn.sweep.run`.
JSON keys: ``cases``, ``computed``, ``reused``, ``failed``, ``reused_failed``,
``already_stored``, ``without_result``, ``skipped``, ``seconds``, ``workers``,
``scheduler``, ``store``, ``symattn``.

Exit status: 0 when every case of the spec has a result (``ok``) in the store;
1 when some have none (failed, timed out or over memory: the summary says how
many; their rows hold the errors); 2 for bad input, before any work (including
a spec with nothing to compute); 130 when interrupted by Ctrl-C or SIGTERM
(every finished row is kept; rerun to resume).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys

from symattn.core.errors import SymattnError

__all__ = ["register", "run"]


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``sweep`` subcommand to ``subparsers``."""
    from symattn.commands import int_range
    from symattn.sweep.run import MAX_WORKERS

    p = subparsers.add_parser(
        "sweep", help="grid of architectures x analyses on dask, resumable SQLite store",
        description="Run every case of a sweep spec (TOML) that the store lacks as dask.distributed "
                    "tasks, each under the spec's time and memory limits, and write each result "
                    "into the store as it arrives. Rerunning resumes; a failed case is recorded "
                    "with its error and never stops the sweep. Exit status: 0 when every case of "
                    "the spec has a result in the store, 1 when some case failed, timed out or "
                    "went over its memory (its row holds the error), 2 for a bad spec, store or "
                    "option (nothing is computed), 130 when interrupted (finished rows are kept).",
        epilog="example: symattn sweep examples/sweep-small.toml --store small.sqlite --workers 2")
    p.add_argument("spec", nargs="?", metavar="SPEC.toml", help="the sweep spec (not needed with --status)")
    p.add_argument("--store", required=True, metavar="FILE.sqlite",
                   help="the results store (created if missing; a file that is not a symattn store "
                        "is refused and left untouched)")
    p.add_argument("--workers", type=int_range(0, MAX_WORKERS), default=None, metavar="N",
                   help="local dask worker processes (default: one per core, as many as fit "
                        "--max-memory at limits.memory each; 0: one after another in this process, "
                        f"without dask; at most {MAX_WORKERS})")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="use the existing dask cluster at ADDRESS (tcp://host:port) instead")
    p.add_argument("--retry-failed", action="store_true",
                   help="also rerun cases whose stored row failed or hit a limit")
    p.add_argument("--status", action="store_true", help="show the progress of the store and stop")
    p.add_argument("--json", action="store_true", help="print the summary (or status) as JSON")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Run the sweep (or show the status); return the exit status (see the module docstring)."""
    from symattn.core.limits import DEFAULT_MAX_MEMORY_GIB
    from symattn.sweep.store import Store

    if args.status:
        with Store(args.store, create=False, readonly=True) as store:
            status = store.status()
        print(json.dumps(status, indent=2) if args.json else format_status(status))
        return 0
    if args.spec is None:
        raise SymattnError("give a sweep spec (SPEC.toml), or --status to see a store")
    if args.scheduler is not None and args.workers is not None:
        raise SymattnError("give --workers (a local cluster) or --scheduler (an existing one), not both")
    from symattn.sweep.run import check_scheduler, load_spec, plan_workers, probe_scheduler, run_sweep

    scheduler = None if args.scheduler is None else check_scheduler(args.scheduler)
    max_memory = getattr(args, "max_memory", None) or DEFAULT_MAX_MEMORY_GIB
    spec = load_spec(args.spec, max_memory)
    if not spec.cases:
        reasons = "; ".join(spec.skipped[:2]) or "no case"
        raise SymattnError(f"sweep spec {args.spec}: nothing to compute: every case is out of its "
                           f"analysis's scope or beyond the limits ({reasons})")
    workers = None if scheduler is not None else plan_workers(args.workers, spec.memory, max_memory)
    if scheduler is not None:
        probe_scheduler(scheduler)  # before the store is made
    bar = _Progress(sys.stderr)
    previous = signal.signal(signal.SIGTERM, _stop)  # a batch system's stop: finish like Ctrl-C
    try:
        with Store(args.store) as store:  # checked (and made) before anything is printed or run
            store.plan(spec.cases, spec.source)  # the first write: a read-only or locked store stops here
            _header(args, spec)
            summary = run_sweep(spec, store, workers=workers, scheduler=scheduler,
                                retry_failed=args.retry_failed, progress=bar.update)
    finally:
        signal.signal(signal.SIGTERM, previous)
        bar.close()
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{summary['cases']} cases: {summary['computed']} computed, {summary['failed']} failed, "
              f"{summary['reused']} reused ({summary['reused_failed']} of them failed), "
              f"{summary['skipped']} skipped; {summary['seconds']:.1f} s on "
              f"{summary['workers'] if summary['workers'] is not None else 'no'} workers; "
              f"store {summary['store']} (symattn {summary['symattn']})")
    if summary["already_stored"]:
        print(f"symattn: {summary['already_stored']} case(s) were finished by another sweep on the "
              "same store first; their stored results were kept", file=sys.stderr)
    if summary["without_result"]:
        print(f"symattn: {summary['without_result']} of {summary['cases']} cases have no result "
              f"(failed, timed out or over memory; see 'symattn sweep --status --store {args.store}' "
              "and the atlas's failures; --retry-failed reruns them)", file=sys.stderr)
        return 1
    return 0


def _header(args: argparse.Namespace, spec) -> None:
    """The sweep's first lines on stderr: cases, skips, limits, store."""
    print(f"sweep {args.spec}: {len(spec.cases)} cases"
          + (f" ({len(spec.skipped)} skipped: out of scope or beyond --max-memory)" if spec.skipped else "")
          + f", limits {spec.timeout:g} s and {spec.memory / 1e9:.3g} GB per case; store {args.store}",
          file=sys.stderr)
    for reason in spec.skipped[:5]:
        print(f"  skipped {reason}", file=sys.stderr)
    if len(spec.skipped) > 5:
        print(f"  ... and {len(spec.skipped) - 5} more skipped", file=sys.stderr)


def _stop(signum, frame) -> None:
    """SIGTERM: stop as on Ctrl-C (the cluster is closed, finished rows are kept)."""
    raise KeyboardInterrupt


def format_status(status: dict) -> str:
    """Human-readable :meth:`symattn.sweep.store.Store.status` (text from the store made safe
    for a terminal)."""
    from symattn.core.output import terminal_text as t

    lines = [f"store {t(status['store'])}"]
    if not status["versions"]:
        lines.append("  empty")
    for version, v in sorted(status["versions"].items()):
        mark = " (this symattn)" if version == status["current"] else " (another symattn: not reused)"
        lines.append(f"  symattn {t(version, 40)}{mark}: {v['planned']} planned, {v['ok']} ok, {v['failed']} failed, "
                     f"{v['timeout']} timed out, {v['memory']} over memory, {v['missing']} missing")
        for analysis, counts in sorted(v["by_analysis"].items()):
            lines.append(f"    {t(analysis, 40):<10} " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return "\n".join(lines)


class _Progress:
    """A one-line progress bar on a terminal; one line per case otherwise."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.drawn = False

    def update(self, done: int, total: int, case, row: dict) -> None:
        status = row["status"] if row["status"] != "ok" else row["kind"]
        if self.tty:
            filled = int(30 * done / max(total, 1))
            self.stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total}  "
                              f"{case.label[:60]:<60} {status}")
            self.drawn = True
        else:
            line = f"[{done}/{total}] {case.label}: {status} ({row['seconds']:.2f} s)"
            if row["error"]:
                line += f": {row['error']}"
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
