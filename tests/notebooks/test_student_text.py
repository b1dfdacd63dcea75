"""No development vocabulary where a user reads: notebooks, the package's docstrings and strings, README, guide.

Users read "the model assumes ..." or "the reference implementation (mlsysim)", never the
team's words for its internal documents ("the seed", "the specification").
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# the team's words for its specification; a random generator's seed (``seed=0``) is ordinary vocabulary
DEV_WORDS = re.compile(r"\b(the seeds?|seeds?'s?|seed pages?|specifications?)\b", flags=re.IGNORECASE)
PAGES = [ROOT / "README.md", ROOT / "docs" / "instructors.md"]  # CONTRIBUTING is for developers


def _hits(where: str, text: str) -> list[str]:
    return [f"{where}: ...{text[max(0, m.start() - 40) : m.end() + 40]!r}..." for m in DEV_WORDS.finditer(text)]


def _notebook_sources(path: Path) -> str:
    """Every cell's source of one notebook: the text the course's authors wrote."""
    return "\n".join("".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"])


def _notebook_outputs(path: Path) -> str:
    """Every stored text output of one notebook: what the package's reprs and messages printed."""
    parts = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            parts.append("".join(output.get("text", "")))
            parts.extend(
                "".join(output.get("data", {}).get(m, "")) for m in ("text/plain", "text/html", "text/markdown")
            )
    return "\n".join(parts)


def _package_strings(path: Path) -> list[tuple[int, str]]:
    """The docstrings and string literals of one module (what help(), reprs and messages show; not comments)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_the_pattern_catches_the_words() -> None:
    """The check finds the words it looks for, and leaves ordinary prose alone."""
    texts = ("as the seed defines", "the Specification says", "the seeds' helpers", "a seeded row", "seed: int = 0")
    found = [bool(DEV_WORDS.search(t)) for t in texts]
    assert found == [True, True, True, False, False]


NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
OUTPUTS = NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_use_the_students_words(path: Path) -> None:
    """No notebook cell says "seed" or "specification"."""
    assert _hits(path.name, _notebook_sources(path)) == []


@pytest.mark.parametrize("path", OUTPUTS, ids=lambda p: p.stem)
def test_notebook_outputs_use_the_students_words(path: Path) -> None:
    """No stored output (the package's reprs, derivations and messages) says "seed" or "specification"."""
    assert _hits(path.name, _notebook_outputs(path)) == []


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_pages_use_the_students_words(path: Path) -> None:
    """README and the instructor's guide say what the model assumes, not "the seed"."""
    assert _hits(path.name, path.read_text(encoding="utf-8")) == []


def test_package_strings_use_the_students_words() -> None:
    """No docstring or string literal of the package (docs, reprs, messages) uses development vocabulary."""
    hits = []
    for path in sorted((ROOT / "mlsysim_nb").rglob("*.py")):
        for line, text in _package_strings(path):
            hits += _hits(f"{path.name}:{line}", text)
    assert hits == []


def test_no_markdown_cell_holds_an_unfilled_placeholder() -> None:
    """A ``{name.attribute}`` left in markdown (a template not filled in) shows as raw text to every reader."""
    import json
    import re
    from pathlib import Path

    placeholder = re.compile(r"(?<![\\$_^{])\{[A-Za-z_][\w]*(?:\.[\w]+)+(?:\(\))?\}")
    found = []
    for path in sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            if cell["cell_type"] == "markdown":
                found += [f"{path.name} cell {index}: {m}" for m in placeholder.findall("".join(cell["source"]))]
    assert found == []
