"""Workloads: a model's parameter count and, for transformers, its geometry."""

from __future__ import annotations

import dataclasses
import functools
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers.architecture import ACTIVATIONS, BIASES, GPT_DROPOUT, MLPS, NORMS, POSITIONS, Architecture, Layer
from mlsysim_nb.layers.transformers import MODEL_TYPES
from mlsysim_nb.model.fields import check_count
from mlsysim_nb.model.knob import knob, knobs, label_and_help, record
from mlsysim_nb.records.workload_checks import check_experts, check_field, check_mixer_shapes, check_pattern
from mlsysim_nb.render.display import RichRepr
from mlsysim_nb.units import Q_, ureg

__all__ = [
    "ARCHITECTURE_FIELDS",
    "SHAPE_FIELDS",
    "Workload",
    "check_workload",
    "workload_rows",
]

#: A quadrillion parameters: three orders of magnitude beyond the largest models trained.
MAX_PARAMETERS = 10**15
#: The longest context (and sliding window) a workload accepts, far beyond any published model.
MAX_CONTEXT = 2**24
#: The transformer's shape, in the order tables and reprs show it (always shown, stated or not).
SHAPE_FIELDS = ("layers", "hidden_dim", "heads", "kv_heads", "context_length")
#: The layer's architecture: a workload that states none of these is a GPT-style layer, as Korthikanti et al.
#: (2022) count it (shown when they differ from their defaults).
ARCHITECTURE_FIELDS = (
    "head_dim", "ffn_dim", "mlp", "activation", "norm", "attention_dropout", "hidden_dropout", "vocab_size",
    "tied_embeddings", "experts", "experts_per_token", "shared_experts", "bias", "positions", "model_type", "pattern",
    "qk_norm", "sandwich_norms", "attention_sinks", "router_bias", "dense_ffn", "mixer_shapes",
)  # fmt: skip


_YES_NO = (("no", False), ("yes", True))


