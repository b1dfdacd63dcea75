"""How a kind of scenario presents itself, as plain data.

Each scenario class carries its presentation: the sections of its derivation
(:class:`SectionSpec`), its notes, the rows :func:`~mlsysim_nb.compare` shows,
and small pure methods that return a :class:`Headline` (the one-line answer
with its :class:`Verdict`) and a :class:`MemoryChart`. The display, comparison,
control and sweep modules read only these records, never the scenario's
class: a new kind of scenario is one module plus its formulas (xarray's
``formatting_html`` never imports ``Dataset``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Headline", "MemoryChart", "SectionSpec", "Verdict"]


@dataclass(frozen=True)
class SectionSpec:
    """One section of a derivation: its title, its steps and which step's result heads it.

    ``steps`` pairs what a student types (``'activations("none")'``) with the
    formula that computes it. ``when`` names a flag of the scenario
    (``"adapter_mode"``): the section is shown only when it is true, so a
    derivation shows what its question needs and folds away the rest.
    """

    title: str
    steps: tuple[tuple[str, str], ...]
    headline: str = ""
    when: str = ""


@dataclass(frozen=True)
class Verdict:
    """The answer to a scenario's question in a few words, and whether it is good news.

    ``ok`` is ``True`` (green), ``False`` (red) or ``None`` (no verdict, e.g.
    no device to fit against).
    """

    text: str
    ok: bool | None = None


@dataclass(frozen=True)
class Headline:
    """The one line that answers the scenario's question: what was computed, then the verdict."""

    text: str
    verdict: Verdict | None = None

    def __str__(self) -> str:
        if self.verdict is None or not self.verdict.text:
            return self.text
        return f"{self.text}: {self.verdict.text}"


#: One bar of a memory chart: its label and its parts in bytes, in stacking order.
Bar = tuple[str, dict[str, float]]


@dataclass(frozen=True)
class MemoryChart:
    """A scenario's memory as bars of parts (bytes), against a capacity line when there is a device.

    ``unit`` is the parts' base unit: ``"byte"`` for memory, ``"second"`` for a chart of time by cause (a kind's
    :meth:`~mlsysim_nb.model.defaults.Presentation.companion_chart`, drawn beside the memory bar).
    """

    bars: tuple[Bar, ...]
    capacity: float | None = None
    capacity_label: str = ""
    caption: str = ""
    colors: dict[str, str] = field(default_factory=dict)
    unit: str = "byte"

    @classmethod
    def against(cls, bars: tuple[Bar, ...], device: Any, headline: Headline) -> MemoryChart:
        """Bars against ``device``'s memory (none when it is ``None``), captioned with the headline's verdict."""
        from mlsysim_nb.render.numbers import capacity_text

        caption = headline.verdict.text if headline.verdict is not None else ""
        if device is None:
            return cls(bars, caption=caption)
        capacity = device.memory.capacity
        label = f"{device.name}: {capacity_text(capacity)}"
        return cls(bars, float(capacity.m_as("byte")), label, caption=caption)
