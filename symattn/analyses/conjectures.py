"""Conjectures from computation: contact orders of variant families fitted and tested.

For a family of stacks (:data:`FAMILY_KINDS`) the certified contact spectrum
(:func:`symattn.analyses.spectrum.native_spectrum`) is computed at depths ``D = 1..D_max``, with per
depth the top order of the last layer, the kernel (declared symmetries; ``unexplained`` the rest), the
rank, and the jet degree (the least degree of the zero-input jet reaching the certified dimension,
least over three seeded points: a point's degree bounds the generic one from above).

Each sequence is fitted on the first depths by the simplest of a constant, ``a D + b`` and a
recursion ``x_D = a x_{D-1} + b`` (exact rationals reproducing every fitted point), then tested on the
held-out depths. A formula is a *conjecture* with its evidence (``theorem: null``); a failed held-out
test is reported, not dropped.

Generic values only. A certificate proves the orders *at the point* it was computed at
(:mod:`symattn.analyses.genericity`); each row carries its ``claim``: ``generic (certified)``,
``generic (evidence, K points)`` (at a special seed the generic candidate's rank and largest order
are fitted, not the point's) or ``at this point``. Only generic rows are fitted
(:func:`split_by_claim`); every other row is listed in the conjecture's ``excluded`` with the reason,
and a fitted depth left out leaves no formula. The jet degree's claim is ``generic upper bound
(certified)`` (:func:`~symattn.analyses.genericity.degree_claim`): the least over the points, the
generic candidate, fitted as evidence. One width, rank and token count per run.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Callable, Sequence

from symattn.core.errors import InternalError, SymattnError
from symattn.model.architecture import Architecture
from symattn.analyses.dimension import neuromanifold_dimension
from symattn.analyses.genericity import degree_claim
from symattn.analyses.spectrum import native_spectrum
from symattn.theorems.statements import NO_THEOREM

__all__ = ["FAMILY_KINDS", "FITTED_CLAIMS", "Conjecture", "fit_sequence", "split_by_claim", "family_table",
           "conjectures", "family_of"]

#: The claims whose values the conjecture engine fits (label prefixes, :mod:`~symattn.analyses.genericity`).
FITTED_CLAIMS = ("generic (certified)", "generic (evidence, ")

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
    #: the rows not fitted nor tested: ``{"depth", "claim", "reason"}`` (their claim is not generic)
    excluded: list = field(default_factory=list)
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


def split_by_claim(rows: Sequence[dict], key: str = "claim", accept: Sequence[str] = FITTED_CLAIMS
                   ) -> tuple[list[dict], list[tuple[dict, str]]]:
    """The rows whose claim is generic, and the others with the reason each is not fitted.

    Parameters
    ----------
    rows : sequence of dict
        Rows of a table, each with its claim label under ``key`` (a row without one was computed
        before the generic claims: at one point).
    key : str, optional
        The row's key of the claim label (default ``"claim"``).
    accept : sequence of str, optional
        The label prefixes fitted (default :data:`FITTED_CLAIMS`).

    Returns
    -------
    tuple
        ``(kept, excluded)``: the rows fitted, in order, and ``(row, reason)`` for each other one.

    >>> kept, excluded = split_by_claim([{"claim": "generic (evidence, 2 points)"},
    ...                                  {"claim": "at this point (numerical, one point)"}, {}])
    >>> len(kept), [why.split(":")[0] for _, why in excluded]
    (1, ['claim at this point (numerical, one point)', 'no claim'])
    """
    kept, excluded = [], []
    for row in rows:
        label = row.get(key)
        if isinstance(label, str) and label.startswith(tuple(accept)):
            kept.append(row)
        elif not label:
            excluded.append((row, "no claim: computed before the generic claims, at one point"))
        else:
            excluded.append((row, f"claim {label}: a result about its point, not the architecture's generic one"))
    return kept, excluded


def _generic_value(row: dict, key: str):
    """``row[key]`` as the row's generic claim sees it: at a special seed (``row["special"]``) the generic
    candidate's rank and largest order replace the point's; None where the candidate does not give it
    (orders only known finite, another count of visible orders, a largest order outside the last layer)."""
    if not row.get("special") or key == "jet_degree":
        return row[key]
    cand, bands = row["candidate"], row["bands"]
    finite = [o for o in cand if o is not None]
    if row.get("past") or len(cand) != sum(m for _, _, m in bands) + row.get("undecided", 0):
        return None
    if key == "rank":
        return len(finite)
    if key == "kernel":
        return row[key]
    top = row[key]
    return max(finite) if finite and top is not None and top == max(o for _, o, _ in bands) else None


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
               "claim": "at this point (numerical, one point)", "candidate": None, "special": [],
               "jet_claim": "at this point (no jet: numerical tier)",
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
    # no statement of the paper gives a family's degree (FAMILY_KINDS are variants): an upper bound at best
    jet_claim = degree_claim(dict(zip(range(seed, seed + 3), by_seed)), None)
    top = max((b.order for b in s.bands if b.layer == D), default=None)
    return _checked({"depth": D, "bands": [(b.layer, b.order, b.multiplicity) for b in s.bands],
                     "top_order_last_layer": top if not s.past else None, "kernel": s.kernel,
                     "rank": s.rank + s.past, "unexplained": s.undecided - s.past, "past": s.past,
                     "jet_degree": jet, "jet_degree_by_seed": by_seed, "undecided": s.undecided,
                     "certificate": s.certificate, "claim": s.generic, "candidate": s.claim.get("candidate"),
                     "special": s.claim.get("special") or [], "jet_claim": jet_claim.label,
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

    Returns ``{"family", "label", "theorem": None, "table", "conjectures"}``: each row of the table
    with its ``claim`` (and ``jet_claim``), each conjecture fitted on the rows whose claim is generic
    (:func:`split_by_claim`) with the others in its ``excluded`` (depth, claim, reason).

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
    for key, quantity, claim in (("top_order_last_layer", "top order of the last layer", "claim"),
                                 ("kernel", "kernel", "claim"), ("rank", "rank", "claim"),
                                 ("jet_degree", "jet degree", "jet_claim")):
        accept = FITTED_CLAIMS + (("generic upper bound (certified)",) if key == "jet_degree" else ())
        kept, left = split_by_claim(table, claim, accept)
        excluded = [{"depth": row["depth"], "claim": row.get(claim), "reason": why} for row, why in left]
        known = {}
        for row in kept:
            value = _generic_value(row, key)
            if value is None and row[key] is not None:  # the special seed's candidate does not give it
                excluded.append({"depth": row["depth"], "claim": row[claim], "reason": "the seed is special and "
                                 f"its generic candidate does not give the {quantity}"})
            else:
                known[row["depth"]] = value
        fitted = list(range(1, fit + 1))
        found = fit_sequence(fitted, [known[D] for D in fitted]) if set(fitted) <= set(known) else None
        held = []
        for D in range(fit + 1, max_depth + 1):
            if D not in known:
                continue
            predicted = found[1](D, known) if found else None
            held.append({"depth": D, "computed": known[D],
                         "predicted": None if predicted is None else str(predicted)})
        ok = found is not None and bool(held) and all(h["predicted"] == str(h["computed"]) for h in held)
        out.append(Conjecture(quantity, found[0] if found else None, fitted, held, ok,
                              sorted(excluded, key=lambda e: e["depth"])).to_json())
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
