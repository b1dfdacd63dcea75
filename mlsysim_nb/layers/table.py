"""The saved tensors of one GPT layer, as Korthikanti et al. (2022) count them, and the sums the model uses.

Source: Korthikanti, Casper, Lym, McAfee, Andersch, Shoeybi and Catanzaro (2022), "Reducing Activation
Recomputation in Large Transformer Models", arXiv:2205.05198, Sec. 4.1 (the tensors and their sizes at
16 bits), Sec. 4.2.1 (what tensor parallelism splits) and Sec. 4.2.2 (sequence parallelism splits the rest).

Each row is one tensor (or one pair of equal tensors, such as Q and K): its size term and its bytes per
element of that term at 16 bits.

* ``"h"``: one value per token and hidden unit (``s·b·h`` elements);
* ``"fh"``: one value per token and feed-forward unit (``s·b·f·h`` elements, f = 4 in GPT-3);
* ``"scores"``: one value per attention score (``a·s²·b`` elements).

``split_by_tp`` says whether the t devices of a tensor-parallel group each hold 1/t of it
(the tensors inside the attention and MLP blocks) or all of it (the inputs of the layer norms, of the first
projections and the dropout masks after each block); sequence parallelism splits the latter along the
sequence.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlsysim_nb.layers.architecture import Architecture
from mlsysim_nb.layers.megatron import megatron_layer
from mlsysim_nb.layers.rows import Saved, element_bytes

__all__ = [
    "GPT_LAYER",
    "SavedTensor",
    "ffn_bytes",
    "ffn_free_bytes",
    "paper_rows",
    "per_token_bytes",
    "projection_tensors",
    "replicated_bytes",
    "score_bytes",
]

#: Korthikanti's MLP is 4h wide (GPT-3's): the multiple at which the paper's 34 is printed.
PAPER_FFN_MULTIPLE = 4


@dataclass(frozen=True)
class SavedTensor:
    """One tensor a GPT layer keeps for its backward pass.

    ``bytes`` is bytes per element of ``term`` at 16 bits (2 for a 16-bit value, 1 for a dropout mask);
    ``tensors`` how many equal tensors the row stands for (Q and K are two). ``projection`` marks the
    hidden-width inputs of the attention's matrix products, which the illustrative line item counts.
    """

    key: str
    label: str
    block: str
    term: str
    bytes: int
    split_by_tp: bool
    projection: int = 0

    def coefficient(self, ffn_multiple: int = PAPER_FFN_MULTIPLE) -> int:
        """Bytes per element of its size term (``sbh`` for ``h`` and ``fh`` rows, ``as²b`` for scores)."""
        return self.bytes * ffn_multiple if self.term == "fh" else self.bytes


#: The legacy rows' merged labels: the paper counts Q and K as one 4sbh item.
_MERGED_LABELS = {"qk": "Q and K for QKᵀ"}
#: The hidden-width inputs of the attention's products, which the illustrative line item counts.
_PROJECTION_KEYS = ("q", "k", "v", "projection_input")


def _term(row: Saved) -> str:
    if row.shape.count("s") == 2:
        return "scores"
    return "fh" if "f" in row.shape else "h"


def paper_rows(rows: tuple[Saved, ...]) -> tuple[SavedTensor, ...]:
    """The paper's items (bytes per element of ``sbh``, ``f·sbh`` or ``as²b`` at 16 bits) of a GPT-shaped layer.

    Rows naming the same paper item (Q and K) merge into one; a row's bytes per element at 16 bits is its
    element width (2 for a value, 1 for a mask) times the tensors it stands for.
    """
    merged: dict[str, SavedTensor] = {}
    for row in rows:
        key = row.paper or row.key
        width = element_bytes(row.width, 2) * row.count
        projection = int(row.key in _PROJECTION_KEYS)
        if key in merged:
            old = merged[key]
            width, projection = old.bytes + width, old.projection + projection
        label = _MERGED_LABELS.get(key, row.label)
        merged[key] = SavedTensor(key, label, row.block, _term(row), width, row.split == "tp", projection)
    return tuple(merged.values())


#: Korthikanti's GPT layer (LayerNorm, 4h GeLU MLP, dropout, explicit softmax), from the paper's accounting.
GPT_LAYER: tuple[SavedTensor, ...] = paper_rows(megatron_layer(Architecture(hidden_dim=1, heads=1), "eager"))


def ffn_free_bytes(layer: tuple[SavedTensor, ...] = GPT_LAYER) -> int:
    """Per-token bytes per hidden unit that do not grow with the MLP's width (18 for GPT)."""
    return sum(t.bytes for t in layer if t.term == "h")


def ffn_bytes(layer: tuple[SavedTensor, ...] = GPT_LAYER) -> int:
    """Per-token bytes per hidden unit and per unit of the feed-forward multiple f (4 for GPT)."""
    return sum(t.bytes for t in layer if t.term == "fh")


def per_token_bytes(ffn_multiple: int = PAPER_FFN_MULTIPLE, layer: tuple[SavedTensor, ...] = GPT_LAYER) -> int:
    """Per-token bytes per hidden unit at feed-forward multiple f: 18 + 4f, Korthikanti's 34 at f = 4."""
    return ffn_free_bytes(layer) + ffn_bytes(layer) * ffn_multiple


def score_bytes(layer: tuple[SavedTensor, ...] = GPT_LAYER) -> int:
    """Bytes per attention-score element (5 for GPT: softmax output 2, dropout mask 1, dropout output 2)."""
    return sum(t.bytes for t in layer if t.term == "scores")


def replicated_bytes(layer: tuple[SavedTensor, ...] = GPT_LAYER) -> int:
    """Per-token bytes per hidden unit that tensor parallelism leaves whole on every device (10 for GPT)."""
    return sum(t.coefficient() for t in layer if t.term != "scores" and not t.split_by_tp)


def projection_tensors(layer: tuple[SavedTensor, ...] = GPT_LAYER) -> int:
    """Hidden-width inputs of the attention's products (Q, K, V, the output projection's input): 4 for GPT."""
    return sum(t.projection for t in layer)
