"""The course's commands of ``python -m mlsysim_nb``: ``scan-submissions`` and ``regrade``.

``python -m mlsysim_nb`` hands these two commands, with their arguments, to :func:`main` here; without the
``course`` extra it says which extra to install instead (:mod:`mlsysim_nb.course`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from mlsysim_nb.course.gradebook import append_rows, write_nbgrader
from mlsysim_nb.course.regrade import Limits, PackageChangedError, Regrade, regrade
from mlsysim_nb.course.submissions import printable, scan

__all__ = ["main"]


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


def _parser() -> argparse.ArgumentParser:
    # the commands' one-line summaries are listed by ``python -m mlsysim_nb --help``
    parser = argparse.ArgumentParser(prog="python -m mlsysim_nb", description="The course's grading commands.")
    sub = parser.add_subparsers(dest="command", required=True)
    scan_command = sub.add_parser("scan-submissions")
    scan_command.add_argument("paths", nargs="+", type=Path, help="notebooks or folders (e.g. nbgrader's submitted/)")
    again = sub.add_parser("regrade")
    again.add_argument("--source", type=Path, required=True, help="the instructor's notebook (notebooks/NN_name.ipynb)")
    again.add_argument("submissions", nargs="+", type=Path, help="submitted notebooks of that assignment, or folders")
    again.add_argument(
        "--gradebook", type=Path, help="the CSV gradebook to append to (default: regrade_NN_name.csv here)"
    )
    again.add_argument("--nbgrader-db", type=Path, help="also write the points into nbgrader's gradebook.db")
    again.add_argument("--cell-timeout", type=_seconds, default=120.0, help="seconds one cell may run (120)")
    again.add_argument("--budget", type=_seconds, default=600.0, help="seconds one submission may run in all (600)")
    again.add_argument("--output-cap", type=_megabytes, default=16.0, help="MB of output one submission may print (16)")
    return parser


def main(argv: list[str]) -> int:
    """Run ``scan-submissions`` or ``regrade`` (``argv`` starts with the command); returns the exit status."""
    args = _parser().parse_args(argv)
    if args.command == "scan-submissions":
        return _scan(args.paths)
    return _regrade(args)


def _regrade(args: argparse.Namespace) -> int:
    """Grade each submission and append its rows to the gradebook as soon as it is graded.

    Exit status 0; 1 when a submission could not be read or was stopped; 2 when the source does not exist;
    3 when a submission changed the package (the regrade stops, keeping what it wrote).
    """
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
