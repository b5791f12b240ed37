"""Sweep specs: a TOML file of grids of architectures x analyses, validated in full, expanded into cases.

A sweep spec is a TOML file (read with :mod:`tomllib`, never evaluated)::

    analyses = ["spectrum", "jet", "dimension", "bank", "float32"]
    seeds = [0]                  # optional, default [0]

    [limits]                     # optional; per case
    timeout = 120                # seconds of wall clock
    memory = "2GB"               # resident memory

    [[grid]]                     # one or more grids; each is a cartesian product
    analyses = ["spectrum"]      # optional: only these of the analyses above
    depth = [2, 3]               # a list holds alternatives, a scalar is one
    width = [2, 3]               # or widths = [[3, 2, 3]] (d_0..d_D, one alternative)
    rank = [1, [1, 2]]           # or ranks = ...; a nested list is per layer
    tokens = 2
    normalizer = ["exp", "cosh", ["exp", "cosh"]]
    family = ["paper", "post-norm"]  # optional: every layer of a family of
                                     # symattn.analyses.conjectures.FAMILY_KINDS (default paper)

    [options.spectrum]           # optional analysis options (see ANALYSES)
    bank = "auto"

:func:`load_spec` validates everything (keys, types, normalizer names through
:class:`~symattn.model.normalizer.Normalizer`, architectures, option values, the
number of cases, every field against :data:`SPEC_LIMITS`) before any work and raises
:class:`~symattn.core.errors.SymattnError` with a one-line message; the grids expand
into :class:`Case` objects, each keyed by its analysis, its *canonical* architecture
(widths, ranks where the analysis uses them, tokens, and each normalizer as its
rescaled expression, so ``rank = 1`` and ``rank = [1, 1]``, or ``"exp"`` and
``"2*exp(s)"``, are one case), its full options (defaults filled in) and its seed.
:mod:`symattn.sweep.run` runs them.

Examples
--------
>>> spec = parse_spec({"analyses": ["jet"], "grid": [{"depth": 1, "width": [1, 2], "tokens": 2}]})
>>> [c.label for c in spec.cases]
['jet D=1 d=1,1 n=2 phi=exp(s) seed=0', 'jet D=1 d=2,2 n=2 phi=exp(s) seed=0']
"""

from __future__ import annotations

import itertools
import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from symattn.core.errors import SymattnError
from symattn.core.validate import nesting_depth, read_text_file, require_int, require_real, shown
from symattn.sweep.analyses import ANALYSES
from symattn.sweep.confine import parse_memory

__all__ = ["Case", "SweepSpec", "load_spec", "parse_spec", "MAX_CASES", "MAX_PARAMETERS", "SPEC_LIMITS", "SPEC_SECONDS"]


#: The most cases one spec may expand to (a guard against a mistyped grid).
MAX_CASES = 100_000
#: The largest native parameter count a sweep case may have (beyond: minutes and GBs per case).
MAX_PARAMETERS = 4_000

_GRID_KEYS = {"analyses", "depth", "width", "widths", "rank", "ranks", "tokens", "normalizer", "family"}
_TOP_KEYS = {"analyses", "seeds", "limits", "grid", "options"}
_DEFAULT_TIMEOUT = 600.0
_DEFAULT_MEMORY = "4GB"

# -- cases -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One analysis of one canonical architecture at one seed (one store row)."""

    analysis: str
    architecture: dict          # canonical: depth, widths, ranks (or None), tokens, normalizers
    normalizer_specs: tuple     # the spec strings that build the normalizers
    options: dict
    seed: int
    cost: int = 0               # a relative cost estimate (for the order of submission)

    @property
    def key(self) -> tuple[str, str, str, int]:
        """``(analysis, architecture JSON, options JSON, seed)``, canonical."""
        return (self.analysis, json.dumps(self.architecture, sort_keys=True),
                json.dumps(self.options, sort_keys=True), self.seed)

    @property
    def label(self) -> str:
        a = self.architecture
        ranks = f" r={','.join(map(str, a['ranks']))}" if a.get("ranks") else ""
        family = f" family={a['family']}" if a.get("family") else ""
        return (f"{self.analysis} D={a['depth']} d={','.join(map(str, a['widths']))}{ranks} "
                f"n={a['tokens']} phi={','.join(dict.fromkeys(a['normalizers']))}{family} seed={self.seed}")

    def payload(self) -> dict:
        """Plain JSON data a worker needs to compute the case."""
        return {"analysis": self.analysis, "architecture": {**self.architecture,
                "normalizer_specs": list(self.normalizer_specs)},
                "options": self.options, "seed": self.seed, "label": self.label}


