"""Whitelist parsers: untrusted text to exact objects, nothing executed.

Scope: every string a user (or a file from a stranger) hands symattn that
stands for mathematics goes through this module: normalizer expressions in
``s`` (:func:`parse_expression`) and exact rational matrices
(:func:`parse_matrix`). Both parse with :mod:`ast` and walk the tree
themselves, admitting only a fixed set of node kinds, and build the sympy
expression or the :class:`~fractions.Fraction` entries directly. No ``eval``,
no ``sympify`` of text, no attribute access, no subscripts, no keywords, no
names outside a whitelist. Sizes are bounded before anything is built
(:data:`MAX_LENGTH` characters, :data:`MAX_NODES` tree nodes,
:data:`MAX_DEPTH` nesting, :data:`MAX_CALL_NESTING` nested function calls,
:data:`MAX_BITS` bits for any exact number, computed or written), so a
hostile string is refused with one :class:`~symattn.core.errors.SymattnError`
naming what was refused, in microseconds, never after a long computation.

Caveat: an admitted expression can still be expensive to *expand* (a Taylor
series of a deep composition); :mod:`symattn.core.limits` bounds that by a time
budget where the expansion happens.

Examples
--------
>>> parse_expression("exp(s^2 + s^3)")
exp(s**3 + s**2)
>>> parse_expression("1 + tanh(s)/2")
tanh(s)/2 + 1
>>> parse_expression("0.5*s + 1")
s/2 + 1
>>> parse_expression("__import__('os').getcwd()")
Traceback (most recent call last):
...
symattn.core.errors.SymattnError: refused "__import__('os').getcwd" in ...: allowed are numbers, s, pi, E, + - * / ** ^ and the functions Abs, abs, acos, ...
>>> parse_matrix('[[1, -2], [0, "1/3"]]')
[[Fraction(1, 1), Fraction(-2, 1)], [Fraction(0, 1), Fraction(1, 3)]]
"""

from __future__ import annotations

import ast
import math
import numbers
import re
from fractions import Fraction

import sympy

from symattn.core.errors import SymattnError

__all__ = [
    "FUNCTIONS", "MAX_BITS", "MAX_CALL_NESTING", "MAX_DEPTH", "MAX_LENGTH", "MAX_MATRIX_ENTRIES",
    "MAX_NODES", "MAX_RATIONAL_LENGTH", "parse_expression", "parse_matrix", "parse_rational",
]

#: The functions an expression may call, by the name it is written with.
FUNCTIONS = {
    "exp": sympy.exp, "log": sympy.log, "sqrt": sympy.sqrt,
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan,
    "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh, "sech": sympy.sech,
    "asin": sympy.asin, "acos": sympy.acos, "atan": sympy.atan,
    "asinh": sympy.asinh, "acosh": sympy.acosh, "atanh": sympy.atanh,
    "erf": sympy.erf, "Abs": sympy.Abs, "abs": sympy.Abs,
}
_CONSTANTS = {"pi": sympy.pi, "E": sympy.E}

MAX_LENGTH = 1000  #: characters of one expression or matrix
MAX_NODES = 400  #: syntax-tree nodes of one expression
MAX_DEPTH = 40  #: nesting depth of the syntax tree
MAX_CALL_NESTING = 6  #: function calls nested inside each other, e.g. exp(exp(s)) is 2
MAX_BITS = 1024  #: bits of any exact number written or computed while parsing
MAX_EXPONENT = 1000  #: |numerator| and denominator of a rational exponent
MAX_MATRIX_ENTRIES = 10_000  #: entries of one parsed matrix
MAX_RATIONAL_LENGTH = 400  #: characters of one written rational (:func:`parse_rational`)

#: A written rational: a decimal (optionally with an exponent) or a quotient of integers.
_RATIONAL = re.compile(r"([+-]?)(?:(\d+)/(\d+)|(\d+)?(?:\.(\d*))?(?:[eE]([+-]?\d+))?)")

_ALLOWED = ("numbers, s, pi, E, + - * / ** ^ and the functions "
            + ", ".join(sorted(FUNCTIONS, key=str.lower)))


