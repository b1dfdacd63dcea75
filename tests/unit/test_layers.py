"""The layer table: Korthikanti's coefficients are sums over one table of saved tensors, never typed twice."""

from __future__ import annotations

import re

import pytest

import mlsysim_nb.kinds.parallel.model  # noqa: F401 - registers the many-device formulas, so every table is read
from mlsysim_nb import layers
from mlsysim_nb.kinds.parallel.physics import EQUATIONS  # the many-device equations include every other kind's
from mlsysim_nb.layers import GPT_LAYER


def _block(block: str, term: str) -> int:
    return sum(t.coefficient() for t in GPT_LAYER if t.block == block and (t.term == "scores") == (term == "as2b"))


def test_the_paper_sums() -> None:
    """Sec. 4.1: attention 11sbh + 5as²b, MLP 19sbh, layer norms 4sbh: 34 and 5; Sec. 4.2.1: 10 stay whole."""
    assert (_block("attention", "sbh"), _block("attention", "as2b")) == (11, 5)
    assert _block("MLP", "sbh") == 19
    assert _block("layer norms", "sbh") == 4
    assert layers.per_token_bytes() == 34
    assert layers.score_bytes() == 5
    assert layers.replicated_bytes() == 10
    assert layers.per_token_bytes() - layers.replicated_bytes() == 24  # 24/t in Table 2


@pytest.mark.parametrize(("f", "expected"), [(1, 22), (2, 26), (4, 34), (8, 50)])
def test_the_mlp_width_enters_through_its_two_wide_tensors(f: int, expected: int) -> None:
    """18 + 4f: only the GeLU's input and output are f·h wide."""
    assert layers.ffn_free_bytes() == 18
    assert layers.ffn_bytes() == 4
    assert layers.per_token_bytes(f) == expected


def test_projection_tensors_are_q_k_v_and_the_output_projection_input() -> None:
    """The illustrative line item counts four hidden-width tensors (the reference's literal 4)."""
    assert layers.projection_tensors() == 4


def test_keys_are_unique() -> None:
    """Each tensor is named once."""
    keys = [t.key for t in GPT_LAYER]
    assert sorted(keys) == sorted(set(keys))


def test_no_layer_coefficient_is_typed_in_a_formula() -> None:
    """Formulas read the table's sums by name: no 34, 18, 10, 5 or 4 appears as a literal in any equation.

    The literals left are counting, not layer physics: 1, 2 (16 bits, or Adam's two moments), 6 and 8 (6PD and
    8PD FLOPs) and tensor parallelism's four ring all-reduces per layer, each moving 2(t - 1)/t of s·b·h.
    """
    found: dict[str, set[str]] = {}
    for name, formula in EQUATIONS.formulas.items():
        expressions = [case.expression for case in formula.cases] if formula.cases else [formula.expression]
        for expression in expressions:
            for literal in re.findall(r"(?<![\w.])\d+(?:\.\d+)?", expression):
                found.setdefault(literal, set()).add(name)
    assert set(found) <= {"1", "2", "6", "8"}
    assert found.get("8", set()) <= {"checkpointed_training_flops", "tensor_parallel_traffic_per_layer"}


# The general table: hand-worked cases of the paper's accounting and of transformers' (measured once, by hand,
# with saved-tensor hooks over transformers 5.24's LlamaDecoderLayer and GPT2Block; tests/measure re-measures).

_LLAMA_8B = layers.Architecture(
    hidden_dim=4096, heads=32, kv_heads=8, ffn_dim=14336, mlp="gated", activation="silu", norm="rmsnorm",
    attention_dropout=0, hidden_dropout=0, vocab_size=128256, tied_embeddings=False, positions="rotary", bias="none",
    model_type="llama",
)  # fmt: skip
_SMALL_LLAMA = layers.Architecture(
    hidden_dim=64, heads=4, kv_heads=2, ffn_dim=96, mlp="gated", activation="silu", norm="rmsnorm",
    attention_dropout=0, hidden_dropout=0, positions="rotary", bias="none", model_type="llama",
)  # fmt: skip


def _bytes(arch: layers.Architecture, s: int = 1024, b: int = 2, **kw: object) -> float:
    return layers.layer_saved_bytes(arch, seq_len=s, micro_batch=b, dtype_bytes=kw.pop("dtype_bytes", 2), **kw)  # type: ignore[arg-type]


