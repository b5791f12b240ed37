"""Native contact spectra of any architecture: Theorem 4, Proposition D.1, Appendix D.

How fast each direction of the weights fades from the function as the queries and
keys collapse: along the native path ``Q = t U``, ``K = t W`` (the other blocks
fixed), :func:`native_spectrum` computes the Jacobian ``J(t)`` of a bank's outputs in
every native entry as truncated power series in ``t`` (exact over Q, or over F_p),
splits off the declared symmetries and takes the Smith orders of the rest. Nothing
of the theorem enters that computation; where a statement of the paper covers the
architecture its formulas only frame the bank and the bands, and give the
``conditional`` certificate. How the orders are proved (the ``certificate``) is in
the Notes of :func:`native_spectrum`.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Callable, Mapping

import numpy as np

from symattn.core.algebras import DEFAULT_PRIME
from symattn.core.algebras import series_for
from symattn.core.algebras.functions import NotRational
from symattn.core.algebras.modular import PrimeField
from symattn.core.algebras.series import SeriesAlgebra
from symattn.core.certify import LowerBound, primes_below, settle
from symattn.core.errors import InternalError, OutsideHypotheses, SymattnError, Undecided  # noqa: F401  OutsideHypotheses: importable from here
from symattn.core.limits import graph_evaluation_bytes, require_memory, spectrum_bytes
from symattn.core.validate import require_choice, require_int, require_str
from symattn.model.architecture import Architecture, require_architecture
from symattn.model.parameters import random_bank  # noqa: F401  random_bank: doctests
from symattn.model.symmetries import head_permutation_check, hidden_sign_flip_check
from symattn.render.rich_result import RichResult
from symattn.theorems import statements
from symattn.analyses.genericity import generic_claim, visible_orders
from symattn.analyses.collapse import (  # noqa: F401  the path and its Jacobian, importable from here
    FAST_SERIES_FROM_ORDER, bank_jacobian, block_letters, checked_path, from_u_series, jacobian_algebra,
    leading_coefficients, path_parameters, path_point_of,
)
from symattn.analyses import column_proof
from symattn.analyses.column_proof import (  # noqa: F401  the column proof, importable from here
    EXACT_FROM_ORDER, MAX_PROOF_PRIMES, height_bounds_hold, jacobian_height_bounds,
    prove_column_orders,
)
from symattn.analyses.contact import (  # noqa: F401  importable from here
    Band, Setup, attribute_bands, compress_rows, framed_bank, grown_bank, setup, verify_kernel,
)

__all__ = [  # the path, its Jacobian, the bands and the column proof are importable from here too
    "Spectrum", "native_spectrum", "CERTIFICATES", "bank_orders", "exact_column_orders",
]


#: The certificate kinds of a spectrum, strongest first (see :func:`native_spectrum`).
CERTIFICATES = ("exact", "certified", "conditional", "none")

#: Seconds the score lemma (:mod:`~symattn.analyses.score_orders`) may take to close a frame's gap.
SCORE_SECONDS = 300.0


@dataclass(repr=False)
class Spectrum(RichResult):
    """Result of :func:`native_spectrum` (see ``to_json`` for the keys).

    >>> native_spectrum(Architecture.uniform(1, 2, 1, 2, "exp"))
    <Spectrum: t^0 x4, t^1 x3; kernel 1, rank 7 of 8, certificate certified (at this point); generic (certified); ...>
    """

    units: int
    bands: list[Band]
    kernel: int
    rank: int
    parameters: int
    bank_size: int
    #: whether the divided frame of App. D.3 has full rank (None: no statement gives one)
    bank_separating: bool | None
    method: str
    seconds: float
    order: int
    certified: bool
    #: visible orders not proved (past the truncation ``t^order``, or a kernel no declared symmetry explains)
    undecided: int = 0
    notes: list[str] = field(default_factory=list)
    #: ``"exact"``, ``"certified"``, ``"conditional"`` or ``"none"`` (see :func:`native_spectrum`)
    certificate: str = "none"
    #: the layers (:meth:`~symattn.model.architecture.Architecture.describe`)
    architecture: str = ""
    #: the declared symmetries of the kernel, by kind
    kernel_kinds: dict = field(default_factory=dict)
    #: the statement that covers the spectrum (its label), or None (``theorem: null``)
    theorem: str | None = None
    #: the head permutation groups (:func:`~symattn.model.symmetries.head_permutation_check`)
    head_permutations: list = field(default_factory=list)
    #: of the ``undecided`` orders, those certified finite (``>= t^order``) by the rank of ``J`` at a
    #: path point (:mod:`~symattn.analyses.path_rank`); the unexplained kernel is ``undecided - past``
    past: int = 0
    #: what the certificate proves: the orders of the Jacobian ``at this point`` (the seeded or given one)
    about: str = "at this point"
    #: the generic claim (:mod:`~symattn.analyses.genericity`): ``generic (certified)``, ``generic
    #: (evidence, K points)`` or ``at this point``
    generic: str = "at this point"
    #: the claim's seeds, generic candidate and special seeds (:meth:`GenericClaim.to_json`)
    claim: dict = field(default_factory=dict)
    #: the hidden-unit sign flips of odd activations (:func:`~symattn.model.symmetries.hidden_sign_flip_check`)
    hidden_sign_flips: list = field(default_factory=list)

    def to_json(self) -> dict:
        d = asdict(self)
        d["bands"] = [{"layer": b.layer, "order": b.order, "multiplicity": b.multiplicity,
                       "block": b.block, **({"leading": b.leading} if b.leading else {})}
                      for b in self.bands]
        return d

    def _headline(self) -> str:
        orders = Counter()
        for b in self.bands:
            orders[b.order] += b.multiplicity
        bands = ", ".join(f"t^{k} x{m}" for k, m in sorted(orders.items()))
        undecided = f", {self.undecided} undecided" if self.undecided else ""
        if self.past:
            bands += f", {self.past} finite >= t^{self.order}"
            undecided = f", {self.undecided - self.past} unexplained" if self.undecided > self.past else ""
        special = self.claim.get("special") if self.claim else None
        generic = self.generic + (f", seed {', '.join(map(str, special))} special" if special else "")
        return (f"{bands}; kernel {self.kernel}, rank {self.rank + self.past} of {self.parameters}, certificate "
                f"{self.certificate} ({self.about}){undecided}; {generic}; {self.theorem or 'computed'}")

    def _summary(self) -> tuple[str, list[tuple[str, str]]]:
        """The Smith factors, rank, bank and certificate (Jupyter, docs)."""
        factors = ", ".join(f"$t^{{{b.order}}} \\times {b.multiplicity}$ ({b.block})" for b in self.bands)
        rows = [("Smith factors of $J_B(t)$", f"{factors}, $0 \\times {self.kernel}$ (exact kernel)"),
                ("rank", f"{self.rank + self.past} of {self.parameters} native parameters" + (
                    f" ({self.past} of them orders $\\geq t^{{{self.order}}}$, their values not proved)"
                    if self.past else "")),
                ("bank", f"{self.bank_size} inputs, separating: "
                         f"{'not decided' if self.bank_separating is None else self.bank_separating}"),
                ("method", f"{self.method}, {'certified' if self.certified else 'not certified'} ({self.about}), "
                           f"truncation $t^{{{self.order}}}$, {self.undecided} undecided, {self.seconds:.2f} s"),
                ("generic claim", self.claim.get("note", self.generic) if self.claim else self.generic)]
        title = "Theorem 4" if self.theorem else statements.NO_THEOREM
        return f"Native contact spectrum ({title})", rows + [("note", n) for n in self.notes]


def _certify(s: Setup, run: dict, rank: int) -> tuple[str, int, bool, list[str]]:
    """The certificate (:data:`CERTIFICATES`), the primes of its proof, whether the columns were
    reduced first, and notes; a ``certified`` one passes the post-condition
    :func:`~symattn.core.certify.settle` of its proof's record."""
    certificate, proof, reduced, notes = _attempt(s, run, rank)
    return settle(certificate, proof), (proof.primes if proof is not None else 0), reduced, notes


