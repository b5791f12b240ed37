"""The model floor: normalizers, the architecture, its parameters, the network graph, symmetries.

:mod:`~symattn.model.normalizer` (the catalogue and exact Taylor data),
:mod:`~symattn.model.architecture` (architectures and parameters, the
reduction pi), :mod:`~symattn.model.network` (the one graph builder and its
interpreter: evaluate, jacobian), :mod:`~symattn.model.symmetries` (gauges,
verified as kernel vectors) and :mod:`~symattn.model.variants` (layer kinds).

The names of the former module ``symattn.model`` are importable from here.
"""

from symattn.model.architecture import *  # noqa: F401,F403  the former symattn.model
from symattn.model.architecture import __all__  # noqa: F401