def test_megatron_gpt_layer_is_34_sbh_plus_5_as2b() -> None:
    """GPT-2 XL's shape at 16 bits: sbh(34 + 5as/h), the paper's Sec. 4.1 sum, from the general rows."""
    s, b, h, a = 1024, 2, 1600, 25
    assert _bytes(layers.Architecture(hidden_dim=h, heads=a), s, b) == s * b * h * 34 + 5 * a * s * s * b


def test_megatron_llama_fused_layer_by_hand() -> None:
    """Llama 3.1 8B, fused attention, 16 bits, per token: 139392 bytes.

    2h x 6 (norms, QKV and MLP inputs, Q, projection input), K and V 2 x 2 x 1024, the log-sum-exp 4a,
    three 2f-wide MLP tensors: 53248 + 128 + 86016 = 139392.
    """
    assert _bytes(_LLAMA_8B, 8192, 1, attention="fused") == 8192 * 139_392


def test_no_dropout_drops_the_masks_and_the_dropout_output() -> None:
    """Without dropout a GPT layer keeps 34 - 2 = 32 bytes per sbh (two 1-byte masks) and 5 - 3 = 2 per as²b."""
    s, b, h, a = 256, 2, 512, 8
    arch = layers.Architecture(hidden_dim=h, heads=a, attention_dropout=0, hidden_dropout=0)
    assert _bytes(arch, s, b) == 32 * s * b * h + 2 * a * s * s * b


def test_tensor_and_sequence_parallelism_split_what_the_table_says() -> None:
    """T = 8: sbh(10 + 24/8 + 5as/(8h)) without SP (Table 2), sbh(34 + 5as/h)/8 with it."""
    s, b, h, a, t = 2048, 1, 12288, 96, 8
    gpt3 = layers.Architecture(hidden_dim=h, heads=a)
    assert _bytes(gpt3, s, b, tensor_parallel=t) == s * b * h * (10 + 24 / t) + 5 * a * s * s * b / t
    assert _bytes(gpt3, s, b, tensor_parallel=t, sequence_parallel=True) == (34 * s * b * h + 5 * a * s * s * b) / t


def test_strategies_keep_what_korthikanti_keeps() -> None:
    """Selective drops the 5as²b; full keeps the layer input, 2sbh."""
    s, b, h, a = 2048, 1, 12288, 96
    gpt3 = layers.Architecture(hidden_dim=h, heads=a)
    assert _bytes(gpt3, s, b, strategy="selective") == 34 * s * b * h
    assert _bytes(gpt3, s, b, strategy="full") == 2 * s * b * h


def test_the_output_layer_by_hand() -> None:
    """Llama 3.1 8B at s = 8192: final norm and output-layer inputs 2h each, FP32 logits 4v, per token."""
    out = layers.output_saved_bytes(_LLAMA_8B, seq_len=8192, micro_batch=1, dtype_bytes=2)
    assert out == 8192 * (4 * 4096 + 4 * 128_256)
    assert out > 32 * _bytes(_LLAMA_8B, 8192, 1, attention="fused", strategy="full")  # the logits outweigh the layers


@pytest.mark.parametrize(
    ("attention", "dtype_bytes", "dropout", "measured"),
    [("eager", 2, 0.0, 94_368), ("fused", 2, 0.0, 79_968), ("fused", 4, 0.1, 170_016)],
)
def test_transformers_llama_layer_by_hand(attention: str, dtype_bytes: int, dropout: float, measured: int) -> None:
    """s=12, b=3, h=64, a=4, kv=2, f=96 on the CPU: the bytes transformers' LlamaDecoderLayer was measured to keep."""
    import dataclasses

    arch = dataclasses.replace(_SMALL_LLAMA, attention_dropout=dropout)
    got = _bytes(arch, 12, 3, attention=attention, dtype_bytes=dtype_bytes, implementation="transformers",
                 device="cpu", per_model=True)  # fmt: skip
    assert got == measured


def test_every_transformers_row_that_differs_says_why() -> None:
    """A transformers row the paper does not have, or keeps at another width, carries a note."""
    paper = {r.key: r for r in layers.layer_rows(_LLAMA_8B, "megatron", "eager")}
    for row in layers.layer_rows(_LLAMA_8B, "transformers", "eager"):
        same = row.key in paper and (paper[row.key].width, paper[row.key].shape) == (row.width, row.shape)
        assert same or row.note, row.key