def _tree(text: str, what: str) -> ast.AST:
    """The syntax tree of ``text`` after the size checks common to both parsers."""
    if not isinstance(text, str):
        raise SymattnError(f"{what} must be text, not {type(text).__name__}")
    text = text.strip()
    if not text:
        raise SymattnError(f"empty {what}")
    if len(text) > MAX_LENGTH:
        raise SymattnError(f"{what} is {len(text)} characters long; the limit is {MAX_LENGTH}")
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise SymattnError(f"cannot parse {what} {text!r}: check the brackets and operators") from None
    nodes = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES or depth > MAX_DEPTH:
            raise SymattnError(f"{what} {text[:60]!r}... is too large (more than {MAX_NODES} "
                               f"terms or nested deeper than {MAX_DEPTH})")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return tree


def _bits(q: Fraction | sympy.Rational) -> int:
    if isinstance(q, Fraction):
        return max(q.numerator.bit_length(), q.denominator.bit_length())
    return max(int(q.p).bit_length(), int(q.q).bit_length())


def _literal(node: ast.Constant, text: str) -> sympy.Rational:
    """An exact rational from a numeric literal, using its written digits."""
    value = node.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SymattnError(f"refused literal {value!r} in {text!r}: allowed are {_ALLOWED}")
    written = ast.get_source_segment(text, node) or repr(value)
    try:
        q = Fraction(written.replace("_", ""))
    except (ValueError, ZeroDivisionError, OverflowError):
        raise SymattnError(f"cannot read the number {written!r} in {text!r}") from None
    if _bits(q) > MAX_BITS:
        raise SymattnError(f"the number {written[:40]!r} in {text!r} has more than {MAX_BITS} bits")
    return sympy.Rational(q.numerator, q.denominator)


def parse_rational(value: "str | int | Fraction", what: str = "number", low: "Fraction | int | None" = None,
                   high: "Fraction | int | None" = None, max_bits: int = MAX_BITS) -> Fraction:
    """An exact rational from untrusted text (``"1/100000"``, ``"1e-5"``, ``"0.25"``), an ``int``
    or a :class:`~fractions.Fraction`, range-checked **before** it is converted.

    The written size is checked first (at most :data:`MAX_RATIONAL_LENGTH` characters, an
    exponent and digit counts that keep the numerator and denominator below ``max_bits``
    bits), so ``1e-100000`` or ``1e999999999`` is refused in microseconds, never built.

    Parameters
    ----------
    value : str, int or Fraction
        The number (a float is refused: write the rational it stands for).
    what : str
        The name used in messages (``"LayerNorm eps"``).
    low, high : rational, optional
        The closed range the value must lie in.
    max_bits : int
        Bits of the numerator and denominator at most.

    Returns
    -------
    Fraction

    Raises
    ------
    SymattnError
        For anything else, in one line naming ``what``
        (:class:`~symattn.core.validate.BadType` for a wrong type).

    Examples
    --------
    >>> parse_rational("1e-5"), parse_rational(" 3/4 "), parse_rational(2)
    (Fraction(1, 100000), Fraction(3, 4), Fraction(2, 1))
    >>> parse_rational("1e-100000", "eps")
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: eps '1e-100000' has more than 1024 bits (about 308 decimal digits at most)
    """
    from symattn.core.validate import BadType

    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = int(value)
    elif isinstance(value, numbers.Rational) and not isinstance(value, Fraction):  # sympy's, say
        value = Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, bool) or not isinstance(value, (str, int, Fraction)):
        raise BadType(f"{what} must be a rational written as text (like \"1/100000\" or \"1e-5\"), "
                      f"not {type(value).__name__}")
    limit = f"more than {max_bits} bits (about {int(max_bits * math.log10(2))} decimal digits at most)"
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise SymattnError(f"{what} is empty; give a rational like 1/100000 or 1e-5")
        if len(text) > MAX_RATIONAL_LENGTH:
            raise SymattnError(f"{what} is {len(text)} characters long; the limit is {MAX_RATIONAL_LENGTH}")
        match = _RATIONAL.fullmatch(text)
        if match is None or not any(match.group(i) for i in (2, 4, 5)):
            raise SymattnError(f"{what} must be a rational like 1/100000 or 1e-5, got {text[:60]!r}")
        _, num, den, whole, fraction, exponent = match.groups()
        if num is not None:
            digits = max(len(num.lstrip("0")), len(den.lstrip("0")))
        else:
            if exponent is not None and len(exponent.lstrip("+-").lstrip("0")) > 6:
                raise SymattnError(f"{what} {text[:60]!r} has {limit}")
            shift = int(exponent or 0) - len(fraction or "")
            digits = len((whole or "").lstrip("0")) + len(fraction or "") + abs(shift)
        if digits * math.log2(10) > max_bits + 4:  # the bound before any big number is built
            raise SymattnError(f"{what} {text[:60]!r} has {limit}")
        if num is not None and int(den) == 0:
            raise SymattnError(f"{what} {text[:60]!r} divides by zero")
        q = Fraction(text)
    else:
        if isinstance(value, int) and value.bit_length() > max_bits:
            raise SymattnError(f"{what} has {limit}")
        q = Fraction(value)
    if _bits(q) > max_bits:  # a number is never printed here: str() of a huge one fails
        raise SymattnError(f"{what} {value[:60]!r} has {limit}" if isinstance(value, str) else f"{what} has {limit}")
    if (low is not None and q < low) or (high is not None and q > high):
        bounds = f"in [{low}, {high}]" if low is not None and high is not None else \
            (f">= {low}" if low is not None else f"<= {high}")
        raise SymattnError(f"{what} must be a rational {bounds}, got {q}")
    return q


