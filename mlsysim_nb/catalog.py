"""``Scenarios``: every kind's named cases, found in each kind's ``cases.py``.

The 22 cases of the reference implementation (mlsysim) keep its names and inputs; the two
many-device cases are ``Gpt3_175BKorthikantiTable3OnA100`` and ``Llama3_8BZero3On8H100``.
Each kind declares its own (``mlsysim_nb/kinds/<kind>/cases.py``, with :func:`mlsysim_nb.model.cases.case`);
this module lists them through
:mod:`mlsysim_nb.kinds` and knows no kind.

Cases are built on first use and cached, and a kind's cases are read when the catalog is first asked
for a name, so importing the package loads no kind. A case may read its fields from another case
(a training case takes its saved activations from the matching activation case).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from mlsysim_nb import kinds
from mlsysim_nb.model.cases import Factory
from mlsysim_nb.render.display import RichRepr

__all__ = ["ScenarioCatalog", "Scenarios"]


class ScenarioCatalog(RichRepr):
    """Named scenarios, built on first use: ``Scenarios.Gpt2Fp32AdamOnH100``, ``Scenarios["..."]``."""

    def __init__(self, cases: dict[str, Factory] | Callable[[], dict[str, Factory]]) -> None:
        self._find = cases if callable(cases) else lambda: cases
        self._seen: dict[str, Factory] | None = None
        self._built: dict[str, Any] = {}

    @property
    def _cases(self) -> dict[str, Factory]:
        """The factories by name, as the kinds declare them now (read on first use; a new kind resets the cache)."""
        cases = self._find()
        if cases is not self._seen:
            self._seen, self._built = cases, {}
        return cases

    def __getitem__(self, name: str) -> Any:
        cases = self._cases
        if name not in self._built:
            if name not in cases:
                msg = f"no scenario {name!r}; known: {', '.join(cases)}"
                raise KeyError(msg)
            self._built[name] = cases[name](self)
        return self._built[name]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as err:
            raise AttributeError(str(err)) from None

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self._cases]

    def __iter__(self) -> Iterator[str]:
        return iter(self._cases)

    def __len__(self) -> int:
        return len(self._cases)

    def __contains__(self, name: object) -> bool:
        return name in self._cases

    def names(self, kind: type | None = None) -> list[str]:
        """Case names, optionally only those of one scenario class."""
        return [n for n in self._cases if kind is None or isinstance(self[n], kind)]

    def items(self) -> list[tuple[str, Any]]:
        """``(name, scenario)`` pairs, building every case."""
        return [(n, self[n]) for n in self._cases]

    def __repr__(self) -> str:
        return f"ScenarioCatalog({len(self)} scenarios: {', '.join(self._cases)})"

    def rows(self) -> list[list[str]]:
        """One row per case: name, class, title, one-line answer."""
        from mlsysim_nb.render.summary import summary_line

        return [[n, type(s).__name__, s.name, summary_line(s)] for n, s in self.items()]

    def _repr_text_(self) -> str:
        lines = [f"Scenarios: {len(self)} named cases"]
        lines += [f"  {name}  ({kind})\n      {title}" for name, kind, title, _ in self.rows()]
        return "\n".join(lines)

    def _markdown_rows(self) -> tuple[list[str], list[list[str]]]:
        return ["name", "class", "title", "answer"], self.rows()

    def _repr_html_(self) -> str:
        from mlsysim_nb.render.html import catalog_html

        return catalog_html(f"Scenarios: {len(self)} named cases", ["name", "class", "title", "answer"], self.rows())


#: The named cases of every kind.
Scenarios = ScenarioCatalog(kinds.all_cases)
