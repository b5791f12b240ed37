"""Argument checks at a boundary: one line naming the argument and what it must be.

Public functions and the readers of untrusted data (sweep specs, store rows,
model files) check what they are given here, before any work, instead of
failing deep inside with an unrelated error. A wrong *type* raises
:class:`BadType` (a :class:`TypeError` and a
:class:`~symattn.core.errors.SymattnError`), a wrong *value*
:class:`~symattn.core.errors.SymattnError` (a :class:`ValueError`); the command
line reports either as one line with exit status 2.

Scope: plain checks of Python values (integers, reals, strings, choices, lists,
mappings, nesting depth) and :func:`read_text_file`, which reads untrusted text
from a regular file of bounded size only (never a FIFO, a device or a folder).
Booleans are not integers here (``True`` is refused where a count is wanted),
and values are shown shortened in messages (a huge integer by its size).

Examples
--------
>>> require_int(3, "depth", low=1)
3
>>> require_int("2", "depth")
Traceback (most recent call last):
...
symattn.core.validate.BadType: depth must be an integer, got str '2'
>>> require_real(float("nan"), "timeout", low=0)
Traceback (most recent call last):
...
symattn.core.errors.SymattnError: timeout must be a finite number, got float nan
>>> nesting_depth({"a": [1, [2, 3]]})
3
"""

from __future__ import annotations

import math
import numbers
import os
import stat
from collections.abc import Mapping
from typing import Any, Iterable

from symattn.core.errors import SymattnError

__all__ = ["BadType", "shown", "require_type", "require_int", "require_real", "require_str",
           "require_choice", "require_list", "require_mapping", "require_path", "nesting_depth",
           "require_nesting", "read_text_file"]


class BadType(SymattnError, TypeError):
    """An argument of the wrong type (a :class:`TypeError`; bad input, CLI exit status 2)."""


def shown(value: Any, limit: int = 60) -> str:
    """``value`` for a message: its type and a shortened repr (a huge integer by its size).

    Parameters
    ----------
    value : object
    limit : int, optional
        The longest repr shown.

    Returns
    -------
    str

    Examples
    --------
    >>> shown(10**400)
    'int of about 401 digits'
    >>> len(shown("x" * 100))
    64
    """
    if isinstance(value, bool):
        return f"bool {value}"
    if isinstance(value, int) and value.bit_length() > 100:
        return f"int of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    try:
        text = repr(value)
    except Exception:  # a repr that fails is itself hostile input
        text = "<unprintable>"
    if len(text) > limit:
        text = text[:limit - 3] + "..."
    return f"{type(value).__name__} {text}"


def require_type(value: Any, name: str, types: "type | tuple[type, ...]", expected: str) -> Any:
    """``value`` if it is an instance of ``types`` (never a bool unless bool is named), else :class:`BadType`.

    Parameters
    ----------
    value : object
    name : str
        The argument's name, for the message.
    types : type or tuple of type
    expected : str
        What was expected, in words (``"a list of rows"``).

    Returns
    -------
    object
        ``value``.

    Raises
    ------
    BadType
        If ``value`` is not an instance of ``types``.

    Examples
    --------
    >>> require_type([1], "widths", list, "a list")
    [1]
    """
    ok = isinstance(value, types) and not (isinstance(value, bool) and not _names_bool(types))
    if not ok:
        raise BadType(f"{name} must be {expected}, got {shown(value)}")
    return value


def _names_bool(types: "type | tuple[type, ...]") -> bool:
    return bool in (types if isinstance(types, tuple) else (types,))


