"""Measure a Mamba-2 decoder layer of transformers (Bamba's) and attribute every saved byte to the layer table.

``measure_hf_mamba_layer(dtype="float32")`` builds ``BambaDecoderLayer`` with its Mamba-2 mixer from a small random
configuration on the CPU, runs it forward under saved-tensor hooks and sets each saved storage against the row of
the ``"transformers"`` accounting it belongs to. Without mamba_ssm's kernels (never on the CPU) the mixer runs
transformers' PyTorch path, whose chunked scan keeps its intermediates in FP32. A storage's bytes go to the row of
the first view that saved it (a view of a larger storage keeps all of it alive). Nothing is downloaded.
"""

from __future__ import annotations

from typing import Any

from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers import Dims, Layer, layer_rows, lines
from mlsysim_nb.measure.arguments import check_random_state, named_arguments
from mlsysim_nb.measure.hf import DTYPE_BYTES, SIZES, measurement_result, record_saved, small_workload
from mlsysim_nb.measure.hf_results import HFMeasurement
from mlsysim_nb.measure.hf_sites import site
from mlsysim_nb.measure.torch_extra import require_transformers
from mlsysim_nb.model.fields import check_count

__all__ = [
    "MAMBA_SIZES",
    "NEMOTRON_BLOCKS",
    "mamba_site",
    "measure_hf_mamba_layer",
    "measure_hf_nemotron_block",
    "nemotron_site",
]

_OWNER = "measure_hf_mamba_layer"
#: The mixer's sizes measured: heads, head width, state, groups, taps, chunk (Q, N, P, n + 1 and P·N must differ,
#: so that a shape tells the tensors apart).
MAMBA_SIZES = {"heads": 8, "head": 16, "state": 12, "groups": 2, "conv": 4, "chunk": 8}
#: Bamba's names of Llama's second norm and MLP.
_RENAMED = {"pre_ff_layernorm": "post_attention_layernorm", "feed_forward": "mlp"}


def _scan(op: str, slot: str, shape: tuple[int, ...], dims: Dims) -> str | None:
    """The row of a tensor the chunked scan saved (``mamba2_chunk_scan``), by its op, slot and shape."""
    q, n, p, chunks1 = (dims.size((symbol,)) for symbol in ("Q_ssm", "N_ssm", "P_ssm", "n_chunk1"))
    last = (shape[-2], shape[-1]) if len(shape) > 1 else (0, shape[-1])
    if op == "MaskedFillBackward0":
        return "ssm_masks" if shape == (q, q) else "ssm_chunk_masks"
    if op == "ExpBackward0":
        by_rank = {1: "ssm_A", 5: "ssm_decay"}
        return by_rank.get(len(shape), "ssm_chunk_decay" if last == (chunks1, chunks1) else "ssm_decay_states")
    if op == "BmmBackward0":
        by_last = {(q, q): "ssm_scores", (chunks1, chunks1): "ssm_chunk_decay", (n, p): "ssm_states_copy"}
        if shape[-1] == p * n:
            return "ssm_states"
        return by_last.get(last, "ssm_BC" if n in last else "ssm_xdt")
    if op == "MulBackward0" and len(shape) == 5:
        by_width = {n: "ssm_BC", p: "ssm_c_states", 1: "ssm_decay_states"}
        return by_width.get(shape[-1], "ssm_decay" if slot == "_saved_other" else "ssm_scores")
    return None