def _power(base: sympy.Expr, exponent: sympy.Expr, text: str) -> sympy.Expr:
    """``base ** exponent`` after checking that the result stays small."""
    if exponent.is_Rational:
        if abs(exponent.p) > MAX_EXPONENT or exponent.q > MAX_EXPONENT:
            raise SymattnError(f"the exponent {exponent} in {text!r} is out of range "
                               f"(at most {MAX_EXPONENT} in numerator and denominator)")
        if base.is_Rational and _bits(base) * abs(int(exponent.p)) > MAX_BITS:
            raise SymattnError(f"the power {base}**{exponent} in {text!r} has more than "
                               f"{MAX_BITS} bits")
    elif exponent.is_number and base.is_Rational and abs(base) > 1:
        bound = abs(exponent).evalf(15)
        if not bound.is_finite or bound * _bits(base) > MAX_BITS:
            raise SymattnError(f"the power in {text!r} is too large")
    return base ** exponent


_BINARY = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


def _build(node: ast.AST, text: str, variables: dict[str, sympy.Symbol], calls: int) -> sympy.Expr:
    if isinstance(node, ast.Constant):
        return _literal(node, text)
    if isinstance(node, ast.Name):
        if node.id in variables:
            return variables[node.id]
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise SymattnError(f"refused {node.id!r} in {text!r}: allowed are {_ALLOWED}")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        value = _build(node.operand, text, variables, calls)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and isinstance(node.op, _BINARY):
        left = _build(node.left, text, variables, calls)
        right = _build(node.right, text, variables, calls)
        if isinstance(node.op, ast.Pow):
            return _power(left, right, text)
        if isinstance(node.op, ast.Div):
            if right == 0:
                raise SymattnError(f"division by zero in {text!r}")
            result = left / right
        elif isinstance(node.op, ast.Mult):
            result = left * right
        else:
            result = left + right if isinstance(node.op, ast.Add) else left - right
        if result.is_Rational and _bits(result) > MAX_BITS:
            raise SymattnError(f"a number in {text!r} has more than {MAX_BITS} bits")
        return result
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in FUNCTIONS:
            shown = name or ast.get_source_segment(text, node.func) or "call"
            raise SymattnError(f"refused {shown!r} in {text!r}: allowed are {_ALLOWED}")
        if node.keywords or len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
            raise SymattnError(f"{name} takes exactly one argument in {text!r}")
        if calls + 1 > MAX_CALL_NESTING:
            raise SymattnError(f"{text[:60]!r} nests more than {MAX_CALL_NESTING} function calls")
        return FUNCTIONS[name](_build(node.args[0], text, variables, calls + 1))
    what = type(node).__name__
    shown = ast.get_source_segment(text, node) or what
    raise SymattnError(f"refused {shown[:40]!r} ({what}) in {text!r}: allowed are {_ALLOWED}")


