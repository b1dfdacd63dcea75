"""Plain-text and Markdown renderings of a derivation (same content as the HTML)."""

from __future__ import annotations

from typing import Any

from mlsysim_nb.explain import Derivation, explain

__all__ = ["markdown_table", "scenario_markdown", "scenario_text"]


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, cells escaped."""
    lines = ["| " + " | ".join(map(_md_escape, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_md_escape(str(c)) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _step_lines(step: Any) -> list[str]:
    case = f"   ({step.case})" if step.case else ""
    same = step.label == step.name.replace("_", " ")
    head = f"  {step.name}" + ("" if same else f": {step.label}")
    eq = f"    {step.symbol[0]} = {step.equation[0]}{case}"
    if step.not_applicable:
        return [head, eq, f"      {step.not_applicable}"]
    return [head, eq, f"      = {step.substituted[0]}", f"      = {step.result[0]}"]


def derivation_text(d: Derivation) -> str:
    """The derivation as indented plain text."""
    lines = [f"{d.title} ({d.kind})", d.summary, "", "Inputs"]
    width = max(len(r.name) for r in d.inputs)
    lines += [f"  {r.name:<{width}}  {r.value}" for r in d.inputs]
    for section in d.sections:
        lines += ["", f"{section.title}" + (f" — {section.headline}" if section.headline else "")]
        for step in section.steps:
            lines += _step_lines(step)
    lines += ["", "What this model assumes and leaves out"]
    lines += [f"  {k}: {v}" for k, v in d.notes]
    return "\n".join(lines)


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*").replace("_", "\\_").replace("<", "&lt;")


def derivation_markdown(d: Derivation) -> str:
    """The derivation as Markdown: headings and tables."""
    out = [f"**{_md_escape(d.title)}** ({d.kind})", "", _md_escape(d.summary), "", "| input | value |", "|---|---|"]
    out += [f"| `{r.name}` | {_md_escape(r.value)} |" for r in d.inputs]
    for section in d.sections:
        out += ["", f"**{section.title}**" + (f" — {_md_escape(section.headline)}" if section.headline else ""), ""]
        out += ["| quantity | equation | with numbers | result |", "|---|---|---|---|"]
        for s in section.steps:
            eq = _md_escape(f"{s.symbol[0]} = {s.equation[0]}")
            if s.not_applicable:
                out.append(f"| `{s.name}` | {eq} | {_md_escape(s.not_applicable)} | |")
            else:
                out.append(f"| `{s.name}` | {eq} | {_md_escape(s.substituted[0])} | {_md_escape(s.result[0])} |")
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
