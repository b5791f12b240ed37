"""RMSNorm: ``g * y / sqrt(mean(y^2) + eps)`` over the features of each token (no shift).

PyTorch's ``nn.RMSNorm`` (and the Llama family's norm). It keeps the mean, so it declares no
normals and no mean-moving interfaces; its declared symmetry facts are the diagonal interface
``G = diag(l)`` (its gain scaled, the readers' ``G^-1``), inherited from
:meth:`~symattn.model.parts.norm.Norm.interface_directions`, and its rotation equivariance
(:attr:`RMSNorm.rotation_equivariant`: ``N(R y) = G R G^-1 N(y)``, the norm rotations of
:mod:`symattn.model.symmetry_kinds`). At width 2 its outputs fill an
annulus, not a line, so no off-diagonal ``G`` acts.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from symattn.model.parts.norm import Norm, rsqrt

__all__ = ["RMSNorm"]


class RMSNorm(Norm):
    """RMSNorm (module docstring).

    >>> part = RMSNorm()
    >>> part.parameters, part.removes_mean, part.has_shift, part.normals([Fraction(1)] * 2, None)
    (('gain',), False, False, [])
    """

    spelling = "rmsnorm"
    title = "RMSNorm"
    removes_mean = False
    has_shift = False
    torch_type = "RMSNorm"
    #: ``N(R y) = G R G^-1 N(y)`` for every rotation ``R`` (the mean square is rotation invariant)
    rotation_equivariant = True

    def build(self, b, y, params, eps, width, tag):
        inv_d = b.op(f"{tag}.1/d", "const", values=np.array([[Fraction(1, width)]], dtype=object))
        ms = b.op(f"{tag}.ms", "mul", b.op(f"{tag}.ss", "sum", b.op(f"{tag}.y2", "mul", y, y), axis=-2), inv_d)
        den = b.op(f"{tag}.den", "add", ms, b.op(f"{tag}.eps", "const", values=np.array([[eps]], dtype=object)))
        r = b.op(f"{tag}.r", "fn", den, function=rsqrt())
        return b.op(f"{tag}.out", "mul", b.op(f"{tag}.n", "mul", y, r), params["gain"])

    def reference(self, R, Y, params, eps):
        g = params["gain"]
        d, n = len(Y), len(Y[0])
        inv_d = R.number(Fraction(1, d))
        out = [[None] * n for _ in range(d)]
        for a in range(n):
            ms = R.zero()
            for i in range(d):
                ms = R.add(ms, R.mul(Y[i][a], Y[i][a]))
            r = R.fn(R.add(R.mul(ms, inv_d), R.number(eps)), rsqrt())
            for i in range(d):
                out[i][a] = R.mul(g[i][0], R.mul(Y[i][a], r))
        return out

    def torch_module(self, width, eps, gain, shift=None):
        import torch

        module = torch.nn.RMSNorm(width, eps=float(eps), dtype=torch.float64)
        with torch.no_grad():
            module.weight.copy_(torch.tensor([float(v) for v in gain], dtype=torch.float64))
        return module
