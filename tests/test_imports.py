"""The package has no import circle, and its floors import only the floors below them (issue 22).

Every import of one symattn module by another counts, at the top of a module or inside
a function (a lazy import only hides a circle), except two kinds that never run the
imported module's code at import time: imports under ``if TYPE_CHECKING:`` and those
in a module's PEP 562 ``__getattr__`` (the deprecation shims of moved names).
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parents[1] / "symattn"

#: The floors, lowest first: a module may import its own floor and the floors below. render/
#: (the derivation record and its printers) needs only core/; its Sphinx directive is an interface.
FLOORS = {"core": 0, "model": 1, "render": 1, "theorems": 2, "analyses": 2, "audit": 3, "sweep": 3,
          "testing": 3, "commands": 4, "render.sphinx": 4}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _skipped(tree: ast.Module) -> set[int]:
    """The nodes under ``if TYPE_CHECKING:`` and in a module-level ``__getattr__``."""
    skip: set[int] = set()
    for node in tree.body:
        if ((isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test))
                or (isinstance(node, ast.FunctionDef) and node.name == "__getattr__")):
            skip |= {id(n) for n in ast.walk(node)}
    return skip


def import_graph() -> nx.DiGraph:
    """Module -> module it imports (anywhere in the module, see the module docstring)."""
    modules = _modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _skipped(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    prefix = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(prefix + ([node.module] if node.module else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            graph.add_edges_from((name, t) for t in targets if t in modules and t != name)
    return graph


def _floor(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None
    return FLOORS.get(".".join(parts[1:3]), FLOORS.get(parts[1]))


def test_no_import_circle() -> None:
    circles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert not circles, f"import circles: {circles}"


def test_floors_import_downwards() -> None:
    """core/ imports no other floor, model/ only core/, ...; the audit's computation never its report."""
    graph = import_graph()
    upward = [(a, b) for a, b in graph.edges
              if _floor(a) is not None and _floor(b) is not None and _floor(b) > _floor(a)]
    assert not upward, f"imports from a lower floor into a higher one: {upward}"
    report = {"symattn.audit.report"}
    computation = [m for m in graph if m.startswith("symattn.audit.") and m not in report]
    assert not [m for m in computation if report & nx.descendants(graph, m)], \
        "the audit's computation imports its report"


def test_the_graph_sees_imports() -> None:
    """The checks above can fail: the graph has the imports it should."""
    graph = import_graph()
    assert graph.has_edge("symattn.analyses.spectrum", "symattn.analyses.collapse")
    assert graph.has_edge("symattn.audit.report", "symattn.audit.result")
