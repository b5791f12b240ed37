"""Example lemmas: a template proof package for symattn.

A proof package is an ordinary Python package whose modules named
``<letters><number>_<name>`` (here ``l1_cosh_cubic``: lemma 1) are proof
scripts, each with

* a module docstring stating the claim (reStructuredText, shown on its
  documentation page);
* ``STATEMENT``: a short label;
* ``KIND``: ``"exact"``, ``"certified"``, ``"conditional"`` or ``"numerical"``,
  the weakest kind of the checks it records;
* ``run(full: bool = False) -> symattn.render.derivation.Derivation``;
* at the end ``raise SystemExit(main_for(__name__))`` under
  ``if __name__ == "__main__":``, so that the script also runs alone.

The distribution registers the package in the entry-point group
``symattn.proofs`` (see ``pyproject.toml``). Other modules (helpers) are
ignored by the registry.
"""
