"""The forked map (symattn.core.parallel.map_forked): order, exceptions, early stop, inline runs."""

from __future__ import annotations

import os
import tempfile
import time

import numpy as np
import pytest

from symattn.core.errors import CheckFailed
from symattn.core.parallel import map_forked


def _children() -> list[int]:
    """This process's live child processes (from /proc)."""
    me, out = os.getpid(), []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me and fields[0] != "Z":
                out.append(int(pid))
    return out


def test_results_come_in_the_items_order_whatever_their_durations():
    def uneven(i):
        time.sleep(0.04 * ((7 * i) % 4))
        return i * i

    assert list(map_forked(uneven, range(11), workers=2)) == [i * i for i in range(11)]
    assert list(map_forked(uneven, range(3), workers=8)) == [0, 1, 4]  # fewer items than workers
    assert list(map_forked(uneven, [], workers=2)) == []


def test_an_exception_in_a_worker_is_raised_in_the_caller():
    def refuse(i):
        if i == 3:
            raise CheckFailed(f"item {i} refused")
        return i

    with pytest.raises(CheckFailed, match="item 3 refused"):
        list(map_forked(refuse, range(6), workers=2))
    got = []
    with pytest.raises(CheckFailed):
        for r in map_forked(refuse, range(6), workers=2):
            got.append(r)
    assert got == [0, 1, 2] and not _children()


def test_large_results_and_stopping_early_leave_no_worker_behind():
    big = list(map_forked(lambda i: np.full((300, 40, 25), i, dtype=np.int64), range(3), workers=2))
    assert [int(b[-1, -1, -1]) for b in big] == [0, 1, 2]
    marks = tempfile.mkdtemp()

    def slow(i: int) -> int:
        if i:
            time.sleep(5)
            open(os.path.join(marks, str(i)), "w").close()  # only a worker that was awaited gets here
        return i

    g = map_forked(slow, range(6), workers=2)
    assert next(g) == 0
    g.close()  # the busy worker is stopped, not awaited: no wall clock, its mark tells
    assert not _children() and not os.listdir(marks)


def test_one_worker_or_a_daemonic_process_runs_inline(monkeypatch):
    assert list(map_forked(lambda i: os.getpid(), range(3), workers=1)) == [os.getpid()] * 3
    import multiprocessing

    monkeypatch.setattr(multiprocessing.current_process(), "_config", {"daemon": True})
    assert list(map_forked(lambda i: os.getpid(), range(3), workers=2)) == [os.getpid()] * 3


def test_a_map_inside_a_worker_runs_in_that_worker():
    """Nested maps (a bank split over the cores, each part split again) fork only once."""
    inner = list(map_forked(lambda i: list(map_forked(lambda j: os.getpid(), range(3), workers=2)), range(2),
                            workers=2))
    assert all(len(set(pids)) == 1 and pids[0] != os.getpid() for pids in inner)
