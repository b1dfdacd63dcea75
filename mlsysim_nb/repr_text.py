"""Plain-text and Markdown renderings of a derivation (same content as the HTML)."""

from __future__ import annotations

from typing import Any

from mlsysim_nb.explain import Derivation, Section, Step, explain, step_parts

__all__ = ["markdown_table", "scenario_markdown", "scenario_text"]


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, cells escaped."""
    lines = ["| " + " | ".join(map(_md_escape, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_md_escape(str(c)) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _one_line(text: str) -> str:
    """Text reprs keep one line per row: a newline in a user's name becomes a space."""
    return " ".join(str(text).split())


def _section_headline(section: Section) -> str:
    from mlsysim_nb.repr_html import section_headline

    return section_headline(section)


def _step_lines(step: Step) -> list[str]:
    symbol, equation, substituted, result = step_parts(step)
    case = f"   ({step.case_label})" if step.case_label else ""
    same = step.label == step.name.replace("_", " ")
    head = f"  {step.name}" + ("" if same else f": {step.label}")
    eq = f"    {symbol} = {equation}{case}"
    if step.not_applicable:
        return [head, eq, f"      {step.not_applicable}"]
    return [head, eq, f"      = {substituted}", f"      = {result}"]


def derivation_text(d: Derivation) -> str:
    """The derivation as indented plain text."""
    lines = [f"{_one_line(d.title)} ({d.kind})", _one_line(d.summary), "", "Inputs"]
    width = max([len(r.name) for r in d.inputs] or [0])
    lines += [f"  {r.name:<{width}}  {_one_line(r.value)}" for r in d.inputs]
    if d.unset:
        lines.append(f"  not set (None): {', '.join(d.unset)}")
    for section in d.sections:
        headline = _section_headline(section)
        lines += ["", f"{section.title}" + (f" — {headline}" if headline else "")]
        for step in section.steps:
            lines += _step_lines(step)
    if d.notes:
        lines += ["", "What this model assumes and leaves out"]
        lines += [f"  {k}: {v}" for k, v in d.notes]
    return "\n".join(lines)


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*").replace("_", "\\_").replace("<", "&lt;")


def derivation_markdown(d: Derivation) -> str:
    """The derivation as Markdown: headings and tables."""
    out = [f"**{_md_escape(d.title)}** ({d.kind})", "", _md_escape(d.summary), "", "| input | value |", "|---|---|"]
    out += [f"| `{r.name}` | {_md_escape(r.value)} |" for r in d.inputs]
    if d.unset:
        out += ["", "Not set (None): " + ", ".join(f"`{n}`" for n in d.unset)]
    for section in d.sections:
        headline = _section_headline(section)
        out += ["", f"**{section.title}**" + (f" — {_md_escape(headline)}" if headline else ""), ""]
        out += ["| quantity | equation | with numbers | result |", "|---|---|---|---|"]
        for s in section.steps:
            symbol, equation, substituted, result = step_parts(s)
            eq = _md_escape(f"{symbol} = {equation}")
            if s.not_applicable:
                out.append(f"| `{s.name}` | {eq} | {_md_escape(s.not_applicable)} | |")
            else:
                out.append(f"| `{s.name}` | {eq} | {_md_escape(substituted)} | {_md_escape(result)} |")
    out += [""] + [f"- *{k}*: {_md_escape(v)}" for k, v in d.notes]
    return "\n".join(out)


def scenario_text(scenario: Any) -> str:
    """The text derivation of a scenario. Never raises."""
    try:
        return derivation_text(explain(scenario))
    except Exception as err:  # noqa: BLE001 - a repr must never raise
        return f"{type(err).__name__}: {err}"


def scenario_markdown(scenario: Any) -> str:
    """The Markdown derivation of a scenario. Never raises."""
    try:
        return derivation_markdown(explain(scenario))
    except Exception as err:  # noqa: BLE001
        return f"{type(err).__name__}: {err}"
