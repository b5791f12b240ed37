"""Contact orders on a growing bank: the column split, the bank's stopping rule, the Smith forms, the bands.

:func:`setup` splits the declared symmetries off the native columns along the
collapse path (:class:`~symattn.model.symmetries.GaugeKernel`) and groups the
visible columns into blocks; where a statement gives the divided frame of App. D.3
(:data:`~symattn.theorems.statements.APP_D3`) the blocks are the paper's (the
readout, then each layer's query/key columns) with their exponents, elsewhere
they are the layers. Then the bank grows:

* :func:`framed_bank`: until the divided frame ``E(0)`` has full rank (App. D.3),
  then the truncation rises while orders stay undecided;
* :func:`grown_bank`: without a frame, until two consecutive sizes give the same
  Smith orders (evidence that it separates), raising the truncation likewise.

Both return the Smith orders of the block prefixes, which :func:`attribute_bands`
turns into :class:`Band` objects. The certificate is :mod:`symattn.analyses.spectrum`'s.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from symattn.core.algebras import series_for
from symattn.core.algebras.polyseries import PolySeries
from symattn.core.algebras.series import SeriesAlgebra
from symattn.core.errors import CheckFailed, OutsideHypotheses, SymattnError
from symattn.core.linalg import Matrix, SeriesMatrix
from symattn.core.series_mod_p import matmul_mod
from symattn.core.parallel import map_forked
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank
from symattn.model.symmetries import GaugeKernel
from symattn.theorems import statements
from symattn.theorems.formulas import divisibility_orders
from symattn.analyses.collapse import (
    bank_jacobian, checked_path, jacobian_algebra, kernel_product, path_point_of, split_path,
)

__all__ = ["Band", "Setup", "setup", "framed_bank", "grown_bank", "verify_kernel", "attribute_bands",
           "compress_rows", "divided_frame"]


@dataclass
class Setup:
    """What every route of :func:`native_spectrum` shares: the path, the kernel split, the blocks."""

    arch: Architecture
    point: dict
    U: dict
    W: dict
    V: dict
    kernel: GaugeKernel
    zeta: int
    blocks: list          # (label, layer, native columns), in Jacobian column order
    columns: list[int]    # the visible native columns, block after block
    block_idx: list       # the positions of each block's columns in ``columns``
    exponents: list[int] | None  # the divided frame's exponents (App. D.3), None without a statement
    hint: list[int]       # divisibility exponents: the first truncation and its cap
    method: str
    seed: int
    say: Callable[[str], None]
    #: refuses a bank of ``inputs`` at truncation ``N`` beyond the memory limit (set by
    #: native_spectrum; called before every evaluation of a growing bank or truncation)
    memory: Callable[[int, int], None] = lambda inputs, N: None

    @property
    def visible(self) -> int:
        return len(self.columns)

    def jacobian(self, X: np.ndarray, algebra: SeriesAlgebra, verify: int = 1) -> np.ndarray:
        return bank_jacobian(self.arch, X, self.U, self.W, self.V, jacobian_algebra(algebra), self.columns,
                             verify=verify)

    def checked_apart(self, algebra: SeriesAlgebra) -> bool:
        """Whether a growing bank's Jacobian in ``algebra`` has its checks run apart, after the bank
        has grown (:meth:`check_inputs`): in the fast series (:func:`jacobian_algebra`) the check of a
        new part, on its first input (:func:`bank_jacobian`), costs more than the part itself, and the
        checks of all parts then run side by side on the cores."""
        return isinstance(jacobian_algebra(algebra), PolySeries)

    def check_inputs(self, X: np.ndarray, J: np.ndarray, algebra: SeriesAlgebra, inputs: Sequence[int]) -> None:
        """The rows of each input in ``inputs`` computed again with the check of :func:`bank_jacobian`
        (``verify=1``: a second code path on a random direction) and compared with those of ``J``;
        the inputs side by side on the cores. Raises :class:`~symattn.core.errors.CheckFailed`."""
        rows = self.arch.widths[-1] * self.arch.tokens

        def same(i: int) -> bool:
            return bool((self.jacobian(X[i: i + 1], algebra, verify=1) == J[:, i * rows: (i + 1) * rows]).all())

        for i, ok in zip(inputs, map_forked(same, list(inputs))):
            if not ok:
                raise CheckFailed(f"the Jacobian rows of input {i} differ from the same rows computed again "
                                  "with the Jacobian's check")

    def smith(self, J: np.ndarray, algebra: SeriesAlgebra, prefixes: bool = True) -> tuple[np.ndarray, list]:
        """The row compression of ``J`` and the Smith orders of its block prefixes (the last: all)."""
        Jc = J if self.method == "exact" else compress_rows(J, algebra, min(J.shape[1], self.visible + 8), self.seed)
        ends = self.prefix_ends() if prefixes else [self.visible]
        self.say(f"Smith forms of the first {', '.join(str(n) for n in ends)} columns (the block prefixes, "
                 f"through {self.blocks[-1][0]})" if prefixes else f"Smith form of {self.visible} columns")
        return Jc, [orders for orders, _ in SeriesMatrix(algebra, Jc).prefix_smith_orders(ends)]

    def prefix_ends(self) -> list[int]:
        """The number of visible columns through each block (the blocks are consecutive columns)."""
        return [int(n) for n in np.cumsum([len(idx) for idx in self.block_idx])]


def setup(arch: Architecture, seed: int, values: str, method: str, path, say) -> Setup:
    """The path (seeded or given), the declared symmetries split off, the visible blocks.

    Parameters
    ----------
    arch : Architecture
    seed : int
    values : {"identity", "random"}
    method : str
    path : tuple or mapping or None
        An explicit path, or None for the seeded one.
    say : callable
        Progress lines.

    Returns
    -------
    Setup

    Raises
    ------
    OutsideHypotheses
        If the declared symmetries do not split off exactly at the path.
    """
    point = path_point_of(arch, seed, values) if path is None else checked_path(arch, path)
    U, W, V = split_path(arch, point)
    kernel = GaugeKernel(arch, point)  # the path at t = 1
    zeta, verified = kernel.path_split()
    if not verified:
        raise OutsideHypotheses("the gauge directions do not split off exactly at this path "
                                "(values must be invertible); this is outside Theorem 4's setting"
                                if statements.THEOREM_4.covers(arch) else
                                "the declared symmetries are dependent at t = 0 on this path (a head rank "
                                "too large for the width?); the kernel split needs independent directions")
    if statements.APP_D3.covers(arch):  # the divided frame of App. D.3: the paper's blocks
        blocks = kernel.visible_blocks()
        exponents = statements.frame(arch, blocks)
    else:
        owner = arch.column_blocks()
        blocks = [(f"layer {i}", i, [c for c in kernel.visible() if owner[c].layer == i])
                  for i in range(1, arch.depth + 1)]
        exponents = None
    columns = [c for _, _, cols in blocks for c in cols]
    local = np.cumsum([0] + [len(cols) for _, _, cols in blocks])
    block_idx = [np.arange(local[b], local[b + 1]) for b in range(len(blocks))]
    return Setup(arch, point, U, W, V, kernel, zeta, blocks, columns, block_idx, exponents,
                  divisibility_orders(arch), method, seed, say)


def framed_bank(s: Setup, bank, order: int | None) -> dict:
    """The bank and truncation by the divided frame (App. D.3): grow a seeded bank until
    ``E(0)`` has full rank, then raise the truncation while orders stay undecided.

    Parameters
    ----------
    s : Setup
    bank : int, "auto" or numpy.ndarray
    order : int or None
        The truncation (None: from the divisibility exponents).

    Returns
    -------
    dict
        The bank, the Jacobian and the orders found.

    Raises
    ------
    SymattnError
        For a bank that is not a positive size, ``"auto"`` or an array of the right shape.
    OutsideHypotheses
        If a column is not divisible by its proven power of ``t``.
    """
    arch, per_input = s.arch, s.arch.d * s.arch.tokens
    if isinstance(bank, str):
        if bank != "auto":
            raise SymattnError(f"bank must be a positive integer or 'auto', got {bank!r}")
        sizes = _auto_sizes(-(-s.visible // per_input))
    elif isinstance(bank, (int, np.integer)):
        sizes = iter([int(bank)])
    else:
        sizes = iter([None])
    N = order or (max(s.hint) + 2)
    algebra = series_for(s.method, N)
    # seeded banks nest (random_bank(m) is a prefix of random_bank(m')): keep computed rows,
    # as blocks joined once (the frame reads only the new rows, see divided_frame)
    parts: list[np.ndarray] = []
    kept: dict = {}
    apart: list[int] = []  # the first input of each part, checked after the bank has grown
    for size in sizes:
        X = np.asarray(bank, dtype=object) if size is None else random_bank(arch, size, s.seed)
        if X.ndim != 3 or X.shape[1:] != (arch.d, arch.tokens):
            raise SymattnError(f"bank must have shape (size, {arch.d}, {arch.tokens}), got {X.shape}")
        done = sum(part.shape[1] for part in parts) // per_input
        s.memory(len(X), N)
        s.say(f"bank {len(X)}: Jacobian {len(X) * per_input} x {s.visible} (of {arch.native_size}) as series "
              f"to order {N} ({algebra.field.name})" + (f"; the rows of the first {done} inputs kept" if done else ""))
        parts.append(s.jacobian(X[done:], algebra, verify=0 if s.checked_apart(algebra) else 1))
        apart += [done] if s.checked_apart(algebra) else []
        frame, divisible = divided_frame(parts[-1], algebra, s.exponents, s.block_idx, kept)
        separating = sum(frame) == s.visible
        if separating or not isinstance(bank, str):
            break
        s.say(f"bank {len(X)} does not separate (rank E(0) = {sum(frame)} < {s.visible}); growing")
    J = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
    del parts
    if apart:
        s.say(f"checking the Jacobian on inputs {', '.join(str(i) for i in apart)} (the first of each part; a "
              "second code path, side by side on the cores)")
        s.check_inputs(X, J, algebra, apart)
    if not divisible:
        raise OutsideHypotheses("a Jacobian column is not divisible by its proven power of t; "
                                "the normalizer or path is outside Theorem 4's hypotheses")
    while True:
        Jc, nested = s.smith(J, algebra)
        rank = len(nested[-1])
        if rank == s.visible or order is not None or N > 4 * max(s.hint) + 8:
            break
        N *= 2
        s.say(f"{s.visible - rank} orders undecided; raising the truncation to {N}")
        algebra = series_for(s.method, N)
        s.memory(len(X), N)
        J = s.jacobian(X, algebra)
    return dict(X=X, J=J, algebra=algebra, N=N, nested=nested, frame=frame, divisible=divisible,
                separating=bool(separating), bank_note=None)


def grown_bank(s: Setup, bank, order: int | None) -> dict:
    """The bank and truncation without a divided frame: grow the bank until two consecutive
    sizes give the same Smith orders (evidence that it separates), then raise the truncation
    while orders stay undecided.

    Parameters
    ----------
    s : Setup
    bank : int, "auto" or numpy.ndarray
    order : int or None

    Returns
    -------
    dict

    Raises
    ------
    SymattnError
        For a bank that is not a positive size, ``"auto"`` or an array of the right shape.
    """
    arch, per_input = s.arch, s.arch.d * s.arch.tokens
    given = None
    if isinstance(bank, np.ndarray):  # an explicit bank (e.g. of a family, symattn.analyses.bank)
        given, bank = bank, len(bank)
    elif isinstance(bank, str) and bank != "auto":
        raise SymattnError(f"bank must be a positive integer or 'auto', got {bank!r}")
    cap = 4 * max(s.hint) + 8
    rows: dict = {}  # computed rows by truncation: seeded (and given) banks nest
    checked: list = []

    def orders_at(size: int, N: int):
        X = given[:size] if given is not None else random_bank(arch, size, s.seed)
        if X.ndim != 3 or X.shape[1:] != (arch.d, arch.tokens):
            raise SymattnError(f"bank must have shape (size, {arch.d}, {arch.tokens}), got {X.shape}")
        A = series_for(s.method, N)
        done = rows[N].shape[1] // per_input if N in rows else 0
        if done < size:
            s.memory(size, N)
        s.say(f"bank {size}: Jacobian {size * per_input} x {s.visible} (of {arch.native_size}) to order t^{N} "
              f"({A.field.name})" + (f"; the rows of the first {done} inputs kept" if done else ""))
        if done < size:
            new = s.jacobian(X[done:], A, verify=0 if checked else 1)
            checked.append(True)  # the Jacobian code is checked on the first evaluation of a run
            rows[N] = new if not done else np.concatenate([rows[N], new], axis=1)
        J = rows[N][:, : size * per_input]
        Jc, nested = s.smith(J, A, prefixes=False)
        return X, A, J, Jc, nested[-1]

    N = order or (max(s.hint) + 2)
    stable = True
    if isinstance(bank, str) and bank == "auto":
        size = -(-2 * s.visible // per_input)
        X, A, J, Jc, orders = orders_at(size, N)
        for _ in range(8):
            bigger = size + max(1, size // 2)
            X2, A2, J2, Jc2, orders2 = orders_at(bigger, N)
            stable = orders2 == orders
            size, X, A, J, Jc, orders = bigger, X2, A2, J2, Jc2, orders2
            if stable and (len(orders) == s.visible or order is not None or N >= cap):
                break
            if stable:
                N *= 2
                s.say(f"{s.visible - len(orders)} orders undecided; truncation raised to t^{N}")
                X, A, J, Jc, orders = orders_at(size, N)
        bank_note = (f"bank auto: Smith orders equal at the last two sizes (evidence that {size} inputs "
                     "separate)" if stable else f"bank auto: orders still changing at {size} inputs")
    else:
        size = int(bank)
        while True:
            X, A, J, Jc, orders = orders_at(size, N)
            if len(orders) == s.visible or order is not None or N >= cap:
                break
            N *= 2
        bank_note = f"bank: {size} seeded inputs (orders can only rise on a non-separating bank)"
    s.say("Smith forms of the layer prefixes (band attribution)")
    nested = [o for o, _ in SeriesMatrix(A, Jc).prefix_smith_orders(s.prefix_ends()[:-1])] + [orders]
    return dict(X=X, J=J, algebra=A, N=N, nested=nested, frame=None, divisible=None, separating=None,
                bank_note=bank_note)


def verify_kernel(s: Setup, X: np.ndarray, algebra: SeriesAlgebra) -> str:
    """Verify the declared symmetries as kernel vectors (:meth:`GaugeKernel.verify`): through ``pi``
    with an effective map, else against ``J(t)`` on ``X``: ``J(t) xi(t) = 0`` mod ``t^N``, mod p,
    for every direction (:func:`~symattn.analyses.collapse.kernel_product`).

    Parameters
    ----------
    s : Setup
    X : numpy.ndarray
        The bank.
    algebra : SeriesAlgebra

    Returns
    -------
    str
        What was verified, in words.
    """
    return s.kernel.verify(lambda dirs: kernel_product(s.arch, X, s.U, s.W, s.V, s.kernel.along_path(), algebra),
                           algebra.field, where=f"J mod t^{algebra.order}")


@dataclass
class Band:
    """``multiplicity`` Smith factors ``t^order`` first met with layer ``layer``'s
    query/key columns (``layer = 0``: the value coordinates)."""

    layer: int
    order: int
    multiplicity: int
    block: str
    leading: list[float] = field(default_factory=list)

    def __getitem__(self, key: str):
        """``band["order"]``: the former dict bands of the variant spectra (deprecated)."""
        return getattr(self, key)


def compress_rows(J: np.ndarray, algebra: SeriesAlgebra, rows: int, seed: int) -> np.ndarray:
    """Random constant row combination ``C J`` mod p (orders can only rise).

    Parameters
    ----------
    J : numpy.ndarray
    algebra : SeriesAlgebra
    rows : int
        Rows kept.
    seed : int

    Returns
    -------
    numpy.ndarray
    """
    p = algebra.field.p
    C = np.random.default_rng(seed).integers(0, p, size=(rows, J.shape[1]), dtype=np.int64)
    return matmul_mod(C, J, p)


def divided_frame(J: np.ndarray, algebra: SeriesAlgebra, exponents: list[int],
                   blocks: list[np.ndarray], kept: dict | None = None) -> tuple[list[int], bool]:
    """The divided frame ``E(0)`` of App. D.3, block by block: each block's
    columns divided by ``t^exponent`` (the proven divisibility of App. D.2) at
    ``t = 0``. Returns the rank increment of each block and whether every
    coefficient below the exponents vanishes (the divisibility, observed).

    ``kept`` (a dict, empty at first) carries an echelon basis of the frame rows of
    earlier calls: ``J`` then holds only the rows not seen before (a growing bank),
    stacked under that basis, which spans the same row space. Every prefix rank comes
    from the pivot columns of one echelon form (:meth:`symattn.core.linalg.Matrix.rref`).

    Parameters
    ----------
    J : numpy.ndarray
    algebra : SeriesAlgebra
    exponents : list of int
        The proven divisibility of each block.
    blocks : list of numpy.ndarray
        The column indices of each block.
    kept : dict, optional

    Returns
    -------
    tuple of (list of int, bool)

    Raises
    ------
    SymattnError
        If the truncation is too short to decide an order (raise ``--order``).
    """
    kept = kept if kept is not None else {}
    divisible, cols = kept.get("divisible", True), []
    for beta, idx in zip(exponents, blocks):
        if beta >= algebra.order:
            raise SymattnError(f"truncation order {algebra.order} is too short to decide the order "
                               f"{beta}; raise --order")
        sub = J[:, :, idx]
        divisible &= bool(algebra.field.is_zero(sub[:beta]).all())
        cols.append(sub[beta])
    bounds = np.cumsum([len(idx) for idx in blocks])
    frame = np.concatenate(cols, axis=1)
    if "basis" in kept:
        frame = np.concatenate([kept["basis"], frame])
    echelon, pivots = Matrix(frame, algebra.field).rref()
    ranks = [int(np.searchsorted(pivots, b)) for b in bounds]
    out = [r - q for r, q in zip(ranks, [0] + ranks[:-1])]
    kept.update(basis=echelon.entries, divisible=divisible)
    return out, divisible


def _auto_sizes(first: int):
    size = max(1, first)
    while size <= 4096:
        yield size
        size = size + max(1, size // 2)
    raise OutsideHypotheses("no separating bank found up to 4096 inputs")


def attribute_bands(nested: Sequence[Sequence[int]], blocks: list) -> list[Band]:
    """The Smith orders of all visible columns (``nested[-1]``) as bands, each
    attributed to the first column block whose prefix already shows it.

    Adding columns can lower earlier Smith orders (they interlace), so prefix
    forms are not nested multisets. An order ``o`` of multiplicity ``m`` in the
    full form is attributed, ``m`` times in all, to the blocks where the running
    maximum of ``min(count of o in prefix b, m)`` grows. The multiplicities
    therefore always sum to the rank.

    Parameters
    ----------
    nested : sequence of sequences of int
        The Smith orders of each prefix of column blocks.
    blocks : list
        The column blocks (label, layer, columns).

    Returns
    -------
    list of Band

    Examples
    --------
    >>> [(b.layer, b.order, b.multiplicity) for b in attribute_bands([[0, 5], [0, 3, 9]], [("a", 0, []), ("b", 1, [])])]
    [(0, 0, 1), (1, 3, 1), (1, 9, 1)]
    """
    from collections import Counter

    final = Counter(nested[-1])
    seen: Counter = Counter()
    bands: list[Band] = []
    for orders, (label, layer, _) in zip(nested, blocks):
        cur = Counter(orders)
        for o in sorted(final):
            now = max(seen[o], min(cur[o], final[o]))
            if now > seen[o]:
                bands.append(Band(layer, o, now - seen[o], label))
            seen[o] = now
    return bands
