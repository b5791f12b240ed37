"""The core floor: what every other part of symattn stands on.

:mod:`~symattn.core.errors` (the error kinds and their exit statuses),
:mod:`~symattn.core.limits` (memory estimates, time budgets),
:mod:`~symattn.core.parse` (the whitelist parser of untrusted input),
:mod:`~symattn.core.linalg` (matrices whose field travels with them),
:mod:`~symattn.core.certify` (majorants and column proofs),
:mod:`~symattn.core.provenance` and :mod:`symattn.core.algebras` (one module per
algebra). Nothing here knows an architecture or a theorem.
"""
