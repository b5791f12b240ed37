"""The symmetry record, and the symmetries the transformer-block parts declare.

:class:`Symmetry` is one declared infinitesimal symmetry (used by
:mod:`symattn.model.symmetries`, which declares the attention stack's own and verifies
them all); :func:`block_symmetries` adds those of biases, LayerNorms and MLP sublayers
(:mod:`symattn.model.layers`), empty for every stack without them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator, Mapping

import numpy as np

from symattn.core.linalg import Matrix

from symattn.model.architecture import Architecture, Block
from symattn.model.layers import MLP_PARTS
from symattn.model.parts.final_norm import final_norm_shifts
from symattn.model.parameters import flat_vector, point_of

__all__ = ["Symmetry", "WHERE_INDEPENDENT", "block_symmetries"]


@dataclass(frozen=True)
class Symmetry:
    """One declared infinitesimal symmetry: its kind (:data:`KINDS`), the layer (for an
    interface: the layer whose output it acts on), the head (None: not per head) and
    the flat native direction at the point (exact)."""

    kind: str
    layer: int
    head: int | None
    vector: np.ndarray
    #: the direction depends on the values only (not on the factors ``Q, K``): it is the same at
    #: every point of the collapse path ``Q = t U, K = t W`` (a LayerNorm normal)
    values_only: bool = False


#: The kinds declared only where they add a direction to the others (a LayerNorm normal or bias
#: transfer can lie in the span of value gauges and LayerNorm shifts):
#: :func:`~symattn.model.symmetries.declared_symmetries` drops the dependent ones.
WHERE_INDEPENDENT = ("LayerNorm normal", "LayerNorm bias transfer", "LayerNorm normal shift", "LayerNorm shift carried",
                     "MLP polynomial redundancy", "interface bias shift")


def _units(n: int, m: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """``(a, b, E_ab)`` for the unit matrices of shape ``n x m``, ``a`` outer."""
    for a, b in itertools.product(range(n), range(m)):
        e = np.full((n, m), Fraction(0), dtype=object)
        e[a, b] = Fraction(1)
        yield a, b, e


def _bias(blocks: Mapping[str, Block], role: str) -> Block | None:
    return blocks.get("b" + role)


def _ones_times(shape: tuple[int, int], k: int) -> np.ndarray:
    """The matrix ``1 e_k^T`` of ``shape`` (column ``k`` all ones)."""
    e = np.full(shape, Fraction(0), dtype=object)
    e[:, k] = Fraction(1)
    return e


def _transfers(arch: Architecture, theta, i: int, layer, parts) -> list[Symmetry]:
    """The bias transfers and the MLP interface of layer ``i`` (see :func:`block_symmetries`)."""
    out = []
    heads = layer.head_blocks(i)
    if layer.bias and "bO" in parts:
        for blocks in heads:
            bv, o = blocks["bV"], blocks["O"]
            for _, _, E in _units(*arch.shape(bv)):
                vec = flat_vector(arch, {bv.name: E, parts["bO"].name: -theta[o.name].dot(E)})
                out.append(Symmetry("bias transfer", i, bv.head, vec))
    elif layer.bias and len(heads) > 1 and all("bV" in b for b in heads):
        first = heads[0]["bV"]
        for blocks in heads[1:]:
            for _, _, E in _units(*arch.shape(first)):
                vec = flat_vector(arch, {first.name: E, blocks["bV"].name: -E})
                out.append(Symmetry("bias transfer", i, blocks["bV"].head, vec))
    if layer.mlp and not layer.residual and not layer.has_norm and all("V" in b for b in heads):
        d = layer.width_out
        for _, _, H in _units(d, d):
            move = {parts["mlp.in"].name: -theta[parts["mlp.in"].name].dot(H)}
            for blocks in heads:
                writer = blocks["O" if "O" in blocks else "V"]
                move[writer.name] = H.dot(theta[writer.name])
                if "O" not in blocks and "bV" in blocks:
                    move[blocks["bV"].name] = H.dot(theta[blocks["bV"].name])
            if "bO" in parts:
                move[parts["bO"].name] = H.dot(theta[parts["bO"].name])
            out.append(Symmetry("MLP interface", i, None, flat_vector(arch, move)))
    return out


def _linear(theta, g: str, s: str | None, H: np.ndarray, readers: dict[str, str]) -> dict[str, np.ndarray]:
    """``G = I + H`` on the output ``y = s + g * xhat`` of the LayerNorm ``(g, s)``: ``s -> G s`` and the
    gain so that ``g * xhat -> G (g * xhat)``, and ``G^-1`` on each reader (``"row"``: a factor read as
    ``Q^T y``, ``Q -> -H^T Q``; ``"col"``: a map read as ``V y``, ``V -> -V H``). ``H`` diagonal at any
    width (``g -> g + H g``); any ``H`` at width 2, where ``xhat = sigma (1, -1)`` and
    ``g * xhat = sigma D g`` with ``D = diag(1, -1)`` (``g -> g + D H D g``)."""
    move = {n: np.full(theta[n].shape, Fraction(0), dtype=object) for n in (g, *([s] if s else []), *readers)}
    gain = np.asarray(theta[g], dtype=object).reshape(-1)
    D = np.diag([Fraction(1), Fraction(-1)]) if len(gain) == 2 else np.eye(len(gain), dtype=int)
    move[g] = D.dot(H).dot(D).dot(gain).reshape(np.shape(theta[g]))
    if s:  # a norm part without a shift (RMSNorm) has none to move
        move[s] = H.dot(np.asarray(theta[s], dtype=object).reshape(-1)).reshape(np.shape(theta[s]))
    for name, how in readers.items():
        value = np.asarray(theta[name], dtype=object)
        move[name] = -H.T.dot(value) if how == "row" else -value.dot(H)
    return move


def _interfaces(arch: Architecture, theta, i: int, g: str, s: str | None, width: int,
                readers: dict[str, str], kind: str = "gl") -> list[Symmetry]:
    """The interface of the norm ``(g, s)`` of layer ``i`` (``s`` None: a part without a shift): ``G`` on
    its output and ``G^-1`` on ``readers``, for the ``H`` its part declares
    (:meth:`~symattn.model.parts.norm.Norm.interface_directions`)."""
    part = arch.layers[i - 1].norm_part
    return [Symmetry("LayerNorm interface", i, None, flat_vector(arch, _linear(theta, g, s, H, readers)))
            for H in part.interface_directions(width, kind)]


def _pre_norm_interface(arch: Architecture, theta, i: int, layer, parts) -> list[Symmetry]:
    """The interfaces inside the pre-norm layer ``i`` (see :func:`block_symmetries`)."""
    readers: dict[str, str] = {}
    for head in layer.head_blocks(i):
        readers.update({head["Q"].name: "row", head["K"].name: "row"})
        if "V" in head:
            readers[head["V"].name] = "col"
    out = _interfaces(arch, theta, i, parts["attn_norm.gain"].name, _shift(parts, "attn_norm"), layer.width_in, readers)
    if layer.mlp:
        out += _interfaces(arch, theta, i, parts["mlp_norm.gain"].name, _shift(parts, "mlp_norm"), layer.width_out,
                           {parts["mlp.in"].name: "col"})
    return out


def _norm_interface(arch: Architecture, theta, i: int, parts, kind: str = "gl") -> list[Symmetry]:
    """The interface after the post-norm layer ``i`` (see :func:`block_symmetries`)."""
    which = "mlp_norm" if arch.layers[i - 1].mlp else "attn_norm"
    readers: dict[str, str] = {}
    for head in arch.layers[i].head_blocks(i + 1):
        readers.update({head["Q"].name: "row", head["K"].name: "row"})
        if "V" in head:
            readers[head["V"].name] = "col"
    return _interfaces(arch, theta, i, parts[f"{which}.gain"].name, _shift(parts, which), arch.widths[i], readers,
                       kind)


def _rotations(arch: Architecture, theta, i: int, layer, parts) -> list[Symmetry]:
    """The norm rotations after the post-norm layer ``i`` (no skip; read by the next layer's heads alone) of a
    norm part that commutes with rotations (:attr:`~symattn.model.parts.norm.Norm.rotation_equivariant`):
    ``N(R y) = G R G^-1 N(y)`` (``G = diag(g)``), so ``R = I + A`` (``A = E_kl - E_lk``) on the maps that
    write the norm's input (each head's ``V_h`` or ``O_h`` and its bias, ``bO``; the MLP's ``mlp.out``, ``mlp.out_bias``) and
    ``M^-1``, ``M = G R G^-1``, on the readers (``Q, K -> -M'^T Q``, ``V -> -V M'``, ``M' = G A G^-1``). None
    where a gain is 0 (generic: nonzero gains)."""
    part = layer.norm_part
    if not part.rotation_equivariant or layer.residual:
        return []
    which = "mlp_norm" if layer.mlp else "attn_norm"
    gain = [Fraction(v) for v in np.asarray(theta[parts[f"{which}.gain"].name]).reshape(-1)]
    if any(v == 0 for v in gain):
        return []
    if layer.mlp:
        writers = [parts["mlp.out"].name, parts["mlp.out_bias"].name]
    else:
        writers = [b[r].name for b in layer.head_blocks(i) for r in ("O", "bV", "bO") if r in b and
                   (r != "bV" or "O" not in b)] + ([parts["bO"].name] if "bO" in parts else [])
        writers += [b["V"].name for b in layer.head_blocks(i) if "V" in b and "O" not in b]
    d = len(gain)
    G = np.diag(np.array(gain, dtype=object))
    Ginv = np.diag(np.array([1 / v for v in gain], dtype=object))
    out = []
    for k, l in itertools.combinations(range(d), 2):
        A = np.full((d, d), Fraction(0), dtype=object)
        A[k, l], A[l, k] = Fraction(1), Fraction(-1)
        M = G.dot(A).dot(Ginv)
        move = {name: A.dot(np.asarray(theta[name], dtype=object)) for name in writers}
        for head in arch.layers[i].head_blocks(i + 1):
            for role in ("Q", "K"):
                move[head[role].name] = -M.T.dot(np.asarray(theta[head[role].name], dtype=object))
            if "V" in head:
                move[head["V"].name] = -np.asarray(theta[head["V"].name], dtype=object).dot(M)
        out.append(Symmetry("norm rotation", i, None, flat_vector(arch, move)))
    return out


def _shift(parts, which: str) -> str | None:
    """The name of the shift block of the norm at site ``which`` (``"attn_norm"``, ``"mlp_norm"``), or None (no shift)."""
    block = parts.get(f"{which}.shift")
    return block.name if block is not None else None


def _normals(arch: Architecture, theta, i: int, g: str, s: str | None) -> list[tuple[np.ndarray, Fraction]]:
    """The normals ``(w, c)`` of layer ``i``'s norm ``(g, s)``: ``w^T y = c`` for every output ``y``, as its
    part declares them (:meth:`~symattn.model.parts.norm.Norm.normals`; none for a part that keeps the
    mean)."""
    part = arch.layers[i - 1].norm_part
    if not part.removes_mean or s is None:
        return []
    gain = [Fraction(v) for v in np.asarray(theta[g]).reshape(-1)]
    shift = [Fraction(v) for v in np.asarray(theta[s]).reshape(-1)]
    return part.normals(gain, shift)


def _queries_back(theta, query: str, delta: np.ndarray, w: np.ndarray, c: Fraction) -> np.ndarray | None:
    """The move of the query factor ``query`` that takes back its shift ``Q^T delta`` along the
    LayerNorm normal ``(w, c)`` (``Q -= w (Q^T delta)^T / c``: ``-(Q^T delta) (w^T y) / c = -Q^T delta``
    for every output ``y``), or None where the queries do not see ``delta``."""
    seen = np.asarray(theta[query], dtype=object).T.dot(delta)
    return -np.outer(w, seen) / c if any(v != 0 for v in seen) else None


def _plane_normals(arch: Architecture, theta, i: int, g: str, s: str, readers) -> list[Symmetry]:
    """The LayerNorm normals of the LayerNorm ``(g, s)`` of layer ``i`` (see
    :func:`block_symmetries`): ``readers`` are ``(block, how, bias)`` for each linear map that
    reads its output (``"row"``: read as ``Q^T y``, ``"col"``: as ``V y``; ``bias``: the map's
    bias block, or None where the normaliser cancels the constant: a softmax key). Where gains
    are 0 the normals are the unit vectors of those features instead (``y_k = s_k`` there)."""
    out = []
    for (w, c), (block, how, bias) in itertools.product(_normals(arch, theta, i, g, s), readers):
        shape = arch.shape(block)
        for k in range(shape[1] if how == "row" else shape[0]):
            move = {block.name: np.full(shape, Fraction(0), dtype=object)}
            if how == "row":
                move[block.name][:, k] = w
            else:
                move[block.name][k, :] = w
            if bias is not None:
                move[bias.name] = np.full(arch.shape(bias), Fraction(0), dtype=object)
                move[bias.name].reshape(-1)[k] = -c
            out.append(Symmetry("LayerNorm normal", i, block.head, flat_vector(arch, move), values_only=True))
    return out


def _shift_transfers(arch: Architecture, theta, i: int, s: str, readers, residual, softmax: bool = False
                     ) -> list[Symmetry]:
    """The LayerNorm bias transfers of the LayerNorm shift ``s`` of layer ``i`` (see
    :func:`block_symmetries`): ``readers`` as for :func:`_plane_normals` (each with its bias,
    or a softmax key), ``residual`` the bias that takes back the shift the residual carries on
    (or None where no residual carries the LayerNorm's output); ``softmax``: the readers' layer
    normalises with ``exp``, so a key needs no bias. None where a reader has no bias."""
    if any(bias is None and not (block.role == "K" and softmax) for block, _, bias in readers):
        return []
    d = np.asarray(theta[s]).size
    out = []
    for j in range(d):
        move = {s: np.full(arch.shape(arch.block(s)), Fraction(0), dtype=object)}
        move[s].reshape(-1)[j] = Fraction(1)
        for block, how, bias in readers:
            if bias is None:
                continue
            w = np.asarray(theta[block.name])
            col = w[j, :] if how == "row" else w[:, j]  # W^T e_j (Q, K) or W e_j (V, W_1)
            move[bias.name] = -np.array(col, dtype=object).reshape(arch.shape(bias))
        if residual is not None:
            move[residual.name] = move.get(residual.name, np.full(arch.shape(residual), Fraction(0), dtype=object))
            move[residual.name] = np.array(move[residual.name], dtype=object)
            move[residual.name].reshape(-1)[j] -= 1
        # value parts depend on the values only and factor parts (bQ, bK) on the factors only, as
        # GaugeKernel.along_path needs of every declared direction
        out.append(Symmetry("LayerNorm bias transfer", i, None, flat_vector(arch, move)))
    return out


def _normal_shifts(arch: Architecture, theta, i: int, g: str, s: str, heads, carried: bool) -> list[Symmetry]:
    """The LayerNorm normal shifts of the LayerNorm ``(g, s)`` of layer ``i`` read by the summed softmax
    heads ``heads`` (see :func:`block_symmetries`); ``carried``: a residual adds the output to theirs."""
    gain = [Fraction(v) for v in np.asarray(theta[g]).reshape(-1)]
    if any(v == 0 for v in gain) or any("O" in h or "V" not in h for h in heads):
        return []
    normals = _normals(arch, theta, i, g, s)
    if len(normals) != 1 or normals[0][1] == 0:
        return []
    w, c = normals[0]
    queries = np.concatenate([np.asarray(theta[h["Q"].name], dtype=object).T for h in heads])
    deltas = [np.array([Fraction(int(x.p), int(x.q)) for x in basis], dtype=object)
              for basis in Matrix.rational(queries).nullspace()]
    # then every unit shift, the queries taking back their shift Q^T delta along the normal
    deltas += [np.array([Fraction(int(j == k)) for j in range(len(w))], dtype=object) for k in range(len(w))]
    out = []
    for delta in deltas:
        moved = sum((np.asarray(theta[h["V"].name], dtype=object).dot(delta) for h in heads),
                    delta if carried else np.zeros(len(delta), dtype=object))
        first = heads[0]["V"]
        move = {s: delta.reshape(arch.shape(arch.block(s))),
                first.name: -np.outer(moved, w) / c}
        for h in heads:
            back = _queries_back(theta, h["Q"].name, delta, w, c)
            if back is not None:
                move[h["Q"].name] = back
        out.append(Symmetry("LayerNorm normal shift", i, None, flat_vector(arch, move),
                            values_only=len(move) == 2))
    return out


def _carried_shifts(arch: Architecture, theta, i: int) -> list[Symmetry]:
    """The LayerNorm shift carried from the pre-norm layer ``i`` into the pre-norm layer ``i + 1`` (see
    :func:`block_symmetries`); empty where the two layers are not of the kind it covers."""
    layers = (arch.layers[i - 1], arch.layers[i])
    if any(not ly.pre_norm or not ly.norm_part.removes_mean or not ly.norm_part.has_shift or not ly.residual
           or not ly.has_values or ly.bias or ly.mlp or not ly.normalizer.exponential or len(ly.heads) != 1 for ly in layers):
        return []
    heads = [layers[0].head_blocks(i)[0], layers[1].head_blocks(i + 1)[0]]
    if any("V" not in h or "O" in h for h in heads):
        return []
    ones = [[Fraction(1)] for _ in range(arch.widths[i])]
    shifts = []
    for h, sign in zip(heads, (1, -1)):
        V = np.asarray(theta[h["V"].name], dtype=object)
        if V.shape[0] != V.shape[1] or Matrix.rational(V).rank() < V.shape[0]:
            return []
        solved = Matrix.rational(V).solve(Matrix.rational(np.array(ones, dtype=object) * sign)).entries
        shifts.append(np.array([Fraction(int(x.p), int(x.q)) for x in np.asarray(solved).reshape(-1)], dtype=object))
    move = {}
    for layer_no, h, delta in zip((i, i + 1), heads, shifts):
        parts = arch.layers[layer_no - 1].layer_blocks(layer_no)
        g, sh = parts["attn_norm.gain"].name, parts["attn_norm.shift"].name
        normal = next(((w, c) for w, c in _normals(arch, theta, layer_no, g, sh) if c != 0), None)
        if normal is None:
            return []
        move[sh] = delta.reshape(arch.shape(arch.block(sh)))
        back = _queries_back(theta, h["Q"].name, delta, *normal)
        if back is not None:
            move[h["Q"].name] = back
    return [Symmetry("LayerNorm shift carried", i, None, flat_vector(arch, move))]


def _residual_bias(layer, i: int):
    """The bias that can take back a shift of layer ``i``'s input carried by its residual into
    the attention sublayer's output: ``bO`` (concatenated heads) or the first head's ``bV``;
    None where there is none (no biases, or folded values)."""
    parts = layer.layer_blocks(i)
    if "bO" in parts:
        return parts["bO"]
    heads = layer.head_blocks(i)
    return heads[0].get("bV") if heads and "V" in heads[0] else None


def _head_readers(layer, i: int) -> list:
    """``(block, how, bias)`` for the maps of layer ``i``'s heads that read its input (``Q``,
    ``K``, ``V``; the bias None where there is none)."""
    return [(blocks[role], how, blocks.get("b" + role)) for blocks in layer.head_blocks(i)
            for role, how in (("Q", "row"), ("K", "row"), ("V", "col")) if role in blocks]


def _read_layer_norms(arch: Architecture, i: int, layer, parts) -> Iterator[tuple]:
    """``(g, s, readers, carried, softmax, transfers)`` for each LayerNorm of layer ``i`` whose
    output linear maps read (see :func:`block_symmetries`): its gain and shift, the readers
    (:func:`_head_readers` form), the bias that takes back what a residual carries on (None:
    no residual carries the output), whether the readers normalise with softmax, and whether
    a bias transfer can be declared at all (not where a residual carries the output into a
    sublayer with no bias to take it back)."""
    if not layer.norm_part.has_shift:  # normals and shift transfers move the shift
        return
    if layer.pre_norm:
        yield parts["attn_norm.gain"].name, parts["attn_norm.shift"].name, _head_readers(layer, i), None, layer.normalizer.exponential, True
    if layer.has_norm and layer.mlp:  # the MLP reads LN_F (pre-norm) or LN_A (post-norm)
        which = "mlp_norm" if layer.pre_norm else "attn_norm"
        carried = parts["mlp.out_bias"] if layer.post_norm and layer.residual else None
        yield (parts[f"{which}.gain"].name, parts[f"{which}.shift"].name, [(parts["mlp.in"], "col", parts["mlp.in_bias"])], carried,
               False, True)
    if layer.post_norm and i < arch.depth and not arch.layers[i].pre_norm:
        which, nxt = "mlp_norm" if layer.mlp else "attn_norm", arch.layers[i]
        carried = _residual_bias(nxt, i + 1) if nxt.residual else None
        yield (parts[f"{which}.gain"].name, parts[f"{which}.shift"].name, _head_readers(nxt, i + 1), carried,
               nxt.normalizer.exponential, not nxt.residual or (nxt.has_values and carried is not None))


def _head_layer_norms(arch: Architecture, i: int, layer, parts) -> Iterator[tuple]:
    """``(g, s, heads, carried)`` for each LayerNorm of layer ``i`` read by softmax heads: the pre-norm
    LayerNorm by its own heads (its residual carries the input, not the output), a post-norm one by
    the next layer's heads (a residual there carries the output on)."""
    if not (layer.norm_part.removes_mean and layer.norm_part.has_shift):
        return
    if layer.pre_norm and layer.normalizer.exponential:
        yield parts["attn_norm.gain"].name, parts["attn_norm.shift"].name, layer.head_blocks(i), False
    if layer.post_norm and i < arch.depth and not arch.layers[i].pre_norm and \
            arch.layers[i].normalizer.exponential:
        which, nxt = "mlp_norm" if layer.mlp else "attn_norm", arch.layers[i]
        yield parts[f"{which}.gain"].name, parts[f"{which}.shift"].name, nxt.head_blocks(i + 1), nxt.residual


def _interface_bias_shifts(arch: Architecture, theta, i: int, layer) -> list[Symmetry]:
    """The interface bias shifts after layer ``i`` (see :func:`block_symmetries`); empty where layer ``i``
    has no output bias or either side has a skip or a norm, or the next layer no biases."""
    nxt = arch.layers[i]
    if layer.residual or layer.has_norm or nxt.residual or nxt.has_norm or not nxt.bias:
        return []
    out_bias = layer.layer_blocks(i).get("mlp.out_bias") if layer.mlp else _residual_bias(layer, i)
    if out_bias is None:
        return []
    moved = _shift_transfers(arch, theta, i, out_bias.name, _head_readers(nxt, i + 1), None,
                             nxt.normalizer.exponential)
    return [Symmetry("interface bias shift", i, None, sym.vector) for sym in moved]


def _mlp_redundancy(arch: Architecture, theta, i: int, layer, parts) -> list[Symmetry]:
    """The MLP polynomial redundancy of layer ``i`` (see :func:`block_symmetries`): with a polynomial
    activation ``f`` of degree ``k`` the MLP is the polynomial map ``p(y) = Fb f(Fa y + fa) + fb`` of
    degree ``k``; the network sees its parameters only through ``p``'s coefficients (modulo ``1 q(y)`` where a
    post-norm mean-removing norm follows the MLP's residual), so every null vector of the exact Jacobian
    of those coefficients in ``(Fa, fa, Fb, fb)`` is a kernel vector."""
    import sympy

    c = layer.activation.coefficients
    d, m = layer.width_in, layer.mlp
    names = [parts[p].name for p in MLP_PARTS]
    Fa, fa, Fb, fb = (np.asarray(theta[n], dtype=object) for n in names)
    ys = sympy.symbols(f"y0:{d}")

    def f(u, deriv=False):  # f(u) or f'(u) by Horner, exact
        coeffs = [k * c[k] for k in range(1, len(c))] if deriv else list(c)
        out = sympy.Poly(0, *ys, domain="QQ")
        for a in reversed(coeffs):
            out = out * u + sympy.Rational(a.numerator, a.denominator)
        return out

    units = [sympy.Poly(sum(sympy.Rational(Fraction(Fa[j, l]).numerator, Fraction(Fa[j, l]).denominator) * ys[l]
                            for l in range(d)) + sympy.Rational(Fraction(fa[j, 0]).numerator,
                                                                Fraction(fa[j, 0]).denominator), *ys, domain="QQ")
             for j in range(m)]
    values, slopes = [f(u) for u in units], [f(u, True) for u in units]
    one = sympy.Poly(1, *ys, domain="QQ")
    columns: list[list] = []  # per parameter: d output polynomials
    for j in range(m):  # Fa[j, l]: Fb[:, j] y_l f'(u_j)
        for l in range(d):
            columns.append([slopes[j] * sympy.Poly(ys[l], *ys, domain="QQ") * sympy.Rational(
                Fraction(Fb[r, j]).numerator, Fraction(Fb[r, j]).denominator) for r in range(d)])
    for j in range(m):  # fa[j]: Fb[:, j] f'(u_j)
        columns.append([slopes[j] * sympy.Rational(Fraction(Fb[r, j]).numerator, Fraction(Fb[r, j]).denominator)
                        for r in range(d)])
    for r0 in range(d):  # Fb[r0, j]: e_r0 f(u_j)
        for j in range(m):
            columns.append([values[j] if r == r0 else 0 * one for r in range(d)])
    for r0 in range(d):  # fb[r0]: e_r0
        columns.append([one if r == r0 else 0 * one for r in range(d)])
    if layer.has_norm and layer.norm_part.removes_mean:
        # the MLP reads a mean-removing norm's output (LN_A post-norm, LN_F pre-norm): y = s + B z on the
        # plane of its normals, so p is seen on that plane only (p(s + B z), polynomials in z)
        which = "attn_norm" if layer.post_norm else "mlp_norm"
        g, sh = parts[f"{which}.gain"].name, parts[f"{which}.shift"].name
        normals = _normals(arch, theta, i, g, sh)
        shift = [Fraction(v) for v in np.asarray(theta[sh]).reshape(-1)]
        basis = Matrix.rational(np.array([list(w) for w, _ in normals], dtype=object)).nullspace()
        zs = sympy.symbols(f"z0:{len(basis)}")
        plane = {ys[l]: sympy.Rational(shift[l].numerator, shift[l].denominator) + sum(
            sympy.Rational(int(b[l].p), int(b[l].q)) * z for b, z in zip(basis, zs)) for l in range(d)}
        gens = zs or ys[:1]
        columns = [[sympy.Poly(poly.as_expr().subs(plane, simultaneous=True), *gens, domain="QQ") for poly in col]
                   for col in columns]
    monomials = sorted({mono for col in columns for poly in col for mono in poly.monoms()})
    rows = [[Fraction(str(col[r].coeff_monomial(mono))) for col in columns] for r in range(d) for mono in monomials]
    if layer.post_norm and layer.norm_part.removes_mean:
        # LN_F(y + p(y)) removes the per-token mean: p is seen modulo 1 q(y) (differences of outputs)
        n = len(monomials)
        rows = [[a - b for a, b in zip(rows[r * n + k], rows[k])] for r in range(1, d) for k in range(n)]
    out = []
    for vec in Matrix.rational(np.array(rows, dtype=object)).nullspace():
        v = [Fraction(int(x.p), int(x.q)) for x in vec]
        k = 0
        move = {}
        for name, shape in zip(names, (Fa.shape, fa.shape, Fb.shape, fb.shape)):
            size = shape[0] * shape[1]
            block = np.array(v[k:k + size], dtype=object)
            k += size
            move[name] = block.reshape(shape)  # Fa in (j, l), Fb in (r, j) order: row-major
        out.append(Symmetry("MLP polynomial redundancy", i, None, flat_vector(arch, move), values_only=True))
    return out


def block_symmetries(arch: Architecture, theta) -> list[Symmetry]:
    """The symmetries the transformer-block parts bring (empty for every stack without them):

    * **LayerNorm shift** (constant directions): a post-norm LayerNorm removes the mean over
      the features, so a parameter change that adds a multiple of ``1`` to every token of
      its input is invisible: the rows of the map that writes the input (``V_h`` of summed
      heads, ``O_h`` of concatenated ones, ``Fb`` of the MLP) moved by ``1 w^T``, and the bias
      just before it (``bV_h`` or ``bO``, ``fb``) moved by ``1``;
    * **softmax key bias** (constant): with ``phi = exp`` the key bias adds ``(q_a + bQ) . delta``
      to every score of query ``a``, which the row normalisation cancels;
    * **MLP scaling**: with a shifted monomial activation ``c (x - x0)^k + e`` (every polynomial of
      degree 1 or 2, a monomial ``c x^k``), hidden unit ``j``'s row of ``Fa`` and entry of
      ``fa - x0`` times ``l``, column of ``Fb`` times ``l^-k``, and ``fb`` moved by
      ``(1 - l^-k) e`` times that column (infinitesimally: ``Fa_j``, ``fa_j - x0``, ``-k Fb_j``,
      ``k e Fb_j``);
    * **bias transfer**: only the sum of the constant terms of a layer's heads is seen:
      ``bV_h + delta``, ``bO - O_h delta`` (concatenated heads), ``bV_1 + delta``, ``bV_h - delta``
      (summed heads);
    * **MLP interface**: when the attention sublayer feeds only the MLP (no residual, no
      LayerNorm), ``G = I + H`` acts as ``O_h`` (or ``V_h``) and its bias ``-> G .``, ``Fa -> Fa G^-1``;
    * **LayerNorm interface**: when a post-norm layer ``j`` feeds layer ``j + 1`` through its heads
      only (no residual, no pre-norm), a diagonal ``G = diag(l)`` scales the last LayerNorm's gain
      and shift and acts as ``G^-1`` on the next layer's ``Q, K`` (rows) and ``V`` (columns); the
      same inside a pre-norm layer, whose LayerNorms feed only its heads (``attn_norm.gain``, ``attn_norm.shift``) and its
      MLP (``gF, sF`` against the columns of ``Fa``). At width 2 the centred output is
      ``sigma (1, -1)``, so the output ``s + sigma (g_1, -g_2)`` lies on a line and every ``G`` in
      ``GL(2)`` maps it to another LayerNorm's output: the off-diagonal directions too. When the
      residual of a post-norm layer ``j + 1`` carries the output on (width 2), ``G = I + 1 h^T``
      still acts: it moves every token by a multiple of ``1``, which the next LayerNorm removes
      (layer ``j + 1``'s attention LayerNorm, with or without an MLP after it). The
      same for the attention LayerNorm of a post-norm layer with an MLP, read by ``Fa`` alone (and
      carried into the MLP's LayerNorm where the layer has a residual);
    * **LayerNorm normal**: a LayerNorm's output ``y = g * xhat + s`` has ``1^T xhat = 0``, so
      ``w^T y = c`` with ``w = 1 / g`` and ``c = w^T s`` for every token: a map that reads ``y``
      moved by ``e_k w^T`` (a column of ``Q`` or ``K``, a row of ``V`` or ``Fa``) changes its
      output by the constant ``c e_k``, which its bias moved by ``-c e_k`` takes back (a softmax
      key needs no bias: the row normalisation cancels it). Declared for the readers of every
      LayerNorm: the next layer's heads after a post-norm layer, the MLP after the attention
      LayerNorm of a post-norm layer, and the heads and MLP inside a pre-norm layer.
    * **LayerNorm normal shift**: the LayerNorm's shift ``s`` moved by ``delta`` (softmax: a key's
      constant shift cancels), and the first head's ``V`` by ``-u w^T / c`` (``w, c`` its normal,
      ``u = sum_h V_h delta``, plus ``delta`` where a residual carries the output on): the heads'
      output, residual included, is unchanged, no bias needed. For ``delta`` with ``Q^T delta = 0``
      for every head the values alone; for any other ``delta`` (each unit vector) the queries take
      back their shift along the normal too, ``Q_h -= w (Q_h^T delta)^T / c`` (at ``d = 3, r = 2``
      these are the two directions the null space of ``Q^T`` misses). Summed heads with values;
      kept where independent of the rest.
    * **LayerNorm shift carried** (two consecutive pre-norm layers with skip, one summed softmax head
      each, square invertible values, no biases or MLP): layer ``i``'s LayerNorm shift moved by
      ``delta`` with ``V_i delta = 1`` moves every value, hence the attention output and the
      residual stream, by ``1``, which layer ``i + 1``'s LayerNorm removes from its input; layer
      ``i + 1``'s shift moved by ``epsilon`` with ``V_(i+1) epsilon = -1`` takes it back out of the
      stream. Each layer's queries take back their shift ``Q^T delta`` along the LayerNorm's normal
      (``Q -= w (Q^T delta)^T / c``, ``w^T y = c`` for every output); the keys' shift is cancelled
      by the softmax. Affine like the bias transfer below (value parts on the values, factor parts
      on the factors); kept where independent of the rest.
    * **LayerNorm bias transfer** (affine: its value parts depend on the values, its factor
      parts on the factors): the LayerNorm's shift moved by ``delta`` moves its output by
      ``delta``; every map that reads it takes it back in its bias (``bQ -= delta^T Q``,
      ``bK -= delta^T K`` or a softmax key, ``bV -= V delta``, ``fa -= Fa delta``), and where a
      residual carries the output on, the bias of the sublayer it is added to (``bO``, the first
      head's ``bV``, or the MLP's ``fb``) by ``-delta``. Declared for the same LayerNorms as the
      normals (the next layer's heads only when its residual has such a bias or it has none).

    * **interface bias shift**: at the output of a layer with an output bias (``bV`` of its first head,
      ``bO`` or the MLP's ``fb``) read by the next layer's biased heads alone (no skip or norm on either
      side): the bias moved by ``h`` moves every token by ``h``, which the next layer's biases take back
      (``bQ -= h^T Q``, ``bK -= h^T K`` or a softmax key, ``bV -= V h``); affine like the LayerNorm
      bias transfer; kept where independent of the rest;
    * **norm rotation**: after a post-norm layer without skip whose norm commutes with rotations (RMSNorm)
      and is read by the next layer's heads alone, ``R = I + A`` (``A`` antisymmetric, ``d (d - 1) / 2``) on
      the maps that write the norm's input and ``(G R G^-1)^-1`` on the readers (:func:`_rotations`);
    * **LayerNorm shift through the final norm** (:func:`~symattn.model.parts.final_norm.final_norm_shifts`):
      a pre-norm stack whose every norm, the final one included, removes the mean: the writers of the
      residual stream moved by ``1 w^T`` and their biases by ``1``;
    * **MLP polynomial redundancy** (polynomial activations): the MLP is a polynomial map ``p`` of its
      input; every null vector of the exact Jacobian of ``p``'s coefficients in the MLP's parameters
      is a kernel vector (:func:`_mlp_redundancy`); kept where independent of the rest (the MLP
      scalings lie in it).

    Each is verified as an exact kernel vector where it is used, like every declared one.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    theta : mapping
        The native point.

    Returns
    -------
    list of Symmetry
        The directions of the kinds above, in layer order.
    """
    theta = point_of(theta)
    out = []
    for i, layer in enumerate(arch.layers, 1):
        parts = layer.layer_blocks(i)
        if layer.post_norm and layer.norm_part.removes_mean:
            for blocks in layer.head_blocks(i):
                writer = blocks["O" if "O" in blocks else "V"] if ("O" in blocks or "V" in blocks) else None
                if writer is not None:
                    shape = arch.shape(writer)
                    for k in range(shape[1]):
                        out.append(Symmetry("LayerNorm shift", i, writer.head,
                                            flat_vector(arch, {writer.name: _ones_times(shape, k)})))
                bias = _bias(blocks, "V") if "O" not in blocks else None
                if bias is not None:
                    out.append(Symmetry("LayerNorm shift", i, bias.head,
                                        flat_vector(arch, {bias.name: _ones_times(arch.shape(bias), 0)})))
            for name in ("bO",) + (("mlp.out", "mlp.out_bias") if layer.mlp else ()):
                if name in parts:
                    shape = arch.shape(parts[name])
                    for k in range(shape[1]):
                        out.append(Symmetry("LayerNorm shift", i, None,
                                            flat_vector(arch, {parts[name].name: _ones_times(shape, k)})))
        for blocks, head in zip(layer.head_blocks(i), layer.heads) if layer.bias_part.present else ():
            # the bias part's directions on bK (asked only with biases: exponential may load sympy)
            for E in layer.bias_part.key_bias_directions(head.rank, layer.normalizer.exponential):
                bk = blocks["bK"]
                out.append(Symmetry("softmax key bias", i, bk.head, flat_vector(arch, {bk.name: E})))
        out += _transfers(arch, theta, i, layer, parts)
        if i < arch.depth:
            out += _interface_bias_shifts(arch, theta, i, layer)
        if layer.post_norm and i < arch.depth and not arch.layers[i].residual and not arch.layers[i].pre_norm:
            out += _norm_interface(arch, theta, i, parts) + _rotations(arch, theta, i, layer, parts)
        elif layer.post_norm and i < arch.depth and arch.layers[i].post_norm and \
                arch.layers[i].norm_part.removes_mean:  # the next norm removes the multiple of 1
            out += _norm_interface(arch, theta, i, parts, "mean")
        if layer.pre_norm:
            out += _pre_norm_interface(arch, theta, i, layer, parts)
            if i < arch.depth:
                out += _carried_shifts(arch, theta, i)
        if layer.post_norm and layer.mlp:  # LN_A is read by the MLP alone (and carried into LN_F)
            out += _interfaces(arch, theta, i, parts["attn_norm.gain"].name, _shift(parts, "attn_norm"), layer.width_out,
                               {parts["mlp.in"].name: "col"}, "mean" if layer.residual else "gl")
        for g, s, readers, carried, softmax, transfers in _read_layer_norms(arch, i, layer, parts):
            # a normal needs each reader's bias, except a softmax key's; a transfer needs all of them
            out += _plane_normals(arch, theta, i, g, s, [r for r in readers if r[2] is not None or
                                                         (r[0].role == "K" and softmax)])
            if transfers:
                out += _shift_transfers(arch, theta, i, s, readers, carried, softmax)
        for g, s, heads, residual in _head_layer_norms(arch, i, layer, parts):
            out += _normal_shifts(arch, theta, i, g, s, heads, residual)
        if layer.mlp and layer.activation.is_polynomial:
            out += _mlp_redundancy(arch, theta, i, layer, parts)
        shifted = layer.activation.shifted_monomial if layer.mlp else None
        if shifted is not None:
            degree, x0, e = shifted
            Fa, fa, Fb, fb = (parts[p].name for p in MLP_PARTS)
            for j in range(layer.mlp):
                move = {n: np.full(theta[n].shape, Fraction(0), dtype=object) for n in (Fa, fa, Fb, fb)}
                move[Fa][j, :], move[fa][j, :] = theta[Fa][j, :], theta[fa][j, :] - x0
                move[Fb][:, j] = -degree * theta[Fb][:, j]
                move[fb][:, 0] = degree * e * theta[Fb][:, j]
                out.append(Symmetry("MLP scaling", i, None, flat_vector(arch, move)))
    out += [Symmetry("LayerNorm shift", i, head, flat_vector(arch, move)) for i, head, move in final_norm_shifts(arch)]
    return out
