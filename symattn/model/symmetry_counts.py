r"""How many directions each symmetry kind declares, in closed form from the architecture alone.

A second path beside the declarations of :mod:`symattn.model.symmetries` and
:mod:`symattn.model.symmetry_kinds`: every count here is derived from the layers' parts (widths, heads,
ranks, skips, norms, biases, MLPs, activations), never from the declared vectors, and
:func:`check_counts` compares the two (issue 42, item 1: a kind that declares fewer or more directions than
its formula fails ``symattn prove`` and the user's ``symattn dimension``).

Each count is labelled:

* ``exact``: the kind declares that many independent directions at every point;
* ``generic``: at a generic point (a generic rank: a null space of the queries, an invertible value map,
  or a kind kept only where independent of the others, :data:`~symattn.model.symmetry_kinds.WHERE_INDEPENDENT`).
  At a special point the declared count may be smaller; the seeded points of the analyses are generic.

Where no formula is derived (a LayerNorm at width 1; the polynomial redundancy of an MLP of degree other
than 2, behind a norm, or wider than 3) the count is None: not compared. The table of formulas and their reasons is in ``docs/theory.rst`` ("Counting the declared
symmetries").
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import comb
from typing import Callable

from symattn.core.errors import CheckFailed
from symattn.model.architecture import Architecture

__all__ = ["Count", "COUNTS", "kind_counts", "check_counts"]


@dataclass(frozen=True)
class Count:
    """The closed-form count of one kind: ``value`` directions, ``label`` ``"exact"`` or ``"generic"``."""

    value: int
    label: str


def _exact(n: int) -> Count:
    return Count(n, "exact")


def _generic(n: int) -> Count:
    return Count(n, "generic")


def _layers(arch: Architecture):
    return list(enumerate(arch.layers, 1))


def _value_width(layer, head) -> int:
    return head.value_width or layer.width_in


def _has_values(layer) -> bool:
    return layer.has_values


def _concat(layer) -> bool:
    return layer.combine_part.has_output_projection


def _mean_norm(layer) -> bool:
    return layer.has_norm and layer.norm_part.removes_mean


def _gl_interface(layer, width: int) -> int:
    """``G`` that map every output of the norm to another output of it: the diagonal ``l`` (the gain and
    shift scaled), and at width 2 for a mean-removing norm (outputs on a line) all of ``gl(2)``."""
    return width * width if _mean_norm(layer) and width == 2 else width


def _mean_interface(layer, width: int) -> int:
    """``G = I + 1 h^T`` (moves every output by a multiple of ``1``, removed by a following mean-removing
    norm), which keeps the outputs of a mean-removing norm on their line only at width 2."""
    return width if _mean_norm(layer) and width == 2 else 0


def factor_gauge(arch: Architecture) -> Count:
    """``sum_h r_h^2``: ``(Q_h B, K_h B^-T)`` leaves ``Q_h K_h^T`` unchanged, ``B`` in ``GL(r_h)`` (eq. 4)."""
    return _exact(sum(h.rank ** 2 for layer in arch.layers for h in layer.heads))


def value_gauge(arch: Architecture) -> Count:
    """``sum_h d_v^2`` over concatenated heads: ``(C V_h, O_h C^-1)`` leaves ``O_h V_h`` unchanged."""
    return _exact(sum(layer.combine_part.value_gauge_dimension(_value_width(layer, h)) for layer in arch.layers
                      for h in layer.heads))


def _interfaces(arch: Architecture) -> list[int]:
    """The layers ``j`` at whose output ``GL(d_j)`` acts: no skip on either side, no norm in layer ``j``,
    no pre-norm in layer ``j + 1`` (``S_A(G X) = G S_{G^T A G}(X)``; a skip breaks the equivariance)."""
    return [j for j in range(1, arch.depth) if not arch.layers[j - 1].residual and not arch.layers[j].residual
            and not arch.layers[j - 1].has_norm and not arch.layers[j].pre_norm]


def interface(arch: Architecture) -> Count:
    """``d_j^2`` per interface (App. F.2)."""
    return _exact(sum(arch.widths[j] ** 2 for j in _interfaces(arch)))


def interface_shift(arch: Architecture) -> Count:
    """``d_j - min(d_j, sum_h r_h)`` per interface after an MLP read by summed softmax heads whose values'
    shift can be taken back (each head's ``bV``, or the next MLP's ``fa``): the MLP's ``fb`` moved by ``h``
    with ``Q_h^T h = 0`` for every head (the null space of the stacked queries, of generic dimension
    ``d - sum r_h``); the keys' shift cancels in the softmax."""
    total = 0
    for j in _interfaces(arch):
        before, after = arch.layers[j - 1], arch.layers[j]
        if not before.mlp or not after.normalizer.exponential or _concat(after):
            continue
        next_mlp = after.mlp and not after.residual and not after.has_norm
        if not next_mlp and not (after.bias and _has_values(after)):
            continue
        d = arch.widths[j]
        total += d - min(d, sum(h.rank for h in after.heads))
    return _generic(total)


