"""One GPT layer in PyTorch, bfloat16 on the CPU: every saved byte measured and attributed to a line item."""

from __future__ import annotations

import html
import re

import pytest

from mlsysim_nb import Q_
from mlsysim_nb.measure import ITEMS, measure_layer

pytestmark = pytest.mark.measure

# the three (s, b, h, a), with s·b, s·b·h, a·s²·b and a·s·b worked by hand
CONFIGS = {
    "s256-b2-h512-a8": ((256, 2, 512, 8), 512, 262_144, 1_048_576, 4_096),
    "s512-b1-h768-a12": ((512, 1, 768, 12), 512, 393_216, 3_145_728, 6_144),
    "s128-b4-h1024-a16": ((128, 4, 1024, 16), 512, 524_288, 1_048_576, 8_192),
}
SCORE_ITEMS = {i.key for i in ITEMS if i.term == "as2b"}
MASK_ITEMS = {"softmax_dropout_mask", "attention_dropout_mask", "mlp_dropout_mask"}

_CACHE: dict[tuple[str, str, str], object] = {}


def _measure(name, attention, mask):
    """Each configuration runs once per session (a forward pass of a real layer)."""
    key = (name, attention, mask)
    if key not in _CACHE:
        (s, b, h, a), *_ = CONFIGS[name]
        _CACHE[key] = measure_layer(
            seq_len=s, micro_batch=b, hidden=h, heads=a, dtype="bfloat16", attention=attention, dropout_mask=mask
        )
    return _CACHE[key]


def test_first_configuration_by_hand(torch):
    """(256, 2, 512, 8), explicit, F.dropout: 36·sbh + 6·as²b + 8·sb = 15,732,736 bytes against 14,155,776."""
    m = _measure("s256-b2-h512-a8", "explicit", "scaled")
    assert m.measured == Q_(15_732_736, "byte")
    assert m.predicted.to("byte") == Q_(14_155_776, "byte")
    assert m.unattributed == Q_(4_096, "byte")


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize(
    ("attention", "mask"), [("explicit", "scaled"), ("explicit", "bool"), ("fused", "scaled"), ("fused", "bool")]
)
def test_measured_bytes_match_the_hand_count(torch, name, attention, mask):
    """Measured = the paper's items (masks at 2 B with F.dropout, 1 B as bool) + LayerNorm stats (+ logsumexp if fused)."""
    _, sb, sbh, as2b, asb = CONFIGS[name]
    m = _measure(name, attention, mask)
    mask_extra = 2 if mask == "scaled" else 0  # two sbh masks one byte wider each
    if attention == "explicit":
        expected = (34 + mask_extra) * sbh + (5 + (1 if mask == "scaled" else 0)) * as2b + 8 * sb
        unattributed = 8 * sb  # mean and 1/sigma of two LayerNorms, bf16
    else:
        expected = (34 + mask_extra) * sbh + 4 * asb + 8 * sb
        unattributed = 8 * sb + 4 * asb  # plus the fused kernel's fp32 logsumexp
    assert m.measured == Q_(expected, "byte")
    assert m.unattributed == Q_(unattributed, "byte")


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("attention", ["explicit", "fused"])
def test_attribution_covers_99_percent(torch, name, attention):
    """At least 99 % of the measured bytes map to one of the paper's line items."""
    m = _measure(name, attention, "scaled")
    assert m.attributed_share >= 0.99


@pytest.mark.parametrize("name", CONFIGS)
def test_fused_attention_saves_no_s_squared_term(torch, name):
    """With scaled_dot_product_attention no saved tensor has an s x s shape and the score items measure 0."""
    (s, *_), *_ = CONFIGS[name]
    m = _measure(name, "fused", "scaled")
    assert m.score_bytes == Q_(0, "byte")
    assert [t.shape for t in m.tensors if t.shape[-2:] == (s, s)] == []
    assert {t.op for t in m.tensors if t.step == "fused attention"} == {"ScaledDotProductFlashAttentionForCpuBackward0"}


@pytest.mark.parametrize("name", CONFIGS)
def test_each_item_measured_over_predicted(torch, name):
    """Bool masks: every item exactly as predicted. F.dropout: the three masks at 2.0, every other item at 1.0."""
    exact = _measure(name, "explicit", "bool")
    assert {r.item.key: r.ratio for r in exact.items} == dict.fromkeys((i.key for i in ITEMS), 1.0)
    scaled = _measure(name, "explicit", "scaled")
    expected = {i.key: (2.0 if i.key in MASK_ITEMS else 1.0) for i in ITEMS}
    assert {r.item.key: r.ratio for r in scaled.items} == expected
    fused = _measure(name, "fused", "bool")
    expected = {i.key: (0.0 if i.key in SCORE_ITEMS else 1.0) for i in ITEMS}
    assert {r.item.key: r.ratio for r in fused.items} == expected


