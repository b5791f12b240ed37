"""The contact spectra of transformer-block families along the collapse path (issue 24), and their fits.

Run: ``python benchmarks/bench_blocks.py [--write docs/blocks_table.inc] [--max-depth 3] [--budget S]``,
and ``python benchmarks/bench_blocks.py --dimensions docs/blocks_dimensions.inc`` for the dimension
table. For each family (attention + LayerNorm post-norm; post-norm block with skip; pre-norm
block with skip; attention + MLP; the full post-norm layer) at depths ``D = 1..3``,
``d = 2``, ``r = 1``, ``n = 3``, and one family at ``d = 3``, ``r = 2``, it computes the
spectrum along ``Q = t U``, ``K = t W`` by :func:`symattn.analyses.spectrum.native_spectrum`:
modular where every constant is rational, and where the modular series refuse the stack (a
LayerNorm's square root, an activation's transcendental value) or its rank falls short of the
declared symmetries, exactly in Q adjoined the stack's constants (the ``constants`` route:
a proved frame, its leading minor certified in balls, certificate ``certified``, the unexplained
kernel a gap of orders at or past ``t^N`` less the orders the rank at the path point ``t = 1``
proves finite; where not even its exact ``t^0`` rows fit, the orders from ranks alone, see
:mod:`symattn.analyses.path_rank`), each row within ``--budget`` seconds (default 900).
Where that route is undecided or beyond the budget the row is
:func:`symattn.analyses.numerical_spectrum.numerical_path_spectrum` (numerical at 300 digits, on a
grown bank) and says why.

Then :func:`symattn.analyses.conjectures.fit_sequence` fits the top order of the last
layer, the rank and the kernel on ``D = 1, 2`` and tests the fit on ``D = 3``. With
``--write`` the tables are written as reStructuredText (the docs page ``blocks.rst``
includes that file; never edit it by hand).

``--dimensions FILE`` writes the dimension table instead: per family and depth
:func:`symattn.analyses.dimension.neuromanifold_dimension` in the exact tier (jets from
``X = 0``) where the series run, else the ball tier (``method="numerical"``: a certified lower
bound, ``P - rank(symmetries)`` above it, the unexplained kernel between), with its tier
and seconds.

Every row carries its claim (:mod:`symattn.analyses.genericity`): ``generic (certified)``,
``generic (evidence, K points)`` (the spectrum at ``K`` independent seeded points, seeds ``0, 1, ...``,
the minimum in dominance order; a special seed is named with the generic candidate) or ``at this
point`` (one point: the numerical tier). A row saved before the generic claims (no ``claim`` in the
JSON) is printed as not recomputed, never with a current label; the conjecture fits take only the
generic rows (:func:`symattn.analyses.conjectures.split_by_claim`) and list the others with the reason.
The dimension table's claim is :attr:`symattn.analyses.dimension.Dimension.generic`.

``--only F:D[,F:D ...]`` recomputes only those rows (``F`` a family index, ``D`` a depth; ``F:D:d:r``
for another width and rank) and rewrites the table from the rows ``--write`` saved beside it
(``FILE.json``): one long row again without the whole table's hour. ``--render`` rewrites the table
from the saved rows alone (no computation).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from fractions import Fraction

import symattn.core.limits as limits
from symattn.analyses.numerical_spectrum import numerical_path_spectrum
from symattn.analyses.spectrum import native_spectrum
from symattn.core.errors import Undecided
from symattn.model.architecture import Architecture
from symattn.analyses.conjectures import fit_sequence, split_by_claim

#: The families: name -> (layer options, default widths).
FAMILIES = {
    "attention + LayerNorm (post-norm)": dict(norm="post"),
    "post-norm block with skip": dict(skip="value", norm="post"),
    "pre-norm block with skip": dict(skip="value", norm="pre"),
    "attention + MLP (tanh, m = 2)": dict(mlp=2, activation="tanh"),
    "attention + MLP (x + x^2/2, m = 2)": dict(mlp=2, activation="poly:0,1,1/2"),
    "full post-norm layer (biases, W_O, GELU, m = 2)": dict(skip="value", norm="post", mlp=2, bias=True,
                                                           combine="concat", activation="gelu"),
}


#: The claim column of a row saved before the generic claims (its JSON has no ``claim``).
NOT_RECOMPUTED = ("not recomputed: computed at seed 0 alone before the generic claims (issue 39); no generic "
                  "claim, its orders are about that point")


def spectrum_row(family: str, depth: int, width: int = 2, rank: int = 1, tokens: int = 3) -> dict:
    """One row: the certified spectrum of ``family`` at ``depth`` (modular, or in Q[constants]), else numerical."""
    arch = Architecture.uniform(depth, width, rank, tokens, "exp", **FAMILIES[family])
    start, cpu = time.perf_counter(), _cpu()
    try:
        s = native_spectrum(arch)
        if s.certificate == "none":
            raise Undecided(s.notes[-1].split(": ", 1)[-1])
        bands = sorted({(b.order, sum(c.multiplicity for c in s.bands if c.order == b.order)) for b in s.bands})
        hybrid = any("and its coefficients up to t^" in n for n in s.notes)
        partial = next((n for n in s.notes if n.startswith("truncated: ")), None)
        ranked = any(n.startswith("certificate certified: the Smith orders from ranks alone") for n in s.notes)
        scored = next((m.group(1) for n in s.notes for m in [re.match(r"score orders: .*?\(mod t\^(\d+)\)", n)] if m),
                      None)
        digits = next((m.group(1) for n in s.notes for m in [re.search(r"ball series at (\d+) digits", n)] if m), "")
        completed = next((m.groups() for n in s.notes
                          for m in [re.match(r"completed frame: .*? mod t\^(\d+) on all .*? mod t\^(\d+) on the (\d+) "
                                             r"columns", n)] if m), None)
        route = ("modular Smith form" if s.method != "constants" else
                 f"exact in Q[constants] mod t^{completed[0]} on every column and mod t^{completed[1]} on the "
                 f"{completed[2]} columns its frame left (the completed frame), a proved frame" if completed else
                 f"from ranks alone: the rank at the path point t = 1 and the ranks of the truncations (balls, "
                 f"{digits} digits), no exact series" if ranked else
                 "exact in Q[constants] mod t^1 and in balls above, a proved frame" if hybrid else
                 f"exact in Q[constants] mod t^{scored}, a proved frame, the orders past it by the score lemma "
                 "(exact zeros of the last layer's token differences, balls)" if scored else
                 f"exact in Q[constants] mod t^{s.order}, a proved partial frame" if partial else
                 "exact in Q[constants], a proved frame")
        unexplained = s.undecided - s.past
        finite = (f"; {s.past} more orders certified finite and >= t^{s.order} (a nonzero minor of J at the path "
                  "point t = 1)" if s.past else "")
        gap = f"; the unexplained part a gap of orders >= t^{s.order}" if unexplained else ""
        past: list[list[int]] = []
        if partial:  # the orders past the truncation: certified >= t^N only, the numerical guide's values
            beyond = re.search(r"puts them at (.*?): numerical", partial)
            past = [[int(o), int(m)] for o, m in re.findall(r"t\^(\d+) x (\d+)", beyond.group(1))] if beyond else []
            what = f"finite and >= t^{s.order}" if s.past == s.undecided else f">= t^{s.order}"
            gap = (f"; the other {s.undecided} orders certified {what} only"
                   + (" (a nonzero minor of J at the path point t = 1)" if s.past == s.undecided else "")
                   + (f" (numerically {beyond.group(1)} at 300 digits)" if beyond else ""))
            finite = finite if s.past != s.undecided else ""
        special = s.claim.get("special") or []
        claim = s.generic + (f"; seed {', '.join(map(str, special))} special, generic candidate "
                             f"{_candidate(s.claim['candidate'])}" if special else "")
        row = dict(tier=f"{route}, certificate {s.certificate}{finite}{gap}", bands=bands, rank=s.rank + s.past,
                   claim=claim, candidate=s.claim.get("candidate") if special else None,
                   seeds=s.claim.get("seeds"),
                   declared=s.kernel, unexplained=unexplained, kinds=s.kernel_kinds, P=s.parameters,
                   bank=s.bank_size, finite=s.past,
                   top=None if partial or s.past else max((b.order for b in s.bands if b.layer == depth), default=None),
                   error=None, past=past)
    except Undecided as exc:
        n = numerical_path_spectrum(arch)
        why = str(exc).split(":")[0].split(" (")[0]
        ranked = any("unexplained kernel" in note and "replace the slopes'" in note for note in n.notes)
        at = next((m.group(1) for note in n.notes for m in [re.search(r"ball series at (\d+) digits", note)] if m), "")
        framed = f"a numerical column-reduced frame ({at} digits)" if at else "a numerical column-reduced frame"
        frame = {"confirmed": f"; bands confirmed by {framed}",
                 "corrected": f"; bands, rank and kernel from {framed} (singular values below the slopes' floor)"
                              if ranked else
                              f"; bands from {framed} (the final-pair slopes split them otherwise)",
                 "unsettled": "; a numerical column-reduced frame does not settle the bands"}.get(n.frame, "")
        bound = (f"; rank >= {n.certified_rank} certified (a nonzero minor of J at the path point t = 1)"
                 if n.certified_rank is not None else "")
        row = dict(tier=f"numerical at {n.digits} digits (no certificate: {why}){frame}{bound}", bands=n.bands,
                   claim="at this point (numerical, one point)", candidate=None, seeds=[0],
                   rank=n.rank, certified_rank=n.certified_rank,
                   declared=n.declared, unexplained=n.unexplained, kinds=n.kernel_kinds, P=n.parameters,
                   bank=n.bank_size, top=max(o for o, _ in n.bands), error=n.max_slope_error)
    row.update(family=family, depth=depth, d=width, r=rank, n=tokens, seconds=time.perf_counter() - start,
               cpu=_cpu() - cpu)
    return row


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the exact rows run in forked children)."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _candidate(orders) -> str:
    """A generic candidate's orders (None: not found below the truncation) as ``t^k x m``."""
    from collections import Counter

    counts = Counter("?" if o is None else o for o in orders)
    return ", ".join(f"t^{o} x {m}" for o, m in sorted(counts.items(), key=lambda x: (x[0] == "?", str(x[0]).zfill(6))))