def _choices(values: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((value, value) for value in values)


@dataclass(frozen=True, kw_only=True, repr=False)
class Workload(RichRepr):
    """A model to train: its parameter count and, for a transformer, its shape.

    Parameters
    ----------
    name
        How the model is called in tables and derivations.
    parameters
        Parameter count: an int, or a dimensionless quantity (``count``/``param``).
    layers, hidden_dim, heads, context_length
        Transformer geometry the activation model reads; each optional, so a
        CNN such as ResNet-50 is a workload too.
    kv_heads
        Key/value heads under grouped-query attention (at most ``heads``, and dividing it).
        ``heads`` must divide ``hidden_dim`` unless ``head_dim`` is given.
    head_dim, ffn_dim, mlp, activation, norm, attention_dropout, hidden_dropout
        One decoder layer's architecture, which the layer table (:mod:`mlsysim_nb.layers`) reads: the head
        dimension where it is not h/a, the MLP's width in units (4h unless given), ``"plain"`` or
        ``"gated"`` (SwiGLU), its activation (``"gelu"``, ``"gelu_new"``, ``"silu"``), ``"layernorm"`` or
        ``"rmsnorm"``, and the dropout probabilities (of the attention scores; after attention and MLP).
    vocab_size, tied_embeddings, positions, bias
        The vocabulary, whether the output layer shares the token embeddings, ``"learned"`` or
        ``"rotary"`` positions (``None``, the default: not stated, and no position table is counted), and which
        linear layers have biases (``"all"``, ``"qkv"``, ``"none"``).
    experts, experts_per_token, shared_experts
        A mixture of experts: routed experts, how many each token uses, experts every token uses.
    model_type
        The Hugging Face family (``"gpt2"``, ``"llama"``, ``"mistral"``, ``"qwen2"``, ``"mixtral"``) whose
        modules the ``"transformers"`` accounting follows.
    active_parameters
        Parameters one token uses (an MoE's k of E experts); ``parameters`` unless given, derived again from
        ``parameters`` whenever they change (``variant()``, ``dataclasses.replace``).
    sliding_window
        Tokens each attention layer looks back over under sliding-window attention (Mistral 7B's 4096), so
        the most keys and values a layer keeps per sequence; ``None`` when every layer attends to the whole
        context.
    pattern
        The layers as a sequence (:class:`mlsysim_nb.layers.Layer`: a mixer of :mod:`mlsysim_nb.layers.mixers`
        and its window), repeated over ``layers``: alternating local and global attention, or attention among
        other mixers, is data. Empty (the default): every layer is attention, under ``sliding_window``.
    source
        Where the numbers come from.

    >>> Workload(name="tiny", parameters=1_000_000, layers=2).parameters
    <Quantity(1000000, 'count')>
    """

    name: str
    parameters: Any = knob(
        kind="count", symbol="P", label="model parameters", high=MAX_PARAMETERS,
        help="the parameter count: an int, or a dimensionless quantity (count, param)",
    )  # fmt: skip
    layers: int | None = knob(None, kind="count", symbol="L", label="layers", high=10**5, optional=True)
    hidden_dim: int | None = knob(None, kind="count", symbol="h", label="hidden width", high=2**20, optional=True)
    heads: int | None = knob(
        None, kind="count", symbol="a", label="attention heads", high=2**16, optional=True,
        help="attention heads; they must divide hidden_dim unless head_dim is given",
    )  # fmt: skip
    kv_heads: int | None = knob(
        None, kind="count", symbol="a_kv", label="key/value heads", high=2**16, optional=True,
        help="key/value heads under grouped-query attention, dividing heads; not stated: heads (multi-head)",
    )  # fmt: skip
    context_length: int | None = knob(
        None, kind="count", symbol="s_ctx", label="workload context length", high=MAX_CONTEXT, optional=True
    )
    head_dim: int | None = knob(
        None, kind="count", label="head dimension", high=2**16, optional=True, help="not stated: hidden_dim / heads"
    )
    ffn_dim: int | None = knob(
        None, kind="count", label="MLP width (units)", high=2**24, optional=True,
        help="one expert's in a mixture of experts; not stated: 4 x hidden_dim",
    )  # fmt: skip
    mlp: str = knob("plain", kind="choice", label="MLP kind", choices=_choices(MLPS), help="'gated' is SwiGLU")
    activation: str = knob("gelu", kind="choice", label="MLP activation", choices=_choices(ACTIVATIONS))
    norm: str = knob("layernorm", kind="choice", label="normalisation", choices=_choices(NORMS))
    attention_dropout: float = knob(
        GPT_DROPOUT, kind="share", label="attention dropout probability", high=1, positive=False,
        help="dropout of the attention scores, from 0 up to (not including) 1",
    )  # fmt: skip
    hidden_dropout: float = knob(
        GPT_DROPOUT, kind="share", label="hidden dropout probability", high=1, positive=False,
        help="dropout after attention and the MLP, from 0 up to (not including) 1",
    )  # fmt: skip
    vocab_size: int | None = knob(None, kind="count", label="vocabulary size", high=2**24, optional=True)
    tied_embeddings: bool = knob(
        default=True,
        kind="choice",
        label="output layer tied to the embeddings",
        choices=(("tied", True), ("untied", False)),
    )
    experts: int | None = knob(None, kind="count", label="routed experts", high=2**16, optional=True)
    experts_per_token: int | None = knob(
        None, kind="count", label="experts per token", high=2**16, optional=True, help="at most experts"
    )
    shared_experts: int = knob(
        0, kind="count", label="shared experts", low=0, high=2**10, help="experts every token uses"
    )
    bias: str = knob(
        "all", kind="choice", label="linear biases", choices=_choices(BIASES),
        help="which linear layers have biases: all (GPT), Q, K and V (Qwen2), none (Llama)",
    )  # fmt: skip
    positions: str | None = knob(
        None, kind="choice", label="position encoding", choices=_choices(POSITIONS), optional=True,
        help="not stated (None): no position table is counted",
    )  # fmt: skip
    model_type: str | None = knob(
        None, kind="choice", label="Hugging Face model type", choices=_choices(MODEL_TYPES), optional=True,
        help="the family whose modules the transformers accounting follows",
    )  # fmt: skip
    active_parameters: Any = knob(
        None, kind="count", label="parameters one token uses", high=MAX_PARAMETERS, optional=True,
        help="an MoE's k of E experts; not stated: parameters, derived again whenever they change",
    )  # fmt: skip
    sliding_window: int | None = knob(
        None, kind="count", label="sliding attention window (tokens)", high=MAX_CONTEXT, optional=True,
        help="tokens each attention layer looks back over, so the most it caches per sequence; None: all",
    )  # fmt: skip
    pattern: tuple[Layer, ...] = record(
        (), label="layers' pattern (mixer and window), repeated over the layers",
        help="each layer's mixer and window, repeated over layers; empty: attention everywhere",
    )  # fmt: skip
    qk_norm: bool = knob(
        default=False, kind="choice", label="norms on Q and K", choices=_YES_NO,
        help="an RMSNorm over each head's Q and K (Qwen3, Gemma 3): 2·d parameters a layer",
    )  # fmt: skip
    sandwich_norms: bool = knob(
        default=False, kind="choice", label="norms after attention and the MLP too", choices=_YES_NO,
        help="four norms a layer (Gemma 2 and 3)",
    )  # fmt: skip
    attention_sinks: bool = knob(
        default=False, kind="choice", label="a learned attention sink per head", choices=_YES_NO,
        help="gpt-oss: a parameters a layer",
    )  # fmt: skip
    router_bias: bool = knob(
        default=False, kind="choice", label="router bias", choices=_YES_NO,
        help="a bias on the router's logits (gpt-oss): E parameters a layer",
    )  # fmt: skip
    dense_ffn: int | None = knob(
        None, kind="count", label="dense layers' MLP width (units)", high=2**24, optional=True,
        help="the MLP width of a mixture's dense layers (DeepSeek's first_k_dense_replace); None: one expert's",
    )  # fmt: skip
    mixer_shapes: tuple[tuple[str, int], ...] = record(
        (), label="sizes of the other mixers' symbols",
        help="(symbol, size) pairs: latent attention's r_q, r_kv, d_rope, d_nope, d_v; Mamba-2's H_ssm, P_ssm, "
        "N_ssm, G_ssm, K_conv and the scan's chunk Q_ssm",
    )  # fmt: skip
    source: str = field(default="", compare=False)
    #: ``active_parameters`` as given (``None``: derived from ``parameters``), what ``variant()`` carries over
    _given_active: Any = field(default=None, init=False, repr=False, compare=False)
    #: The architectures built from this (frozen) workload, by ``reference``: built once, read by every kind
    _architectures: dict[bool, Architecture] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        owner = "Workload"
        declared = knobs(type(self))
        self._check_texts_and_scalars(owner, declared)
        given = self.active_parameters
        if given is not None and _DERIVED.get(id(given)) is given:
            given = None  # a value this class derived, passed back by dataclasses.replace: derived again
        object.__setattr__(self, "_given_active", given)
        for name, declaration in declared.items():
            if name not in _COUPLED:  # each field by its own knob; the coupled ones below, with what they need
                object.__setattr__(self, name, check_field(owner, name, declaration, getattr(self, name)))
        object.__setattr__(self, "parameters", Q_(self.parameters, "count"))
        most = int(declared["layers"].high or 0)
        object.__setattr__(self, "pattern", check_pattern(owner, self.pattern, self.layers, most))
        object.__setattr__(self, "mixer_shapes", check_mixer_shapes(owner, self.mixer_shapes))
        experts = check_experts(owner, declared, self.experts, self.experts_per_token, self.shared_experts)
        for name, value in experts.items():
            object.__setattr__(self, name, value)
        self._check_layout(owner)
        if given is None:
            derived = Q_(int(self.parameters.magnitude), "count")
            _DERIVED[id(derived)] = derived
            object.__setattr__(self, "active_parameters", derived)
        else:
            active = check_field(owner, "active_parameters", declared["active_parameters"], given)
            active = int(getattr(active, "magnitude", active))
            if active > self.parameters.magnitude:
                msg = f"must be at most parameters ({self.parameters.magnitude:,}), got {active:,}"
                raise FieldError(owner, "active_parameters", msg)
            object.__setattr__(self, "active_parameters", Q_(active, "count"))

    def _check_texts_and_scalars(self, owner: str, declared: dict[str, Any]) -> None:
        """A name and a source of text; one value, not a list or an array, in every declared field."""
        if not isinstance(self.name, str) or not self.name:
            raise FieldError(owner, "name", f"must be a non-empty string, got {self.name!r}")
        if not isinstance(self.source, str):
            raise FieldError(owner, "source", f"must be a string, got {type(self.source).__name__} {self.source!r}")
        for name in declared:
            if not _is_scalar(getattr(self, name)):
                msg = (
                    "must be a single number or choice, not a list or array; to compare several, build a workload each"
                )
                raise FieldError(owner, name, msg)

    def _check_layout(self, owner: str) -> None:
        """Attention layouts that can exist: heads split the width evenly, key/value heads share the heads evenly."""
        heads, kv_heads, hidden = self.heads, self.kv_heads, self.hidden_dim
        if kv_heads is not None:
            if heads is None:
                raise FieldError(owner, "kv_heads", "needs heads to be given as well")
            check_count(owner, "kv_heads", kv_heads, maximum=heads)
            if heads % kv_heads:
                msg = (
                    f"must divide heads ({heads:,}) evenly, so that each key/value head serves whole query heads; "
                    f"got {kv_heads:,}"
                )
                raise FieldError(owner, "kv_heads", msg)
        if self.head_dim is not None and heads is None:
            raise FieldError(owner, "head_dim", "needs heads to be given as well")
        if heads is not None and hidden is not None and self.head_dim is None and hidden % heads:
            msg = f"must divide hidden_dim ({hidden:,}) evenly, so that every head has the same width; got {heads:,}"
            raise FieldError(owner, "heads", msg)

    def given_fields(self) -> dict[str, Any]:
        """The fields as given: a default derived from other fields (``active_parameters``) is left out.

        ``Workload(**w.given_fields())`` is ``w`` again.
        """
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}
        if self._given_active is None:
            del fields["active_parameters"]
        return fields

    def variant(self, **changes: Any) -> Workload:
        """A new, fully validated workload with ``changes`` applied; this one is untouched.

        A default derived from other fields (``active_parameters`` from ``parameters``) is derived again
        from the new fields unless ``changes`` states it.

        >>> from mlsysim_nb import Workloads
        >>> Workloads.GPT2_XL.variant(parameters=3_000_000_000).active_parameters
        <Quantity(3000000000, 'count')>
        """
        fields = self.given_fields()
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self) if f.init})
        if unknown:
            msg = f"Workload has no field {', '.join(map(repr, unknown))}; its fields are {', '.join(fields)}"
            raise TypeError(msg)
        return type(self)(**(fields | changes))

    @property
    def reference_style(self) -> bool:
        """True when no architecture field is given: the layer is Korthikanti's, as the reference counts it."""
        return all(getattr(self, k) == v for k, v in _defaults().items())

    def architecture(self, *, reference: bool = False) -> Architecture:
        """The layer table's view of this model (:class:`mlsysim_nb.layers.Architecture`).

        ``reference=True`` counts the layer as the reference implementation does, with multi-head attention
        (``kv_heads`` then counts for the KV cache and tensor parallelism only); give
        ``reference=workload.reference_style`` to keep the reference's figures for its own workloads.

        >>> from mlsysim_nb import Workloads
        >>> Workloads.GPT2_XL.architecture().f  # a 4h MLP, GPT-style
        6400
        >>> Workloads.LLAMA3_8B.architecture().kv, Workloads.LLAMA3_8B.architecture(reference=True).kv
        (8, 32)
        """
        attention = not self.pattern or any(layer.mixer == "attention" for layer in self.pattern)
        for name in ("hidden_dim", "heads") if attention else ("hidden_dim",):  # heads only where a layer attends
            if getattr(self, name) is None:
                raise FieldError("Workload", name, "is needed for the layer's architecture; give it")
        found = self._architectures.get(reference)
        if found is None:
            found = self._architectures[reference] = self._build_architecture(reference=reference)
        return found

    def _build_architecture(self, *, reference: bool) -> Architecture:
        shared = {f.name: getattr(self, f.name) for f in dataclasses.fields(Architecture)}
        # the layer table counts no experts as 0 of them, each token using 1 (the workload: None, not stated)
        shared |= {"experts": self.experts or 0, "experts_per_token": self.experts_per_token or 1}
        if reference:
            shared["kv_heads"] = None
        return Architecture(**shared)

    @classmethod
    def from_hf_config(cls, config: Any, *, name: str | None = None, source: str = "") -> Workload:
        """A workload from a Hugging Face ``config.json`` (a path) or the dict ``config.to_dict()`` gives.

        Reads the causal language models of the GPT-2, Llama, Mistral, Qwen2 and Mixtral families and refuses
        any other family or model class (``architectures``), or an option that changes what the layers keep or
        hold, by its config.json key. ``parameters`` is then the exact count and ``active_parameters`` what one
        token uses; see :mod:`mlsysim_nb.records.hf_config` for the rules a file and its values follow.
        """
        from mlsysim_nb.records.hf_config import read_hf_config, translated

        bounds = {k: int(d.high) for k, d in knobs(cls).items() if d.kind == "count" and d.high is not None}
        fields = read_hf_config(config, bounds=bounds, name=name, source=source)
        with translated(fields["model_type"]):
            return cls(**fields)

    def shown_fields(self) -> list[tuple[str, Any]]:
        """The fields a table or repr shows: the shape, then each architecture field that is not the default."""
        shown = [(k, getattr(self, k)) for k in SHAPE_FIELDS]
        shown += [(k, _shown(k, getattr(self, k))) for k, v in _defaults().items() if getattr(self, k) != v]
        if self.active_parameters != self.parameters:
            shown.append(("active_parameters", int(self.active_parameters.magnitude)))
        if self.sliding_window is not None:
            shown.append(("sliding_window", self.sliding_window))
        return shown

    def _markdown_rows(self) -> tuple[list[str], list[list[str]]]:
        rows = [["name", self.name], ["parameters", f"{self.parameters.magnitude:,.0f}"]]
        rows += [[k, str(v)] for k, v in self.shown_fields()]
        return ["field", "value"], rows

    def _repr_html_(self) -> str:
        from mlsysim_nb.render.html import workload_html

        return workload_html(self)

    def __repr__(self) -> str:
        count = self.parameters.to("count").magnitude
        shown = [(k, v) for k, v in self.shown_fields() if v is not None]
        shape = ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in shown)
        return f"Workload({self.name!r}, parameters={count:.4g}" + (f", {shape})" if shape else ")")


