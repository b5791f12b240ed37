"""The DAG that holds a network: named nodes with attributes, edges from arguments to uses.

The graph builder (:mod:`symattn.model.network`) needs only named nodes with their
attribute dicts, edges, graph-level attributes and a topological order; this class
is that and nothing else, so that evaluating a network does not import a graph
library (networkx's import alone was a third of the start-up of ``symattn
spectrum``). :meth:`Graph.to_networkx` gives the same graph as a
``networkx.DiGraph`` for graph algorithms.
"""

from __future__ import annotations

from typing import Any, Iterator

__all__ = ["Graph"]


class _Nodes(dict):
    """Node -> attribute dict; ``nodes(data=True)`` gives ``(node, attrs)`` pairs, as networkx's."""

    def __call__(self, data: bool = False) -> list:
        return list(self.items()) if data else list(self)


class Graph:
    """A directed graph with node attributes, in the subset of networkx's ``DiGraph`` API
    the model uses (``graph``, ``nodes[n]``, ``add_node``, ``add_edge``, iteration).

    Examples
    --------
    >>> g = Graph(name="demo", inputs=["x"])
    >>> g.add_node("x", op="input")
    >>> g.add_node("y", op="sum")
    >>> g.add_edge("x", "y")
    >>> list(g), g.nodes["y"]["op"], g.graph["inputs"], list(g.predecessors("y"))
    (['x', 'y'], 'sum', ['x'], ['x'])
    >>> g.nodes(data=True)[1]
    ('y', {'op': 'sum'})
    >>> g.add_edge("z", "x")
    >>> g.topological_order()
    ['z', 'x', 'y']
    """

    def __init__(self, **graph: Any):
        #: graph-level attributes (``inputs``, ``outputs``, ``name``, ...)
        self.graph: dict[str, Any] = dict(graph)
        #: node -> its attribute dict
        self.nodes: dict[str, dict[str, Any]] = _Nodes()
        self._pred: dict[str, dict[str, None]] = {}
        self._succ: dict[str, dict[str, None]] = {}

    def add_node(self, node: str, **attrs: Any) -> None:
        """Add ``node`` (or update its attributes)."""
        if node not in self.nodes:
            self.nodes[node] = {}
            self._pred[node] = {}
            self._succ[node] = {}
        self.nodes[node].update(attrs)

    def add_edge(self, u: str, v: str) -> None:
        """Add the edge ``u -> v`` (and either node, without attributes, if new)."""
        for node in (u, v):
            if node not in self.nodes:
                self.add_node(node)
        self._succ[u][v] = None
        self._pred[v][u] = None

    def predecessors(self, node: str) -> Iterator[str]:
        return iter(self._pred[node])

    def successors(self, node: str) -> Iterator[str]:
        return iter(self._succ[node])

    def __iter__(self) -> Iterator[str]:
        return iter(self.nodes)

    def __contains__(self, node: object) -> bool:
        return node in self.nodes

    def __len__(self) -> int:
        return len(self.nodes)

    def edges(self) -> list[tuple[str, str]]:
        """Every edge ``(u, v)``, in node order."""
        return [(u, v) for u in self.nodes for v in self._succ[u]]

    def topological_order(self) -> list[str]:
        """Every node after its predecessors (Kahn's algorithm, ties in insertion order).

        Raises
        ------
        ValueError
            On a cycle.
        """
        missing = {node: len(pred) for node, pred in self._pred.items()}
        ready = [node for node, count in missing.items() if count == 0]
        order: list[str] = []
        while ready:
            node = ready.pop(0)
            order.append(node)
            for succ in self._succ[node]:
                missing[succ] -= 1
                if missing[succ] == 0:
                    ready.append(succ)
        if len(order) != len(self.nodes):
            raise ValueError("the graph has a cycle")
        return order

    def to_networkx(self):
        """The same graph as a ``networkx.DiGraph`` (node and graph attributes shared)."""
        import networkx as nx

        g = nx.DiGraph(**self.graph)
        for node, attrs in self.nodes.items():
            g.add_node(node, **attrs)
        g.add_edges_from(self.edges())
        return g
