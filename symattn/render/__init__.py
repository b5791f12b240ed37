"""Derivation records and their printers (text, LaTeX, reStructuredText, HTML)."""
