"""Browser tests: Debian's Chromium driven by Playwright (never a downloaded browser).

The fixtures (``chromium_path``, ``browser``, ``artifacts``) live in ``tests/conftest.py``, shared with
``tests/book``: one Playwright per test process, since a second sync Playwright cannot start while the
first runs. Outside CI a missing Chromium or Playwright skips these tests; in CI (``CI=true``) it fails them.
"""
