"""The numpydoc sections a public function or class needs, from its signature and body.

Used by ``tests/test_docstrings.py`` (and by hand, ``python tests/docstring_sections.py``,
for the coverage of the public API). A callable needs

* ``Parameters`` (a class: ``Parameters`` or ``Attributes``) naming every argument but
  ``self``, ``cls`` and ``*args``/``**kwargs``, when it takes arguments (a dataclass's
  fields are documented where they are declared, so it needs none);
* ``Returns`` (or ``Yields``) when it returns a value: a return annotation other than
  None, or else a ``return`` with a value (or a ``yield``) in its body;
* ``Raises`` when its body raises on purpose (a ``raise`` statement with an exception,
  not a bare re-raise or an ``assert``).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_HEADER = re.compile(r"^(\w[\w ]*)\n-{3,}\s*$", re.MULTILINE)


def sections(doc: str) -> dict[str, str]:
    """The numpydoc sections of ``doc``: title -> body (the text before the first is ``""``)."""
    doc = inspect.cleandoc(doc or "")
    out: dict[str, str] = {}
    matches = list(_HEADER.finditer(doc))
    out[""] = doc[:matches[0].start()] if matches else doc
    for match, following in zip(matches, [*matches[1:], None]):
        out[match.group(1).strip()] = doc[match.end():following.start() if following else len(doc)]
    return out


def documented_names(body: str) -> set[str]:
    """The names of the entries of a Parameters section (``a, b : int`` gives ``a`` and ``b``)."""
    names: set[str] = set()
    for line in body.splitlines():
        if line and not line[0].isspace():
            head = line.split(" : ")[0] if " : " in line else line.rstrip(":")
            names.update(part.strip().lstrip("*") for part in head.split(","))
    return names


def _function_node(func: Any) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        source = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError):
        return None
    node = ast.parse(source).body[0]
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _own_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes of a function's body, not those of functions or classes nested in it."""
    found, stack = [], list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        found.append(child)
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(child))
    return found


def _arguments(func: Any) -> list[str]:
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    return [name for name, p in signature.parameters.items()
            if name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def needed(obj: Any) -> dict[str, set[str]]:
    """The sections ``obj`` needs: title -> the names the section must list (empty: any)."""
    need: dict[str, set[str]] = {}
    if inspect.isclass(obj):  # a dataclass's fields are documented where they are declared (``#:``)
        init = obj.__init__ if "__init__" in vars(obj) and not dataclasses.is_dataclass(obj) else None
        arguments = _arguments(obj) if init is not None else []
        if arguments:
            need["Parameters"] = set(arguments)
        node = _function_node(init) if init is not None else None
        if node is not None and any(isinstance(n, ast.Raise) and n.exc is not None for n in _own_nodes(node)):
            need["Raises"] = set()
        return need
    arguments = _arguments(obj)
    if arguments:
        need["Parameters"] = set(arguments)
    node = _function_node(obj)
    if node is None:
        return need
    nodes = _own_nodes(node)
    annotation = node.returns
    no_value = annotation is not None and (
        (isinstance(annotation, ast.Constant) and annotation.value in (None, "None"))
        or (isinstance(annotation, ast.Name) and annotation.id in ("None", "NoReturn", "Never")))
    if annotation is not None and not no_value:
        need["Returns"] = set()
    elif annotation is None and any(isinstance(n, (ast.Yield, ast.YieldFrom)) or
                                    (isinstance(n, ast.Return) and n.value is not None) for n in nodes):
        need["Returns"] = set()
    if any(isinstance(n, ast.Raise) and n.exc is not None for n in nodes):
        need["Raises"] = set()
    return need


def problems(obj: Any) -> list[str]:
    """What the docstring of ``obj`` lacks (empty: nothing)."""
    found = sections(obj.__doc__ or "")
    out = []
    for title, names in needed(obj).items():
        alternatives = {"Parameters": ("Parameters", "Other Parameters", "Attributes") if inspect.isclass(obj)
                        else ("Parameters", "Other Parameters"),
                        "Returns": ("Returns", "Yields"), "Raises": ("Raises",)}[title]
        present = [found[a] for a in alternatives if a in found]
        if not present:
            out.append(f"no {title} section")
            continue
        missing = names - set().union(*(documented_names(body) for body in present))
        if missing:
            out.append(f"{title} does not list {', '.join(sorted(missing))}")
    return out


def public_modules() -> list[str]:
    """The modules documented in ``docs/api.rst`` (its ``automodule`` directives)."""
    text = (ROOT / "docs" / "api.rst").read_text()
    return list(dict.fromkeys(re.findall(r"^\.\. automodule:: ([\w.]+)", text, re.MULTILINE)))


def public_callables() -> dict[str, Any]:
    """Every function and class in the ``__all__`` of a public module: ``module.name`` -> object,
    each object once (under the first module that exports it)."""
    out: dict[str, Any] = {}
    seen: set[int] = set()
    for name in public_modules():
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr, None)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and id(obj) not in seen:
                seen.add(id(obj))
                out[f"{name}.{attr}"] = obj
    return out


def coverage() -> dict[str, tuple[int, int]]:
    """Per section, (how many public callables have it, how many need it)."""
    counts = {"Parameters": [0, 0], "Returns": [0, 0], "Raises": [0, 0], "all": [0, 0]}
    for obj in public_callables().values():
        need, lacking = needed(obj), problems(obj)
        for title in need:
            counts[title][1] += 1
            counts[title][0] += not any(p.startswith(f"no {title}") or p.startswith(f"{title} does not")
                                        for p in lacking)
        counts["all"][1] += 1
        counts["all"][0] += not lacking
    return {title: (have, total) for title, (have, total) in counts.items()}


if __name__ == "__main__":
    for title, (have, total) in coverage().items():
        print(f"{title}: {have} of {total}")
    if sys.argv[1:] == ["--list"]:
        for name, obj in public_callables().items():
            lacking = problems(obj)
            print(f"{name}: {'; '.join(lacking) if lacking else 'ok'}")
