"""The ``symattn`` command line.

Subcommands are discovered, not listed: every module of the package
:mod:`symattn.commands` that defines ``register(subparsers)`` is registered, in
sorted module order. Only the command that runs is imported: ``symattn --help``
lists the others from their source (the literal ``add_parser`` call, read with
:mod:`ast`), so that no command pays for the imports of another. ``register`` adds a parser to
``subparsers`` and sets ``func`` with ``set_defaults(func=run)``, where
``run(args) -> int`` returns the exit status.

Exit statuses, one per kind of failure (see :mod:`symattn.core.errors`): 0
success; 1 a failed check (what the subcommand returns, or
:class:`~symattn.core.errors.CheckFailed`, one line ``symattn: check failed: ...``);
2 bad input: a usage error or a :class:`~symattn.core.errors.SymattnError`, reported
as one line ``symattn: error: <message>`` on stderr without a traceback; an
undecided computation (:class:`~symattn.core.errors.Undecided`: an unlucky prime,
an unresolved value, data outside a theorem's hypotheses) is said as such, one
line ``symattn: undecided: <message>``, with the status the command documents
(``undecided_status`` in its parser defaults; :data:`EXIT_UNDECIDED` = 1 unless it
says otherwise); 70 an internal error (a bug: any other exception), one line asking for a
bug report, the traceback only under ``--debug``; 130 on keyboard interrupt.

Every subcommand also accepts ``--debug`` and ``--max-memory GIB`` (the memory
limit of :mod:`symattn.core.limits`), added here so that no command can forget them.
"""

from __future__ import annotations

import argparse
import errno
import gc
import importlib
import os
import pkgutil
import sys
import traceback
from collections.abc import Sequence

# One BLAS thread unless the user says otherwise (before NumPy is first imported): the
# exact products mod p are many mid-size float64 products, which a second BLAS thread
# slows down many times on a shared machine (as PyTorch's, see symattn.analyses.matrix_free).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import symattn.commands
from symattn.core.errors import CheckFailed, SymattnError, Undecided
from symattn.core.limits import DEFAULT_MAX_MEMORY_GIB

#: Exit status of an internal error (BSD's EX_SOFTWARE).
EXIT_INTERNAL = 70

#: Exit status of an undecided computation, unless the command documents another.
EXIT_UNDECIDED = 1

__all__ = ["build_parser", "help_texts", "main", "console", "EXIT_INTERNAL", "EXIT_UNDECIDED"]

_DESCRIPTION = """\
Exact and certified recomputation of the identifiability and contact-spectrum
results of P. V. Konda, "Identifiability and Observability of Deep Normalized
Attention" (2026). Every reported number says whether it is exact (rational or
modular arithmetic), certified (ball arithmetic) or numerical."""

