"""``measure_layer``: run one GPT layer forward in PyTorch and account for every byte it saves."""

from __future__ import annotations

from typing import Any

from mlsysim_nb.errors import FieldError
from mlsysim_nb.kinds.activation.model import ActivationMemoryScenario
from mlsysim_nb.measure.arguments import MAX_RANDOM_STATE, check_random_state, named_arguments
from mlsysim_nb.measure.guard import DEFAULT_MEMORY_LIMIT, MAX_SIZES, check_memory_limit, refuse_above_limit
from mlsysim_nb.measure.items import ITEMS, SITES, item, predicted_items
from mlsysim_nb.measure.peak import run_peak_bytes
from mlsysim_nb.measure.results import ItemRow, LayerMeasurement, SavedTensor
from mlsysim_nb.measure.torch_extra import require_torch
from mlsysim_nb.model.fields import check_count
from mlsysim_nb.records.workloads import Workload
from mlsysim_nb.units import Q_

__all__ = ["DTYPES", "MAX_RANDOM_STATE", "layer_scenario", "measure_layer"]

_OWNER = "measure_layer"
#: The value widths the lab runs, by PyTorch's dtype name, with their bytes per value.
DTYPES = {"bfloat16": 2, "float16": 2, "float32": 4}
_ATTENTION = ("explicit", "fused")
_MASKS = ("scaled", "bool")


