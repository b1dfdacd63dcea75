"""Korthikanti's named per-layer line items, and where PyTorch saves each one.

Source: Korthikanti et al. (2022), "Reducing Activation Recomputation in Large
Transformer Models", arXiv:2205.05198, Sec. 4.1. At 16 bits, one GPT layer keeps,
for the backward pass, the tensors below; their sizes add up to
``s·b·h·(34 + 5·a·s/h)`` bytes. The table names each tensor once, with its
paper coefficient (bytes per element of its size term at 16 bits), taken from the
layer table (:mod:`mlsysim_nb.layers`). The model's
own figure (:class:`~mlsysim_nb.ActivationMemoryScenario`) is split among the
items in proportion to these coefficients; the coefficients are checked to add
up to the model's constants, so the two cannot drift apart.

``SITES`` maps what the measurement sees (a step of the layer's forward pass and
the name of the saved slot in PyTorch's autograd node) to an item.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlsysim_nb.layers import GPT_LAYER, SavedTensor
from mlsysim_nb.physics import KORTHIKANTI_PER_TOKEN_BYTES, KORTHIKANTI_SCORE_BYTES

__all__ = ["ITEMS", "SITES", "LineItem", "coefficient_sum", "item", "predicted_items"]


@dataclass(frozen=True)
class LineItem:
    """One tensor of Korthikanti's per-layer count.

    ``coefficient`` is its bytes per element of ``term`` at 16 bits: ``term``
    is ``"sbh"`` (grows with the tokens) or ``"as2b"`` (an attention-score
    tensor, a·s² per sequence).
    """

    key: str
    label: str
    block: str
    term: str
    coefficient: int


_TERMS = {"h": "sbh", "fh": "sbh", "scores": "as2b"}
_SHOWN = {"sbh": "sbh", "as2b": "as²b"}


def _line_item(tensor: SavedTensor) -> LineItem:
    term, coefficient = _TERMS[tensor.term], tensor.coefficient()
    shown = f"{coefficient if coefficient != 1 else ''}{_SHOWN[term]}"
    return LineItem(tensor.key, f"{tensor.label} ({shown})", tensor.block, term, coefficient)


#: One item per saved tensor of the layer table, labelled with its paper coefficient (at Korthikanti's 4h MLP).
ITEMS: tuple[LineItem, ...] = tuple(_line_item(t) for t in GPT_LAYER)

_BY_KEY = {item.key: item for item in ITEMS}

# A dropout keeps its mask as the scaled noise (MulBackward0's `other`, torch.nn.functional.dropout on
# the CPU) or as a bool mask (NativeDropoutBackward0's `result1`, torch.native_dropout).
_MASK = ("_saved_other", "_saved_result1")
# A Linear on a 3-D input saves a 2-D view of it: addmm's `mat1` (with bias) or mm's `self`.
_LINEAR_INPUT = ("_saved_mat1", "_saved_self")

#: (step of the forward pass, autograd slot) -> item key. Anything else a step saves is unattributed.
SITES: dict[tuple[str, str], str] = {
    ("layernorm 1", "_saved_input"): "ln1_input",
    **{("qkv projection", slot): "qkv_input" for slot in _LINEAR_INPUT},
    **{("attention scores", slot): "qk" for slot in ("_saved_self", "_saved_mat2")},
    ("softmax", "_saved_result"): "softmax_output",
    **{("softmax dropout", slot): "softmax_dropout_mask" for slot in _MASK},
    ("attention x V", "_saved_self"): "softmax_dropout_output",
    ("attention x V", "_saved_mat2"): "v",
    ("fused attention", "_saved_query"): "qk",
    ("fused attention", "_saved_key"): "qk",
    ("fused attention", "_saved_value"): "v",
    # the fused kernel keeps its output, which is the output projection's input (often the same storage)
    ("fused attention", "_saved_output"): "projection_input",
    **{("output projection", slot): "projection_input" for slot in _LINEAR_INPUT},
    **{("attention dropout", slot): "attention_dropout_mask" for slot in _MASK},
    ("layernorm 2", "_saved_input"): "ln2_input",
    **{("mlp up-projection", slot): "mlp_input" for slot in _LINEAR_INPUT},
    ("gelu", "_saved_self"): "gelu_input",
    **{("mlp down-projection", slot): "gelu_output" for slot in _LINEAR_INPUT},
    **{("mlp dropout", slot): "mlp_dropout_mask" for slot in _MASK},
}


def item(key: str) -> LineItem:
    """The line item called ``key``."""
    return _BY_KEY[key]


def coefficient_sum(term: str) -> int:
    """Sum of the items' coefficients over one size term (34 for ``"sbh"``, 5 for ``"as2b"``)."""
    return sum(i.coefficient for i in ITEMS if i.term == term)


def predicted_items(scenario: Any) -> dict[str, float]:
    """Bytes the model predicts for each item of one layer, by item key.

    The model's per-token figure (``activations("selective")`` per layer) is
    split among the ``sbh`` items, and its stored scores
    (``score_activations_per_layer``) among the ``as2b`` items, in proportion
    to the paper's coefficients.
    """
    layers = scenario.workload.layers
    per_token = float(scenario.activations("selective").m_as("byte")) / layers
    scores = float(scenario.score_activations_per_layer.m_as("byte"))
    totals = {"sbh": (per_token, KORTHIKANTI_PER_TOKEN_BYTES), "as2b": (scores, KORTHIKANTI_SCORE_BYTES)}
    out = {}
    for i in ITEMS:
        figure, constant = totals[i.term]
        out[i.key] = figure * i.coefficient / constant
    return out
