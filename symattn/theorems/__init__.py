"""The paper's side: its statements, closed forms and the proof registry.

:mod:`~symattn.theorems.statements` holds what each theorem covers and its label,
:mod:`~symattn.theorems.formulas` the paper's closed forms (what is *predicted*,
never what is computed) and :mod:`~symattn.theorems.registry` the proof scripts'
registry and runner behind ``symattn prove``. The numerical protocols of Appendix F
(:mod:`symattn.analyses.protocols`) and the formula-fitting engine
(:mod:`symattn.analyses.conjectures`) run analyses, so they live on the floor above.
"""
