"""Numeric formats as data: how a quantised weight, a cached key or value, and a training recipe are stored.

The numbers live in ``records/data/formats.toml``, each with its source: FP8 (E4M3 and E5M2, scaled per tensor
or per 128 x 128 block), MXFP8 and MXFP4 (an 8-bit E8M0 scale per 32 values), NVFP4 (an FP8 scale per 16 and
an FP32 scale per tensor), INT4 with group scales (AWQ's, GPTQ's symmetric) and INT8. A weight format's bits
per value are its element's bits plus its block's scale and zero point shared over the block:

    bits per value = element bits + (scale bits + zero-point bits) / block

(a per-tensor scale is a few bytes per tensor and is left out). A format's usual layout keeps some tensors in
16 bits (:data:`KEPT_BYTES` each): :func:`weight_bytes` counts those apart, row by row of the layer table.

>>> weight_format("nvfp4").bits_per_value, weight_format("mxfp8").bits_per_value
(4.5, 8.25)
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers.rows import Weight
from mlsysim_nb.model.counts import check_count

__all__ = [
    "KEPT_BYTES",
    "ROLES",
    "KVFormat",
    "TrainingRecipe",
    "WeightFormat",
    "kept_parameters",
    "kv_format",
    "kv_format_keys",
    "training_recipe",
    "weight_bytes",
    "weight_format",
    "weight_format_keys",
    "weight_role",
]

#: Bytes of a tensor a format's layout leaves unquantised: BF16 or FP16.
KEPT_BYTES = 2
#: What a weight row is, for a layout's list of tensors kept in 16 bits.
ROLES = ("embeddings", "output", "norms", "router", "attention", "biases", "mlp", "experts")
_OWNER = "formats"


@dataclass(frozen=True)
class WeightFormat:
    """A weight format: bits per element, the scale (and zero point) shared per block, the tensors it keeps.

    ``name`` says it whole; ``summary`` in a few words, as a one-line summary names the weights.
    """

    key: str
    name: str
    summary: str
    element_bits: int
    block: int
    scale_bits: int
    zero_bits: int
    tensor_scale_bits: int
    keep: frozenset[str]
    source: str
    layout_source: str

    @property
    def bits_per_value(self) -> float:
        """Bits per quantised value: the element's, plus the block's scale and zero point over its values."""
        if self.block == 0:
            return float(self.element_bits)
        return self.element_bits + (self.scale_bits + self.zero_bits) / self.block

    @property
    def bytes_per_value(self) -> float:
        """Bytes per quantised value (``bits_per_value / 8``)."""
        return self.bits_per_value / 8


@dataclass(frozen=True)
class KVFormat:
    """A key/value cache's format: bits per cached value, and the scales each attention layer keeps."""

    key: str
    name: str
    element_bits: int
    scales_per_layer: int
    scale_bits: int
    source: str

    @property
    def bytes_per_value(self) -> float:
        """Bytes per cached key or value element."""
        return self.element_bits / 8

    def scale_bytes(self, attention_layers: int) -> float:
        """The scales' bytes over ``attention_layers`` layers (vLLM's k_scale and v_scale: 8 B per layer).

        ``attention_layers`` is a whole number from 0 to 100,000 (a workload's bound on its layers).
        """
        layers = check_count("KVFormat.scale_bytes", "attention_layers", attention_layers, minimum=0, maximum=10**5)
        return float(layers * self.scales_per_layer * self.scale_bits / 8)


@dataclass(frozen=True)
class TrainingRecipe:
    """What a training recipe keeps per parameter for the whole run, in bytes, tensor by tensor."""

    key: str
    name: str
    master_weights: float
    gradients: float
    first_moment: float
    second_moment: float
    weights_16bit: float
    weight_copies: float
    matmul_inputs: str
    source: str
    note: str

    @property
    def bytes_per_parameter(self) -> float:
        """Every byte a parameter holds: weights (master, 16-bit, low-precision copies), gradient, moments."""
        return (
            self.master_weights + self.weights_16bit + self.weight_copies + self.gradients
            + self.first_moment + self.second_moment
        )  # fmt: skip

    def training_fields(self) -> dict[str, float]:
        """The fields of a ``TrainingStateFitScenario`` that state this recipe's bytes exactly.

        The scenario holds weights and gradients at one width (``bytes_per_value``), an optional master copy and
        the optimizer's bytes; a recipe whose weights and gradients differ in width is refused by name.
        """
        weights = self.weights_16bit + self.weight_copies
        if weights == 0:  # the master copy is the weights the step updates
            weights = self.master_weights
            master = None
        else:
            master = self.master_weights
        if weights != self.gradients:
            msg = (
                f"{self.name} keeps {weights:g} B of weights and {self.gradients:g} B of gradient per parameter; "
                "TrainingStateFitScenario's bytes_per_value holds both at one width"
            )
            raise FieldError(_OWNER, "training_fields", msg)
        fields = {"bytes_per_value": weights, "optimizer_bytes_per_parameter": self.first_moment + self.second_moment}
        if master is not None:
            fields["master_bytes_per_parameter"] = master
        return fields


