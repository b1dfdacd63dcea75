"""Fixed, deterministic spellings of magnitudes with their units, for derivations and tables."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from mlsysim_nb.formula import format_number

__all__ = ["capacity_text", "format_bytes", "format_magnitude", "format_percent", "format_result", "format_share"]

_BYTE_STEPS = [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")]
_BINARY_STEPS = [(2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")]
_RATE_STEPS = [(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s")]


def _scaled(value: float, steps: Sequence[tuple[float, str]], unit: str, html: bool) -> str:
    for size, name in steps:
        if abs(value) >= size:
            return f"{format_number(value / size, html=html)} {name}"
    return f"{format_number(value, html=html)} {unit}"


def format_magnitude(base: str, value: Any, *, html: bool = False) -> str:
    """A base-unit magnitude with a readable unit: ``6e9`` bytes -> ``6 GB``; ``0.0125`` s -> ``12.54 ms``."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, np.ndarray):
        if value.size == 0:
            return "empty array"
        low, high = format_magnitude(base, value.min(), html=html), format_magnitude(base, value.max(), html=html)
        return f"{low} … {high} ({value.size} values)"
    if base == "byte":
        return _scaled(float(value), _BYTE_STEPS, "B", html)
    if base == "byte/second":
        return _scaled(float(value), _RATE_STEPS, "B/s", html)
    if base == "second":
        v = float(value)
        if v != 0 and abs(v) < 1:
            return f"{format_number(v * 1e3, html=html)} ms"
        return f"{format_number(v, html=html)} s"
    return format_number(value, html=html)


def format_result(base: str, value: Any, *, html: bool = False) -> str:
    """Like :func:`format_magnitude`; byte results also show the binary unit: ``24 GB (22.35 GiB)``."""
    text = format_magnitude(base, value, html=html)
    if base == "byte" and not isinstance(value, np.ndarray) and abs(float(value)) >= 2**20:
        text += f" ({_scaled(float(value), _BINARY_STEPS, 'B', html)})"
    return text


def format_bytes(value: Any, *, binary: bool = False) -> str:
    """Bytes in the derivation's spelling: ``24 GB``; with ``binary=True`` also ``(22.35 GiB)``."""
    return format_result("byte", value) if binary else format_magnitude("byte", value)


def format_percent(percent: float) -> str:
    """A percentage to three significant digits, in the number formatter's spelling: ``27.9 %``, ``3260 %``.

    Rounded first, then spelled: ``1.77×10⁶ %``, never Python's ``1.77e+06 %``.
    """
    rounded = float(f"{float(percent):.3g}") if math.isfinite(percent) else percent
    return f"{format_number(rounded)} %"


def format_share(value: Any) -> str:
    """A fraction as a percentage to three significant digits: ``0.2791`` -> ``27.9 %``, ``17700`` -> ``1.77×10⁶ %``."""
    return format_percent(100 * float(value))


def capacity_text(capacity: Any) -> str:
    """A device's memory in both spellings datasheets mix: ``80 GiB = 85.9 GB``."""
    gib, gb = capacity.m_as("GiB"), capacity.m_as("GB")
    return f"{format_number(gib)} GiB = {format_number(gb)} GB"