#: The fields checked with the fields they depend on (the experts' with ``experts``; ``active_parameters`` against
#: ``parameters``, after the layout), not alone by their knobs.
_COUPLED = frozenset({"experts_per_token", "shared_experts", "active_parameters"})


@functools.cache
def _defaults() -> dict[str, Any]:
    """Each architecture field's default: a workload that states none of them is a GPT-style layer."""
    found = {f.name: f.default for f in dataclasses.fields(Workload)}
    return {name: found[name] for name in ARCHITECTURE_FIELDS}


#: The ``active_parameters`` a workload derived, by id, so that one passed back (by ``dataclasses.replace``)
#: is known as derived and derived again from the new ``parameters``
_DERIVED: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()


def _shown(name: str, value: Any) -> Any:
    """A field as a table shows it: the pattern as runs of layers (``3 × latent_attention (dense MLP), ...``)."""
    if name == "mixer_shapes":
        return ", ".join(f"{symbol}={size}" for symbol, size in value)
    if name != "pattern":
        return value
    runs: list[list[Any]] = []
    for layer in value:
        if runs and runs[-1][0] == layer:
            runs[-1][1] += 1
        else:
            runs.append([layer, 1])

    def one(layer: Layer) -> str:
        window = f" (window {layer.window:,})" if layer.window is not None else ""
        mlp = " (dense MLP)" if layer.dense else ("" if layer.mlp else " (no MLP)")
        return ("MLP only" if not layer.has_mixer else layer.mixer) + window + mlp

    return ", ".join(f"{count} × {one(layer)}" if count > 1 else one(layer) for layer, count in runs)


