"""Command line: ``python -m mlsysim_nb show NAME [--html FILE]`` and ``list``; ``scan-submissions`` and ``regrade``.

The two grading commands are the course's (:mod:`mlsysim_nb.course.commands`, with the ``course`` extra): this
module hands them their arguments, and without the extra says which extra to install.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import os
import sys
import unicodedata
from pathlib import Path
from typing import Any

__all__ = ["main"]

#: the course's commands, parsed and run by :mod:`mlsysim_nb.course.commands` (the ``course`` extra)
_COURSE_COMMANDS = {
    "scan-submissions": "flag submitted notebooks whose cells tamper with the grading (the course extra)",
    "regrade": "the grade of record: regrade submissions outside their kernels (the course extra)",
}

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title></head>
<body>{body}</body></html>
"""


def _html_file(text: str) -> str:
    """The ``--html`` argument: a file name, never empty."""
    if not text.strip():
        msg = "needs a file name, got an empty string"
        raise argparse.ArgumentTypeError(msg)
    return text


def _write_page(path: str, page: str) -> str | None:
    """Write the page; returns the one-line reason when it cannot be written."""
    try:
        Path(path).write_text(page, encoding="utf-8")
    except OSError as err:
        return f"cannot write {path}: {err.strerror or err}"
    return None


#: Plain-ASCII spellings of the symbols derivations print, for a terminal that cannot show them.
_ASCII = {
    "·": "*", "×": "x", "—": "--", "–": "-", "−": "-", "≤": "<=", "≥": ">=", "≈": "~", "′": "'",
    "⌊": "floor(", "⌋": ")", "⌈": "ceil(", "⌉": ")", "⏎": "\\n", "…": "...", "▲": "+", "▼": "-",
    "√": "sqrt", "µ": "u", "±": "+/-", "→": "->", "’": "'", "‘": "'", "“": '"', "”": '"',
}  # fmt: skip
_SUPERSCRIPT_CHARS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺"
_SUPERSCRIPTS = str.maketrans(_SUPERSCRIPT_CHARS, "0123456789-+")


def _ascii_spelling(text: str) -> str:
    r"""``text`` in ASCII: known symbols spelt out, exponents as ``^12``, Greek by name, others as ``\u2248``."""
    out: list[str] = []
    exponent = False  # inside a run of superscripts: one ^ for the whole exponent
    for char in text:
        if char in _SUPERSCRIPT_CHARS:
            out.append(("" if exponent else "^") + char.translate(_SUPERSCRIPTS))
            exponent = True
            continue
        exponent = False
        greek = unicodedata.name(char, "")
        if char in _ASCII:
            out.append(_ASCII[char])
        elif greek.startswith("GREEK SMALL LETTER "):
            out.append(greek.removeprefix("GREEK SMALL LETTER ").lower())
        elif char.isascii():
            out.append(char)
        else:
            out.append(char.encode("ascii", "backslashreplace").decode("ascii"))
    return "".join(out)


def _degrade(error: UnicodeError) -> tuple[str, int]:
    """The codec error handler: what the stream's encoding cannot write is written in ASCII instead."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return _ascii_spelling(error.object[error.start : error.end]), error.end


codecs.register_error("mlsysim_nb.ascii", _degrade)


def _tolerant(stream: Any) -> None:
    """Let ``stream`` write any character: what its encoding (ASCII under ``LC_ALL=C``) lacks is spelt in ASCII."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        with contextlib.suppress(ValueError, OSError):  # a closed or detached stream: nothing to print to
            reconfigure(errors="mlsysim_nb.ascii")


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status.

    Output that cannot be written in the terminal's encoding degrades to ASCII; a reader that
    stops early (``list | head -1``) ends the program quietly, with exit status 1.
    """
    for stream in (sys.stdout, sys.stderr):
        _tolerant(stream)
    try:
        status = _run(argv)
        sys.stdout.flush()  # a closed pipe shows here, not in a traceback at exit
    except BrokenPipeError:
        # the reader has gone: point stdout at /dev/null so that the flush at exit stays quiet
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):  # no file descriptor (a captured stream): nothing more to flush
            pass
        finally:
            os.close(devnull)
        return 1
    return status


def _run(argv: list[str] | None) -> int:
    from html import escape

    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in _COURSE_COMMANDS:
        return _course_command(argv)
    from mlsysim_nb import Scenarios

    parser = argparse.ArgumentParser(prog="python -m mlsysim_nb", description="Training-memory scenarios.")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the derivation of a named scenario")
    show.add_argument("name", help="a named scenario, e.g. Gpt2Fp32AdamOnH100 (see `list`)")
    show.add_argument("--html", metavar="FILE", type=_html_file, help="also write a standalone HTML page of its repr")
    show.add_argument("--no-chart", action="store_true", help="leave the chart out of the HTML page")
    sub.add_parser("list", help="list the named scenarios")
    for command, summary in _COURSE_COMMANDS.items():  # listed here; the course's own parser reads their arguments
        sub.add_parser(command, help=summary)
    args = parser.parse_args(argv)
    if args.command == "list":
        for name, kind, title, _ in Scenarios.rows():
            print(f"{name:45} {kind:26} {title}")
        return 0
    if args.name not in Scenarios:
        print(f"unknown scenario {args.name!r}; run `python -m mlsysim_nb list`", file=sys.stderr)
        return 2
    scenario = Scenarios[args.name]
    print(scenario.to_text())
    if args.html is not None:
        page = _PAGE.format(title=escape(scenario.name or args.name), body=scenario.to_html(chart=not args.no_chart))
        problem = _write_page(args.html, page)
        if problem:
            print(problem, file=sys.stderr)
            return 2
        print(f"\nwrote {args.html}", file=sys.stderr)
    return 0


def _course_command(argv: list[str]) -> int:
    """``scan-submissions`` or ``regrade``, run by the course's tools; without the ``course`` extra, what to install."""
    try:
        from mlsysim_nb.course.commands import main as course_main
    except ImportError as error:
        if error.name != "mlsysim_nb.course":  # not the missing extra (mlsysim_nb.course.CourseExtraError)
            raise
        print(f"{argv[0]}: {error}", file=sys.stderr)
        return 2
    return course_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
