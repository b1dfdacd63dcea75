"""Shared test set-up: hypothesis profiles, a headless matplotlib backend."""

from __future__ import annotations

import os

import matplotlib as mpl
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
