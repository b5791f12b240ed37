"""Matrix helpers of the naive reference: lists of rows of ring elements, scalar ring operations only.

The parts' :meth:`reference` formulas and :mod:`symattn.model.reference` share these (a second code
path beside the graph: no algebra, no numpy). ``R`` is the scalar ring (``zero``, ``add``, ``mul``).
"""

from __future__ import annotations

__all__ = ["product", "plus", "transpose", "per_token"]


def product(R, A: list, B: list) -> list:
    """The matrix product ``A B``, entry by entry.

    Parameters
    ----------
    R : ring
        The scalar ring (its ``zero``, ``add`` and ``mul`` are used).
    A, B : list of list
        Matrices as lists of rows (``A``'s width is ``B``'s height).

    Returns
    -------
    list of list
        ``A B``.
    """
    out = []
    for i in range(len(A)):
        row = []
        for j in range(len(B[0])):
            acc = R.zero()
            for k in range(len(B)):
                acc = R.add(acc, R.mul(A[i][k], B[k][j]))
            row.append(acc)
        out.append(row)
    return out


def plus(R, A: list, B: list) -> list:
    """The entrywise sum ``A + B`` of two matrices of one shape (``R.add(a, b)``, ``a`` from ``A``).

    Parameters
    ----------
    R : ring
        The scalar ring (its ``add``).
    A, B : list of list
        Matrices of one shape.

    Returns
    -------
    list of list
    """
    return [[R.add(a, b) for a, b in zip(ra, rb)] for ra, rb in zip(A, B)]


def transpose(A: list) -> list:
    """The transpose of a matrix given as a list of rows.

    Parameters
    ----------
    A : list of list
        A matrix.

    Returns
    -------
    list of list
    """
    return [list(col) for col in zip(*A)]


def per_token(R, X: list, column: list) -> list:
    """``X + column``: a ``rows x 1`` block added to every token (column) of ``X``.

    Parameters
    ----------
    R : ring
        The scalar ring (its ``add``).
    X : list of list
        The tokens (columns).
    column : list of list
        A ``rows x 1`` block.

    Returns
    -------
    list of list
    """
    return [[R.add(x, column[k][0]) for x in row] for k, row in enumerate(X)]
