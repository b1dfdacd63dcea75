"""Whether PyTorch (the ``measure`` extra) is installed, and how to install it. Never imports torch itself."""

from __future__ import annotations

import importlib.util

__all__ = ["INSTALL_HINT", "require_torch", "require_transformers", "torch_available", "transformers_available"]

#: What to run when PyTorch is missing. The range picks a CPU build where one is at hand.
INSTALL_HINT = (
    "The measurement lab needs PyTorch (CPU is enough) and, for Hugging Face's layers, transformers: install the "
    "extra with "
    "pip install 'mlsysim_nb[measure]' (or, in a clone, pip install -e '.[measure]'), then restart the kernel."
)


def torch_available() -> bool:
    """True when ``import torch`` would find PyTorch (it is not imported here)."""
    return importlib.util.find_spec("torch") is not None


def require_torch() -> None:
    """Raise ``ImportError`` with :data:`INSTALL_HINT` when PyTorch is missing."""
    if not torch_available():
        raise ImportError(INSTALL_HINT)


def transformers_available() -> bool:
    """True when ``import transformers`` (and torch) would succeed (neither is imported here)."""
    return torch_available() and importlib.util.find_spec("transformers") is not None


def require_transformers() -> None:
    """Raise ``ImportError`` with :data:`INSTALL_HINT` when PyTorch or transformers is missing."""
    if not transformers_available():
        raise ImportError(INSTALL_HINT)