@dataclass
class SweepSpec:
    """A validated sweep: its cases, limits, and the cases left out of scope."""

    cases: list[Case]
    timeout: float = _DEFAULT_TIMEOUT
    memory: int = field(default_factory=lambda: parse_memory(_DEFAULT_MEMORY))
    skipped: list[str] = field(default_factory=list)
    source: str = "<spec>"


def load_spec(path: "str | Path", max_memory_gib: float | None = None) -> SweepSpec:
    """Read and validate a sweep spec file (see the module docstring and :func:`parse_spec`).

    The file must be a regular file (never a FIFO or a device) of at most
    :data:`MAX_SPEC_BYTES` bytes of UTF-8 TOML.
    """
    from symattn.core.validate import require_path

    text = read_text_file(require_path(path, "sweep spec"), "sweep spec", MAX_SPEC_BYTES)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SymattnError(f"sweep spec {path} is not valid TOML: {exc}") from None
    except RecursionError:
        raise SymattnError(f"sweep spec {path} nests arrays or tables too deeply "
                           f"(at most {MAX_SPEC_NESTING})") from None
    return parse_spec(data, str(path), max_memory_gib)


def parse_spec(data: dict, source: str = "<spec>", max_memory_gib: float | None = None) -> SweepSpec:
    """Validate a parsed spec in full and expand its grids into cases (see the module docstring).

    Every field is checked against its documented range (:data:`SPEC_LIMITS`)
    before any case is built: types, sizes and nesting, the number of cases
    (counted from the grids' sizes before they are expanded), the per-case
    limits against ``max_memory_gib`` (``--max-memory``, default
    :data:`~symattn.core.limits.DEFAULT_MAX_MEMORY_GIB`), and the normalizers under one time
    budget (:data:`SPEC_SECONDS`). A case whose estimated memory is beyond
    ``max_memory_gib`` (as ``symattn spectrum`` etc. would refuse it) is not
    made: it is listed in :attr:`SweepSpec.skipped` with the estimate.

    Raises
    ------
    SymattnError
        One line ``sweep spec SOURCE: FIELD ...`` naming the field.
    """
    from symattn.core.limits import DEFAULT_MAX_MEMORY_GIB, time_budget

    def fail(msg: str):
        raise SymattnError(f"sweep spec {source}: {msg}")

    limit_gib = DEFAULT_MAX_MEMORY_GIB if max_memory_gib is None else require_real(
        max_memory_gib, "max_memory_gib", 0, 1e6, open_low=True)
    if not isinstance(data, dict):
        fail("must be a TOML table of keys")
    if nesting_depth(data, MAX_SPEC_NESTING) > MAX_SPEC_NESTING:
        fail(f"nests arrays or tables more than {MAX_SPEC_NESTING} deep")
    unknown = set(data) - _TOP_KEYS
    if unknown:
        fail(f"unknown key {_name(sorted(map(str, unknown))[0])} (allowed: {', '.join(sorted(_TOP_KEYS))})")
    analyses = _check(fail, "analyses", lambda: _names(data.get("analyses")))
    seeds = _check(fail, "seeds", lambda: _seeds(data.get("seeds", [0])))
    timeout, memory = _limits(data.get("limits", {}), limit_gib, fail)
    options = _options(data.get("options", {}), analyses, fail)
    grids = data.get("grid")
    if isinstance(grids, dict):
        grids = [grids]
    if not isinstance(grids, list) or not grids:
        fail("needs at least one [[grid]] table of architectures")
    if len(grids) > MAX_ALTERNATIVES:
        fail(f"has {len(grids)} [[grid]] tables, beyond the limit {MAX_ALTERNATIVES}")
    count = 0
    tables = []
    for g, grid in enumerate(grids, 1):
        if not isinstance(grid, dict):
            fail(f"grid {g} must be a table")
        names = grid.get("analyses", analyses)
        if (not isinstance(names, list) or not names or not all(isinstance(a, str) for a in names)
                or any(a not in analyses for a in names)):
            fail(f"grid {g}: 'analyses' must be a non-empty list of analyses named at the top "
                 f"({', '.join(analyses)}), got {shown(names)}")
        axes = _grid_axes({k: v for k, v in grid.items() if k != "analyses"},
                          lambda msg: fail(f"grid {g}: {msg}"))
        size = math.prod(len(axis) for axis in axes[:5])
        count += size * len(dict.fromkeys(names)) * len(seeds)
        if count > MAX_CASES:
            fail(f"the grids expand to more than {MAX_CASES} cases; split the sweep")
        tables.append((g, list(dict.fromkeys(names)), axes))
    from symattn.theorems.formulas import divisibility_orders

    cases: dict[tuple, Case] = {}
    skipped: list[str] = []
    built: dict[str, Any] = {}
    rational: dict[str, int] = {}  # spec string -> the order its Taylor coefficients are rational through
    try:
        with time_budget(SPEC_SECONDS, "checking the normalizers"):
            for g, names, axes in tables:
                for arch, specs in _grid_architectures(axes, built, lambda msg: fail(f"grid {g}: {msg}")):
                    order = max(divisibility_orders(arch))
                    cost = arch.native_size * (order + 1)
                    for name in names:
                        analysis = ANALYSES[name]
                        canonical = _canonical(arch, analysis.uses_ranks)
                        reason = analysis.applicable(arch) or _beyond_memory(name, arch, options[name],
                                                                             limit_gib)
                        if reason:
                            skipped.append(f"{name} {json.dumps(canonical, sort_keys=True)}: {reason}")
                            continue
                        if analysis.rational(options[name]):
                            _check_rational(specs, built, order + 1, rational, name,
                                            lambda msg: fail(f"grid {g}: {msg}"))
                        for seed in seeds:
                            case = Case(name, canonical, specs, options[name], seed,
                                        cost * analysis.cost_weight(order))
                            cases.setdefault(case.key, case)
    except SymattnError as exc:
        text = str(exc)
        raise SymattnError(text if text.startswith("sweep spec") else f"sweep spec {source}: {text}") from None
    return SweepSpec(list(cases.values()), timeout, memory, sorted(set(skipped)), source)


