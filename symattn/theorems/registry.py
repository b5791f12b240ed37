"""The proof registry: find, select and run the proof scripts.

Proof scripts are the modules of the package named by :data:`PROOF_PACKAGE`
(``proofs``) whose names match ``^[tn]\\d+_``; the convention they follow is
stated in the docstring of that package. :func:`run_proof` never lets a
failing script escape as an exception: an ``AssertionError`` from a check and
any other exception alike become a :class:`ProofResult` with status
``"fail"`` and the message.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from symattn.render.derivation import KINDS, Derivation
from symattn.core.errors import SymattnError

__all__ = [
    "PROOF_PACKAGE",
    "ProofResult",
    "discover",
    "load",
    "main_for",
    "run_proof",
    "select",
    "weakest_kind",
]

#: The package searched for proof scripts.
PROOF_PACKAGE = "proofs"

_ID = re.compile(r"^([tn])(\d+)_")


@dataclass(frozen=True)
class ProofResult:
    """The outcome of running one proof script.

    Attributes
    ----------
    id : str
        The proof id (module name), e.g. ``"t4_native_spectrum"``.
    statement : str
        The script's ``STATEMENT`` (empty if it could not be imported).
    status : str
        ``"pass"`` or ``"fail"``.
    cases : int
        Cases counted by the derivation (0 if there is none).
    kind : str
        The script's ``KIND`` (empty if it could not be imported).
    seconds : float
        Wall-clock time, import included.
    derivation : Derivation or None
        What ``run`` returned; None when it raised.
    error : str
        Why the proof failed; empty when it passed.
    """

    id: str
    statement: str
    status: str
    cases: int
    kind: str
    seconds: float
    derivation: Derivation | None
    error: str

    def summary(self) -> dict[str, object]:
        """The JSON-ready summary printed by ``symattn prove --json``.

        Returns
        -------
        dict
            Keys ``id``, ``statement``, ``status``, ``cases``, ``kind``,
            ``seconds``.
        """
        return {
            "id": self.id,
            "statement": self.statement,
            "status": self.status,
            "cases": self.cases,
            "kind": self.kind,
            "seconds": round(self.seconds, 3),
        }


def weakest_kind(derivation: Derivation) -> str:
    """The weakest kind among the checks of ``derivation`` (the kind of the proof).

    Parameters
    ----------
    derivation : Derivation
        A derivation with at least one check.

    Returns
    -------
    str
        One of :data:`symattn.render.derivation.KINDS`: the last, in the order
        exact > certified > conditional > numerical, of its checks' kinds.

    Examples
    --------
    >>> d = Derivation("demo", "demo", "demo", "exact")
    >>> d.check("a", 1, 1)
    >>> d.check("b", 2, 2, kind="numerical")
    >>> weakest_kind(d)
    'numerical'
    """
    return max((check.kind for check in derivation.checks), key=KINDS.index)


def discover() -> list[str]:
    """List the proof ids: theorems (``t``) first, then numerics (``n``).

    Returns
    -------
    list of str
        Module names of :data:`PROOF_PACKAGE` matching ``^[tn]\\d+_``, each
        group in numeric order (``t2_...`` before ``t10_...``). The modules
        are not imported.

    Raises
    ------
    SymattnError
        If the proof package cannot be imported.
    """
    try:
        package = importlib.import_module(PROOF_PACKAGE)
    except ImportError as exc:
        raise SymattnError(
            f"cannot import the proof package {PROOF_PACKAGE!r} ({exc}); "
            "install symattn with `pip install .` from the repository root"
        ) from exc
    ids = [info.name for info in pkgutil.iter_modules(package.__path__) if _ID.match(info.name)]
    return sorted(ids, key=_order)


def select(patterns: Sequence[str]) -> list[str]:
    """Resolve ids or id prefixes to proof ids, in registry order.

    Parameters
    ----------
    patterns : sequence of str
        Ids or prefixes, case-insensitive: ``t4`` matches
        ``t4_native_spectrum`` but ``t1`` does not match ``t10_...``. Empty
        means every proof.

    Returns
    -------
    list of str
        The matching ids, each once, in the order of :func:`discover`.

    Raises
    ------
    SymattnError
        If there are no proofs, or a pattern matches none.
    """
    ids = discover()
    if not ids:
        raise SymattnError(f"no proof scripts found in the package {PROOF_PACKAGE!r}")
    if not patterns:
        return ids
    chosen: set[str] = set()
    for pattern in patterns:
        matches = [proof_id for proof_id in ids if _matches(proof_id, pattern.lower())]
        if not matches:
            raise SymattnError(f"unknown proof id {pattern!r}; known ids: {', '.join(ids)}")
        chosen.update(matches)
    return [proof_id for proof_id in ids if proof_id in chosen]


def load(proof_id: str) -> ModuleType:
    """Import a proof script without running it.

    Parameters
    ----------
    proof_id : str
        A full proof id, e.g. ``"t4_native_spectrum"``.

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    SymattnError
        If the module cannot be imported.
    """
    try:
        return importlib.import_module(f"{PROOF_PACKAGE}.{proof_id}")
    except Exception as exc:  # any import-time error of a script is reported, not raised raw
        raise SymattnError(f"cannot import proof {proof_id!r}: {_describe(exc)}") from exc


def run_proof(proof_id: str, full: bool = False) -> ProofResult:
    """Import and run one proof script; a failure becomes a result.

    Parameters
    ----------
    proof_id : str
        A full proof id, e.g. ``"t4_native_spectrum"``.
    full : bool, optional
        Run the script's full (long) case list.

    Returns
    -------
    ProofResult
        Status ``"pass"`` when ``run`` returned a :class:`Derivation` with at
        least one check, no failed check and ``KIND`` equal to the weakest
        kind of its checks; otherwise ``"fail"`` with the
        message of the failed check or of the exception.
    """
    start = time.perf_counter()
    try:
        module = load(proof_id)
    except SymattnError as exc:
        return ProofResult(proof_id, "", "fail", 0, "", time.perf_counter() - start, None, str(exc))
    return _execute(proof_id, module, full, start)


def main_for(module_name: str, argv: Sequence[str] | None = None) -> int:
    """Run a proof script on its own: ``python proofs/<id>.py [--full] [--latex]``.

    Use it at the end of every proof script as::

        if __name__ == "__main__":
            raise SystemExit(main_for(__name__))

    Parameters
    ----------
    module_name : str
        The script's ``__name__`` (``"__main__"`` when run as a script).
    argv : sequence of str, optional
        Command-line arguments; defaults to ``sys.argv[1:]``.

    Returns
    -------
    int
        0 if the proof passed, 1 otherwise. The derivation is printed as text
        (or LaTeX with ``--latex``) to stdout, a failure message to stderr.
    """
    module = sys.modules[module_name]
    proof_id = Path(module.__file__ or module_name).stem
    parser = argparse.ArgumentParser(
        prog=f"python {Path(module.__file__ or proof_id).name}",
        description=getattr(module, "STATEMENT", None),
    )
    parser.add_argument("--full", action="store_true", help="run the full (long) case list")
    parser.add_argument("--latex", action="store_true", help="print the derivation as LaTeX")
    args = parser.parse_args(argv)
    result = _execute(proof_id, module, args.full, time.perf_counter())
    if result.derivation is not None:
        print(result.derivation.to_latex() if args.latex else result.derivation.to_text())
    if result.error:
        print(f"{proof_id}: FAIL: {result.error}", file=sys.stderr)
    print(f"{proof_id}: {result.status} ({result.seconds:.2f} s)", file=sys.stderr)
    return 0 if result.status == "pass" else 1


def _execute(proof_id: str, module: ModuleType, full: bool, start: float) -> ProofResult:
    statement = str(getattr(module, "STATEMENT", ""))
    kind = str(getattr(module, "KIND", ""))
    derivation: Derivation | None = None
    if not statement:
        error = "the script defines no STATEMENT"
    elif kind not in KINDS:
        error = f"KIND must be one of {', '.join(KINDS)}, not {kind!r}"
    elif not callable(getattr(module, "run", None)):
        error = "the script defines no run(full=False)"
    else:
        try:
            returned = module.run(full=full)
        except Exception as exc:  # a failing proof is a result, never a crash of the runner
            error = _describe(exc, module.__file__)
        else:
            derivation = returned if isinstance(returned, Derivation) else None
            if derivation is None:
                error = f"run() returned {type(returned).__name__}, not a Derivation"
            elif not derivation.checks:
                error = "the derivation records no check"
            elif not derivation.passed:
                error = "a failed check was recorded without raising"
            elif weakest_kind(derivation) != kind:
                error = (f"KIND is {kind!r} but the weakest of its checks is "
                         f"{weakest_kind(derivation)!r}; a proof's kind is its weakest check's")
            else:
                error = ""
    seconds = time.perf_counter() - start
    cases = derivation.cases if derivation is not None else 0
    status = "fail" if error else "pass"
    return ProofResult(proof_id, statement, status, cases, kind, seconds, derivation, error)


def _describe(exc: BaseException, script: str | None = None) -> str:
    """``Type: message [file:line]``, locating the deepest frame in ``script`` if any."""
    frames = list(traceback.extract_tb(exc.__traceback__))
    chosen = [frame for frame in frames if frame.filename == script] or frames
    where = f" [{Path(chosen[-1].filename).name}:{chosen[-1].lineno}]" if chosen else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _order(proof_id: str) -> tuple[int, int, str]:
    match = _ID.match(proof_id)
    assert match is not None  # discover() keeps matching names only
    return ("tn".index(match.group(1)), int(match.group(2)), proof_id)


def _matches(proof_id: str, pattern: str) -> bool:
    if not proof_id.startswith(pattern):
        return False
    rest = proof_id[len(pattern) :]
    return not (pattern[-1:].isdigit() and rest[:1].isdigit())
