"""Every file symattn writes goes through here: nothing the user had is lost.

Rules (the same for ``--plot FILE``, ``latex --output FILE`` and ``atlas --output DIR``):

* **No overwrite without** ``--force``. An existing file is replaced only with
  ``force`` or when symattn wrote it and it is unchanged since: a single file
  carries a *stamp* (``symattn:sha256=<hash>``: a LaTeX comment, the PNG
  ``Software`` text chunk, the PDF or SVG ``Creator``) whose hash is that of
  the file with the hash zeroed, so a file edited by hand is no longer
  symattn's (in a LaTeX file, its second line); a folder (the atlas) has a manifest, :data:`MANIFEST`, listing
  each file symattn wrote with its SHA-256.
* **No symbolic link is followed** at the file written: a link is never written
  through (without ``force`` it is refused, with ``force`` the link itself is
  replaced by a file). A folder, a device (``/dev/full``), a FIFO or a socket
  is never replaced, even with ``force``.
* **Atomic**: the data goes to a temporary file in the same folder, is flushed
  to disk, and is renamed over the target; a failed write (a full disk, a
  read-only folder) removes the temporary file and leaves the old file whole.
* **One line per failure**: every OS error becomes a
  :class:`~symattn.core.errors.SymattnError` naming the path and what to do.
* **Check first**: :func:`check_target` and :func:`check_folder` run the same
  checks before any work, so a command refuses a bad path at once.

Escaping of text that comes from a store or a spec: :func:`markdown`,
:func:`html_text` and :func:`csv_cell` (spreadsheet formula injection: a cell
that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a
leading ``'``, except a plain number and symattn's lone ``=`` mark).

Examples
--------
>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "note.tex")
>>> _ = write_file(path, stamp_text("hello\\n"))
>>> is_ours(path)
True
>>> _ = write_file(path, stamp_text("again\\n"))      # symattn's own file: replaced
>>> with open(path, "a") as f:
...     _ = f.write("% the user's edit\\n")
>>> write_file(path, stamp_text("third\\n"))
Traceback (most recent call last):
...
symattn.core.errors.SymattnError: refusing to overwrite ... (not written by symattn, or changed since); give --force to replace it, or another name
>>> csv_cell("=HYPERLINK(1)"), csv_cell("-3"), markdown("<b>x</b>")
("'=HYPERLINK(1)", '-3', '\\\\<b\\\\>x\\\\</b\\\\>')
"""

from __future__ import annotations

import errno
import hashlib
import html
import json
import os
import re
import stat
import tempfile
import zlib
from pathlib import Path
from typing import Any, Mapping

from symattn.core.errors import SymattnError

__all__ = ["MANIFEST", "STAMP", "check_target", "check_folder", "check_folder_files", "owned_files",
           "write_file", "write_folder",
           "stamp_text", "stamped", "is_ours", "figure_bytes", "save_figure", "markdown",
           "html_text", "plot_text", "terminal_text", "csv_cell"]

#: The marker of a file symattn wrote: followed by the SHA-256 (hex) of the file with it zeroed.
STAMP = b"symattn:sha256="
#: The manifest of a folder symattn wrote (the atlas): names and SHA-256 of its files.
MANIFEST = "symattn-manifest.json"
_ZERO = b"0" * 64
_PLACEHOLDER = (STAMP + _ZERO).decode()
_PNG = b"\x89PNG\r\n\x1a\n"
_MAX_CHECKED = 256 * 2**20  # a file larger than this is never taken for symattn's own
_METADATA = {"png": "Software", "pdf": "Creator", "svg": "Creator"}


# ------------------------------------------------------------------ stamps
def stamp_text(text: str, comment: str = "%") -> bytes:
    """``text`` (UTF-8) with a comment line carrying the stamp (``%`` for LaTeX) after its
    first line (so a document still starts with ``\\documentclass`` and ends with
    ``\\end{document}``).

    >>> stamp_text("x\\ny\\n").decode().splitlines()[1].startswith("% written by symattn")
    True
    """
    from symattn import __version__

    first, newline, rest = text.partition("\n")
    line = f"{comment} written by symattn {__version__}; {_PLACEHOLDER}\n"
    return stamped(f"{first}\n{line}{rest}".encode() if newline else f"{text}\n{line}".encode())


