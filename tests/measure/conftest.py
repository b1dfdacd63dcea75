"""Fixtures for the measurement lab: PyTorch and transformers from the ``measure`` extra.

Outside CI a missing package skips the tests that run it; in CI (``CI=true``) it fails them, so a broken
install cannot pass silently.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import pytest

from mlsysim_nb.measure import INSTALL_HINT, torch_available


def _missing(what: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"measure test cannot run in CI: {what} is missing. {INSTALL_HINT}")
    pytest.skip(f"{what} is missing. {INSTALL_HINT}")


@pytest.fixture(scope="session")
def torch() -> Any:
    """The torch module, or a skip (locally) / failure (CI) naming the missing extra."""
    if not torch_available():
        _missing("PyTorch")
    import torch as module

    return module


@pytest.fixture(scope="session")
def transformers(torch: Any) -> Any:
    """The transformers module (with torch), or a skip (locally) / failure (CI) naming the missing extra."""
    if importlib.util.find_spec("transformers") is None:
        _missing("transformers")
    import transformers as module

    return module


@pytest.fixture(scope="session")
def measured_steps(torch: Any, transformers: Any) -> Any:
    """``measure_step(**config)``, each configuration measured once per session (shared by the step tests)."""
    import inspect

    from mlsysim_nb.measure.step import measure_step

    defaults = {k: p.default for k, p in inspect.signature(measure_step).parameters.items()}
    cache: dict[str, Any] = {}

    def measure(**config: Any) -> Any:
        key = repr(sorted({**defaults, **config}.items()))
        if key not in cache:
            cache[key] = measure_step(**config)
        return cache[key]

    return measure
