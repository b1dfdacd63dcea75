"""HTML reprs as small pure functions returning ``str`` (xarray's formatting_html habit).

Static-safe: collapsing uses ``<details>``/``<summary>``, equations are
``<var>``/``<sub>``, data sits in tables; no ids, no scripts, and every
interpolated string is escaped. The stylesheet (``static/repr.css``) only
decorates: GitHub and nbviewer strip it and the content still reads.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from functools import lru_cache, partial
from importlib import resources
from typing import TYPE_CHECKING, Any

from mlsysim_nb.render.derivation import Derivation, InputRow, Section, Step, explain, step_parts
from mlsysim_nb.render.plain import section_headline, visible

if TYPE_CHECKING:
    from mlsysim_nb.model.scenario import Scenario

__all__ = ["Chosen", "catalog_html", "hardware_html", "scenario_html", "workload_html", "wrap"]


def escape(text: str) -> str:
    """``text`` for HTML: escaped, with control and bidirectional characters written as visible escapes."""
    return html.escape(visible(text))


@lru_cache(maxsize=1)
def _css() -> str:
    return (resources.files("mlsysim_nb.render") / "static" / "repr.css").read_text(encoding="utf-8")


def wrap(body: str) -> str:
    """``body`` (HTML already escaped) in the package's block, with its stylesheet: every repr's outer element."""
    return f'<div class="msn-wrap"><style>{_css()}</style>{body}</div>'


def _collapsible(title: str, headline: str, body: str, *, open_: bool = False) -> str:
    attr = " open" if open_ else ""
    head = f"<strong>{escape(title)}</strong>"
    if headline:
        head += f' <span class="msn-headline">&mdash; {escape(headline)}</span>'
    return f"<details{attr}><summary>{head}</summary>{body}</details>"


inputs_section = partial(_collapsible, "Inputs", "")
notes_section = partial(_collapsible, "What this model assumes and leaves out", "")


def _input_row(row: InputRow) -> str:
    tip = f' title="{escape(row.help)}"' if row.help else ""
    return (
        f'<tr{tip}><th class="msn-name">{escape(row.name)}</th>'
        f'<td class="msn-label">{escape(row.label)}</td><td>{escape(row.value)}</td></tr>'
    )


def inputs_table(rows: tuple[InputRow, ...], unset: tuple[str, ...] = ()) -> str:
    """The inputs as a name / meaning / value table; inputs left at None folded into one line."""
    table = "<table><tbody>" + "".join(_input_row(r) for r in rows) + "</tbody></table>"
    if unset:
        names = ", ".join(f"<code>{escape(n)}</code>" for n in unset)
        table += f'<p class="msn-unset">Not set (None): {names}</p>'
    return table


def _step_row(step: Step, chosen: str = "") -> str:
    """One step as a table row; ``chosen`` (a panel setting's words) marks it, in words as well as style."""
    # the formula renderer escapes names and symbols; values are formatted numbers
    symbol, equation, substituted, result = step_parts(step, html=True)
    label = (
        "" if step.label == step.name.replace("_", " ") else f'<br><span class="msn-label">{escape(step.label)}</span>'
    )
    tag = f'<br><span class="msn-chosen-tag">&#9664; {escape(chosen)}</span>' if chosen else ""
    tr = '<tr class="msn-chosen">' if chosen else "<tr>"
    name = f'<th class="msn-name">{escape(step.name)}{label}{tag}</th>'
    case = f' <span class="msn-case">({escape(step.case_label)})</span>' if step.case_label else ""
    if step.not_applicable:
        return (
            f"{tr}{name}<td>{symbol} = {equation}{case}</td>"
            f'<td class="msn-na" colspan="2">{escape(step.not_applicable)}</td></tr>'
        )
    return (
        f"{tr}{name}<td>{symbol} = {equation}{case}</td>"
        f"<td>= {substituted}</td>"
        f'<td class="msn-result">= {result}</td></tr>'
    )


def section_html(section: Section, *, open_: bool = False, chosen: Chosen | None = None) -> str:
    """One collapsible group of derivation steps; its summary states the key result.

    ``chosen`` marks the step a panel's display setting stands for (and opens its section).
    """
    mark = {chosen.step: chosen.label} if chosen is not None else {}
    open_ = open_ or any(s.name in mark for s in section.steps)
    rows = "".join(_step_row(s, mark.get(s.name, "")) for s in section.steps)
    head = "<thead><tr><th>quantity</th><th>equation</th><th>with numbers</th><th>result</th></tr></thead>"
    body = f"<table>{head}<tbody>{rows}</tbody></table>"
    return _collapsible(section.title, section_headline(section), body, open_=open_)


def notes_html(notes: tuple[tuple[str, str], ...]) -> str:
    """What the model assumes and leaves out."""
    items = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in notes)
    return notes_section(f'<dl class="msn-notes">{items}</dl>')


_VERDICT_CLASS = {True: "msn-fits", False: "msn-nofit", None: "msn-verdict"}


