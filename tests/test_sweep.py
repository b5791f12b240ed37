"""Sweeps with the real engine: dask LocalCluster vs serial, a killed worker,
an interrupted and resumed sweep, limits, bad specs refused with exit 2.

Clusters here are real ``dask.distributed`` LocalClusters with worker
processes (about 1-2 s to start on this machine); the cases are tiny.
"""

from __future__ import annotations

import io
import json
import os
import signal
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from symattn.cli import main
from symattn.sweep.confine import run_confined
from symattn.sweep.store import Store
from symattn.sweep.run import parse_spec, run_sweep

ROOT = Path(__file__).resolve().parent.parent

TINY = {"analyses": ["spectrum", "jet", "dimension"], "limits": {"timeout": 60, "memory": "2GB"},
        "grid": [{"depth": [1, 2], "width": 2, "normalizer": ["exp", "cosh"]}]}


def _results(store: Store) -> dict:
    """Store rows by key, without wall-clock fields (they differ between runs)."""
    out = {}
    for r in store.rows():
        result = dict(r["result"])
        result.pop("seconds", None)
        key = (r["analysis"], json.dumps(r["architecture"], sort_keys=True), json.dumps(r["options"]), r["seed"])
        out[key] = (r["status"], r["kind"], result)
    return out


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_local_cluster_equals_serial_and_cli(tmp_path):
    spec = parse_spec(TINY)
    assert len(spec.cases) == 12
    with Store(tmp_path / "serial.sqlite") as serial, Store(tmp_path / "dask.sqlite") as parallel:
        s = run_sweep(spec, serial, workers=0)
        p = run_sweep(spec, parallel, workers=2)
        assert (s["computed"], s["failed"], p["computed"], p["failed"], p["workers"]) == (12, 0, 12, 0, 2)
        assert _results(serial) == _results(parallel)
        rows = {(r["analysis"], r["architecture"]["depth"], r["architecture"]["normalizers"][0]): r
                for r in parallel.rows()}
    # the serial command line computes the same spectrum and jet
    code, out, _ = _cli("spectrum", "--depth", "2", "--width", "2", "--normalizer", "cosh", "--json")
    cli = json.loads(out)
    stored = rows[("spectrum", 2, "cosh(s)")]["result"]
    for key in ("bands", "kernel", "rank", "units", "certified", "bank_size", "order"):
        assert stored[key] == cli[key], key
    assert stored["provenance"]["kind"] == cli["provenance"]["kind"] == cli["certificate"] == "certified"
    code, out, _ = _cli("jet", "--depth", "2", "--width", "2", "--json")
    assert json.loads(out)["sharp_degree"] == rows[("jet", 2, "exp(s)")]["result"]["sharp_degree"] == 7


def test_local_cluster_starts_workers_with_the_sweep_settings(monkeypatch, tmp_path):
    """The local cluster is made under LOCAL_CLUSTER_CONFIG (no MALLOC_TRIM_THRESHOLD_ in
    the workers' environment, no profiler, saturation 1); dask's global config is untouched."""
    import dask
    import distributed

    seen = {}

    class Stop(Exception):
        pass

    def fake_cluster(**kwargs):
        seen.update(environ=dict(dask.config.get("distributed.nanny.pre-spawn-environ")),
                    saturation=dask.config.get("distributed.scheduler.worker-saturation"),
                    profile=dask.config.get("distributed.worker.profile.enabled"))
        raise Stop

    monkeypatch.setattr(distributed, "LocalCluster", fake_cluster)
    with Store(tmp_path / "s.sqlite") as store, pytest.raises(Stop):
        run_sweep(parse_spec(TINY), store, workers=2)
    assert "MALLOC_TRIM_THRESHOLD_" not in seen["environ"]
    assert seen["environ"]["OPENBLAS_NUM_THREADS"] == 1
    assert (seen["saturation"], seen["profile"]) == (1.0, False)
    assert "MALLOC_TRIM_THRESHOLD_" in dask.config.get("distributed.nanny.pre-spawn-environ")


