"""The memory estimates (core.limits.spectrum_bytes, graph_evaluation_bytes) against measured peaks.

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


_GRAPH_CHILD = """
import json, sys
from symattn.model.architecture import Architecture
from symattn.model.network import native_network, jacobian
from symattn.model.parameters import random_native, random_bank
from symattn.core.algebras import series_for

def status(key):
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(key + ":"))

def evaluate(kw):  # one tangent-series evaluation along Q = t U, K = t W (scores vanish at t = 0)
    arch = Architecture.uniform(kw["depth"], kw["width"], kw["rank"], kw["tokens"], "exp")
    A = series_for(kw["method"], kw["order"])
    theta = random_native(arch, seed=1).as_dict()
    vals = {k: A.series([0 * v, v]) if arch.block(k).is_factor else A.const(v) for k, v in theta.items()}
    vals["X"] = A.const(random_bank(arch, kw["inputs"]))
    jacobian(native_network(arch), A, vals, [b.name for b in arch.blocks])
    return arch.native_size

kw = json.loads(sys.argv[1])
evaluate({**kw, "depth": 1, "width": 2, "rank": 1, "tokens": 2, "inputs": 1, "order": 2})
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
base = status("VmRSS")
P = evaluate(kw)
print(json.dumps({"bytes": (status("VmHWM") - base) * 1024, "P": P}))
"""

GRAPH_CASES = [dict(depth=4, width=2, rank=1, tokens=2, inputs=48, order=19),   # deep and narrow
               dict(depth=2, width=8, rank=4, tokens=2, inputs=16, order=9)]    # wide: 256 directions


@pytest.mark.parametrize("method", ["modular", "exact"])
@pytest.mark.parametrize("case", GRAPH_CASES, ids=["D4-d2", "D2-d8-r4"])
def test_graph_evaluation_estimate_is_within_a_factor_two_of_the_peak(case, method):
    """core.limits.graph_evaluation_bytes (the jet, dimension, fiber, bank and sweep commands'
    estimate, and the exact elimination's) against the peak of one evaluation."""
    from symattn.core.limits import graph_evaluation_bytes

    run = subprocess.run([sys.executable, "-c", _GRAPH_CHILD, json.dumps({**case, "method": method})],
                         capture_output=True, text=True, check=True)
    out = json.loads(run.stdout.strip().splitlines()[-1])
    estimate = graph_evaluation_bytes(case["order"], out["P"], case["inputs"], case["tokens"], case["width"],
                                      case["depth"], exact=method == "exact")
    ratio = estimate / max(out["bytes"], 1)
    assert 0.5 <= ratio <= 2.0, (estimate, out["bytes"], ratio)


def test_the_automatic_bank_stops_at_the_memory_limit():
    """bank auto grows (4, 6, 9, ... inputs for the F.2 shape): the size whose estimate passes the
    limit is refused before it is evaluated, with the size in the message."""
    from symattn.analyses.spectrum import native_spectrum
    from symattn.core.errors import SymattnError
    from symattn.model.architecture import Architecture

    said: list[str] = []
    limit = spectrum_bytes(19, 96, 8, 4, 4, 3) / 2**30  # passes banks 4 and 6, not 9
    with pytest.raises(SymattnError, match=r"bank 9, truncation t\^19\) would need"):
        native_spectrum(Architecture.uniform(3, 4, 2, 4), max_memory_gib=limit, progress=said.append)
    assert any(m.startswith("bank 6:") for m in said) and not any(m.startswith("bank 9:") for m in said)
