"""Shared test set-up: hypothesis profiles, a headless matplotlib backend, the browser fixtures.

The browser fixtures (tests/browser, tests/book) drive Debian's Chromium with Playwright, never a
downloaded browser, one Playwright per test process. Outside CI a missing Chromium or Playwright skips
those tests; in CI (``CI=true``) it fails them, so a broken install cannot pass silently.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import matplotlib as mpl
import pytest
from hypothesis import HealthCheck, settings

mpl.use("Agg")

settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile(
    "ci", max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_addoption(parser):  # type: ignore[no-untyped-def]
    """--update-snapshots rewrites the golden HTML files; without it a missing golden file fails."""
    parser.addoption(
        "--update-snapshots",
        action="store_true",
        default=False,
        help="rewrite tests/snapshots/* (without it a missing snapshot is a failure, never a silent rewrite)",
    )


ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"browser test cannot run in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Path of Debian's chromium binary."""
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        _unavailable("Debian's chromium is not installed (apt-get install chromium)")
    return str(path)


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator[Any]:
    """A headless Chromium launched by Playwright with executable_path."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install playwright)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Folder for screenshots kept as test artifacts."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
