"""Measure Hugging Face transformers' own decoder layers and attribute every saved byte to the layer table.

``measure_hf_layer("llama", dtype="bfloat16", attention="sdpa")`` builds ``LlamaDecoderLayer`` (or
``GPT2Block``, ``MistralDecoderLayer``, ``Qwen2DecoderLayer``, ``MixtralDecoderLayer``) from a small random
configuration on the CPU, runs it forward under saved-tensor hooks (distinct storages, parameters excluded,
each module marking the step it runs) and sets each saved byte against the row of the layer table's
``"transformers"`` accounting it belongs to (:mod:`mlsysim_nb.measure.hf_sites`).
``measure_hf_causal_lm()`` does the same for a two-layer ``LlamaForCausalLM`` with its loss. Nothing is
downloaded: configurations are built in code and weights are random.
"""

from __future__ import annotations

from typing import Any

from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers import Architecture, Dims, Line, layer_rows, lines, output_rows
from mlsysim_nb.measure.arguments import check_random_state, named_arguments
from mlsysim_nb.measure.hf_results import HFMeasurement, RowMeasurement
from mlsysim_nb.measure.hf_sites import site
from mlsysim_nb.measure.torch_extra import require_transformers
from mlsysim_nb.model.fields import check_count
from mlsysim_nb.records.workloads import Workload

__all__ = ["CLASSES", "SIZES", "measure_hf_causal_lm", "measure_hf_layer"]

#: The decoder layer class of each model type, in ``transformers.models.<type>.modeling_<type>``.
CLASSES = {
    "gpt2": "GPT2Block",
    "llama": "LlamaDecoderLayer",
    "mistral": "MistralDecoderLayer",
    "qwen2": "Qwen2DecoderLayer",
    "mixtral": "MixtralDecoderLayer",
    "qwen3": "Qwen3DecoderLayer",
    "qwen3_moe": "Qwen3MoeDecoderLayer",
    "gemma3_text": "Gemma3DecoderLayer",
    "gpt_oss": "GptOssDecoderLayer",
    "deepseek_v3": "DeepseekV3DecoderLayer",
}
#: The module of transformers that defines a model type's classes, where it is not named after the type.
_MODULES = {"gemma3_text": "gemma3"}
#: The small configuration measured: h, a, kv heads, MLP width, vocabulary, experts (s and d = h/a must differ);
#: the 2025 families' head dimension (not h/a), one expert's width, the window of a sliding layer (below s) and
#: latent attention's sizes (r_q, r_kv, d_rope, d_nope, d_v). Every size differs from s and from every other
#: size a saved tensor ends in, so that shapes tell tensors apart.
SIZES = {"hidden": 64, "heads": 4, "kv_heads": 2, "ffn": 96, "vocab": 100, "experts": 4, "experts_per_token": 2,
         "head_dim": 20, "expert_ffn": 40, "window": 6, "q_rank": 22, "kv_rank": 28, "rope": 8, "nope": 10,
         "v_head": 14}  # fmt: skip
#: The model types whose small configuration has attention over a window of ``SIZES["window"]`` tokens.
SLIDING = ("mistral", "qwen2", "gemma3_text", "gpt_oss")
#: Bytes per element of each measured dtype.
DTYPE_BYTES = {"bfloat16": 2, "float32": 4}
#: The layer table's attention kind for each of transformers' attention implementations.
ATTENTION_KINDS = {"eager": "eager", "sdpa": "fused"}
_DROPOUT = 0.1
#: Sizes that are counts of things, never a tensor's last axis.
_COUNTS = ("heads", "kv_heads", "experts", "experts_per_token", "window")
_MODELS = {"llama": "LlamaForCausalLM", "gpt2": "GPT2LMHeadModel"}


