"""Independent evaluations on the machine's cores (forked worker processes).

:func:`map_forked` runs ``func(item)`` for each item in forked child processes (POSIX
``fork``: the children inherit ``func``, the items and everything they refer to; only an
item's index goes to a child, and only the small pickled result comes back, through a pipe),
and yields the results in the order of the items. A free child is given the next item
(the items may take very different times). It runs in the calling process instead when
only one core is usable, when ``fork`` is not available, inside a daemonic process (a
Dask worker, which may not have children) or inside one of its own children (whose cores
are taken): the results are the same, only slower.

The children are plain ``os.fork`` processes, not a :mod:`multiprocessing` pool: no import
of the pool machinery and no helper threads (tens of milliseconds at the start of a command
that forks once, such as the F.2 spectrum's column proof).
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["usable_cores", "map_forked"]

_LENGTH = struct.Struct("<q")  # a message's length (a task: the item's index, -1 to stop)
_WORKER: list[bool] = [False]  # whether this process is a child of map_forked (which forks no further)


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity).

    >>> usable_cores() >= 1
    True
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _daemonic() -> bool:
    """Whether this is a daemonic :mod:`multiprocessing` process (which may not have children); a
    process that never imported :mod:`multiprocessing` is not one."""
    mp = sys.modules.get("multiprocessing")
    return mp is not None and bool(mp.current_process().daemon)


def map_forked(func: Callable[[Any], Any], items: Iterable[Any], workers: int | None = None) -> Iterator[Any]:
    """``func(item)`` for every item, in order, on up to ``workers`` forked processes
    (default: :func:`usable_cores`). An exception raised by ``func`` is raised here (in the
    order of the items). Stop iterating to stop the workers.

    >>> list(map_forked(abs, [-1, 2, -3], workers=2))
    [1, 2, 3]
    """
    items = list(items)
    workers = min(usable_cores() if workers is None else int(workers), len(items))
    if workers <= 1 or not hasattr(os, "fork") or _daemonic() or _WORKER[0]:
        yield from map(func, items)  # a worker's own maps run in it: the cores are taken already
        return
    children: dict[int, tuple[int, int, int]] = {}  # result pipe -> (pid, task pipe, item running)
    try:
        for index in range(workers):
            pid, tasks, results = _fork(func, items, [fd for r, (_, t, _) in children.items() for fd in (r, t)])
            children[results] = (pid, tasks, index)
            _send(tasks, _LENGTH.pack(index))
        done: dict[int, tuple[bool, Any]] = {}
        following = workers  # the next item to give out
        for index in range(len(items)):
            while index not in done:
                ready, _, _ = select.select(list(children), [], [])
                for results in ready:
                    pid, tasks, running = children[results]
                    done[running] = _answer(_receive(results))
                    if following < len(items):
                        children[results] = (pid, tasks, following)
                        _send(tasks, _LENGTH.pack(following))
                        following += 1
                    else:
                        children[results] = (pid, tasks, -1)
            failed, value = done.pop(index)
            if failed:
                raise value
            yield value
    finally:
        _stop(children)


def _fork(func: Callable[[Any], Any], items: list, others: list[int]) -> tuple[int, int, int]:
    """A child that computes ``func(items[i])`` for every index ``i`` it is sent and answers each
    with the pickled ``(failed, result or exception)``, until it is sent -1 or its task pipe
    closes (the parent ended); its pid and the parent's ends of the pipes. ``others``: the
    parent's ends of the other children's pipes, which the child closes (so that a pipe's end
    is held by the parent alone)."""
    task_read, task_write = os.pipe()
    result_read, result_write = os.pipe()
    pid = os.fork()
    if pid:  # the parent
        os.close(task_read)
        os.close(result_write)
        return pid, task_write, result_read
    status = 0
    try:  # the child: never returns into the caller's code
        _WORKER[0] = True
        for fd in [task_write, result_read, *others]:
            os.close(fd)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # the parent reports an interrupt, once
        while True:
            head = _read_exactly(task_read, _LENGTH.size)
            index = _LENGTH.unpack(head)[0] if head else -1
            if index < 0:
                break
            try:
                answer = (False, func(items[index]))
            except Exception as exc:  # noqa: BLE001 - raised again in the parent
                answer = (True, exc)
            try:
                data = pickle.dumps(answer)
            except Exception as exc:  # noqa: BLE001 - an unpicklable result or exception
                data = pickle.dumps((True, RuntimeError(f"a forked worker's answer cannot be sent: {exc!r}")))
            _send(result_write, _LENGTH.pack(len(data)) + data)
    except BaseException:  # noqa: BLE001 - the parent sees the closed pipe
        status = 1
    finally:
        os._exit(status)


def _send(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, n: int) -> bytes:
    """``n`` bytes from ``fd``, or fewer at its end."""
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _answer(data: bytes) -> tuple[bool, Any]:
    """A child's ``(failed, result or exception)``; an exception that cannot be rebuilt here is
    reported as an internal error."""
    try:
        return pickle.loads(data)
    except Exception as exc:  # noqa: BLE001
        from symattn.core.errors import InternalError

        return True, InternalError(f"a forked worker's answer could not be read ({exc!r}); please report this bug")


def _receive(fd: int) -> bytes:
    """One length-prefixed answer of a child."""
    head = _read_exactly(fd, _LENGTH.size)
    if len(head) < _LENGTH.size:
        from symattn.core.errors import InternalError

        raise InternalError("a forked worker ended without an answer; please report this bug")
    n = _LENGTH.unpack(head)[0]
    return _read_exactly(fd, n)


def _stop(children: dict[int, tuple[int, int, int]]) -> None:
    """End every child (idle ones are told to stop, busy ones are killed) and reap them."""
    for results, (pid, tasks, running) in children.items():
        try:
            if running >= 0:
                os.kill(pid, signal.SIGKILL)
            else:
                _send(tasks, _LENGTH.pack(-1))
        except OSError:
            pass
        for fd in (tasks, results):
            try:
                os.close(fd)
            except OSError:
                pass
    for pid, _, _ in children.values():
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