_EPILOG = """\
examples:
  symattn prove                  run every proof script and print the table
  symattn prove t4 --full        Theorem 4 with its full case list
  symattn prove --json           the same table as JSON
  symattn prove --list           list the proof scripts without running them
  symattn latex t4               the Theorem 4 derivation as a LaTeX fragment
  symattn COMMAND --help         options of one command"""


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every discovered subcommand.

    Returns
    -------
    argparse.ArgumentParser
        The ``symattn`` parser.
    """
    return _build()[0]


def help_texts() -> dict[str, str]:
    """The ``--help`` text of ``symattn`` and of each subcommand.

    Returns
    -------
    dict of str to str
        ``"symattn"`` and ``"symattn <command>"`` mapped to their help text,
        the subcommands in registration order (used to render the CLI
        reference in the documentation).
    """
    parser, subparsers = _build()
    texts = {"symattn": parser.format_help()}
    for name, subparser in subparsers.choices.items():
        texts[f"symattn {name}"] = subparser.format_help()
    return texts


#: Whether :func:`main` runs as the program (:func:`console`), not called from Python.
_PROGRAM: list[bool] = [False]


def console() -> int:
    """The ``symattn`` program and ``python -m symattn``: :func:`main` on ``sys.argv`` with the
    cyclic garbage collector kept off the imported libraries' objects, which are never garbage:
    off while the command's modules are imported, then those objects moved to its permanent
    generation (:func:`gc.freeze`) before the command runs, and again every object at the end, so
    that neither the collections of the computation nor the interpreter's last ones at exit
    traverse the heaps of NumPy, networkx and python-flint (measured on the F.2 spectrum: about
    20 ms of collections during the imports, 40 ms of one full collection while it computes, 70 ms
    at exit). Exit handlers and the flushing of the output run as before. A caller of :func:`main`
    in Python is not affected."""
    _PROGRAM[0] = True
    gc.disable()
    try:
        status = main()
    finally:
        _PROGRAM[0] = False
        gc.enable()
    gc.freeze()
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; defaults to ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    args = None
    try:
        parser = _build(_named_command(argv), commands=argv[:1] != ["--version"], lazy=True)[0]
        try:
            args, extra = parser.parse_known_args(argv)
            if getattr(args, "lazy_module", None):  # a command listed lazily: import it, parse again
                args = _build(args.lazy_module)[0].parse_args(argv)
            elif extra:
                parser.parse_args(argv)  # the usage error
        except SystemExit as exc:  # --help and --version
            return exc.code if isinstance(exc.code, int) else 2
        if _PROGRAM[0]:  # the command's modules are imported: they stay (see console)
            gc.freeze()
            gc.enable()
        status = int(args.func(args))
        sys.stdout.flush()  # a full disk under the output is reported here, not at exit
        return status
    except SymattnError as exc:
        print(f"symattn: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except CheckFailed as exc:
        print(f"symattn: check failed: {_one_line(exc)}", file=sys.stderr)
        return 1
    except Undecided as exc:
        print(f"symattn: undecided: {_one_line(exc)}", file=sys.stderr)
        return int(getattr(args, "undecided_status", EXIT_UNDECIDED))
    except KeyboardInterrupt:
        print("symattn: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into e.g. head: stop quietly
        sys.stdout = open(os.devnull, "w")
        return 0
    except OSError as exc:
        if exc.errno not in _DISK_FULL:
            return _internal(exc, debug)
        _discard_stdout()
        print(f"symattn: error: cannot write the output: {exc.strerror}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug in symattn: say so, never dress it as bad input
        return _internal(exc, debug)


def _one_line(exc: BaseException) -> str:
    """The message on one line: control characters (a newline from a store or a file name, say)
    escaped as Python writes them.

    >>> _one_line(ValueError("a row (jet\\n) is bad"))
    'a row (jet\\\\n) is bad'
    """
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(exc))


#: errno values of a full disk or file-size limit under stdout (files symattn writes itself
#: report their own errors through symattn.core.output).
_DISK_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def _discard_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real stdout (a test's capture)
        pass


def _internal(exc: BaseException, debug: bool) -> int:
    """Report a bug in symattn (exit status 70); called while ``exc`` is being handled."""
    if debug:
        traceback.print_exc()
    detail = str(exc).splitlines()[0][:200] if str(exc) else ""
    print(f"symattn: internal error (a bug in symattn; please report it with the command "
          f"line): {type(exc).__name__}: {detail}"
          + ("" if debug else "; rerun with --debug for the traceback"), file=sys.stderr)
    return EXIT_INTERNAL


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line (raised as SymattnError)."""

    def error(self, message: str):
        raise SymattnError(f"{message} (see '{self.prog} --help')")


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--debug", action="store_true",
                        help="on an internal error, print the traceback")
    parser.add_argument("--max-memory", type=_gib, default=DEFAULT_MAX_MEMORY_GIB, metavar="GIB",
                        help="refuse work estimated to need more memory than this "
                             f"(default {DEFAULT_MAX_MEMORY_GIB:g} GiB)")


