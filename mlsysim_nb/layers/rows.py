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
an FP32 tensor whatever the activation dtype (a framework's upcast), ``"int64"`` an index, ``"bool"`` a
boolean mask built in the forward pass (one byte on every device).
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
    "Cached",
    "Dims",
    "Saved",
    "Weight",
    "element_bytes",
]

SYMBOLS = ("s", "b", "h", "a", "kv", "d", "f", "E", "k", "v")
WIDTHS = ("act", "mask", "fp32", "int64", "bool")
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
    "cpu sdpa unequal head dims": (
        "On the CPU, PyTorch's scaled_dot_product_attention has no fused kernel when the keys' head dimension "
        "differs from the values' (latent attention: d_qk ≠ d_v) and runs its math path: FP32 copies of Q, K and V "
        "and the FP32 scores, s² terms at 4 bytes an element."
    ),
}


@dataclass(frozen=True)
class Dims:
    """The sizes of one layer's symbols for one run (see the module's table).

    The attention symbols (``a``, ``kv``, ``d``) are 1 for a layer without attention heads; a mixer's own
    symbols (a state size, a latent width) are ``extra`` pairs, named by the mixer that sizes them.
    """

    s: int
    b: int
    h: int
    a: int = 1
    kv: int = 1
    d: int = 1
    f: int = 1
    E: int = 1
    k: int = 1
    v: int = 1
    extra: tuple[tuple[str, int], ...] = ()

    def size(self, shape: tuple[str, ...]) -> int:
        """Elements of a tensor of this ``shape`` (a tuple of symbols; the empty tuple is a scalar)."""
        return prod(self._symbol(symbol) for symbol in shape)

    def _symbol(self, symbol: str) -> int:
        if symbol in SYMBOLS:
            return getattr(self, symbol)  # type: ignore[no-any-return]  # an int, or an array in a sweep
        for name, value in self.extra:
            if name == symbol:
                return value
        msg = f"no size for the symbol {symbol!r}; the layer's symbols are {', '.join((*SYMBOLS, *dict(self.extra)))}"
        raise ValueError(msg)


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
    if width == "bool":
        return 1
    msg = f"unknown width {width!r}; widths are {', '.join(WIDTHS)}"
    raise ValueError(msg)


@dataclass(frozen=True)
class Saved:
    """One tensor (or ``count`` equal tensors) a layer keeps for its backward pass.

    ``paper`` names the row of Korthikanti et al.'s count it stands for (``None`` when the paper has no such
    tensor); ``note`` says why a framework's row differs from the paper's. ``narrow_only`` rows exist only
    when the activations are narrower than FP32 (a cast to FP32 that is a no-op in FP32), ``wide_only`` rows only
    in FP32; ``per_model`` rows are kept once per model, not once per layer (the rotary tables every layer reads).
    A row whose shape has no ``s`` is a weight-sized copy a layer keeps whatever the tokens (Gemma's RMSNorm keeps
    ``1 + w`` in FP32).
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
    #: The share of the model's layers that keep this row: 1 unless the layers mix their kinds (a hybrid
    #: pattern), where one layer's figure is the mean over the model's layers.
    share: float = 1
    #: Exists only when the activations are FP32: a cast to FP32 that is a no-op there returns a view, which keeps
    #: a whole FP32 storage alive, where a narrower run keeps a copy of one part (a ``narrow_only`` row; the rotary
    #: key beside DeepSeek's key/value latent in one projection's output).
    wide_only: bool = False

    def __post_init__(self) -> None:
        bad = [s for s in self.shape if not s.isidentifier()]
        if bad or self.width not in WIDTHS or self.recompute not in RECOMPUTE or self.split not in SPLITS:
            msg = f"row {self.key!r}: shape {self.shape}, width {self.width!r}, recompute, split must be known"
            raise ValueError(msg)

    def elements(self, dims: Dims) -> int:
        """Elements this row holds for ``dims`` (all ``count`` tensors, times its ``share`` of the layers)."""
        found = self.count * dims.size(self.shape)
        return found if self.share == 1 else found * self.share  # type: ignore[return-value]  # a mean over layers

    def bytes(self, dims: Dims, dtype_bytes: int, device: str = "gpu") -> int:
        """Bytes this row holds for ``dims`` when activations take ``dtype_bytes`` each, on ``device``."""
        if (self.narrow_only and dtype_bytes >= 4) or (self.wide_only and dtype_bytes < 4):
            return 0
        return self.elements(dims) * element_bytes(self.width, dtype_bytes, device)

    @property
    def weight_sized(self) -> bool:
        """A weight-sized copy a layer keeps whatever the run: no ``s`` nor ``b`` in its shape (Gemma's FP32 1 + w).

        Counted once per layer outside the per-token figure, as the rows kept once per model are counted apart, and
        kept under every recomputation (full recomputation would keep none of them across layers: a stated
        over-count of a few kB to a few MB a layer).
        """
        return "s" not in self.shape and "b" not in self.shape

    def kept(self, strategy: str) -> bool:
        """Whether this row stays saved under ``strategy`` (``"none"`` or ``"selective"``; full keeps the input)."""
        return strategy == "none" or (strategy == "selective" and self.recompute != "selective")


@dataclass(frozen=True)
class Weight:
    """One weight tensor (or ``count`` equal ones) of a layer or of the embeddings and output layer.

    ``per_expert`` weights are repeated for each routed expert (the experts' MLPs). ``matrix``: whether a token
    multiplies it (2 FLOPs per parameter forward); ``None``: a row with the hidden width ``h`` and another axis
    is a matrix, anything else (norms, biases, a convolution's taps) is not. A matrix between two other widths
    (latent attention's decompressions) says so.
    """

    key: str
    label: str
    block: str
    shape: tuple[str, ...]
    count: int = 1
    per_expert: bool = False
    matrix: bool | None = None

    @property
    def multiplied(self) -> bool:
        """Whether a token multiplies this weight as a matrix (see ``matrix``)."""
        if self.matrix is not None:
            return self.matrix
        return "h" in self.shape and len(self.shape) >= 2

    def parameters(self, dims: Dims, *, active: bool = False) -> int:
        """Parameters of this row; ``active``: those one token uses (k of the E experts)."""
        experts = (dims.k if active else dims.E) if self.per_expert else 1
        return self.count * dims.size(self.shape) * experts


@dataclass(frozen=True)
class Cached:
    """One tensor (or ``count`` equal ones) a serving engine keeps per layer to decode the next token.

    ``per_token`` rows grow with the tokens a sequence has seen (K and V, a compressed latent), up to the
    layer's window when it has one; the others are a fixed state per sequence (a state-space layer's). The
    shape excludes the token and the sequence: K is ``("kv", "d")``. A tensor-parallel group splits a row as
    its mixer's rule sizes the row's symbols on one device (see :mod:`mlsysim_nb.layers.mixers`).
    """

    key: str
    label: str
    shape: tuple[str, ...]
    count: int = 1
    per_token: bool = True

    def __post_init__(self) -> None:
        if not all(s.isidentifier() for s in self.shape) or self.count < 1:
            msg = f"cache row {self.key!r}: shape {self.shape} must be symbols and count at least 1"
            raise ValueError(msg)

    def elements(self, dims: Dims) -> int:
        """Elements this row holds for one token (``per_token``) or one sequence (a state), all ``count`` tensors."""
        return self.count * dims.size(self.shape)
