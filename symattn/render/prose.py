r"""The prose of a derivation: words, inline math and literal code.

Statements, step texts, check labels, notes and case descriptions are prose:
plain words with inline math between single dollars and literal code (a
command, an option, a keyword such as ``certified``) between double
backquotes. :func:`segments` splits prose into those three kinds of
segment; each printer (text, LaTeX, reStructuredText, HTML, Markdown) renders
every kind its own way, so no printer shows another format's markup.

Examples
--------
>>> segments("kind ``certified``: $\\beta_i = 2k - 1$ here")
[('text', 'kind '), ('code', 'certified'), ('text', ': '), ('math', '\\beta_i = 2k - 1'), ('text', ' here')]
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["TEXT_WIDTH", "plain", "raw_math", "render", "segments"]

#: Longest one-line text rendering of a computed value.
TEXT_WIDTH = 200

_SEGMENT = re.compile(r"\$([^$]*)\$|``(.+?)``")


def segments(text: str) -> list[tuple[str, str]]:
    """Split prose into ``("text" | "math" | "code", content)`` segments, in order.

    Parameters
    ----------
    text : str
        Prose. An unmatched dollar or pair of backquotes stays text.

    Returns
    -------
    list of (str, str)
        Empty segments are left out; newlines inside text become spaces.

    Examples
    --------
    >>> segments("a $x$ b")
    [('text', 'a '), ('math', 'x'), ('text', ' b')]
    >>> segments("costs $5")
    [('text', 'costs $5')]
    """
    out: list[tuple[str, str]] = []
    position = 0
    for match in _SEGMENT.finditer(text):
        if match.start() > position:
            out.append(("text", text[position:match.start()].replace("\n", " ")))
        if match.group(1) is not None:
            out.append(("math", match.group(1)))
        else:
            out.append(("code", match.group(2)))
        position = match.end()
    if position < len(text):
        out.append(("text", text[position:].replace("\n", " ")))
    return [(kind, content) for kind, content in out if content]


def render(text: str, math: Callable[[str], str], code: Callable[[str], str], words: Callable[[str], str]) -> str:
    """Prose in one printer's format: each segment through the function of its kind.

    Examples
    --------
    >>> render("a $x$ ``b``", lambda m: f"<{m}>", lambda c: f"[{c}]", str.upper)
    'A <x> [b]'
    """
    kinds = {"math": math, "code": code, "text": words}
    return "".join(kinds[kind](content) for kind, content in segments(text))


def plain(obj: object) -> str:
    """One line of text for a computed value, cut at :data:`TEXT_WIDTH` characters.

    Examples
    --------
    >>> plain([1,
    ...        2])
    '[1, 2]'
    >>> len(plain("a" * 500))
    200
    """
    text = " ".join(str(obj).split())
    if len(text) > TEXT_WIDTH:
        return text[: TEXT_WIDTH - 3] + "..."
    return text


def raw_math(text: str) -> list[str]:
    """The words of ``text`` outside math and code that look like math (a ``_`` or ``^``).

    Prose writes math between dollars; a subscript or power in plain words is
    a slip that every printer would show as raw markup.

    Examples
    --------
    >>> raw_math("eq. (3): S_A(PX) holds for $M_1$ and ``exp(s^2)``")
    ['S_A(PX)']
    """
    return [word for kind, content in segments(text) if kind == "text"
            for word in content.split() if "_" in word or "^" in word]
