"""Execute the course notebooks top to bottom on a fresh kernel and save their outputs in place.

Usage: ``python -m mlsysim_nb.course.execute [notebooks/*.ipynb]`` (``make notebooks``).
Run it after editing a notebook, then commit: nbval compares what it stored.
Widget state is not stored (it is noise in the diff and GitHub cannot run it);
each notebook shows the static repr of its scenario before any live panel.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from mlsysim_nb.course.repository import NOTEBOOKS

__all__ = ["execute", "main"]


def execute(path: Path) -> None:
    """Run one notebook in its own folder and write it back."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=False,
    )
    client.execute()
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)


_SUMMARY = "Execute the course notebooks top to bottom on a fresh kernel and save their outputs in place."


def main(argv: list[str] | None = None) -> int:
    """Execute the given notebooks (default: every notebook in notebooks/)."""
    parser = argparse.ArgumentParser(prog="python -m mlsysim_nb.course.execute", description=_SUMMARY)
    parser.add_argument("paths", nargs="*", type=Path)
    args = parser.parse_args(argv)
    paths = args.paths or sorted(NOTEBOOKS.glob("*.ipynb"))
    for path in paths:
        print(f"executing {path}")
        execute(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