def _is_scalar(value: Any) -> bool:
    """Whether ``value`` (or a quantity's magnitude) is one value, not a list, tuple or array."""
    if value is None or type(value) in (int, float, str, bool):
        return True
    magnitude = getattr(value, "magnitude", value)
    if isinstance(magnitude, (list, tuple, set, frozenset, dict, range)):
        return False
    try:
        return bool(np.ndim(magnitude) == 0)
    except (ValueError, TypeError):  # a ragged sequence NumPy cannot shape
        return False


_ = ureg  # the registry is imported so Q_ quantities share it


def check_workload(owner: str, value: Any) -> Workload:
    """``value`` if it is a :class:`Workload`, else a :class:`FieldError` naming ``owner.workload``."""
    if not isinstance(value, Workload):
        raise FieldError(owner, "workload", f"must be a Workload, got {type(value).__name__}")
    return value


def workload_rows(workload: Workload) -> list[tuple[str, str, str]]:
    """The workload's numbers as (name, meaning, value) rows of a derivation's inputs table."""
    from mlsysim_nb.render.numbers import format_magnitude

    rows = [("workload", "model", workload.name)]
    rows.append(("workload.parameters", "model parameters", format_magnitude("", workload.parameters.magnitude)))
    for attr, value in workload.shown_fields():
        if value is not None:
            rows.append((f"workload.{attr}", label_and_help(Workload, attr)[0], str(value)))
    return rows