def stamped(data: bytes) -> bytes:
    """``data`` (holding the zeroed stamp exactly once) with its hash filled in."""
    at = data.find(STAMP + _ZERO)
    if at < 0 or data.find(STAMP, at + 1) >= 0:
        raise ValueError("the data must hold the zeroed stamp exactly once")
    digest = hashlib.sha256(data).hexdigest().encode()
    return _fix_png(data[:at + len(STAMP)] + digest + data[at + len(STAMP) + 64:], at)


def _verify(data: bytes) -> bool:
    at = data.find(STAMP)
    if at < 0 or data.find(STAMP, at + 1) >= 0:
        return False
    digest = data[at + len(STAMP): at + len(STAMP) + 64]
    if not re.fullmatch(rb"[0-9a-f]{64}", digest):
        return False
    zeroed = _fix_png(data[:at + len(STAMP)] + _ZERO + data[at + len(STAMP) + 64:], at)
    return hashlib.sha256(zeroed).hexdigest().encode() == digest


def _fix_png(data: bytes, at: int) -> bytes:
    """Recompute the CRC of the PNG chunk holding offset ``at`` (other data: unchanged)."""
    if not data.startswith(_PNG):
        return data
    pos = len(_PNG)
    while pos + 12 <= len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        end = pos + 8 + length
        if pos + 8 <= at < end and end + 4 <= len(data):
            crc = zlib.crc32(data[pos + 4:end]).to_bytes(4, "big")
            return data[:end] + crc + data[end + 4:]
        pos = end + 4
    return data


def _digest(path: Path) -> "str | None":
    """SHA-256 of the regular file ``path`` (not following a link), or None."""
    data = _read_own(path)
    return None if data is None else hashlib.sha256(data).hexdigest()


def _read_own(path: Path) -> "bytes | None":
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_CHECKED:
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            return fh.read(_MAX_CHECKED + 1)
    except OSError:
        return None


def is_ours(path: "str | os.PathLike") -> bool:
    """Whether ``path`` is a regular file (not a link) that symattn wrote, unchanged since."""
    data = _read_own(Path(path))
    return data is not None and _verify(data)


# ------------------------------------------------------------------ checks
def _fail(path, exc: OSError, doing: str = "write") -> SymattnError:
    hints = {errno.ENOSPC: "the disk is full", errno.EROFS: "the file system is read-only",
             errno.EACCES: "permission denied: give a writable path",
             errno.EPERM: "not permitted: give a writable path",
             errno.ENOTDIR: "a part of the path is a file, not a folder",
             errno.EISDIR: "it is a folder", errno.ENAMETOOLONG: "the name is too long",
             errno.ENOENT: "no such folder"}
    hint = hints.get(exc.errno or -1, exc.strerror or type(exc).__name__)
    return SymattnError(f"cannot {doing} {str(path)[:200]}: {hint}; nothing was changed there")


