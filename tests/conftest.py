"""Shared fixtures and the rules every test in symattn follows.

Test rules
----------
1. Every test must be able to fail: it asserts a value that a wrong
   implementation would change (no test that only runs code, no assertion
   that holds whatever the code does).
2. No timing assertions: speed is measured by the benchmarks, never asserted.
3. Exact comparisons for exact algebras: rationals, integers, residues mod p
   and sympy expressions are compared with ``==`` (after ``expand`` or
   ``simplify`` where that is the meaning of equality), never with a
   tolerance. Tolerances are for float64 and mpmath results only, and the
   test states why its tolerance is the right one.
4. Slow tests carry ``@pytest.mark.slow`` and run only with ``--runslow``.
5. Tests of the command line and of the proof registry use the fake proof
   package of :func:`fake_proofs` (which also hides installed proof
   packages), never the real proofs in ``proofs/``.
"""

from __future__ import annotations

import importlib
import linecache
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import symattn.theorems.registry

#: The repository root (the directory holding ``pyproject.toml``).
ROOT = Path(__file__).resolve().parent.parent


def _checkcache_retrying(filename: str | None = None, _checkcache=linecache.checkcache) -> None:
    """CPython 3.11's ``linecache.checkcache`` lists the cache's names, then reads ``cache[name]`` for each;
    sympy's ``lambdify`` entries are removed by a finalizer when their function is collected, which can
    happen in between (a ``KeyError`` inside doctest's debugger set-up, seen once under pytest-xdist).
    Retry on that race; any other error propagates."""
    for _ in range(8):
        try:
            return _checkcache(filename)
        except KeyError:
            continue
    return _checkcache(filename)


linecache.checkcache = _checkcache_retrying


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="also run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow test: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


_HEADER = '''\
import sympy

from symattn.render.derivation import Derivation
from symattn.theorems.registry import main_for

'''

_FOOTER = '''

if __name__ == "__main__":
    raise SystemExit(main_for(__name__))
'''

#: The fake proof scripts, by module name: two pass, two fail, one helper.
FAKE_SCRIPTS = {
    "t1_alpha": '''\
"""Fake theorem 1: :math:`(x + n)^2 = x^2 + 2nx + n^2`."""
STATEMENT = "Fake 1: binomial square"
KIND = "exact"


def run(full: bool = False) -> Derivation:
    x = sympy.Symbol("x")
    d = Derivation("t1_alpha", "Binomial square", "$(x+n)^2 = x^2 + 2nx + n^2$", KIND)
    d.step("Expand the square.", latex="(x+1)^2", computed=sympy.expand((x + 1) ** 2))
    for n in range(3 if full else 2):
        d.check(f"eq. ({n})", sympy.expand((x + n) ** 2), x**2 + 2 * n * x + n**2)
        d.case(f"n = {n}")
    return d
''',
    "t2_beta": '''\
"""Fake theorem 2, which is false: :math:`1 = 2`."""
STATEMENT = "Fake 2: a false claim"
KIND = "exact"


def run(full: bool = False) -> Derivation:
    d = Derivation("t2_beta", "False claim", "$1 = 2$", KIND)
    d.case("the only case")
    d.check("eq. (2)", sympy.Integer(1), sympy.Integer(2))
    return d
''',
    "t10_gamma": '''\
"""Fake theorem 10: :math:`\\\\sqrt{4} = 2`."""
STATEMENT = "Fake 10: a square root"
KIND = "certified"


def run(full: bool = False) -> Derivation:
    d = Derivation("t10_gamma", "Square root", "$\\\\sqrt{4} = 2$", KIND)
    d.check("eq. (10)", sympy.sqrt(4), sympy.Integer(2))
    d.case("4")
    return d
''',
    "n1_delta": '''\
"""Fake protocol 1, which crashes."""
STATEMENT = "Fake N1: crashes"
KIND = "numerical"


def run(full: bool = False) -> Derivation:
    raise RuntimeError("boom")
''',
    "common": '''\
"""A helper module: not a proof script (its name does not match)."""
STATEMENT = "not a proof"
KIND = "exact"
''',
}


class FakeProofs:
    """A proof package in a temporary directory, installed as ``symattn.theorems.registry.PROOF_PACKAGE``.

    Attributes
    ----------
    root : pathlib.Path
        The directory on ``sys.path`` holding the package.
    package : str
        The package name (unique per test).
    """

    def __init__(self, root: Path, package: str) -> None:
        self.root = root
        self.package = package
        (root / package).mkdir()
        (root / package / "__init__.py").write_text('"""Fake proofs for the tests."""\n')
        for name, body in FAKE_SCRIPTS.items():
            self.add(name, body)

    def add(self, name: str, body: str) -> Path:
        """Write the script ``name`` (body with the standard imports and footer)."""
        path = self.root / self.package / f"{name}.py"
        path.write_text(body.replace('"""\n', '"""\n' + _HEADER, 1) + _FOOTER)
        importlib.invalidate_caches()
        return path


@pytest.fixture
def fake_proofs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProofs]:
    """The fake proof package: t1_alpha, t10_gamma pass; t2_beta, n1_delta fail."""
    fake = FakeProofs(tmp_path, f"fakeproofs_{uuid.uuid4().hex}")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(symattn.theorems.registry, "PROOF_PACKAGE", fake.package)
    monkeypatch.setattr(symattn.theorems.registry, "_entry_point_sources", lambda: [])  # no installed packages
    yield fake
    for name in [name for name in sys.modules if name.split(".")[0] == fake.package]:
        del sys.modules[name]


@pytest.fixture
def broken_kernel(monkeypatch: pytest.MonkeyPatch):
    """``broken_kernel(module)``: the module's ``GaugeKernel`` replaced by one whose last declared
    direction has one entry moved by 1 (not a kernel vector): the check that must catch it."""
    from symattn.model.symmetries import GaugeKernel

    class Broken(GaugeKernel):
        def __init__(self, arch, theta):
            super().__init__(arch, theta)
            import numpy as np

            bad = self.directions[-1].copy()
            bad[np.flatnonzero(bad != 0)[0]] += 1
            self.directions = self.directions[:-1] + [bad]

    return lambda module: monkeypatch.setattr(module, "GaugeKernel", Broken)
