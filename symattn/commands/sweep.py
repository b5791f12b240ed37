"""``symattn sweep``: a grid of architectures x analyses on dask, kept in a store.

``symattn sweep SPEC.toml --store FILE.sqlite [--workers N] [--scheduler ADDRESS]
[--retry-failed] [--json]`` validates the spec (exit 2 on any error, before
any work), runs the cases the store lacks on a local dask cluster (or an
existing one) and writes each result as it arrives; ``symattn sweep --status
--store FILE.sqlite`` shows how far a store is. See :mod:`symattn.sweep.run`.
JSON keys: ``cases``, ``computed``, ``reused``, ``failed``, ``reused_failed``,
``skipped``, ``seconds``, ``workers``, ``scheduler``, ``store``, ``symattn``.
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
    p = subparsers.add_parser(
        "sweep", help="grid of architectures x analyses on dask, resumable SQLite store",
        description="Run every case of a sweep spec (TOML) that the store lacks as dask.distributed "
                    "tasks, each under the spec's time and memory limits, and write each result "
                    "into the store as it arrives. Rerunning resumes; a failed case is recorded "
                    "with its error and never stops the sweep.",
        epilog="example: symattn sweep examples/sweep-small.toml --store small.sqlite --workers 2")
    p.add_argument("spec", nargs="?", metavar="SPEC.toml", help="the sweep spec (not needed with --status)")
    p.add_argument("--store", required=True, metavar="FILE.sqlite", help="the results store (created if missing)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="local dask worker processes (default: one per core; 0: one after another "
                        "in this process, without dask)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="use the existing dask cluster at ADDRESS (e.g. tcp://host:8786) instead")
    p.add_argument("--retry-failed", action="store_true",
                   help="also rerun cases whose stored row failed or hit a limit")
    p.add_argument("--status", action="store_true", help="show the progress of the store and stop")
    p.add_argument("--json", action="store_true", help="print the summary (or status) as JSON")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Run the sweep (or show the status); return the exit status."""
    from symattn.sweep.store import Store

    if args.status:
        with Store(args.store, create=False) as store:
            status = store.status()
        print(json.dumps(status, indent=2) if args.json else format_status(status))
        return 0
    if args.spec is None:
        raise SymattnError("give a sweep spec (SPEC.toml), or --status to see a store")
    if args.workers is not None and args.workers < 0:
        raise SymattnError(f"--workers must be 0 or more, got {args.workers}")
    if args.scheduler is not None and args.workers is not None:
        raise SymattnError("give --workers (a local cluster) or --scheduler (an existing one), not both")
    from symattn.sweep.run import load_spec, run_sweep

    spec = load_spec(args.spec)
    bar = _Progress(sys.stderr)
    print(f"sweep {args.spec}: {len(spec.cases)} cases"
          + (f" ({len(spec.skipped)} out of scope skipped)" if spec.skipped else "")
          + f", limits {spec.timeout:g} s and {spec.memory / 1e9:.3g} GB per case; store {args.store}",
          file=sys.stderr)
    previous = signal.signal(signal.SIGTERM, _stop)  # a batch system's stop: finish like Ctrl-C
    try:
        with Store(args.store) as store:
            summary = run_sweep(spec, store, workers=args.workers, scheduler=args.scheduler,
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
    return 0


def _stop(signum, frame) -> None:
    """SIGTERM: stop as on Ctrl-C (the cluster is closed, finished rows are kept)."""
    raise KeyboardInterrupt


def format_status(status: dict) -> str:
    """Human-readable :meth:`symattn.sweep.store.Store.status`."""
    lines = [f"store {status['store']}"]
    if not status["versions"]:
        lines.append("  empty")
    for version, v in sorted(status["versions"].items()):
        mark = " (this symattn)" if version == status["current"] else " (another symattn: not reused)"
        lines.append(f"  symattn {version}{mark}: {v['planned']} planned, {v['ok']} ok, {v['failed']} failed, "
                     f"{v['timeout']} timed out, {v['memory']} over memory, {v['missing']} missing")
        for analysis, counts in sorted(v["by_analysis"].items()):
            lines.append(f"    {analysis:<10} " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
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
