"""Start-up: a command imports only what it needs (no sympy, mpmath, matplotlib, torch, dask)."""

import json
import subprocess
import sys

import pytest

HEAVY = ("sympy", "mpmath", "matplotlib", "torch", "dask", "scipy", "symengine")

_CHILD = """
import contextlib, io, json, sys
from symattn.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    status = main(json.loads(sys.argv[1]))
print(json.dumps({"status": status, "modules": sorted({m.split(".")[0] for m in sys.modules})}))
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