def _generic(row: dict) -> dict:
    """The row as its generic claim sees it: where the seed is special, the candidate's orders replace the
    point's (the conjecture engine fits generic values only)."""
    cand = row.get("candidate")
    if not cand:
        return row
    finite = [o for o in cand if o is not None]
    return dict(row, top=max(finite), rank=len(finite), past=[], finite=0,
                unexplained=row["unexplained"] - (len(finite) - row["rank"]))


def fits(rows: list[dict], family: str) -> list[tuple[str, str, str]]:
    """``(quantity, formula fitted on D = 1, 2, held-out checks)`` for one family and each width it has rows
    at, on the generic values (:func:`_generic`); rows without a generic claim (computed at one point) are
    not fitted. The fit on ``D = 1, 2`` is tested on every computed ``D >= 3``; where ``D = 1, 2, 3`` and
    ``D = 4`` are computed, the fit on ``D = 1, 2, 3`` (which may be a recursion) is tested on ``D = 4``
    as well."""
    out = []
    for width, rank in sorted({(r["d"], r["r"]) for r in rows if r["family"] == family}):
        kept, _ = split_by_claim([r for r in rows if r["family"] == family and (r["d"], r["r"]) == (width, rank)])
        mine = {r["depth"]: _generic(r) for r in kept if r["top"] is not None or r.get("past")}
        for key, what in (("top", "largest order"), ("rank", "rank"), ("kernel", "kernel")):
            known = {D: _fitted(r, key) for D, r in mine.items()}
            label = what if (width, rank) == (2, 1) else f"{what} (d = {width}, r = {rank})"
            if not {1, 2} <= set(known):
                continue
            found = fit_sequence([1, 2], [known[1], known[2]])
            if found is None:
                out.append((label, "no fit", ""))
                continue
            checks = [_check(found, D, known, mine[D], key) for D in sorted(known) if D > 2]
            if {1, 2, 3, 4} <= set(known):
                longer = fit_sequence([1, 2, 3], [known[1], known[2], known[3]])
                checks.append(f"fit on D = 1, 2, 3: {longer[0]}; " + _check(longer, 4, known, mine[4], key)
                              if longer else "no fit on D = 1, 2, 3")
            out.append((label, found[0], "; ".join(checks)))
    return out


