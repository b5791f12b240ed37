"""The paper's side: closed forms, numerical protocols, conjectures and the proof registry.

:mod:`~symattn.theorems.formulas` holds the paper's closed forms (what is
*predicted*, never what is computed), :mod:`~symattn.theorems.protocols` the
numerical protocols of Appendix F, :mod:`~symattn.theorems.conjectures` the
formula-fitting engine and :mod:`~symattn.theorems.registry` the proof scripts'
registry and runner behind ``symattn prove``.
"""
