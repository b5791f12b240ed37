"""PyTorch, an optional dependency: asked for where it is used, with how to install it.

The analyses (an independent autodiff Jacobian, matrix-free spectra) and the audit
(reading PyTorch modules) use PyTorch when it is installed
(``pip install 'symattn[torch]'``); nothing imports it at start-up. A floor that
needs it calls :func:`require_torch`, which says how to install it when it is missing.
"""

from __future__ import annotations

import importlib.util
from types import ModuleType

from symattn.core.errors import SymattnError

__all__ = ["TORCH_HINT", "has_torch", "require_torch"]

#: What to do when PyTorch is missing.
TORCH_HINT = "PyTorch is not installed: pip install 'symattn[torch]' (torch==2.13.0)"


def has_torch() -> bool:
    """Whether PyTorch is installed (without importing it).

    Returns
    -------
    bool
        True when ``import torch`` would find a module.
    """
    return importlib.util.find_spec("torch") is not None


def require_torch() -> ModuleType:
    """The ``torch`` module, imported on first use.

    Returns
    -------
    module
        ``torch``.

    Raises
    ------
    SymattnError
        If PyTorch is not installed (the message is :data:`TORCH_HINT`).
    """
    try:
        import torch
    except ImportError:
        raise SymattnError(TORCH_HINT) from None
    return torch