def small_config(model_type: str, *, dropout: bool, layers: int, seq_len: int) -> Any:
    """The small random configuration of ``model_type`` that the lab measures (and the recording stores)."""
    import transformers

    p = _DROPOUT if dropout else 0.0
    z = SIZES
    if model_type == "gpt2":
        return transformers.GPT2Config(n_embd=z["hidden"], n_head=z["heads"], n_layer=layers, n_positions=seq_len,
                                       vocab_size=z["vocab"], resid_pdrop=p, attn_pdrop=p, embd_pdrop=p,
                                       bos_token_id=0, eos_token_id=0)  # fmt: skip
    kw: dict[str, Any] = {"hidden_size": z["hidden"], "intermediate_size": z["ffn"], "num_attention_heads": z["heads"],
          "num_key_value_heads": z["kv_heads"], "num_hidden_layers": layers, "vocab_size": z["vocab"],
          "attention_dropout": p, "max_position_embeddings": max(seq_len, 64)}  # fmt: skip
    if model_type == "mixtral":
        kw |= {"num_local_experts": z["experts"], "num_experts_per_tok": z["experts_per_token"]}
    if model_type in ("qwen3", "qwen3_moe", "gemma3_text", "gpt_oss"):
        kw["head_dim"] = z["head_dim"]
    if model_type in SLIDING:
        kw["sliding_window"] = z["window"]
    if model_type == "qwen2":  # Qwen2 slides from layer max_window_layers on
        kw |= {"use_sliding_window": True, "max_window_layers": 0}
    if model_type in ("gemma3_text", "gpt_oss"):
        kw["layer_types"] = ["sliding_attention"] * layers
    if model_type == "qwen3_moe":  # norm_topk_prob as every published Qwen3 MoE model sets it
        kw |= {"num_experts": z["experts"], "num_experts_per_tok": z["experts_per_token"], "norm_topk_prob": True,
               "moe_intermediate_size": z["expert_ffn"], "decoder_sparse_step": 1, "mlp_only_layers": []}  # fmt: skip
    if model_type == "gpt_oss":
        kw |= {"num_local_experts": z["experts"], "num_experts_per_tok": z["experts_per_token"],
               "intermediate_size": z["expert_ffn"]}  # fmt: skip
    if model_type == "deepseek_v3":
        kw |= {"num_key_value_heads": z["heads"], "q_lora_rank": z["q_rank"], "kv_lora_rank": z["kv_rank"],
               "qk_rope_head_dim": z["rope"], "qk_nope_head_dim": z["nope"], "v_head_dim": z["v_head"],
               "n_routed_experts": z["experts"], "num_experts_per_tok": z["experts_per_token"], "n_shared_experts": 1,
               "moe_intermediate_size": z["expert_ffn"], "first_k_dense_replace": 0, "n_group": 1,
               "topk_group": 1}  # fmt: skip
    name = {"llama": "LlamaConfig", "mistral": "MistralConfig", "qwen2": "Qwen2Config", "mixtral": "MixtralConfig",
            "qwen3": "Qwen3Config", "qwen3_moe": "Qwen3MoeConfig", "gemma3_text": "Gemma3TextConfig",
            "gpt_oss": "GptOssConfig", "deepseek_v3": "DeepseekV3Config"}  # fmt: skip
    return getattr(transformers, name[model_type])(**kw)