def require_int(value: Any, name: str, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an ``int`` (a Python or NumPy integer, never a bool) within ``[low, high]``.

    Parameters
    ----------
    value : object
    name : str
        The argument's name, for the message.
    low, high : int, optional
        The bounds (inclusive; None: none).

    Returns
    -------
    int

    Raises
    ------
    BadType
        If ``value`` is not an integer (a bool, a float).
    SymattnError
        If it lies outside ``[low, high]``.

    Examples
    --------
    >>> require_int(5, "tokens", 2, 4)
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: tokens must be an integer in [2, 4], got int 5
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise BadType(f"{name} must be an integer, got {shown(value)}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise SymattnError(f"{name} must be an integer {_range(low, high)}, got {shown(value)}")
    return value


def require_real(value: Any, name: str, low: float | None = None, high: float | None = None,
                 open_low: bool = False) -> float:
    """``value`` as a finite ``float`` within ``[low, high]`` (``(low, high]`` with ``open_low``).

    Parameters
    ----------
    value : object
    name : str
        The argument's name, for the message.
    low, high : float, optional
        The bounds (None: none).
    open_low : bool, optional
        Exclude ``low``.

    Returns
    -------
    float

    Raises
    ------
    BadType
        If ``value`` is not a number.
    SymattnError
        If it is not finite or lies outside the bounds.

    Examples
    --------
    >>> require_real(1e308, "timeout", 0, 86400, open_low=True)
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: timeout must be a number in (0, 86400], got float 1e+308
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise BadType(f"{name} must be a number, got {shown(value)}")
    try:
        number = float(value)
    except (OverflowError, ValueError):
        raise SymattnError(f"{name} must be a finite number, got {shown(value)}") from None
    if not math.isfinite(number):
        raise SymattnError(f"{name} must be a finite number, got {shown(value)}")
    below = low is not None and (number <= low if open_low else number < low)
    if below or (high is not None and number > high):
        left = "(" if open_low else "["
        raise SymattnError(f"{name} must be a number in {left}{low:g}, {high:g}], got {shown(value)}"
                           if low is not None and high is not None else
                           f"{name} must be a number {_range(low, high)}, got {shown(value)}")
    return number


def _range(low, high) -> str:
    if low is not None and high is not None:
        return f"in [{low}, {high}]"
    return f">= {low}" if low is not None else f"<= {high}"


def require_str(value: Any, name: str, max_length: int = 1000) -> str:
    """``value`` if it is a string of at most ``max_length`` characters without NUL or newlines.

    Parameters
    ----------
    value : object
    name : str
        The argument's name, for the message.
    max_length : int, optional

    Returns
    -------
    str

    Raises
    ------
    BadType
        If ``value`` is not a string.
    SymattnError
        If it is too long or holds NUL or a line break.

    Examples
    --------
    >>> require_str("exp", "normalizer")
    'exp'
    """
    if not isinstance(value, str):
        raise BadType(f"{name} must be a string, got {shown(value)}")
    if len(value) > max_length:
        raise SymattnError(f"{name} is {len(value)} characters long, beyond the limit {max_length}")
    if any(c in value for c in "\x00\n\r"):
        raise SymattnError(f"{name} must not hold NUL or line breaks, got {shown(value)}")
    return value


def require_choice(value: Any, name: str, choices: Iterable) -> Any:
    """``value`` if it is one of ``choices`` (compared by type and value).

    Parameters
    ----------
    value : object
    name : str
        The argument's name, for the message.
    choices : iterable

    Returns
    -------
    object
        ``value``.

    Raises
    ------
    SymattnError
        If ``value`` is not one of ``choices``.

    Examples
    --------
    >>> require_choice("exact", "method", ("modular", "exact"))
    'exact'
    """
    choices = tuple(choices)
    if not any(type(value) is type(c) and value == c for c in choices):
        raise SymattnError(f"{name} must be one of {', '.join(map(str, choices))}, got {shown(value)}")
    return value


def require_list(value: Any, name: str, max_length: int, min_length: int = 0) -> list:
    """``value`` if it is a list (or tuple) of ``min_length`` to ``max_length`` items, as a list.

    Parameters
    ----------
    value : object
    name : str
        The argument's name, for the message.
    max_length : int
    min_length : int, optional

    Returns
    -------
    list

    Raises
    ------
    BadType
        If ``value`` is not a list or tuple.
    SymattnError
        If its length is out of range.

    Examples
    --------
    >>> require_list([1, 2], "seeds", 10, 1)
    [1, 2]
    """
    if not isinstance(value, (list, tuple)):
        raise BadType(f"{name} must be a list, got {shown(value)}")
    if not min_length <= len(value) <= max_length:
        raise SymattnError(f"{name} must hold {min_length} to {max_length} items, got {len(value)}")
    return list(value)


def require_mapping(value: Any, name: str) -> Mapping:
    """``value`` if it is a mapping (a table, a JSON object).

    Parameters
    ----------
    value : object
    name : str
        The argument's name, for the message.

    Returns
    -------
    Mapping

    Raises
    ------
    BadType
        If ``value`` is not a mapping.

    Examples
    --------
    >>> require_mapping({}, "limits")
    {}
    """
    if not isinstance(value, Mapping):
        raise BadType(f"{name} must be a table, got {shown(value)}")
    return value


def require_path(value: Any, name: str) -> "os.PathLike | str":
    """``value`` if it names a file: a ``str`` or :class:`os.PathLike` without NUL characters.

    Parameters
    ----------
    value : object
    name : str
        The argument's name, for the message.

    Returns
    -------
    str or os.PathLike

    Raises
    ------
    BadType
        If ``value`` is not a ``str`` or :class:`os.PathLike`.
    SymattnError
        If it is empty or holds NUL.

    Examples
    --------
    >>> require_path(3, "store")
    Traceback (most recent call last):
    ...
    symattn.core.validate.BadType: store must be a path (str or os.PathLike), got int 3
    """
    if not isinstance(value, (str, os.PathLike)) or isinstance(os.fspath(value), bytes):
        raise BadType(f"{name} must be a path (str or os.PathLike), got {shown(value)}")
    if not os.fspath(value) or "\x00" in os.fspath(value):
        raise SymattnError(f"{name} must be a non-empty path without NUL characters")
    return value


def nesting_depth(value: Any, limit: int = 10_000) -> int:
    """The depth of nested lists, tuples and mappings in ``value`` (a scalar has 0), without
    recursion; counting stops at ``limit + 1``.

    Parameters
    ----------
    value : object
    limit : int, optional
        Counting stops past it.

    Returns
    -------
    int

    Examples
    --------
    >>> nesting_depth([[[]]]), nesting_depth(3)
    (3, 0)
    """
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, tuple, Mapping)):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            stack.extend((v, depth) for v in (item.values() if isinstance(item, Mapping) else item))
    return deepest


def require_nesting(value: Any, name: str, limit: int) -> Any:
    """``value`` if its lists and tables nest at most ``limit`` deep.

    Parameters
    ----------
    value : object
    name : str
        The argument's name, for the message.
    limit : int
        The deepest nesting allowed.

    Returns
    -------
    object
        ``value``.

    Raises
    ------
    SymattnError
        If ``value`` nests deeper.

    Examples
    --------
    >>> require_nesting([[[[1]]]], "the spec", 3)
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: the spec nests lists or tables more than 3 deep
    """
    if nesting_depth(value, limit) > limit:
        raise SymattnError(f"{name} nests lists or tables more than {limit} deep")
    return value


def read_text_file(path: "str | os.PathLike", what: str, max_bytes: int) -> str:
    """The UTF-8 text of the regular file ``path``, of at most ``max_bytes`` bytes.

    The file is opened without blocking and checked on the open descriptor, so
    a FIFO, a device (``/dev/zero``), a socket or a folder is refused before
    anything is read, and at most ``max_bytes + 1`` bytes are ever read.

    Raises
    ------
    SymattnError
        If the file is missing, not a regular file, too large, unreadable or
        not UTF-8 text.

    Parameters
    ----------
    path : str or os.PathLike
    what : str
        What the file is, for the message (``"spec file"``).
    max_bytes : int
        The largest size read.

    Returns
    -------
    str
    """
    shown_path = str(path)[:200]
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise SymattnError(f"no {what} {shown_path!r}") from None
    except (OSError, ValueError, TypeError) as exc:  # unreadable, a folder, or a name with a NUL
        raise SymattnError(f"cannot read the {what} {shown_path!r}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise SymattnError(f"the {what} {shown_path!r} is {kind}; give a regular file")
        if info.st_size > max_bytes:
            raise SymattnError(f"the {what} {shown_path!r} is larger than {max_bytes} bytes")
        chunks, total = [], 0
        while total <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise SymattnError(f"the {what} {shown_path!r} is larger than {max_bytes} bytes")
    except OSError as exc:
        raise SymattnError(f"cannot read the {what} {shown_path!r}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SymattnError(f"the {what} {shown_path!r} is not UTF-8 text (byte {exc.start})") from None
