"""Global display options (xarray's ``display_style`` habit)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["OPTIONS", "set_options"]

OPTIONS: dict[str, Any] = {"display_style": "html", "chart": True}
_VALID = {"display_style": ("html", "text"), "chart": (True, False)}


@contextmanager
def _restore(old: dict[str, Any]) -> Iterator[None]:
    try:
        yield
    finally:
        OPTIONS.update(old)


def set_options(**options: Any) -> Any:
    """Set display options; usable as a context manager to set them temporarily.

    ``display_style``: ``"html"`` (default) or ``"text"`` (no HTML in outputs).
    ``chart``: embed the memory bar chart in the HTML repr (default ``True``).

    >>> from mlsysim_nb import set_options
    >>> with set_options(chart=False):
    ...     pass
    """
    for key, value in options.items():
        if key not in _VALID:
            msg = f"unknown option {key!r}; valid options are {sorted(_VALID)}"
            raise TypeError(msg)
        if value not in _VALID[key]:
            msg = f"option {key!r} must be one of {_VALID[key]}, got {value!r}"
            raise ValueError(msg)
    old = {k: OPTIONS[k] for k in options}
    OPTIONS.update(options)
    return _restore(old)
