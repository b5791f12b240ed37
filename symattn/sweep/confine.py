"""Confined runs of sweep cases: :func:`run_confined` and :func:`parse_memory` live in
:mod:`symattn.core.confine` (the spectrum's exact route confines its per-input work the same way);
importable from here for the sweep."""

from symattn.core.confine import MAX_MEMORY, Confined, parse_memory, run_confined

__all__ = ["Confined", "run_confined", "parse_memory", "MAX_MEMORY"]
