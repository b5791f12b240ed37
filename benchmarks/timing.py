"""Shared timing helper of the benchmark scripts (wall clock, best of N)."""

from __future__ import annotations

import time
from typing import Callable


def best_of(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Run ``fn`` ``repeat`` times; return the least wall-clock seconds and the last result."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out
