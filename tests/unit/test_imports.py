"""The package's import graph, read from the source: no import circles, no private names across modules.

The graph is built with ``ast`` over ``mlsysim_nb/**/*.py``. An import at module level (also inside a
class body, ``try``, ``with`` or a plain ``if``) runs when the module loads and is an eager edge; one inside
a function runs on first use and is lazy; one under ``if TYPE_CHECKING:`` never runs and is left out.
Importing ``a.b`` also loads the package ``a``; that parent step is not an edge (every package would
otherwise be a circle with its own modules).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "mlsysim_nb"

# circles that lazy loading closes, by the set of their modules, with why each is needed; each must also be
# explained by a comment naming the cycle at one of its lazy imports. None is needed today: a record's repr
# loads its renderer lazily, and the renderer names the record's class for typing only.
ALLOWED_LAZY_CYCLES: dict[frozenset[str], str] = {}
# private names imported across modules in files another part of issue 18 is rewriting; none may be added
KNOWN_PRIVATE_IMPORTS: set[tuple[str, str]] = set()  # none left: each kind reads the base's public API
# modules a plain ``import mlsysim_nb`` must not load: the widgets, the plotting library, the lab's PyTorch
HEAVY = ("anywidget", "ipywidgets", "matplotlib", "torch", "transformers")


@dataclass(frozen=True)
class Edge:
    """One import: from module ``source`` to module ``target``, at ``line``, lazy or eager."""

    source: str
    target: str
    line: int
    lazy: bool


def _module_names(root: Path) -> dict[str, Path]:
    names = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _is_type_checking(test: ast.expr) -> bool:
    return isinstance(test, ast.Name | ast.Attribute) and ast.unparse(test).endswith("TYPE_CHECKING")


def _imports(node: ast.AST, *, lazy: bool = False) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement under ``node`` that can run, and whether it runs only when a function is called."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, lazy
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for statement in child.orelse:
                yield from _imports(ast.Module(body=[statement], type_ignores=[]), lazy=lazy)
        else:
            yield from _imports(child, lazy=lazy or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))


def _targets(node: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    """The dotted names a statement imports: ``a.b`` for ``import a.b``, ``a.b`` and ``a.b.c`` for ``from a.b import c``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
        base = ".".join([*parts, *([node.module] if node.module else [])])
    return [f"{base}.{alias.name}" for alias in node.names]


def import_edges(root: Path = PACKAGE) -> list[Edge]:
    """Every import of one of the package's modules by another, read statically."""
    modules = _module_names(root)

    def module_of(name: str) -> str:  # ``a.b.c`` is the module a.b.c, or the name c inside module a.b
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    edges = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, lazy in _imports(tree):
            targets = {module_of(t) for t in _targets(node, package)} - {"", name}
            edges += [Edge(name, target, node.lineno, lazy) for target in sorted(targets)]
    return edges


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in graph.get(todo.pop(), set()) - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


def circles(edges: list[Edge]) -> list[frozenset[str]]:
    """The import circles: each set of two or more modules that all reach one another."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
    reach = {v: _reachable(graph, v) for v in graph}
    found = {frozenset({v} | {w for w in reach[v] if v in reach.get(w, set())}) for v in graph if v in reach[v]}
    return sorted(found, key=sorted)


def _describe(circle: frozenset[str], edges: list[Edge]) -> str:
    inside = sorted({(e.source, e.line, e.target, e.lazy) for e in edges if {e.source, e.target} <= circle})
    lines = [f"  {s}:{line} -> {t}{' (lazy)' if lazy else ''}" for s, line, t, lazy in inside]
    return ", ".join(sorted(circle)) + "\n" + "\n".join(lines)


def _comment_at(module: str, line: int) -> str:
    """The comments on an import's line and the line above it."""
    path = _module_names(PACKAGE)[module]
    lines = path.read_text(encoding="utf-8").splitlines()
    return " ".join(text.partition("#")[2] for text in lines[max(line - 2, 0) : line] if "#" in text)


def test_the_graph_reader_sees_eager_lazy_and_typing_imports(tmp_path):
    """A toy package: an eager, a lazy, a relative and a TYPE_CHECKING import are read as such."""
    pkg = tmp_path / "toy"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from toy import a\n")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\nfrom .sub import b\nif TYPE_CHECKING:\n    from toy import c\n"
    )
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    import toy.a\n")
    (pkg / "c.py").write_text("import toy.sub.b\n")
    found = {(e.source, e.target, e.lazy) for e in import_edges(pkg)}
    assert found == {
        ("toy", "toy.a", False),
        ("toy.a", "toy.sub.b", False),
        ("toy.sub.b", "toy.a", True),
        ("toy.c", "toy.sub.b", False),
    }
    lazy_too = import_edges(pkg)
    assert circles(lazy_too) == [frozenset({"toy.a", "toy.sub.b"})]
    assert circles([e for e in lazy_too if not e.lazy]) == []


def test_no_import_circle_when_modules_load():
    """Module-level imports (what runs at import time) form no circle anywhere in the package."""
    edges = [e for e in import_edges() if not e.lazy]
    assert len(edges) > 100  # the reader found the package's imports
    found = circles(edges)
    assert not found, "import circles at module level:\n" + "\n".join(_describe(c, edges) for c in found)


def test_lazy_imports_close_only_the_explained_circles():
    """With lazy imports counted too, the only circles are the allowed ones, each explained at its lazy import."""
    edges = import_edges()
    found = circles(edges)
    unexplained = [c for c in found if c not in ALLOWED_LAZY_CYCLES]
    assert not unexplained, "import circles closed by lazy imports:\n" + "\n".join(
        _describe(c, edges) for c in unexplained
    )
    for circle in found:
        lazy = [e for e in edges if e.lazy and {e.source, e.target} <= circle]
        assert any("cycle" in _comment_at(e.source, e.line) for e in lazy), (
            f"no comment naming the cycle at a lazy import of {_describe(circle, edges)}"
        )


def test_no_private_name_is_imported_from_another_module():
    """No module imports a private (``_name``) from another of the package's modules."""
    private = []
    for name, path in _module_names(PACKAGE).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("mlsysim_nb")):
                private += [
                    (name, a.name) for a in node.names if a.name.startswith("_") and not a.name.startswith("__")
                ]
    added = sorted(set(private) - KNOWN_PRIVATE_IMPORTS)
    assert not added, "private names imported across modules: " + ", ".join(f"{m} imports {n}" for m, n in added)
    stale = sorted(KNOWN_PRIVATE_IMPORTS - set(private))
    assert not stale, f"listed as known but no longer imported (drop them): {stale}"


# run in a fresh interpreter: after ``import mlsysim_nb``, then after a static comparison and the chart-less reprs
_PROBE = f"""
import sys
heavy = {HEAVY!r}
import mlsysim_nb
print(" ".join(m for m in heavy if m in sys.modules))
from mlsysim_nb import Scenarios, compare
s = Scenarios.Gpt2Fp32AdamOnH100
compare(s, s.variant(bytes_per_value=2))._repr_mimebundle_()
s.to_text(), s.to_markdown(), s.to_html(chart=False)
print(" ".join(m for m in heavy if m in sys.modules))
"""


def test_import_and_static_reprs_load_no_heavy_module():
    """`import mlsysim_nb`, a static comparison and the chart-less reprs load no widget, plotting or torch module."""
    root = str(PACKAGE.parent)
    env = {**os.environ, "PYTHONPATH": root}
    result = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, cwd=root, env=env
    )
    after_import, after_reprs = result.stdout.split("\n")[:2]
    assert (after_import, after_reprs) == ("", "")