def _attempt(s: Setup, run: dict, rank: int) -> tuple[str, LowerBound | None, bool, list[str]]:
    J, algebra, nested = run["J"], run["algebra"], run["nested"]
    certificate, proof, reduced, notes = "none", None, False, []
    if s.method == "exact":
        return ("exact" if rank == s.visible else "none"), None, run.get("columns_over_q") is not None, notes
    if rank == s.visible:
        # lower bound from the model: the column valuations, proved over Q
        column_orders = [int(v) for v in algebra.valuation(J).min(axis=0)]
        if sorted(column_orders) == sorted(nested[-1]):
            s.say(f"proving the column orders over Q (from t^{EXACT_FROM_ORDER} in exact rationals, below it modulo "
                  "primes with a-priori height bounds)")
            proof = prove_column_orders(s.arch, run["X"], s.U, s.W, s.V, s.columns, column_orders, s.say,
                                        max_primes=MAX_PROOF_PRIMES, known=J)
            certificate = "certified" if proof.status == "proved" else "none"
            if proof.status == "proved" and proof.exact:
                notes.append("orders " + ", ".join(f"t^{b}" for b in proof.exact) + ": their columns computed "
                             "over Q itself (exact rationals, no bound, no prime), zero below the order")
            if proof.status == "proved" and proof.structural:
                how = ("from the collapse recursion e_i >= 3 e_(i-1) + 1 (the same lemma one layer down: the "
                       "weights of a query sum to 1 and do not move when its scores shift together), checked "
                       "modulo a prime on the bank" if proof.collapse == "recursion" else
                       "computed over Q in exact rationals")
                notes.append("orders " + ", ".join(f"t^{b}" for b in proof.structural) + ": by the attention lemma, "
                             "the one-layer step of App. D.2 (a query/key column of layer i is bilinear in the token "
                             f"differences of its input, which vanish below u^e, {how}, not taken from the paper: "
                             "zero below t^(4e + 1))")
            if proof.status == "too costly":
                need = (f"it needs {proof.primes} primes" if proof.primes else
                        f"its columns over Q (orders from t^{EXACT_FROM_ORDER}) would not end")
                notes.append(f"the model-based lower bound was not attempted: {need}, "
                             f"beyond the time budget of {column_proof.PROOF_SECONDS:g} s"
                             + ("" if MAX_PROOF_PRIMES is None else f" or the cap of {MAX_PROOF_PRIMES} primes"))
        else:
            certificate, proof = _certify_reduced(s, run)
            reduced = certificate == "certified"
    if certificate == "none" and s.exponents is not None and run["separating"] and run["divisible"]:
        frame_bands = [(layer, beta, m) for (_, layer, _), beta, m in zip(s.blocks, s.exponents, run["frame"]) if m]
        if [(b.layer, b.order, b.multiplicity) for b in attribute_bands(nested, s.blocks)] == frame_bands:
            certificate = "conditional"  # D.3: the divisibility of App. D.2 is the lower bound
    return certificate, proof, reduced, notes


