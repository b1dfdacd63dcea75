"""The activation kind's coefficients, read from the layer table (:mod:`mlsysim_nb.layers`) for a workload.

Every row one decoder layer saves is either per token (its shape holds ``s`` and ``b`` once: ``s·b·h``,
``s·b·kv·d``, ``s·b·k·f``, the FP32 log-sum-exp ``b·a·s``) or per attention score (``b·a·s·s``), so a layer's
saved bytes are exactly ``s·b·h·(κ_tok + κ_score·a·s/h)`` with

* ``κ_tok = n_tok·b_act + c_tok``: ``n_tok`` elements in the activation dtype per token and hidden unit,
  ``c_tok`` bytes per token and hidden unit of rows whose width does not follow the dtype (masks, FP32, int64);
* ``κ_score = n_score·b_act + c_score`` per attention-score element.

The rows kept once per model (the rotary tables), the weight-sized copies each layer keeps whatever the tokens
(Gemma's RMSNorm keeps ``1 + w`` in FP32, DeepSeek's router an FP32 copy of its weight: kilobytes a layer, counted
once per layer and kept under every recomputation) and the output layer and loss are counted apart
(:func:`outside_bytes`). For a reference-style workload in the paper's accounting the layer is counted as the
reference implementation counts it (multi-head, every 16-bit byte scaled to the precision, masks included):
``n_tok = (18 + 4f)/2``, ``c_tok = 0``, ``n_score = 5/2``, ``c_score = 0``, Korthikanti's 34 and 5 at 16 bits.
"""

from __future__ import annotations

import dataclasses
import functools
import weakref
from typing import Any, NamedTuple

import numpy as np

from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers import Architecture, layer_rows, lines, output_rows
from mlsysim_nb.layers.rows import Dims, Saved, element_bytes
from mlsysim_nb.records.workloads import Workload

__all__ = ["ATTENTIONS", "IMPLEMENTATIONS", "Coefficients", "architecture", "coefficients", "outside_bytes"]

ATTENTIONS = ("eager", "fused")
IMPLEMENTATIONS = ("megatron", "transformers")
_OWNER = "ActivationMemoryScenario"


#: Labelled bytes of one layer's kept rows.
Lines = tuple[tuple[str, float], ...]


class Coefficients(NamedTuple):
    """A layer's saved bytes per token and hidden unit, and per attention score, split by how they scale."""

    token_units: float
    token_fixed: float
    score_units: float
    score_fixed: float


def reference_layer(workload: Workload, implementation: str) -> bool:
    """Whether the layer is counted as the reference counts it: a reference-style workload, the paper's accounting."""
    return workload.reference_style and implementation == "megatron"


#: Architectures already built, by workload identity (a workload's own hash reads every field, pint's slowly).
_BUILT: dict[tuple[int, str, int], tuple[weakref.ref[Workload], Architecture, bool]] = {}


def _built(workload: Workload, implementation: str, ffn_multiple: int) -> tuple[Architecture, bool]:
    """``architecture(...)`` and ``reference_layer(...)``, built once per workload object (records are frozen)."""
    key = (id(workload), implementation, ffn_multiple)
    found = _BUILT.get(key)
    if found is not None and found[0]() is workload:
        return found[1], found[2]
    arch = architecture(workload, implementation, ffn_multiple)
    if len(_BUILT) > 1024:
        _BUILT.clear()
    _BUILT[key] = (weakref.ref(workload), arch, reference_layer(workload, implementation))
    return arch, _BUILT[key][2]


def architecture(workload: Workload, implementation: str, ffn_multiple: int) -> Architecture:
    """The table's view of ``workload``'s layer; ``ffn_multiple`` sets the MLP width where the workload states none."""
    heads = workload.heads if workload.heads is not None else 1  # per-token rows of a multi-head layer need no a
    shaped = workload if workload.heads is not None else dataclasses.replace(workload, heads=heads)
    arch = shaped.architecture(reference=reference_layer(workload, implementation))
    if workload.ffn_dim is None:
        arch = dataclasses.replace(arch, ffn_dim=ffn_multiple * workload.hidden_dim)  # type: ignore[operator]
    return arch


def _rows(arch: Architecture, implementation: str, attention: str) -> tuple[Saved, ...]:
    """The layer's rows, with the table's refusals turned into errors naming the scenario's field."""
    try:
        return layer_rows(arch, implementation, attention)
    except FieldError:
        raise
    except ValueError as err:
        msg = f"{implementation!r} cannot describe this layer: {err}; use implementation='megatron'"
        raise FieldError(_OWNER, "implementation", msg) from None


def _per_element(row: Saved, dims: Dims, narrow: bool, reference: bool) -> tuple[float, float]:
    """A row's (elements in the activation dtype, fixed bytes) at ``dims``; ``reference``: 16-bit bytes halved."""
    if (row.narrow_only and not narrow) or (row.wide_only and narrow):
        return 0.0, 0.0
    elements = row.elements(dims)
    if reference:
        return elements * element_bytes(row.width, 2) / 2, 0.0
    if row.width == "act":
        return float(elements), 0.0
    return 0.0, float(elements * element_bytes(row.width, 2))


