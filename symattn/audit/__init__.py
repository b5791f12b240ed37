r"""Audit the weights of a real attention model: what its function determines, and how sensitively.

The paper's identifiability question, asked of a trained model. The audit reads
stacks of (multi-head) self-attention layers and real transformer encoders from
``.npz``, ``.safetensors`` or PyTorch files (:func:`load_model`, every file untrusted
and checked before it is decompressed), or from PyTorch modules in memory
(:func:`from_torch`, :func:`from_state_dict`, :func:`from_arrays`); it maps
PyTorch's convention onto the paper's (each head's value and output projection fold
into one value map) and reports (:func:`audit`) tier by tier: exact facts about the
effective tuple and the theorems' hypotheses, certified norms, the predicted and
certified contact spectrum, and numerical singular values at any size, each tier
within an enforced time ``budget``. Parts beyond the paper's model (biases,
LayerNorm, MLPs, residuals, a causal mask) are read and analysed numerically, and
labelled so. The page *What the audit reads and computes* of the documentation
(``docs/audit_reference.rst``) has the file formats, the convention mapping, the
tiers and the caveats.

Examples
--------
The shipped example (``examples/example_model.npz``, written by
``examples/make_example_model.py`` from NumPy seed 2026):

>>> from pathlib import Path
>>> example = Path(__file__).resolve().parents[2] / "examples" / "example_model.npz"
>>> report = audit(load_model(example), matrix_free=False, budget=600)
>>> report.fiber.fiber, report.fiber.verified
('singleton', True)
>>> [(b.order, b.multiplicity) for b in report.spectrum.bands], report.spectrum.kernel
([(0, 16), (1, 12), (5, 12), (17, 12)], 44)
>>> report.ranks["exact"], report.ranks["float64_numerical"]
(52, 51)
>>> print(report.verdict)                                   # doctest: +NORMALIZE_WHITESPACE
The function determines L and M_1..M_3 exactly (Theorem 1, verified exactly). It
cannot determine the query/key factorization (12 directions Q_i B, K_i B^-T) or
the intermediate value maps (32 directions): 44 native directions are exact
zeros of the Jacobian. Of the 52 identifiable directions (exact rank), 1 fall
below the numerical-rank cutoff 1e-10 sigma_1 on this bank at the model's own
scale, and 0 below float64 resolution (eps sigma_1): float64 reports rank 51, 1
short of the exact rank. Along the model's own ray t (Q, K) the identifiable
query/key directions weaken like t^1 (12 directions of layer 1), t^5 (12
directions of layer 2), t^17 (12 directions of layer 3) as t -> 0: near
collapse, halving the query/key scale divides layer 3's singular values by about
2^17 = 131072.

The command line prints the whole report (``symattn audit FILE``), or
``--json`` with the keys of :meth:`Audit.to_json`, and ``--plot FILE.png``
draws the singular values; several files (training checkpoints) are
audited side by side (:func:`~symattn.audit.report.format_along`).
"""

from symattn.audit.analysis import audit, estimate_work
from symattn.audit.importers import (Head, ImportedModel, from_arrays, from_state_dict, from_torch, load_inputs,
                                     load_model)
from symattn.audit.report import format_report, plot_report
from symattn.audit.result import CUTOFF, Audit

__all__ = [
    "Head", "ImportedModel", "Audit", "from_arrays", "from_torch", "from_state_dict",
    "load_model", "load_inputs", "audit", "estimate_work", "format_report", "plot_report", "CUTOFF",
]
