"""Sphinx configuration of the example proof package: one page per statement, made by running it.

Build with ``python -m sphinx -W -b html docs docs/_build/html`` from ``examples/proof-package``.
"""

project = "symattn-example-lemmas"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.napoleon", "sphinx.ext.mathjax",
              "symattn.render.sphinx"]
exclude_patterns = ["_build"]

# The proof sources that get pages, and the folders to load them from when the package is not
# installed (when it is, the installed package and the folder are the same source).
symattn_proof_sources = ["example_lemmas"]
symattn_proof_paths = ["../example_lemmas"]
