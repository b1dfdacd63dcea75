"""One layer's saved bytes from the table: choose the rows, size them, keep what the strategy keeps, split them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers.architecture import Architecture
from mlsysim_nb.layers.megatron import LAYER_INPUT, megatron_layer, megatron_output
from mlsysim_nb.layers.rows import Dims, Saved
from mlsysim_nb.layers.transformers import transformers_layer, transformers_output

__all__ = [
    "ATTENTIONS",
    "DEVICES",
    "IMPLEMENTATIONS",
    "STRATEGIES",
    "Line",
    "layer_rows",
    "layer_saved_bytes",
    "lines",
    "model_saved_bytes",
    "output_rows",
    "output_saved_bytes",
]

IMPLEMENTATIONS = ("megatron", "transformers")
ATTENTIONS = ("eager", "fused")
DEVICES = ("gpu", "cpu")
STRATEGIES = ("none", "selective", "full")
_OWNER = "layers"


def _choose(field: str, value: object, valid: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in valid:
        raise FieldError(_OWNER, field, f"must be one of {', '.join(map(repr, valid))}, got {value!r}")
    return value


def layer_rows(
    arch: Architecture, implementation: str = "megatron", attention: str = "eager", device: str = "gpu"
) -> tuple[Saved, ...]:
    """The rows one decoder layer saves with nothing recomputed, in forward order.

    A model whose layers mix their kinds (a hybrid pattern) gives the rows of each kind, each weighted by its
    ``share`` of the layers: one layer's figure is then the mean over the model's layers (the rows kept once
    per model, once).
    """
    implementation = _choose("implementation", implementation, IMPLEMENTATIONS)
    attention = _choose("attention", attention, ATTENTIONS)
    device = _choose("device", device, DEVICES)
    kinds = arch.layer_counts()
    total = sum(count for _, count in kinds)
    rows: list[Saved] = []
    for layer, count in kinds:
        found = megatron_layer(arch, attention, layer) if implementation == "megatron" else (
            transformers_layer(arch, attention, device, layer))  # fmt: skip
        share = Fraction(count, total)
        rows += found if share == 1 else [replace(row, share=float(share)) for row in found if not row.per_model]
        rows += [row for row in found if row.per_model and share != 1 and row not in rows]
    return tuple(rows)


def output_rows(arch: Architecture, implementation: str = "megatron") -> tuple[Saved, ...]:
    """The rows the embeddings, final norm, output layer and loss keep, once per model."""
    implementation = _choose("implementation", implementation, IMPLEMENTATIONS)
    return megatron_output(arch) if implementation == "megatron" else transformers_output(arch)


@dataclass(frozen=True)
class Line:
    """One row of the table with its bytes on one device for one run."""

    row: Saved
    bytes: float


def lines(
    rows: tuple[Saved, ...],
    dims: Dims,
    *,
    dtype_bytes: int,
    strategy: str = "none",
    tensor_parallel: int = 1,
    sequence_parallel: bool = False,
    device: str = "gpu",
    per_model: bool = True,
    reference_scaling: bool = False,
) -> tuple[Line, ...]:
    """Each kept row's bytes on one device of a tensor-parallel group of ``tensor_parallel``.

    ``strategy`` ``"full"`` keeps the layer's input alone (and the rows kept once per model);
    ``per_model=False`` leaves those per-model rows out (the rotary tables), to count them once for a model, and the
    weight-sized copies (:attr:`Saved.weight_sized`), to count them once per layer.
    ``reference_scaling``: every row at its bytes at 16 bits times ``dtype_bytes / 2``, as the reference
    implementation (mlsysim) scales the paper's 16-bit coefficients to another precision (a dropout mask then
    takes 2 bytes in FP32, where a GPU keeps 1).
    """
    strategy = _choose("strategy", strategy, STRATEGIES)
    device = _choose("device", device, DEVICES)
    if not isinstance(tensor_parallel, int) or tensor_parallel < 1:
        raise FieldError(_OWNER, "tensor_parallel", f"must be a whole number of at least 1, got {tensor_parallel!r}")
    if strategy == "full":
        rows = (LAYER_INPUT, *(r for r in rows if r.per_model or r.weight_sized))
    out = []
    for row in rows:
        apart = row.per_model or row.weight_sized  # counted apart from the per-token figure
        if (apart and not per_model) or not row.kept(strategy if strategy != "full" else "none"):
            continue
        split = row.split == "tp" or (row.split == "sp" and sequence_parallel)
        size = (
            row.bytes(dims, 2, device) * dtype_bytes / 2 if reference_scaling else row.bytes(dims, dtype_bytes, device)
        )
        out.append(Line(row, size / tensor_parallel if split else float(size)))
    return tuple(out)


def layer_saved_bytes(
    arch: Architecture,
    *,
    seq_len: int,
    micro_batch: int,
    dtype_bytes: int,
    strategy: str = "none",
    attention: str = "eager",
    implementation: str = "megatron",
    tensor_parallel: int = 1,
    sequence_parallel: bool = False,
    device: str = "gpu",
    per_model: bool = False,
    reference_scaling: bool = False,
) -> float:
    """Bytes one decoder layer saves on one device.

    The per-model rotary tables and the weight-sized copies (Gemma's FP32 1 + w) are left out unless ``per_model``.
    """
    rows = layer_rows(arch, implementation, attention, device)
    found = lines(rows, arch.dims(seq_len, micro_batch), dtype_bytes=dtype_bytes, strategy=strategy,
                  tensor_parallel=tensor_parallel, sequence_parallel=sequence_parallel, device=device,
                  per_model=per_model, reference_scaling=reference_scaling)  # fmt: skip
    return sum(line.bytes for line in found)


def output_saved_bytes(
    arch: Architecture,
    *,
    seq_len: int,
    micro_batch: int,
    dtype_bytes: int,
    implementation: str = "megatron",
    tensor_parallel: int = 1,
    sequence_parallel: bool = False,
) -> float:
    """Bytes the embeddings, final norm, output layer and loss save on one device, once per model."""
    if arch.vocab_size is None:
        raise FieldError(_OWNER, "vocab_size", "the output layer needs the vocabulary size")
    found = lines(output_rows(arch, implementation), arch.dims(seq_len, micro_batch), dtype_bytes=dtype_bytes,
                  tensor_parallel=tensor_parallel, sequence_parallel=sequence_parallel)  # fmt: skip
    return sum(line.bytes for line in found)


def model_saved_bytes(
    arch: Architecture,
    *,
    layers: int,
    seq_len: int,
    micro_batch: int,
    dtype_bytes: int,
    output: bool = True,
    **options: Any,
) -> float:
    """Bytes ``layers`` decoder layers save, the per-model rows once, and (``output``) the output layer and loss.

    ``options`` are :func:`layer_saved_bytes`'s (``strategy``, ``attention``, ``implementation``,
    ``tensor_parallel``, ``sequence_parallel``, ``device``, ``reference_scaling``); the output layer takes
    ``implementation``, ``tensor_parallel`` and ``sequence_parallel`` of them.
    """
    if not isinstance(layers, int) or layers < 1:
        raise FieldError(_OWNER, "layers", f"must be a whole number of at least 1, got {layers!r}")
    one = layer_saved_bytes(arch, seq_len=seq_len, micro_batch=micro_batch, dtype_bytes=dtype_bytes, **options)
    every = layer_saved_bytes(arch, seq_len=seq_len, micro_batch=micro_batch, dtype_bytes=dtype_bytes,
                              per_model=True, **options)  # fmt: skip
    rows = layer_rows(arch, options.get("implementation", "megatron"), options.get("attention", "eager"),
                      options.get("device", "gpu"))  # fmt: skip
    copies = lines(tuple(r for r in rows if r.weight_sized and not r.per_model), arch.dims(seq_len, micro_batch),
                   dtype_bytes=dtype_bytes, device=options.get("device", "gpu"))  # fmt: skip
    total = layers * one + (every - one) + (layers - 1) * sum(line.bytes for line in copies)
    if output:
        kept = {k: v for k, v in options.items() if k in ("implementation", "tensor_parallel", "sequence_parallel")}
        total += output_saved_bytes(arch, seq_len=seq_len, micro_batch=micro_batch, dtype_bytes=dtype_bytes, **kept)
    return total