def parse_expression(text: str, variables: tuple[str, ...] = ("s",)) -> sympy.Expr:
    """A sympy expression from untrusted text, by a whitelist walk of its syntax tree.

    Parameters
    ----------
    text : str
        Numbers (integers, decimals read exactly: ``0.1`` is 1/10), the names in
        ``variables``, ``pi``, ``E``, ``+ - * /``, ``**`` or ``^`` for powers, and
        one-argument calls of :data:`FUNCTIONS`.
    variables : tuple of str
        The admitted variable names (symbols of the same names).

    Returns
    -------
    sympy.Expr

    Raises
    ------
    SymattnError
        For anything else, naming what was refused, or for a size beyond the
        module's limits.

    Examples
    --------
    >>> parse_expression("2^s")
    2**s
    >>> parse_expression("10**10**10")
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: the exponent 10000000000 in '10**10**10' is out of range (at most 1000 in numerator and denominator)
    """
    if isinstance(text, str):
        text = text.replace("^", "**")  # no string literals are admitted, so this is exact
    tree = _tree(text, "expression")
    symbols = {name: sympy.Symbol(name) for name in variables}
    return _build(tree, text.strip(), symbols, 0)


def _entry(node: ast.AST, text: str) -> Fraction:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _entry(node.operand, text)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        den = _entry(node.right, text)
        if den == 0:
            raise SymattnError(f"division by zero in matrix {text!r}")
        return _entry(node.left, text) / den
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise SymattnError(f"matrix entry {v!r} in {text!r} is not a number")
        if isinstance(v, float):
            written = ast.get_source_segment(text, node) or repr(v)
            raise SymattnError(f"float entry {written} in {text!r}: give exact rationals, "
                               "e.g. 3/10 or \"3/10\"")
        if isinstance(v, str):
            if len(v) > 200:
                raise SymattnError(f"matrix entry {v[:20]!r}... in {text!r} is too long")
            try:
                value = Fraction(v.strip())
            except (ValueError, ZeroDivisionError):
                raise SymattnError(f"matrix entry {v!r} in {text!r} is not a rational such as "
                                   "\"1/3\"") from None
        else:
            value = Fraction(v)
        if _bits(value) > MAX_BITS:
            raise SymattnError(f"a matrix entry in {text[:60]!r} has more than {MAX_BITS} bits")
        return value
    raise SymattnError(f"cannot read matrix entry in {text!r}: use integers or rationals like 1/3")


def parse_matrix(text: str) -> list[list[Fraction]]:
    """An exact rational matrix from ``[[1,0],[0,"1/3"]]``-style text.

    Entries are integers, quotients of integers (``1/3``) or quoted rationals
    (``"1/3"``); floats are refused (write the rational they stand for).

    Parameters
    ----------
    text : str
        Untrusted text: its size and nesting are bounded, nothing is evaluated.

    Returns
    -------
    list of list of Fraction
        The rows, of equal length.

    Raises
    ------
    BadType
        If ``text`` is not a string.
    SymattnError
        For text that is not a rectangular matrix of exact rationals (a float, a ragged row,
        a string that is not a rational, too large).

    Examples
    --------
    >>> parse_matrix("[[1/2]]")
    [[Fraction(1, 2)]]
    >>> parse_matrix("[[1e999, 0]]")
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: float entry 1e999 in '[[1e999, 0]]': give exact rationals, e.g. 3/10 or "3/10"
    """
    if not isinstance(text, str):
        from symattn.core.validate import BadType

        raise BadType(f"matrix must be text such as '[[1,0],[0,1]]', not {type(text).__name__}")
    if len(text.strip()) > MAX_LENGTH * 100:
        raise SymattnError(f"matrix text is {len(text)} characters long; the limit is "
                           f"{MAX_LENGTH * 100}")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise SymattnError(f"cannot parse matrix {text[:80]!r}; write nested lists such as "
                           "[[1,0],[0,1/3]]") from None
    if not isinstance(tree, ast.List) or not tree.elts or not all(
            isinstance(row, ast.List) for row in tree.elts):
        raise SymattnError(f"matrix {text[:80]!r} must be a nonempty list of rows, e.g. [[1,0],[0,1]]")
    lists = [row for row in tree.elts if isinstance(row, ast.List)]  # all of them (checked above)
    if sum(len(row.elts) for row in lists) > MAX_MATRIX_ENTRIES:
        raise SymattnError(f"matrix {text[:40]!r}... has more than {MAX_MATRIX_ENTRIES} entries")
    rows = [[_entry(e, text) for e in row.elts] for row in lists]
    if len({len(row) for row in rows}) != 1 or not rows[0]:
        raise SymattnError(f"matrix {text[:80]!r} has rows of different lengths")
    return rows
