"""The README's layout table against the tree: every path it names exists, every kind the registry finds is listed."""

from __future__ import annotations

import re
from pathlib import Path

from mlsysim_nb.kinds import all_kinds

ROOT = Path(__file__).resolve().parents[2]


def _layout_rows() -> list[list[str]]:
    """The backticked names of the first cell of each row of the README's layout table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ", 1)[0] for line in section.splitlines() if line.startswith("| `")]
    return [re.findall(r"`([^`]+)`", row) for row in rows]


def _resolve(first: Path, name: str) -> Path:
    """A name beside the row's first path, unless it starts at the root (``mlsysim_nb/measure/``)."""
    if "/" in name.rstrip("/") and (ROOT / name.split("/", 1)[0]).is_dir():
        return ROOT / name
    folder = first if first.is_dir() else first.parent
    return folder / name


def test_every_path_the_layout_names_exists() -> None:
    """Each row's first path is from the root, the others beside it; all of them are in the tree."""
    rows = _layout_rows()
    assert len(rows) >= 10
    missing = []
    for names in rows:
        first = ROOT / names[0]
        missing += [names[0]] if not first.exists() else []
        missing += [n for n in names[1:] if not _resolve(first, n).exists()]
    assert missing == []


def test_the_layout_lists_every_kind() -> None:
    """The kinds row names each folder the registry finds (five today: training, activation, parallel, time, inference)."""
    row = next(names for names in _layout_rows() if names[0] == "mlsysim_nb/kinds/")
    folders = {k.package.rsplit(".", 1)[1] for k in all_kinds()}
    assert folders == {"training", "activation", "parallel", "time", "inference"}
    assert {f"{f}/" for f in folders} <= set(row[1:])


def test_the_physics_module_names_every_kind() -> None:
    """mlsysim_nb/physics.py's docstring points at every kind's equations module."""
    import mlsysim_nb.physics

    doc = mlsysim_nb.physics.__doc__ or ""
    assert all(f":mod:`{k.package}.physics`" in doc for k in all_kinds())