# -- spec validation: every field against its documented range, before any case is built --------

#: Largest sweep spec file, in bytes.
MAX_SPEC_BYTES = 256 * 1024
#: Deepest nesting of arrays and tables in a spec (a per-layer normalizer list in a grid is 5).
MAX_SPEC_NESTING = 8
#: Most alternatives in one list of a spec (seeds, grid tables, one axis of a grid, scales).
MAX_ALTERNATIVES = 1000
#: Longest per-case wall-clock limit, in seconds (a week).
MAX_TIMEOUT = 7 * 24 * 3600.0
#: Largest seed (the store keeps seeds as SQLite's signed 64-bit integers).
MAX_SEED = 2**63 - 1
#: Seconds all the normalizers of one spec may take to check together (symbolic expansion).
SPEC_SECONDS = 60.0
#: Largest bank of a spectrum (as the commands' ``--bank``) and of a float32 estimate.
MAX_SWEEP_BANK = 4096
#: Largest ``order`` (spectrum) and ``max_degree`` (jet) option.
MAX_SWEEP_ORDER = 600
#: The documented range of every field (shown in docs/sweeps.rst).
SPEC_LIMITS = {
    "spec file": f"a regular UTF-8 file of at most {MAX_SPEC_BYTES} bytes, nesting at most {MAX_SPEC_NESTING}",
    "analyses": "a non-empty list of distinct names of ANALYSES",
    "seeds": f"a non-empty list of at most {MAX_ALTERNATIVES} integers in [0, 2^63 - 1]",
    "limits.timeout": f"seconds in (0, {MAX_TIMEOUT:g}] (a week)",
    "limits.memory": "bytes or a string like \"2GB\", at most --max-memory",
    "grid": f"1 to {MAX_ALTERNATIVES} tables, each axis a value or a list of at most {MAX_ALTERNATIVES}",
    "depth": "an integer in [1, 256] (symattn.core.limits.MAX_DEPTH)",
    "width, widths": "integers in [1, 65536], and the native parameters at most MAX_PARAMETERS",
    "rank, ranks": "integers in [1, 65536]",
    "tokens": "an integer in [2, 65536]",
    "normalizer": "a name or expression (symattn.core.parse) or a list of one per layer",
    "family": "\"paper\" or a name of symattn.analyses.conjectures.FAMILY_KINDS (every layer of that kind)",
    "cases": f"at most {MAX_CASES} (counted before the grids are expanded)",
    "options.*.bank": f"\"auto\" or an integer in [1, {MAX_SWEEP_BANK}]",
    "options.*.order, max_degree": f"an integer in [1, {MAX_SWEEP_ORDER}]",
    "options.float32.scales": "1 to 32 positive rationals as strings like \"1/100\" (at most 12 digits each)",
}

