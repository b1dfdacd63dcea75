"""``compare(*scenarios)``: key quantities side by side, differences from the first highlighted."""

from __future__ import annotations

import sys
from html import escape
from typing import TYPE_CHECKING, Any

import numpy as np

from mlsysim_nb.errors import NotApplicableError
from mlsysim_nb.formula import format_number
from mlsysim_nb.render.display import RichRepr
from mlsysim_nb.render.html import wrap
from mlsysim_nb.render.numbers import format_percent, format_result
from mlsysim_nb.render.plain import one_line

if TYPE_CHECKING:
    from mlsysim_nb.model.scenario import Scenario

__all__ = ["Comparison", "compare"]


def _cell(s: Scenario, name: str) -> tuple[str, Any]:
    try:
        value = s.magnitude(name)
    except (NotApplicableError, KeyError):
        return "n/a", None
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value)), bool(value)  # read as in Python
    return format_result(s.base_unit(name), value), value


def _change(first: Any, value: Any) -> str:
    """``(▲ 12 %)`` relative to the first column; no percentage across zero or a sign change."""
    if first is None or value is None or first == value:
        return ""
    if isinstance(value, bool) or isinstance(first, bool):
        return " (changed)"
    if first == 0 or first < 0 or value < 0:
        return f" ({'▲' if value > first else '▼'} {format_number(abs(value - first))})"
    pct = 100 * (value - first) / first
    return f" ({'▲' if pct > 0 else '▼'} {format_percent(abs(pct))})"


class Comparison(RichRepr):
    """Scenarios side by side; a cell that differs from the first column is marked ▲/▼ with its change."""

    def __init__(self, scenarios: list[Any]) -> None:
        kinds = {type(s) for s in scenarios}
        if len(scenarios) < 2 or len(kinds) != 1:
            msg = "compare() needs two or more scenarios of the same class"
            raise TypeError(msg)
        swept = [s.title() for s in scenarios if s.is_sweep]
        if swept:
            msg = (
                f"compare() lines up single scenarios; {swept[0]!r} holds arrays (a sweep). "
                "Compare its values with sweep(...) and its plots, or pick single values with variant()"
            )
            raise TypeError(msg)
        self.scenarios = scenarios
        self.names = scenarios[0].comparison_rows()

    def table(self) -> list[tuple[str, list[tuple[str, str]]]]:
        """Rows of (quantity, [(text, change marker)])."""
        rows = []
        for name in self.names:
            cells = [_cell(s, name) for s in self.scenarios]
            first = cells[0][1]
            rows.append((name, [(text, _change(first, value) if i else "") for i, (text, value) in enumerate(cells)]))
        return rows

    def _titles(self) -> list[str]:
        """Each scenario's title as shown: on one line, control and bidirectional characters made visible."""
        return [one_line(s.title()) for s in self.scenarios]

    def _repr_text_(self) -> str:
        lines = ["Comparison: " + " | ".join(self._titles())]
        for name, cells in self.table():
            lines.append(f"  {one_line(name)}: " + " | ".join(one_line(t + c) for t, c in cells))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "<tr><th>quantity</th>" + "".join(f"<th>{escape(t)}</th>" for t in self._titles()) + "</tr>"
        body = ""
        for name, cells in self.table():
            tds = "".join(
                f'<td><strong class="msn-diff">{escape(t)}{escape(c)}</strong></td>' if c else f"<td>{escape(t)}</td>"
                for t, c in cells
            )
            body += f'<tr><th class="msn-name">{escape(name)}</th>{tds}</tr>'
        note = '<span class="msn-kind">differences from the first column in bold</span>'
        title = f'<div class="msn-title">Comparison {note}</div>'
        return wrap(f"{title}<table><thead>{head}</thead><tbody>{body}</tbody></table>")

    def __repr__(self) -> str:
        return f"Comparison({len(self.scenarios)} scenarios)"


def _panels(scenarios: tuple[Any, ...]) -> list[Any]:
    """The live panels among ``scenarios``; none unless the explorer was loaded (so a static table loads no widgets)."""
    explorer = sys.modules.get("mlsysim_nb.live.explorer")
    if explorer is None:  # no panel can exist before its module is imported
        return []
    return [s for s in scenarios if isinstance(s, explorer.ScenarioExplorer)]


def compare(*scenarios: Any) -> Any:
    """Two or more scenarios side by side (static HTML); live when one is an explorer panel.

    >>> from mlsysim_nb import Scenarios, compare
    >>> c = compare(Scenarios.Gpt2Fp32AdamOnH100, Scenarios.Gpt2Fp32AdamOnH100.variant(bytes_per_value=2))
    >>> "▼ 50 %" in c._repr_text_()
    True
    """
    panels = _panels(scenarios)
    if not panels:
        return Comparison(list(scenarios))
    import ipywidgets as w

    from mlsysim_nb.live.explorer import ScenarioExplorer

    out = w.HTML()

    def refresh(_: Any = None) -> None:
        current = [s.scenario if isinstance(s, ScenarioExplorer) else s for s in scenarios]
        out.value = Comparison(current)._repr_html_()

    for panel in panels:
        panel.on_change(refresh)
    refresh()
    return out
