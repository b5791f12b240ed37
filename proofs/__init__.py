"""The proof scripts: one module per statement of the paper.

A module of this package is a proof script when its name matches
``^[tn]\\d+_``; :func:`symattn.theorems.registry.discover` lists them, ``t``
first, each group in numeric order. The module name is the proof's stable id,
its prefix (``t4``) an alias; the prefixes are historical (``t10`` to ``t12``
are not theorems, ``n4`` to ``n6`` lie beyond the paper): the ``NAME`` and the
``STATEMENT`` say what a script shows. Other modules (shared helpers) are
ignored by the registry. A proof script has

* a module docstring stating the theorem in words; it is reStructuredText,
  rendered by autodoc and napoleon on the generated *Proof scripts* page, so
  use ``:math:`` and ``.. math::`` for formulas and only numpydoc section
  names (``Notes``, ``References``) as headings;
* ``NAME``: what it shows, lower-case words joined by hyphens, e.g.
  ``"native-contact-spectrum"``, on one line ``NAME = "..."`` (read without
  running the script; ``symattn prove native-contact-spectrum`` selects it);
* ``STATEMENT``: its title, a short label, e.g. ``"Thm 4: native contact spectrum"``;
* ``KIND``: ``"exact"``, ``"certified"``, ``"conditional"`` or ``"numerical"``:
  the weakest kind among the checks it records (the runner fails a script
  that claims more);
* ``run(full: bool = False) -> symattn.render.derivation.Derivation``, which computes
  every ingredient from the model, records each comparison with
  :meth:`symattn.render.derivation.Derivation.check` (named after the paper's label)
  and each covered case with :meth:`~symattn.render.derivation.Derivation.case`;
  ``full=True`` runs the long case list;
* at the end::

      if __name__ == "__main__":
          raise SystemExit(main_for(__name__))

  with ``from symattn.theorems.registry import main_for``, so that
  ``python proofs/<id>.py [--full] [--latex]`` runs the script alone.

``symattn prove`` runs them all and prints the pass/fail table.
"""
