"""The network as a networkx DAG of tensor-level operations.

``graph.graph["inputs"]`` lists the input nodes and ``graph.graph["outputs"]``
maps output names to nodes: ``F`` and the layer outputs ``X1..XD`` of a
network (``X_i = S_{M_i}(X_{i-1})``, or ``V_i S_{A_i}(X_{i-1})`` natively), or
``L, M1..MD`` of the reduction. Nodes carry ``op`` (``input``, ``matmul``, ``transpose``, ``phi``, ``sum``,
``reciprocal``, ``mul``) and ``args`` (ordered predecessor names); one
attention layer ``S_M^phi(X)`` (eq. 1, tokens as columns) is

    Z = X^T M X,  W = phi(Z),  A = W / rowsum(W),  S = X A^T.

:func:`evaluate` runs a graph in any :class:`~symattn.algebras.Algebra`, each
node once (the DAG is shared, never expanded into a tree).
"""

from __future__ import annotations

from typing import Any, Mapping

import networkx as nx

from .errors import SymattnError
from .model import Architecture

__all__ = ["native_network", "effective_network", "reduction_graph", "evaluate", "layer"]


class _Builder:
    def __init__(self, name: str):
        self.g = nx.DiGraph(name=name, inputs=[], outputs={})

    def input(self, name: str) -> str:
        self.g.add_node(name, op="input", args=())
        self.g.graph["inputs"].append(name)
        return name

    def op(self, name: str, op: str, *args: str, **attrs: Any) -> str:
        self.g.add_node(name, op=op, args=args, **attrs)
        for a in args:
            self.g.add_edge(a, name)
        return name


def layer(b: _Builder, x: str, m: str, normalizer, tag: str) -> str:
    """Add ``S_m^phi(x)`` to the builder; returns the output node name."""
    xt = b.op(f"{tag}.XT", "transpose", x)
    z = b.op(f"{tag}.Z", "matmul", b.op(f"{tag}.XTM", "matmul", xt, m), x)
    w = b.op(f"{tag}.W", "phi", z, normalizer=normalizer)
    den = b.op(f"{tag}.den", "sum", w, axis=-1)
    a = b.op(f"{tag}.A", "mul", w, b.op(f"{tag}.inv", "reciprocal", den))
    return b.op(f"{tag}.S", "matmul", x, b.op(f"{tag}.AT", "transpose", a))


def effective_network(arch: Architecture) -> nx.DiGraph:
    """``F_{L,M}(X) = L S_{M_D} ... S_{M_1}(X)`` (eq. 2); inputs X, L, M1..MD; output F."""
    b = _Builder("effective")
    x = b.input("X")
    L = b.input("L")
    for i, phi in enumerate(arch.normalizers, 1):
        x = layer(b, x, b.input(f"M{i}"), phi, f"layer{i}")
        b.g.graph["outputs"][f"X{i}"] = x
    b.g.graph["outputs"]["F"] = b.op("F", "matmul", L, x)
    return b.g


def native_network(arch: Architecture) -> nx.DiGraph:
    """Native stack ``X -> V_i S_{Q_i K_i^T}(X)``; inputs X, Q_i, K_i, V_i; output F."""
    b = _Builder("native")
    x = b.input("X")
    for i, phi in enumerate(arch.normalizers, 1):
        q, k, v = b.input(f"Q{i}"), b.input(f"K{i}"), b.input(f"V{i}")
        a = b.op(f"A{i}", "matmul", q, b.op(f"K{i}T", "transpose", k))
        x = b.op(f"X{i}", "matmul", v, layer(b, x, a, phi, f"layer{i}"))
        b.g.graph["outputs"][f"X{i}"] = x
    b.g.graph["outputs"]["F"] = x
    return b.g


def reduction_graph(arch: Architecture) -> nx.DiGraph:
    """The reduction pi (eq. 3) as a graph: inputs Q_i, K_i, V_i; outputs L, M_1..M_D."""
    b = _Builder("reduction")
    P = None  # P_{i-1}; None stands for P_0 = I
    for i in range(1, arch.depth + 1):
        q, k, v = b.input(f"Q{i}"), b.input(f"K{i}"), b.input(f"V{i}")
        kt = b.op(f"K{i}T", "transpose", k)
        if P is None:
            b.op(f"M{i}", "matmul", q, kt)
            P = v
        else:
            a = b.op(f"A{i}", "matmul", q, kt)
            pa = b.op(f"PT{i}A", "matmul", b.op(f"PT{i}", "transpose", P), a)
            b.op(f"M{i}", "matmul", pa, P)
            P = b.op(f"P{i}", "matmul", v, P)
    b.g.graph["outputs"] = {"L": P, **{f"M{i}": f"M{i}" for i in range(1, arch.depth + 1)}}
    return b.g


def evaluate(graph: nx.DiGraph, algebra, values: Mapping[str, Any]) -> dict[str, Any]:
    """Evaluate ``graph`` in ``algebra``; ``values`` maps every input to a tensor
    of that algebra. Returns the outputs by name.

    Examples
    --------
    >>> from symattn.model import Architecture, random_native, random_bank
    >>> from symattn.algebras import Float64
    >>> arch = Architecture.uniform(2, 2, 1, 3, "exp")
    >>> A = Float64()
    >>> theta = random_native(arch, seed=0).as_dict()
    >>> vals = {k: A.const(v) for k, v in theta.items()}
    >>> vals["X"] = A.const(random_bank(arch, 5))
    >>> evaluate(native_network(arch), A, vals)["F"].shape
    (5, 2, 3)
    """
    missing = [n for n in graph.graph["inputs"] if n not in values]
    if missing:
        raise SymattnError(f"missing graph inputs: {', '.join(missing)}")
    env: dict[str, Any] = {}
    for node in nx.topological_sort(graph):
        attrs = graph.nodes[node]
        op = attrs["op"]
        if op == "input":
            env[node] = values[node]
            continue
        args = [env[a] for a in attrs["args"]]
        if op == "phi":
            env[node] = algebra.phi(attrs["normalizer"], *args)
        elif op == "sum":
            env[node] = algebra.sum(*args, axis=attrs["axis"])
        else:
            env[node] = getattr(algebra, op)(*args)
    return {name: env[node] for name, node in graph.graph["outputs"].items()}
