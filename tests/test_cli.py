"""Tests of the command line on the fake proof package (never the real proofs)."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import symattn
import symattn.commands
from conftest import ROOT, FakeProofs
from symattn.cli import help_texts, main

_FAKE_COMMAND = '''\
"""A fake subcommand for the tests."""
from symattn.core.errors import SymattnError


def register(subparsers):
    parser = subparsers.add_parser("{name}", help="fake command")
    parser.add_argument("mode", choices=["ok", "fail", "error", "interrupt"])
    parser.set_defaults(func=run)


def run(args):
    if args.mode == "error":
        raise SymattnError("bad input, try another mode")
    if args.mode == "interrupt":
        raise KeyboardInterrupt
    return {{"ok": 0, "fail": 1}}[args.mode]
'''


@pytest.fixture
def fake_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Extra modules in symattn.commands: aa_fake and zz_fake register, aa_helper does not."""
    (tmp_path / "aa_fake.py").write_text(_FAKE_COMMAND.format(name="aafake"))
    (tmp_path / "zz_fake.py").write_text(_FAKE_COMMAND.format(name="zzfake"))
    (tmp_path / "aa_helper.py").write_text('"""Not a command: no register()."""\n')
    monkeypatch.setattr(symattn.commands, "__path__", [*symattn.commands.__path__, str(tmp_path)])
    yield
    for name in ("aa_fake", "zz_fake", "aa_helper"):
        sys.modules.pop(f"symattn.commands.{name}", None)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    declared = importlib.metadata.version("symattn")  # pyproject reads it from symattn.__version__
    assert symattn.__version__ == declared
    assert _run(capsys, "--version") == (0, f"symattn {declared}\n", "")


def test_help_lists_commands_and_examples(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "--help")
    assert status == 0
    assert out.startswith("usage: symattn")
    assert "examples:\n  symattn prove " in out
    assert "    prove " in out
    assert "    latex " in out


def test_missing_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys)
    assert (status, out) == (2, "")
    assert err == "symattn: error: the following arguments are required: COMMAND (see 'symattn --help')\n"


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(capsys, "frobnicate")
    assert status == 2
    assert "invalid choice: 'frobnicate'" in err


def test_commands_are_discovered_in_sorted_order(fake_commands: None) -> None:
    names = [key.removeprefix("symattn ") for key in help_texts() if key != "symattn"]
    assert "aa_helper" not in names
    assert names.index("aafake") < names.index("latex") < names.index("prove") < names.index("zzfake")
    assert help_texts()["symattn zzfake"].startswith("usage: symattn zzfake")


@pytest.mark.parametrize(
    ("mode", "status", "err"),
    [
        ("ok", 0, ""),
        ("fail", 1, ""),
        ("error", 2, "symattn: error: bad input, try another mode\n"),
        ("interrupt", 130, "symattn: interrupted\n"),
    ],
)
def test_exit_statuses(
    fake_commands: None, capsys: pytest.CaptureFixture[str], mode: str, status: int, err: str
) -> None:
    assert _run(capsys, "zzfake", mode) == (status, "", err)


