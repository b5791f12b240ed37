"""``python -m symattn``: the same as the ``symattn`` command."""

from symattn.cli import console

if __name__ == "__main__":
    raise SystemExit(console())