def test_moe_rows_grow_with_experts_per_token() -> None:
    """Mixtral-shaped MLP: the experts' rows hold s·b·k tokens; doubling k doubles them."""
    import dataclasses

    moe = dataclasses.replace(_LLAMA_8B, experts=8, experts_per_token=1)
    one, two = _bytes(moe, 1024, 1, attention="fused"), _bytes(dataclasses.replace(moe, experts_per_token=2), 1024, 1,
                                                                  attention="fused")  # fmt: skip
    per_token_expert = 2 * 4096 + 3 * 2 * 14336 + 2 * 4096 + 4  # dispatched, three wide, output, FP32 weight
    assert two - one == 1024 * per_token_expert


def test_bad_choices_name_the_argument() -> None:
    """A misspelt implementation, attention or strategy is refused by name."""
    from mlsysim_nb.errors import FieldError

    with pytest.raises(FieldError, match="implementation"):
        layers.layer_rows(_LLAMA_8B, "megatronn")
    with pytest.raises(FieldError, match="attention"):
        layers.layer_rows(_LLAMA_8B, attention="flash")
    with pytest.raises(FieldError, match="strategy"):
        _bytes(_LLAMA_8B, strategy="some")


def test_parameter_counts_by_hand() -> None:
    """Llama 3.1 8B's exact count from the weight rows (config.json's shape; meta-device check in tests/measure)."""
    assert layers.parameter_count(_LLAMA_8B, 32) == 8_030_261_248


def test_the_table_reproduces_every_catalog_activation_scenario() -> None:
    """Each named ActivationMemoryScenario's per-layer figure, under every strategy, from the table (to 1e-9).

    The reference counts its own workloads' layers as Korthikanti's (multi-head, even where kv_heads is given)
    and scales the paper's 16-bit bytes to the precision: ``architecture(reference=reference_style)`` and
    ``reference_scaling=True`` say so.
    """
    from mlsysim_nb import Scenarios

    found = 0
    for name in dir(Scenarios):
        s = getattr(Scenarios, name)
        if name.startswith("_") or type(s).__name__ != "ActivationMemoryScenario":
            continue
        w, found = s.workload, found + 1
        arch = w.architecture(reference=w.reference_style)
        for strategy in layers.STRATEGIES:
            table = layers.layer_saved_bytes(arch, seq_len=s.seq_len or w.context_length, micro_batch=s.micro_batch,
                                             dtype_bytes=s.precision_bytes, strategy=strategy,
                                             attention=s.attention, implementation=s.implementation,
                                             reference_scaling=w.reference_style)  # fmt: skip
            assert table == pytest.approx(float(s.activations(strategy).m_as("byte")) / w.layers, rel=1e-9)
    assert found >= 5


def test_a_whole_model_is_its_layers_the_shared_rows_once_and_the_output() -> None:
    """Llama 3.1 8B, s = 8192, full recomputation: 32 x 2sbh, plus (2h + 2h + 4v)s for the output.

    In transformers' accounting the rotary tables (2 x 2sd) come once, not once per layer.
    """
    s, h, v, d = 8192, 4096, 128_256, 128
    run = {"layers": 32, "seq_len": s, "micro_batch": 1, "dtype_bytes": 2, "strategy": "full", "attention": "fused"}
    assert layers.model_saved_bytes(_LLAMA_8B, **run) == 32 * 2 * s * h + (4 * h + 4 * v) * s  # type: ignore[arg-type]
    hf = layers.model_saved_bytes(_LLAMA_8B, **run, implementation="transformers", output=False)  # type: ignore[arg-type]
    assert hf == 32 * 2 * s * h + 2 * 2 * s * d


@pytest.mark.parametrize(
    ("changes", "field"),
    [({"heads": 0}, "heads"), ({"kv_heads": 3}, "kv_heads"), ({"mlp": "swiglu"}, "mlp"), ({"hidden_dim": 30}, "heads"),
     ({"attention_dropout": 1.5}, "attention_dropout"), ({"experts": 2, "experts_per_token": 3}, "experts_per_token"),
     ({"ffn_dim": 2.5}, "ffn_dim")],
)  # fmt: skip
def test_an_architecture_that_cannot_exist_is_refused(changes: dict[str, object], field: str) -> None:
    """Built directly, an Architecture checks itself, naming the field."""
    import dataclasses

    from mlsysim_nb.errors import FieldError

    with pytest.raises(FieldError, match=rf"Architecture\.{field}: "):
        dataclasses.replace(layers.Architecture(hidden_dim=64, heads=8), **changes)  # type: ignore[arg-type]


