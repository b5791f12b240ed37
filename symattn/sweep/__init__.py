"""Sweeps: grids of architectures x analyses as dask tasks, their store and atlas.

:mod:`~symattn.sweep.run` (specs, cases, the dask run), :mod:`~symattn.sweep.store`
(the SQLite store), :mod:`~symattn.sweep.atlas` (tables and plots of a store) and
:mod:`~symattn.sweep.confine` (one case under time and memory limits). The names
of the former module ``symattn.sweep`` are importable from here (loaded on first use).
"""

import importlib

_RUN = ("ANALYSES", "Analysis", "Case", "LOCAL_CLUSTER_CONFIG", "build_architecture", "SweepSpec",
        "load_spec", "parse_spec", "compute", "execute", "run_sweep", "MAX_CASES")

__all__ = list(_RUN)


def __getattr__(name: str):
    """The former module's names, from :mod:`symattn.sweep.run` on first use (PEP 562)."""
    if name in _RUN:
        return getattr(importlib.import_module("symattn.sweep.run"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
