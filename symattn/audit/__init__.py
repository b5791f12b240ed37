r"""Audit the weights of a real attention stack: what its function determines, and how sensitively.

Scope: a stack of single-head, bias-free self-attention layers, read from

* a NumPy ``.npz`` file holding exactly the arrays ``Q1, K1, V1, Q2, K2, V2,
  ..., QD, KD, VD`` (no other keys) in the paper's convention, tokens as
  columns: ``Q_i, K_i`` of shape ``(d_{i-1}, r_i)`` and ``V_i`` of shape
  ``(d_i, d_{i-1})``; the native layer is ``X -> V_i S_{Q_i K_i^T}(X)``
  (:func:`from_arrays`);
* PyTorch: a sequence (e.g. ``nn.ModuleList``) of ``torch.nn.MultiheadAttention``
  modules (:func:`from_torch`), or a state dict of such a list, in memory
  (:func:`from_state_dict`) or saved with ``torch.save(model.state_dict(), path)``
  as ``.pt``/``.pth`` (:func:`load_model`; read with ``weights_only=True``,
  so a pickled whole module is refused rather than executed).

PyTorch is optional (``pip install torch==2.13.0``) and imported only when a
PyTorch object or file is read.

Convention mapping (PyTorch -> paper)
-------------------------------------
``nn.MultiheadAttention(E, num_heads=1, bias=False)`` stores
``in_proj_weight = [W_q; W_k; W_v]`` (each ``E x E``) and
``out_proj.weight = W_o``. On tokens as *rows* ``R = X^T`` (``n x E``) it computes

.. math::

    q = R W_q^T,\quad k = R W_k^T,\quad v = R W_v^T,\quad
    \mathrm{out} = \mathrm{softmax}\!\Big(\frac{q k^T}{\sqrt{E}}\Big)\, v\, W_o^T ,

softmax over keys (row-wise). Entry ``(a, b)`` of the score is
``x_a^T W_q^T W_k x_b / sqrt(E)``, so the score matrix is
``A = Q K^T`` with ``Q = c W_q^T``, ``K = W_k^T`` and ``c = 1/sqrt(E)``
(the head width is ``E`` with one head, so ``r = d = E``). Transposing the output,
``out^T = W_o W_v X A'^T`` where ``A'`` is the row-normalised attention, i.e.
``out^T = V S_A(X)`` with ``V = W_o W_v``: the value projection and
``out_proj`` fold into one value map. Here ``phi = exp``. The scale ``c`` is
exact when ``E`` is a perfect square; otherwise the audited model uses the
binary64 rounding of ``1/sqrt(E)`` (a relative change below ``2^-53``), and
the report says so. The mapping is tested numerically: the native network in
:class:`~symattn.algebras.Float64` reproduces the PyTorch module's float64
output to about ``1e-12``.

Not covered (refused with a message): biases (``in_proj_bias``,
``out_proj.bias``, ``bias_k``/``bias_v``), ``add_zero_attn``, more than one
head, ``kdim``/``vdim`` different from ``embed_dim`` (separate
``q/k/v_proj_weight``), dropout > 0, layers that are not
``MultiheadAttention``, and stacks whose widths do not chain. Attention
masks are call-time arguments: no file carries them, and the audit is of
the *unmasked* self-attention map ``x -> attn(x, x, x)``. A state dict does
not record ``num_heads`` or dropout: they are taken as 1 and 0 and the report
lists that assumption.

What the report computes (:func:`audit`)
----------------------------------------
* the effective tuple ``(L, M_i)`` of eq. (3) in exact rationals of the
  binary64 weights (``Fraction(float)`` is exact);
* the hypotheses of Theorems 1-4, each decided exactly (rational arithmetic):
  ``L != 0``, ``sym M_i != 0``, ``h_i'(0) != 0``, ``M_i`` in the collapse
  locus ``Z_i`` (:func:`symattn.fibers.collapse_locus`), common first degree
  ``k``, equal widths, ``r_i <= d``, full column rank of ``Q_i, K_i``,
  ``sym(Q_i K_i^T) != 0``, invertible ``V_i``;
* the effective fiber (:func:`symattn.fibers.effective_fiber`, verified by
  exact series and symbolic identities);
* distances to the collapse loci and to the degenerate factor ranks
  (numerical, float64): ``||sym M_i||_F``, ``||M_i||_F``, smallest singular
  values of ``Q_i, K_i, V_i``;
* the contact spectrum along the model's own ray ``t -> (t Q, t K, V)``
  (:func:`symattn.spectrum.native_spectrum` with ``path = (Q, K, V)`` the
  model's weights as exact rationals; Theorem 4 is stated with ``V_i = I``,
  and an invertible ``V`` is carried to it by the interface gauge, which is
  constant in ``t``). It needs equal widths and invertible values; otherwise
  the report says why it is not computed;
* at ``t = 1`` (the model itself): the singular values of the bank Jacobian in
  all native entries in float64 and at ``digits`` digits (python-flint balls,
  :func:`symattn.numerics.positive_singular_values` on the exact complement of
  the gauge kernel), the float64 numerical rank under the cutoff
  ``1e-10 sigma_1`` against the exact rank ``parameters - kernel``;
* a plain-language verdict.

Caveats: the exact rank is the rank of ``J(t)`` over the field of Laurent
series, i.e. at all but finitely many ``t``; that ``t = 1`` is not one of the
exceptions is shown (numerically) by the high-precision singular values. The
bank is the seeded rational bank of :func:`symattn.model.random_bank`
(entries in ``[-4, 4]``), not the model's training data: singular values
depend on it. Theorem 3's degree is reported from its formula (Prop. C.1)
once its hypotheses are checked, not recomputed here.

Examples
--------
The shipped example (``examples/example_model.npz``, written by
``examples/make_example_model.py`` from NumPy seed 2026):

>>> from pathlib import Path
>>> example = Path(__file__).resolve().parents[2] / "examples" / "example_model.npz"
>>> report = audit(load_model(example))
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
draws the float64 and 50-digit singular values against the cutoff.
"""

from .analysis import CUTOFF, Audit, audit
from .importers import ImportedModel, from_arrays, from_state_dict, from_torch, load_model

__all__ = [
    "ImportedModel", "Audit", "from_arrays", "from_torch", "from_state_dict", "load_model",
    "audit", "CUTOFF",
]
