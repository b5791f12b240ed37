"""The variant analyses of an audit: multi-head layers and causal masks.

Scope: an imported model with several heads per layer, or audited with a
causal mask (``--causal``), is outside the paper's hypotheses. Instead of
refusing, :func:`variant_analyses` describes it as a
:class:`~symattn.model.variants.VariantArchitecture` (summed heads with their own
``V_h = W_o[:, h] W_v[h]``, ``mask = causal``) at the model's own exact weights
and runs the variant analyses on it:

* the contact spectrum along the model's own ray ``t -> (t Q, t K, V)``
  (:func:`symattn.analyses.spectrum.native_spectrum` with ``path``);
* the dimension bounds at the model's point
  (:func:`symattn.analyses.dimension.neuromanifold_dimension`): the rank of the jet
  Jacobian there (lower bound) and ``P`` minus the declared symmetries (upper
  bound), the head permutation group, a gap reported;
* the fiber where meaningful: a causal single-head stack has an effective
  masked map (the reduction holds because a mask acts on token indices), so
  :func:`symattn.analyses.fibers.fiber` tests its tuple; with several
  heads, the local certificate is the rank at the model's point reaching the
  upper bound (the fiber is locally the orbit of the declared symmetries, up to
  the finite head permutations).

Every result is labelled :data:`~symattn.model.variants.NO_THEOREM` and carries
``theorem: None``. Each analysis starts only while the remaining budget lasts
(checked before it starts, not estimated: one analysis of a stack at
:data:`VARIANT_PARAMETER_LIMIT` parameters takes up to about a minute on 2
cores). A model's binary64 weights give rational relations too tall for the
two-prime reconstruction of the spectrum's certificate, so its orders are
usually reported as modular upper bounds (``certificate: none``), said so.
"""

from __future__ import annotations

import time

from symattn.core.errors import SymattnError
from symattn.model.architecture import Architecture
from symattn.model.parameters import reduction
from symattn.model.architecture import Architecture as VariantArchitecture
from symattn.theorems.statements import NO_THEOREM
from symattn.audit.importers import ImportedModel, rational_array

__all__ = ["variant_architecture", "variant_point", "variant_analyses", "VARIANT_PARAMETER_LIMIT"]

#: Native parameters up to which the exact variant analyses run in an audit.
VARIANT_PARAMETER_LIMIT = 160


def variant_architecture(model: ImportedModel, causal: bool) -> VariantArchitecture:
    """The model as a variant stack (equal widths): summed heads, causal mask if asked."""
    base = Architecture(model.widths, tuple(layer[0].q.shape[1] for layer in model.layers), model.tokens,
                        model.normalizers)
    layers = tuple(part.with_kind(mask="causal" if causal else "none", heads=len(layer),
                                  head_ranks=tuple(h.q.shape[1] for h in layer) if len(layer) > 1 else None)
                   for part, layer in zip(base.layers, model.layers))
    return VariantArchitecture(layers=layers, tokens=base.tokens)


def variant_point(arch: VariantArchitecture, model: ImportedModel) -> dict:
    """The model's exact weights as native blocks ``Q{i}{suffix}``, ``K...``, ``V...``."""
    out = {}
    for i, layer in enumerate(model.exact_heads, 1):
        for suffix, (q, k, v) in zip(arch.head_names(i), layer):
            out[f"Q{i}{suffix}"], out[f"K{i}{suffix}"], out[f"V{i}{suffix}"] = (
                rational_array(q), rational_array(k), rational_array(v))
    return out


def variant_analyses(model: ImportedModel, causal: bool, seed: int, seconds_left: float) -> dict:
    """Spectrum, dimension and fiber of a multi-head or causal model (module docstring).

    Returns a dict with ``label``, ``theorem`` (None), ``architecture``,
    ``spectrum``, ``dimension``, ``fiber`` (each a JSON dict or None) and
    ``notes`` (why an analysis did not run).
    """
    from symattn.analyses.dimension import neuromanifold_dimension
    from symattn.analyses.fibers import fiber
    from symattn.analyses.spectrum import native_spectrum

    out = {"label": NO_THEOREM, "theorem": None, "architecture": None, "spectrum": None,
           "dimension": None, "fiber": None, "notes": []}
    if len(set(model.widths)) != 1:
        out["notes"].append(f"not computed: the variant analyses need equal widths; this stack has "
                            f"{list(model.widths)}")
        return out
    if model.parameters > VARIANT_PARAMETER_LIMIT:
        out["notes"].append(f"not computed: {model.parameters} native parameters, beyond the exact "
                            f"variant analyses' limit {VARIANT_PARAMETER_LIMIT} in an audit (use "
                            f"symattn variant on a smaller stack)")
        return out
    start = time.perf_counter()
    arch = variant_architecture(model, causal)
    point = variant_point(arch, model)
    out["architecture"] = arch.describe()
    steps = [("spectrum", lambda: native_spectrum(arch, seed=seed, path=point).to_json()),
             ("dimension", lambda: neuromanifold_dimension(arch, seed=seed, point=point).to_json())]
    if all(len(k.heads) == 1 for k in arch.layers):  # causal single-head: the effective masked map
        eta = reduction(model.theta)
        steps.append(("fiber", lambda: fiber(arch, eta.L, [[m] for m in eta.M], seed=seed).to_json()))
    for name, run in steps:
        if time.perf_counter() - start > seconds_left:
            out["notes"].append(f"{name} not computed: beyond the remaining budget (--budget SECONDS)")
            continue
        try:
            out[name] = run()
        except SymattnError as exc:  # e.g. dependent symmetries at the model's point
            out["notes"].append(f"{name} not computed: {exc}")
    dim = out["dimension"]
    if out["fiber"] is None and dim is not None:
        local = dim["lower_bound"] == dim["upper_bound"]
        out["fiber"] = {
            "fiber": "locally-determined" if local else "undecided", "determined": local,
            "theorem": None,
            "sentence": (f"At the model's weights the jet Jacobian has rank {dim['lower_bound']} = P - rank of "
                         f"the declared symmetries {dim['symmetries']}: the weights are determined near this "
                         "point up to those symmetries and the head permutations (computed local "
                         "certificate)." if local else
                         f"At the model's weights the jet Jacobian has rank {dim['lower_bound']} < "
                         f"{dim['upper_bound']} = P - rank of the declared symmetries: nothing is claimed "
                         "determined.")}
    return out
