r"""The HTML printer (Jupyter, the docs' notebook pages), with MathJax-ready math.

Inline math is set in ``<span class="math notranslate nohighlight">\(...\)</span>``
and displays in ``<div class="math ...">\[...\]</div>``, as Sphinx's MathJax
setup and Jupyter expect; every text is HTML-escaped. :func:`summary_html`
is the two-column summary that the analyses' results use for their own
``_repr_html_``.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from symattn.render.displays import shown_as_text, step_displays, value_latex
from symattn.render.prose import plain, render

__all__ = ["prose", "summary_html", "to_html"]


def to_html(derivation) -> str:
    r"""Render as HTML: title, statement, steps with displays, the table of checks, the verdict.

    Parameters
    ----------
    derivation : Derivation
        The record to render (:class:`~symattn.render.derivation.Derivation`; not imported here,
        since the derivation imports its printers).

    Examples
    --------
    >>> from symattn.render.derivation import Derivation
    >>> d = Derivation("demo_4", "Demo", "Here $x < 1$.", "exact")
    >>> d.check("eq. (1)", 1, 1)
    >>> html = to_html(d)
    >>> r'<span class="math notranslate nohighlight">\(x &lt; 1\)</span>' in html
    True
    """
    d = derivation
    out = [f"<div class=\"symattn-derivation\"><p><strong>{escape(d.id)}</strong>: "
           f"{prose(d.title)} (<em>{d.kind}</em>)</p>", f"<p>{prose(d.statement)}</p>", "<ol>"]
    for step in d.steps:
        out.append(f"<li><p>{prose(step.text)}</p>")
        out += [f"<div class=\"math notranslate nohighlight\">\\[{escape(display)}\\]</div>"
                for display in step_displays(step)]
        if shown_as_text(step):
            out.append(f"<p>Computed: <code>{escape(plain(step.computed))}</code></p>")
        out.append("</li>")
    out += ["</ol>", "<table><thead><tr><th>#</th><th>check</th><th>computed</th><th>expected</th>"
            "<th>result</th><th>kind</th></tr></thead><tbody>"]
    for number, check in enumerate(d.checks, start=1):
        label = check.label + (f" ({check.note})" if check.note else "")
        out.append(f"<tr><td>{number}</td><td>{prose(label)}</td><td>{_cell(check.computed)}</td>"
                   f"<td>{_cell(check.expected)}</td>"
                   f"<td>{'ok' if check.passed else '<strong>FAIL</strong>'}</td><td>{check.kind}</td></tr>")
    out += ["</tbody></table>", f"<p>Cases checked: {d.cases}. Result: "
            f"<strong>{d.verdict}</strong> ({d.tally} checks).</p></div>"]
    return "\n".join(out)


def summary_html(title: str, rows: Sequence[tuple[str, str]]) -> str:
    r"""A two-column HTML summary with MathJax-ready math, for the ``_repr_html_`` of results.

    Parameters
    ----------
    title : str
        Prose.
    rows : sequence of (str, str)
        Label and value, both prose.

    Returns
    -------
    str
        A ``<div>`` with the title and a table.

    Examples
    --------
    >>> print(summary_html("Result", [("order", "$t^{5}$")]))
    <div class="symattn-result"><p><strong>Result</strong></p><table>
    <tr><th>order</th><td><span class="math notranslate nohighlight">\(t^{5}\)</span></td></tr>
    </table></div>
    """
    body = "\n".join(f"<tr><th>{prose(label)}</th><td>{prose(value)}</td></tr>" for label, value in rows)
    return f'<div class="symattn-result"><p><strong>{prose(title)}</strong></p><table>\n{body}\n</table></div>'


def prose(text: str) -> str:
    """Prose as HTML: math spans, ``<code>``, everything escaped.

    Examples
    --------
    >>> print(prose("kind ``certified`` & $x<1$"))
    kind <code>certified</code> &amp; <span class="math notranslate nohighlight">\\(x&lt;1\\)</span>
    """
    return render(text, lambda m: f'<span class="math notranslate nohighlight">\\({escape(m)}\\)</span>',
                  lambda c: f"<code>{escape(c)}</code>", escape)


def _cell(obj: object) -> str:
    if isinstance(obj, str):
        return prose(obj)
    rendered = value_latex(obj)
    if rendered is not None:
        return f'<span class="math notranslate nohighlight">\\({escape(rendered)}\\)</span>'
    return f"<code>{escape(plain(obj))}</code>"
