"""Text and HTML reprs of the measurements: measured beside predicted, line item by line item.

Static-safe like the package's other reprs: tables and ``<details>``, every
string escaped, the package stylesheet only decorating, nothing random.
"""

from __future__ import annotations

from functools import lru_cache
from html import escape
from importlib import resources
from typing import TYPE_CHECKING, Any

from mlsysim_nb.render.numbers import format_result

if TYPE_CHECKING:  # the measurements' reprs load this module (the names are annotations only)
    from mlsysim_nb.measure.results import ItemRow, LayerMeasurement, SavedTensor, TrainingStateMeasurement

__all__ = ["layer_html", "layer_text", "state_html", "state_text"]


@lru_cache(maxsize=1)
def _css() -> str:
    return (resources.files("mlsysim_nb.render") / "static" / "repr.css").read_text(encoding="utf-8")


def _b(value: Any, *, html: bool = False) -> str:
    return format_result("byte", float(value.m_as("byte")), html=html)


def _ratio(row: ItemRow) -> str:
    ratio = row.ratio
    return "n/a" if ratio is None else f"{ratio:.3f}"


def _item_cells(row: ItemRow) -> list[str]:
    return [row.item.label, row.item.block, _b(row.predicted), _b(row.measured), _ratio(row)]


_ITEM_HEAD = ["line item (Korthikanti et al. 2022, §4.1)", "block", "predicted", "measured", "measured/predicted"]
_TENSOR_HEAD = ["forward step", "saved by", "shape", "dtype", "bytes", "line item", "attributed"]


def _tensor_cells(t: SavedTensor) -> list[str]:
    shape = "(" + ", ".join(map(str, t.shape)) + ")"
    item = t.item.label if t.item else "unattributed"
    return [t.step, f"{t.op}.{t.slot}", shape, t.dtype, f"{t.bytes:,}", item, f"{t.attributed:,}"]


def _totals(m: LayerMeasurement) -> list[list[str]]:
    return [
        ["all line items", "", _b(m.predicted), _b(m.measured - m.unattributed), ""],
        ["unattributed", "", "", _b(m.unattributed), f"{1 - m.attributed_share:.3%} of measured"],
        ["whole layer", "", _b(m.predicted), _b(m.measured), f"{m.ratio:.4f}"],
    ]


def _text_table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [head, *rows]]
    return "\n".join(lines)


def layer_text(m: LayerMeasurement) -> str:
    """Measured beside predicted per line item, then every saved tensor, as plain text."""
    items = _text_table(_ITEM_HEAD, [_item_cells(r) for r in m.items] + _totals(m))
    tensors = _text_table(_TENSOR_HEAD, [_tensor_cells(t) for t in m.tensors])
    return f"{m!r}\n\n{items}\n\nSaved tensors, in forward order:\n{tensors}"


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _wrap(title: str, summary: str, body: str) -> str:
    return (
        f'<div class="msn-wrap"><style>{_css()}</style><div class="msn-title">{escape(title)}</div>'
        f'<div class="msn-summary">{escape(summary)}</div>{body}</div>'
    )


def layer_html(m: LayerMeasurement) -> str:
    """The same as :func:`layer_text`, as static-safe HTML; the tensor list folds away."""
    summary = (
        f"Measured {_b(m.measured)} against the model's {_b(m.predicted)} (x{m.ratio:.4f}); "
        f"{m.attributed_share:.3%} of the measured bytes map to a line item."
    )
    items = _html_table(_ITEM_HEAD, [_item_cells(r) for r in m.items] + _totals(m))
    tensors = _html_table(_TENSOR_HEAD, [_tensor_cells(t) for t in m.tensors])
    fold = (
        f'<details><summary>Saved tensors <span class="msn-headline">&mdash; {len(m.tensors)} '
        f"in forward order, parameters excluded</span></summary>{tensors}</details>"
    )
    return _wrap(m.title, summary, items + fold)


_STATE_HEAD = ["part of the state", "the model", "measured from the tensors", "equal"]


def _state_cells(m: TrainingStateMeasurement) -> list[list[str]]:
    rows = []
    for r in m.rows:
        if r.predicted is None:
            rows.append([r.label, "not in the model", _b(r.measured), ""])
        else:
            rows.append([r.label, _b(r.predicted), _b(r.measured), "yes" if r.predicted == r.measured else "NO"])
    rows.append(["total the model counts", _b(m.scenario.total), _b(m.measured_total), ""])
    return rows


def state_text(m: TrainingStateMeasurement) -> str:
    """The training state, the model's figure beside the measured one, as plain text."""
    return f"{m!r}\n\n{_text_table(_STATE_HEAD, _state_cells(m))}"


def state_html(m: TrainingStateMeasurement) -> str:
    """The same as :func:`state_text`, as static-safe HTML."""
    title = f"{m.recipe}: {m.parameters:,} parameters in {m.parameter_tensors} tensors, after one AdamW step"
    summary = f"Measured {_b(m.measured_total)} where the model counts {_b(m.scenario.total)}."
    return _wrap(title, summary, _html_table(_STATE_HEAD, _state_cells(m)))