_SCALE = re.compile(r"\d{1,12}(/\d{1,12})?|\d{0,12}\.\d{1,12}")


def _name(text: str) -> str:
    return repr(text[:40] + ("..." if len(text) > 40 else ""))


def _check(fail, field: str, check):
    """Run ``check()``; a failure becomes ``fail`` with the field named."""
    try:
        return check()
    except SymattnError as exc:
        fail(str(exc) if str(exc).startswith(field) else f"{field}: {exc}")


def _names(value) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(a, str) for a in value):
        raise SymattnError("'analyses' must be a non-empty list of names, e.g. analyses = [\"spectrum\"]")
    for a in value:
        if a not in ANALYSES:
            raise SymattnError(f"unknown analysis {_name(a)} (known: {', '.join(ANALYSES)})")
    return list(dict.fromkeys(value))


def _seeds(value) -> list[int]:
    if not isinstance(value, list) or not value or len(value) > MAX_ALTERNATIVES:
        raise SymattnError(f"'seeds' must be a non-empty list of at most {MAX_ALTERNATIVES} "
                           "non-negative integers")
    return list(dict.fromkeys(require_int(s, "seeds entry", 0, MAX_SEED) for s in value))


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_rational(text: str) -> bool:
    from fractions import Fraction

    if not isinstance(text, str) or not _SCALE.fullmatch(text):
        return False
    try:
        return Fraction(text) > 0
    except (ValueError, ZeroDivisionError):
        return False


def _limits(limits, limit_gib: float, fail) -> tuple[float, int]:
    if not isinstance(limits, dict):
        fail("[limits] must be a table with 'timeout' and/or 'memory'")
    unknown = set(limits) - {"timeout", "memory"}
    if unknown:
        fail(f"unknown limit {_name(sorted(map(str, unknown))[0])} (allowed: timeout, memory)")
    timeout = _check(fail, "limits.timeout", lambda: require_real(
        limits.get("timeout", _DEFAULT_TIMEOUT), "limits.timeout (seconds)", 0, MAX_TIMEOUT, open_low=True))
    try:
        memory = parse_memory(limits.get("memory", _DEFAULT_MEMORY))
    except SymattnError as exc:
        fail(f"limits.memory: {exc}")
    if memory > limit_gib * 2**30:
        fail(f"limits.memory {memory / 2**30:.3g} GiB per case is above --max-memory {limit_gib:g} GiB; "
             "lower it or raise --max-memory")
    return timeout, memory


def _options(given, analyses: list[str], fail) -> dict[str, dict]:
    if not isinstance(given, dict):
        fail("[options] must hold one table per analysis, e.g. [options.spectrum]")
    for name in given:
        if name not in analyses:
            fail(f"[options.{str(name)[:40]}] names an analysis that is not in 'analyses'")
    out = {}
    for name in analyses:
        table = given.get(name, {})
        if not isinstance(table, dict):
            fail(f"[options.{name}] must be a table")
        allowed = ANALYSES[name].options
        for key in table:
            if key not in allowed:
                fail(f"unknown option {_name(str(key))} for {name} (allowed: {', '.join(allowed) or 'none'})")
        opts = {}
        for key, (default, check) in allowed.items():
            value = table.get(key, default)
            field = f"options.{name}.{key}"
            if isinstance(check, tuple) and not (isinstance(value, str) and value in check):
                fail(f"{field} must be one of {', '.join(check)}, got {shown(value)}")
            if check == "bank" and not (value == "auto" or (_is_int(value) and 0 < value <= MAX_SWEEP_BANK)):
                fail(f"{field} must be \"auto\" or an integer in [1, {MAX_SWEEP_BANK}], got {shown(value)}")
            if check == "scales" and not (isinstance(value, list) and 0 < len(value) <= 32 and all(
                    _is_rational(v) for v in value)):
                fail(f"{field} must be a list of 1 to 32 positive rationals as strings like "
                     f"\"1/100\" (at most 12 digits each), got {shown(value)}")
            if check == "count" and not (_is_int(value) and 0 < value <= 10_000):
                fail(f"{field} must be an integer between 1 and 10000, got {shown(value)}")
            if check == "order" and value is not None and not (_is_int(value) and 0 < value <= MAX_SWEEP_ORDER):
                fail(f"{field} must be an integer between 1 and {MAX_SWEEP_ORDER}, got {shown(value)}")
            opts[key] = value
        out[name] = opts
    return out


