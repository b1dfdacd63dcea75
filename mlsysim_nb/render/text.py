"""Plain-text and Markdown renderings of a derivation (same content as the HTML)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mlsysim_nb.render.derivation import Derivation, Step, explain, step_parts
from mlsysim_nb.render.plain import one_line, section_headline, visible

if TYPE_CHECKING:
    from mlsysim_nb.model.scenario import Scenario

__all__ = ["escape_markdown", "markdown_table", "one_line", "scenario_markdown", "scenario_text", "visible"]

# inline Markdown syntax: emphasis, code, links and images, tables, strikethrough, math, escapes, headings
_MD_PUNCTUATION = re.compile(r"([\\`*_\[\]|~$#])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# a bare URL GitHub would link: a scheme ``[A-Za-z][\w+.-]*://`` or ``www.`` after a word boundary; found by
# _link_starts in linear time (the one regex backtracks over every long word: 40,000 letters took seconds)
_SCHEME_LETTER = re.compile(r"[A-Za-z]", re.IGNORECASE)
_WWW = re.compile(r"\bwww\.", re.IGNORECASE)
# a line that starts like a list item, a setext underline or an ordered list
_BLOCK_START = re.compile(r"^(\s*)(?:([-+=])|(\d+)([.)]))")


def _in_scheme(char: str) -> bool:
    r"""A character of ``[\w+.-]``: what may follow a scheme's first letter."""
    return char.isalnum() or char in "_+.-"


def _link_spans(text: str) -> list[tuple[int, int]]:
    r"""Where bare URLs are, as ``(start, end)`` spans, found in one pass.

    The spans are the leftmost, non-overlapping matches of ``[A-Za-z][\w+.-]*://|\bwww\.``
    (case-insensitive). Each ``://`` ends at most one scheme: the first letter of the unbroken run of ``[\w+.-]``
    before it. Runs before different ``://`` never overlap, so every character is read a bounded
    number of times.
    """
    spans: list[tuple[int, int]] = []
    www = [m.start() for m in _WWW.finditer(text)]
    w = 0
    pos = 0
    colon = text.find("://")
    scheme = -1  # the leftmost scheme start at or after pos, once found (kept while a www. before it wins)
    while True:
        if scheme < pos:
            scheme = -1
        while colon != -1 and scheme == -1:
            run = colon
            while run > pos and _in_scheme(text[run - 1]):
                run -= 1
            scheme = next((i for i in range(run, colon) if _SCHEME_LETTER.match(text[i])), -1)
            if scheme == -1:
                colon = text.find("://", colon + 1)
        while w < len(www) and www[w] < pos:
            w += 1
        www_start = www[w] if w < len(www) else -1
        if scheme == -1 and www_start == -1:
            return spans
        if scheme != -1 and (www_start == -1 or scheme <= www_start):
            spans.append((scheme, colon + 3))
            pos = colon + 3
            colon = text.find("://", pos)
            scheme = -1
        else:
            spans.append((www_start, www_start + 4))
            pos = www_start + 4
            if colon != -1 and colon < pos:
                colon, scheme = text.find("://", pos), -1


def _unlink(text: str) -> str:
    """Each bare URL's ``:`` and ``.`` as entities, so that no renderer links it."""
    spans = _link_spans(text)
    if not spans:
        return text
    out, last = [], 0
    for start, end in spans:
        out += [text[last:start], text[start:end].replace(":", "&#58;").replace(".", "&#46;")]
        last = end
    out.append(text[last:])
    return "".join(out)


def _escape_block_start(match: re.Match[str]) -> str:
    lead, mark, digits, dot = match.groups()
    return lead + ("\\" + mark if mark else digits + "\\" + dot)


def escape_markdown(text: str) -> str:
    r"""``text`` as literal Markdown: no markup, link, image, math or table cell break survives.

    Line breaks become ⏎, ``&``, ``<`` and ``>`` become entities, inline syntax is
    backslash-escaped and a bare URL is not linked, so a name such as
    ``![i](https://x)`` shows as written.

    >>> escape_markdown("![i](https://x) | *a* & <b>")
    '!\\[i\\](https&#58;//x) \\| \\*a\\* &amp; &lt;b&gt;'
    """
    text = one_line(text)
    text = text.replace("&", _HTML["&"]).replace("<", _HTML["<"]).replace(">", _HTML[">"])
    text = _MD_PUNCTUATION.sub(r"\\\1", text)
    # a bare URL would turn into a link (GitHub's extension) and swallow a following entity
    text = _unlink(text)
    return _BLOCK_START.sub(_escape_block_start, text)