def layernorm_shift(arch: Architecture) -> Count:
    """Per post-norm mean-removing layer: the columns of each head's writer (``V_h``: ``d``; ``O_h``:
    ``d_v``), one per summed head's ``bV``, one for ``bO``, and ``m + 1`` for ``Fb, fb``: the writer's rows
    moved by ``1 w^T`` add a multiple of ``1`` to every token, which the norm removes."""
    total = 0
    for _, layer in _layers(arch):
        if not (layer.post_norm and layer.norm_part.removes_mean):
            continue
        for h in layer.heads:
            if _concat(layer):
                total += _value_width(layer, h)
            elif _has_values(layer):
                total += layer.width_in + (1 if layer.bias else 0)
        total += (1 if layer.bias and _concat(layer) else 0) + (layer.mlp + 1 if layer.mlp else 0)
    return _exact(total)


def softmax_key_bias(arch: Architecture) -> Count:
    """``sum_h r_h`` per biased softmax layer: ``bK`` adds ``(q_a + bQ) . delta`` to every score of query
    ``a``, which the row normalisation cancels."""
    return _exact(sum(h.rank for layer in arch.layers if layer.bias_part.present and layer.normalizer.exponential
                      for h in layer.heads))


def _shifted_monomial_degree(activation) -> int | None:
    """``k`` when the polynomial activation is ``c (x - x0)^k + e`` (``k >= 1``): its Taylor coefficients
    at ``x0 = -c_(k-1) / (k c_k)`` vanish between degrees 1 and ``k - 1``; else None."""
    if not activation.is_polynomial:
        return None
    c = [Fraction(v) for v in activation.coefficients]
    while len(c) > 1 and c[-1] == 0:
        c.pop()
    k = len(c) - 1
    if k < 1:
        return None
    x0 = -c[k - 1] / (k * c[k])
    taylor = [sum((c[i] * comb(i, j) * x0 ** (i - j) for i in range(j, k + 1)), Fraction(0)) for j in range(k + 1)]
    return k if all(v == 0 for v in taylor[1:k]) else None


def mlp_scaling(arch: Architecture) -> Count:
    """``m`` per MLP whose activation is a shifted monomial ``c (x - x0)^k + e``: hidden unit ``j``'s row of
    ``Fa`` (and ``fa - x0``) times ``l``, its column of ``Fb`` times ``l^-k``, ``fb`` corrected."""
    return _exact(sum(layer.mlp for layer in arch.layers
                      if layer.mlp and _shifted_monomial_degree(layer.activation) is not None))


def bias_transfer(arch: Architecture) -> Count:
    """Only the sum of the heads' constant terms is seen: ``sum_h d_v`` for concatenated biased heads
    (``bV_h + delta``, ``bO - O_h delta``), ``(H - 1) d`` for ``H`` summed biased heads with values."""
    total = 0
    for _, layer in _layers(arch):
        if not layer.bias:
            continue
        if _concat(layer):
            total += sum(_value_width(layer, h) for h in layer.heads)
        elif len(layer.heads) > 1 and _has_values(layer):
            total += (len(layer.heads) - 1) * layer.width_out
    return _exact(total)


def mlp_interface(arch: Architecture) -> Count:
    """``d^2`` per layer whose attention feeds only its MLP (no skip, no norm, values): ``G`` on the heads'
    output and biases, ``Fa G^-1``."""
    return _exact(sum(layer.width_out ** 2 for layer in arch.layers
                      if layer.mlp and not layer.residual and not layer.has_norm and _has_values(layer)))


