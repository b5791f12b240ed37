"""RMSNorm, the part added by the one-module route (issue 38): its own facts beyond the part contract
(``tests/test_parts.py`` runs that on every registered part, RMSNorm included)."""

from __future__ import annotations

import numpy as np
import pytest

from symattn.analyses.spectrum import native_spectrum
from symattn.model.architecture import Architecture


@pytest.mark.parametrize("placement", ["post", "pre"])
def test_rmsnorm_spectrum_is_certified_with_no_gap(placement):
    arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value", norm=placement, norm_kind="rmsnorm", eps="1/10")
    s = native_spectrum(arch, method="constants")
    assert (s.certificate, s.undecided) == ("certified", 0)
    assert s.rank + s.kernel == s.parameters
    # no shift, so no shift blocks; its declared symmetries never include the mean-removing kinds
    assert not any(b.part.endswith(".shift") for b in arch.blocks if b.role == "N")
    assert not {"LayerNorm shift", "LayerNorm normal", "LayerNorm normal shift"} & set(s.kernel_kinds)


def test_rmsnorm_gain_interface_inside_a_pre_norm_layer():
    """A pre-norm RMSNorm feeds only its heads: its gain scaled by G = diag(l), the heads' Q, K, V by G^-1."""
    from symattn.analyses.contact import setup

    arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value", norm="pre", norm_kind="rmsnorm", eps="1/10")
    s = setup(arch, 0, "identity", "constants", None, lambda msg: None)
    kinds = [sym.kind for sym in s.kernel.symmetries]
    assert kinds.count("LayerNorm interface") == 2  # diagonal only: RMSNorm outputs fill an annulus, not a line


def test_rmsnorm_is_not_layernorm():
    """The same stack with LayerNorm computes another function (the audit's 'RMSNorm read as LayerNorm')."""
    from symattn.core.algebras import Float64
    from symattn.model.interpreter import evaluate
    from symattn.model.network import native_network
    from symattn.model.parameters import random_point

    outs = []
    for kind in ("rmsnorm", "layernorm"):
        arch = Architecture.uniform(1, 3, 1, 3, "exp", skip="value", norm="post", norm_kind=kind)
        theta = {k: v for k, v in random_point(arch, seed=1).items() if not k.startswith("attn_norm.shift")}
        if kind == "layernorm":
            theta.update({"attn_norm.shift1": np.zeros((3, 1), dtype=object)})
        A = Float64()
        X = np.random.default_rng(0).normal(size=(3, 3))
        vals = {"X": A.const(X), **{k: A.const(np.vectorize(float)(v)) for k, v in theta.items()}}
        outs.append(np.asarray(evaluate(native_network(arch), A, vals)["F"], dtype=float))
    assert not np.allclose(outs[0], outs[1])
    assert "RMSNorm" in Architecture.uniform(1, 2, 1, 3, norm="post", norm_kind="rmsnorm").describe()