def test_unattributed_tensors_are_the_layernorm_statistics_and_logsumexp(torch):
    """What no line item names: LayerNorm's mean and rstd, and the fused kernel's logsumexp."""
    m = _measure("s256-b2-h512-a8", "fused", "scaled")
    rows = sorted({(t.op, t.slot, t.dtype) for t in m.tensors if t.item is None})
    assert rows == [
        ("NativeLayerNormBackward0", "result1", "bfloat16"),
        ("NativeLayerNormBackward0", "result2", "bfloat16"),
        ("ScaledDotProductFlashAttentionForCpuBackward0", "logsumexp", "float32"),
    ]


def test_reshape_copies_are_what_the_scores_matmul_saves(torch):
    """Explicit attention: bmm saves head-major copies of Q, K and V (2·sbh each), not views of the QKV output."""
    m = _measure("s256-b2-h512-a8", "explicit", "scaled")
    saved = sorted((t.step, t.op, t.slot, t.shape) for t in m.tensors if t.item and t.item.key in {"qk", "v"})
    assert saved == [
        ("attention scores", "BmmBackward0", "mat2", (16, 64, 256)),
        ("attention scores", "BmmBackward0", "self", (16, 256, 64)),
        ("attention x V", "BmmBackward0", "mat2", (16, 256, 64)),
    ]
    assert {t.storage_bytes for t in m.tensors if t.item and t.item.key in {"qk", "v"}} == {2 * 262_144}


def test_fused_attention_keeps_views_of_the_qkv_output(torch):
    """Fused: Q, K and V are views of the one QKV output (6·sbh), counted once, split among the items by bytes."""
    m = _measure("s256-b2-h512-a8", "fused", "scaled")
    rows = [t for t in m.tensors if t.item and t.item.key in {"qk", "v"}]
    assert {t.storage_bytes for t in rows} == {6 * 262_144}
    assert sum(t.attributed for t in rows) == 6 * 262_144


def test_repr_shows_measured_beside_predicted_per_item(torch):
    """Text and HTML reprs give, for each line item, its predicted and measured bytes and their ratio."""
    m = _measure("s256-b2-h512-a8", "explicit", "scaled")
    lines = [re.split(r"\s{2,}", line) for line in m._repr_text_().splitlines()]
    assert ["softmax dropout mask (as²b)", "attention", "1.049 MB (1 MiB)", "2.097 MB (2 MiB)", "2.000"] in lines
    assert ["whole layer", "14.16 MB (13.5 MiB)", "15.73 MB (15 MiB)", "1.1114"] in lines
    page = m._repr_html_()
    for row in m.items:
        assert f"<td>{html.escape(row.item.label)}</td>" in page
    assert (
        "<td>GeLU input (8sbh)</td><td>MLP</td><td>2.097 MB (2 MiB)</td><td>2.097 MB (2 MiB)</td><td>1.000</td>" in page
    )


def test_measuring_twice_gives_the_same_report(torch):
    """Deterministic: no addresses, timings or random values in the report."""
    first = measure_layer(seq_len=128, micro_batch=1, hidden=256, heads=4)
    second = measure_layer(seq_len=128, micro_batch=1, hidden=256, heads=4)
    assert first._repr_text_() == second._repr_text_()
    assert first._repr_html_() == second._repr_html_()
    assert "0x" not in first._repr_html_()


def test_float32_layer_matches_the_models_4_byte_scaling(torch):
    """In float32 every tensor item doubles, as the model scales them; the bool masks stay 1 byte (ratio 0.5)."""
    m = measure_layer(seq_len=128, micro_batch=1, hidden=256, heads=4, dtype="float32", dropout_mask="bool")
    expected = {i.key: (0.5 if i.key in MASK_ITEMS else 1.0) for i in ITEMS}
    assert {r.item.key: r.ratio for r in m.items} == expected


def test_a_torch_dtype_is_accepted(torch):
    """dtype=torch.bfloat16 measures the same layer as dtype="bfloat16"."""
    by_object = measure_layer(seq_len=128, micro_batch=1, hidden=256, heads=4, dtype=torch.bfloat16)
    by_name = measure_layer(seq_len=128, micro_batch=1, hidden=256, heads=4, dtype="bfloat16")
    assert (by_object.dtype, by_object.measured) == ("bfloat16", by_name.measured)


@pytest.mark.parametrize("attention", ["explicit", "fused"])
def test_hooks_and_graph_walk_agree(torch, attention):
    """Every tensor the hooks saw is found in the autograd graph, so each row names the op that saved it."""
    m = _measure("s256-b2-h512-a8", attention, "scaled")
    assert [t for t in m.tensors if t.op == "(not in the graph)"] == []
    assert len(m.tensors) == (19 if attention == "explicit" else 18)
