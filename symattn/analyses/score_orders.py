"""Orders proved through the last layer's scores: the frame's gap closed by a valuation lemma.

Where the constants route proves its frame only to a truncation ``t^N`` (the partial frame: the
exact series of the higher orders do not fit), the orders past ``N`` of a stack whose *last* layer
is a plain softmax attention (one summed head with values, no residual, no LayerNorm, no biases)
followed by an MLP, after a layer that ends in an MLP (no LayerNorm after it), come from that
layer's scores alone, and their lower bounds need only the primal series (:func:`score_orders`;
the lemma and its certification are in its Notes; :func:`covered` says where it applies).
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from symattn.core.algebras.balls import digits_to_bits, precision
from symattn.core.errors import CheckFailed
from symattn.core.linalg import Matrix
from symattn.core.rank_certificate import ball_minor_rank
from symattn.analyses.contact import Setup
from symattn.analyses.frame_proof import FrameProof

__all__ = ["score_orders", "covered", "SCORE_DIGITS", "DIFFERENCE_ORDER"]

#: Digits of the ball series of the score columns and of the leading matrix's certified minor.
SCORE_DIGITS = 300

#: The token differences are computed exactly to ``u^DIFFERENCE_ORDER`` (``u = t^2``): a bound
#: ``a`` up to ``t^12``, lemma orders up to ``t^26``.
DIFFERENCE_ORDER = 7


def covered(arch) -> str | None:
    """None where the lemma covers ``arch`` (:func:`score_orders`, Notes), else why not (one line).

    Parameters
    ----------
    arch : Architecture
        The architecture.

    Returns
    -------
    str or None

    Examples
    --------
    >>> from symattn.model.architecture import Architecture
    >>> covered(Architecture.uniform(3, 2, 1, 3, "exp", mlp=2, activation="tanh")) is None
    True
    >>> covered(Architecture.uniform(2, 2, 1, 3, "exp", skip="value", mlp=2, activation="tanh"))
    'the last layer is not a plain softmax attention (residual, LayerNorm, biases or another normalizer)'
    """
    D = arch.depth
    if D < 2:
        return "one layer: its scores' columns are in the frame already"
    last, before = arch.layers[-1], arch.layers[-2]
    if last.residual or last.has_norm or last.bias or not last.normalizer.exponential:
        return "the last layer is not a plain softmax attention (residual, LayerNorm, biases or another normalizer)"
    heads = last.head_blocks(D)
    if len(heads) != 1 or "V" not in heads[0] or "O" in heads[0] or not last.mlp:
        return "the last layer is not one summed head with values followed by an MLP"
    if not before.mlp or before.has_norm or "mlp.out_bias" not in before.layer_blocks(D - 1) or \
            "mlp.in_bias" not in last.layer_blocks(D):
        return "the layer before the last does not end in an MLP output bias (or the last MLP has no input bias)"
    return None


def _differences_bound(s: Setup, X: np.ndarray, seconds: float) -> int | None:
    """A lower bound ``a`` (in ``t``) of the valuation of the last layer's input token differences on
    every input: exact zeros in Q[constants] below it (``u = t^2``); None where time runs out."""
    from symattn.analyses.collapse import native_path_values
    from symattn.analyses.constant_spectrum import constant_capacity
    from symattn.core.algebras.constants import constant_series
    from symattn.model.interpreter import evaluate
    from symattn.model.network import native_network

    start, D = time.perf_counter(), s.arch.depth
    graph = native_network(s.arch)
    least = DIFFERENCE_ORDER
    for x in X:
        if least == 0:  # the tokens differ at t^0 on some input: no bound
            break
        if time.perf_counter() - start > seconds:
            return None
        A = constant_series(least, constant_capacity(s.arch))
        values = native_path_values(s.arch, A, s.U, s.W, s.V, squared=True)
        values["X"] = A.const(x[None])
        Y = evaluate(graph, A, values)[f"X{D - 1}"]  # (u-order, 1, d, n): the last layer's input
        for k in range(least):
            if any(not bool(np.all(A.field.is_zero(np.asarray(Y[k][..., j] - Y[k][..., 0]))))
                   for j in range(1, Y.shape[-1])):
                least = k
                break
    return 2 * least


def _shift(s: Setup, c: np.ndarray) -> np.ndarray:
    """The score shift ``xi(c)`` (:func:`score_orders`, Notes) as a vector of the native entries."""
    arch, D = s.arch, s.arch.depth
    offsets, P = arch.offsets(), arch.native_size
    fb, fa = arch.layers[-2].layer_blocks(D - 1)["mlp.out_bias"].name, arch.layers[-1].layer_blocks(D)["mlp.in_bias"].name
    head = arch.layers[-1].head_blocks(D)[0]
    Fa = np.asarray(s.point[arch.layers[-1].layer_blocks(D)["mlp.in"].name], dtype=object)
    V = np.asarray(s.point[head["V"].name], dtype=object)
    xi = np.zeros(P, dtype=object)
    xi[:] = 0
    xi[offsets[fb]: offsets[fb] + len(c)] = c
    back = -Fa.dot(V.dot(c))
    xi[offsets[fa]: offsets[fa] + len(back)] = back
    return xi


def score_orders(s: Setup, run: dict, say: Callable[[str], None], seconds: float) -> tuple[list[int], str] | None:
    """The orders of the partial frame's gap from the lemma (:func:`score_orders`, Notes): ``(orders, note)``
    with the gap's orders (to add to the frame's finite ones), or None where the lemma does not
    cover the stack or its leading matrix is not certified (said through ``say``).

    Parameters
    ----------
    s : Setup
        The contact setup.
    run : dict
        The partial frame's run (its orders and gap).
    say : callable
        Progress lines.
    seconds : float
        The time budget of the certification.

    Returns
    -------
    tuple or None
        ``(orders, note)``, or None.

    Raises
    ------
    CheckFailed
        A last-layer column is not of the order the lemma proves (in balls).

    Notes
    -----
    **The lemma.** Let ``y_1(t), ..., y_n(t)`` be the last layer's input tokens along the path and
    ``a`` a lower bound of the valuation of their differences ``y_j - y_1`` (exact zeros below it, in
    Q adjoined the constants). The layer outputs ``MLP(z_i)``, ``z_i = sum_j a_ij V y_j``,
    ``a_ij = softmax_j(s_ij)``. A parameter change that moves only the scores, by ``ds_ij``, moves
    ``z_i`` by ``sum_j a_ij (ds_ij - sum_l a_il ds_il) V (y_j - y_1)`` (the weights of the change sum
    to 0), which has valuation at least ``val(ds_ij - ds_il) + a``. Hence

    * a column of ``Q`` (``K = t W``): ``ds_ij - ds_il = y_i^T dQ K^T (y_j - y_l)``, so the column is
      ``O(t^(1 + 2a))``; the same for ``K`` (``Q = t U``);
    * the *score shift* ``xi(c)``: the previous MLP's output bias ``fb += c`` moves every token by
      ``c``; the last MLP's input bias ``fa -= Fa V c`` takes back what the values carry
      (``sum_j a_ij V c = V c``); what is left is in the scores, ``ds_ij - ds_il = c^T Q K^T (y_j -
      y_l)``, so ``J xi(c) = O(t^(2 + 2a))`` (for ``Q^T c = 0`` an exact symmetry, the interface shift).

    These columns, with the proved frame's finite columns and the declared symmetries, form a basis
    at ``t = 0`` (checked exactly: the frame ``C(t)`` is then unimodular). Their coefficients up to the
    lemma's orders are computed in ball series (the same code in a second field) and must contain 0
    below them (:class:`~symattn.core.errors.CheckFailed` otherwise: the lemma or the code is wrong);
    their coefficients at the lemma's orders, stacked with the frame's leading coefficients, form the
    leading matrix ``E(0)``, whose full column rank is certified in balls. Then ``J C = E(t)
    diag(t^v)`` and the Smith orders are exactly ``v``: the frame's, ``1 + 2a`` for the query/key
    columns and ``2 + 2a`` for the score shifts. Where ``E(0)`` is not certified (a bound ``a`` below the
    true valuation, say) the result is None with the reason: the partial frame stands.
    """
    from fractions import Fraction

    import flint

    from symattn.analyses.collapse import bank_jacobian
    from symattn.core.algebras.ballseries import ball_series

    proof: FrameProof = run["proof"]
    why = covered(s.arch)
    if why is not None or proof is None or not proof.gap or run.get("J") is None:
        say(f"no score orders: {why or 'no gap'}")
        return None
    start, X, arch, D = time.perf_counter(), run["X"], s.arch, s.arch.depth
    a = _differences_bound(s, X, seconds / 2)
    if a is None or a == 0:
        say("no score orders: " + ("out of time" if a is None else "the last layer's tokens differ at t^0"))
        return None
    say(f"score orders: the last layer's input tokens agree mod t^{a} exactly (Q[constants])")
    P, lead = arch.native_size, s.kernel.along_path()
    cols = np.concatenate(s.block_idx)
    native = [s.columns[int(j)] for j in cols]
    finite = [j for j, o in enumerate(proof.orders) if o is not None]
    basis = [np.array([sum((Fraction(q) for jj, p, q in proof.terms[j] if native[jj] == m and p == 0), Fraction(0))
                       for m in range(P)], dtype=object) for j in finite]
    kernel = [x if any(v != 0 for v in x) else y for x, y in zip(lead[0], lead[1])]
    head = arch.layers[-1].head_blocks(D)[0]
    factor_cols = [m for m in range(P) if arch.column_blocks()[m] in (head["Q"], head["K"])]
    units = [np.array([Fraction(int(m == f)) for m in range(P)], dtype=object) for f in factor_cols]
    width = arch.widths[D - 1]
    shifts = [_shift(s, np.array([Fraction(int(i == k)) for i in range(width)], dtype=object)) for k in range(width)]
    # the candidates that complete the basis at t = 0, greedily (query/key columns first)
    chosen: list[tuple[str, np.ndarray, int]] = []
    rank = Matrix.rational(np.array(basis + kernel, dtype=object)).rank() if basis + kernel else 0
    for kind, vec, order in [("query/key", u, 1 + 2 * a) for u in units] + [("score shift", x, 2 + 2 * a) for x in shifts]:
        if rank == P:
            break
        trial = Matrix.rational(np.array(basis + kernel + [c[1] for c in chosen] + [vec], dtype=object)).rank()
        if trial > rank:
            chosen.append((kind, vec, order))
            rank = trial
    if rank != P or len(chosen) != proof.gap:
        say(f"no score orders: the frame, the declared symmetries and the lemma's columns span {rank} of {P} "
            f"at t = 0 ({len(chosen)} chosen for a gap of {proof.gap})")
        return None
    # the chosen columns in ball series to one past the lemma's orders
    H = max(o for _, _, o in chosen) + 1
    touched = sorted({m for _, v, _ in chosen for m in range(P) if v[m] != 0})
    A = ball_series(H, SCORE_DIGITS)
    directions = np.array([[flint.fmpq(int(v[m].numerator), int(v[m].denominator)) for m in touched]
                           for _, v, _ in chosen], dtype=object)
    leads = []
    with A.field.working():
        for x in X:
            if time.perf_counter() - start > seconds:
                say("no score orders: out of time in the ball series")
                return None
            B = bank_jacobian(arch, x[None], s.U, s.W, s.V, A, touched, verify=0)  # (H, rows, touched)
            cols_b = np.array([[row.dot(d) for row in B[k]] for k in range(H) for d in directions],
                              dtype=object).reshape(H, len(chosen), -1)
            for i, (kind, _, order) in enumerate(chosen):
                if any(not v.contains(0) for k in range(order) for v in cols_b[k, i]):
                    raise CheckFailed(f"a {kind} column of the last layer is not O(t^{order}) in balls, as the score "
                                      "lemma proves it is: the lemma's conditions or the code are wrong")
            leads.append(cols_b[[o for _, _, o in chosen], range(len(chosen))])
    E_new = np.concatenate(leads, axis=1).T  # rows x chosen
    # the frame's leading coefficients in balls (each input in its field)
    from symattn.analyses.frame_proof import _combine, _valuation

    fields, J = run["fields"], run["J"][:, :, cols]
    per = J.shape[1] // len(fields)
    E_old = []
    for j in finite:
        col = _combine(J, proof.terms[j])
        v = _valuation(col)
        entries = col[v]
        E_old.append(np.concatenate([F.balls(entries[b * per: (b + 1) * per], SCORE_DIGITS)
                                     for b, F in enumerate(fields)]))
    E = np.concatenate([np.array(E_old, dtype=object).T, E_new], axis=1)
    with precision(digits_to_bits(SCORE_DIGITS)):
        certified, numerical = ball_minor_rank(E, SCORE_DIGITS, pivot_digits=SCORE_DIGITS)
    if certified < E.shape[1]:
        say(f"no score orders: the leading matrix has a certified minor of size {certified} of {E.shape[1]} "
            f"(numerical rank {numerical})")
        return None
    orders = [o for _, _, o in chosen]
    kinds = ", ".join(f"{k} t^{o}" for k, _, o in chosen)
    note = (f"score orders: the frame's gap of {proof.gap} (mod t^{proof.truncation}) closed by the last layer's "
            f"scores: its input tokens "
            f"agree mod t^{a} exactly (Q[constants]), so its query/key columns are O(t^{1 + 2 * a}) and the "
            f"score shifts (previous MLP's output bias moved by c, the last MLP's input bias taking back V c) "
            f"O(t^{2 + 2 * a}) (the softmax derivative is a covariance of two token differences); with the "
            f"frame's columns and the declared symmetries a basis at t = 0 (exact), their coefficients below "
            f"these orders balls containing 0 and at them, with the frame's leading coefficients, a leading "
            f"matrix of certified full column rank {certified} ({SCORE_DIGITS}-digit balls): {kinds} certified")
    return orders, note
