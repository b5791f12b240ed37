"""The interpreter of the network graphs: :func:`evaluate`, :func:`jacobian` and its check.

:func:`evaluate` runs a graph of :mod:`symattn.model.network` in any
:class:`~symattn.core.algebras.Algebra`, each node once (the DAG is shared,
never expanded into a tree): it calls ``algebra.<op>(*args, **params)`` for
every node, with no special case. :func:`jacobian` is symattn's ``jacfwd``:
the only place where forward-mode tangents are seeded. Over exact series (Q
or F_p) every Jacobian is checked, on random directions, by
:func:`series_derivative_check`, a second code path that never uses the
tangent rules.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import networkx as nx
import numpy as np

from symattn.core.algebras.modular import DEFAULT_PRIME, PrimeField
from symattn.core.algebras.rational import Rationals
from symattn.core.algebras.series import SeriesAlgebra, polynomial
from symattn.core.algebras.tangent import Dual, Tangent
from symattn.core.errors import CheckFailed, SymattnError

__all__ = ["evaluate", "jacobian", "series_derivative_check"]


def evaluate(graph: nx.DiGraph, algebra, values: Mapping[str, Any]) -> dict[str, Any]:
    """Evaluate ``graph`` in ``algebra``; ``values`` maps every input to a tensor
    of that algebra. Returns the outputs by name.

    Parameters
    ----------
    graph : networkx.DiGraph
        A graph of :mod:`symattn.model.network`.
    algebra : Algebra
        The arithmetic (:mod:`symattn.core.algebras`).
    values : mapping
        Every input of the graph, as a tensor of ``algebra``.

    Returns
    -------
    dict
        The outputs by name.

    Raises
    ------
    SymattnError
        If an input of the graph has no value.

    Examples
    --------
    >>> from symattn.model.architecture import Architecture
    >>> from symattn.model.parameters import random_native, random_bank
    >>> from symattn.model.network import native_network
    >>> from symattn.core.algebras import Float64
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
        if attrs["op"] == "input":
            env[node] = values[node]
            continue
        env[node] = getattr(algebra, attrs["op"])(*(env[a] for a in attrs["args"]), **attrs["params"])
    return {name: env[node] for name, node in graph.graph["outputs"].items()}