def layernorm_interface(arch: Architecture) -> Count:
    """Per norm whose output only linear maps read: its :func:`_gl_interface` count (``d``; ``d^2`` for a
    mean-removing norm at width 2); where a residual carries the output into a following mean-removing
    norm only the :func:`_mean_interface` (``G = I + 1 h^T``: ``d`` at width 2, else 0). The sites: after a
    post-norm layer (read by the next layer's heads, or carried into its post-norm), inside a pre-norm
    layer (its heads; its MLP's ``Fa``), and the attention norm of a post-norm layer with an MLP (``Fa``)."""
    total = 0
    for i, layer in _layers(arch):
        if layer.post_norm and i < arch.depth:
            nxt = arch.layers[i]
            if not nxt.residual and not nxt.pre_norm:
                total += _gl_interface(layer, arch.widths[i])
            elif nxt.post_norm and nxt.norm_part.removes_mean:
                total += _mean_interface(layer, arch.widths[i])
        if layer.pre_norm:
            total += _gl_interface(layer, layer.width_in) + (_gl_interface(layer, layer.width_out) if layer.mlp else 0)
        if layer.post_norm and layer.mlp:
            total += (_mean_interface if layer.residual else _gl_interface)(layer, layer.width_out)
    return _exact(total)


def _norm_readers(arch: Architecture, i: int, layer):
    """``(readers, carried, biased)`` per shifted norm of layer ``i`` read by linear maps: ``readers`` is a
    list of ``(rows read, has bias, softmax key)`` (a query or key: ``r_h`` columns; a value: its rows; an
    MLP's ``Fa``: ``m`` rows); ``carried``: a residual carries the output on (into a sublayer with a bias
    to take it back: ``True``; without one: None), the norm's width, and the layer whose heads read it (None:
    an MLP)."""
    if not (layer.has_norm and layer.norm_part.has_shift):
        return
    exp = layer.normalizer.exponential

    def heads(ly, softmax):
        out = []
        for h in ly.heads:
            out += [(h.rank, ly.bias, False), (h.rank, ly.bias, softmax)]
            if _has_values(ly):
                out.append((_value_width(ly, h) if _concat(ly) else ly.width_out, ly.bias, False))
        return out

    if layer.pre_norm:
        yield heads(layer, exp), False, layer.width_in, layer
    if layer.mlp:
        yield ([(layer.mlp, True, False)], (True if layer.post_norm and layer.residual else False),
               layer.width_out, None)
    if layer.post_norm and i < arch.depth and not arch.layers[i].pre_norm:
        nxt = arch.layers[i]
        residual_bias = nxt.bias and (_concat(nxt) or _has_values(nxt))
        carried = (True if residual_bias else None) if nxt.residual else False
        yield heads(nxt, nxt.normalizer.exponential), carried, arch.widths[i], nxt


def layernorm_normal(arch: Architecture) -> Count:
    """One normal ``w^T y = c`` (``w = 1/g``) per mean-removing shifted norm: each reader's row or column
    moved by ``w`` (its bias by ``-c``; a softmax key needs none), one per read row, a reader without a bias
    (other than a key) contributing none. Kept where independent: where the reading heads belong to a
    post-norm mean-removing layer with biased values, the sum of the value rows' normals (``V += 1 w^T``,
    ``bV -= c 1``) is a combination of that layer's LayerNorm shifts, so one fewer. Generic (nonzero gains)."""
    total = 0
    for i, layer in _layers(arch):
        if not _mean_norm(layer):
            continue
        for readers, _, _, heads in _norm_readers(arch, i, layer):
            total += sum(rows for rows, bias, key in readers if bias or key)
            if heads is not None and heads is not layer and heads.post_norm and heads.norm_part.removes_mean \
                    and heads.bias and _has_values(heads):
                total -= 1
    return _generic(total)