#: The exact route computes a column group of order ``b`` in
#: :class:`~symattn.core.algebras.polyseries.RationalPolySeries` (one fmpq_poly per entry) from
#: this order on, below it in the coefficient-array series over Q.
RATIONAL_POLY_FROM_ORDER = 4


def exact_column_orders(s: Setup, run: dict) -> list[list[int]] | None:
    """The Smith orders over Q[[t]] of every block prefix of the visible columns, proved over Q,
    or None when the modular Jacobian ``run["J"]`` is not column-reduced (then the Smith form
    over Q[[t]] needs an elimination).

    The column orders ``v`` mod p choose what to compute: each group of columns of one order
    ``b`` is computed over Q mod ``t^(b + 1)`` (:func:`bank_jacobian`, exact rationals), its
    coefficients below ``t^b`` must be zero and its ``t^b`` coefficients are the leading ones;
    if the leading matrix ``E(0)`` has full rank over Q (python-flint ``fmpq_mat``), then
    ``J(t) = E(t) diag(t^v)`` with ``E(0)`` of full column rank, and the Smith form of any set
    of columns over Q[[t]] is ``diag(t^v)`` of its orders.

    Parameters
    ----------
    s : Setup
        The path (:func:`~symattn.analyses.contact.setup`).
    run : dict
        The modular run (:func:`~symattn.analyses.contact.framed_bank` or
        :func:`~symattn.analyses.contact.grown_bank`).

    Returns
    -------
    list of list of int or None

    Examples
    --------
    >>> arch = Architecture.uniform(2, 2, 1, 2, "exp")
    >>> s = setup(arch, 0, "identity", "modular", None, lambda msg: None)
    >>> run = framed_bank(s, "auto", None)
    >>> exact_column_orders(s, run)[-1] == run["nested"][-1]
    True
    """
    import flint

    from symattn.core.algebras.polyseries import RationalPolySeries

    J, A = run["J"], run["algebra"]
    v = [int(o) for o in A.valuation(J).min(axis=0)]
    if max(v, default=0) >= A.order or sorted(v) != sorted(run["nested"][-1]):
        return None
    E = np.empty((J.shape[1], len(v)), dtype=object)
    for b in sorted(set(v)):
        group = [j for j, o in enumerate(v) if o == b]
        s.say(f"{len(group)} columns of order {b} over Q (exact rationals, to t^{b})")
        Q = RationalPolySeries(b + 1) if b >= RATIONAL_POLY_FROM_ORDER else series_for("exact", b + 1)
        G = bank_jacobian(s.arch, run["X"], s.U, s.W, s.V, Q, [s.columns[j] for j in group])
        if not all(c == 0 for c in G[:b].reshape(-1)):
            return None  # a lower coefficient is nonzero over Q (divisible by p): not these orders
        E[:, group] = G[b]
    s.say(f"rank of the {E.shape[0]} x {E.shape[1]} leading matrix over Q")
    if flint.fmpq_mat(E.shape[0], E.shape[1], E.reshape(-1).tolist()).rank() < len(v):
        return None
    return [sorted(v[j] for j in np.concatenate(s.block_idx[: k + 1])) for k in range(len(s.blocks))]


def _certify_reduced(s: Setup, run: dict) -> tuple[str, LowerBound | None]:
    """Column-reduce ``J`` (rational relations reconstructed mod one or two primes) and prove the
    reduced columns' valuations over Q (:mod:`symattn.analyses.columns`)."""
    from symattn.analyses.columns import RECONSTRUCTION_PRIMES, prove_reduced_orders, reduce_columns

    J, A = run["J"], run["algebra"]
    s.say("column-reduced basis (rational relations reconstructed mod p)")
    Js, used = [J], [A.field.p]
    reduced = reduce_columns(Js, A.order, used)
    spare = [q for q in primes_below(2**23, RECONSTRUCTION_PRIMES + 1) if q != A.field.p]
    while reduced is None and len(used) < RECONSTRUCTION_PRIMES:
        # larger relation coefficients (e.g. a model's binary64 weights): one more prime (CRT)
        q = spare[len(used) - 1]
        s.say(f"column reduction modulo {len(used) + 1} primes (adding {q})")
        Js.append(s.jacobian(run["X"], SeriesAlgebra(PrimeField(q), A.order), verify=0))
        used.append(q)
        reduced = reduce_columns(Js, A.order, used)
    if reduced is None or sorted(reduced[1]) != sorted(run["nested"][-1]):
        return "none", None
    s.say("proving the reduced column orders over Q (primes with a-priori height bounds)")
    proof = prove_reduced_orders(s.arch, run["X"], s.U, s.W, s.V, s.columns, *reduced, say=s.say)
    return ("certified" if proof.status == "proved" else "none"), proof