def _gib(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of GiB, got {text!r}") from None
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"expected a positive number of GiB, got {text!r}")
    return value


def _named_command(argv: Sequence[str]) -> str | None:
    """The subcommand module ``argv`` names (its first word that is not an option), if there
    is one: only that module is then imported, so a command does not pay for the others'
    imports."""
    word = next((a for a in argv if not a.startswith("-")), None)
    names = {info.name for info in pkgutil.iter_modules(symattn.commands.__path__)}
    return word if word in names else None


def _listing() -> list[tuple[str, str | None, str | None]]:
    """``(module, command, help)`` of every module of :mod:`symattn.commands` that defines
    ``register``, in sorted module order, read from the source without importing it: the
    literal ``add_parser("name", help="...")`` call (``command`` is None when the call is
    not literal; that module is then imported)."""
    import ast

    found = []
    for info in sorted(pkgutil.iter_modules(symattn.commands.__path__), key=lambda i: i.name):
        spec = info.module_finder.find_spec(info.name, None)  # type: ignore[call-arg]
        try:
            with open(spec.origin, encoding="utf-8") as handle:  # type: ignore[union-attr, arg-type]
                tree = ast.parse(handle.read())
        except (OSError, TypeError, AttributeError, SyntaxError, ValueError):
            found.append((info.name, None, None))
            continue
        register = next((node for node in tree.body if isinstance(node, ast.FunctionDef)
                         and node.name == "register"), None)
        if register is None:
            continue
        calls = [node for node in ast.walk(register) if isinstance(node, ast.Call)
                 and isinstance(node.func, ast.Attribute) and node.func.attr == "add_parser"]
        literal = (len(calls) == 1 and len(calls[0].args) == 1 and isinstance(calls[0].args[0], ast.Constant)
                   and all(k.arg == "help" and isinstance(k.value, ast.Constant) for k in calls[0].keywords
                           if k.arg in ("help", "aliases", None)))
        if not literal:
            found.append((info.name, None, None))
            continue
        helps = [k.value.value for k in calls[0].keywords if k.arg == "help"]  # type: ignore[attr-defined]
        found.append((info.name, calls[0].args[0].value, helps[0] if helps else None))  # type: ignore[attr-defined]
    return found


def _build(only: str | None = None, commands: bool = True, lazy: bool = False
           ) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    """The parser with the subcommand ``only`` (default: all; with ``commands=False`` none, for
    ``--version``: no command module is imported). With ``lazy`` (and no ``only``) every
    command is listed with its help from :func:`_listing` but its module is not imported: the
    top-level help and the choices of a usage error are the same, for a fraction of the
    start-up (a placeholder has no ``func``; :func:`main` imports the command it runs)."""
    parser = _Parser(
        prog="symattn",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {symattn.__version__}")
    subparsers = parser.add_subparsers(
        title="commands", metavar="COMMAND", dest="command", required=True
    )
    if commands and lazy and only is None:
        for module_name, command, text in _listing():
            if command is None:
                _register(subparsers, module_name)
            else:
                subparsers.add_parser(command, help=text, add_help=False).set_defaults(lazy_module=module_name)
    else:
        for info in sorted(pkgutil.iter_modules(symattn.commands.__path__), key=lambda i: i.name):
            if not commands or (only is not None and info.name != only):
                continue
            _register(subparsers, info.name)
    if commands and only is not None and not subparsers.choices:  # a helper module, not a command
        return _build(lazy=lazy)
    parser.add_argument("--debug", action="store_true",
                        help="on an internal error, print the traceback")
    for subparser in subparsers.choices.values():
        _add_common(subparser)
    return parser, subparsers


def _register(subparsers: argparse._SubParsersAction, module_name: str) -> None:
    module = importlib.import_module(f"{symattn.commands.__name__}.{module_name}")
    if hasattr(module, "register"):
        module.register(subparsers)