def summary_html(derivation: Derivation) -> str:
    """Title line and the one-line answer, the verdict coloured (and spelled out, for readers without colour)."""
    headline = derivation.headline
    text = escape(headline.text)
    verdict = headline.verdict
    if verdict is not None and verdict.text:
        text += f': <span class="{_VERDICT_CLASS[verdict.ok]}">{escape(verdict.text)}</span>'
    kind = f'<span class="msn-kind">{escape(derivation.kind)}</span>'
    title = f'<div class="msn-title">{escape(derivation.title)} {kind}</div>'
    caveats = "".join(f'<div class="msn-warning">&#9888; {escape(c)}</div>' for c in derivation.caveats)
    return f'{title}<div class="msn-summary">{text}</div>{caveats}'


@dataclass(frozen=True)
class Chosen:
    """A display setting of a live panel: its words (``"recomputation: full"``) and the step it stands for."""

    label: str
    step: str


def chosen_html(derivation: Derivation, chosen: Chosen) -> str:
    """One line under the summary: the setting and its step's result (nothing if no step has that name)."""
    step = next((s for d in derivation.sections for s in d.steps if s.name == chosen.step), None)
    if step is None:
        return ""
    result = step.not_applicable or step_parts(step, html=True)[3]
    return f'<div class="msn-chosen-line">{escape(chosen.label)} = {result}</div>'


def derivation_html(derivation: Derivation, chart: str = "", *, chosen: Chosen | None = None, lead: str = "") -> str:
    """Summary, inputs, chart, derivation sections and notes, top to bottom (``lead``, HTML, above them)."""
    inputs = inputs_section(inputs_table(derivation.inputs, derivation.unset), open_=True)
    parts = [lead, summary_html(derivation)]
    if chosen is not None:
        parts.append(chosen_html(derivation, chosen))
    parts.append(inputs)
    if chart:
        parts.append(f'<div class="msn-card">{chart}</div>')
    parts.extend(section_html(s, open_=i == 0, chosen=chosen) for i, s in enumerate(derivation.sections))
    if derivation.notes:
        parts.append(notes_html(derivation.notes))
    return wrap("".join(parts))


def scenario_html(scenario: Scenario, *, chart: bool = True, chosen: Chosen | None = None, lead: str = "") -> str:
    """The full HTML repr of a scenario. Never raises: a failure becomes a visible message.

    ``chosen``: a live panel's display setting, marked in the derivation (see :class:`Chosen`);
    ``lead``: HTML (already escaped) shown first, inside the repr's block (a panel's snapshot says so there).
    """
    try:
        img = ""
        if chart and not scenario.is_sweep:
            from mlsysim_nb.render.charts import png_img

            img = png_img(scenario)
        return derivation_html(explain(scenario), img, chosen=chosen, lead=lead)
    except Exception as err:  # noqa: BLE001 - a repr must never raise in a notebook
        return error_html(f"{type(err).__name__}: {err}")


def error_html(message: str) -> str:
    """A visible error box (used by the repr and by live controls)."""
    return wrap(f'<div class="msn-error">{escape(message)}</div>')


def warning_html(message: str) -> str:
    """A visible caution (a live panel's caveat about numbers it did apply)."""
    return wrap(f'<div class="msn-warning">&#9888; {escape(message)}</div>')


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def workload_html(workload: Any) -> str:
    """A workload as a small table."""
    rows = [["parameters", f"{workload.parameters.magnitude:,.0f}"]]
    for attr, value in workload.shown_fields():  # the shape, then what differs from the GPT-style layer
        rows.append([attr, "None" if value is None else str(value)])
    if workload.source:
        rows.append(["source", workload.source])
    title = f'<div class="msn-title">{escape(workload.name)} <span class="msn-kind">Workload</span></div>'
    return wrap(title + _table(["field", "value"], rows))


def hardware_html(node: Any) -> str:
    """An accelerator as a small table with its source."""
    mem = node.memory
    rows = [
        [
            "memory.capacity",
            f"{mem.capacity:~P} ({mem.capacity.m_as('GB'):,.1f} GB, {mem.capacity.m_as('GiB'):,.1f} GiB)",
        ],
        ["memory.bandwidth", f"{mem.bandwidth:~P}"],
        ["peak_flops", "None" if node.peak_flops is None else f"{node.peak_flops:~P}"],
        ["vendor", node.vendor or "None"],
        ["source", node.source or "None"],
    ]
    if node.note:
        rows.append(["note", node.note])
    title = f'<div class="msn-title">{escape(node.name)} <span class="msn-kind">HardwareNode</span></div>'
    return wrap(title + _table(["field", "value"], rows))


def catalog_html(title: str, header: list[str], rows: list[list[str]]) -> str:
    """A catalog (hardware or scenarios) as one table."""
    head = f'<div class="msn-title">{escape(title)}</div>'
    return wrap(head + _table(header, rows))
