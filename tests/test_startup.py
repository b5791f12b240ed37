"""Start-up: a command imports only what it needs (no sympy, mpmath, matplotlib, torch, dask)."""

import json
import subprocess
import sys

import pytest

HEAVY = ("sympy", "mpmath", "matplotlib", "torch", "dask", "scipy", "symengine")

#: What the top-level help and ``--version`` need none of: no command module is imported.
COMPUTE = ("numpy", "flint", "networkx")

_CHILD = """
import contextlib, io, json, sys
from symattn.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    status = main(json.loads(sys.argv[1]))
print(json.dumps({"status": status, "modules": sorted({m.split(".")[0] for m in sys.modules}),
                  "commands": sorted(m for m in sys.modules if m.startswith("symattn.commands."))}))
"""


@pytest.mark.parametrize("argv", [
    ["--version"],
    ["spectrum", "--help"],
    ["spectrum", "--depth", "1", "--width", "2", "--rank", "1", "--tokens", "2", "--json"],
    ["spectrum", "--depth", "1", "--width", "2", "--rank", "1", "--tokens", "2", "--method", "exact"],
], ids=["version", "spectrum-help", "spectrum", "spectrum-exact"])
def test_a_command_does_not_import_the_heavy_libraries(argv):
    run = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(argv)], capture_output=True, text=True,
                         check=True)
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["status"] == 0
    assert not [m for m in HEAVY if m in out["modules"]], out["modules"]
    if argv[0] != "--version":  # the command's own module and its helpers, no other command
        assert set(out["commands"]) <= {"symattn.commands.spectrum", "symattn.commands.layer_options"}, \
            out["commands"]


@pytest.mark.parametrize("argv", [["--help"], [], ["frobnicate"], ["--version"]],
                         ids=["help", "no-command", "unknown-command", "version"])
def test_the_top_level_imports_no_command_module(argv):
    run = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(argv)], capture_output=True, text=True,
                         check=True)
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["status"] == (0 if argv in (["--help"], ["--version"]) else 2)
    assert not [m for m in HEAVY + COMPUTE if m in out["modules"]], out["modules"]
    assert out["commands"] == [], out["commands"]


def test_the_lazy_listing_is_the_full_one():
    """``symattn --help`` read from the sources is the help with every command imported."""
    from symattn.cli import _build, help_texts

    assert _build(lazy=True)[0].format_help() == help_texts()["symattn"]


def test_the_program_exits_with_mains_status_and_a_frozen_heap():
    """``python -m symattn`` (and the ``symattn`` script, ``cli.console``) returns ``main``'s status
    and freezes the heap before the interpreter's exit (its last collections skip it)."""
    bad = subprocess.run([sys.executable, "-m", "symattn", "spectrum", "--depth", "0", "--width", "2"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("symattn: error:")
    code = ("import gc, sys\nfrom symattn.cli import console\nsys.argv = ['symattn', '--version']\n"
            "status = console()\nprint(status, gc.get_freeze_count() > 0, gc.isenabled())\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split()[-3:] == ["0", "True", "True"]  # the collector on again after the program
