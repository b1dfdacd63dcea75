"""Command line: ``python -m mlsysim_nb show NAME [--html FILE]`` and ``python -m mlsysim_nb list``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["main"]

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


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    from html import escape

    from mlsysim_nb import Scenarios

    parser = argparse.ArgumentParser(prog="python -m mlsysim_nb", description="Training-memory scenarios.")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the derivation of a named scenario")
    show.add_argument("name", help="a named scenario, e.g. Gpt2Fp32AdamOnH100 (see `list`)")
    show.add_argument("--html", metavar="FILE", type=_html_file, help="also write a standalone HTML page of its repr")
    show.add_argument("--no-chart", action="store_true", help="leave the chart out of the HTML page")
    sub.add_parser("list", help="list the named scenarios")
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


if __name__ == "__main__":
    raise SystemExit(main())