def jacobian(graph: nx.DiGraph, algebra, values: Mapping[str, Any], wrt: Sequence[str],
             output: "str | Sequence[str]" = "F", directions: Any = None,
             observe: Callable[[Any, Any], Any] | None = None, verify: int = 1) -> Any:
    """Forward-mode Jacobian of graph outputs in the inputs ``wrt`` (symattn's ``jacfwd``).

    The graph is evaluated once in :class:`~symattn.core.algebras.Tangent` over
    ``algebra`` with one tangent slot per column. This is the only place where
    tangents are seeded. Over a series algebra each input is seeded only in the
    directions that move it (a narrow tangent, see
    :mod:`symattn.core.algebras.tangent`), and an input no direction moves carries none.

    Convention (rows x columns): the result is a tensor of ``algebra`` of shape
    ``(m, k)``. Rows are the entries of the ``output`` tensors, each flattened
    row-major, concatenated in the order given (a single name: that output
    only). Columns are the ``k`` directions; by default the entries of the
    ``wrt`` inputs, each flattened row-major, concatenated in the order of
    ``wrt`` (``k`` = their total size). Hidden axes of ``algebra`` (series
    coefficients) stay in front: over a :class:`~symattn.core.algebras.SeriesAlgebra`
    the array is ``(order, m, k)``.

    Parameters
    ----------
    graph : a graph of :mod:`symattn.model.network`
    algebra : any algebra whose tensors are NumPy arrays (every algebra of
        :mod:`symattn.core.algebras` except :class:`~symattn.core.algebras.Tangent` itself)
    values : a tensor of ``algebra`` for every graph input
    wrt : the inputs differentiated (the column blocks)
    output : an output name, or a sequence of names (row blocks)
    directions : optional tensor of ``algebra`` of shape ``(k, n)``, ``n`` the
        total size of ``wrt``: column ``j`` is then the derivative along
        ``directions[j]`` (which may depend on the series variable)
    observe : optional map applied to the output in the tangent algebra before
        the rows are read off (e.g. a token mean); ``output`` must be one name.
        It may only use the methods of :class:`~symattn.core.algebras.Algebra`
        (the independent check runs it in a series algebra).
    verify : number of random directions on which an exact series Jacobian
        (over Q or F_p) is checked by :func:`series_derivative_check`; nonzero: a
        graph the builder marked for the naive reference is also checked against
        :mod:`symattn.model.reference` (exactly over series; numerically, to half the
        digits, over balls and mpmath); float64 and symbolic Jacobians are not checked

    Returns
    -------
    tensor of ``algebra``
        Shape ``(m, k)``, or ``(order, m, k)`` over a series algebra.

    Raises
    ------
    SymattnError
        For an input the graph does not have, directions of the wrong shape, or
        ``observe`` with several outputs.
    CheckFailed
        If the Jacobian disagrees with its independent check.

    Examples
    --------
    >>> from symattn.model.architecture import Architecture
    >>> from symattn.model.network import reduction_graph
    >>> from symattn.core.algebras import exact_series
    >>> arch = Architecture.uniform(1, 1, 1, 2, "exp")
    >>> A = exact_series(1)
    >>> vals = {"Q1": A.const([[2]]), "K1": A.const([[3]]), "V1": A.const([[5]])}
    >>> J = jacobian(reduction_graph(arch), A, vals, wrt=["Q1", "K1", "V1"], output=["L", "M1"])
    >>> [[str(v) for v in row] for row in J[0]]       # d(L, M1) / d(Q1, K1, V1)
    [['0', '0', '1'], ['3', '2', '0']]
    """
    unknown = [n for n in wrt if n not in graph.graph["inputs"]]
    if unknown:
        raise SymattnError(f"unknown graph inputs {unknown}; the graph has {graph.graph['inputs']}")
    shapes = {n: tuple(algebra.shape(values[n])) for n in wrt}
    sizes = [int(np.prod(shapes[n])) for n in wrt]
    n = sum(sizes)
    if directions is None:
        directions = algebra.const(np.eye(n, dtype=int))
    hidden = directions.ndim - 2
    k = directions.shape[-2]
    if tuple(algebra.shape(directions)) != (k, n):
        raise SymattnError(f"directions must have shape (k, {n}), got {algebra.shape(directions)}")
    T = Tangent(algebra, k)
    vals, off = {}, 0
    for name in graph.graph["inputs"]:
        vals[name] = Dual(values[name])
    for name, size in zip(wrt, sizes):
        seed = directions[..., off: off + size]
        off += size
        lo, hi = 0, k
        if isinstance(algebra, SeriesAlgebra):  # exact zeros: seed only the directions that move it
            nonzero = np.moveaxis(~algebra.field.is_zero(seed), hidden, 0)
            moves = np.flatnonzero(nonzero.reshape(k, -1).any(axis=1))
            if not len(moves):
                continue  # constant in every direction: no tangent at all
            lo, hi = int(moves[0]), int(moves[-1]) + 1
        seed = seed[(Ellipsis, slice(lo, hi), slice(None))]
        seed = seed.reshape(seed.shape[:hidden] + (hi - lo,) + shapes[name])
        vals[name] = T.variable(values[name], seed, lo)
    outs = evaluate(graph, T, vals)
    names = [output] if isinstance(output, str) else list(output)
    if observe is not None:
        if len(names) != 1:
            raise SymattnError("observe needs a single output")
        outs = {names[0]: observe(T, outs[names[0]])}
    blocks = []
    for name in names:
        out = outs[name]
        m = int(np.prod(algebra.shape(out.value)))
        tan = T.full(out)
        if tan is None:
            blocks.append(algebra.zeros((m, k)))
            continue
        tan = tan.reshape(tan.shape[:hidden] + (k, m))
        blocks.append(np.swapaxes(tan, -1, -2))
    J = blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=-2)
    if verify and _exact_series(algebra):
        series_derivative_check(graph, algebra, values, wrt, J, names, directions, observe, verify)
        arch = graph.graph.get("architecture")
        if arch is not None:  # set by the graph builder for a stack the reference covers
            from symattn.model.reference import reference_check

            field = algebra.field
            reference_check(arch, graph.graph["kind"], values, wrt, J, names, directions,
                            field.p if isinstance(field, PrimeField) else None, observe,
                            outputs={name: outs[name].value for name in names}, ring=_DeltaSeries)
    elif verify and graph.graph.get("architecture") is not None and _multiprecision(algebra):
        from symattn.model.reference import numerical_check  # the numerical tier: balls, mpmath

        numerical_check(graph.graph["architecture"], graph.graph["kind"], values, wrt, J, names, directions,
                        algebra.digits, observe, outputs={name: outs[name].value for name in names})
    return J


