"""The course site, built once per test module from the notebooks' stored outputs, and served over HTTP.

Outside CI a missing Sphinx (the ``book`` extra), Chromium or Playwright skips these tests; in CI
(``CI=true``) it fails them, as tests/browser does. The browser fixtures are tests/conftest.py's, shared
with tests/browser.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_extension() -> None:
    """The site's Sphinx extension, ``book/_ext/msn_book.py``, as the module ``msn_book`` (Sphinx loads it so).

    Loaded from its file, so that no test adds a folder to the import path. Without the book extra it is left
    unloaded, and ``test_book.py`` skips (fails in CI).
    """
    spec = importlib.util.spec_from_file_location("msn_book", ROOT / "book" / "_ext" / "msn_book.py")
    if "msn_book" in sys.modules or spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["msn_book"] = module
    try:
        spec.loader.exec_module(module)
    except ImportError:
        del sys.modules["msn_book"]


_load_extension()


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"book test cannot run in CI: {reason}")
    pytest.skip(reason)


@dataclass(frozen=True)
class Site:
    """A built site: its folder, its address on a local server and how long the build took."""

    root: Path
    url: str
    seconds: float

    def page(self, relative: str) -> str:
        """The HTML of one page."""
        return (self.root / relative).read_text(encoding="utf-8")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The student version, built once into a temp folder and served on 127.0.0.1."""
    for module in ("sphinx", "myst_nb", "sphinx_book_theme", "latex2mathml", "nbgrader"):
        if importlib.util.find_spec(module) is None:
            _unavailable(f"{module} is not installed (pip install -e '.[book]')")
    from mlsysim_nb.course.book import build

    out = tmp_path_factory.mktemp("book") / "book"
    seconds = build(out, jobs=2)
    handler = functools.partial(_Quiet, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield Site(out, f"http://127.0.0.1:{server.server_address[1]}/", seconds)
    server.shutdown()
    server.server_close()