def layernorm_bias_transfer(arch: Architecture) -> Count | None:
    """The shift of a mean-removing shifted norm moved by ``delta``, each reader's bias taking it back (the
    readers all biased or softmax keys; a carried output reaching a bias): ``d`` directions, kept where
    independent. From width 3 on all ``d`` are new. At width 2 the outputs lie on a line and the norm's
    ``gl(2)`` interface with its normals already moves the shift: none kept where no residual carries the
    output on; where one carries it into a following mean-removing norm, whose interface is the mean one
    only, one. Generic. None at width 1."""
    total = 0
    for i, layer in _layers(arch):
        if not _mean_norm(layer):
            continue
        for readers, carried, width, _ in _norm_readers(arch, i, layer):
            if carried is None or not all(bias or key for _, bias, key in readers):
                continue
            if width < 2:
                return None
            total += width if width > 2 else (1 if carried else 0)
    return _generic(total)


def layernorm_normal_shift(arch: Architecture) -> Count | None:
    """The shift of a mean-removing norm read by summed softmax heads with values, moved by ``delta``, the
    first head's ``V`` taking back ``(sum_h V_h delta) w^T / c`` (and the queries their shift), kept where
    independent: where the heads are biased the LayerNorm bias transfers and normals span them (none kept);
    else from width 3 on the shift moves freely (``d`` kept), while at width 2 the norm's ``gl(2)``
    interface (no residual after it, or a pre-norm) already moves it (none kept) and with a residual
    carrying the output into the next post-norm only the mean interface acts (one kept). Generic. None at
    width 1."""
    total = 0
    for i, layer in _layers(arch):
        if not (_mean_norm(layer) and layer.norm_part.has_shift):
            continue
        sites = []
        if layer.pre_norm and layer.normalizer.exponential:
            sites.append((layer, False, layer.width_in))
        if layer.post_norm and i < arch.depth and not arch.layers[i].pre_norm and arch.layers[i].normalizer.exponential:
            sites.append((arch.layers[i], arch.layers[i].residual, arch.widths[i]))
        for heads, carried, width in sites:
            if _concat(heads) or not _has_values(heads) or heads.bias:
                continue
            if width < 2:
                return None
            total += width if width > 2 else (1 if carried else 0)
    return _generic(total)


def layernorm_shift_carried(arch: Architecture) -> Count:
    """One per two consecutive pre-norm layers (mean-removing shifted norm, skip value, one summed softmax
    head with values, no bias, no MLP): layer ``i``'s shift moved by ``V_i^-1 1`` puts ``1`` on the stream,
    which layer ``i + 1``'s norm removes and its shift moved by ``-V_(i+1)^-1 1`` takes back out. Generic
    (invertible values)."""
    def fits(ly):
        return (ly.pre_norm and ly.norm_part.removes_mean and ly.norm_part.has_shift and ly.residual
                and ly.has_values and not ly.bias and not ly.mlp and ly.normalizer.exponential and len(ly.heads) == 1
                and not _concat(ly))
    return _generic(sum(1 for a, b in zip(arch.layers, arch.layers[1:]) if fits(a) and fits(b)))


def mlp_polynomial_redundancy(arch: Architecture) -> Count | None:
    """For a degree-2 activation (no norm on the MLP's input or output): ``p(y) = Fb f(Fa y + fa) + fb`` is
    seen through its ``d C(d + 2, 2)`` coefficients; each hidden unit adds ``Fb_j (a_j . (y, 1))^2``, a
    point of a Segre-Veronese variety of dimension ``2 d``, and ``fb`` adds ``d`` constants, so the
    coefficients fill ``min(d C(d + 2, 2), 2 d m + d)`` (the expected dimension). Of
    the ``m (2 d + 1) + d`` parameters the rest are redundant; less the ``m`` MLP scalings, which lie in
    it. Generic. None for other degrees, a norm around the MLP, or widths beyond 3 (the expected
    dimension is checked at widths 2 and 3, ``m <= 6``; a defective secant would break it elsewhere)."""
    total = 0
    for _, layer in _layers(arch):
        if not (layer.mlp and layer.activation.is_polynomial):
            continue
        if layer.has_norm or _shifted_monomial_degree(layer.activation) != 2 or layer.width_out not in (2, 3):
            return None
        d, m = layer.width_out, layer.mlp
        parameters, image = m * (2 * d + 1) + d, min(d * comb(d + 2, 2), 2 * d * m + d)
        total += parameters - image - m
    return _generic(total)