@functools.lru_cache(maxsize=256)
def _coefficients(
    arch: Architecture, implementation: str, attention: str, narrow: bool, reference: bool
) -> Coefficients:
    dims = arch.dims(1, 1)
    sums = [0.0, 0.0, 0.0, 0.0]
    for row in _rows(arch, implementation, attention):
        if row.per_model or row.weight_sized:
            continue
        scored = row.shape.count("s") == 2
        if row.shape.count("b") != 1 or row.shape.count("s") not in (1, 2) or scored != (row.recompute == "selective"):
            if row.shape.count("s") == 0 and implementation == "transformers":  # a padded convolution, a chunked scan
                msg = (f"'transformers' keeps {row.label} ({' x '.join(row.shape)}), which is not per token (the "
                       "Mamba-2 path pads the convolution and the scan's chunks): the layer table's "
                       "layer_saved_bytes gives it exactly; use implementation='megatron' (the fused kernel's "
                       "per-token rows)")  # fmt: skip
                raise FieldError(_OWNER, "implementation", msg)
            msg = f"row {row.key!r} ({row.shape}) is neither per token nor per attention score"
            raise AssertionError(msg)
        units, fixed = _per_element(row, dims, narrow, reference)
        per = dims.a if scored else dims.h  # per score element, or per token and hidden unit
        sums[2 * scored] += units / per
        sums[2 * scored + 1] += fixed / per
    return Coefficients(*sums)


def _scalar(workload: Workload, attention: str, implementation: str, ffn: Any, precision: Any) -> Coefficients:
    arch, reference = _built(workload, implementation, int(ffn))
    return _coefficients(arch, implementation, attention, bool(precision < 4), reference)


def coefficients(workload: Workload, inputs: dict[str, Any]) -> dict[str, Any]:
    """``token_units``, ``token_fixed_bytes``, ``score_units``, ``score_fixed_bytes`` for the scenario's inputs.

    Arrays where ``attention``, ``implementation``, ``ffn_multiple`` or ``precision_bytes`` are swept.
    """
    keys = ("attention", "implementation", "ffn_multiple", "precision_bytes")
    values = [inputs[k] for k in keys]
    if any(isinstance(v, np.ndarray) and v.ndim for v in values):
        shaped = np.broadcast_arrays(*(np.asarray(v, dtype=object) for v in values))
        found = [_scalar(workload, a, i, f, p) for a, i, f, p in zip(*(x.ravel() for x in shaped), strict=True)]
        columns: list[Any] = [np.array([c[n] for c in found], dtype=float).reshape(shaped[0].shape) for n in range(4)]
    else:
        attention, implementation, ffn, precision = values
        columns = [float(c) for c in _scalar(workload, attention, implementation, ffn, precision)]
    names = ("token_units", "token_fixed_bytes", "score_units", "score_fixed_bytes")
    return dict(zip(names, columns, strict=True))


@functools.lru_cache(maxsize=256)
def _outside(arch: Architecture, run: tuple[str, str, int, int, float]) -> float:
    """Bytes kept once per model outside the per-layer count: the shared layer rows, the output layer, the loss."""
    implementation, attention, s, b, p = run
    every = _rows(arch, implementation, attention)
    rows = (*(r for r in every if r.per_model), *output_rows(arch, implementation))
    found = lines(rows, arch.dims(s, b), dtype_bytes=p)  # type: ignore[arg-type]  # any width, as the rows take it
    copies = lines(tuple(r for r in every if r.weight_sized and not r.per_model), arch.dims(s, b), dtype_bytes=p)  # type: ignore[arg-type]
    return float(sum(line.bytes for line in found) + (arch.layers or 1) * sum(line.bytes for line in copies))


def outside_bytes(workload: Workload, inputs: dict[str, Any], sequence: Any) -> Any:
    """The output layer, the loss and the rows kept once per model, for the scenario's inputs (an array in a sweep)."""
    keys = ("implementation", "attention", "ffn_multiple", "micro_batch", "precision_bytes")
    values = [inputs[k] for k in keys]
    values.insert(3, sequence)

    def one(*run: Any) -> float:
        implementation, attention, ffn, s, b, p = run
        arch, _ = _built(workload, implementation, int(ffn))
        return _outside(arch, (implementation, attention, int(s), int(b), float(p)))

    if any(isinstance(v, np.ndarray) and v.ndim for v in values):
        shaped = np.broadcast_arrays(*(np.asarray(v, dtype=object) for v in values))
        found = [one(*row) for row in zip(*(x.ravel() for x in shaped), strict=True)]
        return np.array(found, dtype=float).reshape(shaped[0].shape)
    return one(*values)


def paper_coefficients(ffn_multiple: int = 4) -> dict[str, float]:
    """The paper's GPT layer as the reference counts it: ``n_tok = (18 + 4f)/2``, ``n_score = 5/2``, no fixed bytes."""
    arch = Architecture(hidden_dim=1, heads=1, ffn_dim=ffn_multiple)
    found = _coefficients(arch, "megatron", "eager", narrow=True, reference=True)
    names = ("token_units", "token_fixed_bytes", "score_units", "score_fixed_bytes")
    return dict(zip(names, found, strict=True))


def layer_lines(
    workload: Workload, inputs: dict[str, Any], sequence: int, strategy: str
) -> tuple[tuple[str, float], ...]:
    """Each row one decoder layer keeps under ``strategy``, by its label, with its bytes (one scenario, not a sweep)."""
    implementation, attention = inputs["implementation"], inputs["attention"]
    arch = architecture(workload, implementation, int(inputs["ffn_multiple"]))
    found = lines(_rows(arch, implementation, attention), arch.dims(sequence, int(inputs["micro_batch"])),
                  dtype_bytes=inputs["precision_bytes"], strategy=strategy, per_model=False,
                  reference_scaling=reference_layer(workload, implementation))  # fmt: skip
    labels = [line.row.label for line in found]
    return tuple(
        (f"{line.row.label} ({line.row.block})" if labels.count(line.row.label) > 1 else line.row.label, line.bytes)
        for line in found
    )