def test_prove_all_prints_table_and_fails(
    fake_proofs: FakeProofs, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = _run(capsys, "prove")
    assert status == 1
    assert err.splitlines() == [
        "[1/4] t1_alpha ...",
        "[2/4] t2_beta ...",
        "[3/4] t10_gamma ...",
        "[4/4] n1_delta ...",
    ]
    lines = out.splitlines()
    assert lines[0].split() == ["id", "statement", "cases", "kind", "seconds", "result"]
    rows = {line.split()[0]: line for line in lines[2:6]}
    assert list(rows) == ["t1_alpha", "t2_beta", "t10_gamma", "n1_delta"]
    assert rows["t1_alpha"].split()[-4:-2] == ["2", "exact"]
    assert rows["t1_alpha"].endswith("PASS")
    assert rows["t2_beta"].endswith("FAIL")
    assert "Fake 10: a square root" in rows["t10_gamma"]
    assert "4 proofs: 2 passed, 2 failed" in out
    assert "FAIL t2_beta: AssertionError: t2_beta: check 'eq. (2)' failed" in out
    assert "FAIL n1_delta: RuntimeError: boom" in out


def test_prove_selected_passing(fake_proofs: FakeProofs, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, "prove", "t10", "t1", "--full")
    assert status == 0
    assert err.splitlines() == ["[1/2] t1_alpha ...", "[2/2] t10_gamma ..."]
    assert out.splitlines()[2].split()[:2] == ["t1_alpha", "Fake"]
    assert "  3  " in out.splitlines()[2]
    assert "2 proofs: 2 passed, 0 failed" in out


def test_prove_json(fake_proofs: FakeProofs, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, "prove", "--json")
    assert status == 1
    results = json.loads(out)
    assert [set(r) for r in results] == [{"id", "source", "statement", "status", "cases", "kind", "seconds"}] * 4
    assert [(r["id"], r["status"], r["cases"], r["kind"]) for r in results] == [
        ("t1_alpha", "pass", 2, "exact"),
        ("t2_beta", "fail", 0, "exact"),
        ("t10_gamma", "pass", 1, "certified"),
        ("n1_delta", "fail", 0, "numerical"),
    ]
    assert "n1_delta: RuntimeError: boom" in err


def test_prove_list_does_not_run(fake_proofs: FakeProofs, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, "prove", "--list", "n1", "t2")
    assert (status, err) == (0, "")
    assert out.splitlines()[0].split() == ["id", "name", "source", "kind", "title"]
    assert [line.split()[:4] for line in out.splitlines()[2:]] == [
        ["t2_beta", "beta", "symattn", "exact"],
        ["n1_delta", "delta", "symattn", "numerical"],
    ]
    status, out, _ = _run(capsys, "prove", "--list", "--json", "t1")
    assert json.loads(out) == [{"id": "t1_alpha", "name": "alpha", "source": "symattn", "kind": "exact",
                                "statement": "Fake 1: binomial square"}]


def test_prove_unknown_id_is_a_user_error(
    fake_proofs: FakeProofs, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = _run(capsys, "prove", "t1", "t99")
    assert (status, out) == (2, "")
    assert err.startswith("symattn: error: unknown proof id 't99'; known ids: t1_alpha, ")
    assert "Traceback" not in err


def test_latex(fake_proofs: FakeProofs, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, "latex", "t1")
    assert (status, err) == (0, "")
    assert out.startswith(r"\paragraph{t1\_alpha: Binomial square (exact).}")
    assert "\\[ x^{2} + 2 x + 1 \\]" in out
    status, out, err = _run(capsys, "latex", "t2_beta")
    assert (status, out) == (1, "")
    assert err.startswith("symattn: proof t2_beta failed: AssertionError")


def test_latex_ambiguous_prefix(fake_proofs: FakeProofs, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(capsys, "latex", "t")
    assert status == 2
    assert err == ("symattn: error: 't' is ambiguous: t1_alpha, t2_beta, t10_gamma; give one id, "
                   "or --document for one document of all of them\n")


def test_python_dash_m(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = [sys.executable, "-m", "symattn"]
    done = subprocess.run([*run, "--version"], capture_output=True, text=True, env=env, check=False)
    assert (done.returncode, done.stdout.split()[0]) == (0, "symattn")
    done = subprocess.run(
        [*run, "prove", "no-such-proof"], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 2
    assert done.stderr.startswith("symattn: error: ")
    assert "Traceback" not in done.stderr


def test_every_option_has_help_that_states_its_default() -> None:
    import argparse

    from symattn.cli import _build

    _, subparsers = _build()
    for name, parser in subparsers.choices.items():
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, (name, action.option_strings or action.dest)
            if action.default not in (None, False) and not isinstance(action, argparse._StoreTrueAction):
                assert "default" in action.help, (name, action.option_strings, action.help)