def _memory_guard(arch: Architecture, method: str, max_memory_gib: float | None):
    """What refuses a bank of ``inputs`` at truncation ``N`` whose spectrum is estimated
    (:func:`~symattn.core.limits.spectrum_bytes`) beyond the memory limit: the automatic bank
    and truncation grow past what ``symattn spectrum`` estimated before it started."""
    heads = sum(len(layer.heads) for layer in arch.layers)

    def check(inputs: int, N: int) -> None:
        require_memory(spectrum_bytes(N, arch.native_size, inputs, arch.tokens, max(arch.widths), heads, method),
                       f"this spectrum (bank {inputs}, truncation t^{N})", max_memory_gib)

    return check


def native_spectrum(arch: Architecture, bank: "int | str | np.ndarray" = "auto", seed: int = 0,
                    values: str = "identity", method: str = "modular", order: int | None = None,
                    progress: Callable[[str], None] | None = None, leading: bool = False,
                    path: "tuple | Mapping | None" = None, max_memory_gib: float | None = None,
                    fallback: bool = True, points: int | None = None) -> Spectrum:
    """Exact native contact spectrum on a finite bank: Theorem 4 / Prop. D.1 for the paper's
    stack, computed (and labelled so) for any other architecture.

    Parameters
    ----------
    arch : Architecture
        Equal widths ``d``, head ranks ``r <= d``, any normalizers with rational Taylor data.
    bank : int, "auto" or numpy.ndarray, optional
        Number of seeded random inputs, ``"auto"`` (grow until the bank separates), or an
        explicit rational array ``(size, d, n)``.
    seed : int, optional
        Seed of the bank, the path and the compression.
    values : {"identity", "random"}, optional
        ``"identity"`` (Theorem 4's path) or ``"random"`` (fixed generic invertible).
    method : {"modular", "exact", "constants"}, optional
        ``"modular"`` (F_p Smith form, certified as in the Notes) or ``"exact"`` (the orders
        over Q itself: each column group's valuation over Q, or the Smith form over Q[[t]] by
        elimination where the columns are not column-reduced; certificate ``"exact"``).
    order : int, optional
        Truncation in ``t``; default: one more than the largest divisibility exponent,
        doubled while orders stay undecided.
    progress : callable, optional
        Called with one line of text per step (the CLI prints them to stderr).
    leading : bool, optional
        Also compute each band's leading coefficients ``c`` in ``sigma ~ c t^order``
        (numerical, float64; see :func:`leading_coefficients`; they need the divided frame
        of App. D.3).
    path : tuple or mapping, optional
        Explicit ``(U, W, V)`` lists of rational matrices instead of seeded ones (e.g. skew
        prefix products for Cor. D.2-D.3; for several heads mappings of blocks, or one
        mapping of every block such as a model's weights); the path is then ``Q = t U``,
        ``K = t W``, the other blocks fixed.
    max_memory_gib : float, optional
        Memory limit (default :data:`~symattn.core.limits.DEFAULT_MAX_MEMORY_GIB`), checked
        by :func:`~symattn.core.limits.spectrum_bytes` before every evaluation of a growing
        bank or truncation, and before the exact route's elimination over Q[[t]].
    fallback : bool, optional
        With ``method="modular"``, continue by the ``constants`` route where the modular
        series refuse the stack (:class:`~symattn.core.algebras.functions.NotRational`) or its
        modular rank falls short of the visible columns without a statement (said in the
        notes); False: raise :class:`~symattn.core.algebras.functions.NotRational` and keep
        the modular result.
    points : int, optional
        Independent seeded points (seeds ``seed, seed + 1, ...``) behind the generic claim
        (:mod:`~symattn.analyses.genericity`); default 1 where Theorem 4 covers the stack
        (the theorem gives the generic orders) or a ``path`` is given (the claim is about
        that point), else 2. The printed orders are always the first point's; ``generic``
        and ``claim`` say what is generic.

    Returns
    -------
    Spectrum
        The bands (layer, order ``t^k``, multiplicity), the kernel and rank, the
        ``certificate`` the orders rest on (see the Notes), the statement that covers them
        (``theorem``, None outside the paper) and the generic claim.

    Raises
    ------
    SymattnError
        For a bad argument, or a request past ``max_memory_gib``.
    Undecided
        Where no route can decide the orders (e.g.
        :class:`~symattn.core.algebras.functions.NotRational` with ``fallback=False``).
    CheckFailed
        If a computed check fails (a Jacobian against its second code path, a kernel
        vector that is not one).

    Notes
    -----
    The computation. Along the native path ``Q_{i,h} = t U_{i,h}``, ``K_{i,h} = t W_{i,h}``, every other
    block (values, output projections) fixed (identity values or fixed generic
    invertible ones), the Jacobian ``J(t)`` of the bank observation (eq. 43-44) in
    *all* native entries is computed from the graph as a matrix of truncated power
    series in ``t`` (exact over Q, or over F_p), and its Smith factors over
    ``k[[t]]`` are computed by pivoting on an entry of least valuation
    (:meth:`symattn.core.linalg.SeriesMatrix.smith_orders`). Nothing of the theorem
    enters that computation. The declared symmetries
    (:class:`symattn.model.symmetries.GaugeKernel`: factor gauges, value gauges,
    interface directions) are verified as kernel vectors of ``J`` and split off by a
    unimodular column change; the Smith form is taken on the visible columns.

    Where a statement of the paper covers the architecture (:data:`symattn.theorems.statements.APP_D3`,
    the paper's stack: Theorem 4), its formulas are used, separately, for

    * the *divided frame* ``E(0)`` of App. D.3 (columns of layer ``i`` divided by
      ``t^beta_i`` from the proven divisibility of App. D.2): the bank separates
      exactly when ``E(0)`` has rank ``P - zeta``, which is the stopping rule of the
      ``auto`` bank and the blocks of the bands (readout, then each layer's
      query/key columns);
    * the ``conditional`` certificate of a modular result: modular Smith orders
      are upper bounds on the true ones (see :mod:`symattn.core.certify`) and the
      divisibility bounds of App. D.2 are the paper's lower bounds.

    Elsewhere the ``auto`` bank grows until two consecutive sizes give the same
    Smith orders (evidence that it separates), the bands are attributed by layer,
    and the result is labelled :data:`~symattn.theorems.statements.NO_THEOREM`.

    The ``certified`` certificate uses no formula of the paper: the lower bound is
    proved from the model (:func:`~symattn.analyses.column_proof.prove_column_orders`, or for a column-reduced
    basis :func:`symattn.analyses.columns.prove_reduced_orders`), see
    :func:`native_spectrum`. Every series Jacobian comes from
    :func:`symattn.model.network.jacobian` and is checked there against an
    expansion that does not use the tangent rules. The divisibility exponents are
    the paper's (:func:`symattn.theorems.formulas.divisibility_orders`); without a
    statement they only set the first truncation.

    ``certificate`` says what the orders rest on (:data:`CERTIFICATES`):

    * ``exact``: the Smith form is computed over Q[[t]] (``method="exact"``),
      every order below the truncation found;
    * ``certified``: the modular Smith orders (after a random constant row
      compression) bound every cumulative order ``d_k`` (least valuation of a
      ``k x k`` minor over Q[[t]]) from above (Cauchy-Binet, reduction mod p).
      The lower bound is proved from the model: each visible column's
      valuation mod p is shown to be its valuation over Q by proving its lower
      coefficients zero over Q (:func:`~symattn.analyses.column_proof.prove_column_orders`); then every
      ``k x k`` minor has valuation at least the sum of the ``k`` smallest
      column orders. When the sorted column orders equal the modular Smith
      orders both bounds meet, and the orders are those over Q[[t]]; when they
      do not, a column-reduced basis (a unimodular change with rational
      coefficients, :mod:`symattn.analyses.columns`) is proved instead. Assumes:
      the forward-mode Jacobian code computes the derivative (checked on a
      random direction by a second code path, mod p, for the main prime; the
      other primes reuse the same code) and the normalizer's rational Taylor
      data are right. App. D.2 is not used, except its one-layer step for the softmax stack's long
      query/key orders (:func:`~symattn.analyses.column_proof.lemma_orders`: a column bilinear in the
      token differences of the layer's input), whose collapse orders come from the same lemma one
      layer down (:func:`~symattn.analyses.column_proof.collapse_valuations`, ``e_i >= 3 e_(i-1) + 1``,
      proved from the softmax's structure and checked modulo a prime on the bank);
    * ``conditional``: the modular orders equal the divisibility exponents of
      App. D.2 on a separated divided frame (App. D.3): the lower bound is the
      paper's, taken as proved (only where :data:`~symattn.theorems.statements.APP_D2`
      covers the architecture);
    * ``none``: upper bounds only.

    Examples
    --------
    >>> arch = Architecture.uniform(2, 2, 1, 2, "exp")
    >>> s = native_spectrum(arch, bank="auto")
    >>> [(b.layer, b.order, b.multiplicity) for b in s.bands], s.kernel
    ([(0, 0, 4), (1, 1, 3), (2, 5, 3)], 6)
    >>> s.bank_separating, s.certified, s.certificate
    (True, True, 'certified')
    >>> s = native_spectrum(Architecture.uniform(2, 2, 1, 2, "exp", skip="value"))
    >>> [(b.layer, b.order, b.multiplicity) for b in s.bands], s.kernel, s.certificate, s.theorem
    ([(1, 0, 4), (1, 1, 3), (2, 1, 1), (2, 2, 4), (2, 3, 2)], 2, 'certified', None)
    """
    require_architecture(arch)
    require_int(seed, "seed", 0, 2**63 - 1)
    if points is not None:
        require_int(points, "points", 1, 8)
    K = points if points is not None else (1 if path is not None or statements.THEOREM_4.covers(arch) else 2)
    say = progress or (lambda msg: None)
    result = _point_spectrum(arch, bank, seed, values, method, order, progress, leading, path, max_memory_gib,
                             fallback)
    found = [result]
    for j in range(1, K):
        say(f"point {j + 1} of {K} (seed {seed + j}): the same spectrum at an independent point, for the generic claim")
        found.append(_point_spectrum(arch, bank, seed + j, values, method, order, progress, False, path,
                                     max_memory_gib, fallback))
    claim = generic_claim(arch, [seed + j for j in range(K)] if path is None else [],
                          [visible_orders(r.bands, r.undecided) for r in found], [r.certified for r in found])
    result.generic, result.claim = claim.label, claim.to_json()
    result.notes.append(claim.note)
    return result


