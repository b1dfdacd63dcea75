"""What every course figure shares: a white fixed-dpi figure, the parts' colours, bytes and their text."""

from __future__ import annotations

from typing import Any

from mlsysim_nb.kinds import all_colors

__all__ = ["COLORS", "DPI", "as_bytes", "capacity_bytes", "gb_text", "new_figure"]

#: The memory parts take the colours the kinds declare (the memory bar's); the passes their own.
COLORS = {**all_colors(), "forward": "#4C72B0", "backward": "#55A868"}
DPI = 72


def new_figure(width: float, height: float) -> Any:
    """A white, fixed-dpi figure with constrained layout (no pyplot state)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=DPI, facecolor="white", layout="constrained")


def as_bytes(q: Any) -> float:
    """A pint quantity (or a plain number of bytes) as a float number of bytes."""
    return float(q.to("byte").magnitude) if hasattr(q, "to") else float(q)


def gb_text(x: float) -> str:
    """Bytes as ``1.50 GB (1.40 GiB)``, the figures' label."""
    return f"{x / 1e9:,.2f} GB ({x / 2**30:,.2f} GiB)"


def capacity_bytes(scenario: Any) -> float | None:
    """The device memory of the scenario's hardware in bytes (None without hardware)."""
    hardware = getattr(scenario, "hardware", None)
    return None if hardware is None else as_bytes(hardware.memory.capacity)
