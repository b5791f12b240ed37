"""The spectrum's memory estimate (core.limits.spectrum_bytes) against measured peaks.

Each case runs in a fresh child process: the interpreter and its lazy imports are warmed by a
tiny spectrum first, then the peak resident set (``VmHWM`` of ``/proc/self/status``, reset through
``/proc/self/clear_refs``; ``getrusage`` would report the forking parent's peak) above the resident
set at that point is compared with the estimate, which must be within a factor 2 (neither
generous nor short).
"""

import json
import subprocess
import sys

import pytest

from symattn.core.limits import spectrum_bytes

_CHILD = """
import json, sys
from symattn.model.architecture import Architecture
from symattn.analyses.spectrum import native_spectrum

def status(key):
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(key + ":"))

kw = json.loads(sys.argv[1])
native_spectrum(Architecture.uniform(1, 2, 1, 2, "exp"), method=kw["method"])
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset the peak resident set to the current one
base = status("VmRSS")
arch = Architecture.uniform(kw["depth"], kw["width"], kw["rank"], kw["tokens"], "exp")
s = native_spectrum(arch, bank=kw["bank"], method=kw["method"], seed=kw["seed"])
peak = status("VmHWM")
print(json.dumps({"bytes": (peak - base) * 1024, "order": s.order, "bank": s.bank_size,
                  "certificate": s.certificate, "P": arch.native_size}))
"""

CASES = [dict(depth=3, width=4, rank=2, tokens=4, bank=24, seed=21),   # the F.2 shape, half its bank
         dict(depth=4, width=2, rank=1, tokens=2, bank=96, seed=0)]         # deep and narrow: order 55


@pytest.mark.parametrize("method", ["modular", "exact"])
@pytest.mark.parametrize("case", CASES, ids=["F.2-bank-24", "D4-d2-bank-96"])
def test_spectrum_memory_estimate_is_within_a_factor_two_of_the_peak(case, method):
    kw = {**case, "method": method}
    run = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(kw)], capture_output=True, text=True,
                         check=True)
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["certificate"] == ("exact" if method == "exact" else "certified")
    estimate = spectrum_bytes(out["order"], out["P"], out["bank"], case["tokens"], case["width"], case["depth"],
                              method)
    ratio = estimate / max(out["bytes"], 1)
    assert 0.5 <= ratio <= 2.0, (estimate, out["bytes"], ratio)