def _choice(field: str, value: Any, valid: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in valid:
        raise FieldError(_OWNER, field, f"must be one of {', '.join(map(repr, valid))}, got {value!r}")
    return str(value)


def layer_scenario(seq_len: int, micro_batch: int, hidden: int, heads: int, dtype: str) -> ActivationMemoryScenario:
    """The model's scenario for one layer of this shape: what ``measure_layer`` compares against."""
    workload = Workload(
        name=f"one GPT layer (h={hidden}, a={heads})",
        parameters=12 * hidden * hidden + 13 * hidden,  # QKV, projection, 4h MLP with biases, two LayerNorms
        layers=1,
        hidden_dim=hidden,
        heads=heads,
        context_length=seq_len,
    )
    return ActivationMemoryScenario(
        workload=workload, micro_batch=micro_batch, seq_len=seq_len, precision_bytes=DTYPES[dtype]
    )


@named_arguments()
def measure_layer(
    *,
    seq_len: int,
    micro_batch: int,
    hidden: int,
    heads: int,
    dtype: Any = "bfloat16",
    attention: str = "explicit",
    dropout_mask: str = "scaled",
    random_state: int = 0,
    memory_limit: Any = DEFAULT_MEMORY_LIMIT,
) -> LayerMeasurement:
    """Run one GPT layer forward on the CPU and attribute every saved byte to the model's line items.

    Parameters
    ----------
    seq_len, micro_batch, hidden, heads
        The layer's shape: s, b, h and a (``hidden`` must divide by ``heads``).
    dtype
        ``"bfloat16"`` (default), ``"float16"`` or ``"float32"``, or the ``torch.dtype`` itself:
        parameters and activations.
    attention
        ``"explicit"``: scores, softmax and dropout written out; ``"fused"``:
        ``torch.nn.functional.scaled_dot_product_attention`` (no attention dropout).
    dropout_mask
        ``"scaled"``: ``torch.nn.functional.dropout``, which on the CPU keeps the
        scaled noise in the activations' dtype; ``"bool"``: ``torch.native_dropout``,
        which keeps a one-byte mask, as the paper counts it.
    random_state
        Initialises PyTorch's random generator (the bytes do not depend on it; the values do):
        an int from 0 to 2**64 - 1 (the same check as the transformers functions).
    memory_limit
        The most memory the run may take at its peak, by the estimate of :mod:`mlsysim_nb.measure.peak`
        (weights, saved activations, the forward pass's temporaries and the math library's working
        memory), checked before anything is allocated: ``"4 GiB"`` unless raised.

    Raises
    ------
    FieldError
        For a bad size or choice, naming the field.
    TypeError
        For arguments given by position, naming the parameters (every argument is given by name).
    MemoryLimitError
        When the model predicts more memory than ``memory_limit``, naming both.
    ImportError
        Without PyTorch, saying how to install the ``measure`` extra.
    """
    sizes = {
        name: check_count(_OWNER, name, value, maximum=MAX_SIZES[name])
        for name, value in [("seq_len", seq_len), ("micro_batch", micro_batch), ("hidden", hidden), ("heads", heads)]
    }
    if sizes["hidden"] % sizes["heads"]:
        raise FieldError(_OWNER, "heads", f"must divide hidden ({hidden}), got {heads}")
    if not isinstance(dtype, str) and str(dtype).startswith("torch."):
        dtype = str(dtype).removeprefix("torch.")  # a torch.dtype such as torch.bfloat16
    dtype = _choice("dtype", dtype, tuple(DTYPES))
    attention = _choice("attention", attention, _ATTENTION)
    dropout_mask = _choice("dropout_mask", dropout_mask, _MASKS)
    random_state = check_random_state(_OWNER, random_state)
    limit = check_memory_limit(_OWNER, memory_limit)
    scenario = layer_scenario(**sizes, dtype=dtype)
    peak = run_peak_bytes(scenario, sizes, DTYPES[dtype], attention, dropout_mask)
    refuse_above_limit(_OWNER, peak, limit, memory_limit, basis="at its peak, by the lab's estimate")
    require_torch()
    saved = _run(sizes, dtype, attention, dropout_mask, random_state)
    return _account(
        sizes=sizes, dtype=dtype, attention=attention, dropout_mask=dropout_mask, scenario=scenario, run=saved
    )


def _run(
    sizes: dict[str, int], dtype: str, attention: str, dropout_mask: str, random_state: int
) -> tuple[list[Any], set[int]]:
    import torch

    from mlsysim_nb.measure._layer import GPTLayer
    from mlsysim_nb.measure._saved import record

    torch.manual_seed(random_state)
    kind = getattr(torch, dtype)
    layer = GPTLayer(sizes["hidden"], sizes["heads"], attention=attention, dropout_mask=dropout_mask, dtype=kind)
    x = torch.randn(sizes["seq_len"], sizes["micro_batch"], sizes["hidden"], dtype=kind, requires_grad=True)

    def run(mark: Any) -> Any:
        layer.mark = mark
        return layer(x)

    _, saved = record(run)
    constants = {int(p.untyped_storage().data_ptr()) for p in (*layer.parameters(), *layer.buffers())}
    return saved, constants


def _account(
    *,
    sizes: dict[str, int],
    dtype: str,
    attention: str,
    dropout_mask: str,
    scenario: ActivationMemoryScenario,
    run: tuple[list[Any], set[int]],
) -> LayerMeasurement:
    from mlsysim_nb.measure._saved import first_claims, storage_bytes

    saved, constants = run
    saved = [s for s in saved if s.storage not in constants]  # parameters, and the 1/sqrt(d) buffer
    keys = [SITES.get((s.step, s.slot)) for s in saved]
    # a tensor of no line item claims nothing: it leaves its bytes to a later view that has one
    claimed = first_claims(saved, lambda s: (s.step, s.slot) in SITES)
    storages: dict[int, int] = {}
    rows = []
    measured_items = dict.fromkeys((i.key for i in ITEMS), 0)
    for s, key, attributed in zip(saved, keys, claimed, strict=True):
        storages[s.storage] = storage_bytes(s.tensor)
        if key is not None:
            measured_items[key] += attributed
        t = s.tensor
        own = t.numel() * t.element_size()
        shape = tuple(int(n) for n in t.shape)
        dtype_name = str(t.dtype).removeprefix("torch.")
        slot = s.slot.removeprefix("_saved_")
        found = item(key) if key else None
        rows.append(SavedTensor(s.step, s.op, slot, shape, dtype_name, own, storages[s.storage], found, attributed))
    measured = sum(storages.values())
    predicted = predicted_items(scenario)
    items = tuple(ItemRow(i, Q_(predicted[i.key], "byte"), Q_(measured_items[i.key], "byte")) for i in ITEMS)
    return LayerMeasurement(
        **sizes,
        dtype=dtype,
        attention=attention,
        dropout_mask=dropout_mask,
        scenario=scenario,
        tensors=tuple(rows),
        items=items,
        measured=Q_(measured, "byte"),
        predicted=scenario.activations("none"),
        unattributed=Q_(measured - sum(measured_items.values()), "byte"),
    )