def _multiprecision(algebra) -> bool:
    from symattn.core.algebras import BallAlgebra, MPMath

    return isinstance(algebra, (BallAlgebra, MPMath))


def _exact_series(algebra) -> bool:
    return isinstance(algebra, SeriesAlgebra) and isinstance(algebra.field, (Rationals, PrimeField))


class _DeltaSeries:
    """Series mod ``u^N`` in a second variable ``delta`` mod ``delta^2``: pairs ``(a, b)``
    for ``a + delta b`` over a :class:`~symattn.core.algebras.SeriesAlgebra` (``b = None``:
    zero). Ring operations only; the normalizer is its Taylor polynomial evaluated
    by ring operations only (:func:`~symattn.core.algebras.series.polynomial`), so no derivative of phi (and no rule of
    :class:`~symattn.core.algebras.Tangent`) is used."""

    def __init__(self, base: SeriesAlgebra):
        self.base = base

    def _lift(self, x):
        return x if isinstance(x, tuple) else (x, None)

    def _plus(self, x, y, op):
        (a1, b1), (a2, b2) = self._lift(x), self._lift(y)
        if b2 is None:
            b = b1
        elif b1 is None:
            b = b2 if op == self.base.add else self.base.neg(b2)  # bound methods: ==, not is
        else:
            b = op(b1, b2)
        return op(a1, a2), b

    def _times(self, x, y, op):
        (a1, b1), (a2, b2) = self._lift(x), self._lift(y)
        parts = [op(a1, b2) if b2 is not None else None, op(b1, a2) if b1 is not None else None]
        parts = [q for q in parts if q is not None]
        return op(a1, a2), (None if not parts else parts[0] if len(parts) == 1 else self.base.add(*parts))

    def const(self, values):
        return self.base.const(values), None

    def shape(self, x):
        return self.base.shape(self._lift(x)[0])

    def zeros(self, shape):
        return self.base.zeros(shape), None

    def add(self, x, y):
        return self._plus(x, y, self.base.add)

    def sub(self, x, y):
        return self._plus(x, y, self.base.sub)

    def mul(self, x, y):
        return self._times(x, y, self.base.mul)

    def matmul(self, x, y):
        return self._times(x, y, self.base.matmul)

    def _each(self, x, f):
        a, b = self._lift(x)
        return f(a), None if b is None else f(b)

    def sum(self, x, axis: int):
        return self._each(x, lambda t: self.base.sum(t, axis))

    def transpose(self, x):
        return self._each(x, self.base.transpose)

    def expand(self, x, axis: int):
        return self._each(x, lambda t: self.base.expand(t, axis))

    def reciprocal(self, x):
        a, b = self._lift(x)
        r = self.base.reciprocal(a)  # 1/(a + delta b) = r - delta b r^2 (ring identity)
        return r, None if b is None else self.base.neg(self.base.mul(b, self.base.mul(r, r)))

    def phi(self, x, normalizer, derivative: int = 0, layer: int = 0):
        a, _ = self._lift(x)
        B = self.base
        if not B.field.is_zero(a[0]).all():
            raise SymattnError("the normalizer is applied to a series with nonzero constant term")
        coeffs = normalizer.rational_phi_derivative_taylor(B.order, derivative)
        v = int(B.valuation(a).min()) if a.size else B.order
        top = (B.order - 1) // v + 1 if v < B.order else 1  # + 1: delta b a^(k-1) reaches u^(N-1)
        # the shape of x even when only the constant term survives (phi'(0) = 0 at order 1: cosh)
        return self.add(self.zeros(self.shape(x)), polynomial(self, coeffs[: top + 1], x))

    def fn(self, x, function, derivative: int = 0):
        a, _ = self._lift(x)
        B = self.base
        c = a[0]
        y = self.sub(x, (B.const_array(c), None))
        v = int(B.valuation(self._lift(y)[0]).min()) if a.size else B.order
        top = (B.order - 1) // v + 1 if v < B.order else 1  # + 1: delta b y^(k-1) reaches u^(N-1)
        jets = _reference_jets(function, B.field, c, top + 1)
        result = (B.const_array(jets[top]), None)
        for k in range(top - 1, -1, -1):
            result = self.add(self.mul(y, result), (B.const_array(jets[k]), None))
        return result


