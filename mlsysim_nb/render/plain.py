"""The plain strings every rendering builds on: visible escapes, one-line text, a section's summary line.

The text, Markdown and HTML renderings (and the catalogs, comparisons and panels) read these, so
that none of them imports another.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mlsysim_nb.render.derivation import step_parts

if TYPE_CHECKING:
    from mlsysim_nb.render.derivation import Section

__all__ = ["one_line", "section_headline", "visible"]

# every character Python's str.splitlines() breaks on
_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
# characters that are invisible or rearrange what follows: C0 and C1 controls (NUL, tab, ESC, DEL, ...),
# the line and paragraph separators (a line break to some readers, none to others), the bidirectional
# embeddings, overrides, isolates and marks, and lone surrogates (which no encoder writes)
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    r"""``text`` with every control, bidirectional or surrogate character written as a visible escape.

    The stored text is not changed; only what a repr shows. Line breaks are left to :func:`one_line`.

    >>> print(visible("a\x00b\u202ec"))
    a\x00b\u202ec
    """
    return _INVISIBLE.sub(_escape_char, text)


def one_line(text: str) -> str:
    r"""``text`` on one line: each line break becomes ⏎, so a text repr keeps one line per row.

    Other control and bidirectional characters become visible escapes (:func:`visible`), so a
    name cannot forge a line, hide text or reverse what follows it.

    >>> one_line("GPT-2\nsmall")
    'GPT-2⏎small'
    >>> print(one_line("a\x00b"))
    a\x00b
    """
    return visible(_LINE_BREAK.sub("⏎", text))


def section_headline(section: Section) -> str:
    """The section's summary line as text: its headline step's symbol and result, or why it has none."""
    step = section.headline_step()
    if step is None:
        return ""
    if step.not_applicable:
        return step.not_applicable
    symbol, _, _, result = step_parts(step)
    return f"{symbol} = {result}"
