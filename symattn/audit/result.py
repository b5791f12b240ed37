"""The result of an audit: the :class:`Audit` record, its JSON, and what each tier label means.

Built by :func:`symattn.audit.analysis.audit`; printed and drawn by
:mod:`symattn.audit.report` (which imports this module, never the other way round).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from symattn.render.rich_result import RichResult
from symattn.analyses.fibers import Fiber
from symattn.analyses.spectrum import Spectrum
from symattn.audit.model import ImportedModel
from symattn.model.parameters import EffectiveParams

__all__ = ["Audit", "CUTOFF", "FLOAT64_EPS", "FLOAT32_EPS", "TIERS", "DEFAULT_BUDGET", "DEFAULT_MAX_MEMORY",
           "PRINT_LIMIT", "DENSE_LIMIT"]

#: The relative cutoff of the numerical rank (App. F.2): ``sigma > CUTOFF * sigma_1``.
CUTOFF = 1e-10

#: The unit roundoff of binary64 (``2^-52``) and of binary32 (``2^-23``).
FLOAT64_EPS = float(np.finfo(np.float64).eps)
FLOAT32_EPS = float(np.finfo(np.float32).eps)

#: Seconds the whole analysis may take, enforced (``--budget``).
DEFAULT_BUDGET = 60.0

#: Bytes any one tier may allocate (``--max-memory``).
DEFAULT_MAX_MEMORY = 2 * 2 ** 30

#: Widths up to which the effective matrices are kept as Fraction arrays (printed, JSON).
PRINT_LIMIT = 16

#: What each tier label means.
TIERS = {
    "exact": "exact rational arithmetic on the binary64 weights",
    "certified": "ball arithmetic: the true value lies in the stated interval",
    "predicted": "the paper's formula, its hypotheses checked exactly",
    "numerical float64": "floating point, binary64, with the stated error estimate",
    "numerical float32": "floating point, binary32, with the stated error estimate",
    "numerical high precision": "ball arithmetic at the stated digits, reported as numerical",
    "skipped": "not computed (the reason is given)",
}

#: Native parameters up to which the dense float64 Jacobian and its SVD are computed.
DENSE_LIMIT = 2048

# seconds per unit of the cost models below, measured on a 2-core machine (benchmarks page)
_SPECTRUM_SECONDS = 1.6    # certified Smith spectrum, P = 96, depth 3
_FIBER_SECONDS = 0.01      # per d^2 per layer, the fiber's exact verification
_HP_SECONDS = 1.6          # Jacobian and singular values at 50 digits, P = 96, depth 3
_KERNEL_SECONDS = 0.16     # exact gauge kernel and its integer complement, P = 96


@dataclass(repr=False)
class Audit(RichResult):
    """The audit report of one model (see :meth:`to_json` for the keys).

    Attributes
    ----------
    model : ImportedModel
    effective : EffectiveParams or None
        ``(L, M_1..M_D)`` as Fraction arrays (single-head stacks of width
        at most :data:`PRINT_LIMIT`; larger ones are summarised in ``heads``).
    hypotheses : list of dict
        ``theorem``, ``name``, ``holds`` (True, False, or None = not decided
        by the theorem), ``detail``; all exact.
    fiber : Fiber or None
        :func:`symattn.analyses.fibers.effective_fiber` (single-head stacks);
        verified exactly when the budget allows.
    distances : dict
        Certified Frobenius norms of ``L``, ``M_i``, ``sym M_i`` and float64
        smallest singular values of the factors, per layer.
    spectrum : Spectrum or None
        The certified contact spectrum along the model's own ray.
    spectrum_note : str or None
        Why it was not computed.
    kernel : dict
        Gauge counts: ``factor_gauges``, ``interface``, ``rank`` of their span
        (exact where computed, else the count the theorems give).
    singular_values : dict
        Dense tier at ``t = 1``: ``float64`` (all ``P``), ``high_precision``
        (positive ones, on the exact complement of the gauge kernel), ``digits``.
    ranks : dict
        ``parameters``, ``kernel``, ``exact``, ``exact_kind``,
        ``float64_numerical``, ``high_precision_numerical``, ``below_cutoff``,
        ``below_float64_eps`` (None where a tier did not run).
    verdict : str
        The plain-language answer.
    heads : list of dict
        Per layer and head: exact facts on the score ``Q K^T`` and certified norms.
    predicted : list of dict
        Per layer, the contact order Prop. D.1 predicts along the model's ray.
    matrix_free : dict or None
        :func:`symattn.analyses.matrix_free.ray_spectra` (float64 and float32).
    sensitivity : list of dict
        Per layer: the strength of its query/key directions relative to
        ``sigma_1`` at the model's scale and the digits float64/float32 keep.
    tiers : dict
        Which tier produced each section, and why a tier was skipped.
    work : dict
        The cost estimates and the budget.
    """

    model: ImportedModel
    effective: EffectiveParams | None
    hypotheses: list
    fiber: Fiber | None
    distances: dict
    spectrum: Spectrum | None
    spectrum_note: str | None
    kernel: dict
    singular_values: dict
    ranks: dict
    verdict: str = ""
    heads: list = field(default_factory=list)
    predicted: list = field(default_factory=list)
    matrix_free: dict | None = None
    sensitivity: list = field(default_factory=list)
    tiers: dict = field(default_factory=dict)
    work: dict = field(default_factory=dict)
    #: multi-head or causal models: :func:`symattn.audit.analysis.beyond_the_paper`
    variants: dict | None = None
    #: PyTorch models: :func:`symattn.audit.modules.module_tier` (spectrum, modules, dimension)
    modules: dict | None = None
    #: models with block parts: :func:`symattn.audit.certified.certified_tier` (graph check, rank bounds)
    certified: dict | None = None
    #: one row per named module with its status (:func:`symattn.audit.verdict.module_rows`)
    rows: list = field(default_factory=list)
    #: the summary line (:func:`symattn.audit.verdict.summary`)
    summary: str = ""
    #: models with blocks: :func:`symattn.audit.forward.forward_check` (the reading against the file's own model)
    forward: dict | None = None

    def _headline(self) -> str:
        m, r = self.model, self.ranks
        return (f"{m.source}: D = {m.depth}, widths {list(m.widths)}, n = {m.tokens}; rank {r.get('exact')} of "
                f"{r.get('parameters')} ({r.get('exact_kind')}), float64 {r.get('float64_numerical')}; "
                f"{self.verdict}")

    def _summary(self) -> tuple[str, list[tuple[str, str]]]:
        m, r = self.model, self.ranks
        rows = [("model", f"{m.source} ({m.kind}): $D = {m.depth}$, widths {list(m.widths)}, heads {list(m.heads)}, "
                          f"$n = {m.tokens}$"),
                ("verdict", self.verdict),
                ("rank", f"{r.get('exact')} of {r.get('parameters')} parameters ({r.get('exact_kind')}); kernel "
                         f"{r.get('kernel')}"),
                ("numerical ranks", f"float64 {r.get('float64_numerical')}, high precision "
                                    f"{r.get('high_precision_numerical')}"),
                ("fiber", "not computed" if self.fiber is None else f"{self.fiber.fiber} ({self.fiber.status})"),
                ("spectrum", self.spectrum_note or "not computed" if self.spectrum is None
                 else repr(self.spectrum)[1:-1])]
        return "Audit of a trained model", rows

    def to_json(self) -> dict:
        """JSON keys: ``source``, ``format``, ``architecture``, ``notes``, ``outside``,
        ``effective``, ``heads``, ``hypotheses``, ``fiber``, ``distances``,
        ``predicted``, ``spectrum``, ``spectrum_note``, ``kernel``,
        ``singular_values``, ``ranks``, ``matrix_free``, ``sensitivity``,
        ``verdict``, ``tiers``, ``work``, ``variants``, ``modules`` (the numerical tiers on
        PyTorch's own modules), ``certified`` (the certified tier on the model's own layer kinds),
        ``rows`` (one per named module, with its status), ``summary``,
        ``blocks`` (the layers as read), ``beyond_attention``, ``kinds``, ``forward`` (the
        forward check against the file's own model), ``assumed`` (properties the file does not
        record), ``hugging_face`` (a folder's config as read)."""
        m = self.model
        return {
            "source": m.source, "format": m.kind,
            "architecture": {"widths": list(m.widths), "heads": list(m.heads),
                             "ranks": [layer[0].q.shape[1] for layer in m.layers],
                             "tokens": m.tokens, "depth": m.depth,
                             "normalizers": [str(phi.expr) for phi in m.normalizers],
                             "parameters": m.parameters},
            "notes": list(m.notes), "outside": list(m.outside),
            "effective": None if self.effective is None else
            {k: [[str(v) for v in row] for row in mat] for k, mat in self.effective.as_dict().items()},
            "heads": self.heads,
            "hypotheses": self.hypotheses,
            "fiber": None if self.fiber is None else self.fiber.to_json(),
            "distances": self.distances,
            "predicted": self.predicted,
            "spectrum": None if self.spectrum is None else self.spectrum.to_json(),
            "spectrum_note": self.spectrum_note,
            "kernel": self.kernel,
            "singular_values": self.singular_values,
            "ranks": self.ranks,
            "matrix_free": self.matrix_free,
            "sensitivity": self.sensitivity,
            "verdict": self.verdict,
            "tiers": self.tiers,
            "work": self.work,
            "variants": self.variants,
            "modules": None if self.modules is None else
            dict(self.modules, modules=[{k: v for k, v in m.items()} for m in self.modules["modules"]]),
            "certified": self.certified,
            "rows": self.rows,
            "summary": self.summary,
            "blocks": [{"name": b.name, "kind": b.kind, "heads": b.attention.heads,
                        "heads_from": b.attention.heads_from,
                        "norm_first": b.norm_first, "placement_from": b.placement_from,
                        "mlp": None if b.mlp is None else {"width": int(b.mlp.w1.shape[0]),
                                                           "activation": b.mlp.activation},
                        "norms": [n.name for n in b.norms],
                        "biases": b.attention.in_proj_bias is not None} for b in m.transformer_layers],
            "beyond_attention": m.beyond_attention,
            "kinds": TIERS,
            "forward": self.forward,
            "assumed": m.assumptions,
            "hugging_face": None if m.hf is None else {k: v for k, v in m.hf.items() if k != "parts"},
        }