def _point_spectrum(arch: Architecture, bank, seed: int, values: str, method: str, order: int | None,
                    progress: Callable[[str], None] | None, leading: bool, path, max_memory_gib: float | None,
                    fallback: bool) -> Spectrum:
    """The spectrum at the one point of ``seed`` (or ``path``): see :func:`native_spectrum`."""
    require_int(seed, "seed", 0, 2**63 - 1)
    require_choice(require_str(method, "method"), "method", ("modular", "exact", "constants"))
    if order is not None:
        require_int(order, "order", 1)
    say = progress or (lambda msg: None)
    start = time.perf_counter()
    # the exact route finds the bank, truncation and orders mod p first, then proves them over Q;
    # a stack the modular series refuse (LayerNorm's square root) is computed over Q throughout
    s = setup(arch, seed, values, "modular", path, say)
    s.memory = _memory_guard(arch, method, max_memory_gib)
    if method == "constants":
        return _constant_spectrum(s, bank, order, start, None, max_memory_gib)
    grow = framed_bank if s.exponents is not None else grown_bank
    try:
        run = grow(s, bank, order)
    except NotRational as exc:
        if method != "exact":
            if not fallback:
                raise
            say(f"the modular series refuse this stack ({str(exc).split(':')[0]}): computed exactly in Q "
                "adjoined its constants instead (method constants)")
            return _constant_spectrum(s, bank, order, start, "the modular series refuse this stack ("
                                      + str(exc).split(":")[0] + "): computed exactly in Q adjoined its "
                                      "constants instead (method constants)", max_memory_gib)
        say("the modular series refuse this stack (a square root mod p): the whole computation over Q")
        s = setup(arch, seed, values, "exact", path, say)
        s.memory = _memory_guard(arch, "exact", max_memory_gib)
        run = grow(s, bank, order)
        run["columns_over_q"] = None
    if method == "exact" and s.method != "exact":
        s.method = "exact"
        proved = exact_column_orders(s, run)
        if proved is None:  # not column-reduced: eliminate over Q[[t]] itself
            say("Smith form over Q[[t]] by elimination (the columns are not column-reduced)")
            require_memory(graph_evaluation_bytes(run["N"], arch.native_size, len(run["X"]), arch.tokens,
                                                  max(arch.widths), sum(len(ly.heads) for ly in arch.layers),
                                                  exact=True),
                           "this spectrum's elimination over Q[[t]]", max_memory_gib)
            run = grow(s, bank if not isinstance(bank, str) else len(run["X"]), run["N"])
        else:
            run.update(nested=proved, columns_over_q=True)
    X, N, nested = run["X"], run["N"], run["nested"]
    if method == "modular" and fallback and s.exponents is None and len(nested[-1]) < s.visible:
        say(f"rank {len(nested[-1])} < {s.visible} visible columns mod p: the frame with its gap proved exactly "
            "(method constants, on this bank and truncation)")
        return _constant_spectrum(s, X, N, start, f"the modular rank {len(nested[-1])} is below the {s.visible} "
                                  "visible columns: the spectrum proved by a frame with a gap, exactly over Q "
                                  "(method constants, on the modular route's bank and truncation)", max_memory_gib)
    verified_how = verify_kernel(s, X, run["algebra"] if method != "exact" else series_for("exact", N))
    rank = len(nested[-1])
    bands = attribute_bands(nested, s.blocks)
    if Counter(o for b in bands for o in [b.order] * b.multiplicity) != Counter(nested[-1]):
        raise InternalError(f"the bands {[(b.order, b.multiplicity) for b in bands]} are not the Smith orders "
                            f"{sorted(nested[-1])} of the visible columns; please report this bug")
    certificate, primes, reduced, notes = _certify(s, run, rank)
    certified = certificate != "none"
    if leading and certified and s.exponents is not None:
        say("leading coefficients of the bands (float64 series)")
        coeffs = leading_coefficients(arch, X, s.U, s.W, s.V, s.columns, s.exponents, s.block_idx)
        for b in bands:
            b.leading = coeffs[b.layer][: b.multiplicity]
    notes = _notes(s, run, rank, certificate, primes, reduced, path, values, verified_how, notes)
    P = arch.native_size
    return Spectrum(
        units=sum(b.multiplicity for b in bands if b.order == 0), bands=bands, kernel=s.zeta,
        rank=rank, parameters=P, bank_size=len(X), bank_separating=run["separating"], method=method,
        seconds=round(time.perf_counter() - start, 3), order=N, certified=certified,
        undecided=s.visible - rank, notes=notes, certificate=certificate, architecture=arch.describe(),
        kernel_kinds=s.kernel.kinds(), theorem=statements.label(statements.THEOREM_4, arch),
        head_permutations=head_permutation_check(arch, s.point, X[:2]),
        hidden_sign_flips=hidden_sign_flip_check(arch, s.point, X[:2]))