def _kind(mode: int) -> str:
    return ("a folder" if stat.S_ISDIR(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a file")


def _parent_folder(path: Path, what: str) -> Path:
    parent = path.parent
    try:
        info = os.stat(parent)
    except FileNotFoundError:
        raise SymattnError(f"no folder {str(parent)[:200]} for the {what} {str(path)[:200]}") from None
    except (OSError, ValueError) as exc:
        raise (_fail(path, exc, "write") if isinstance(exc, OSError)
               else SymattnError(f"cannot write the {what} {str(path)[:200]!r}: {exc}")) from None
    if not stat.S_ISDIR(info.st_mode):
        raise SymattnError(f"{str(parent)[:200]} is not a folder: cannot write the {what} "
                           f"{str(path)[:200]} there")
    return parent


def _probe(folder: Path, target: Path) -> None:
    """Make and remove a temporary file in ``folder``: a read-only folder (or file system) is
    refused before any work, even for root, whom permission bits do not stop."""
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".symattn-probe.", suffix=".tmp")
    except OSError as exc:
        raise _fail(target, exc) from None
    os.close(fd)
    os.unlink(tmp)


def check_target(path: "str | os.PathLike", force: bool = False, what: str = "file",
                 ours: "Any | None" = None) -> Path:
    """Check, before any work, that ``path`` may be written; return it as a :class:`~pathlib.Path`.

    Parameters
    ----------
    path : the file to write
    force : replace an existing regular file (or a link, by a file) that symattn did not write
    what : the file's role in messages (``"plot"``, ``"LaTeX output"``, ...)
    ours : optional test ``ours(path) -> bool`` of a file symattn wrote (default :func:`is_ours`)

    Raises
    ------
    SymattnError
        No folder, a folder or special file at ``path``, or an existing file
        that symattn did not write (without ``force``).
    """
    text = os.fspath(path)
    if not text or text.endswith(os.sep) or os.path.basename(text) in ("", ".", ".."):
        raise SymattnError(f"the {what} {text[:200]!r} is a folder name; give a file name")
    if "\x00" in text:
        raise SymattnError(f"the {what} name must not hold a NUL character")
    target = Path(text)
    _probe(_parent_folder(target, what), target)
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise _fail(target, exc) from None
    if stat.S_ISLNK(info.st_mode):
        if not force:
            raise SymattnError(f"{text[:200]} is a symbolic link: symattn never writes through a link "
                               f"(give --force to replace the link itself by a file, or another name)")
        return target
    if not stat.S_ISREG(info.st_mode):
        raise SymattnError(f"{text[:200]} is {_kind(info.st_mode)}: symattn writes only regular files; "
                           "give a file name")
    if force or (ours or is_ours)(target):
        return target
    raise SymattnError(f"refusing to overwrite {text[:200]} (not written by symattn, or changed "
                       "since); give --force to replace it, or another name")


# ------------------------------------------------------------------ writing
def write_file(path: "str | os.PathLike", data: bytes, force: bool = False, what: str = "file",
               ours: "Any | None" = None) -> Path:
    """Write ``data`` to ``path`` atomically after :func:`check_target`; return the path.

    The data goes to a temporary file in the same folder, is flushed to disk and
    renamed over ``path`` (a new file is linked in place, so a file that
    appeared meanwhile is not replaced); on any failure the temporary file is
    removed and the old file is whole.
    """
    target = check_target(path, force, what, ours)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name[:80]}.", suffix=".tmp")
    except OSError as exc:
        raise _fail(target, exc) from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, 0o666 & ~_umask())
        try:
            os.link(tmp, target)  # a new name: never replaces what appeared meanwhile
        except FileExistsError:
            check_target(target, force, what, ours)  # still ours (or forced): replace it
            os.replace(tmp, target)
        except OSError:  # no hard links on this file system
            check_target(target, force, what, ours)
            os.replace(tmp, target)
    except OSError as exc:
        raise _fail(target, exc) from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return target


def _umask() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


def check_folder(path: "str | os.PathLike", what: str = "output folder") -> Path:
    """Check, before any work, that ``path`` is a folder or can be made one (its first existing
    ancestor is a folder); return it."""
    text = os.fspath(path)
    if not text or "\x00" in text:
        raise SymattnError(f"give a name for the {what}")
    folder = Path(text)
    probe = folder
    while True:
        try:
            info = os.stat(probe)
        except FileNotFoundError:
            if probe.parent == probe:
                raise SymattnError(f"no folder for the {what} {text[:200]}") from None
            probe = probe.parent
            continue
        except OSError as exc:
            raise _fail(folder, exc, "write into") from None
        if not stat.S_ISDIR(info.st_mode):
            where = "" if probe == folder else f" ({str(probe)[:200]} is {_kind(info.st_mode)})"
            raise SymattnError(f"the {what} {text[:200]} is not a folder{where}; give a folder")
        _probe(probe, folder)
        return folder


