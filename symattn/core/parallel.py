"""Independent evaluations on the machine's cores (forked worker processes).

:func:`map_forked` runs ``func(item)`` for each item in forked child processes (POSIX
``fork``: the children inherit ``func`` and everything it refers to, nothing is sent
to them but the items, and only the small results come back), in order. It runs in
the calling process instead when only one core is usable, when ``fork`` is not
available, or inside a daemonic process (a Dask worker, which may not have
children): the results are the same, only slower.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["usable_cores", "map_forked"]

_TASK: list[Callable[[Any], Any]] = []  # the function of the running map, inherited by fork


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity).

    >>> usable_cores() >= 1
    True
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _call(item: Any) -> Any:
    return _TASK[-1](item)


def map_forked(func: Callable[[Any], Any], items: Iterable[Any], workers: int | None = None) -> Iterator[Any]:
    """``func(item)`` for every item, in order, on up to ``workers`` forked processes
    (default: :func:`usable_cores`). Stop iterating to stop the workers.

    >>> list(map_forked(abs, [-1, 2, -3], workers=2))
    [1, 2, 3]
    """
    import multiprocessing  # only here: start-up time of the commands that never fork

    items = list(items)
    workers = min(usable_cores() if workers is None else int(workers), len(items))
    forkable = "fork" in multiprocessing.get_all_start_methods()
    if workers <= 1 or not forkable or multiprocessing.current_process().daemon:
        yield from map(func, items)
        return
    _TASK.append(func)
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            yield from pool.imap(_call, items)
    finally:
        _TASK.pop()