def _constant_spectrum(s: Setup, bank, order: int | None, start: float, why: str | None,
                       max_memory_gib: float | None = None) -> Spectrum:
    """The spectrum by the constants route (:mod:`symattn.analyses.constant_spectrum`): exact in Q
    adjoined the stack's constants, a proved column-reduced frame per block prefix."""
    from symattn.analyses.constant_spectrum import constant_note, constant_route, ranked_note

    # the rank route first only on the way from the modular route (method constants asks for exact frames)
    run = constant_route(s, bank, order, s.say, max_memory_gib=max_memory_gib, ranks_first=why is not None)
    proof, X, N = run["proof"], run["X"], run["N"]
    if why and run.get("ranked"):  # no exact series after all: the ranks of the truncations decided
        why = why.replace("computed exactly in Q adjoined its constants instead",
                          "the spectrum by the constants route, here from ranks alone")
    arch, past, reach = s.arch, 0, N
    notes = [n for n in (why, statements.outside_note(arch), run["bank_note"],
                         f"path: Q = t U, K = t W (seed {s.seed}); the other blocks fixed",
                         f"kernel: {s.zeta} declared symmetries ({s.kernel.kinds()}), {run['verified']}") if n]
    if run["proved"]:
        nested = run["nested"]
        bands = attribute_bands(nested, s.blocks)
        rank, certificate = len(nested[-1]), "certified"
        scored = None
        if proof is not None and proof.gap and run.get("J") is not None:
            from symattn.analyses.score_orders import score_orders

            scored = score_orders(s, run, s.say, SCORE_SECONDS)
        if scored is not None:  # the gap's orders from the last layer's scores
            nested = nested[:-1] + [sorted(nested[-1] + scored[0])]
            bands = attribute_bands(nested, s.blocks)
            rank, reach = len(nested[-1]), max(N, max(scored[0]) + 1)
            notes.append(scored[1])
            run["truncated"] = None
        elif proof is not None and proof.gap:
            past, note = _finite_past(s, X, rank, N)
            notes.append(f"gap: {proof.gap} visible orders are >= t^{N}: rank {rank + past} <= rank J <= P - kernel "
                         f"= {arch.native_size - s.zeta} (an undeclared symmetry or a higher order)")
            notes.append(note)
    else:
        bands, rank, certificate = [], 0, "none"
    notes.append(ranked_note(run["ranked"]) if run.get("ranked") else
                 constant_note(proof, run["fields"], N, run.get("exact_order")))
    if run.get("truncated") or run.get("completed"):
        notes.append(run.get("truncated") or run["completed"])
    return Spectrum(
        units=sum(b.multiplicity for b in bands if b.order == 0), bands=bands, kernel=s.zeta, rank=rank,
        parameters=arch.native_size, bank_size=len(X), bank_separating=None, method="constants",
        seconds=round(time.perf_counter() - start, 3), order=reach, certified=certificate != "none",
        undecided=s.visible - rank, notes=notes, certificate=certificate, architecture=arch.describe(),
        kernel_kinds=s.kernel.kinds(), theorem=statements.label(statements.THEOREM_4, arch),
        head_permutations=head_permutation_check(arch, s.point, X[:2]), past=past,
        hidden_sign_flips=hidden_sign_flip_check(arch, s.point, X[:2]))