def _manifest(folder: Path) -> "dict[str, str] | None":
    """The files of ``folder``'s manifest (name -> SHA-256); ``{}`` if none; None if foreign."""
    target = folder / MANIFEST
    try:
        os.lstat(target)
    except OSError:
        return {}
    data = _read_own(target)
    try:
        manifest = json.loads(data.decode()) if data is not None else None
    except (ValueError, RecursionError):
        return None
    if not (isinstance(manifest, dict) and manifest.get("written_by") == "symattn"
            and isinstance(manifest.get("files"), dict)
            and all(isinstance(k, str) and isinstance(v, str) and re.fullmatch("[0-9a-f]{64}", v)
                    for k, v in manifest["files"].items())):
        return None
    return manifest["files"]


def _ours(listed: "dict[str, str] | None"):
    """The ownership test of a folder whose manifest lists ``listed`` (None: a foreign manifest)."""
    def ours(target: Path) -> bool:
        if target.name == MANIFEST:
            return listed is not None
        return listed is not None and listed.get(target.name) == _digest(target) or is_ours(target)
    return ours


def owned_files(path: "str | os.PathLike") -> "dict[str, str]":
    """The files of the folder ``path`` that its :data:`MANIFEST` lists and that are unchanged since
    symattn wrote them (name -> SHA-256); empty when there is no manifest or a foreign one."""
    folder = Path(path)
    listed = _manifest(folder) or {}
    return {name: digest for name, digest in listed.items()
            if "/" not in name and _digest(folder / name) == digest}


def check_folder_files(path: "str | os.PathLike", names, force: bool = False,
                       what: str = "output folder") -> Path:
    """Check, before any work, that :func:`write_folder` may write files of these ``names``
    into the folder ``path``; return the folder.

    Raises
    ------
    SymattnError
        As :func:`write_folder` would, before writing anything.
    """
    folder = check_folder(path, what)
    listed = _manifest(folder)
    names = list(names) + [MANIFEST]
    for name in names:
        if not name or "/" in name or name in (".", "..") or name.startswith("."):
            raise ValueError(f"not a plain file name: {name!r}")
    ours = _ours(listed)
    if folder.exists():
        refused = []
        for name in names:
            try:
                check_target(folder / name, force, what, ours)
            except SymattnError as exc:
                if "refusing to overwrite" not in str(exc):
                    raise
                refused.append(name)
        if refused:
            raise SymattnError(f"refusing to overwrite {', '.join(refused[:5])}"
                               f"{' ...' if len(refused) > 5 else ''} in {str(folder)[:200]} (not "
                               "written by symattn, or changed since); give --force to replace "
                               "them, or another folder")
    return folder


def write_folder(path: "str | os.PathLike", files: Mapping[str, bytes], force: bool = False,
                 what: str = "output folder") -> list[Path]:
    """Write ``files`` (name -> data) into the folder ``path`` (made if missing) and its
    :data:`MANIFEST`; return the paths written.

    Every target is checked before the first is written: an existing file that
    the manifest does not list unchanged (and that carries no valid stamp) is
    refused without ``force``, and then nothing is written.
    """
    folder = check_folder_files(path, files, force, what)
    listed = _manifest(folder)
    ours = _ours(listed)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _fail(folder, exc, "make the folder") from None
    written, digests = [], {}
    if listed:
        digests = {k: v for k, v in listed.items() if k not in files and _digest(folder / k) == v}
    for name, data in files.items():
        written.append(write_file(folder / name, data, force, what, ours))
        digests[name] = hashlib.sha256(data).hexdigest()
    from symattn import __version__

    manifest = {"written_by": "symattn", "symattn": __version__,
                "about": "files symattn wrote into this folder, with their SHA-256; symattn "
                         "replaces a listed file only while it is unchanged",
                "files": dict(sorted(digests.items()))}
    write_file(folder / MANIFEST, (json.dumps(manifest, indent=1) + "\n").encode(), force, what, ours)
    return written