def interface_bias_shift(arch: Architecture) -> Count:
    """``d`` per layer ``i`` with an output bias (the MLP's ``fb``, ``bO``, or the first head's ``bV``)
    read by the biased heads of layer ``i + 1`` alone (no skip or norm on either side): the bias moved by
    ``h`` moves every token by ``h``, which the next biases take back (a softmax key needs none)."""
    total = 0
    for i in range(1, arch.depth):
        layer, nxt = arch.layers[i - 1], arch.layers[i]
        if layer.residual or layer.has_norm or nxt.residual or nxt.has_norm or not nxt.bias:
            continue
        if layer.mlp or (layer.bias and (_concat(layer) or _has_values(layer))):
            total += arch.widths[i]
    return _exact(total)


def norm_rotation(arch: Architecture) -> Count:
    """``d (d - 1) / 2`` (``so(d)``) per post-norm layer without skip whose norm commutes with rotations
    (RMSNorm: the mean square is rotation invariant) and whose output the next layer's heads alone read
    (no skip, no pre-norm there): ``N(R y) = G R G^-1 N(y)``, so ``R`` on the writers of the norm's input is
    taken back by ``(G R G^-1)^-1`` on the readers. Generic (nonzero gains)."""
    total = 0
    for i, layer in _layers(arch):
        if layer.post_norm and layer.norm_part.rotation_equivariant and not layer.residual and i < arch.depth \
                and not arch.layers[i].residual and not arch.layers[i].pre_norm:
            total += comb(arch.widths[i], 2)
    return _generic(total)


#: kind -> its count function (None: no closed form for this architecture).
COUNTS: dict[str, Callable[[Architecture], Count | None]] = {
    "factor gauge": factor_gauge,
    "value gauge": value_gauge,
    "interface": interface,
    "interface shift": interface_shift,
    "LayerNorm shift": layernorm_shift,
    "softmax key bias": softmax_key_bias,
    "MLP scaling": mlp_scaling,
    "bias transfer": bias_transfer,
    "MLP interface": mlp_interface,
    "LayerNorm interface": layernorm_interface,
    "LayerNorm normal": layernorm_normal,
    "LayerNorm bias transfer": layernorm_bias_transfer,
    "LayerNorm normal shift": layernorm_normal_shift,
    "LayerNorm shift carried": layernorm_shift_carried,
    "MLP polynomial redundancy": mlp_polynomial_redundancy,
    "interface bias shift": interface_bias_shift,
    "norm rotation": norm_rotation,
}


def kind_counts(arch: Architecture) -> dict[str, Count | None]:
    """The closed-form count of every kind for ``arch`` (None: no formula derived for it).

    Parameters
    ----------
    arch : Architecture
        The architecture (its parts alone are read).

    Returns
    -------
    dict
        ``{kind: Count or None}`` for every kind of :data:`COUNTS`, in that order.

    Examples
    --------
    >>> c = kind_counts(Architecture.uniform(2, 2, 1, 3, heads=2))
    >>> c["factor gauge"], c["interface"].value
    (Count(value=4, label='exact'), 4)
    """
    return {kind: count(arch) for kind, count in COUNTS.items()}


def check_counts(arch: Architecture, declared: dict[str, int], generic: bool = True
                 ) -> dict[str, tuple[int, Count]]:
    """Compare the declared count of every kind with its formula.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    declared : dict
        ``{kind: count}`` of the declared directions (:meth:`~symattn.model.symmetries.GaugeKernel.kinds`;
        a kind not declared counts 0).
    generic : bool
        The point is generic (a seeded point): the ``generic`` counts are compared too; else (a point the
        user gave) only the ``exact`` ones.

    Returns
    -------
    dict
        ``{kind: (declared, Count)}`` for every kind with a formula.

    Raises
    ------
    CheckFailed
        One line naming the first kind whose declared count differs from its formula, or a declared kind
        with no count function at all.
    """
    unknown = sorted(set(declared) - set(COUNTS))
    if unknown:
        raise CheckFailed(f"symmetry kind {unknown[0]!r} has no closed-form count function")
    out = {}
    for kind, count in kind_counts(arch).items():
        if count is None or (count.label == "generic" and not generic):
            continue
        have = declared.get(kind, 0)
        if have != count.value:
            raise CheckFailed(f"symmetry kind {kind!r} declares {have} direction{'s' if have != 1 else ''}, its "
                              f"formula gives {count.value} ({count.label})")
        out[kind] = (have, count)
    return out