def _finite_past(s: Setup, X: np.ndarray, rank: int, N: int) -> tuple[int, str]:
    """How many of the visible orders past the ``rank`` proved mod ``t^N`` are certified finite by
    the rank of ``J`` at the path point ``t = 1`` (:func:`~symattn.analyses.path_rank.path_rank`),
    and the note that says so (or why there is none)."""
    from symattn.analyses.path_rank import path_rank

    s.say("the gap: the rank of J at the path point t = 1 in balls")
    try:
        found = path_rank(s, X)
    except Undecided as exc:
        return 0, f"path rank: none ({exc})"
    return found.finite(rank), found.note(rank, N)


def _notes(s: Setup, run: dict, rank: int, certificate: str, primes: int, reduced: bool, path, values: str,
           verified_how: str, proof_notes: list[str]) -> list[str]:
    """The notes of a spectrum: the label, the bank, the path and kernel where no statement
    gives them, the proof's notes, undecided orders, the certificate in words."""
    notes = []
    outside = statements.outside_note(s.arch)
    if outside:
        notes.append(outside)
    if run["bank_note"] is not None:
        notes += [run["bank_note"],
                  (f"path: Q = t U, K = t W (seed {s.seed}); values {values} (concatenated heads: random V_h, O_h)"
                   if path is None else "path: the given point's queries and keys scaled by t, its values fixed"),
                  f"kernel: {s.zeta} declared symmetries ({s.kernel.kinds()}), {verified_how}, "
                  "leading coefficients independent over Q"]
    notes += proof_notes
    if rank < s.visible:
        if s.exponents is not None:
            notes.append(f"{s.visible - rank} orders are >= {run['N']}: undecided")
        else:
            notes.append(f"gap: {s.visible - rank} visible orders are >= t^{run['N']} or zero: rank {rank} "
                         f"<= rank J <= P - kernel = {s.arch.native_size - s.zeta} (an undeclared symmetry or "
                         "a higher order)")
    if run["separating"] is False:
        notes.append(f"the bank does not separate: rank E(0) = {sum(run['frame'])} < {s.visible}; "
                     "orders may exceed the generic ones (use --bank auto)")
    notes.append(_certificate_note(certificate, primes, reduced))
    return notes