# ------------------------------------------------------------------ figures
def figure_bytes(fig, fmt: str, **savefig) -> bytes:
    """The stamped bytes of a matplotlib figure in ``fmt`` (``png``, ``pdf`` or ``svg``)."""
    import io

    if fmt not in _METADATA:
        raise SymattnError(f"plot format must be one of {', '.join(_METADATA)}, got {fmt!r}")
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, metadata={_METADATA[fmt]: _PLACEHOLDER}, **savefig)
    return stamped(buffer.getvalue())


def save_figure(fig, path: "str | os.PathLike", force: bool = False, what: str = "plot",
                **savefig) -> Path:
    """Write a matplotlib figure to ``path`` (format by its suffix) through :func:`write_file`,
    then close it; return the path."""
    import matplotlib.pyplot as plt

    try:
        fmt = Path(path).suffix.lower().lstrip(".")
        return write_file(path, figure_bytes(fig, fmt, **savefig), force, what)
    finally:
        plt.close(fig)


# ------------------------------------------------------------------ escaping
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>&|!~$#])")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


#: Every line break a reader may honour: CommonMark's (``\\n``, ``\\r``) and Unicode's (NEL, the
#: line and paragraph separators, which ``str.splitlines`` and some renderers break at).
_LINE_BREAK = re.compile("\r\n|[\n\r\x85\u2028\u2029]")


def markdown(value: Any) -> str:
    """``value`` as inline Markdown text: line breaks (also Unicode's NEL and line or paragraph
    separators) become spaces, so a cell can never start a line (a heading), and every character
    that could start markup, raw HTML or an entity (``\\ ` * _ [ ] < > & | ! ~ $ #``) is
    backslash-escaped (CommonMark escapes).

    >>> markdown("x\u2028# heading").splitlines()
    ['x \\\\# heading']
    """
    text = _LINE_BREAK.sub(" ", _CONTROL.sub("", str(value)))
    return _MD_SPECIAL.sub(r"\\\1", text)


def html_text(value: Any) -> str:
    """``value`` as HTML text (``& < > " '`` escaped, control characters dropped).

    >>> html_text("<img src=x onerror=alert(1)>")
    '&lt;img src=x onerror=alert(1)&gt;'
    """
    return html.escape(_CONTROL.sub("", str(value)), quote=True)


def terminal_text(value: Any, limit: int = 200) -> str:
    """``value`` for a terminal line: control characters (escape sequences, line breaks) shown
    as ``?``, at most ``limit`` characters.

    >>> terminal_text("jet\\x1b[2J\\n")
    'jet?[2J?'
    """
    return re.sub(r"[\x00-\x1f\x7f-\x9f]", "?", str(value))[:limit]


def plot_text(value: Any) -> str:
    """``value`` as literal matplotlib text: ``$`` (mathtext) escaped, control characters dropped.

    >>> plot_text("a$b") == "a" + chr(92) + "$b"
    True
    """
    return _CONTROL.sub("", str(value)).replace("$", r"\$")


def csv_cell(value: Any) -> Any:
    """``value`` as a CSV cell: a number stays a number; text that a spreadsheet would run as
    a formula (first non-blank character ``= + - @``, or a tab or carriage return first) gets
    a leading ``'``; a plain number written as text and the lone ``=`` mark stay as they are.

    >>> csv_cell(3), csv_cell("@SUM(A1)"), csv_cell("\\tx"), csv_cell("=")
    (3, "'@SUM(A1)", "'\\tx", '=')
    >>> csv_cell("-2+3*A1"), csv_cell("+A1"), csv_cell("-2.5")
    ("'-2+3*A1", "'+A1", '-2.5')
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    text = _CONTROL.sub("", str(value)) if value is not None else ""
    if text == "=" or _NUMBER.fullmatch(text):
        return text
    if text[:1] in ("\t", "\r") or text.lstrip()[:1] in ("=", "+", "-", "@"):
        return "'" + text
    return text
