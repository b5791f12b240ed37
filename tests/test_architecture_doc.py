"""docs/architecture.rst stays true (issue 38): its tables of long modules and long functions list
exactly the modules over 500 lines and the functions over 80 lines (docstring included), and every
module it names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "symattn"
DOC = ROOT / "docs" / "architecture.rst"


def _table(title: str) -> set[str]:
    """The first-column entries (``code`` names, comma-separated) of the list-table titled ``title``."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    at = lines.index(f".. list-table:: {title}") + 1
    while lines[at].strip():  # the table's options
        at += 1
    names: set[str] = set()
    for line in lines[at + 1:]:
        if not line.startswith("   "):
            break
        m = re.match(r"   \* - (.*)", line)
        if m:
            names |= set(re.findall(r"``([^`]+)``", m.group(1)))
    return names


def long_modules(limit: int = 500) -> set[str]:
    return {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
            if len(p.read_text(encoding="utf-8").splitlines()) > limit}


def long_functions(limit: int = 80) -> set[str]:
    out = set()
    for p in PACKAGE.rglob("*.py"):
        module = ".".join(p.relative_to(PACKAGE).with_suffix("").parts)
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > limit:
                out.add(f"{module}.{node.name}")
    return out


def test_the_long_module_table_is_true():
    assert _table("Modules over 500 lines") == long_modules()


def test_the_long_function_table_is_true():
    assert _table("Functions over 80 lines (docstring included)") == long_functions()


def test_every_module_the_page_names_exists():
    text = DOC.read_text(encoding="utf-8")
    for name in set(re.findall(r":mod:`~?(symattn(?:\.\w+)+)`", text)):
        path = ROOT / Path(*name.split("."))
        assert path.with_suffix(".py").exists() or (path / "__init__.py").exists(), name