@cache
def _data() -> dict[str, Any]:
    text = resources.files("mlsysim_nb.records").joinpath("data", "formats.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def _known(table: str, function: str, key: Any) -> str:
    """``key`` if it names an entry of ``table``, else a refusal naming ``formats.<function>.key`` (before a cache)."""
    entries: dict[str, Any] = _data()[table]
    if isinstance(key, str) and key in entries:
        return key
    hint = ""
    if isinstance(key, str) and key.strip().lower() in entries:
        hint = f" (names are lower case, without spaces: {key.strip().lower()!r})"
    msg = f"must name a {table} format, one of {', '.join(map(repr, entries))}; got {key!r}{hint}"
    raise FieldError(f"{_OWNER}.{function}", "key", msg)


def _pick(table: str, key: str) -> dict[str, Any]:
    entry: dict[str, Any] = _data()[table][key]
    return entry


def weight_format_keys() -> tuple[str, ...]:
    """The weight formats' keys, in the data file's order."""
    return tuple(_data()["weights"])


def kv_format_keys() -> tuple[str, ...]:
    """The key/value cache formats' keys."""
    return tuple(_data()["kv"])


def weight_format(key: str) -> WeightFormat:
    """The weight format ``key`` (``"nvfp4"``, ``"int4_awq_g128"``, ...)."""
    return _weight_format(_known("weights", "weight_format", key))


@cache
def _weight_format(key: str) -> WeightFormat:
    e = _pick("weights", key)
    unknown = set(e["keep"]) - set(ROLES)
    if unknown:  # a data file's slip, named
        raise FieldError(_OWNER, key, f"keeps unknown tensors {sorted(unknown)}: only {', '.join(ROLES)}")
    fields = {k: e[k] for k in ("name", "summary", "element_bits", "block", "scale_bits", "zero_bits",
                                "tensor_scale_bits")}  # fmt: skip
    return WeightFormat(key=key, keep=frozenset(e["keep"]), source=e["source"], layout_source=e["layout_source"],
                        **fields)  # fmt: skip


def kv_format(key: str) -> KVFormat:
    """The key/value cache format ``key`` (``"bf16"``, ``"fp8_e4m3"``, ``"fp8_e5m2"``)."""
    return _kv_format(_known("kv", "kv_format", key))


@cache
def _kv_format(key: str) -> KVFormat:
    e = _pick("kv", key)
    return KVFormat(key=key, **{k: e[k] for k in ("name", "element_bits", "scales_per_layer", "scale_bits", "source")})


def training_recipe(key: str) -> TrainingRecipe:
    """The training recipe ``key`` (``"deepseek_v3_fp8"``, ``"te_mxfp8"``)."""
    return _training_recipe(_known("training", "training_recipe", key))


@cache
def _training_recipe(key: str) -> TrainingRecipe:
    e = _pick("training", key)
    return TrainingRecipe(
        key=key, name=e["name"], master_weights=e["master_weights"], gradients=e["gradients"],
        first_moment=e["first_moment"], second_moment=e["second_moment"], weights_16bit=e.get("weights_16bit", 0),
        weight_copies=e["weight_copies"], matmul_inputs=e["matmul_inputs"], source=e["source"], note=e["note"],
    )  # fmt: skip


_BIASES = frozenset({"bq", "bkv", "bo"})


def weight_role(row: Weight) -> str:
    """What a weight row of the layer table is, in a layout's words (one of :data:`ROLES`)."""
    if row.key in ("embedding", "positions"):
        return "embeddings"
    if row.key == "output":
        return "output"
    if row.key.startswith(("norm", "final_norm")) or row.key == "qk_norm":
        return "norms"
    if row.key == "router":
        return "router"
    if row.key in _BIASES or row.key.endswith("_bias"):
        return "biases"
    if row.block == "attention":
        return "attention"
    return "experts" if row.per_expert else "mlp"


def kept_parameters(workload: Any, keep: frozenset[str] | set[str]) -> int:
    """Parameters of ``workload`` in the tensors ``keep`` names (the rows of the layer table, layers times each)."""
    from mlsysim_nb import layers

    arch = workload.architecture()
    dims = arch.dims(1, 1)
    found = sum(r.parameters(dims) for r in layers.model_weights(arch) if weight_role(r) in keep)
    for layer, count in arch.layer_counts():  # each kind of layer of the pattern, as many times as the model has it
        found += count * sum(r.parameters(dims) for r in layers.layer_weights(arch, layer) if weight_role(r) in keep)
    return int(found)


def weight_bytes(workload: Any, key: str) -> float:
    """Bytes of ``workload``'s weights in format ``key``: its layout's kept tensors at 2 B, the rest quantised.

    >>> from mlsysim_nb.records.workload_catalog import Workloads
    >>> round(weight_bytes(Workloads.configuration("llama-3.1-70b"), "int4_g128_sym") / 1e9, 2)
    39.5
    """
    from mlsysim_nb.records.workloads import Workload

    fmt = weight_format(key)
    if not isinstance(workload, Workload):
        raise FieldError(f"{_OWNER}.weight_bytes", "workload", f"must be a Workload, got {type(workload).__name__}")
    total = int(workload.parameters.magnitude)
    kept = kept_parameters(workload, fmt.keep)
    return (total - kept) * fmt.bytes_per_value + kept * KEPT_BYTES
