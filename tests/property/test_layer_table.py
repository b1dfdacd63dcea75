"""Invariants of the layer table, for any shape: the paper's sums, GQA's limit, what each strategy keeps."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from mlsysim_nb import layers

_KINDS = st.sampled_from(
    [
        {},  # GPT-style
        {"mlp": "gated", "activation": "silu", "norm": "rmsnorm", "attention_dropout": 0, "hidden_dropout": 0,
         "positions": "rotary", "bias": "none", "model_type": "llama"},
    ]
)  # fmt: skip


@st.composite
def architectures(draw: st.DrawFn) -> layers.Architecture:
    """A layer: heads dividing the width, key/value heads dividing the heads, any MLP width, maybe experts."""
    heads = draw(st.sampled_from([1, 2, 4, 8, 16]))
    kv = draw(st.sampled_from([k for k in (1, 2, 4, 8, 16) if heads % k == 0]))
    hidden = heads * draw(st.integers(1, 64))
    kind = draw(_KINDS)
    experts = draw(st.sampled_from([0, 0, 4, 8])) if kind else 0
    return layers.Architecture(
        hidden=hidden, heads=heads, kv_heads=kv, ffn=draw(st.integers(1, 8 * hidden)), experts=experts,
        experts_per_token=draw(st.integers(1, experts)) if experts else 1, vocab=draw(st.integers(2, 5000)), **kind,
    )  # fmt: skip


_RUN = st.tuples(st.integers(1, 512), st.integers(1, 8))


@given(f=st.integers(1, 64), h=st.integers(1, 256), a=st.integers(1, 16), run=_RUN)
def test_the_megatron_gpt_layer_is_18_plus_4f_sbh_plus_5as2b(f: int, h: int, a: int, run: tuple[int, int]) -> None:
    """For any MLP multiple f: (18 + 4f)sbh + 5as²b bytes at 16 bits."""
    s, b = run
    arch = layers.Architecture(hidden_dim=h * a, heads=a, ffn_dim=f * h * a)
    got = layers.layer_saved_bytes(arch, seq_len=s, micro_batch=b, dtype_bytes=2)
    assert got == (18 + 4 * f) * s * b * h * a + 5 * a * s * s * b


@given(arch=architectures(), run=_RUN, implementation=st.sampled_from(layers.IMPLEMENTATIONS))
def test_gqa_with_every_head_its_own_kv_is_multi_head(
    arch: layers.Architecture, run: tuple[int, int], implementation: str
) -> None:
    """Kv = a gives the bytes of multi-head attention (kv_heads left out)."""
    s, b = run
    mha, gqa = dataclasses.replace(arch, kv_heads=None), dataclasses.replace(arch, kv_heads=arch.heads)
    for attention in layers.ATTENTIONS:
        kw = {
            "seq_len": s,
            "micro_batch": b,
            "dtype_bytes": 2,
            "attention": attention,
            "implementation": implementation,
        }
        assert layers.layer_saved_bytes(mha, **kw) == layers.layer_saved_bytes(gqa, **kw)  # type: ignore[arg-type]


_SETTINGS = st.tuples(
    st.sampled_from(layers.IMPLEMENTATIONS),
    st.sampled_from(layers.ATTENTIONS),
    st.sampled_from([2, 4]),
    st.sampled_from([1, 2, 8]),
    st.booleans(),
)


@given(arch=architectures(), run=_RUN, setting=_SETTINGS)
def test_recomputation_only_drops(
    arch: layers.Architecture, run: tuple[int, int], setting: tuple[str, str, int, int, bool]
) -> None:
    """Full <= selective <= none; parallelism never adds bytes; fewer kv heads never add bytes."""
    s, b = run
    implementation, attention, dtype_bytes, t, sp = setting
    kw = {"seq_len": s, "micro_batch": b, "dtype_bytes": dtype_bytes, "attention": attention,
          "implementation": implementation}  # fmt: skip
    by = {k: layers.layer_saved_bytes(arch, strategy=k, **kw) for k in layers.STRATEGIES}  # type: ignore[arg-type]
    assert by["full"] <= by["selective"] <= by["none"]
    split = layers.layer_saved_bytes(arch, tensor_parallel=t, sequence_parallel=sp, **kw)  # type: ignore[arg-type]
    assert split <= by["none"]
    if sp:
        assert split * t == by["none"]
    fewer = dataclasses.replace(arch, kv_heads=1)
    assert layers.layer_saved_bytes(fewer, **kw) <= by["none"]  # type: ignore[arg-type]


@given(arch=architectures())
def test_active_parameters_are_at_most_total(arch: layers.Architecture) -> None:
    """An MoE uses k of E experts per token; a dense model uses all it has."""
    total, active = layers.parameter_count(arch, 2), layers.parameter_count(arch, 2, active=True)
    assert active <= total
    assert (active == total) == (not arch.moe or arch.experts_per_token == arch.experts)