def _grid_axes(grid: dict, fail) -> tuple:
    """The alternatives of each axis of one grid table (depth, widths, ranks, tokens,
    normalizer), each value checked alone, then the names of the width and rank keys;
    nothing is multiplied out yet."""
    from symattn.core.limits import MAX_DEPTH, MAX_TOKENS, MAX_WIDTH

    unknown = set(grid) - _GRID_KEYS
    if unknown:
        fail(f"unknown key {_name(sorted(map(str, unknown))[0])} (allowed: {', '.join(sorted(_GRID_KEYS))})")
    for a, b in (("width", "widths"), ("rank", "ranks")):
        if a in grid and b in grid:
            fail(f"give '{a}' or '{b}', not both")
    if "depth" not in grid:
        fail("'depth' is required")
    if "width" not in grid and "widths" not in grid:
        fail("'width' or 'widths' is required")
    grid = {"rank": 1, "tokens": 2, "normalizer": "exp", "family": "paper", **grid}
    wkey = "width" if "width" in grid else "widths"
    rkey = "rank" if "rank" in grid else "ranks"
    axes = []
    from symattn.analyses.conjectures import FAMILY_KINDS

    for key, axis in (("depth", "depth"), (wkey, "widths"), (rkey, "ranks"), ("tokens", "tokens"),
                      ("normalizer", "normalizer"), ("family", "family")):
        value = grid[key]
        values = value if isinstance(value, list) else [value]
        if not values:
            fail(f"'{key}' has no values")
        if len(values) > MAX_ALTERNATIVES:
            fail(f"'{key}' has {len(values)} alternatives, beyond the limit {MAX_ALTERNATIVES}")
        for v in values:
            if axis == "depth" and not (_is_int(v) and 1 <= v <= MAX_DEPTH):
                fail(f"depth must be a positive integer (at most {MAX_DEPTH}), got {shown(v)}")
            if axis == "tokens" and not (_is_int(v) and 2 <= v <= MAX_TOKENS):
                fail(f"tokens must be an integer in [2, {MAX_TOKENS}], got {shown(v)}")
            if axis in ("widths", "ranks"):
                entries = v if isinstance(v, list) else [v]
                if not entries or len(entries) > MAX_DEPTH + 1 or not all(
                        _is_int(e) and 1 <= e <= MAX_WIDTH for e in entries):
                    fail(f"'{key}' alternative {shown(v)} must be a positive integer (at most "
                         f"{MAX_WIDTH}) or a list of one per layer")
            if axis == "normalizer":
                entries = v if isinstance(v, list) else [v]
                if not entries or len(entries) > MAX_DEPTH or not all(
                        isinstance(e, str) and 0 < len(e) <= 1000 for e in entries):
                    fail(f"normalizer must be a name or a list of names (one per layer), got {shown(v)}")
            if axis == "family" and not (isinstance(v, str) and (v == "paper" or v in FAMILY_KINDS)):
                fail(f"family must be \"paper\" or one of {', '.join(FAMILY_KINDS)}, got {shown(v)}")
        axes.append(values)
    return (*axes, wkey, rkey)


#: Highest Taylor order a sweep spec's normalizers are checked to be rational through.
MAX_RATIONAL_CHECK = 200


def _check_rational(specs: tuple, built: dict, order: int, checked: dict, analysis: str, fail) -> None:
    """Refuse (``fail``) a normalizer whose Taylor coefficients through ``order`` (at most
    :data:`MAX_RATIONAL_CHECK`) are not all rational, before any case runs: ``analysis`` computes
    with exact or modular series. ``checked`` remembers the order each spec string passed."""
    order = min(order, MAX_RATIONAL_CHECK)
    for spec in dict.fromkeys(specs):
        if checked.get(spec, -1) >= order:
            continue
        try:
            built[spec].rational_phi_taylor(order)
        except SymattnError as exc:
            fail(f"normalizer {str(spec)[:80]!r}: {str(exc).split(';')[0]}; the {analysis} analysis "
                 "computes with exact or modular series, which need rational Taylor coefficients")
        checked[spec] = order