def not_fitted(rows: list[dict]) -> list[tuple[dict, str]]:
    """The rows :func:`fits` leaves out, each with the reason (its claim is not generic)."""
    return split_by_claim(rows)[1]


def _check(found, D: int, known: dict, row: dict, key: str) -> str:
    """The held-out test of a fit at depth ``D``."""
    predicted = found[1](D, known)
    ok = Fraction(predicted) == Fraction(known[D])
    past = row.get("past") or []
    numerical = key == "top" or sum(m for _, m in past) > row.get("finite", 0)  # else certified
    where = " with the numerical orders past the partial frame's cut" if past and numerical else ""
    return f"D = {D}: predicted {predicted}, computed {known[D]}{where} ({'holds' if ok else 'fails'})"


def _fitted(row: dict, key: str) -> int:
    """``top``, ``rank`` or ``kernel`` of a row; a partial frame's row (``past``: the numerical
    orders past its cut) counts those orders as finite, as the numerical tier sees them."""
    past = row.get("past") or []
    beyond = sum(m for _, m in past)
    if key == "top":
        return max(o for o, _ in past) if past else row["top"]
    unproved = beyond - row.get("finite", 0)  # of those, the orders not yet counted in the rank
    if key == "rank":
        return row["rank"] + unproved
    return row["declared"] + row["unexplained"] - unproved


