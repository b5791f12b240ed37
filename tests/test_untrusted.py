"""Untrusted input stays inert and bounded (issue 11).

Three layers: the whitelist parser refuses code and runs nothing; a committed
corpus of hostile command lines (``tests/data/hostile_argv.json``) is replayed
with its required exit statuses; and a hypothesis fuzzer draws command lines
from the parsers' own option lists and hostile values, asserting that every
run ends with status 0, 1 or 2, never a traceback or an internal error, within
a bound of CPU time (never the wall clock: a busy machine does not fail it).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symattn.cli import _build, main
from symattn.core.errors import SymattnError
from symattn.model.normalizer import Normalizer
from symattn.core.parse import parse_expression, parse_matrix

CORPUS = json.loads((Path(__file__).parent / "data" / "hostile_argv.json").read_text())["cases"]

INJECTIONS = [
    "__import__('os').system('touch pwned') or exp(s)",
    "exp(s) if open('pwned', 'w') else exp(s)",
    "(lambda: open('pwned', 'w'))() or exp(s)",
    "exp(s).__class__",
    "getattr(exp, '__globals__')",
    "eval('1')",
    "exec('x=1')",
    "[open('pwned','w') for _ in (1,)]",
    "exp(s); import os",
    "s.__init__",
    "Symbol('pwned')",
    "S('pwned')",
    "Function('f')(s)",
]


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("text", INJECTIONS)
def test_injection_is_refused_and_runs_nothing(text: str, in_tmp: Path) -> None:
    with pytest.raises(SymattnError):
        parse_expression(text)
    with pytest.raises(SymattnError):
        Normalizer(text)
    with pytest.raises(SymattnError):
        parse_matrix(f"[[{text}]]")
    assert not (in_tmp / "pwned").exists()


@pytest.mark.parametrize("text, expected", [
    ("exp(s^2+s^3)", "exp(s**3 + s**2)"),
    ("1 + tanh(s)/2", "tanh(s)/2 + 1"),
    ("0.1*s + 1", "s/10 + 1"),
    ("2**(1/2)*s", "sqrt(2)*s"),
    ("-(-s)", "s"),
    ("cosh(pi*s)", "cosh(pi*s)"),
])
def test_admitted_expressions_are_exact(text: str, expected: str) -> None:
    assert str(parse_expression(text)) == expected


@pytest.mark.parametrize("argv, status", CORPUS, ids=[" ".join(c[0])[:60] for c in CORPUS])
def test_hostile_corpus(argv: list[str], status: int, in_tmp: Path,
                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == status
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err
    if status == 2:
        assert err.startswith("symattn: error: ") and err.count("\n") == 1, err
    assert not (in_tmp / "pwned").exists()
    assert not any(in_tmp.iterdir()), "a refused command left files behind"


def test_internal_error_is_reported_as_a_bug(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    import symattn.commands.normalizer as command

    def broken(args: argparse.Namespace) -> int:
        raise KeyError("a bug")

    monkeypatch.setattr(command, "run", broken)
    assert main(["normalizer", "exp"]) == 70
    err = capsys.readouterr().err
    assert err.startswith("symattn: internal error (a bug in symattn") and "--debug" in err
    assert "Traceback" not in err
    assert main(["normalizer", "exp", "--debug"]) == 70
    assert "Traceback" in capsys.readouterr().err


# ------------------------------------------------------------------ fuzzing
# Commands that run proof scripts or long protocols on valid input are left to
# the corpus; every other command is fuzzed with its own options.
_SKIP = {"prove", "latex", "reproduce"}
_VALUES = ["-1", "0", "1", "2", "99999999999", "1e999", "nan", "-0.5", "0.3", "a", "",
           "exp", "cosh", "__import__('os').system('touch pwned')", "[[1,0]]", "[[1,0],[0,1]]",
           "1,1", "x.png", "/nonexistent/x.png", "auto", "10**10**10", "\x00", "é"]


def _options() -> dict[str, list[tuple[str, bool]]]:
    """Each fuzzed command's options: (option string, takes a value)."""
    _, subparsers = _build()
    table = {}
    for name, parser in subparsers.choices.items():
        if name in _SKIP:
            continue
        opts = []
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction) or action.dest == "debug":
                continue
            flag = action.option_strings[0] if action.option_strings else None
            opts.append((flag, action.nargs != 0))
        table[name] = opts
    return table


_OPTIONS = _options()


@st.composite
def command_lines(draw) -> list[str]:
    name = draw(st.sampled_from(sorted(_OPTIONS)))
    argv = [name]
    chosen = draw(st.lists(st.sampled_from(_OPTIONS[name]), max_size=6, unique=True))
    for flag, takes_value in chosen:
        value = draw(st.sampled_from(_VALUES))
        if flag is None:
            argv.append(value)
        elif takes_value:
            argv += [flag, value]
        else:
            argv.append(flag)
    # Mostly small valid sizes, so that the fuzzer also reaches the analyses.
    for flag in ("--depth", "--width"):
        if any(f == flag for f, _ in _OPTIONS[name]) and draw(st.booleans()):
            argv += [flag, draw(st.sampled_from(["1", "2"]))]
    return argv


class _Hang(Exception):
    pass


@settings(max_examples=int(os.environ.get("SYMATTN_FUZZ_EXAMPLES", "40")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(argv=command_lines())
def test_fuzz_command_line(argv: list[str], in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def hang(signum, frame):
        raise _Hang(f"no answer within 60 s of CPU time: symattn {' '.join(argv)}")

    # CPU time (SIGPROF), not the wall clock: other jobs on a busy machine do not count
    previous = signal.signal(signal.SIGPROF, hang)
    signal.setitimer(signal.ITIMER_PROF, 60)
    try:
        status = main(argv)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
    err = capsys.readouterr().err
    assert status in (0, 1, 2), (argv, status, err)
    assert "Traceback" not in err and "internal error" not in err, (argv, err)
    assert not (in_tmp / "pwned").exists()
