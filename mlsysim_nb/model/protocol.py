"""The typed face a scenario shows its presentation: what a view mixin may read, checked by mypy.

A kind's view mixin (``kinds/<kind>/view.py``) is not a scenario itself; its methods type ``self`` as
a protocol, :class:`ScenarioLike` or a kind's extension of it naming the kind's own fields. mypy then
checks every attribute a view reads against the scenario class it is mixed into.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from mlsysim_nb.model.evaluator import Env
    from mlsysim_nb.model.presentation import Headline, SectionSpec

__all__ = ["ScenarioLike"]


class ScenarioLike(Protocol):
    """What every scenario offers its presentation: its equations' names, magnitudes and facts."""

    FORMULA_NAMES: ClassVar[tuple[str, ...]]
    SECTIONS: ClassVar[tuple[SectionSpec, ...]]
    COMPARISON_ROWS: ClassVar[tuple[str, ...]]
    _env: Env

    @property
    def is_sweep(self) -> bool:
        """True when a field holds a NumPy array."""
        ...

    def magnitude(self, name: str) -> Any:
        """The base-unit magnitude of an input or a derived quantity."""
        ...

    @classmethod
    def base_unit(cls, name: str) -> str:
        """The base unit of a quantity's magnitude."""
        ...

    def sections(self) -> tuple[SectionSpec, ...]:
        """The derivation's sections that apply."""
        ...

    def flag(self, name: str) -> bool:
        """A yes/no fact of the scenario by name."""
        ...

    def title(self) -> str:
        """The scenario's name, or a title built from its fields."""
        ...

    def default_title(self) -> str:
        """A title built from the fields."""
        ...

    def headline(self) -> Headline:
        """The one-line answer."""
        ...

    def swept_fields(self) -> list[str]:
        """The fields that hold arrays."""
        ...

    def field_bounds(self, name: str) -> tuple[float, float | None]:
        """The range field ``name`` accepts in this scenario."""
        ...

    def input_label(self, name: str) -> str:
        """How the inputs table explains field ``name``."""
        ...

    def controls(self) -> list[Any]:
        """The live controls."""
        ...

    def variant(self, **changes: Any) -> Any:
        """A new, validated scenario with ``changes`` applied."""
        ...