def _bands(bands) -> str:
    return ", ".join(f"t^{o} x {m}" for o, m in bands)


def rst(rows: list[dict], fitted: dict) -> str:
    """The tables as reStructuredText."""
    lines = [".. Generated by benchmarks/bench_blocks.py --write; do not edit.", "",
             ".. list-table:: Contact spectra along Q = t U, K = t W (n = 3, softmax, eps = 1/100000; the orders "
             "printed are seed 0's, the claim compares the seeds it names)",
             "   :header-rows: 1", "",
             "   * - family", "     - D, d, r", "     - P", "     - Smith orders x multiplicity",
             "     - rank", "     - declared kernel", "     - unexplained", "     - tier", "     - claim",
             "     - seconds (wall)", "     - CPU seconds"]
    for r in rows:
        kinds = "; ".join(f"{k} {v}" for k, v in r["kinds"].items()) or "none"
        tier = r["tier"] + ("" if r["error"] is None else f"; slopes within {r['error']:.2g} of integers")
        seeds = r.get("seeds") or []
        claim = r.get("claim") or NOT_RECOMPUTED
        if r.get("claim") and len(seeds) > 1:
            claim += f" (seeds {', '.join(map(str, seeds))})"
        lines += [f"   * - {r['family']}", f"     - {r['depth']}, {r['d']}, {r['r']}", f"     - {r['P']}",
                  f"     - {_bands(r['bands'])}", f"     - {r['rank']}", f"     - {r['declared']} ({kinds})",
                  f"     - {r['unexplained']}", f"     - {tier}", f"     - {claim}",
                  f"     - {r['seconds']:.1f}", f"     - {r['cpu']:.1f}" if r.get("cpu") is not None else "     - n/a"]
    left = not_fitted(rows)
    skipped = [""] + (["Not fitted (the conjecture engine fits generic values only): " + "; ".join(
        f"{r['family']} D = {r['depth']}, d = {r['d']}, r = {r['r']} ({why})" for r, why in left) + "."]
        if left else [])
    if not any(fitted.values()):
        return "\n".join(lines + ["", "No family has generic rows at D = 1 and 2: the conjecture engine fits "
                                   "nothing here."] + skipped) + "\n"
    lines += ["", ".. list-table:: What the conjecture engine fits on D = 1, 2 (generic values only; tested on D = 3 "
              "and D = 4 where computed, at each width; theorem: null)",
              "   :header-rows: 1", "", "   * - family", "     - quantity", "     - fitted formula",
              "     - held-out test"]
    for family, items in fitted.items():
        for what, formula, check in items:
            lines += [f"   * - {family}", f"     - {what}", f"     - ``{formula}``",
                      f"     - {check or 'not tested: no generic row at D >= 3 (listed below if not recomputed)'}"]
    return "\n".join(lines + skipped) + "\n"


