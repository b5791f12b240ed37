"""Check in a real headless browser that built documentation pages show typeset math.

Opens each page of an HTML build (default: a proof page and the notebook
tutorial) in headless Chromium, lets the local MathJax run, and reads the
resulting DOM: the page passes when MathJax typeset its math (``MathJax``
elements present) and no math element still shows raw TeX delimiters
(``\\(`` or ``\\[``). A screenshot of each page is written to the build's
``_browser`` folder (``<build>/_browser/<page>.png``) for a person to look at.

Usage (after ``python -m sphinx -b html docs docs/_build/html``)::

    python docs/check_math.py [--build docs/_build/html] [PAGE.html ...]

Exit status 0 when every page passes, 1 otherwise, 2 when Chromium is not
installed (Debian: ``apt-get install chromium``). The slow test
``tests/test_docs_browser.py`` runs it on a fresh build.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["DEFAULT_PAGES", "browser", "check_page", "main"]

#: Pages checked by default: a proof's computed derivation and the executed notebook.
DEFAULT_PAGES = ("statements/t3_sharp_taylor.html", "tutorials/notebook.html")

_RAW = re.compile(r'class="math[^"]*"[^>]*>\s*\\[(\[]')


def browser() -> str | None:
    """The Chromium executable, or None."""
    return next((found for name in ("chromium", "chromium-browser", "google-chrome")
                 if (found := shutil.which(name))), None)


def _chromium(executable: str, page: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([executable, "--headless", "--no-sandbox", "--disable-gpu",
                           "--virtual-time-budget=30000", *options, page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=180, check=False)


def check_page(executable: str, page: Path, screenshot: Path) -> tuple[int, int]:
    """Typeset and raw math counts of one page after MathJax ran; writes its screenshot.

    Returns
    -------
    (int, int)
        The number of typeset MathJax elements and of math elements whose
        text still starts with a raw TeX delimiter.
    """
    dom = _chromium(executable, page, "--dump-dom").stdout
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    _chromium(executable, page, "--window-size=1200,2400", f"--screenshot={screenshot}")
    typeset = len(re.findall(r'class="MathJax(?:_Display)?"', dom))
    raw = len(_RAW.findall(html.unescape(dom)))
    return typeset, raw


def main(argv: list[str] | None = None) -> int:
    """Check the pages; print one line per page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=Path(__file__).parent / "_build" / "html")
    parser.add_argument("pages", nargs="*", default=list(DEFAULT_PAGES))
    args = parser.parse_args(argv)
    executable = browser()
    if executable is None:
        print("check_math: chromium is not installed", file=sys.stderr)
        return 2
    ok = True
    for name in args.pages:
        page = args.build / name
        if not page.is_file():
            print(f"check_math: {page} does not exist; build the documentation first", file=sys.stderr)
            return 2
        shot = args.build / "_browser" / (name.replace("/", "_").removesuffix(".html") + ".png")
        typeset, raw = check_page(executable, page, shot)
        passed = typeset > 0 and raw == 0
        ok &= passed
        print(f"{'ok  ' if passed else 'FAIL'} {name}: {typeset} typeset math elements, "
              f"{raw} raw TeX left; screenshot {shot}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