def _check(owner: str, model_type: str, dtype: str, attention: str, *, dropout: bool, seq_len: int,
           micro_batch: int, random_state: Any) -> int:  # fmt: skip
    """Refuse a bad argument, naming ``owner`` (the function called) and the field; gives the random state."""
    for field, value, valid in (("model_type", model_type, tuple(CLASSES)), ("dtype", dtype, tuple(DTYPE_BYTES)),
                                ("attention", attention, tuple(ATTENTION_KINDS))):  # fmt: skip
        if not isinstance(value, str) or value not in valid:
            raise FieldError(owner, field, f"must be one of {', '.join(map(repr, valid))}, got {value!r}")
    if not isinstance(dropout, bool):
        raise FieldError(owner, "dropout", f"must be True or False, got {dropout!r}")
    check_count(owner, "seq_len", seq_len, minimum=2, maximum=512)
    check_count(owner, "micro_batch", micro_batch, maximum=16)
    taken = sorted({SIZES["hidden"] // SIZES["heads"], *(v for k, v in SIZES.items() if k not in _COUNTS),
                    SIZES["head_dim"] // 2, SIZES["rope"] // 2, SIZES["nope"] + SIZES["rope"]})  # fmt: skip
    if seq_len in taken:
        msg = f"must differ from the layer's sizes ({', '.join(map(str, taken))}), so that shapes tell tensors apart"
        raise FieldError(owner, "seq_len", msg)
    if model_type == "gpt_oss" and attention != "eager":
        msg = "must be 'eager' for gpt-oss: transformers runs its sinks eagerly, never with SDPA (_supports_sdpa)"
        raise FieldError(owner, "attention", msg)
    return check_random_state(owner, random_state)


def _mask(model_type: str, attention: str, seq_len: int, micro_batch: int, kind: Any) -> Any:
    """The mask the model builds for its layers: causal, over the last ``SIZES["window"]`` tokens in a sliding layer.

    Eager attention adds it (an additive mask; adding it saves nothing); SDPA takes ``None`` for a causal mask and
    a boolean one (True: attend) for a window, as transformers' ``sdpa_mask`` gives it.
    """
    import torch

    window = SIZES["window"] if model_type in SLIDING else seq_len
    i = torch.arange(seq_len)
    allowed = (i[:, None] >= i[None]) & (i[:, None] - i[None] < window)
    if attention == "sdpa":
        return None if window >= seq_len else allowed[None, None].expand(micro_batch, 1, seq_len, seq_len)
    mask = torch.zeros(seq_len, seq_len, dtype=kind).masked_fill(~allowed, torch.finfo(kind).min)
    return mask[None, None].expand(micro_batch, 1, seq_len, seq_len)


def record_saved(module: Any, run: Any) -> tuple[list[Any], set[int]]:
    """Saved tensors of ``run()`` under hooks, each marked with the module that was running."""
    from mlsysim_nb.measure._saved import record

    stack: list[str] = []
    current: dict[str, Any] = {}
    handles = []
    for name, sub in module.named_modules():

        def pre(_m: Any, _a: Any, name: str = name) -> None:
            stack.append(name)
            current["mark"](name)

        def post(_m: Any, _a: Any, _o: Any) -> None:
            stack.pop()
            current["mark"](stack[-1] if stack else "")

        handles += [sub.register_forward_pre_hook(pre), sub.register_forward_hook(post)]

    def go(mark: Any) -> Any:
        current["mark"] = mark
        return run()

    try:
        _, saved = record(go)
    finally:
        for handle in handles:
            handle.remove()
    constants = {int(p.untyped_storage().data_ptr()) for p in (*module.parameters(), *module.buffers())}
    return saved, constants


def _attribute(saved: list[Any], constants: set[int], dims: Dims, keys: frozenset[str]) -> tuple[dict[str, int], int]:
    """Bytes per row key (first claim of each byte wins), and all bytes of the distinct storages."""
    from mlsysim_nb.measure._saved import first_claims, storage_bytes

    saved = [s for s in saved if s.storage not in constants]
    claimed = first_claims(saved, lambda _: True)
    storages, measured = {}, dict.fromkeys(keys, 0)
    measured["(unattributed)"] = 0
    owner: dict[int, str] = {}  # the row of each storage's first saved view
    covered: dict[int, int] = {}
    for s, got in zip(saved, claimed, strict=True):
        storages[s.storage] = storage_bytes(s.tensor)
        shape = tuple(s.tensor.shape)
        key = site(s.step, s.op, s.slot, shape, dims=dims, keys=keys)
        key = key if key in keys else "(unattributed)"
        owner.setdefault(s.storage, key)
        covered[s.storage] = covered.get(s.storage, 0) + got
        column = got // (dims.s + 1) if key == "softmax_output" and shape[-1] == dims.s + 1 else 0
        if column and "sink_probs" in keys:  # the softmax's last column is the sink's
            measured["sink_probs"] += column
        measured[key] += got - (column if "sink_probs" in keys else 0)
    # Bytes of a storage no saved view covers are kept alive by its views all the same (half of a rotary table
    # read by halves; the rotary key beside DeepSeek's latent in one FP32 output): the row of its first view's
    # "_rest" companion takes them where the table has one, that row itself otherwise.
    for storage, nbytes in storages.items():
        rest = nbytes - covered[storage]
        if rest:
            key = owner[storage]
            measured[f"{key}_rest" if f"{key}_rest" in keys else key] += rest
    return measured, sum(storages.values())


def measurement_result(label: str, workload: Workload, run_info: dict[str, Any], *, predicted: tuple[Line, ...],
            paper: tuple[Line, ...], measured: dict[str, int], total: int) -> HFMeasurement:  # fmt: skip
    """Measured bytes set against the table's predicted rows and the paper's, as one measurement."""
    by_key: dict[str, tuple[Any, float]] = {}
    for line in predicted:
        row, bytes_ = by_key.get(line.row.key, (line.row, 0.0))
        by_key[line.row.key] = (row, bytes_ + line.bytes)
    rows = tuple(RowMeasurement(row, b, measured.get(k, 0)) for k, (row, b) in by_key.items())
    return HFMeasurement(
        module=label, workload=workload, rows=rows, measured=total, predicted=sum(r.predicted for r in rows),
        unattributed=measured["(unattributed)"], paper=sum(line.bytes for line in paper), paper_rows=paper,
        **run_info,
    )  # fmt: skip


def small_workload(cfg: Any) -> tuple[Workload, Architecture]:
    """The workload ``from_hf_config`` reads from a small configuration object, and its architecture."""
    workload = Workload.from_hf_config(cfg.to_dict(), name=f"small random {cfg.model_type}")
    return workload, workload.architecture()


@named_arguments(1)
def measure_hf_layer(
    model_type: str,
    *,
    dtype: str = "bfloat16",
    attention: str = "sdpa",
    dropout: bool = False,
    seq_len: int = 12,
    micro_batch: int = 3,
    random_state: int = 0,
) -> HFMeasurement:
    """Measure one Hugging Face decoder layer's saved bytes on the CPU, against the table's prediction.

    ``model_type``: ``"gpt2"``, ``"llama"``, ``"mistral"``, ``"qwen2"``, ``"mixtral"``, ``"qwen3"``, ``"qwen3_moe"``,
    ``"gemma3_text"``, ``"gpt_oss"`` (eager only) or ``"deepseek_v3"`` (its mixture-of-experts layer); ``dtype``:
    ``"bfloat16"`` or ``"float32"``; ``attention``: transformers' ``"eager"`` or ``"sdpa"``; ``dropout``:
    dropout probabilities 0.1 (the attention's, and GPT-2's residual ones) instead of 0.
    """
    random_state = _check("measure_hf_layer", model_type, dtype, attention, dropout=dropout, seq_len=seq_len,
                          micro_batch=micro_batch, random_state=random_state)  # fmt: skip
    require_transformers()
    import importlib
    import inspect

    import torch

    torch.manual_seed(random_state)
    cfg = small_config(model_type, dropout=dropout, layers=1, seq_len=seq_len)
    cfg._attn_implementation = attention  # noqa: SLF001 - transformers' documented switch
    module = _MODULES.get(model_type, model_type)
    modeling = importlib.import_module(f"transformers.models.{module}.modeling_{module}")
    kind = getattr(torch, dtype)
    layer = getattr(modeling, CLASSES[model_type])(cfg, layer_idx=0).to(kind).train()
    x = torch.randn(micro_batch, seq_len, cfg.hidden_size, dtype=kind, requires_grad=True)
    kwargs: dict[str, Any] = {"attention_mask": _mask(model_type, attention, seq_len, micro_batch, kind)}
    if model_type != "gpt2":
        positions = torch.arange(seq_len)[None]  # one row, broadcast over the batch, as the model builds it
        rotary = getattr(modeling, CLASSES[model_type].replace("DecoderLayer", "RotaryEmbedding"))(cfg)
        by_type = "layer_type" in inspect.signature(rotary.forward).parameters  # Gemma 3: local and global tables
        tables = rotary(x, positions, cfg.layer_types[0]) if by_type else rotary(x, positions)
        kwargs |= {"position_embeddings": tables, "position_ids": positions}

    def run() -> Any:
        out = layer(x, **kwargs)
        return out[0] if isinstance(out, tuple) else out

    saved, constants = record_saved(layer, run)
    workload, arch = small_workload(cfg)
    dims, width = arch.dims(seq_len, micro_batch), DTYPE_BYTES[dtype]
    rows = layer_rows(arch, "transformers", ATTENTION_KINDS[attention], "cpu")
    predicted = lines(rows, dims, dtype_bytes=width, device="cpu")
    paper = lines(layer_rows(arch, "megatron", ATTENTION_KINDS[attention]), dims, dtype_bytes=width)
    measured, total = _attribute(saved, constants, dims, frozenset(r.key for r in rows))
    info = {"dtype": dtype, "attention": attention, "dropout": dropout, "seq_len": seq_len,
            "micro_batch": micro_batch, "layers": 1}  # fmt: skip
    return measurement_result(CLASSES[model_type], workload, info, predicted=predicted, paper=paper, measured=measured,
                   total=total)  # fmt: skip


@named_arguments(1)
def measure_hf_causal_lm(
    model_type: str = "llama", *, dtype: str = "bfloat16", attention: str = "sdpa", dropout: bool = False,
    seq_len: int = 12, micro_batch: int = 3, layers: int = 2, random_state: int = 0,
) -> HFMeasurement:  # fmt: skip
    """Measure a small ``LlamaForCausalLM`` (or ``GPT2LMHeadModel``) of ``layers`` layers with its loss.

    ``model_type``: ``"llama"`` or ``"gpt2"``; the other arguments as for :func:`measure_hf_layer`. The model
    runs with ``use_cache=False``, as a training loop should.
    """
    owner = "measure_hf_causal_lm"
    if not isinstance(model_type, str) or model_type not in _MODELS:
        raise FieldError(owner, "model_type", f"must be 'llama' or 'gpt2', got {model_type!r}")
    random_state = _check(owner, model_type, dtype, attention, dropout=dropout, seq_len=seq_len,
                          micro_batch=micro_batch, random_state=random_state)  # fmt: skip
    layers = check_count(owner, "layers", layers, maximum=8)
    require_transformers()
    import torch
    import transformers

    torch.manual_seed(random_state)
    cfg = small_config(model_type, dropout=dropout, layers=layers, seq_len=seq_len)
    cfg._attn_implementation = attention  # noqa: SLF001 - transformers' documented switch
    model = getattr(transformers, _MODELS[model_type])(cfg).to(getattr(torch, dtype)).train()
    ids = torch.randint(0, cfg.vocab_size, (micro_batch, seq_len))
    # use_cache=False, as training does: a cache would copy K and V (see the transformers accounting's docstring)
    saved, constants = record_saved(model, lambda: model(input_ids=ids, labels=ids, use_cache=False).loss)
    workload, arch = small_workload(cfg)
    dims, width = arch.dims(seq_len, micro_batch), DTYPE_BYTES[dtype]
    per_layer = layer_rows(arch, "transformers", ATTENTION_KINDS[attention], "cpu")
    rows = tuple(r for r in per_layer if r.per_model) + tuple(r for r in per_layer if not r.per_model) * layers
    rows += output_rows(arch, "transformers")
    predicted = lines(rows, dims, dtype_bytes=width, device="cpu")
    paper_rows = layer_rows(arch, "megatron", ATTENTION_KINDS[attention]) * layers + output_rows(arch, "megatron")
    paper = lines(paper_rows, dims, dtype_bytes=width)
    measured, total = _attribute(saved, constants, dims, frozenset(r.key for r in rows))
    info = {"dtype": dtype, "attention": attention, "dropout": dropout, "seq_len": seq_len,
            "micro_batch": micro_batch, "layers": layers}  # fmt: skip
    return measurement_result(_MODELS[model_type], workload, info, predicted=predicted, paper=paper, measured=measured,
                   total=total)  # fmt: skip