def dimension_row(family: str, depth: int, width: int = 2, rank: int = 1, tokens: int = 3) -> dict:
    """The dimension of ``family`` at ``depth``: exact tier where it runs, else the ball tier."""
    from symattn.analyses.dimension import neuromanifold_dimension
    from symattn.core.errors import Undecided

    arch = Architecture.uniform(depth, width, rank, tokens, "exp", **FAMILIES[family])
    start, cpu = time.perf_counter(), _cpu()
    try:
        r = neuromanifold_dimension(arch)
        tier = "exact (jets from X = 0, mod p)"
    except Undecided as exc:
        r = neuromanifold_dimension(arch, method="numerical")
        tier = f"{r.tier}; exact tier refused ({str(exc).split(':')[0].split(' (')[0]})"
    return dict(family=family, depth=depth, d=width, r=rank, P=r.parameters, lower=r.lower_bound,
                upper=r.upper_bound, dimension=r.dimension, unexplained=r.unexplained, kinds=r.symmetries,
                tier=tier, claim=r.generic, seconds=time.perf_counter() - start, cpu=_cpu() - cpu)


def dimension_rst(rows: list[dict]) -> str:
    """The dimension table as reStructuredText."""
    lines = [".. Generated by benchmarks/bench_blocks.py --dimensions; do not edit.", "",
             ".. list-table:: Neuromanifold dimensions of the block families (n = 3, softmax, eps = 1/100000, "
             "seeded points)",
             "   :header-rows: 1", "",
             "   * - family", "     - D, d, r", "     - P", "     - dimension", "     - lower (certified)",
             "     - upper (P - rank of the declared symmetries)", "     - unexplained", "     - tier",
             "     - claim", "     - seconds", "     - CPU seconds"]
    for r in rows:
        kinds = "; ".join(f"{k} {v}" for k, v in r["kinds"].items()) or "none"
        lines += [f"   * - {r['family']}", f"     - {r['depth']}, {r['d']}, {r['r']}", f"     - {r['P']}",
                  f"     - {r['dimension'] if r['dimension'] is not None else 'undecided'}", f"     - {r['lower']}",
                  f"     - {r['upper']} ({kinds})", f"     - {r['unexplained']}", f"     - {r['tier']}",
                  f"     - {r['claim']}", f"     - {r['seconds']:.1f}", f"     - {r['cpu']:.1f}"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", default=None, metavar="FILE.inc")
    parser.add_argument("--max-depth", type=int, default=3)
    parser.add_argument("--families", default=None, help="comma-separated family indices (default all)")
    parser.add_argument("--dimensions", default=None, metavar="FILE.inc",
                        help="compute the dimension table (exact tier, else the ball tier) and write it")
    parser.add_argument("--only", default=None, metavar="F:D,...",
                        help="recompute only these rows (family index:depth[:d:r]) and merge them into "
                             "the rows saved beside --write (FILE.json)")
    parser.add_argument("--render", action="store_true",
                        help="rewrite the table from the rows saved beside --write (FILE.json), computing nothing")
    parser.add_argument("--budget", type=float, default=900.0,
                        help="seconds for the exact route of one row (default 900; the numerical tier beyond)")
    args = parser.parse_args(argv)
    limits.PROOF_SECONDS = args.budget  # the constants route reads it when it starts
    names = list(FAMILIES)
    if args.families:
        names = [names[int(i)] for i in args.families.split(",")]
    if args.dimensions:
        rows = []
        cases = [(f, D, 2, 1) for f in names for D in range(1, args.max_depth + 1)]
        cases += [("post-norm block with skip", D, 3, 2) for D in (1, 2)]
        for family, D, d, r in cases:
            rows.append(dimension_row(family, D, d, r))
            x = rows[-1]
            print(f"{family} D = {D}, d = {d}, r = {r}: [{x['lower']}, {x['upper']}] of {x['P']}, unexplained "
                  f"{x['unexplained']}; {x['tier']}; {x['claim']}; {x['seconds']:.1f} s, {x['cpu']:.1f} s CPU",
                  flush=True)
        with open(args.dimensions, "w", encoding="utf-8") as f:
            f.write(dimension_rst(rows))
        with open(_rows_path(args.dimensions), "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
            f.write("\n")
        print(f"wrote {args.dimensions} and {_rows_path(args.dimensions)}", file=sys.stderr)
        return
    if args.render:
        if not args.write:
            parser.error("--render needs --write FILE.inc (its rows are read from FILE.json)")
        rows = _load_rows(args.write)
        _write(args.write, rows, {family: fits(rows, family) for family in FAMILIES})
        return
    if args.only:
        if not args.write:
            parser.error("--only needs --write FILE.inc (its rows are read from FILE.json)")
        rows = _load_rows(args.write)
        for item in args.only.split(","):
            f, D, *dr = (int(v) for v in item.split(":"))
            d, r = dr if dr else (2, 1)
            new = spectrum_row(list(FAMILIES)[f], D, width=d, rank=r)
            _say(new)
            key = (new["family"], D, d, r)
            rows = [new if (x["family"], x["depth"], x["d"], x["r"]) == key else x for x in rows]
            if key not in {(x["family"], x["depth"], x["d"], x["r"]) for x in rows}:
                rows.append(new)
            # after each row: an interrupted run keeps the rows it finished
            _write(args.write, rows, {family: fits(rows, family) for family in FAMILIES})
        return
    rows = []
    for family in names:
        for D in range(1, args.max_depth + 1):
            rows.append(spectrum_row(family, D))
            _say(rows[-1])
    for D in (1, 2):
        rows.append(spectrum_row("post-norm block with skip", D, width=3, rank=2))
        r = rows[-1]
        print(f"d = 3, r = 2, post-norm block with skip D = {D}: {_bands(r['bands'])}; rank {r['rank']}, "
              f"{r['seconds']:.1f} s", flush=True)
    fitted = {family: fits(rows, family) for family in names}
    for family, items in fitted.items():
        for what, formula, check in items:
            print(f"fit {family}: {what}: {formula}; {check}")
    if args.write:
        _write(args.write, rows, fitted)


def _say(r: dict) -> None:
    """One row's progress line."""
    print(f"{r['family']} D = {r['depth']}, d = {r['d']}, r = {r['r']}: {_bands(r['bands'])}; rank {r['rank']}, "
          f"declared {r['declared']}, unexplained {r['unexplained']}; {r['tier']}; {r['seconds']:.1f} s, "
          f"{r['cpu']:.1f} s CPU", flush=True)


def _write(path: str, rows: list[dict], fitted: dict) -> None:
    """The table (``path``) and its rows (``path`` with ``.json``, read back by ``--only``)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(rst(rows, fitted))
    with open(_rows_path(path), "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")
    print(f"wrote {path} and {_rows_path(path)}", file=sys.stderr)


def _rows_path(path: str) -> str:
    return path.rsplit(".", 1)[0] + ".json"


def _load_rows(path: str) -> list[dict]:
    try:
        with open(_rows_path(path), encoding="utf-8") as f:
            rows = json.load(f)
    except FileNotFoundError:
        sys.exit(f"{_rows_path(path)} not found: run with --write {path} (the whole table) first")
    for r in rows:
        r["bands"] = [tuple(b) for b in r["bands"]]
    return rows


if __name__ == "__main__":
    main()
