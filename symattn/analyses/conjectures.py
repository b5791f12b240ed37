"""Conjectures from computation: contact orders of variant families fitted and tested.

Scope: for a family of stacks (``residual``: every layer ``X + V S_A(X)``;
``causal``: causal masks; ``multihead``: two summed heads per layer) the
certified contact spectrum (:func:`symattn.analyses.spectrum.native_spectrum`)
is computed at depths ``D = 1..D_max``. Three quantities per depth:

* ``top order of the last layer``: the largest Smith order attributed to layer ``D``;
* ``kernel``: the number of zero Smith factors (declared symmetries); ``unexplained`` per row is
  the rest (``P - rank - kernel``: orders beyond the truncation, or for the numerical tier of
  blocks the kernel no declared symmetry explains);
* ``rank``: the number of nonzero Smith factors;
* ``jet degree``: the least degree of the zero-input jet whose native Jacobian
  reaches the certified dimension (:func:`~symattn.analyses.dimension.neuromanifold_dimension`;
  for the paper's stack, Theorem 3's ``N_D``), least over three seeded points
  (a single point can be special: the rank at a generic point is at least the
  rank at any point, so the least is the better upper bound).

Each sequence is fitted on the first depths by the simplest of (in this
order) a constant, a closed form ``a D + b``, and a recursion of the paper's
form ``x_D = a x_{D-1} + b`` (exact rationals, solved from the fitted
points, required to reproduce every fitted point), and then tested on the
held-out larger depths. A formula is printed as a *conjecture* with its
evidence: nothing here is a theorem (``theorem: null``), and a conjecture
whose held-out test fails is reported as failed, not dropped.

Caveats: one width, rank, token count and seed per run; the spectra are
certified at their seeded path and bank (see :mod:`symattn.analyses.spectrum`),
the generic statement is the conjecture.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Callable, Sequence

from symattn.core.errors import InternalError, SymattnError
from symattn.model.architecture import Architecture
from symattn.analyses.dimension import neuromanifold_dimension
from symattn.analyses.spectrum import native_spectrum
from symattn.theorems.statements import NO_THEOREM

__all__ = ["FAMILY_KINDS", "Conjecture", "fit_sequence", "family_table", "conjectures", "family_of"]

#: The layer kind of each family: the paper's variants, then the transformer-block families of
#: issue 24 (attention + post-norm LayerNorm; the post-norm block with skip; the pre-norm block
#: with skip; attention + MLP (tanh, and a polynomial activation the exact series hold); the full
#: post-norm layer of ``nn.TransformerEncoderLayer``: biases, W_O, GELU MLP).
FAMILY_KINDS = {
    "residual": {"skip": "value"},
    "causal": {"mask": "causal"},
    "multihead": {"heads": 2},
    "ln-post": {"norm": "post"},
    "post-norm": {"skip": "value", "norm": "post"},
    "pre-norm": {"skip": "value", "norm": "pre"},
    "mlp": {"mlp": 2, "activation": "tanh"},
    "mlp-poly": {"mlp": 2, "activation": "poly:0,1,1/2"},
    "layer": {"skip": "value", "norm": "post", "mlp": 2, "bias": True, "combine": "concat", "activation": "gelu"},
}

#: The transformer-block families (their spectra fall back to the numerical tier where the exact
#: series refuse them, said per row).
BLOCK_FAMILIES = ("ln-post", "post-norm", "pre-norm", "mlp", "mlp-poly", "layer")


@dataclass
class Conjecture:
    """One fitted formula and its held-out test."""

    quantity: str
    formula: str | None
    fitted_on: list[int]
    held_out: list[dict]
    held_out_ok: bool
    theorem: None = None

    def to_json(self) -> dict:
        return asdict(self)


def _fmt(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"({q})"


def _affine(a: Fraction, x: str, b: Fraction) -> str:
    """``a x + b`` written plainly (``5 D - 4``, ``3 x_{D-1} + 2``, ``D``)."""
    head = x if a == 1 else f"{_fmt(a)} {x}"
    return head if b == 0 else f"{head} {'+' if b > 0 else '-'} {_fmt(abs(b))}"


def fit_sequence(depths: Sequence[int], values: Sequence[int]
                 ) -> tuple[str, Callable[[int, dict], Fraction]] | None:
    """The simplest formula reproducing ``values`` at ``depths`` (consecutive):
    constant, ``a D + b``, or ``x_D = a x_{D-1} + b``; None if none fits.

    Returns the formula as text and a predictor ``(D, known) -> value`` where
    ``known`` maps depths to computed values (the recursion uses ``x_{D-1}``).

    >>> fit_sequence([1, 2, 3], [1, 5, 17])[0]
    'x_D = 3 x_{D-1} + 2 for D > 1 (x_1 = 1)'
    >>> fit_sequence([1, 2], [7, 14])[0]
    'x_D = 7 D'
    """
    if any(v is None for v in values):
        return None
    xs = [Fraction(v) for v in values]
    if len(set(xs)) == 1:
        c = xs[0]
        return f"x_D = {_fmt(c)}", lambda D, known: c
    if len(xs) >= 2:
        a = (xs[1] - xs[0]) / (depths[1] - depths[0])
        b = xs[0] - a * depths[0]
        if all(a * D + b == x for D, x in zip(depths, xs)):
            return f"x_D = {_affine(a, 'D', b)}", lambda D, known: a * D + b
    if len(xs) >= 3 and xs[1] != xs[0]:
        a = (xs[2] - xs[1]) / (xs[1] - xs[0])
        b = xs[1] - a * xs[0]
        if all(a * p + b == x for p, x in zip(xs, xs[1:])):
            rule = _fmt(b) if a == 0 else _affine(a, "x_{D-1}", b)
            return (f"x_D = {rule} for D > {depths[0]} (x_{depths[0]} = {_fmt(xs[0])})",
                    lambda D, known: a * Fraction(known[D - 1]) + b)
    return None


def family_table(family: str, width: int = 2, rank: int = 1, tokens: int = 3, depths: Sequence[int] = (1, 2, 3, 4),
                 normalizer: str = "exp", seed: int = 0,
                 progress: Callable[[str], None] | None = None) -> list[dict]:
    """Per depth: the bands, kernel, rank, certificate and seconds of the family's spectrum.

    >>> [row["rank"] for row in family_table("causal", depths=(1, 2))]
    [7, 10]
    """
    from symattn.core.validate import require_int, require_list

    if not isinstance(family, str) or family not in FAMILY_KINDS:
        raise SymattnError(f"family must be one of {', '.join(FAMILY_KINDS)}, got {family!r:.60}")
    for D in require_list(list(depths) if isinstance(depths, range) else depths, "depths", 64, 1):
        require_int(D, "a depth", 1, 64)
    say = progress or (lambda msg: None)
    rows = []
    for D in depths:
        say(f"{family}: depth {D}")
        arch = Architecture.uniform(D, width, rank, tokens, normalizer, **FAMILY_KINDS[family])
        rows.append(_spectrum_row(arch, D, seed, say))
    return rows


def _spectrum_row(arch: Architecture, D: int, seed: int, say: Callable[[str], None]) -> dict:
    """One row of :func:`family_table`: the certified spectrum (modular, or exact in Q adjoined the
    constants of a block stack), or where no certificate can be had (the constants route undecided or
    beyond its budget) the numerical one (orders unattributed, ``top_order_last_layer`` the largest
    order; ``tier`` says which)."""
    from symattn.analyses.numerical_spectrum import numerical_path_spectrum
    from symattn.core.errors import Undecided

    try:
        s = native_spectrum(arch, seed=seed)  # the paper's path: summed heads' values V = I
        if s.method == "constants" and s.certificate == "none":
            raise Undecided(s.notes[-1])
    except Undecided as exc:
        say(f"depth {D}: no certified spectrum ({str(exc).split(':')[0]}); numerical tier")
        n = numerical_path_spectrum(arch, seed=seed)
        row = {"depth": D, "bands": [(None, o, m) for o, m in n.bands], "top_order_last_layer": max(o for o, _ in n.bands),
               "kernel": n.declared, "rank": n.rank, "unexplained": n.unexplained,
               "jet_degree": None, "jet_degree_by_seed": [], "undecided": 0, "certificate": "none",
               "tier": f"numerical at {n.digits} digits (slopes within {n.max_slope_error:.2g} of integers)",
               "seconds": round(n.seconds, 3)}
        return _checked(row, arch)
    by_seed = []
    for p in range(seed, seed + 3):
        try:
            by_seed.append(neuromanifold_dimension(arch, seed=p).jet_degree)
        except Undecided:  # no jet from X = 0 in exact series (biases, irrational constants)
            by_seed.append(None)
    jet = min((j for j in by_seed if j is not None), default=None)
    top = max((b.order for b in s.bands if b.layer == D), default=None)
    return _checked({"depth": D, "bands": [(b.layer, b.order, b.multiplicity) for b in s.bands],
                     "top_order_last_layer": top if not s.past else None, "kernel": s.kernel,
                     "rank": s.rank + s.past, "unexplained": s.undecided - s.past, "past": s.past,
                     "jet_degree": jet, "jet_degree_by_seed": by_seed, "undecided": s.undecided,
                     "certificate": s.certificate,
                     "tier": ("modular Smith form" if s.method != "constants" else
                              "from ranks alone (balls)" if "from ranks alone" in s.notes[-1] else
                              "exact in Q[constants], a proved frame") + f", certificate {s.certificate}"
                             + (f", {s.past} more orders finite >= t^{s.order} (the path rank)" if s.past else ""),
                     "seconds": s.seconds}, arch)


def _checked(row: dict, arch: Architecture) -> dict:
    """``row`` after checking that its rank, kernel and unexplained part add up to the native
    parameters and its bands' multiplicities, with the orders only known finite (``past``), to the
    rank (a bug otherwise: it stops the command)."""
    if row["rank"] + row["kernel"] + row["unexplained"] != arch.native_size or \
            sum(m for _, _, m in row["bands"]) + row.get("past", 0) != row["rank"]:
        raise InternalError(f"depth {row['depth']}: rank {row['rank']}, kernel {row['kernel']}, unexplained "
                            f"{row['unexplained']} and bands {row['bands']} do not add up to the "
                            f"{arch.native_size} parameters; please report this bug")
    return row


def conjectures(family: str, width: int = 2, rank: int = 1, tokens: int = 3, max_depth: int = 4,
                fit: int = 3, normalizer: str = "exp", seed: int = 0,
                progress: Callable[[str], None] | None = None) -> dict:
    """Fit each quantity on depths ``1..fit`` and test it on ``fit+1..max_depth``.

    Returns ``{"family", "label", "theorem": None, "table", "conjectures"}``.

    >>> out = conjectures("residual", max_depth=3, fit=2)
    >>> [(c["quantity"], c["formula"], c["held_out_ok"]) for c in out["conjectures"]][1:]
    [('kernel', 'x_D = D', True), ('rank', 'x_D = 7 D', True), ('jet degree', 'x_D = 3', True)]
    """
    from symattn.core.validate import require_int

    require_int(max_depth, "max_depth", 2, 64)
    require_int(fit, "fit", 1)
    if not 1 <= fit < max_depth:
        raise SymattnError(f"need 1 <= fit < max_depth, got fit {fit}, max_depth {max_depth}")
    start = time.perf_counter()
    table = family_table(family, width, rank, tokens, range(1, max_depth + 1), normalizer, seed, progress)
    out = []
    for key, quantity in (("top_order_last_layer", "top order of the last layer"), ("kernel", "kernel"),
                          ("rank", "rank"), ("jet_degree", "jet degree")):
        known = {row["depth"]: row[key] for row in table}
        fitted = list(range(1, fit + 1))
        found = fit_sequence(fitted, [known[D] for D in fitted])
        held = []
        for D in range(fit + 1, max_depth + 1):
            predicted = found[1](D, known) if found else None
            held.append({"depth": D, "computed": known[D],
                         "predicted": None if predicted is None else str(predicted)})
        ok = found is not None and all(h["predicted"] == str(h["computed"]) for h in held)
        out.append(Conjecture(quantity, found[0] if found else None, fitted, held, ok).to_json())
    return {"family": family, "width": width, "rank": rank, "tokens": tokens, "label": NO_THEOREM,
            "theorem": None, "table": table, "conjectures": out,
            "seconds": round(time.perf_counter() - start, 3)}


def family_of(arch) -> "str | None":
    """The family of :data:`FAMILY_KINDS` whose kind every layer has, or
    None for the paper's stack.

    >>> from symattn.model.architecture import Architecture
    >>> family_of(Architecture.uniform(2, 2, 1, 3, norm="post")), family_of(Architecture.uniform(1, 2, 1, 3))
    ('ln-post', None)
    """
    if arch.in_paper_model:
        return None
    for name, kind in FAMILY_KINDS.items():
        if arch.with_layers(**kind) == arch:
            return name
    raise SymattnError(f"the architecture {arch.describe()} is of no family of FAMILY_KINDS")
