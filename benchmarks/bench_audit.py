"""Benchmarks of ``symattn audit`` on realistic widths (figures in docs/benchmarks.rst).

Run from the repository root: ``python benchmarks/bench_audit.py``. Each case
writes a model file (seeded), then runs ``symattn audit FILE --json`` in a
fresh process and reports its wall-clock seconds and peak resident memory
(``/usr/bin/time -f %M``), with the tier of every section. Targets (issue
16): a 6-layer single-head model of width 64 and a 2-layer 4-head model of
width 128 each in under 60 s and 2 GB.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CASES = {
    "example (d = 4, r = 2, D = 3)": None,
    "random N(0, 1), d = 8, D = 2": ("npz", 8, 2, 1, "normal"),
    "single-head d = 64, D = 6 (Xavier-like)": ("npz", 64, 6, 1, "xavier"),
    "4-head d = 128, D = 2 (nn.MultiheadAttention init)": ("torch", 128, 2, 4, "torch"),
}


def _write(kind: str, d: int, depth: int, heads: int, init: str, folder: Path) -> Path:
    rng = np.random.default_rng(2026)
    if kind == "npz":
        scale = 1.0 if init == "normal" else d ** -0.75
        arrays = {}
        for i in range(1, depth + 1):
            arrays[f"Q{i}"] = rng.normal(size=(d, d)) * scale
            arrays[f"K{i}"] = rng.normal(size=(d, d)) * scale
            arrays[f"V{i}"] = (rng.normal(size=(d, d)) if init == "normal"
                               else np.eye(d) + 0.3 * rng.normal(size=(d, d)) / np.sqrt(d))
        path = folder / f"m{d}x{depth}.npz"
        np.savez(path, **arrays)
        return path
    import torch

    torch.manual_seed(2026)
    mods = torch.nn.ModuleList([torch.nn.MultiheadAttention(d, heads, bias=False)
                                for _ in range(depth)])
    path = folder / f"mh{d}x{depth}.pt"
    torch.save(mods.state_dict(), path)
    return path


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        for name, spec in CASES.items():
            if spec is None:
                path, extra = root / "examples" / "example_model.npz", []
            else:
                path = _write(*spec, Path(tmp))
                extra = ["--heads", str(spec[3])] if spec[0] == "torch" else []
            t0 = time.perf_counter()
            run = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "symattn",
                                  "audit", str(path), "--json", *extra],
                                 capture_output=True, text=True)
            seconds = time.perf_counter() - t0
            if run.returncode != 0:
                print(f"{name}: exit {run.returncode}: {run.stderr.strip()}")
                continue
            peak_kb = int(run.stderr.strip().splitlines()[-1])
            report = json.loads(run.stdout)
            print(f"{name}: {seconds:.1f} s, peak {peak_kb / 2 ** 20:.2f} GiB, "
                  f"{report['architecture']['parameters']} parameters")
            for section, tier in report["tiers"].items():
                print(f"    {section}: {tier}")


if __name__ == "__main__":
    main()
