"""The package has no import circle, and its floors import only the floors below them (issue 22, 38).

Every import of one symattn module by another counts: at the top of a module, inside a
function (a lazy import only hides a circle), under ``if TYPE_CHECKING:`` (a type
annotation that needs the other module is a dependency on it) and in a module's PEP 562
``__getattr__``. A circle is reported with the folder it lies in, so a circle between
two modules of one folder fails as surely as one across floors.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parents[1] / "symattn"

#: The floors, lowest first: a module may import its own floor and the floors below. render/
#: (the derivation record and its printers) needs only core/; theorems/ (statements, formulas,
#: the proof registry) is below the analyses that ask it; its Sphinx directive is an interface.
FLOORS = {"core": 0, "model": 1, "render": 1, "theorems": 2, "analyses": 3, "audit": 4, "sweep": 4,
          "testing": 4, "coq": 4, "commands": 5, "render.sphinx": 5}


def _modules(package: Path) -> dict[str, Path]:
    out = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def import_graph(package: Path = PACKAGE) -> nx.DiGraph:
    """Module -> module it imports (anywhere in the module, see the module docstring)."""
    modules = _modules(package)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    prefix = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(prefix + ([node.module] if node.module else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            graph.add_edges_from((name, t) for t in targets if t in modules and t != name)
    return graph


def circles(graph: nx.DiGraph) -> dict[str, list[list[str]]]:
    """The import circles, by the folder they lie in (``"across folders"`` when they span several)."""
    out: dict[str, list[list[str]]] = {}
    for component in nx.strongly_connected_components(graph):
        if len(component) > 1:
            folders = {m.rpartition(".")[0] for m in component}
            key = folders.pop() if len(folders) == 1 else "across folders"
            out.setdefault(key, []).append(sorted(component))
    return out


def _floor(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None
    return FLOORS.get(".".join(parts[1:3]), FLOORS.get(parts[1]))


def test_no_import_circle() -> None:
    found = circles(import_graph())
    assert not found, f"import circles: {found}"


def test_a_circle_inside_a_folder_is_found(tmp_path) -> None:
    """Two modules of one folder importing each other (one lazily, one for a type only) are a circle."""
    folder = tmp_path / "pkg" / "floor"
    folder.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (folder / "__init__.py").write_text("")
    (folder / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.floor.b import B\n")
    (folder / "b.py").write_text("def f():\n    from . import a\n    return a\n")
    (folder / "c.py").write_text("def __getattr__(name):\n    from pkg.floor import b\n    return b\n")
    assert circles(import_graph(tmp_path / "pkg")) == {"pkg.floor": [["pkg.floor.a", "pkg.floor.b"]]}


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
    """The checks above can fail: the graph has the imports it should, lazy and typing-only ones too."""
    graph = import_graph()
    assert graph.has_edge("symattn.analyses.spectrum", "symattn.analyses.collapse")
    assert graph.has_edge("symattn.audit.report", "symattn.audit.result")
    assert graph.has_edge("symattn.analyses.protocols", "symattn.analyses.spectrum")
