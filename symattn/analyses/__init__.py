"""The analyses: each question of the paper asked once, of an architecture.

Spectrum (:mod:`~symattn.analyses.spectrum`), jets (:mod:`~symattn.analyses.jets`),
fibers (:mod:`~symattn.analyses.fibers`), dimension
(:mod:`~symattn.analyses.dimension`), sensitivity
(:mod:`~symattn.analyses.sensitivity`), the least separating bank
(:mod:`~symattn.analyses.bank`), signatures, geometry and numerics. An analysis
asks the statements of :mod:`symattn.theorems` what the paper covers; it never
branches on a layer kind.
"""
