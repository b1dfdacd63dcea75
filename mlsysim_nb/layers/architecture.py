"""What the layer table reads of a model: one decoder layer's architecture, the embeddings and output layer.

A plain record; the workload (:class:`mlsysim_nb.records.workloads.Workload`) validates its fields and
builds one with ``workload.architecture()``. The defaults are a GPT-style layer as Korthikanti et al. (2022)
count it: LayerNorm, a 4h GeLU MLP with biases, dropout after attention, the softmax and the MLP, learned
positions, multi-head attention in every layer.

A model is a sequence of layers: ``pattern`` gives each layer's :class:`Layer` (its mixer, from
:mod:`mlsysim_nb.layers.mixers`, and its window), repeated over the ``layers`` of the model, so alternating
local and global attention, or attention among state-space layers, is data. No pattern: every layer is
attention, with the model's ``sliding_window`` when it has one.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass

from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers import mixers
from mlsysim_nb.layers.rows import Dims

__all__ = ["ACTIVATIONS", "BIASES", "MLPS", "NORMS", "POSITIONS", "Architecture", "Layer"]

MLPS = ("plain", "gated")
#: ``gelu_pytorch_tanh`` is Gemma's name for the tanh approximation ``gelu_new`` computes (no parameters either way).
#: ``relu2`` is the squared ReLU of Nemotron-H's plain MLP (no parameters).
ACTIVATIONS = ("gelu", "gelu_new", "gelu_pytorch_tanh", "silu", "relu2")
NORMS = ("layernorm", "rmsnorm")
#: Which linear layers have biases: all (GPT), only Q, K and V (Qwen2), none (Llama, Mistral, Mixtral).
BIASES = ("all", "qkv", "none")
POSITIONS = ("learned", "rotary")
#: GPT-3's dropout probability, the one Korthikanti et al.'s masks assume.
GPT_DROPOUT = 0.1


def _refuse(field: str, rule: str) -> None:
    raise FieldError("Architecture", field, rule)


def _whole(owner: str, field: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise FieldError(owner, field, f"must be a whole number of at least {minimum}, got {value!r}")


@dataclass(frozen=True)
class Layer:
    """One kind of decoder layer: its token mixer (a module of :mod:`mlsysim_nb.layers.mixers`) and its window.

    ``window``: the most past tokens the mixer reads, so the most its cache keeps per sequence (``None``: the
    whole context).
    """

    mixer: str = "attention"
    window: int | None = None
    #: A dense MLP in a mixture of experts (DeepSeek's first ``first_k_dense_replace`` layers), of width
    #: ``Architecture.dense_ffn``.
    dense: bool = False
    #: Whether the layer has an MLP (and its norm) after its mixer: Nemotron-H's Mamba-2 and attention layers
    #: have none; its MLP layers are ``Layer("none")``, an MLP with no mixer.
    mlp: bool = True

    def __post_init__(self) -> None:
        """Refuse an unknown mixer or a window that is not a whole number of tokens, naming the field."""
        mixers.find(self.mixer, "Layer", "mixer")
        if self.window is not None:
            _whole("Layer", "window", self.window, minimum=1)
        for name in ("dense", "mlp"):
            if not isinstance(getattr(self, name), bool):
                raise FieldError("Layer", name, f"must be True or False, got {getattr(self, name)!r}")
        if self.mixer == "none" and not self.mlp:
            raise FieldError("Layer", "mlp", "must be True for a layer with no mixer (a layer holds one or both)")

    @property
    def has_mixer(self) -> bool:
        """Whether the layer mixes tokens (its mixer is not ``"none"``)."""
        return self.mixer != "none"


@dataclass(frozen=True)
class Architecture:
    """One decoder layer's shape and kind, and the model's vocabulary (``experts`` 0: a dense MLP).

    ``positions`` ``None``: the position encoding is not stated, and no position table is counted. ``heads``
    ``None``: no layer has attention heads (the pattern's mixers need none). ``layers`` ``None``: the model's
    layers are one pass of the pattern.
    """

    hidden_dim: int
    heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    ffn_dim: int | None = None
    mlp: str = "plain"
    activation: str = "gelu"
    norm: str = "layernorm"
    attention_dropout: float = GPT_DROPOUT
    hidden_dropout: float = GPT_DROPOUT
    vocab_size: int | None = None
    tied_embeddings: bool = True
    experts: int = 0
    experts_per_token: int = 1
    shared_experts: int = 0
    bias: str = "all"
    positions: str | None = "learned"
    context_length: int | None = None
    model_type: str | None = None
    layers: int | None = None
    sliding_window: int | None = None
    pattern: tuple[Layer, ...] = ()
    #: RMSNorm scales over the head dimension on Q and K (Qwen3, Gemma 3): 2·d parameters per attention layer.
    qk_norm: bool = False
    #: Norms after attention and after the MLP as well as before (Gemma 2 and 3): four norms per layer.
    sandwich_norms: bool = False
    #: One learned attention sink per head (gpt-oss): ``a`` parameters per attention layer.
    attention_sinks: bool = False
    #: A bias on the router's logits (gpt-oss): ``E`` parameters per layer.
    router_bias: bool = False
    #: The MLP width of a mixture's dense layers (``Layer.dense``); ``ffn`` (one expert's) unless given.
    dense_ffn: int | None = None
    #: Sizes of the symbols of the pattern's other mixers, as ``(symbol, size)`` pairs (latent attention's
    #: ``r_kv``, a state-space layer's ``N_ssm``; each mixer's module lists its own).
    mixer_shapes: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        """Refuse a layer that cannot exist, naming the field and the rule (the workload checks its own first)."""
        self._check_counts()
        for name, allowed in (("mlp", MLPS), ("activation", ACTIVATIONS), ("norm", NORMS), ("bias", BIASES),
                              ("positions", (*POSITIONS, None))):  # fmt: skip
            if getattr(self, name) not in allowed:
                _refuse(name, f"must be one of {', '.join(map(repr, allowed))}, got {getattr(self, name)!r}")
        for name in ("attention_dropout", "hidden_dropout"):
            if not 0 <= getattr(self, name) < 1:
                _refuse(name, f"must be a probability from 0 up to (not including) 1, got {getattr(self, name)!r}")
        if not isinstance(self.pattern, tuple) or not all(isinstance(layer, Layer) for layer in self.pattern):
            _refuse("pattern", f"must be a tuple of Layer, got {self.pattern!r}")
        for layer in self.layer_kinds():
            mixers.find(layer.mixer).check(self)
        if self.moe and self.experts_per_token > self.experts:
            _refuse("experts_per_token", f"must be at most experts ({self.experts}), got {self.experts_per_token}")

    def _check_counts(self) -> None:
        for name in ("hidden_dim", "experts_per_token"):
            _whole("Architecture", name, getattr(self, name), minimum=1)
        names = ("heads", "kv_heads", "head_dim", "ffn_dim", "vocab_size", "context_length", "layers", "sliding_window",
                 "dense_ffn")  # fmt: skip
        for name in names:
            if getattr(self, name) is not None:
                _whole("Architecture", name, getattr(self, name), minimum=1)
        for name in ("experts", "shared_experts"):
            _whole("Architecture", name, getattr(self, name), minimum=0)
        if self.kv_heads is not None and self.heads is None:
            _refuse("kv_heads", "needs heads to be given as well")

    @property
    def kv(self) -> int:
        """Key/value heads (the attention heads when not grouped; 1 without attention heads)."""
        return self.kv_heads if self.kv_heads is not None else (self.heads or 1)

    @property
    def d(self) -> int:
        """Head dimension (h/a unless given; 1 without attention heads)."""
        if self.head_dim is not None:
            return self.head_dim
        return self.hidden_dim // self.heads if self.heads else 1

    @property
    def f(self) -> int:
        """MLP width in units: one expert's in a mixture of experts (4h unless given)."""
        return self.ffn_dim if self.ffn_dim is not None else 4 * self.hidden_dim

    @property
    def moe(self) -> bool:
        """Whether the MLP is a mixture of routed experts."""
        return self.experts > 0

    def shape(self, symbol: str) -> int:
        """The size ``mixer_shapes`` gives ``symbol``; a :class:`FieldError` naming ``mixer_shapes`` if none."""
        for name, size in self.mixer_shapes:
            if name == symbol:
                return size
        _refuse("mixer_shapes", f"must give the size of {symbol!r}, which a layer of the pattern reads")
        raise AssertionError  # unreachable: _refuse raises

    def layer_counts(self) -> tuple[tuple[Layer, int], ...]:
        """Each kind of layer and how many of the model's layers are of it (see :attr:`_counts`)."""
        return self._counts

    @functools.cached_property
    def _counts(self) -> tuple[tuple[Layer, int], ...]:
        """Each kind of layer and how many of the model's layers are of it, in the order the pattern first gives them.

        The pattern repeats over ``layers`` (a pattern as long as the model lists every layer); no pattern: every
        layer is attention with the model's ``sliding_window``.
        """
        pattern = self.pattern or (Layer("attention", self.sliding_window),)
        total = self.layers if self.layers is not None else len(pattern)
        rounds, rest = divmod(total, len(pattern))
        counts: Counter[Layer] = Counter()
        for i, layer in enumerate(pattern):
            counts[layer] += rounds + (i < rest)
        return tuple((layer, counts[layer]) for layer in dict.fromkeys(pattern) if counts[layer])

    def layer_kinds(self) -> tuple[Layer, ...]:
        """The distinct kinds of layer of the model, in the order the pattern gives them."""
        return tuple(layer for layer, _ in self.layer_counts())

    def dims(self, seq_len: int, micro_batch: int) -> Dims:
        """The symbols' sizes for a run of ``micro_batch`` sequences of ``seq_len`` tokens."""
        extra: dict[str, int] = {"f_dense": self.dense_ffn or self.f} if self.moe else {}
        for layer in self.layer_kinds():
            mixer = mixers.find(layer.mixer)
            extra.update(mixer.symbols(self))
            extra.update(mixer.run_symbols(self, seq_len))
        return Dims(
            s=seq_len,
            b=micro_batch,
            h=self.hidden_dim,
            a=self.heads or 1,
            kv=self.kv,
            d=self.d,
            f=self.f,
            E=max(self.experts, 1),
            k=self.experts_per_token if self.moe else 1,
            v=self.vocab_size or 1,
            extra=tuple(extra.items()),
        )
