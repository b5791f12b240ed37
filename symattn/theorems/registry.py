"""The proof registry: find, select and run proof scripts from every source.

A *source* is a package of proof scripts: the paper's own (source ``symattn``,
the package :data:`PROOF_PACKAGE` installed from the repository's ``proofs/``
folder, read directly in a source checkout), every installed distribution that
registers an entry point in the group :data:`ENTRY_POINT_GROUP` (its name is the
source's name, its value the package), and every folder given with ``paths``
(``symattn prove --path DIR``, loaded by its path, never put on ``sys.path``).
Finding the scripts imports no package but the paper's; a source's package is
imported when one of its scripts is loaded or run, by ``symattn prove`` in a child
process per source (:mod:`symattn.theorems.isolation`).

A module of a source is a proof script when its name matches ``^[a-z]+\\d+_``;
its conventions (``NAME``, ``STATEMENT``, ``KIND``, ``run(full)``) are stated in
the docstring of ``symattn.proofs``. The paper's proof ids are the module names,
another source's are qualified (``mylemmas:l1_cosh_cubic``). A proof is selected
by its id, a prefix of it (``t4``) or its *name*, which says the statement
(``native-contact-spectrum``: the script's ``NAME``, read from its text without
running it, or else the module name after its prefix). :func:`run_proof` never
lets a failing script escape: any exception becomes a failed :class:`ProofResult`.

Examples
--------
>>> ids = discover()
>>> ids[0], ids[-1]
('t1_effective_identifiability', 'n6_symmetry_completeness')
>>> select(["t4"]) == select(["native-contact-spectrum"]) == ['t4_native_spectrum']
True
"""

from __future__ import annotations

import argparse
import importlib
import importlib.machinery
import importlib.metadata
import importlib.util
import pkgutil
import re
import sys
import time
import traceback
import types
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType

from symattn.core.errors import SymattnError
from symattn.render.derivation import KINDS, Derivation

__all__ = [
    "ENTRY_POINT_GROUP",
    "PAPER_SOURCE",
    "PROOF_PACKAGE",
    "Proof",
    "ProofResult",
    "Source",
    "choose",
    "discover",
    "find",
    "import_script",
    "load",
    "main_for",
    "run_proof",
    "run_script",
    "script_name",
    "scripts",
    "select",
    "sources",
    "weakest_kind",
]

#: The package of the paper's proof scripts.
PROOF_PACKAGE = "symattn.proofs"
#: The name of the paper's source (its proof ids are not qualified).
PAPER_SOURCE = "symattn"
#: The entry-point group in which installed proof packages register.
ENTRY_POINT_GROUP = "symattn.proofs"

_SCRIPT = re.compile(r"^([a-z]+)(\d+)_\w*$")
#: A proof's name: lower-case words of letters and digits joined by hyphens.
_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
#: A script's ``NAME = "..."`` line, read without running the script.
_NAME_LINE = re.compile(r"""^NAME\s*=\s*(['"])(.*?)\1\s*(#.*)?$""", re.MULTILINE)
_SOURCE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
#: Prefix order of the paper's scripts: theorems, then numerical protocols; others follow by name.
_PREFIXES = ("t", "n")


@dataclass(frozen=True)
class Source:
    """A package of proof scripts.

    Attributes
    ----------
    name : str
        ``"symattn"`` for the paper's proofs, the entry point's name for an
        installed proof package, the folder's name for ``--path DIR``.
    package : str
        The import name of the package holding the scripts.
    origin : str
        Where it comes from, in words (for listings and errors).
    locations : tuple of str
        The folders of the package (its ``__path__``), found without importing it.
    problem : str
        Empty, or why the source cannot be used (an installed entry point whose
        package cannot be found); :func:`find` raises it.
    """

    name: str
    package: str
    origin: str
    locations: tuple[str, ...] = ()
    problem: str = ""

    def qualify(self, script: str) -> str:
        """The proof id of the script ``script`` of this source."""
        return script if self.name == PAPER_SOURCE else f"{self.name}:{script}"


