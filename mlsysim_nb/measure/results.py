"""The measurement records: saved tensors, line items, and a layer's or a training step's totals.

Plain frozen data (no torch): a result can be built, shown and compared
without PyTorch installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlsysim_nb.measure.items import LineItem
from mlsysim_nb.render.display import RichRepr
from mlsysim_nb.render.numbers import format_result
from mlsysim_nb.units import Q_

__all__ = ["ItemRow", "LayerMeasurement", "SavedTensor", "StateRow", "TrainingStateMeasurement"]


def _bytes(value: Any) -> str:
    return format_result("byte", float(Q_(value).m_as("byte")) if hasattr(value, "units") else float(value))


@dataclass(frozen=True)
class SavedTensor:
    """One tensor autograd kept: the forward step and the op that saved it, its shape, dtype and bytes.

    ``bytes`` is the tensor's own size, ``storage_bytes`` the size of the
    storage it views (larger for a view into a bigger buffer); ``attributed`` the bytes of its storage
    it was the first to account for (0 when an earlier row already covered
    them, or when it maps to no line item: ``item`` is then ``None``).
    """

    step: str
    op: str
    slot: str
    shape: tuple[int, ...]
    dtype: str
    bytes: int
    storage_bytes: int
    item: LineItem | None
    attributed: int


@dataclass(frozen=True)
class ItemRow:
    """A line item: what the model predicts for it and what was measured."""

    item: LineItem
    predicted: Any
    measured: Any

    @property
    def ratio(self) -> float | None:
        """Measured over predicted; ``None`` when the model predicts nothing for it."""
        predicted = float(self.predicted.m_as("byte"))
        return None if predicted == 0 else float(self.measured.m_as("byte")) / predicted


@dataclass(frozen=True, repr=False)
class LayerMeasurement(RichRepr):
    """Saved activations of one GPT layer, measured in PyTorch and attributed to the model's line items.

    ``measured`` counts the distinct storages autograd keeps for backward,
    parameters and buffers excluded; ``predicted`` is the model's figure for
    one layer with nothing recomputed (``scenario.activations("none")``);
    ``unattributed`` is the measured bytes no line item accounts for.
    """

    seq_len: int
    micro_batch: int
    hidden: int
    heads: int
    dtype: str
    attention: str
    dropout_mask: str
    scenario: Any
    tensors: tuple[SavedTensor, ...]
    items: tuple[ItemRow, ...]
    measured: Any
    predicted: Any
    unattributed: Any

    @property
    def attributed_share(self) -> float:
        """Share of the measured bytes mapped to a line item."""
        measured = float(self.measured.m_as("byte"))
        return 1 - float(self.unattributed.m_as("byte")) / measured

    @property
    def ratio(self) -> float:
        """Measured over predicted, for the whole layer."""
        return float(self.measured.m_as("byte")) / float(self.predicted.m_as("byte"))

    @property
    def score_bytes(self) -> Any:
        """Measured bytes of the items that grow with s² (the attention scores)."""
        return sum((r.measured for r in self.items if r.item.term == "as2b"), Q_(0, "byte"))

    def item(self, key: str) -> ItemRow:
        """The row of line item ``key`` (see :data:`~mlsysim_nb.measure.items.ITEMS`)."""
        for row in self.items:
            if row.item.key == key:
                return row
        valid = ", ".join(r.item.key for r in self.items)
        msg = f"no line item {key!r}; the items are {valid}"
        raise KeyError(msg)

    @property
    def title(self) -> str:
        """One line naming the configuration."""
        return (
            f"one GPT layer, s={self.seq_len}, b={self.micro_batch}, h={self.hidden}, a={self.heads}, "
            f"{self.dtype}, {self.attention} attention, {self.dropout_mask} dropout masks"
        )

    def __repr__(self) -> str:
        return (
            f"<LayerMeasurement: {self.title}: measured {_bytes(self.measured)}, "
            f"predicted {_bytes(self.predicted)} (x{self.ratio:.4f}), "
            f"unattributed {_bytes(self.unattributed)} ({1 - self.attributed_share:.3%})>"
        )

    def _repr_text_(self) -> str:
        from mlsysim_nb.measure.report import layer_text

        return layer_text(self)

    def _repr_html_(self) -> str:
        from mlsysim_nb.measure.report import layer_html

        return layer_html(self)


@dataclass(frozen=True)
class StateRow:
    """One part of the training state: the model's figure (or ``None``) and what the tensors hold."""

    name: str
    label: str
    predicted: Any
    measured: Any


@dataclass(frozen=True, repr=False)
class TrainingStateMeasurement(RichRepr):
    """Weights, gradients and optimizer state of a small model after one AdamW step, against the model."""

    recipe: str
    parameters: int
    parameter_tensors: int
    scenario: Any
    rows: tuple[StateRow, ...]

    def row(self, name: str) -> StateRow:
        """The row called ``name`` (``weights``, ``gradients``, ``optimizer_state``, ...)."""
        for r in self.rows:
            if r.name == name:
                return r
        msg = f"no row {name!r}; the rows are {', '.join(r.name for r in self.rows)}"
        raise KeyError(msg)

    @property
    def measured_total(self) -> Any:
        """What the model's total counts, as measured (rows the model has a figure for)."""
        return sum((r.measured for r in self.rows if r.predicted is not None), Q_(0, "byte"))

    def __repr__(self) -> str:
        return (
            f"<TrainingStateMeasurement: {self.recipe}, {self.parameters:,} parameters: "
            f"measured {_bytes(self.measured_total)}, model {_bytes(self.scenario.total)}>"
        )

    def _repr_text_(self) -> str:
        from mlsysim_nb.measure.report import state_text

        return state_text(self)

    def _repr_html_(self) -> str:
        from mlsysim_nb.measure.report import state_html

        return state_html(self)
