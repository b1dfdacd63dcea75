"""The record of a Hugging Face measurement: each row of the table, predicted and measured. Plain data, no torch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlsysim_nb.layers import DEVICE_EFFECTS, Line, Saved

__all__ = ["HFMeasurement", "RowMeasurement"]


@dataclass(frozen=True)
class RowMeasurement:
    """One row of the layer table: the bytes the ``"transformers"`` accounting predicts, and those measured."""

    row: Saved
    predicted: float
    measured: int


@dataclass(frozen=True)
class HFMeasurement:
    """Saved bytes of a Hugging Face module on the CPU, row by row, beside the paper's accounting.

    ``measured`` counts the distinct storages autograd keeps (parameters excluded); ``predicted`` the
    ``"transformers"`` accounting's rows on the CPU; ``unattributed`` the measured bytes no row accounts for;
    ``paper`` the ``"megatron"`` accounting of the same architecture on a GPU, and ``paper_rows`` its rows.
    """

    module: str
    workload: Any
    dtype: str
    attention: str
    dropout: bool
    seq_len: int
    micro_batch: int
    layers: int
    rows: tuple[RowMeasurement, ...]
    measured: int
    predicted: float
    unattributed: int
    paper: float
    paper_rows: tuple[Line, ...]

    @property
    def ratio(self) -> float:
        """Measured over predicted."""
        return self.measured / self.predicted

    @property
    def effects(self) -> tuple[str, ...]:
        """The named device effects (:data:`~mlsysim_nb.layers.DEVICE_EFFECTS`) that shaped some row here."""
        found = []
        if self.dropout and any(r.row.width == "mask" and r.predicted for r in self.rows):
            found.append("cpu dropout mask")
        notes = " ".join(r.row.note for r in self.rows)
        found += [e for e in ("cpu sdpa math path", "cpu sdpa unequal head dims") if e in notes]
        return tuple(e for e in DEVICE_EFFECTS if e in found)

    def beside_paper(self) -> list[tuple[str, int, str, float, str]]:
        """Row by row: (transformers row, measured bytes, the paper's row it stands for, the paper's bytes, why).

        The paper's bytes are those of the paper's rows with that key (``-`` and 0: the paper has no such tensor),
        at the same dtype on a GPU.
        """
        paper: dict[str, float] = {}
        for line in self.paper_rows:
            key = line.row.paper or line.row.key
            paper[key] = paper.get(key, 0.0) + line.bytes
        out = []
        for r in self.rows:
            key = r.row.paper or r.row.key
            out.append((r.row.label, r.measured, key if key in paper else "-", paper.get(key, 0.0), r.row.note))
        return out

    def table(self) -> list[tuple[str, str, float, int, str]]:
        """(block, label, predicted bytes, measured bytes, why it differs from the paper) per row."""
        return [(r.row.block, r.row.label, r.predicted, r.measured, r.row.note) for r in self.rows]

    def __repr__(self) -> str:
        setting = f"{self.dtype}, {self.attention}, dropout {'on' if self.dropout else 'off'}"
        return (
            f"<HFMeasurement {self.module} ({setting}): measured {self.measured:,} B, predicted "
            f"{self.predicted:,.0f} B (x{self.ratio:.4f}), unattributed {self.unattributed:,} B; "
            f"the paper's accounting {self.paper:,.0f} B>"
        )