def _grid_architectures(axes: tuple, built: dict, fail) -> list[tuple[Any, tuple]]:
    """Every architecture of one grid (its axes checked and counted: :func:`_grid_axes`), with
    the normalizer specs; ``built`` caches each spec string's
    :class:`~symattn.model.normalizer.Normalizer`."""
    from symattn.model.architecture import Architecture
    from symattn.model.normalizer import normalizers

    from symattn.analyses.conjectures import FAMILY_KINDS

    *values, wkey, rkey = axes
    out = []
    for depth, width, rank, tokens, phi, family in itertools.product(*values):
        widths = _per_layer_ints(width, depth + 1, wkey, fail)
        ranks = _per_layer_ints(rank, depth, rkey, fail)
        specs = tuple(phi) if isinstance(phi, list) else (phi,) * depth
        if len(specs) != depth:
            fail(f"normalizer must be a name or a list of {depth} names, got {shown(phi)}")
        try:
            for s in specs:
                if s not in built:
                    built[s] = normalizers(s, 1)[0]  # the Normalizer API validates the name
            arch = Architecture(widths, ranks, tokens, tuple(built[s] for s in specs))
            if family != "paper":
                arch = arch.with_layers(**FAMILY_KINDS[family])
        except SymattnError as exc:
            fail(str(exc))
        if arch.native_size > MAX_PARAMETERS:
            fail(f"an architecture with {arch.native_size} native parameters is beyond the "
                 f"{MAX_PARAMETERS} a sweep case may have (widths {shown(list(arch.widths))})")
        out.append((arch, specs))
    return out


def _per_layer_ints(value, count: int, key: str, fail) -> tuple[int, ...]:
    values = value if isinstance(value, list) else [value] * count
    if len(values) != count:
        fail(f"'{key}' alternative {shown(value)} must be a positive integer or a list of {count}")
    return tuple(values)


def _beyond_memory(name: str, arch, options: dict, limit_gib: float) -> "str | None":
    """Why a case would be refused by its command's memory estimate (``--max-memory``), or None.

    The estimates are those of the commands (:func:`symattn.core.limits.graph_evaluation_bytes`
    with the same truncation, directions and inputs as ``symattn spectrum``, ``jet``,
    ``dimension``, ``bank``).
    """
    from symattn.analyses.jets import default_rays
    from symattn.core.limits import MAX_SERIES_ORDER, graph_evaluation_bytes
    from symattn.theorems.formulas import divisibility_orders, prop_c1_degree

    exact = options.get("method") == "exact"
    P = arch.native_size
    if name in ("spectrum", "bank"):
        order = options.get("order") or max(divisibility_orders(arch)) + 2
        bank = options.get("bank", "auto") if name == "spectrum" else "auto"
        inputs = bank if isinstance(bank, int) else -(-3 * P // (2 * arch.tokens * arch.widths[-1])) + 1
        directions = P
    elif name == "jet":
        order = prop_c1_degree(arch)
        directions = arch.effective_size
        inputs = default_rays(arch, directions)
    else:  # dimension, float32: the jet Jacobian to the degree of Prop. C.1
        order, directions = prop_c1_degree(arch) + 1, P
        inputs = default_rays(arch, P)
    if order > MAX_SERIES_ORDER:
        return f"needs series to order {order}, beyond the limit {MAX_SERIES_ORDER}"
    nbytes = graph_evaluation_bytes(order, directions, inputs, arch.tokens, max(arch.widths),
                                    arch.depth, exact=exact)
    if name == "dimension" and (options.get("method") == "numerical" or any(l.has_block_parts for l in arch.layers)):
        from symattn.analyses.dimension import ball_dimension_bytes  # the ball tier (or its fallback)

        nbytes = max(nbytes, ball_dimension_bytes(arch))
    if nbytes > limit_gib * 2**30:
        return (f"would need about {nbytes / 2**30:.1f} GiB, above --max-memory {limit_gib:g} GiB "
                "(refused as the command would; raise --max-memory to run it)")
    return None


def _canonical(arch, uses_ranks: bool) -> dict:
    out = {"depth": arch.depth, "widths": list(arch.widths),
           "ranks": list(arch.ranks) if uses_ranks else None, "tokens": arch.tokens,
           "normalizers": [str(phi.expr) for phi in arch.normalizers]}
    from symattn.analyses.conjectures import family_of

    family = family_of(arch)
    if family is not None:  # the paper's stacks keep their store keys
        out["family"] = family
    return out
