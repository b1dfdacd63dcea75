"""What the layer table reads of a model: one decoder layer's architecture, the embeddings and output layer.

A plain record; the workload (:class:`mlsysim_nb.records.workloads.Workload`) validates its fields and
builds one with ``workload.architecture()``. The defaults are a GPT-style layer as Korthikanti et al. (2022)
count it: LayerNorm, a 4h GeLU MLP with biases, dropout after attention, the softmax and the MLP, learned
positions, multi-head attention.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers.rows import Dims

__all__ = ["ACTIVATIONS", "BIASES", "MLPS", "NORMS", "POSITIONS", "Architecture"]

MLPS = ("plain", "gated")
ACTIVATIONS = ("gelu", "gelu_new", "silu")
NORMS = ("layernorm", "rmsnorm")
#: Which linear layers have biases: all (GPT), only Q, K and V (Qwen2), none (Llama, Mistral, Mixtral).
BIASES = ("all", "qkv", "none")
POSITIONS = ("learned", "rotary")
#: GPT-3's dropout probability, the one Korthikanti et al.'s masks assume.
GPT_DROPOUT = 0.1


def _refuse(field: str, rule: str) -> None:
    raise FieldError("Architecture", field, rule)


def _whole(field: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        _refuse(field, f"must be a whole number of at least {minimum}, got {value!r}")


@dataclass(frozen=True)
class Architecture:
    """One decoder layer's shape and kind, and the model's vocabulary (``experts`` 0: a dense MLP).

    ``positions`` ``None``: the position encoding is not stated, and no position table is counted.
    """

    hidden: int
    heads: int
    kv_heads: int | None = None
    head_dim: int | None = None
    ffn: int | None = None
    mlp: str = "plain"
    activation: str = "gelu"
    norm: str = "layernorm"
    attention_dropout: float = GPT_DROPOUT
    hidden_dropout: float = GPT_DROPOUT
    vocab: int | None = None
    tied: bool = True
    experts: int = 0
    experts_per_token: int = 1
    shared_experts: int = 0
    bias: str = "all"
    positions: str | None = "learned"
    max_positions: int | None = None
    model_type: str | None = None

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
        if self.heads % self.kv:
            _refuse("kv_heads", f"must divide heads ({self.heads}), got {self.kv}")
        if self.head_dim is None and self.hidden % self.heads:
            _refuse("heads", f"must divide hidden ({self.hidden}) unless head_dim is given, got {self.heads}")
        if self.moe and self.experts_per_token > self.experts:
            _refuse("experts_per_token", f"must be at most experts ({self.experts}), got {self.experts_per_token}")

    def _check_counts(self) -> None:
        for name in ("hidden", "heads", "experts_per_token"):
            _whole(name, getattr(self, name), minimum=1)
        for name in ("kv_heads", "head_dim", "ffn", "vocab", "max_positions"):
            if getattr(self, name) is not None:
                _whole(name, getattr(self, name), minimum=1)
        for name in ("experts", "shared_experts"):
            _whole(name, getattr(self, name), minimum=0)

    @property
    def kv(self) -> int:
        """Key/value heads (the attention heads when not grouped)."""
        return self.kv_heads if self.kv_heads is not None else self.heads

    @property
    def d(self) -> int:
        """Head dimension (h/a unless given)."""
        return self.head_dim if self.head_dim is not None else self.hidden // self.heads

    @property
    def f(self) -> int:
        """MLP width in units: one expert's in a mixture of experts (4h unless given)."""
        return self.ffn if self.ffn is not None else 4 * self.hidden

    @property
    def moe(self) -> bool:
        """Whether the MLP is a mixture of routed experts."""
        return self.experts > 0

    def dims(self, seq_len: int, micro_batch: int) -> Dims:
        """The symbols' sizes for a run of ``micro_batch`` sequences of ``seq_len`` tokens."""
        return Dims(
            s=seq_len,
            b=micro_batch,
            h=self.hidden,
            a=self.heads,
            kv=self.kv,
            d=self.d,
            f=self.f,
            E=max(self.experts, 1),
            k=self.experts_per_token if self.moe else 1,
            v=self.vocab or 1,
        )
