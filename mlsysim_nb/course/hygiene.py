"""Notebook hygiene: executed top to bottom, no errors, no noisy metadata.

Usage: ``python -m mlsysim_nb.course.hygiene notebooks`` (run by ``make lint``).
Checks every ``*.ipynb`` under the given folders and exits 1 listing each
problem: code cells not executed in order 1..n on a fresh kernel (nmaci's
rule), error outputs, kernel-specific or widget-state metadata, and outputs
whose text holds a memory address. ``--fix`` removes the noisy metadata.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from mlsysim_nb.course import cells

__all__ = ["main", "problems"]

ALLOWED_NOTEBOOK_METADATA = {"kernelspec", "language_info"}
ALLOWED_CELL_METADATA = {"tags", "editable", "deletable", "jupyter", "nbgrader"}
ADDRESS = re.compile(r"at 0x[0-9a-fA-F]{6,16}")


def _strip(metadata: dict[str, Any], allowed: set[str], where: str, *, fix: bool) -> list[str]:
    extra = set(metadata) - allowed
    if fix:
        for key in extra:
            metadata.pop(key)
    return [f"{where} metadata {sorted(extra)} (kernel, widget-state or editor noise)"] if extra else []


def _outputs(index: int, cell: dict[str, Any]) -> list[str]:
    out = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            out.append(f"cell {index}: error output {output.get('ename')}: {output.get('evalue')}")
        text = json.dumps(output.get("data", {}).get("text/plain", "")) + json.dumps(output.get("text", ""))
        if ADDRESS.search(text):
            out.append(f"cell {index}: output holds a memory address (give the object a fixed repr)")
    return out


def problems(path: Path, *, fix: bool = False) -> list[str]:
    """Everything wrong with one notebook (and, with ``fix``, strip noisy metadata)."""
    nb = cells.read(path)
    out = _strip(nb.setdefault("metadata", {}), ALLOWED_NOTEBOOK_METADATA, "notebook", fix=fix)
    expected = 1
    for index, cell in enumerate(nb.get("cells", [])):
        out += _strip(cell.setdefault("metadata", {}), ALLOWED_CELL_METADATA, f"cell {index}:", fix=fix)
        if cell.get("cell_type") != "code":
            continue
        count = cell.get("execution_count")
        if count != expected:
            out.append(f"cell {index}: execution_count {count}, expected {expected} (run top to bottom, fresh kernel)")
        expected += 1
        out += _outputs(index, cell)
    if fix:
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


_SUMMARY = "Notebook hygiene: executed top to bottom, no errors, no noisy metadata."


def main(argv: list[str] | None = None) -> int:
    """Check every notebook under the given folders; return 1 if any has a problem."""
    parser = argparse.ArgumentParser(prog="python -m mlsysim_nb.course.hygiene", description=_SUMMARY)
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--fix", action="store_true", help="strip noisy metadata in place")
    args = parser.parse_args(argv)
    paths = sorted(p for folder in args.folders for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    failed = False
    for path in paths:
        for problem in problems(path, fix=args.fix):
            print(f"{path}: {problem}")
            failed = True
    print(f"checked {len(paths)} notebooks: {'problems found' if failed else 'clean'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
