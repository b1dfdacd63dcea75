"""Command line: ``python -m mlsysim_nb show NAME [--html FILE]``, ``list``, ``scan-submissions`` and ``regrade``."""

from __future__ import annotations

import argparse
import codecs
import contextlib
import os
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

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

    from mlsysim_nb import Scenarios

    parser = argparse.ArgumentParser(prog="python -m mlsysim_nb", description="Training-memory scenarios.")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the derivation of a named scenario")
    show.add_argument("name", help="a named scenario, e.g. Gpt2Fp32AdamOnH100 (see `list`)")
    show.add_argument("--html", metavar="FILE", type=_html_file, help="also write a standalone HTML page of its repr")
    show.add_argument("--no-chart", action="store_true", help="leave the chart out of the HTML page")
    sub.add_parser("list", help="list the named scenarios")
    scan = sub.add_parser("scan-submissions", help="flag submitted notebooks whose cells tamper with the grading")
    scan.add_argument("paths", nargs="+", type=Path, help="notebooks or folders (e.g. nbgrader's submitted/)")
    again = sub.add_parser(
        "regrade", help="the grade of record: regrade submissions outside their kernels, against the hidden tests"
    )
    again.add_argument("--source", type=Path, required=True, help="the instructor's notebook (notebooks/NN_name.ipynb)")
    again.add_argument("submissions", nargs="+", type=Path, help="submitted notebooks of that assignment, or folders")
    again.add_argument(
        "--gradebook", type=Path, help="the CSV gradebook to append to (default: regrade_NN_name.csv here)"
    )
    again.add_argument("--nbgrader-db", type=Path, help="also write the points into nbgrader's gradebook.db")
    again.add_argument("--cell-timeout", type=_seconds, default=120.0, help="seconds one cell may run (120)")
    again.add_argument("--budget", type=_seconds, default=600.0, help="seconds one submission may run in all (600)")
    again.add_argument("--output-cap", type=_megabytes, default=16.0, help="MB of output one submission may print (16)")
    args = parser.parse_args(argv)
    if args.command == "scan-submissions":
        return _scan(args.paths)
    if args.command == "regrade":
        return _regrade(args)
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


def _positive(unit: str) -> Callable[[str], float]:
    """An argument reader for a positive number of ``unit`` (below a million), refusing anything else by name."""

    def read(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0 < value < 1e6:
            msg = f"needs a positive number of {unit}, got {text!r}"
            raise argparse.ArgumentTypeError(msg)
        return value

    return read


_seconds = _positive("seconds")
_megabytes = _positive("MB")  # 10^6 bytes


def _regrade(args: argparse.Namespace) -> int:
    """Grade each submission and append its rows to the gradebook as soon as it is graded.

    Exit status 0; 1 when a submission could not be read or was stopped; 2 when the source does not exist;
    3 when a submission changed the package (the regrade stops, keeping what it wrote).
    """
    from mlsysim_nb.gradebook import append_rows, write_nbgrader
    from mlsysim_nb.regrade import Limits, PackageChangedError, Regrade, regrade
    from mlsysim_nb.submissions import printable

    source: Path = args.source
    if not source.is_file():
        print(f"no such file: {printable(source)}", file=sys.stderr)
        return 2
    gradebook: Path = args.gradebook or Path(f"regrade_{source.stem}.csv")
    cap = int(args.output_cap * 1e6)
    limits = Limits(cell_timeout=args.cell_timeout, budget=args.budget, output_cap=cap, message_cap=min(cap, 8 * 2**20))
    if args.nbgrader_db is not None:
        try:
            write_nbgrader(args.nbgrader_db, source.stem, [])  # the assignment must be there before any runs
        except ValueError as error:
            print(printable(error), file=sys.stderr)
            return 2
    troubled = [0]

    def graded(result: Regrade) -> None:
        rows = result.rows(source.stem)
        append_rows(gradebook, rows)
        troubled[0] += bool(result.note)
        if args.nbgrader_db is not None:
            try:
                write_nbgrader(args.nbgrader_db, source.stem, rows)
            except Exception as error:  # noqa: BLE001 - the CSV has the rows; one student's database error stops nothing
                print(printable(f"not written to {args.nbgrader_db}: {result.student} ({error})"), file=sys.stderr)
                troubled[0] += 1
        print(result, flush=True)

    try:
        results = regrade(source, args.submissions, limits=limits, on_graded=graded)
    except PackageChangedError as error:
        print(error, file=sys.stderr)
        return 3
    print(f"appended {len(results)} submission(s) to {printable(gradebook)}", file=sys.stderr)
    return 1 if troubled[0] else 0


def _scan(paths: list[Path]) -> int:
    """Print each finding, escaped; exit status 1 when there is one, 2 when a path does not exist (the rest are read).

    The paths given are the instructor's own; what they hold is hostile, and is read and printed as such.
    """
    from mlsysim_nb.submissions import printable, scan

    missing = [p for p in paths if not (p.exists() or p.is_symlink())]
    if missing:
        print(f"no such file or folder: {', '.join(printable(p) for p in missing)}", file=sys.stderr)
    findings = scan([p for p in paths if p not in missing])
    for finding in findings:
        print(finding)
    print(f"{len(findings)} finding(s): read those cells before trusting their scores" if findings else "no findings")
    if missing:
        return 2
    return 1 if findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
