"""The records of the layer table: a saved tensor or a weight, its shape in the layer's symbols, its width.

Symbols (the keys of :class:`Dims`):

====  =====================================================  ====  ==============================
s     sequence length                                        d     head dimension
b     micro-batch size                                       f     MLP width in units (one expert's)
h     hidden size                                            E     routed experts
a     attention heads                                        k     experts per token
kv    key/value heads (grouped-query attention)              v     vocabulary size
====  =====================================================  ====  ==============================

A width says how many bytes one element takes: ``"act"`` is the activation dtype (2 at 16 bits, 4 in
FP32), ``"mask"`` a dropout mask (one byte on a GPU; see :data:`DEVICE_EFFECTS` for the CPU), ``"fp32"``
an FP32 tensor whatever the activation dtype (a framework's upcast), ``"int64"`` an index.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

__all__ = [
    "DEVICE_EFFECTS",
    "RECOMPUTE",
    "SPLITS",
    "SYMBOLS",
    "WIDTHS",
    "Dims",
    "Saved",
    "Weight",
    "element_bytes",
]

SYMBOLS = ("s", "b", "h", "a", "kv", "d", "f", "E", "k", "v")
WIDTHS = ("act", "mask", "fp32", "int64")
#: Which recomputation drops a row: ``"selective"`` rows are dropped by selective and full recomputation
#: (the attention-score tensors), ``"full"`` rows only by full recomputation, which keeps the layer input.
RECOMPUTE = ("selective", "full")
#: How a row divides over a tensor-parallel group of t devices: ``"tp"`` rows are split by tensor
#: parallelism itself (the heads, the MLP's width, the experts' tokens, the vocabulary); ``"sp"`` rows stay
#: whole on every device unless sequence parallelism splits them along the sequence; ``"none"`` rows are
#: whole on every device either way (the rotary tables, a few scalars).
SPLITS = ("tp", "sp", "none")

#: Named effects of the device a framework runs on, on the width of some rows.
DEVICE_EFFECTS = {
    "cpu dropout mask": (
        "On the CPU, torch.nn.functional.dropout keeps its mask as the scaled noise in the input's dtype "
        "(2 or 4 bytes an element); on a GPU it keeps a one-byte mask."
    ),
    "cpu sdpa math path": (
        "On the CPU, PyTorch's scaled_dot_product_attention with dropout refuses its fused kernel and runs the "
        "math path, which upcasts Q, K and V to FP32, repeats K and V to every head and keeps the FP32 "
        "scores, the dropout mask and the dropped scores: the s² terms return, at 4 bytes an element."
    ),
}


@dataclass(frozen=True)
class Dims:
    """The sizes of one layer's symbols for one run (see the module's table)."""

    s: int
    b: int
    h: int
    a: int
    kv: int
    d: int
    f: int
    E: int = 1
    k: int = 1
    v: int = 1

    def size(self, shape: tuple[str, ...]) -> int:
        """Elements of a tensor of this ``shape`` (a tuple of symbols; the empty tuple is a scalar)."""
        return prod(getattr(self, symbol) for symbol in shape)


def element_bytes(width: str, dtype_bytes: int, device: str = "gpu") -> int:
    """Bytes of one element of ``width`` when activations take ``dtype_bytes`` each, on ``device``."""
    if width == "act":
        return dtype_bytes
    if width == "mask":
        return dtype_bytes if device == "cpu" else 1  # DEVICE_EFFECTS["cpu dropout mask"]
    if width == "fp32":
        return 4
    if width == "int64":
        return 8
    msg = f"unknown width {width!r}; widths are {', '.join(WIDTHS)}"
    raise ValueError(msg)


@dataclass(frozen=True)
class Saved:
    """One tensor (or ``count`` equal tensors) a layer keeps for its backward pass.

    ``paper`` names the row of Korthikanti et al.'s count it stands for (``None`` when the paper has no such
    tensor); ``note`` says why a framework's row differs from the paper's. ``narrow_only`` rows exist only
    when the activations are narrower than FP32 (a cast to FP32 that is a no-op in FP32); ``per_model`` rows
    are kept once per model, not once per layer (the rotary tables every layer reads).
    """

    key: str
    label: str
    block: str
    shape: tuple[str, ...]
    width: str = "act"
    count: int = 1
    recompute: str = "full"
    split: str = "tp"
    paper: str | None = None
    note: str = ""
    narrow_only: bool = False
    per_model: bool = False

    def __post_init__(self) -> None:
        bad = [s for s in self.shape if s not in SYMBOLS]
        if bad or self.width not in WIDTHS or self.recompute not in RECOMPUTE or self.split not in SPLITS:
            msg = f"row {self.key!r}: shape {self.shape}, width {self.width!r}, recompute, split must be known"
            raise ValueError(msg)

    def elements(self, dims: Dims) -> int:
        """Elements this row holds for ``dims`` (all ``count`` tensors)."""
        return self.count * dims.size(self.shape)

    def bytes(self, dims: Dims, dtype_bytes: int, device: str = "gpu") -> int:
        """Bytes this row holds for ``dims`` when activations take ``dtype_bytes`` each, on ``device``."""
        if self.narrow_only and dtype_bytes >= 4:
            return 0
        return self.elements(dims) * element_bytes(self.width, dtype_bytes, device)

    def kept(self, strategy: str) -> bool:
        """Whether this row stays saved under ``strategy`` (``"none"`` or ``"selective"``; full keeps the input)."""
        return strategy == "none" or (strategy == "selective" and self.recompute != "selective")


@dataclass(frozen=True)
class Weight:
    """One weight tensor (or ``count`` equal ones) of a layer or of the embeddings and output layer.

    ``per_expert`` weights are repeated for each routed expert (the experts' MLPs).
    """

    key: str
    label: str
    block: str
    shape: tuple[str, ...]
    count: int = 1
    per_expert: bool = False

    def parameters(self, dims: Dims, *, active: bool = False) -> int:
        """Parameters of this row; ``active``: those one token uses (k of the E experts)."""
        experts = (dims.k if active else dims.E) if self.per_expert else 1
        return self.count * dims.size(self.shape) * experts