def _code(name: str) -> str:
    """A code span for an identifier; anything a code span cannot hold safely is escaped instead."""
    if re.fullmatch(r"[\w.()=, -]+", name):
        return f"`{name}`"
    return escape_markdown(name)


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, cells escaped."""
    lines = ["| " + " | ".join(map(escape_markdown, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(escape_markdown(str(c)) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _step_lines(step: Step) -> list[str]:
    symbol, equation, substituted, result = step_parts(step)
    case = f"   ({one_line(step.case_label)})" if step.case_label else ""
    same = step.label == step.name.replace("_", " ")
    head = f"  {one_line(step.name)}" + ("" if same else f": {one_line(step.label)}")
    eq = f"    {symbol} = {equation}{case}"
    if step.not_applicable:
        return [head, eq, f"      {one_line(step.not_applicable)}"]
    return [head, eq, f"      = {substituted}", f"      = {result}"]


def derivation_text(d: Derivation) -> str:
    """The derivation as indented plain text, one line per row whatever the names hold."""
    lines = [f"{one_line(d.title)} ({one_line(d.kind)})", one_line(d.summary)]
    lines += [f"Caveat: {one_line(c)}" for c in d.caveats]
    lines += ["", "Inputs"]
    width = max([len(one_line(r.name)) for r in d.inputs] or [0])
    lines += [f"  {one_line(r.name):<{width}}  {one_line(r.value)}" for r in d.inputs]
    if d.unset:
        lines.append(f"  not set (None): {', '.join(d.unset)}")
    for section in d.sections:
        headline = section_headline(section)
        lines += ["", one_line(section.title) + (f" — {one_line(headline)}" if headline else "")]
        for step in section.steps:
            lines += _step_lines(step)
    if d.notes:
        lines += ["", "What this model assumes and leaves out"]
        lines += [f"  {one_line(k)}: {one_line(v)}" for k, v in d.notes]
    return "\n".join(lines)


def _step_row(s: Step) -> str:
    symbol, equation, substituted, result = step_parts(s)
    eq = escape_markdown(f"{symbol} = {equation}")
    if s.not_applicable:
        return f"| {_code(s.name)} | {eq} | {escape_markdown(s.not_applicable)} | |"
    return f"| {_code(s.name)} | {eq} | {escape_markdown(substituted)} | {escape_markdown(result)} |"


def derivation_markdown(d: Derivation) -> str:
    """The derivation as Markdown: headings and tables, every interpolated string escaped."""
    md = escape_markdown
    out = [f"**{md(d.title)}** ({md(d.kind)})", "", md(d.summary), ""]
    out += [f"> **Caveat:** {md(c)}\n" for c in d.caveats]
    out += ["| input | value |", "|---|---|"]
    out += [f"| {_code(r.name)} | {md(r.value)} |" for r in d.inputs]
    if d.unset:
        out += ["", "Not set (None): " + ", ".join(_code(n) for n in d.unset)]
    for section in d.sections:
        headline = section_headline(section)
        out += ["", f"**{md(section.title)}**" + (f" — {md(headline)}" if headline else ""), ""]
        out += ["| quantity | equation | with numbers | result |", "|---|---|---|---|"]
        out += [_step_row(s) for s in section.steps]
    out += [""] + [f"- *{md(k)}*: {md(v)}" for k, v in d.notes]
    return "\n".join(out)


def scenario_text(scenario: Scenario) -> str:
    """The text derivation of a scenario. Never raises."""
    try:
        return derivation_text(explain(scenario))
    except Exception as err:  # noqa: BLE001 - a repr must never raise
        return f"{type(err).__name__}: {err}"


def scenario_markdown(scenario: Scenario) -> str:
    """The Markdown derivation of a scenario. Never raises."""
    try:
        return derivation_markdown(explain(scenario))
    except Exception as err:  # noqa: BLE001
        return escape_markdown(f"{type(err).__name__}: {err}")