def mamba_site(module: str, op: str, slot: str, shape: tuple[int, ...], *, dims: Dims, wide: bool) -> str | None:
    """The row key of a tensor a Bamba Mamba-2 decoder layer saved while ``module`` ran; ``None``: no row.

    ``wide``: the run is in FP32 (a cast to FP32 is then a view, and a storage keeps its first view's row).
    """
    path = module
    for old, new in _RENAMED.items():
        path = path.replace(old, new)
    if not path.startswith("mamba"):
        return site(path, op, slot, shape, dims=dims, keys=frozenset())
    if path == "mamba.in_proj":
        return "ssm_input"
    if path == "mamba.out_proj":
        return "ssm_out_input"
    if path == "mamba.norm":
        if op == "SiluBackward0":
            return "ssm_gate_fp32"  # in FP32 a view of the projection's output, whose row it keeps
        if op == "MulBackward0" and slot == "_saved_self" and len(shape) == 3:
            return "ssm_scan_output"
        return "ssm_norm_rstd" if shape[-1] == 1 else "ssm_norm"
    found = _scan(op, slot, shape, dims)
    if found is not None:
        return found
    h = dims.size(("H_ssm",))
    return {
        ("ConvolutionBackward0", "_saved_input"): "ssm_zxbcdt",
        ("SiluBackward0", "_saved_self"): "ssm_conv_output",
        ("SoftplusBackward0", "_saved_self"): "ssm_dt",
        ("ClampBackward1", "_saved_self"): "ssm_dt",
    }.get((op, slot)) or _elementwise(slot, shape, dims, h, wide=wide)


def _elementwise(slot: str, shape: tuple[int, ...], dims: Dims, heads: int, *, wide: bool) -> str | None:
    """The scan's first products: D's padded x, dt in FP32 (one or two copies), x in FP32 (the SiLU output's view)."""
    if shape == (heads,):
        return "ssm_A"
    if slot == "_saved_other" and len(shape) == 4 and shape[-1] == dims.size(("P_ssm",)):
        return "ssm_x_padded"
    if slot == "_saved_other":
        return "ssm_dt_fp32" if len(shape) == 4 else "ssm_dt_fp32_copy"
    return "ssm_silu_output" if wide else "ssm_x_fp32"


#: Nemotron-H's three blocks, by the name this lab gives them: transformers' layer type and the table's layer.
NEMOTRON_BLOCKS = {
    "mamba": ("linear_attention", Layer("mamba2", mlp=False)),
    "attention": ("full_attention", Layer("attention", mlp=False)),
    "mlp": ("mlp", Layer("none")),
}
_NEMOTRON_MLP = {"mixer.up_proj": "mlp_input", "mixer.act_fn": "relu2_output", "mixer.down_proj": "relu2_squared"}


def nemotron_site(module: str, op: str, slot: str, shape: tuple[int, ...], *, dims: Dims, wide: bool,
                  block: str, keys: frozenset[str]) -> str | None:  # fmt: skip
    """The row key of a tensor a ``NemotronHBlock`` of ``block`` (:data:`NEMOTRON_BLOCKS`) saved in ``module``."""
    if module == "norm":
        which = "2" if block == "mlp" else "1"
        if shape == (dims.h,):
            return f"ln{which}_scale"
        return site("input_layernorm" if which == "1" else "post_attention_layernorm", op, slot, shape, dims=dims,
                    keys=keys)  # fmt: skip
    if block == "mlp":
        return _NEMOTRON_MLP.get(module)
    if block == "mamba":
        return mamba_site(module.replace("mixer", "mamba", 1), op, slot, shape, dims=dims, wide=wide)
    return site(module.replace("mixer", "self_attn", 1), op, slot, shape, dims=dims, keys=keys)


def _attribute(saved: list[Any], constants: set[int], dims: Dims, keys: frozenset[str], *, wide: bool,
               where: Any = None) -> tuple[dict[str, int], int]:  # fmt: skip
    """Bytes per row key: each storage's bytes to the row of its first saved view (``where``: the site function)."""
    from mlsysim_nb.measure._saved import storage_bytes

    measured = dict.fromkeys(keys, 0) | {"(unattributed)": 0}
    seen: set[int] = set()
    for s in saved:
        if s.storage in constants or s.storage in seen:
            continue
        seen.add(s.storage)
        shape = tuple(s.tensor.shape)
        key = (where or mamba_site)(s.step, s.op, s.slot, shape, dims=dims, wide=wide)
        measured[key if key in keys else "(unattributed)"] += storage_bytes(s.tensor)
    return measured, sum(measured.values())