@dataclass(frozen=True)
class Proof:
    """One proof script of a source (not imported).

    Attributes
    ----------
    id : str
        The proof id: the module name for the paper's proofs,
        ``source:module`` otherwise.
    script : str
        The module name inside its package, e.g. ``"t4_native_spectrum"``.
    source : Source
        Where the script lives.
    name : str
        What the proof shows, e.g. ``"native-contact-spectrum"``: the script's
        ``NAME``, or the module name after its prefix (:func:`script_name`).
        Empty in the child processes of ``symattn prove``, which do not need it.
    """

    id: str
    script: str
    source: Source
    name: str = ""

    @property
    def module(self) -> str:
        """The full import name of the script."""
        return f"{self.source.package}.{self.script}"

    @property
    def slug(self) -> str:
        """The id as a file name (``:`` becomes ``-``), for docs pages."""
        return self.id.replace(":", "-")


@dataclass(frozen=True)
class ProofResult:
    """The outcome of running one proof script.

    Attributes
    ----------
    id : str
        The proof id, e.g. ``"t4_native_spectrum"`` or ``"mylemmas:l1_cosh_cubic"``.
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
    source : str
        The name of the proof's source (``"symattn"`` for the paper's).
    """

    id: str
    statement: str
    status: str
    cases: int
    kind: str
    seconds: float
    derivation: Derivation | None
    error: str
    source: str = PAPER_SOURCE

    def __repr__(self) -> str:
        return (f"ProofResult({self.id!r}, {self.status}, kind={self.kind!r}, cases={self.cases}, "
                f"seconds={self.seconds:.2f})")

    def summary(self) -> dict[str, object]:
        """The JSON-ready summary printed by ``symattn prove --json``.

        Returns
        -------
        dict
            Keys ``id``, ``source``, ``statement``, ``status``, ``cases``,
            ``kind``, ``seconds``.
        """
        return {
            "id": self.id,
            "source": self.source,
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


def sources(paths: Sequence[str | Path] = ()) -> list[Source]:
    """The sources of proof scripts: the paper's, installed packages', then ``paths``.

    Parameters
    ----------
    paths : sequence of path-like, optional
        Folders of proof scripts (``--path DIR``), each loaded as a package
        named after the folder.

    Returns
    -------
    list of Source
        The paper's source, the installed proof packages by entry-point name,
        then one source per folder in the given order. No package but the
        paper's is imported; an entry point whose package cannot be found is a
        source with a ``problem``.

    Raises
    ------
    SymattnError
        If the paper's proofs cannot be found, an entry point's name is reserved
        or not a name, a folder does not exist (or is a link loop), or two
        sources have the same name.
    """
    seen: dict[str, Source] = {}
    for source in [_paper_source(), *_entry_point_sources(), *(_path_source(Path(path)) for path in paths)]:
        other = seen.get(source.name)
        if other is not None and other.package == source.package:
            continue  # a folder that is also installed (editable): one source
        if other is not None:
            raise SymattnError(f"two proof sources are named {source.name!r} ({other.origin}; "
                               f"{source.origin}); rename one")
        seen[source.name] = source
    return list(seen.values())


def find(paths: Sequence[str | Path] = (), broken: list[Source] | None = None) -> list[Proof]:
    """Every proof script of every source, in registry order (no script is imported).

    The order is: the paper's theorems (``t``) then numerical protocols
    (``n``), each in numeric order (``t2_...`` before ``t10_...``); then each
    other source in turn, its scripts ordered the same way (other prefixes
    after ``t`` and ``n``, alphabetically).

    Parameters
    ----------
    paths : sequence of path-like, optional
        Folders of proof scripts, as for :func:`sources`.
    broken : list, optional
        Where the sources with a ``problem`` go (and, with the problem, those of
        another package whose scripts cannot be listed or named); without it,
        such a source raises.

    Returns
    -------
    list of Proof

    Raises
    ------
    SymattnError
        As :func:`sources`; and for a source with a problem when ``broken`` is None.
    """
    proofs = []
    for source in sources(paths):
        if source.problem and broken is not None:
            broken.append(source)
            continue
        try:
            proofs += scripts(source)
        except SymattnError as exc:  # e.g. a bad NAME: that source's failure when ``broken`` collects them
            if broken is None or source.name == PAPER_SOURCE:
                raise
            broken.append(replace(source, problem=str(exc)))
    return proofs


def scripts(source: Source) -> list[Proof]:
    """The proof scripts of one source, in registry order, from one listing of its folders.

    Parameters
    ----------
    source : Source

    Returns
    -------
    list of Proof

    Raises
    ------
    SymattnError
        If the source has a problem, its folder cannot be listed, a script's
        ``NAME`` is not a name (:func:`script_name`) or a script declares the
        name of another (default names may coincide: such a name selects them all).
    """
    if source.problem:
        raise SymattnError(source.problem)
    try:
        found = {info.name: _script_file(info) for info in pkgutil.iter_modules(list(source.locations))
                 if _SCRIPT.match(info.name)}
    except OSError as exc:
        raise SymattnError(f"cannot list the proof scripts of {source.origin}: {exc.strerror}") from exc
    proofs: list[Proof] = []
    named: dict[str, tuple[str, bool]] = {}  # name -> (first script, declared)
    for script in sorted(found, key=_order):
        text = _read_text(found[script], source, script)
        name, declared = script_name(script, text), _NAME_LINE.search(text) is not None
        if name in named and (declared or named[name][1]):  # default names may coincide (l1_x, l2_x)
            raise SymattnError(f"the proof scripts {named[name][0]} and {script} of {source.origin} are both "
                               f"named {name!r}; give one another NAME")
        named.setdefault(name, (script, declared))
        proofs.append(Proof(source.qualify(script), script, source, name))
    return proofs


def script_name(script: str, text: str = "") -> str:
    """The name of the proof script ``script`` whose source text is ``text``: what it shows.

    Parameters
    ----------
    script : str
        The module name, e.g. ``"t4_native_spectrum"``.
    text : str, optional
        The script's source. A top-level line ``NAME = "native-contact-spectrum"``
        declares the name; the script is not run.

    Returns
    -------
    str
        The declared ``NAME``; without one, the module name after its prefix,
        underscores as hyphens (``t4_native_spectrum`` gives ``"native-spectrum"``).

    Raises
    ------
    SymattnError
        If the declared ``NAME`` is not lower-case words of letters and digits
        joined by hyphens.

    Examples
    --------
    >>> script_name("l1_cosh_cubic"), script_name("t4_native_spectrum", 'NAME = "native-contact-spectrum"')
    ('cosh-cubic', 'native-contact-spectrum')
    """
    declared = _NAME_LINE.search(text)
    if declared is None:
        words = script.split("_", 1)[1].lower().split("_") if "_" in script else []
        return "-".join(word for word in words if word) or script.lower()
    name = declared.group(2)
    if not _NAME.match(name):
        raise SymattnError(f"the proof script {script} declares NAME = {name!r}, not a name "
                           "(lower-case words of letters and digits joined by hyphens, e.g. 'cosh-cubic')")
    return name


def discover(paths: Sequence[str | Path] = ()) -> list[str]:
    """List the proof ids of every source, in registry order (see :func:`find`).

    Parameters
    ----------
    paths : sequence of path-like, optional
        Folders of proof scripts, as for :func:`sources`.

    Returns
    -------
    list of str
        The ids; the modules are not imported.

    Raises
    ------
    SymattnError
        If a source cannot be found (see :func:`sources`).
    """
    return [proof.id for proof in find(paths)]


def select(patterns: Sequence[str], paths: Sequence[str | Path] = ()) -> list[str]:
    """Resolve ids, id prefixes or source names to proof ids, in registry order.

    Parameters
    ----------
    patterns : sequence of str
        Case-insensitive. An id, a prefix of one or a name matches in any source:
        ``t4`` and ``native-contact-spectrum`` match ``t4_native_spectrum`` but
        ``t1`` does not match ``t10_...``, and ``l1`` and ``cosh-cubic`` match
        ``mylemmas:l1_cosh_cubic``.
        ``SOURCE:`` selects every script of a source and ``SOURCE:PREFIX``
        the matching scripts of one source. Empty means every proof.
    paths : sequence of path-like, optional
        Folders of proof scripts, as for :func:`sources`.

    Returns
    -------
    list of str
        The matching ids, each once, in the order of :func:`discover`.

    Raises
    ------
    SymattnError
        If there are no proofs, or a pattern matches none.
    """
    return [proof.id for proof in choose(find(paths), patterns)]


def choose(proofs: Sequence[Proof], patterns: Sequence[str]) -> list[Proof]:
    """The proofs matching ``patterns`` (as for :func:`select`), in the order of ``proofs``.

    Parameters
    ----------
    proofs : sequence of Proof
        As :func:`find` gives them.
    patterns : sequence of str
        Ids, prefixes, names or ``SOURCE:`` names; empty means every proof.

    Returns
    -------
    list of Proof

    Raises
    ------
    SymattnError
        If there are no proofs, or a pattern matches none.
    """
    if not proofs:
        raise SymattnError(f"no proof scripts found in the package {PROOF_PACKAGE!r}")
    if not patterns:
        return list(proofs)
    chosen: set[str] = set()
    for pattern in patterns:
        matches = [proof.id for proof in proofs if _matches(proof, pattern.lower())]
        if not matches:
            known = ", ".join(proof.id for proof in proofs)
            raise SymattnError(f"unknown proof id {pattern!r}; known ids: {known} "
                               "(`symattn prove --list` gives their names)")
        chosen.update(matches)
    return [proof for proof in proofs if proof.id in chosen]


def load(proof_id: str, paths: Sequence[str | Path] = ()) -> ModuleType:
    """Import a proof script without running it.

    Parameters
    ----------
    proof_id : str
        A full proof id, e.g. ``"t4_native_spectrum"``, or a proof's name
        (``"native-contact-spectrum"``).
    paths : sequence of path-like, optional
        Folders of proof scripts, as for :func:`sources`.

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    SymattnError
        If there is no such proof or the module cannot be imported.
    """
    return import_script(_lookup(proof_id, paths))


def import_script(proof: Proof, catch: type[BaseException] = Exception) -> ModuleType:
    """Import a proof script (found by :func:`find`) without running it.

    The source's package is imported first, by its path (:attr:`Source.locations`),
    unless it already is; no folder is put on ``sys.path``.

    Parameters
    ----------
    proof : Proof
        The script.
    catch : exception type, optional
        What an import error of the package or the script may be (it becomes a
        :class:`SymattnError`); others propagate.

    Returns
    -------
    module

    Raises
    ------
    SymattnError
        If the package or the script cannot be imported.
    """
    _import_source(proof.source, catch)
    try:
        return importlib.import_module(proof.module)
    except catch as exc:  # any import-time error of a script is reported, not raised raw
        raise SymattnError(f"cannot import proof {proof.id!r}: {_describe(exc)}") from exc


def run_proof(proof_id: str, full: bool = False, paths: Sequence[str | Path] = ()) -> ProofResult:
    """Import and run one proof script; a failure becomes a result.

    Parameters
    ----------
    proof_id : str
        A full proof id, e.g. ``"t4_native_spectrum"``, or a proof's name.
    full : bool, optional
        Run the script's full (long) case list.
    paths : sequence of path-like, optional
        Folders of proof scripts, as for :func:`sources`.

    Returns
    -------
    ProofResult
        Status ``"pass"`` when ``run`` returned a :class:`Derivation` with at
        least one check, no failed check and ``KIND`` equal to the weakest
        kind of its checks; otherwise ``"fail"`` with the
        message of the failed check or of the exception.

    Raises
    ------
    SymattnError
        If there is no proof with this id.
    """
    return run_script(_lookup(proof_id, paths), full)


def run_script(proof: Proof, full: bool = False, catch: type[BaseException] = Exception) -> ProofResult:
    """Import and run one proof script (found by :func:`find`); a failure becomes a result.

    Parameters
    ----------
    proof : Proof
        The script.
    full : bool, optional
        Run the script's full (long) case list.
    catch : exception type, optional
        What becomes a failed result (an import error included); the child process of
        ``symattn prove`` gives ``BaseException``, so that a script's ``sys.exit`` or
        ``KeyboardInterrupt`` is its failure.

    Returns
    -------
    ProofResult
        As :func:`run_proof`.
    """
    start = time.perf_counter()
    source = proof.source.name
    try:
        module = import_script(proof, catch)
    except SymattnError as exc:
        return ProofResult(proof.id, "", "fail", 0, "", time.perf_counter() - start, None, str(exc), source)
    return _execute(proof.id, module, full, start, source, catch)


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
    result = _execute(proof_id, module, args.full, time.perf_counter(), "")
    if result.derivation is not None:
        print(result.derivation.to_latex() if args.latex else result.derivation.to_text())
    if result.error:
        print(f"{proof_id}: FAIL: {result.error}", file=sys.stderr)
    print(f"{proof_id}: {result.status} ({result.seconds:.2f} s)", file=sys.stderr)
    return 0 if result.status == "pass" else 1


def _execute(proof_id: str, module: ModuleType, full: bool, start: float, source: str,
             catch: type[BaseException] = Exception) -> ProofResult:
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
        except catch as exc:  # a failing proof is a result, never a crash of the runner
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
    return ProofResult(proof_id, statement, status, cases, kind, seconds, derivation, error, source)


def _lookup(proof_id: str, paths: Sequence[str | Path]) -> Proof:
    proofs = find(paths)
    for proof in proofs:
        if proof.id == proof_id:
            return proof
    named = [proof for proof in proofs if _is_named(proof, proof_id.lower())]
    if len(named) == 1:
        return named[0]
    raise SymattnError(f"unknown proof id {proof_id!r}; `symattn prove --list` lists the ids")


def _paper_source() -> Source:
    """The paper's proofs: :data:`PROOF_PACKAGE`, or the checkout's ``proofs/`` folder."""
    origin = f"the paper's proofs (package {PROOF_PACKAGE})"
    try:  # symattn's own package (its __init__ only documents the conventions), not a third party's
        locations = tuple(importlib.import_module(PROOF_PACKAGE).__path__)
    except ModuleNotFoundError as exc:
        folder = Path(__file__).resolve().parents[2] / "proofs"
        if PROOF_PACKAGE != "symattn.proofs" or not (folder / "__init__.py").is_file():
            raise SymattnError(
                f"cannot import the proof package {PROOF_PACKAGE!r} ({exc}); "
                "install symattn with `pip install .` from the repository root"
            ) from exc
        locations = (str(folder),)  # a source checkout on PYTHONPATH, not installed
    return Source(PAPER_SOURCE, PROOF_PACKAGE, origin, locations)


def _locate(package: str) -> tuple[str, ...] | None:
    """The folders of the package ``package`` (dotted), found without running any of its code.

    None when there is no such module, ``()`` when it is a module but not a package.
    """
    module = sys.modules.get(package)
    if module is not None:
        return tuple(getattr(module, "__path__", ()))
    parent, _, name = package.rpartition(".")
    if parent and parent not in sys.modules:  # find_spec would import (run) the parent packages
        search = _locate(parent)
        if not search:
            return search
        spec = importlib.machinery.PathFinder.find_spec(name, list(search))
    else:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            return None
    if spec is None:
        return None
    return tuple(spec.submodule_search_locations or ())


def _entry_point_sources() -> list[Source]:
    found = []
    for entry in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        dist = f"{entry.dist.name} {entry.dist.version}" if entry.dist is not None else "an unknown distribution"
        origin = f"entry point {entry.name} = {entry.value!r} of {dist}"
        if entry.name == PAPER_SOURCE or not _SOURCE_NAME.match(entry.name):
            raise SymattnError(f"the proof source name {entry.name!r} ({origin}) is reserved or not a name; "
                               "rename the entry point")
        package = entry.value.strip()
        locations = None if not re.fullmatch(r"\w+(\.\w+)*", package) else _locate(package)
        problem = ""
        if locations is None:
            problem = (f"cannot import the proof package of {origin}: no module named {package!r}; "
                       "fix or uninstall that package")
        elif not locations:
            problem = (f"{origin} does not name a package of proof scripts; "
                       "its value must be a package's import name, e.g. \"mylemmas\"")
        found.append(Source(entry.name, package, origin, locations or (), problem))
    return found


def _path_source(folder: Path) -> Source:
    try:
        folder = folder.expanduser().resolve(strict=True)
        is_dir = folder.is_dir()
    except (OSError, RuntimeError) as exc:  # a missing folder, a link loop (RuntimeError before 3.13)
        why = "a symbolic link loop" if "loop" in str(exc).lower() else "not a folder"
        raise SymattnError(f"--path {folder}: {why}; give the folder that holds the proof scripts") from exc
    if not is_dir:
        raise SymattnError(f"--path {folder}: not a folder; give the folder that holds the proof scripts")
    name = folder.name
    if not name.isidentifier():
        raise SymattnError(f"--path {folder}: the folder's name {name!r} is not a Python name; "
                           "rename it (e.g. my_lemmas)")
    loaded = sys.modules.get(name)
    if loaded is not None and str(folder) not in [str(Path(p).resolve()) for p in getattr(loaded, "__path__", [])]:
        where = getattr(loaded, "__file__", None) or list(getattr(loaded, "__path__", []))
        raise SymattnError(f"--path {folder}: a module named {name!r} is already imported from {where}; "
                           "rename the folder")
    if name in sys.stdlib_module_names or name == "symattn":
        raise SymattnError(f"--path {folder}: {name!r} is the name of a module of Python or symattn; "
                           "rename the folder")
    return Source(name, name, f"folder {folder}", (str(folder),))


def _import_source(source: Source, catch: type[BaseException] = Exception) -> ModuleType:
    """The source's package: imported by its path (:attr:`Source.locations`) unless it already is."""
    loaded = sys.modules.get(source.package)
    if loaded is not None:
        if {str(Path(p).resolve()) for p in getattr(loaded, "__path__", ())} != \
                {str(Path(p).resolve()) for p in source.locations}:
            where = getattr(loaded, "__file__", None) or list(getattr(loaded, "__path__", []))
            raise SymattnError(f"cannot import the package of {source.origin}: a module named "
                               f"{source.package!r} is already imported from {where}; rename the package")
        return loaded
    if source.problem:
        raise SymattnError(source.problem)
    init = Path(source.locations[0]) / "__init__.py" if source.locations else None
    if init is not None and init.is_file():
        spec = importlib.util.spec_from_file_location(source.package, init,
                                                      submodule_search_locations=list(source.locations))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[source.package] = module
        try:
            spec.loader.exec_module(module)
        except catch as exc:  # the package's __init__.py is its author's code
            del sys.modules[source.package]
            raise SymattnError(f"cannot import the package of {source.origin}: {_describe(exc)}") from exc
    else:  # a namespace package (no __init__.py)
        module = types.ModuleType(source.package, f"Proof scripts in {', '.join(source.locations)}.")
        module.__path__ = list(source.locations)
        sys.modules[source.package] = module
    return module


def _describe(exc: BaseException, script: str | None = None) -> str:
    """``Type: message [file:line]``, locating the deepest frame in ``script`` if any."""
    frames = list(traceback.extract_tb(exc.__traceback__))
    chosen = [frame for frame in frames if frame.filename == script] or frames
    where = f" [{Path(chosen[-1].filename).name}:{chosen[-1].lineno}]" if chosen else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _order(script: str) -> tuple[int, str, int, str]:
    match = _SCRIPT.match(script)
    assert match is not None  # find() keeps matching names only
    prefix = match.group(1)
    rank = _PREFIXES.index(prefix) if prefix in _PREFIXES else len(_PREFIXES)
    return (rank, prefix, int(match.group(2)), script)


def _matches(proof: Proof, pattern: str) -> bool:
    if ":" in pattern:
        source, _, pattern = pattern.partition(":")
        if proof.source.name.lower() != source:
            return False
        if not pattern:
            return True
    if _is_named(proof, pattern):
        return True
    name = proof.script
    if not name.startswith(pattern):
        return False
    rest = name[len(pattern):]
    return not (pattern[-1:].isdigit() and rest[:1].isdigit())


def _is_named(proof: Proof, pattern: str) -> bool:
    """Whether ``pattern`` (lower case, ``SOURCE:`` allowed) is the proof's name (``_`` for ``-`` allowed)."""
    source, colon, name = pattern.rpartition(":")
    if colon and proof.source.name.lower() != source:
        return False
    return bool(proof.name) and name.replace("_", "-") == proof.name


#: The most of a script's text read for its ``NAME`` (the line is near the top).
_MAX_TEXT = 1 << 20


def _script_file(info: pkgutil.ModuleInfo) -> Path | None:
    """The source file of a listed script (its ``__init__.py`` if a package), or None."""
    folder = getattr(info.module_finder, "path", None)
    if folder is None:
        return None
    path = Path(folder) / info.name
    return path / "__init__.py" if info.ispkg else path.with_name(f"{info.name}.py")


def _read_text(path: Path | None, source: Source, script: str) -> str:
    """The script's text for :func:`script_name`: empty when it has no source file (a ``.pyc``)."""
    if path is None or not path.is_file():
        return ""
    try:
        with path.open("rb") as handle:
            return handle.read(_MAX_TEXT).decode("utf-8", errors="replace")
    except OSError as exc:
        raise SymattnError(f"cannot read the proof script {script} of {source.origin}: {exc.strerror}") from exc
