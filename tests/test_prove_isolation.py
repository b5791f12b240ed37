"""Proof packages run isolated (issue 43, item 2): each source in a child process with limits.

Replays of the hostile corpus's package cases: a package that exits, crashes, hangs, interrupts
itself, prints a fake summary, forges a row with its STATEMENT, sits beside a ``networkx.py``, has
a syntax error or is a link loop. Each is that package's failure (exit 1, one line) or a bad input
(exit 2, one line), never the run's success, and the paper's failures stay in the table.
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FakeProofs
from symattn.cli import main
from symattn.theorems import registry
from symattn.theorems.isolation import ProtocolError, one_line, parse

_HEADER = "from symattn.render.derivation import Derivation\n"


def _script(name: str, body: str = "", statement: str = "Lemma", before: str = "") -> str:
    """A proof script that passes after running ``body`` (at import: ``before``)."""
    return (f'"""{name}."""\n{_HEADER}{before}STATEMENT = {statement!r}\nKIND = "exact"\n\n\n'
            f"def run(full=False):\n{body}"
            f'    d = Derivation({name!r}, "t", "s", KIND)\n    d.check("c", 1, 1)\n    return d\n')


def _package(root: Path, name: str, scripts: dict[str, str], init: str | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    if init is not None:
        (folder / "__init__.py").write_text(init)
    for script, text in scripts.items():
        (folder / f"{script}.py").write_text(text)
    importlib.invalidate_caches()
    return folder


@pytest.fixture(autouse=True)
def _forget_packages() -> None:
    yield
    for name in [n for n in sys.modules if n.split(".")[0].startswith("iso_")]:
        del sys.modules[name]


def _prove(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["prove", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def _printed(text: str, start: str) -> bool:
    """Whether a line of ``text`` starts with ``start`` (a package's own output quoted in a FAIL line is not)."""
    return any(line.startswith(start) for line in text.splitlines())


def _rows(out: str) -> dict[str, str]:
    """The table's rows by id (between the rule and the blank line)."""
    lines = out.split("\n\n")[0].splitlines()[2:]
    return {line.split()[0]: line for line in lines}


# ------------------------------------------------------------------ exits, crashes, hangs, interrupts

@pytest.mark.parametrize(("exit_call", "why"), [
    ("sys.exit(0)", "its package does not import: SystemExit: 0 [__init__.py:3]"),
    ("os._exit(0)", "its process ended (exit status 0) while importing its package"),
    ("raise KeyboardInterrupt", "its package does not import: KeyboardInterrupt"),
    ("os.kill(os.getpid(), signal.SIGSEGV)", "its process ended (killed by SIGSEGV) while importing its package"),
])
def test_a_package_that_ends_at_import_is_its_failure_and_the_papers_failures_stay(
        fake_proofs: FakeProofs, tmp_path: Path, capsys: pytest.CaptureFixture[str], exit_call: str,
        why: str) -> None:
    folder = _package(tmp_path / "p", "iso_exit", {"l1_a": _script("l1_a")},
                      init=f"import os, signal, sys\nprint('17 proofs: 17 passed')\n{exit_call}\n")
    status, out, err = _prove(capsys, "--path", str(folder))
    assert status == 1
    rows = _rows(out)
    assert list(rows) == ["t1_alpha", "t2_beta", "t10_gamma", "n1_delta", "iso_exit:"]
    assert rows["t2_beta"].endswith("FAIL") and rows["iso_exit:"].endswith("FAIL")
    assert "5 proofs: 2 passed, 3 failed" in out
    failure = [line for line in out.splitlines() if line.startswith("FAIL iso_exit:")]
    assert len(failure) == 1 and "not run (1): l1_a" in failure[0]
    assert failure[0].startswith(f"FAIL iso_exit:: folder {folder}: {why}")
    assert not _printed(out + err, "17 proofs")
    assert "Traceback" not in out + err


@pytest.mark.parametrize(("exit_call", "why"), [
    ("sys.exit(0)", "SystemExit: 0"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    ("signal.raise_signal(signal.SIGINT)", "KeyboardInterrupt"),
    ("os._exit(0)", "its process ended (exit status 0) during the proof"),
    ("os.kill(os.getpid(), signal.SIGSEGV)", "killed by SIGSEGV"),
    ("os.kill(os.getpid(), signal.SIGKILL)", "killed by SIGKILL"),
])
def test_a_proof_that_exits_crashes_or_interrupts_fails_alone(
        fake_proofs: FakeProofs, tmp_path: Path, capsys: pytest.CaptureFixture[str], exit_call: str,
        why: str) -> None:
    folder = _package(tmp_path / "p", "iso_run", {
        "l1_a": _script("l1_a", f"    import os, signal, sys\n    print('17 proofs: 17 passed')\n    {exit_call}\n"),
        "l2_b": _script("l2_b")})
    status, out, err = _prove(capsys, "--path", str(folder), "iso_run:")
    assert status == 1
    rows = _rows(out)
    assert list(rows) == ["iso_run:l1_a", "iso_run:l2_b"]
    assert rows["iso_run:l1_a"].endswith("FAIL") and rows["iso_run:l2_b"].endswith("PASS")
    assert why in out
    assert not _printed(out + err, "17 proofs")
    assert err.splitlines() == ["[1/2] iso_run:l1_a ...", "[2/2] iso_run:l2_b ..."]


def test_a_hanging_proof_is_killed_at_the_time_limit_and_the_rest_runs(
        fake_proofs: FakeProofs, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _package(tmp_path / "p", "iso_hang", {
        "l1_a": _script("l1_a", "    while True:\n        pass\n"), "l2_b": _script("l2_b")})
    status, out, _ = _prove(capsys, "--path", str(folder), "iso_hang:", "--time-limit", "3",
                            "--source-time-limit", "90")
    assert status == 1
    rows = _rows(out)
    assert rows["iso_hang:l1_a"].endswith("FAIL") and rows["iso_hang:l2_b"].endswith("PASS")
    assert "FAIL iso_hang:l1_a: killed at the time limit per proof (3 s)" in out


def test_the_source_time_limit_stops_the_source_in_one_line(
        fake_proofs: FakeProofs, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _package(tmp_path / "p", "iso_slow", {
        "l1_a": _script("l1_a", "    import time\n    time.sleep(600)\n"), "l2_b": _script("l2_b"),
        "l3_c": _script("l3_c")})
    status, out, _ = _prove(capsys, "--path", str(folder), "iso_slow:", "--source-time-limit", "2")
    assert status == 1
    assert list(_rows(out)) == ["iso_slow:l1_a", "iso_slow:"]
    assert "FAIL iso_slow:l1_a: killed at the time limit of the source (2 s)" in out
    assert "FAIL iso_slow:: folder " in out and "not run (2): l2_b, l3_c" in out


def test_the_memory_limit_holds_in_the_child(fake_proofs: FakeProofs, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    folder = _package(tmp_path / "p", "iso_mem", {
        "l1_a": _script("l1_a", "    block = bytearray(8 << 30)\n"), "l2_b": _script("l2_b")})
    status, out, _ = _prove(capsys, "--path", str(folder), "iso_mem:", "--memory-limit", "4")
    assert status == 1
    assert "FAIL iso_mem:l1_a: MemoryError" in out
    assert _rows(out)["iso_mem:l2_b"].endswith("PASS")


@pytest.mark.parametrize("option", ["--time-limit", "--source-time-limit", "--memory-limit"])
@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_bad_limits_are_bad_input(fake_proofs: FakeProofs, capsys: pytest.CaptureFixture[str], option: str,
                                  value: str) -> None:
    status, out, err = _prove(capsys, "t1", f"{option}={value}")
    assert (status, out) == (2, "")
    assert err.startswith(f"symattn: error: {option} must be a positive number") and err.count("\n") == 1


# ------------------------------------------------------------------ listing

def test_list_reports_a_package_whose_import_exits_and_lists_the_rest(
        fake_proofs: FakeProofs, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "site"
    _package(root, "iso_installed", {"l1_a": _script("l1_a")}, init="import os\nos._exit(0)\n")
    _package(root, "iso_fine", {"l1_b": _script("l1_b", statement="Fine lemma")}, init="")
    monkeypatch.syspath_prepend(str(root))
    entries = [_Entry("bad", "iso_installed"), _Entry("fine", "iso_fine"), _Entry("gone", "iso_not_there")]
    monkeypatch.setattr(registry, "_entry_point_sources", _REAL_ENTRY_POINTS)
    monkeypatch.setattr(registry.importlib.metadata, "entry_points",
                        lambda group: entries if group == "symattn.proofs" else [])
    status, out, err = _prove(capsys, "--list")
    assert status == 1
    rows = _rows(out)
    assert list(rows) == ["t1_alpha", "t2_beta", "t10_gamma", "n1_delta", "bad:", "fine:l1_b", "gone:"]
    assert "Fine lemma" in rows["fine:l1_b"]
    fails = [line for line in out.splitlines() if line.startswith("FAIL ")]
    assert [line.split()[1] for line in fails] == ["bad::", "gone::"]
    assert "while importing its package" in fails[0] and "no module named 'iso_not_there'" in fails[1]
    status, out, err = _prove(capsys, "fine:")  # a broken package is not imported when not asked for
    assert (status, err) == (0, "[1/1] fine:l1_b ...\n")


def test_list_of_a_package_with_a_syntax_error_is_one_line_not_a_crash(
        fake_proofs: FakeProofs, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _package(tmp_path / "p", "iso_syntax", {"l1_a": "def broken(:\n", "l2_b": _script("l2_b")})
    status, out, err = _prove(capsys, "--path", str(folder), "--list", "iso_syntax:")
    assert status == 1
    assert [line for line in out.splitlines() if line.startswith("FAIL")] == [
        line for line in out.splitlines() if "SyntaxError" in line]
    assert out.count("SyntaxError") == 1 and "Traceback" not in out + err
    bad_init = _package(tmp_path / "q", "iso_syntax2", {"l1_a": _script("l1_a")}, init="def broken(:\n")
    status, out, err = _prove(capsys, "--path", str(bad_init), "--list", "--json", "iso_syntax2:")
    assert status == 1
    assert json.loads(out)[0]["id"] == "iso_syntax2:" and "SyntaxError" in json.loads(out)[0]["error"]
    assert err.count("\n") == 1 and "SyntaxError" in err


def test_list_marks_only_the_script_that_fails_to_import(
        fake_proofs: FakeProofs, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _package(tmp_path / "p", "iso_listed", {
        "l1_a": _script("l1_a"), "l2_b": "raise RuntimeError('no import')\n" + _script("l2_b")})
    status, out, err = _prove(capsys, "--path", str(folder), "--list", "iso_listed:")
    assert status == 1
    failed = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert len(failed) == 1 and "l2_b" in failed[0] and "no import" in failed[0]
    assert any("l1_a" in line and not line.startswith("FAIL") for line in out.splitlines())


def test_a_symlink_loop_is_bad_input(fake_proofs: FakeProofs, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    loop = tmp_path / "iso_loop"
    loop.symlink_to(loop)
    for argv in (["--path", str(loop)], ["--path", str(loop), "--list"]):
        status, out, err = _prove(capsys, *argv)
        assert (status, out) == (2, "")
        assert err.startswith("symattn: error: --path ") and "symbolic link loop" in err
        assert err.count("\n") == 1


# ------------------------------------------------------------------ what is imported

def test_nothing_beside_a_path_package_is_imported(fake_proofs: FakeProofs, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "PWNED"
    root = tmp_path / "work"  # tmp_path itself holds the fake paper package, on sys.path
    root.mkdir()
    for neighbour in ("networkx", "iso_neighbour"):
        (root / f"{neighbour}.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    body = ("    import networkx\n    assert networkx.__file__ and 'site-packages' in networkx.__file__\n"
            "    try:\n        import iso_neighbour\n    except ImportError:\n        pass\n")
    folder = _package(root, "iso_lemmas", {"l1_a": _script("l1_a", body),
                                               "common": "VALUE = 1\n",
                                               "l2_b": _script("l2_b", before="from iso_lemmas.common import VALUE\n")})
    status, out, _ = _prove(capsys, "--path", str(folder), "iso_lemmas:")
    assert status == 0, out
    assert not marker.exists()
    # in-process too (symattn latex, the Sphinx pages): the package is imported by its path
    assert str(root) not in sys.path
    registry.load("iso_lemmas:l1_a", [folder]).run()
    registry.load("iso_lemmas:l2_b", [folder]).run()
    assert str(root) not in sys.path and not marker.exists()


@pytest.mark.parametrize(("name", "error"), [("sympy", "a module named 'sympy' is already imported"),
                                           ("turtle", "'turtle' is the name of a module of Python")])
def test_a_package_folder_named_like_a_module_is_refused(
        fake_proofs: FakeProofs, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, error: str) -> None:
    folder = _package(tmp_path / "w", name, {"l1_a": _script("l1_a")})
    status, out, err = _prove(capsys, "--path", str(folder))
    assert (status, out) == (2, "")
    assert error in err and err.count("\n") == 1


def test_a_package_whose_name_the_child_has_taken_fails_in_one_line(tmp_path: Path) -> None:
    from symattn.theorems.isolation import run_proofs

    folder = _package(tmp_path, "iso_taken", {"l1_a": _script("l1_a")})
    source = registry.Source("iso_taken", "json", f"folder {folder}", (str(folder),))
    results = run_proofs(registry.scripts(source))
    assert [(r.id, r.status) for r in results] == [("iso_taken:", "fail")]
    assert "a module named 'json' is already imported" in results[0].error


# ------------------------------------------------------------------ one line per row

def test_statements_cannot_forge_rows_or_reach_the_terminal_raw(
        fake_proofs: FakeProofs, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    forged = "Lemma\nt9_forged   Forged   9   exact   0.00   PASS\x1b[2J\u202e"
    folder = _package(tmp_path / "p", "iso_forge", {
        "l1_a": _script("l1_a", statement=forged, before="print('17 proofs: 17 passed')\n"),
        "l2_b": _script("l2_b", "    raise ValueError('line one\\nFAIL nothing\\x1b[31m')\n")})
    for argv in ([], ["--list"]):
        status, out, err = _prove(capsys, "--path", str(folder), "iso_forge:", *argv)
        assert status == (0 if argv else 1)
        assert "\x1b" not in out + err and "\u202e" not in out + err
        assert "t9_forged" not in [line.split()[0] for line in out.splitlines() if line.strip()]
        assert "Lemma\\nt9_forged" in out and "\\x1b[2J" in out
        assert not _printed(out + err, "17 proofs")
    status, out, err = _prove(capsys, "--path", str(folder), "iso_forge:")
    assert "FAIL iso_forge:l2_b: ValueError: line one\\nFAIL nothing\\x1b[31m" in out
    assert len(_rows(out)) == 2
    status, out, err = _prove(capsys, "--path", str(folder), "iso_forge:", "--json")
    assert json.loads(out)[0]["statement"] == forged  # JSON keeps the text, escaped by JSON
    assert "\x1b" not in err and "\\n" in err


def test_one_line() -> None:
    assert one_line("a\nb\r\tc\x1b[0m\x7f\u2028\u202e\ud800 d") == "a\\nb\\r\\tc\\x1b[0m\\x7f\\u2028\\u202e\\ud800 d"


# ------------------------------------------------------------------ the protocol

_GOOD = {"event": "result", "script": "l1_a", "statement": "s", "status": "pass", "cases": 1, "kind": "exact",
         "error": ""}


@pytest.mark.parametrize("change", [
    {"cases": True}, {"cases": -1}, {"cases": 1.0}, {"cases": "1"}, {"status": "PASS"}, {"status": "pass", "error": "x"},
    {"status": "fail", "error": ""}, {"kind": "proved"}, {"statement": None}, {"script": 1}, {"extra": 1},
    {"event": "finished"},
])
def test_malformed_messages_are_refused(change: dict[str, object]) -> None:
    assert parse(json.dumps(_GOOD).encode()) == _GOOD
    with pytest.raises(ProtocolError):
        parse(json.dumps({**_GOOD, **change}).encode())
    missing = dict(_GOOD)
    del missing["kind"]
    for line in (json.dumps(missing).encode(), b"[1]", b"{", b"\xff", b"1" * 100 + b"e99999999"):
        with pytest.raises(ProtocolError):
            parse(line)


def test_a_malformed_or_forged_message_is_the_sources_failure(
        fake_proofs: FakeProofs, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = json.dumps({**_GOOD, "cases": True}) + "\n"
    folder = _package(tmp_path / "p", "iso_proto", {
        "l1_a": _script("l1_a", f"    import os, sys\n    os.write(int(sys.argv[2]), {line.encode()!r})\n"),
        "l2_b": _script("l2_b")})
    status, out, _ = _prove(capsys, "--path", str(folder), "iso_proto:")
    assert status == 1
    assert list(_rows(out)) == ["iso_proto:"]
    assert "malformed message: the field 'cases' is not a int" in out and "not run (2): l1_a, l2_b" in out


def test_a_result_for_another_script_is_the_sources_failure(
        fake_proofs: FakeProofs, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = json.dumps({**_GOOD, "script": "l2_b"}) + "\n"  # well formed, but for the next proof
    folder = _package(tmp_path / "p", "iso_other", {
        "l1_a": _script("l1_a", f"    import os, sys\n    os.write(int(sys.argv[2]), {line.encode()!r})\n"),
        "l2_b": _script("l2_b")})
    status, out, _ = _prove(capsys, "--path", str(folder), "iso_other:")
    assert status == 1
    assert list(_rows(out)) == ["iso_other:"] and "not run (2): l1_a, l2_b" in out


# ------------------------------------------------------------------ scale and interrupts

def _trivial(root: Path, name: str, count: int) -> Path:
    return _package(root, name, {f"l{i}_x": _script(f"l{i}_x") for i in range(1, count + 1)})


def test_discovery_and_running_are_linear_in_the_number_of_proofs(
        fake_proofs: FakeProofs, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """400 and 1600 trivial proofs: one folder listing per source, one child, work in proportion."""
    import pkgutil

    visited = []
    listing = pkgutil.iter_modules

    def counted(*args, **kwargs):
        for info in listing(*args, **kwargs):
            visited.append(info.name)
            yield info

    monkeypatch.setattr(registry.pkgutil, "iter_modules", counted)
    work, cpu = {}, {}
    for count in (400, 1600):
        folder = _trivial(tmp_path / str(count), f"iso_many{count}", count)
        visited.clear()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        status, out, err = _prove(capsys, "--path", str(folder), f"iso_many{count}:")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert status == 0 and f"{count} proofs: {count} passed, 0 failed" in out
        work[count] = len(visited)
        cpu[count] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    assert work[1600] <= 4 * work[400] + 8  # each script listed a bounded number of times
    assert cpu[1600] < 8 * cpu[400]  # CPU time (not wall-clock): quadratic would be 16 times


def test_ctrl_c_exits_130_and_leaves_no_child(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    folder = _package(tmp_path / "p", "iso_sigint", {"l1_a": _script(
        "l1_a", f"    import os, subprocess, time\n    grand = subprocess.Popen(['sleep', '600'])\n"
                f"    open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{grand.pid}}')\n    time.sleep(600)\n")})
    parent = subprocess.Popen([sys.executable, "-m", "symattn", "prove", "--path", str(folder), "iso_sigint:"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if pids.exists() and pids.read_text().count(" ") == 1:
                break
            time.sleep(0.1)
        parent.send_signal(signal.SIGINT)
        _, err = parent.communicate(timeout=60)
    finally:
        parent.kill()
    assert parent.returncode == 130
    assert err.rstrip().endswith("symattn: interrupted")
    for pid in map(int, pids.read_text().split()):
        for _ in range(100):
            if not _alive(pid):
                break
            time.sleep(0.1)
        assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "zombie" in status.read_text())


class _Entry:
    def __init__(self, name: str, value: str) -> None:
        self.name, self.value = name, value
        self.dist = type("Dist", (), {"name": "isodist", "version": "1.0"})()


_REAL_ENTRY_POINTS = registry._entry_point_sources