def _reference_jets(function, field, c: np.ndarray, count: int) -> list[np.ndarray]:
    """``f^(k)(c)/k!`` for the check of :class:`_DeltaSeries`, by sympy from the function's
    expression (not :meth:`~symattn.core.algebras.functions.Elementwise.jets`): the derivative
    expressions substituted at each distinct rational ``c`` (over Q), or at ``c = 0`` (its
    Taylor coefficients reduced mod p); a polynomial at residues mod p."""
    import sympy

    from symattn.core.algebras.functions import NotRational

    s = sympy.Symbol("s")
    out = [np.empty(c.shape, dtype=object) for _ in range(count)]
    cache: dict = {}
    for idx, v in np.ndenumerate(c):
        key = int(v) if isinstance(field, PrimeField) else v
        if key not in cache:
            if isinstance(field, PrimeField) and function.name != "poly":
                if key != 0:
                    raise NotRational(f"{function.name} at a nonzero residue has no exact reference mod p")
                point = sympy.Integer(0)
            elif isinstance(field, PrimeField):
                point = sympy.Integer(key)
            else:
                point = sympy.Rational(int(v.p), int(v.q))
            values = []
            for k in range(count):
                q = function.expr(k).subs(s, point) / sympy.factorial(k)
                if not q.is_Rational:
                    raise NotRational(f"{function.name}: the Taylor coefficient {q} is irrational")
                values.append(q)
            cache[key] = values
        for k in range(count):
            out[k][idx] = cache[key][k]
    return [field.convert(np.vectorize(lambda q: __import__("fractions").Fraction(int(q.p), int(q.q)),
                                       otypes=[object])(a)) for a in out]