def _certificate_note(certificate: str, primes: int, reduced: bool = False) -> str:
    """The certificate in words (what is computed, what is quoted)."""
    upper = (f"Smith orders over GF({DEFAULT_PRIME}) after a random row compression are upper bounds "
             "on the orders over Q[[t]]")
    if certificate == "exact" and reduced:
        return ("certificate exact: the Smith form over Q[[t]] is diag(t^v), v the column orders: every "
                "visible column computed over Q (exact rationals, no prime, no bound) to the coefficient "
                "of its order, the lower ones zero, and the leading coefficients of the columns of full "
                "rank over Q; so J(t) = E(t) diag(t^v) with E(0) of full column rank, for all columns and "
                "for every block prefix. The orders were found mod p first (they only choose which "
                "coefficients to compute). Assumed, not proved: the forward-mode Jacobian code computes the "
                "derivative (checked on a random direction by a second code path, mod the main prime) and "
                "the normalizer's rational Taylor data are right")
    if certificate == "certified" and reduced:
        return (f"certificate certified: {upper}, met by the valuations of a column-reduced basis (a "
                f"unimodular change with rational coefficients), proved over Q modulo {primes} primes "
                "(a-priori majorant heights); App. D.2 is not used. Assumed, not proved: the forward-mode "
                "Jacobian code computes the derivative (checked on a random direction by a second code path) "
                "and the normalizer's rational Taylor data are right")
    return {
        "exact": "certificate exact: Smith form computed over Q[[t]] itself (elimination over Q[[t]], "
                 "no prime, no bound)",
        "certified": f"certificate certified: {upper}; the lower bound is proved from the model: every "
                     f"column vanishes over Q below its order (checked modulo up to {primes} primes, of "
                     f"23 and 28 bits, whose product exceeds twice an "
                     "a-priori bound on |numerator| from majorant arithmetic on the same graph: "
                     "fixed-point heights rounded up, denominators as prime exponents; or, for orders from "
                     f"{EXACT_FROM_ORDER} on, computed over Q itself in exact rationals, or for the softmax "
                     "stack's query/key columns by the one-layer step of App. D.2, a column of layer i bilinear "
                     "in the token differences of its input, with their orders computed over Q, not taken from "
                     "the paper's recursion), so every "
                     "k x k minor has at least "
                     "the sum of its k smallest column orders; App. D.2 is not used otherwise. Assumed, not "
                     "proved: the forward-mode Jacobian code computes the derivative (checked on a "
                     "random direction by a second code path, mod the main prime) and the "
                     "normalizer's rational Taylor data are right",
        "conditional": f"certificate conditional: {upper}; the lower bound is taken from the "
                       "divisibility of App. D.2 (proved in the paper, not recomputed here), "
                       "met on a separated divided frame (App. D.3)",
        "none": "certificate none: the orders are upper bounds only (mod p), not certified",
    }[certificate]


def bank_orders(arch: Architecture, bank: np.ndarray, order: int, seed: int = 0,
                values: str = "identity") -> list[int]:
    """Modular Smith orders (upper bounds on the orders over Q[[t]]) of the visible columns
    of the path Jacobian on ``bank`` mod ``t^order`` (path of ``seed``, as in
    :func:`native_spectrum`).

    Parameters
    ----------
    arch : Architecture
    bank : numpy.ndarray
        Rational inputs ``(size, d, n)``.
    order : int
        The truncation in ``t``.
    seed : int, optional
        Seed of the path.
    values : {"identity", "random"}, optional

    Returns
    -------
    list of int

    Examples
    --------
    >>> v = Architecture.uniform(2, 2, 1, 3, "exp", skip="value")
    >>> bank_orders(v, random_bank(v, 6), 8)
    [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3]
    """
    s = setup(arch, seed, values, "modular", None, lambda msg: None)
    A = series_for("modular", order)
    return s.smith(s.jacobian(bank, A, verify=0), A, prefixes=False)[1][-1]
