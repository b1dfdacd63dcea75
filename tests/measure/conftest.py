"""Fixtures for the measurement lab: PyTorch from the ``measure`` extra.

Outside CI a missing PyTorch skips the tests that run it; in CI (``CI=true``)
it fails them, so a broken install cannot pass silently.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from mlsysim_nb.measure import INSTALL_HINT, torch_available


@pytest.fixture(scope="session")
def torch() -> Any:
    """The torch module, or a skip (locally) / failure (CI) naming the missing extra."""
    if not torch_available():
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"measure test cannot run in CI: {INSTALL_HINT}")
        pytest.skip(INSTALL_HINT)
    import torch as module

    return module