def test_a_pattern_repeats_over_the_layers() -> None:
    """Five local layers then one global, over 62 layers: indices 5, 11, ..., 59 are global (10), the rest local (52)."""
    local, whole = layers.Layer("attention", 1024), layers.Layer("attention")
    arch = layers.Architecture(hidden_dim=64, heads=4, layers=62, pattern=(local,) * 5 + (whole,))
    assert arch.layer_counts() == ((local, 52), (whole, 10))
    assert layers.Architecture(hidden_dim=64, heads=4, layers=3).layer_counts() == ((layers.Layer("attention"), 3),)


def test_a_layer_without_heads_needs_none() -> None:
    """Dims of a layer without heads hold a = kv = d = 1; an attention layer refuses to be built without its heads."""
    from mlsysim_nb.errors import FieldError

    assert layers.Dims(s=8, b=1, h=64).size(("s", "b", "a", "kv", "d")) == 8
    with pytest.raises(FieldError, match=r"Architecture\.heads: is needed by an attention layer"):
        layers.Architecture(hidden_dim=64)


def _workload(key: str) -> layers.Architecture:
    from mlsysim_nb import Workloads

    return Workloads.configuration(key).architecture()


def test_qwen3_paper_rows_keep_the_qk_norms_inputs() -> None:
    """Qwen3 8B, BF16, fused, per token: 2·(7·4096 + 3·1024 + 3·12288) + 4·32 = 137,344 B; s = 4096: 536.5 MiB.

    Seven 4096-wide rows (both norms' inputs, QKV input, Q norm's input, Q, the projection's input, the MLP's input),
    three 1024-wide (K norm's input, K, V: 8 heads of 128), the SwiGLU's three, the FP32 log-sum-exp of 32 heads.
    """
    arch = _workload("qwen3-8b")
    found = layers.layer_saved_bytes(arch, seq_len=4096, micro_batch=1, dtype_bytes=2, attention="fused")
    assert found == 4096 * (2 * (7 * 4096 + 3 * 1024 + 3 * 12288) + 4 * 32) == 562_561_024


def test_latent_attention_paper_rows() -> None:
    """DeepSeek-V3's latent attention block, BF16, fused, per token: 186,880 B.

    2·(h 7168 + r_q 1536 twice + r_kv 512 twice + Q and K 128·192 each + V and the projection's input 128·128 each)
    + the FP32 log-sum-exp of 128 heads (512 B).
    """
    from mlsysim_nb.layers import mixers

    arch = _workload("deepseek-v3")
    rows = mixers.find("latent_attention").saved(arch, "megatron", "fused", "gpu")
    found = sum(line.bytes for line in layers.lines(rows, arch.dims(1, 1), dtype_bytes=2))
    assert found == 2 * (7168 + 2 * 1536 + 2 * 512 + 2 * 128 * 192 + 2 * 128 * 128) + 4 * 128 == 186_880


def test_gemma_sandwich_norms_and_gpt_oss_sinks_add_their_rows() -> None:
    """Gemma 3 27B: two more norm inputs, 2·2·5376 B a token; gpt-oss 20B, eager: the sink column, 2·b·a·s B."""
    import dataclasses

    gemma = dataclasses.replace(_workload("gemma-3-27b"), pattern=())  # its global layers
    plain = dataclasses.replace(gemma, sandwich_norms=False)
    extra = layers.layer_saved_bytes(gemma, seq_len=1, micro_batch=1, dtype_bytes=2, attention="fused") - (
        layers.layer_saved_bytes(plain, seq_len=1, micro_batch=1, dtype_bytes=2, attention="fused")
    )
    assert extra == 2 * 2 * 5376
    oss = dataclasses.replace(_workload("gpt-oss-20b"), pattern=())  # every layer alike
    rows = {r.key: r for r in layers.layer_rows(oss, "megatron", "eager")}
    assert rows["sink_probs"].bytes(oss.dims(4096, 1), 2) == 2 * 64 * 4096


def test_transformers_gemma_norm_keeps_two_fp32_tensors_and_its_scale() -> None:
    """Gemma 3 27B, transformers: one norm keeps 2·4·h per token (FP32 input and result) and 4·h per layer (1 + w)."""
    import dataclasses

    arch = dataclasses.replace(_workload("gemma-3-27b"), pattern=())  # its global layers
    rows = {r.key: r for r in layers.layer_rows(arch, "transformers", "eager")}
    dims = arch.dims(1, 1)
    assert rows["ln1_input"].bytes(dims, 2) == 2 * 4 * 5376
    assert rows["ln1_scale"].bytes(arch.dims(4096, 8), 2) == 4 * 5376  # whatever the tokens