def test_jets_weigh_more_in_the_submission_order():
    spec = parse_spec(TINY)
    cost = {(c.analysis, c.architecture["depth"], c.architecture["normalizers"][0]): c.cost
            for c in spec.cases}
    jets = {a: v for (n, *a), v in cost.items() if n == "jet" for a in [tuple(a)]}
    dims = {a: v for (n, *a), v in cost.items() if n == "dimension" for a in [tuple(a)]}
    assert len(jets) == 4 and all(jets[a] == 4 * dims[a] for a in jets)


def _worker_pids(scheduler_file: Path) -> list[int]:
    """The worker processes' pids, asked by a client in a child process (the test process holds no
    client of its own: two sync clients in one process share futures across event loops, which
    made this test fail now and then with "Event ... bound to a different event loop")."""
    import subprocess
    import sys

    code = ("import json, os; from distributed import Client; "
            f"c = Client(scheduler_file={str(scheduler_file)!r}, timeout='30s'); c.wait_for_workers(2, timeout=60); "
            "print(json.dumps(sorted(c.run(os.getpid).values()))); c.close()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_killed_worker_sweep_completes_every_row_once(tmp_path):
    """A scheduler and two workers in their own processes (as ``dask scheduler`` / ``dask worker``
    on a real cluster); one worker is killed after the first row, its nanny restarts it, and
    every row is still computed exactly once."""
    import subprocess
    import sys
    import time

    spec = parse_spec({"analyses": ["spectrum", "dimension"],
                       "grid": [{"depth": 2, "width": [2, 3], "rank": 1, "tokens": 2,
                                 "normalizer": ["exp", "cosh"]}]})
    bindir = Path(sys.executable).parent
    file = tmp_path / "scheduler.json"
    procs = [subprocess.Popen([str(bindir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                               "--no-dashboard", "--scheduler-file", str(file)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        # no wall-clock bound (a busy machine may start it slowly): the scheduler either writes its
        # file or exits; 3000 polls are only a guard against a scheduler that hangs without either
        for _ in range(3000):
            if file.exists() and file.read_text().strip().endswith("}"):
                break
            assert procs[0].poll() is None, "the dask scheduler exited without starting"
            time.sleep(0.2)
        else:
            pytest.fail("the dask scheduler neither started nor exited")
        address = json.loads(file.read_text())["address"]
        procs.append(subprocess.Popen([str(bindir / "dask"), "worker", "--scheduler-file", str(file),
                                       "--nworkers", "2", "--nthreads", "1", "--no-dashboard"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        pids = _worker_pids(file)
        killed = []

        def kill_one(done, total, case, row):
            if not killed:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])

        with Store(tmp_path / "s.sqlite") as store:
            summary = run_sweep(spec, store, scheduler=address, progress=kill_one)
            assert killed and killed[0] not in _worker_pids(file)
            assert summary["computed"] + summary["failed"] == len(spec.cases) == 8
            keys = [(r["analysis"], json.dumps(r["architecture"], sort_keys=True)) for r in store.rows()]
            assert len(keys) == len(set(keys)) == 8
            errors = [(r["analysis"], r["error"]) for r in store.rows() if r["status"] != "ok"]
            assert summary["failed"] == 0, errors
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in reversed(procs):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_interrupted_sweep_resumes_without_loss_or_duplicates(tmp_path):
    spec = parse_spec(TINY)
    path = tmp_path / "s.sqlite"

    def interrupt(done, total, case, row):
        if done == 5:
            raise KeyboardInterrupt

    with Store(path) as store, pytest.raises(KeyboardInterrupt):
        run_sweep(spec, store, workers=2, progress=interrupt)
    with Store(path) as store:
        first = _results(store)
        assert len(first) == 5
        summary = run_sweep(spec, store, workers=0)
        assert (summary["computed"], summary["reused"], summary["failed"]) == (7, 5, 0)
        after = _results(store)
        assert len(after) == 12 and all(after[k] == v for k, v in first.items())
        assert store.status()["versions"][store.version]["missing"] == 0
        again = run_sweep(spec, store, workers=0)
        assert (again["computed"], again["reused"]) == (0, 12)


def test_failed_and_timed_out_cases_are_rows_and_the_sweep_goes_on(tmp_path):
    spec = parse_spec({"analyses": ["spectrum", "dimension"], "options": {"spectrum": {"order": 2}},
                       "grid": [{"depth": [1, 2], "width": 2}]})
    with Store(tmp_path / "s.sqlite") as store:
        summary = run_sweep(spec, store, workers=0)
        rows = {(r["analysis"], r["architecture"]["depth"]): r for r in store.rows()}
    assert (summary["computed"], summary["failed"]) == (3, 1)
    bad = rows[("spectrum", 2)]
    assert bad["status"] == "failed" and "truncation order 2 is too short" in bad["error"]
    assert rows[("spectrum", 1)]["status"] == "ok"

    spec = parse_spec({"analyses": ["bank"], "limits": {"timeout": 0.01},
                       "grid": [{"depth": 2, "width": 3, "tokens": 3}]})
    with Store(tmp_path / "t.sqlite") as store:
        summary = run_sweep(spec, store, workers=0)
        (row,) = store.rows()
    assert summary["failed"] == 1 and row["status"] == "timeout" and "timed out" in row["error"]


def test_limits_kill_at_time_and_memory():
    import time

    r = run_confined(time.sleep, (30,), timeout=0.3, memory=2**30)
    assert r.status == "timeout"  # killed at the limit: a sleep that ran out would be "ok"
    r = run_confined(bytearray, (400 * 10**6,), timeout=30, memory=100 * 10**6)
    assert r.status == "memory" and "memory limit" in r.error, r


def test_memory_limit_counts_what_the_child_adds():
    """A child inherits its parent's resident pages (a long test session, a loaded notebook):
    the limit is on what the computation adds, not on the inherited size."""
    held = bytearray(b"x" * (300 * 10**6))  # 300 MB resident in the parent
    import time

    r = run_confined(time.sleep, (0.5,), timeout=30, memory=100 * 10**6)  # polled while it runs
    assert r.status == "ok", r
    r = run_confined(_hold, (300 * 10**6,), timeout=30, memory=100 * 10**6)
    assert r.status == "memory", r
    del held


def _hold(size: int) -> None:
    block = bytearray(b"y" * size)  # touched: resident
    import time

    time.sleep(1)
    del block


def test_a_result_that_is_not_json_is_an_error():
    r = run_confined(bytearray, (10,), timeout=30, memory=10**8)
    assert r.status == "failed" and "not JSON" in r.error, r


@pytest.mark.parametrize("spec, message", [
    ('analyses = ["spectrum", "volume"]\n[[grid]]\ndepth = 1\nwidth = 2\n', "unknown analysis 'volume'"),
    ('analyses = ["jet"]\n[[grid]]\ndepth = "two"\nwidth = 2\n', "depth must be a positive integer"),
    ('analyses = ["jet"]\n[[grid]]\ndepth = 1\nwidth = 2\nnormalizer = "nosuch"\n', "nosuch"),
    ('analyses = ["jet"]\n[[grid]]\ndepth = 1\n', "'width' or 'widths' is required"),
    ('analyses = ["jet"]\n[[grid]]\ndepth = 2\nwidths = [[2, 2]]\n', "'widths' alternative"),
    ('analyses = ["jet"]\n[limits]\ntimeout = -1\n[[grid]]\ndepth = 1\nwidth = 2\n', "limits.timeout"),
    ('analyses = ["jet"]\n[options.jet]\nmethod = "fast"\n[[grid]]\ndepth = 1\nwidth = 2\n', "options.jet.method"),
    ('analyses = ["jet"\n', "not valid TOML"),
    ('analyses = ["jet"]\n[[grid]]\nanalyses = ["dimension"]\ndepth = 1\nwidth = 2\n', "named at the top"),
])
def test_bad_spec_refused_before_any_work(tmp_path, spec, message):
    path = tmp_path / "bad.toml"
    path.write_text(spec)
    store = tmp_path / "s.sqlite"
    code, out, err = _cli("sweep", str(path), "--store", str(store))
    assert code == 2 and out == ""
    assert err.startswith("symattn: error: sweep spec") and message in err and err.count("\n") == 1
    assert not store.exists()


def test_example_spec_is_valid_and_small():
    from symattn.sweep.run import load_spec
    spec = load_spec(ROOT / "examples" / "sweep-small.toml")
    assert 16 <= len(spec.cases) <= 40 and not spec.skipped


def test_cli_summary_resume_and_status(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('analyses = ["jet", "dimension"]\n[[grid]]\ndepth = 1\nwidth = [1, 2]\n')
    store = str(tmp_path / "s.sqlite")
    code, out, err = _cli("sweep", str(spec), "--store", store, "--workers", "0", "--json")
    first = json.loads(out)
    assert code == 0 and (first["cases"], first["computed"], first["reused"], first["failed"]) == (4, 4, 0, 0)
    assert err.count("\n") == 5 and "jet D=1 d=2,2 n=2 phi=exp(s) seed=0: exact" in err
    code, out, _ = _cli("sweep", str(spec), "--store", store, "--workers", "0", "--json")
    assert (json.loads(out)["computed"], json.loads(out)["reused"]) == (0, 4)
    code, out, _ = _cli("sweep", "--status", "--store", store)
    assert code == 0 and "4 planned, 4 ok, 0 failed, 0 timed out, 0 over memory, 0 missing" in out
    code, _, err = _cli("sweep", "--status", "--store", str(tmp_path / "none.sqlite"))
    assert code == 2 and "no store at" in err


@pytest.mark.slow
def test_example_sweep_on_two_workers_and_status(tmp_path):
    store = tmp_path / "small.sqlite"
    code, out, err = _cli("sweep", str(ROOT / "examples" / "sweep-small.toml"), "--store", str(store),
                          "--workers", "2", "--json")
    summary = json.loads(out)
    assert code == 0 and summary["failed"] == 0 and summary["computed"] == summary["cases"]
    code, out, _ = _cli("sweep", "--status", "--store", str(store), "--json")
    version = json.loads(out)["versions"]
    assert code == 0 and list(version.values())[0]["missing"] == 0


@pytest.mark.slow
def test_sigterm_stops_cleanly_and_the_rerun_resumes(tmp_path):
    import subprocess
    import sys

    spec = tmp_path / "s.toml"
    spec.write_text('analyses = ["bank", "spectrum"]\n[[grid]]\ndepth = 2\nwidth = [2, 3]\n'
                    'tokens = [2, 3]\nnormalizer = ["exp", "cosh"]\n')
    store = tmp_path / "s.sqlite"
    argv = [sys.executable, "-m", "symattn", "sweep", str(spec), "--store", str(store), "--workers", "2"]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    lines = [proc.stderr.readline(), proc.stderr.readline()]  # the header, then the first finished case
    proc.terminate()
    lines += proc.stderr.readlines()
    assert proc.wait(timeout=120) == 130 and "symattn: interrupted" in lines[-1]
    with Store(store) as s:
        kept = _results(s)
    assert 1 <= len(kept) < 16
    code, out, _ = _cli("sweep", str(spec), "--store", str(store), "--workers", "0", "--json")
    summary = json.loads(out)
    assert (summary["computed"] + summary["reused"], summary["reused"], summary["failed"]) == (16, len(kept), 0)


def test_a_confined_child_under_an_inherited_cpu_hard_limit():
    """Under ``ulimit -t`` (a hard CPU-time limit the child cannot raise, as in the docs test's
    build) a confined child still runs: its own limit stays below the inherited one."""
    import resource
    import subprocess
    import sys

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (600, 600))

    code = ("from symattn.core.confine import run_confined; "
            "r = run_confined(sum, ([1, 2, 3],), timeout=1200, memory=2**30); print(r.status)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=limit, check=True)
    assert out.stdout.strip() == "ok", out