@named_arguments(0)
def measure_hf_mamba_layer(
    *, dtype: str = "bfloat16", seq_len: int = 20, micro_batch: int = 3, random_state: int = 0
) -> HFMeasurement:
    """Measure Bamba's Mamba-2 decoder layer (``BambaDecoderLayer``) on the CPU, against the table's prediction.

    ``dtype``: ``"bfloat16"`` or ``"float32"``; ``seq_len`` need not be a whole number of chunks (the scan pads it).
    """
    if not isinstance(dtype, str) or dtype not in DTYPE_BYTES:
        raise FieldError(_OWNER, "dtype", f"must be one of {', '.join(map(repr, DTYPE_BYTES))}, got {dtype!r}")
    seq_len = check_count(_OWNER, "seq_len", seq_len, minimum=2, maximum=512)
    micro_batch = check_count(_OWNER, "micro_batch", micro_batch, maximum=16)
    random_state = check_random_state(_OWNER, random_state)
    z, m = SIZES, MAMBA_SIZES
    if -(-seq_len // m["chunk"]) + 1 in (m["chunk"], m["state"], m["head"]):
        raise FieldError(_OWNER, "seq_len", "must not make the chunks + 1 equal the chunk, state or head size")
    require_transformers()
    import torch
    import transformers
    from transformers.models.bamba import modeling_bamba

    torch.manual_seed(random_state)
    cfg = transformers.BambaConfig(
        hidden_size=z["hidden"], intermediate_size=z["ffn"], num_attention_heads=z["heads"],
        num_key_value_heads=z["kv_heads"], num_hidden_layers=1, vocab_size=z["vocab"], attn_layer_indices=[],
        mamba_n_heads=m["heads"], mamba_d_head=m["head"], mamba_d_state=m["state"], mamba_n_groups=m["groups"],
        mamba_d_conv=m["conv"], mamba_chunk_size=m["chunk"], mamba_expand=m["heads"] * m["head"] // z["hidden"],
    )  # fmt: skip
    kind = getattr(torch, dtype)
    layer = modeling_bamba.BambaDecoderLayer(cfg, layer_idx=0, layer_type="linear_attention").to(kind).train()
    x = torch.randn(micro_batch, seq_len, cfg.hidden_size, dtype=kind, requires_grad=True)
    saved, constants = record_saved(layer, lambda: layer(x)[0])
    workload, arch = small_workload(cfg)
    dims, width = arch.dims(seq_len, micro_batch), DTYPE_BYTES[dtype]
    rows = layer_rows(arch, "transformers", "fused", "cpu")
    predicted = lines(rows, dims, dtype_bytes=width, device="cpu")
    paper = lines(layer_rows(arch, "megatron", "fused"), dims, dtype_bytes=width)
    keys = frozenset(r.key for r in rows)
    measured, total = _attribute(saved, constants, dims, keys, wide=width == 4)
    info = {"dtype": dtype, "attention": "sdpa", "dropout": False, "seq_len": seq_len, "micro_batch": micro_batch,
            "layers": 1}  # fmt: skip
    return measurement_result("BambaDecoderLayer (Mamba-2)", workload, info, predicted=predicted, paper=paper,
                              measured=measured, total=total)  # fmt: skip


@named_arguments(1)
def measure_hf_nemotron_block(
    block: str, *, dtype: str = "bfloat16", attention: str = "sdpa", seq_len: int = 20, micro_batch: int = 3,
    random_state: int = 0,
) -> HFMeasurement:  # fmt: skip
    """Measure one ``NemotronHBlock`` (``block``: ``"mamba"``, ``"attention"`` or ``"mlp"``) on the CPU.

    ``attention``: transformers' ``"eager"`` or ``"sdpa"`` (the attention block's only); the sizes are
    :func:`measure_hf_mamba_layer`'s.
    """
    owner = "measure_hf_nemotron_block"
    if not isinstance(block, str) or block not in NEMOTRON_BLOCKS:
        raise FieldError(owner, "block", f"must be one of {', '.join(map(repr, NEMOTRON_BLOCKS))}, got {block!r}")
    if not isinstance(dtype, str) or dtype not in DTYPE_BYTES:
        raise FieldError(owner, "dtype", f"must be one of {', '.join(map(repr, DTYPE_BYTES))}, got {dtype!r}")
    if not isinstance(attention, str) or attention not in ("eager", "sdpa"):
        raise FieldError(owner, "attention", f"must be 'eager' or 'sdpa', got {attention!r}")
    seq_len = check_count(owner, "seq_len", seq_len, minimum=2, maximum=512)
    micro_batch = check_count(owner, "micro_batch", micro_batch, maximum=16)
    random_state = check_random_state(owner, random_state)
    z, m = SIZES, MAMBA_SIZES
    require_transformers()
    import torch
    import transformers
    from transformers.models.nemotron_h import modeling_nemotron_h

    torch.manual_seed(random_state)
    types = [kind for kind, _ in NEMOTRON_BLOCKS.values()]
    cfg = transformers.NemotronHConfig(
        hidden_size=z["hidden"], intermediate_size=z["ffn"], num_attention_heads=z["heads"],
        num_key_value_heads=z["kv_heads"], head_dim=z["hidden"] // z["heads"], vocab_size=z["vocab"],
        mamba_num_heads=m["heads"], mamba_head_dim=m["head"], ssm_state_size=m["state"], n_groups=m["groups"],
        conv_kernel=m["conv"], chunk_size=m["chunk"], layers_block_type=types,
    )  # fmt: skip
    cfg._attn_implementation = attention  # noqa: SLF001 - transformers' documented switch
    kind = getattr(torch, dtype)
    index = types.index(NEMOTRON_BLOCKS[block][0])
    module = modeling_nemotron_h.NemotronHBlock(cfg, layer_idx=index).to(kind).train()  # type: ignore[no-untyped-call]
    x = torch.randn(micro_batch, seq_len, cfg.hidden_size, dtype=kind, requires_grad=True)
    mask = None
    if block == "attention" and attention == "eager":  # an additive causal mask, as the model builds it
        mask = torch.full((seq_len, seq_len), torch.finfo(kind).min, dtype=kind).triu(1)
        mask = mask[None, None].expand(micro_batch, 1, seq_len, seq_len)
    saved, constants = record_saved(module, lambda: module(x, attention_mask=mask))
    workload, arch = small_workload(cfg)
    dims, width = arch.dims(seq_len, micro_batch), DTYPE_BYTES[dtype]
    layer, table_attention = NEMOTRON_BLOCKS[block][1], "fused" if attention == "sdpa" else "eager"
    from mlsysim_nb.layers.megatron import megatron_layer
    from mlsysim_nb.layers.transformers import transformers_layer

    rows = transformers_layer(arch, table_attention, "cpu", layer)
    predicted = lines(rows, dims, dtype_bytes=width, device="cpu")
    paper = lines(megatron_layer(arch, table_attention, layer), dims, dtype_bytes=width)
    keys = frozenset(r.key for r in rows)

    def where(step: str, op: str, slot: str, shape: tuple[int, ...], *, dims: Dims, wide: bool) -> str | None:
        return nemotron_site(step, op, slot, shape, dims=dims, wide=wide, block=block, keys=keys)

    measured, total = _attribute(saved, constants, dims, keys, wide=width == 4, where=where)
    info = {"dtype": dtype, "attention": attention, "dropout": False, "seq_len": seq_len, "micro_batch": micro_batch,
            "layers": 1}  # fmt: skip
    return measurement_result(f"NemotronHBlock ({block})", workload, info, predicted=predicted, paper=paper,
                              measured=measured, total=total)  # fmt: skip
