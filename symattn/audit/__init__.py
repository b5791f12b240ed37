r"""Audit the weights of a real attention model: what its function determines, and how sensitively.

Scope: stacks of self-attention layers, each the sum of one or more heads
``X -> V S_{Q K^T}(X)`` (one head per layer is the paper's model), and real
transformer encoders (``nn.TransformerEncoderLayer``: attention with biases,
LayerNorms, an MLP, pre- or post-norm residual connections, a final norm),
read from

* a NumPy ``.npz`` or a ``.safetensors`` file holding exactly the arrays
  ``Q1, K1, V1, ..., QD, KD, VD`` in the paper's convention, tokens as
  columns: ``Q_i, K_i`` of shape ``(d_{i-1}, r_i)`` and ``V_i`` of shape
  ``(d_i, d_{i-1})``, or with a leading head axis ``(H, ...)`` for a layer of
  ``H`` heads (:func:`from_arrays`); a ``.safetensors`` (or ``.npz``) file
  with other names is read as a PyTorch state dict, its ``__metadata__`` as
  the config;
* PyTorch: ``nn.MultiheadAttention`` and ``nn.TransformerEncoderLayer``
  modules, an ``nn.TransformerEncoder`` or any module containing them, read in
  module order (:func:`from_torch`), or their state dict, in memory
  (:func:`from_state_dict`) or saved as ``.pt``/``.pth`` (:func:`load_model`;
  read with ``weights_only=True``, so a pickled whole module is refused rather
  than executed), also inside a training checkpoint
  ``{"model_state_dict": ..., "config": {...}}`` (the key used is said). A
  state dict records neither ``num_heads`` nor ``norm_first`` nor the
  activation: ``--heads`` or the checkpoint's config gives them; otherwise
  PyTorch's defaults are assumed and the report warns. A decoder layer's
  cross-attention (it attends to another sequence) is refused with one line.

Every file is untrusted (:mod:`symattn.audit.importers`): sizes are checked
before anything is decompressed, object arrays are never loaded, and NaN,
inf, huge or non-real weights are refused with one line. PyTorch and
safetensors are optional (``pip install 'symattn[torch]'``) and imported only
when needed.

Convention mapping (PyTorch -> paper)
-------------------------------------
``nn.MultiheadAttention(E, num_heads=H)`` stores ``in_proj_weight = [W_q;
W_k; W_v]`` (each ``E x E``) and ``out_proj.weight = W_o``; head ``h`` uses
rows ``h e .. (h+1) e - 1`` of each (``e = E/H``, the head width). On tokens
as *rows* ``R = X^T`` (``n x E``) it computes

.. math::

    \mathrm{out} = \sum_h \mathrm{softmax}\!\Big(\frac{R W_q[h]^T (R W_k[h]^T)^T}{\sqrt{e}}\Big)
    \, R\, W_v[h]^T\, W_o[:, h]^T ,

softmax over keys (row-wise). Transposing, head ``h`` is the paper's layer
with ``Q_h = c W_q[h]^T``, ``K_h = W_k[h]^T`` (``E x e``), ``c = 1/sqrt(e)``,
and ``V_h = W_o[:, h] W_v[h]`` (``E x E``, rank ``e``): the value projection
and ``out_proj`` fold into one value map per head. Here ``phi = exp``. The
scale ``c`` is exact when ``e`` is a perfect square; otherwise the audited
model uses the binary64 rounding of ``1/sqrt(e)``, and the report says so.
The mapping is tested numerically against PyTorch's own forward, one head
and four. Biases, an encoder layer's MLP, LayerNorms and residual
connections are outside the paper's model: they are read into the data model
(:class:`~symattn.audit.model.TransformerLayer`, listed in
:attr:`ImportedModel.beyond_attention`) and analysed numerically on the model
rebuilt from ``torch.nn`` modules; the exact tiers then give only each head's
exact facts. ``bias_k``/``bias_v`` and separate ``kdim``/``vdim`` are refused
(they change the token set or are not self-attention); entries of no layer (an
embedding, a readout) are named in :attr:`ImportedModel.outside`; dropout is
not applied (eval mode). Attention masks are call-time arguments: the
audit is of unmasked self-attention, or with ``causal=True`` (``--causal``) of
the causally masked map, which is outside the paper's model (exact facts about
the weights, the numerical tiers, and the variant analyses of
:func:`symattn.audit.analysis.beyond_the_paper`, labelled "no theorem"; multi-head stacks get
the same).

What the report computes (:func:`audit`), tier by tier
------------------------------------------------------
* exact: the effective tuple ``(L, M_i)`` of eq. (3) and every head's score
  ``Q K^T`` in rationals of the binary64 weights (python-flint matrices),
  the hypotheses of Theorems 1-4 (``L != 0``, ``sym M_i != 0``,
  ``h_i'(0) != 0``, collapse loci, ranks, invertible values), and the
  effective fiber (:func:`symattn.analyses.fibers.effective_fiber`), verified by exact
  series when its estimated cost fits the budget;
* certified: ``||M_i||_F`` and ``||sym M_i||_F`` (the distance to the skew
  matrices, where every collapse locus lies) in ball arithmetic;
* predicted: the contact orders of Prop. D.1 along the model's own ray
  ``t -> (t Q, t K, V)`` where Theorem 4's hypotheses hold;
* exact, budgeted: the certified Smith spectrum along that ray
  (:func:`symattn.analyses.spectrum.native_spectrum`); the dense bank Jacobian at
  ``t = 1`` in float64 (a stable PyTorch forward) and its positive singular
  values at ``digits`` digits on the exact complement of the gauge kernel;
* numerical at any size: leading singular values of the bank Jacobian along
  the ray, matrix-free, float64 and float32 side by side with error
  estimates (:mod:`symattn.analyses.matrix_free`), and per layer the digits float64
  and float32 keep of its query/key directions at the model's scale;
* for a model with LayerNorm/MLP/bias/residual parts (:mod:`symattn.audit.modules`):
  the model rebuilt from ``torch.nn`` modules, its Jacobian spectrum in
  float64 and float32, each named module's strength and the digits each
  precision keeps of it, the declared symmetries of the blocks checked as
  kernel directions, the rank bounds they give and, where the dense Jacobian
  fits, its numerical rank and the kernel no declared symmetry explains
  (numerical; such a model gets no exact statement about its fiber: its
  non-attention parts are read but not analysed exactly, and the verdict says
  so);
* a summary line, one row per named module with pass/warn/fail and the rule
  in words (:func:`~symattn.audit.verdict.module_rows`), a plain-language verdict.

Every tier runs within ``budget`` seconds, enforced (:mod:`symattn.audit.budget`:
exact steps in a child process stopped at their share, numerical steps only
when their measured cost fits); a request whose cheapest tier exceeds
``max_memory`` is refused before anything is allocated. The report says
which tier produced each section and why a tier was skipped or stopped.

Caveats: the exact rank is the rank of ``J(t)`` over the field of Laurent
series, i.e. at all but finitely many ``t``; that ``t = 1`` is not one of the
exceptions is shown (numerically) by the high-precision singular values. The
dense tier's bank is the seeded rational bank of
:func:`symattn.model.parameters.random_bank` (entries in ``[-4, 4]``); the matrix-free
tier uses N(0, 1) tokens (the scale of LayerNorm outputs). Neither is the
model's training data: singular values depend on the bank. The paper's
theorems are about single-head layers: for several heads the report gives
each head's exact facts and the numerical tiers, and says that the fiber
is not decided.

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
