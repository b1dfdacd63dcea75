"""What a scenario shows when its kind declares nothing else: the default presentation, as a mixin.

A kind's ``view.py`` overrides any of these (its mixin comes before :class:`~mlsysim_nb.model.scenario.Scenario`);
the renderers, the comparison, the controls and the sweeps read only these methods and records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from mlsysim_nb.errors import NotApplicableError
from mlsysim_nb.model.knob import knobs, label_and_help
from mlsysim_nb.model.presentation import Headline, MemoryChart, SectionSpec

if TYPE_CHECKING:
    from mlsysim_nb.model.protocol import ScenarioLike

__all__ = ["Presentation"]


class Presentation:
    """The default presentation of a scenario: one section with every formula, its last result as headline."""

    #: the derivation's sections, in reading order (default: one section with every formula)
    SECTIONS: ClassVar[tuple[SectionSpec, ...]] = ()
    #: (heading, text) pairs: what the model assumes and leaves out
    NOTES: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: the quantities compare() shows (default: every formula)
    COMPARISON_ROWS: ClassVar[tuple[str, ...]] = ()

    def sections(self: ScenarioLike) -> tuple[SectionSpec, ...]:
        """The derivation's sections that apply to this scenario (a section's ``when`` flag must hold)."""
        names = self.FORMULA_NAMES
        specs = self.SECTIONS or (SectionSpec("Derivation", tuple((n, n) for n in names), names[-1]),)
        return tuple(spec for spec in specs if not spec.when or self.flag(spec.when))

    def flag(self: ScenarioLike, name: str) -> bool:
        """A yes/no fact of this scenario by name (``"adapter_mode"``), false when absent."""
        value = self._env.values.get(name)
        return value is not None and bool(np.all(value))

    def title(self: ScenarioLike) -> str:
        """The scenario's name, or a title built from its fields (never a stale one)."""
        return str(getattr(self, "name", "") or self.default_title())

    def default_title(self) -> str:
        """A title built from the fields; kinds say more than their class name."""
        return type(self).__name__

    def headline(self: ScenarioLike) -> Headline:
        """The one-line answer; by default the result of the last section's headline step."""
        from mlsysim_nb.render.numbers import format_result

        spec = self.sections()[-1]
        name = dict(spec.steps).get(spec.headline, spec.headline) or self.FORMULA_NAMES[-1]
        try:
            value = format_result(self.base_unit(name), self.magnitude(name))
        except NotApplicableError as err:
            value = f"not applicable (needs {err.needs})"
        return Headline(f"{self.title()}: {name} = {value}")

    def memory_chart(self) -> MemoryChart | None:
        """The memory bar chart's data; ``None`` for a kind that draws none."""
        return None

    def step_memory(self) -> Any:
        """Memory over one step (a :class:`~mlsysim_nb.render.figures.StepMemory`); a kind that draws none refuses."""
        msg = f"{type(self).__name__} draws no memory over one step (step_memory)"
        raise ValueError(msg)

    def zero_partition(self, stages: tuple[int, ...] = (0, 1, 2, 3)) -> Any:
        """What each ZeRO stage shards over data-parallel devices; a kind without them refuses."""
        msg = f"{type(self).__name__} has no data-parallel devices to shard its state over (zero_partition)"
        raise ValueError(msg)

    def companion_chart(self) -> MemoryChart | None:
        """A second chart drawn beside the memory bar (an iteration's time by cause); ``None`` by default."""
        return None

    def caveats(self) -> tuple[str, ...]:
        """Sentences a reader must see beside these numbers (an estimate outside its assumptions); none by default."""
        return ()

    def sweep_quantity(self: ScenarioLike) -> str:
        """What a sweep plots and fits by default: the last memory quantity of the derivation."""
        in_bytes = [n for n in self.FORMULA_NAMES if self.base_unit(n) == "byte"]
        return in_bytes[-1] if in_bytes else self.FORMULA_NAMES[-1]

    def comparison_rows(self: ScenarioLike) -> tuple[str, ...]:
        """The quantities compare() lines up."""
        return self.COMPARISON_ROWS or self.FORMULA_NAMES

    def method_inputs(self) -> dict[str, Any]:
        """Example arguments of the methods the derivation shows (base-unit magnitudes by name)."""
        return {}

    def input_rows(self) -> list[tuple[str, str, str]]:
        """Inputs read from nested records (a workload, a device) as (name, meaning, value) rows."""
        return []

    def input_label(self, name: str) -> str:
        """How the inputs table explains field ``name``: the label its declaration gives."""
        return label_and_help(type(self), name)[0]

    def input_help(self, name: str) -> str:
        """The sentence a tooltip shows for field ``name``: the help its declaration gives (``""`` for none)."""
        return label_and_help(type(self), name)[1]

    def controls(self: ScenarioLike) -> list[Any]:
        """The live controls: one per field that declares one (kinds add catalog and view controls)."""
        from mlsysim_nb.model import controls as c

        return [c.field_control(self, name) for name, k in knobs(self).items() if k.control]