def series_derivative_check(graph: nx.DiGraph, algebra: SeriesAlgebra, values: Mapping[str, Any],
                            wrt: Sequence[str], J: np.ndarray, output: Sequence[str],
                            directions: np.ndarray, observe=None, samples: int = 1,
                            seed: int = 0) -> None:
    """Check ``J`` (from :func:`jacobian`) against directional derivatives computed
    without the tangent rules; raise :class:`~symattn.core.errors.CheckFailed` on a mismatch.

    With ``N = algebra.order`` and ``v`` a random combination of the columns'
    directions, the graph is evaluated at ``theta + delta v`` in series mod
    ``u^N`` with a second variable ``delta`` mod ``delta^2``: ring operations
    only, the normalizer as its Taylor polynomial evaluated in that ring
    (never its derivative, never :class:`~symattn.core.algebras.Tangent`). The
    ``delta`` coefficient is ``J v`` exactly, and is compared with ``J`` times
    the combination.

    The comparison is exact in F_p (p = :data:`~symattn.core.algebras.DEFAULT_PRIME`): a
    Jacobian over Q is reduced mod p first (the reduction of the true Jacobian
    is the Jacobian of the reduced data). A wrong Jacobian whose error is
    nonzero mod p passes one random direction with probability at most
    ``1/p``; an error divisible by p everywhere is not seen.

    Parameters
    ----------
    graph : networkx.DiGraph
        The graph whose Jacobian ``J`` is checked.
    algebra : SeriesAlgebra
        The exact series algebra of ``J`` (its order ``N``).
    values : mapping
        Every input's value in ``algebra``.
    wrt : sequence of str
        The inputs that ``J``'s columns differentiate, in order.
    J : numpy.ndarray
        The Jacobian, ``(N, m, k)``.
    output : sequence of str
        The outputs that ``J``'s rows stack.
    directions : numpy.ndarray
        The direction of each column, ``(N, k, n_wrt)``.
    observe : callable, optional
        Applied to the outputs before the comparison.
    samples : int
        The number of random directions.
    seed : int
        The seed of the random combinations.

    Raises
    ------
    CheckFailed
        ``J`` times a random combination differs from the directional derivative.

    Examples
    --------
    >>> from symattn.model.architecture import Architecture
    >>> from symattn.model.network import effective_network
    >>> from symattn.core.algebras import exact_series
    >>> arch = Architecture.uniform(1, 1, 1, 2, "exp")
    >>> A, g = exact_series(3), effective_network(arch)
    >>> vals = {"X": A.series([[[[0, 0]]], [[[1, -1]]]]), "L": A.const([[2]]), "M1": A.const([[1]])}
    >>> J = jacobian(g, A, vals, ["L", "M1"], verify=0)
    >>> series_derivative_check(g, A, vals, ["L", "M1"], J, ["F"], A.const(np.eye(2, dtype=int)))
    >>> J[2, 0, 1] = J[2, 0, 1] + 1                     # corrupt one entry: caught
    >>> series_derivative_check(g, A, vals, ["L", "M1"], J, ["F"], A.const(np.eye(2, dtype=int)))
    Traceback (most recent call last):
    ...
    symattn.core.errors.CheckFailed: the forward-mode Jacobian of F disagrees with the series expansion F(theta + delta v) on a random direction (mod u^3, mod p)
    """
    N = algebra.order
    field: Any = algebra.field if isinstance(algebra.field, PrimeField) else PrimeField(DEFAULT_PRIME)
    if field is not algebra.field and any(graph.nodes[n]["op"] == "fn" for n in graph):
        field = algebra.field  # an elementwise function's exact reference needs the rational constants
    if field is not algebra.field:  # over Q: compare mod p
        values = {name: field.convert(values[name]) for name in graph.graph["inputs"]}
        directions, J = field.convert(directions), field.convert(J)
    k = directions.shape[-2]
    c = np.random.default_rng(seed).integers(0, getattr(field, "p", 2**20), size=(k, samples), dtype=np.int64)
    if field.dtype is object:
        c = field.convert(c)
    v = field.reduce(np.matmul(np.swapaxes(directions, -1, -2), c))  # (N, n, samples)
    Jv = field.reduce(np.matmul(J, c))  # (N, m, samples): the claim J v
    dual = _DeltaSeries(SeriesAlgebra(field, N))
    for sample in range(samples):
        vals, off = {}, 0
        for name in graph.graph["inputs"]:
            vals[name] = (np.asarray(values[name]), None)
        for name in wrt:
            shape = tuple(algebra.shape(values[name]))
            size = int(np.prod(shape))
            vals[name] = (vals[name][0], v[:, off: off + size, sample].reshape((N,) + shape))
            off += size
        outs = evaluate(graph, dual, vals)
        if observe is not None:
            outs = {output[0]: observe(dual, outs[output[0]])}
        start = 0
        for name in output:
            a, b = outs[name]
            m = int(np.prod(a.shape[1:]))
            got = field.zeros((N, m)) if b is None else np.broadcast_to(b, a.shape).reshape(N, m)
            if not field.is_zero(field.reduce(got - Jv[:, start: start + m, sample])).all():
                raise CheckFailed(f"the forward-mode Jacobian of {name} disagrees with the series expansion "
                                  f"F(theta + delta v) on a random direction (mod u^{N}, mod p)")
            start += m
