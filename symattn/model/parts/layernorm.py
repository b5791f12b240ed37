"""LayerNorm: ``g * (y - mean y) / sqrt(var y + eps) + s`` over the features of each token.

``var`` is the biased variance (PyTorch's ``nn.LayerNorm``). It removes the mean, so its outputs
satisfy ``w^T y = c`` with ``w = 1/g``, ``c = w^T s`` (:meth:`LayerNorm.normals`), and at width 2 its
centred output is ``sigma (1, -1)``: every output lies on a line, so every ``G`` in ``GL(2)`` maps
it to another LayerNorm's output (:meth:`LayerNorm.interface_directions`). The symmetries that
rest on these facts are declared in :mod:`symattn.model.symmetry_kinds`, gated by the properties.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from symattn.model.parts.norm import Norm, rsqrt, _unit

__all__ = ["LayerNorm"]


class LayerNorm(Norm):
    """LayerNorm (module docstring).

    >>> part = LayerNorm()
    >>> part.parameters, part.removes_mean, part.has_shift
    (('gain', 'shift'), True, True)
    >>> part.normals([Fraction(2), Fraction(-1)], [Fraction(1), Fraction(3)])[0][1]
    Fraction(-5, 2)
    """

    spelling = "layernorm"
    title = "LayerNorm"
    removes_mean = True
    has_shift = True
    torch_type = "LayerNorm"

    def build(self, b, y, params, eps, width, tag):
        inv_d = b.op(f"{tag}.1/d", "const", values=np.array([[Fraction(1, width)]], dtype=object))
        mean = b.op(f"{tag}.mean", "mul", b.op(f"{tag}.sum", "sum", y, axis=-2), inv_d)
        c = b.op(f"{tag}.c", "sub", y, mean)
        var = b.op(f"{tag}.var", "mul", b.op(f"{tag}.ss", "sum", b.op(f"{tag}.c2", "mul", c, c), axis=-2), inv_d)
        den = b.op(f"{tag}.den", "add", var, b.op(f"{tag}.eps", "const", values=np.array([[eps]], dtype=object)))
        r = b.op(f"{tag}.r", "fn", den, function=rsqrt())
        return b.op(f"{tag}.out", "add", b.op(f"{tag}.gn", "mul", b.op(f"{tag}.n", "mul", c, r), params["gain"]),
                    params["shift"])

    def reference(self, R, Y, params, eps):
        g, s = params["gain"], params["shift"]
        d, n = len(Y), len(Y[0])
        inv_d = R.number(Fraction(1, d))
        out = [[None] * n for _ in range(d)]
        for a in range(n):
            total = R.zero()
            for i in range(d):
                total = R.add(total, Y[i][a])
            mean = R.mul(total, inv_d)
            c = [R.sub(Y[i][a], mean) for i in range(d)]
            var = R.zero()
            for i in range(d):
                var = R.add(var, R.mul(c[i], c[i]))
            r = R.fn(R.add(R.mul(var, inv_d), R.number(eps)), rsqrt())
            for i in range(d):
                out[i][a] = R.add(R.mul(g[i][0], R.mul(c[i], r)), s[i][0])
        return out

    def normals(self, gain, shift):
        """``(w, c)`` with ``w^T y = c`` for every output ``y = g * xhat + s`` (``1^T xhat = 0``): the one
        normal ``w = 1/g``, ``c = w^T s``, or where gains vanish the unit vectors of those features
        (``y_k = s_k`` there)."""
        zeros = [k for k, v in enumerate(gain) if v == 0]
        if zeros:
            return [(np.array([Fraction(int(j == k)) for j in range(len(gain))], dtype=object), shift[k])
                    for k in zeros]
        w = np.array([1 / v for v in gain], dtype=object)
        return [(w, sum((a * b for a, b in zip(shift, w)), Fraction(0)))]

    def interface_directions(self, width, kind="gl"):
        """``"gl"``: every ``E_kk`` and, at width 2 (outputs on a line), ``E_01, E_10``; ``"mean"``
        (width 2): ``1 e_k^T``, which moves every output by a multiple of ``1``."""
        if kind == "mean":
            return [_unit(width, 0, k) + _unit(width, 1, k) for k in range(2)] if width == 2 else []
        return super().interface_directions(width) + ([_unit(width, 0, 1), _unit(width, 1, 0)] if width == 2 else [])

    def torch_module(self, width, eps, gain, shift=None):
        import torch

        module = torch.nn.LayerNorm(width, eps=float(eps), dtype=torch.float64)
        with torch.no_grad():
            module.weight.copy_(torch.tensor([float(v) for v in gain], dtype=torch.float64))
            module.bias.copy_(torch.tensor([float(v) for v in shift], dtype=torch.float64))
        return module
