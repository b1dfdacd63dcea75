"""The training-time kind: hand-worked FLOPs and times, its refusals, and the published figures it is checked on."""

from __future__ import annotations

from typing import Any

import pytest

from mlsysim_nb import Q_, Scenarios, compare, explore, layers, sweep
from mlsysim_nb.errors import FieldError
from mlsysim_nb.kinds.activation.model import ActivationMemoryScenario
from mlsysim_nb.kinds.parallel.model import ParallelTrainingScenario
from mlsysim_nb.kinds.time.model import TrainingTimeScenario
from mlsysim_nb.kinds.training.model import TrainingStateFitScenario
from mlsysim_nb.records.hardware import Hardware
from mlsysim_nb.records.workload_catalog import Workloads
from mlsysim_nb.records.workloads import Workload
from mlsysim_nb.render.numbers import format_result

S, V = 2048, 51200  # Korthikanti et al. (2022): sequence and vocabulary of every Table 3 model
DAY = 86400.0


def _s(q: Any) -> float:
    return float(q.m_as("s"))


def _gpt(size: str, a: int, h: int, layer_count: int) -> Workload:
    """A GPT model of Korthikanti's Table 3, its parameters counted by the layer table."""
    probe = Workload(name=size, parameters=1, layers=layer_count, hidden_dim=h, heads=a, vocab_size=V,
                     context_length=S)  # fmt: skip
    return probe.variant(parameters=layers.parameter_count(probe.architecture(), layer_count))


def _timed(w: Workload, recompute: str, *, t: int, p: int, m: int, b: int, batch: int, hardware: str = "A100_80GB",
           data_parallel: int = 1, **shares: Any) -> TrainingTimeScenario:  # fmt: skip
    state = TrainingStateFitScenario(workload=w, hardware=Hardware[hardware], bytes_per_value=2,
                                     optimizer_bytes_per_parameter=8, master_bytes_per_parameter=4)  # fmt: skip
    acts = ActivationMemoryScenario(workload=w, micro_batch=b, seq_len=S)
    layout = ParallelTrainingScenario(
        state=state, activations=acts, recompute=recompute, tensor_parallel=t, data_parallel=data_parallel,
        sequence_parallel=recompute == "selective" and t > 1, pipeline_parallel=p, interleave=m,
    )  # fmt: skip
    return TrainingTimeScenario(layout=layout, global_batch_size=batch, **shares)


# -- hand-worked: GPT-3 175B on 64 A100 (Korthikanti Table 3's layout) ------------------------------------------


def test_model_flops_are_korthikantis_appendix_a() -> None:
    """F_model = 72·B·s·L·h²·(1 + s/6h + v/12hL) = 1.411e17 for B = 64; selective recomputation adds 4·B·s²·h·L."""
    s = Scenarios["Gpt3_175BKorthikantiTable5OnA100"]
    batch, h, layer_count = 64, 12288, 96
    model = 72 * batch * S * layer_count * h**2 * (1 + S / (6 * h) + V / (12 * h * layer_count))
    assert s.model_flops_per_iteration == pytest.approx(model, rel=1e-12)
    assert model == pytest.approx(1.4110e17, rel=1e-4)
    assert s.hardware_flops_per_iteration == pytest.approx(model + 4 * batch * S**2 * h * layer_count, rel=1e-12)
    full = Scenarios["Gpt3_175BFullRecomputeOnA100"]
    hardware = 96 * batch * S * layer_count * h**2 * (1 + S / (6 * h) + V / (16 * h * layer_count))
    assert full.hardware_flops_per_iteration == pytest.approx(hardware, rel=1e-12)


def test_the_time_of_gpt3_175b_by_cause() -> None:
    """Each cause by hand: compute, matrix operands, element-wise, TP collectives, pipeline sends, bubble, optimizer.

    The output layer is the last stage's: every micro-batch's logits are computed there, besides its 12 layers.
    """
    s = Scenarios["Gpt3_175BKorthikantiTable5OnA100"]
    h, a, t, p, m, n_mb, per_stage = 12288, 96, 8, 8, 3, 64, 12
    layers_flops = 72 * 64 * S * 96 * h**2 * (1 + S / (6 * h))  # Korthikanti's Appendix A without the logits
    compute = layers_flops / 64 / (312e12 * 0.9)
    assert _s(s.compute_time) == pytest.approx(compute, rel=1e-12)  # 7.823 s
    # 22·h bytes per token only SP splits, 16·h the MLP's GeLU, 9 B per score (softmax, dropout and its mask)
    per_token_layer = 22 * h / t + (16 * h + 9 * a * S) / t
    assert float(s.layer_elementwise_bytes.m_as("byte")) == pytest.approx(per_token_layer, rel=1e-12)
    traffic = per_stage * 64 * S * (3 * per_token_layer + 9 * a * S / t)  # selective: the scores' work again
    assert _s(s.elementwise_time) == pytest.approx(traffic / (2039e9 * 0.9), rel=1e-12)
    # SP: four reduce-scatters and four all-gathers, each at 1.5 times its ring volume, over NVLink at 65 %
    tp = 1.5 * n_mb * per_stage * 4 * 2 * (t - 1) / t * S * h * 2 / (300e9 * 0.65)
    assert _s(s.tensor_parallel_time) == pytest.approx(tp, rel=1e-12)  # 2.081 s
    # matrix operands per token and layer: inputs and outputs of h (4·h), the t-split sides (12·h of the weights'
    # other axes, 4·h of Q, K, V read and the output written), 2 values per score, the weights once per micro-batch
    operand = 2 * (4 * h + (16 * h + 2 * a * S) / t + 12 * h**2 / (t * S))
    assert float(s.layer_operand_bytes.m_as("byte")) == pytest.approx(operand, rel=1e-12)  # 466.9 kB
    output = 2 * (h + V / t + V * h / (t * S))  # the logits' product: its input, v/t logits, its weights
    assert float(s.output_operand_bytes.m_as("byte")) == pytest.approx(output, rel=1e-12)
    rerun = 2 * (4 * h + 2 * a * S) / t  # selective: the scores' two products again
    matrix = 64 * S / p * 96 * (3 * operand + rerun)
    assert _s(s.matrix_operand_time) == pytest.approx(matrix / (2039e9 * 0.9), rel=1e-12)  # 1.290 s
    # the last stage's output layer, whole: 6·v·h FLOPs per token over t, its operands forward once, backward twice
    out = 64 * S * 6 * V * h / t / (312e12 * 0.9) + 3 * 64 * S * output / (2039e9 * 0.9)
    assert _s(s.output_layer_time) == pytest.approx(out, rel=1e-12)  # 244.7 ms
    p2p = 2 * m * n_mb * S * h * 2 / t / (25e9 * 0.9)  # both ways per virtual stage, over InfiniBand
    assert _s(s.pipeline_transfer_time) == pytest.approx(p2p, rel=1e-12)
    assert s.bubble_fraction == pytest.approx((p - 1) / (m * n_mb), rel=1e-12)
    optimizer = 26 * 175e9 / 64 / (2039e9 * 0.9)  # 2 + 2·4 + 2·8 bytes per parameter moved
    assert _s(s.optimizer_step_time) == pytest.approx(optimizer, rel=1e-12)
    stage = sum(_s(q) for q in (s.compute_time, s.recompute_time, s.matrix_operand_time, s.elementwise_time,
                                 s.tensor_parallel_time, s.pipeline_transfer_time))  # fmt: skip
    # the bubble: the fill and the drain pass through the other stages, which hold no output layer
    assert _s(s.bubble_time) == pytest.approx(stage * (p - 1) / (m * n_mb), rel=1e-12)
    assert _s(s.iteration_time) == pytest.approx(stage * (1 + (p - 1) / (m * n_mb)) + out + optimizer, rel=1e-12)
    assert _s(s.iteration_time) == pytest.approx(13.02, abs=0.005)


def test_mfu_hfu_and_days_follow_from_the_iteration_time() -> None:
    """MFU = F_model/(N·F_peak·t); 300 billion tokens take 300e9/(64·2048) iterations."""
    s = Scenarios["Gpt3_175BKorthikantiTable5OnA100"]
    t_iter = _s(s.iteration_time)
    assert s.model_flops_utilization == pytest.approx(s.model_flops_per_iteration / (64 * 312e12 * t_iter))
    assert s.hardware_flops_utilization > s.model_flops_utilization
    days = s.time_to_train(300e9)
    assert float(days.m_as("day")) == pytest.approx(300e9 / (64 * S) * t_iter / DAY, rel=1e-12)
    assert float(s.tokens_per_second) == pytest.approx(64 * S / t_iter, rel=1e-12)


def test_full_recomputation_reruns_the_forward_and_its_collectives() -> None:
    """Full recomputation: one more forward of every layer (1/3 of the model's layer FLOPs), six all-reduces not four.

    Without sequence parallelism the collectives are all-reduces at their ring volume (κ = 1), and every layer's
    matrix products move their operands a fourth time.
    """
    sel, full = Scenarios["Gpt3_175BKorthikantiTable5OnA100"], Scenarios["Gpt3_175BFullRecomputeOnA100"]
    assert float(full.recompute_flops_per_token) == pytest.approx(96 * float(full.layer_forward_flops_per_token))
    per_layer = 4 * 2 * 7 / 8 * S * 12288 * 2
    assert full.collective_cost == 1
    assert _s(full.tensor_parallel_time) == pytest.approx(1.5 * 64 * 12 * per_layer / 195e9, rel=1e-12)
    operand, output = float(full.layer_operand_bytes.m_as("byte")), float(full.output_operand_bytes.m_as("byte"))
    matrix = 64 * S / 8 * 4 * 96 * operand
    assert float(full.matrix_traffic.m_as("byte")) == pytest.approx(matrix, rel=1e-12)
    assert _s(full.output_layer_time) == pytest.approx(_s(sel.output_layer_time), rel=1e-12)  # never recomputed
    assert output > 0
    assert _s(full.iteration_time) > _s(sel.iteration_time)


def test_a_grouped_query_gated_model_counts_its_own_layer() -> None:
    """Llama 3.1 8B: P_mm = 4096·(4096 + 2·1024 + 4096) + 3·4096·14336 per layer; A = 32·128; no scores moved fused.

    Its matrix operands per token: 4·h whole, P_mm/h + 2·A + 2·kv·d split (here t = 1), and, with the eager
    attention the layout keeps, 2 values per score (a·s scores per token).
    """
    w = Workloads.configuration("llama-3.1-8b")
    s = _timed(w, "selective", t=1, p=1, m=1, b=1, batch=8, hardware="H100", data_parallel=8)
    matrix = 4096 * (4096 + 2 * 1024 + 4096) + 3 * 4096 * 14336
    assert float(s.layer_forward_flops_per_token) == pytest.approx(2 * matrix + 4 * S * 4096, rel=1e-12)
    assert float(s.output_forward_flops_per_token) == 2 * 128256 * 4096
    values = 4 * 4096 + matrix / 4096 + 2 * 4096 + 2 * 1024 + 2 * 32 * S + matrix / S  # weights per token at b = 1
    assert float(s.layer_operand_bytes.m_as("byte")) == pytest.approx(2 * values, rel=1e-12)
    assert s.flag("data_in_node")
    assert _s(s.tensor_parallel_time) == 0


def test_calculons_size_dependent_shares_by_class() -> None:
    """GPT-3 175B, b = 1, t = 8, with Calculon's A100 tables: each class at its own operations' share.

    Projections (fused QKV 231.9, output 77.3, each MLP matrix 309.2 GFLOP): 95 %, 90 %, 95 %, 95 %; the score
    products 12.9 GFLOP forward (60 %), 25.8 backward (90 %); the logits 322 GFLOP (95 %); a norm under SP moves
    12.6 MB (75 %), the GeLU 50.3 MB (75 %), the softmax 201 MB (90 %). Flat shares give every class η_mm or η_mem.
    """
    flat = Scenarios["Gpt3_175BKorthikantiTable5OnA100"]
    s = flat.variant(share_curves="calculon-a100")
    h, t, tokens = 12288, 8, S
    ops = [2 * tokens * n / t / 1e9 for n in (3 * h * h, h * h, 4 * h * h, 4 * h * h)]
    assert ops == pytest.approx([231.9, 77.3, 309.2, 309.2], abs=0.05)
    projection = sum(ops) / (ops[0] / 0.95 + ops[1] / 0.9 + (ops[2] + ops[3]) / 0.95)
    expected = {
        "projection_share": projection, "score_product_share": 0.6, "score_product_backward_share": 0.9,
        "output_share": 0.95, "sp_elementwise_share": 0.75, "tp_elementwise_share": 0.75,
        "score_elementwise_share": 0.9,
    }  # fmt: skip
    for name, share in expected.items():
        assert s._env.values[name] == pytest.approx(share, rel=1e-12), name
        assert flat._env.values[name] == 0.9, name
    compute = 64 * S / 64 / 312e12 * 96 * (6 * 12 * h * h / projection + 4 * S * h * (1 / 0.6 + 2 / 0.9))
    assert _s(s.compute_time) == pytest.approx(compute, rel=1e-12)  # 7.491 s, against 7.823 s flat
    out = 64 * S / 8 * 6 * V * h / (312e12 * 0.95) + 3 * 64 * S * float(s.output_operand_bytes.m_as("byte")) / (
        2039e9 * 0.9
    )
    assert _s(s.output_layer_time) == pytest.approx(out, rel=1e-12)  # the logits' 322 GFLOP products at 95 %
    assert _s(s.recompute_time) == pytest.approx(64 * S / 64 / 312e12 * 96 * 4 * S * h / 0.6, rel=1e-12)
    per_token = 22 * h / t / 0.75 + (16 * h / 0.75 + 9 * 96 * S / 0.9) / t  # each class over its share
    ew = 12 * 64 * S * (3 * per_token + 9 * 96 * S / t / 0.9) / 2039e9
    assert _s(s.elementwise_time) == pytest.approx(ew, rel=1e-12)
    assert _s(s.iteration_time) == pytest.approx(12.73, abs=0.005)
    assert "0.9456" in s.to_text()  # the derivation shows each class's share


# -- refusals -----------------------------------------------------------------------------------------------------


def test_bad_batches_and_layouts_are_refused_by_name() -> None:
    """B must be a multiple of b·N_d and give at least p micro-batches; the layout needs activations and a device."""
    s = Scenarios["Gpt3_175BKorthikantiTable5OnA100"]
    with pytest.raises(FieldError, match=r"global_batch_size.*at least p = 8 micro-batches"):
        s.variant(global_batch_size=4)
    layout = s.layout.variant(data_parallel=2)
    with pytest.raises(FieldError, match=r"global_batch_size.*multiple of b·N_d = 2"):
        TrainingTimeScenario(layout=layout, global_batch_size=65)
    with pytest.raises(FieldError, match=r"layout.*needs activations"):
        TrainingTimeScenario(layout=s.layout.variant(activations=None), global_batch_size=64)
    with pytest.raises(FieldError, match=r"layout.*ParallelTrainingScenario"):
        TrainingTimeScenario(layout=s.layout.state, global_batch_size=64)
    with pytest.raises(FieldError, match="matmul_share"):
        s.variant(matmul_share=1.5)
    with pytest.raises(FieldError, match="share_curves"):
        s.variant(share_curves="calculon-h100")
    with pytest.raises(FieldError, match=r"link_share: must be at least 1 %"):
        s.variant(link_share=1e-320)
    with pytest.raises(FieldError, match=r"gather_scatter_cost: must be at least 1 % \(a cost multiple\)"):
        s.variant(gather_scatter_cost=1e-9)
    with pytest.raises(FieldError, match="tokens"):
        s.time_to_train(-1.0)
    with pytest.raises(FieldError, match=r"time_to_train\.tokens: must be at least 1 token, got 0\.5"):
        s.time_to_train(0.5)  # as time_to_train(0) is refused: half a token was 5.7·10⁻¹⁰ days before
    with pytest.raises(FieldError, match=r"time_to_train\.tokens: must be at least 1 token"):
        s.time_to_train(1e-300)


# -- every kind's doors -------------------------------------------------------------------------------------------


def test_reprs_compare_explore_and_sweep() -> None:
    """The derivation names each cause; compare() lines up the times; explore() moves t; sweep() runs a grid of B."""
    s = Scenarios["Gpt3_175BKorthikantiTable5OnA100"]
    text = s.to_text()
    for step in ("compute_time", "elementwise_time", "tensor_parallel_time", "bubble_time", "iteration_time"):
        assert step in text
    html = s._repr_html_()
    assert html.count('<img class="msn-chart"') == 2  # the memory bar, and beside it the time by cause
    assert "Time bar chart. one iteration: MFU 54.3 %. one iteration: 13.02 s (compute 7.823 s, recompute" in html
    assert "output layer 244.7 ms" in html  # the last stage's own cause
    table = dict(compare(s, Scenarios["Gpt3_175BFullRecomputeOnA100"]).table())
    assert "iteration_time" in table
    panel = explore(s)
    assert panel.companion.bars[0]["total_text"] == "13.02 s"  # the time by cause, under the memory bar
    panel.set("tensor_parallel", 4)
    assert panel.scenario.layout.tensor_parallel == 4
    assert panel.companion.bars[0]["total_text"] == format_result("second", panel.scenario.magnitude("iteration_time"))
    result = sweep(s, global_batch_size=[64, 128, 256])
    assert list(result["bubble_fraction"]) == pytest.approx([7 / 192, 7 / 384, 7 / 768])


# -- published figures --------------------------------------------------------------------------------------------

#: Korthikanti et al. (2022) Table 3: attention heads, hidden size, layers, t, p, interleaving, micro-batch, batch.
TABLE_3 = {
    "22B": (64, 6144, 48, 8, 1, 1, 4, 4),
    "175B": (96, 12288, 96, 8, 8, 3, 1, 64),
    "530B": (128, 20480, 105, 8, 35, 3, 1, 280),
    "1T": (160, 25600, 128, 8, 64, 1, 1, 512),
}
#: Korthikanti et al. (2022) Table 5, "End-to-end iteration time" on A100 80GB: full recomputation (s), present
#: work (sequence parallelism + selective recomputation, s), throughput increase (%), MFU (%), HFU (%).
TABLE_5 = {
    "22B": (1.42, 1.10, 29.0, 41.5, 43.7),
    "175B": (18.13, 13.75, 31.8, 51.4, 52.8),
    "530B": (49.05, 37.83, 29.7, 56.0, 57.0),
    "1T": (94.42, 71.49, 32.1, 56.3, 57.0),
}


def _table_5(size: str) -> tuple[TrainingTimeScenario, TrainingTimeScenario]:
    a, h, layer_count, t, p, m, b, batch = TABLE_3[size]
    w = _gpt(size, a, h, layer_count)
    return tuple(_timed(w, r, t=t, p=p, m=m, b=b, batch=batch) for r in ("full", "selective"))  # type: ignore[return-value]


def test_table_5_mfu_is_the_papers_arithmetic_over_its_own_times() -> None:
    """Our F_model over Table 5's measured times gives its MFU column to 0.2 point, and its HFU column too.

    The HFU column follows when the recomputed scores count 12·B·s²·h·L (three times the 4·B·s²·h·L rerun).
    """
    for size, (_, measured, _, mfu, hfu) in TABLE_5.items():
        _, sel = _table_5(size)
        devices = sel.devices
        model = sel.model_flops_per_iteration
        assert 100 * model / (devices * 312e12 * measured) == pytest.approx(mfu, abs=0.2)  # times printed to 0.01 s
        _, h, layer_count, *_, batch = TABLE_3[size]
        papers = model + 12 * batch * S**2 * h * layer_count
        assert 100 * papers / (devices * 312e12 * measured) == pytest.approx(hfu, abs=0.2)


def test_table_5_iteration_times_with_calculons_shares() -> None:
    """With one set of shares (Calculon's A100), every time comes out 1.8 % to 7.1 % short, 4.6 % on average.

    The shares: matrix work at 90 % of peak, memory at 90 % of its bandwidth (the element-wise work and the matrix
    products' own operands, not overlapped with their arithmetic), NVLink at 65 % with SP's reduce-scatters and
    all-gathers at 1.5 times their ring volume, InfiniBand at 90 %. The pipeline's last stage holds the output
    layer besides its L/p layers and paces the others. The throughput-increase column comes within 3 points (26.3,
    29.5, 29.4, 29.8 % against 29.0, 31.8, 29.7, 32.1 %); the MFU column reads high by 1 to 3.5 points (42.6, 54.3,
    59.5, 57.7 % against 41.5, 51.4, 56.0, 56.3 %).
    """
    errors, increases, mfus = [], [], []
    for size, (full_t, sel_t, increase, mfu, _) in TABLE_5.items():
        full, sel = _table_5(size)
        errors += [_s(full.iteration_time) / full_t - 1, _s(sel.iteration_time) / sel_t - 1]
        increases.append(100 * (_s(full.iteration_time) / _s(sel.iteration_time) - 1) - increase)
        mfus.append(100 * sel.model_flops_utilization - mfu)
    assert all(-0.075 < e < -0.015 for e in errors)
    assert sum(abs(e) for e in errors) / len(errors) == pytest.approx(0.0464, abs=0.0005)
    assert max(abs(e) for e in errors) == pytest.approx(0.0702, abs=0.0005)  # 175B, full: 16.86 s for 18.13
    assert all(abs(d) < 3 for d in increases)
    assert all(1 < d < 3.6 for d in mfus)


def test_table_5_with_calculons_size_dependent_tables() -> None:
    """Calculon's A100 tables per class make all eight times shorter still: 4.1 % to 9.5 % short, 7.5 % on average.

    The large projections' 95 % outweighs the small kernels' lower shares (175B's score products at 60 %, the norms
    and adds on SP's 12.6 MB tensors at 75 %), so size-dependent shares do not close the gap to the measured times.
    """
    errors = []
    for size, (full_t, sel_t, *_) in TABLE_5.items():
        full, sel = (x.variant(share_curves="calculon-a100") for x in _table_5(size))
        errors += [_s(full.iteration_time) / full_t - 1, _s(sel.iteration_time) / sel_t - 1]
    assert all(-0.10 < e < -0.04 for e in errors)
    assert sum(abs(e) for e in errors) / len(errors) == pytest.approx(0.0754, abs=0.0005)
    assert max(abs(e) for e in errors) == pytest.approx(0.0952, abs=0.0005)  # 530B, full: 44.38 s for 49.05


def test_size_dependent_shares_sweep_over_the_layout() -> None:
    """A sweep over the share model gives each point's own time; at t = 2 the 175B score products (51.5 GFLOP) get 90 %."""
    flat = Scenarios["Gpt3_175BKorthikantiTable5OnA100"]
    one = [_s(flat.variant(share_curves=c).iteration_time) for c in ("flat", "calculon-a100")]
    result = sweep(flat, share_curves=["flat", "calculon-a100"])
    assert [_s(x) for x in result["iteration_time"]] == pytest.approx(one, rel=1e-12)
    wide = flat.variant(share_curves="calculon-a100", layout=flat.layout.variant(tensor_parallel=2))
    assert wide._env.values["score_product_share"] == 0.9
    panel = explore(flat)
    panel.set("share_curves", "calculon-a100")
    assert panel.companion.bars[0]["total_text"] == "12.73 s"  # the panel's number is the scenario's


def test_table_5_within_the_issues_bounds() -> None:
    """Table 5 within 5 % on average, none off by over 10 %, throughput increase within 3 points, MFU within 5.

    With the flat shares: mean 4.6 %, worst 7.0 % (175B, full recomputation), every time short. Calculon reports a
    3.65 % mean on the same table. What this model leaves out, all of it time: kernel launches and the gaps between
    kernels, the loss's and the embedding's memory traffic, the collectives' own memory traffic, the tied
    embedding's gradient all-reduce between the first and last stage, stragglers.
    """
    errors = []
    for size, (full_t, sel_t, increase, mfu, _) in TABLE_5.items():
        full, sel = _table_5(size)
        errors += [abs(_s(full.iteration_time) / full_t - 1), abs(_s(sel.iteration_time) / sel_t - 1)]
        assert abs(100 * (_s(full.iteration_time) / _s(sel.iteration_time) - 1) - increase) <= 3
        assert abs(100 * sel.model_flops_utilization - mfu) <= 5
    assert sum(errors) / len(errors) <= 0.05
    assert max(errors) <= 0.10


#: Korthikanti et al. (2022) Table 4: one layer of the 22B model (t = 8, b = 4), forward and backward in ms.
TABLE_4 = {"baseline": (7.7, 11.9), "full recomputation": (7.7, 19.5)}


def test_table_4_why_full_recomputation_costs_39_not_33_percent() -> None:
    """Rerunning a forward costs the forward: 7.7/(7.7 + 11.9) = 39 %, not 1/3, as the backward is 11.9 ms, not 15.4.

    The 33 % is the FLOP count's (one forward of 2 against a backward of 4); communication and element-wise work do
    not double in the backward. The model's layer shows the same: its forward costs more than half its backward
    (7.29 ms against 12.78 ms: the matrix work 10.46 ms, its operands 2.05 ms, element-wise 3.95 ms, split a third
    forward; the four all-reduces 3.61 ms, half forward).
    """
    forward, backward = TABLE_4["baseline"]
    assert forward / (forward + backward) == pytest.approx(0.39, abs=0.005)
    assert TABLE_4["full recomputation"][1] - backward == pytest.approx(forward, abs=0.2)
    a, h, layer_count, t, _, _, b, batch = TABLE_3["22B"]
    s = _timed(_gpt("22B", a, h, layer_count), "none", t=t, p=1, m=1, b=b, batch=batch)
    layer_share = layer_count * float(s.layer_forward_flops_per_token) / (float(s.model_flops_per_token) / 3)
    per_layer = {  # one layer, one micro-batch: matrix work, element-wise, collectives, split forward / backward
        "compute": _s(s.compute_time) * layer_share / layer_count,
        "operands": 3 * float(s.layer_operand_bytes.m_as("byte")) * b * S / (2039e9 * 0.9),
        "elementwise": _s(s.elementwise_time) / layer_count,
        "collectives": _s(s.tensor_parallel_time) / layer_count,
    }
    work = per_layer["compute"] + per_layer["operands"] + per_layer["elementwise"]
    model_forward = work / 3 + per_layer["collectives"] / 2
    model_backward = 2 * work / 3 + per_layer["collectives"] / 2
    assert 1000 * model_forward == pytest.approx(forward, rel=0.06)  # 7.29 ms against 7.7
    assert 1000 * model_backward == pytest.approx(backward, rel=0.08)  # 12.78 ms against 11.9
    assert model_forward / (model_forward + model_backward) == pytest.approx(0.36, abs=0.01)


def test_narayanan_equation_4_days_to_train() -> None:
    """8·T·P/(n·X): GPT-3 175B, 300B tokens on 1,024 GPUs at 140 TFLOP/s, 34 days; 1T, 450B on 3,072 at 163, 84 days.

    The kind's hardware FLOPs with full recomputation are 8·P per token plus the attention and logits (a few %).
    """
    assert pytest.approx(34, abs=0.5) == 8 * 300e9 * 175e9 / (1024 * 140e12) / DAY
    assert pytest.approx(83.2, abs=0.1) == 8 * 450e9 * 1e12 / (3072 * 163e12) / DAY  # printed: 84 days
    full = Scenarios["Gpt3_175BFullRecomputeOnA100"]
    per_token = full.hardware_flops_per_iteration / full.tokens_per_iteration
    days = 300e9 * per_token / (1024 * 140e12) / DAY
    assert days == pytest.approx(34.7, abs=0.05)  # 2.4 % over 8·P: the attention's s/6h and the logits' v/16hL


#: Llama 3 (Dubey et al. 2024) Table 4: GPUs, TP, CP, PP, DP as printed, sequence, batch per DP, tokens per batch,
#: TFLOPs per GPU, BF16 MFU (%); every figure checked against the paper's text ("Table 4 Scaling configurations and
#: MFU for each stage of Llama 3 405B pre-training"), whose third row prints DP = 4.
LLAMA3_TABLE_4 = (
    (8192, 8, 1, 16, 64, 8192, 32, 16e6, 430, 43),
    (16384, 8, 1, 16, 128, 8192, 16, 16e6, 400, 41),
    (16384, 8, 16, 16, 4, 131072, 16, 16e6, 380, 38),
)


def test_llama3_table_4_mfu_and_its_third_row() -> None:
    """Each row's MFU is its TFLOPs per GPU over the H100's 989 TFLOPS (within a point); row 3's DP = 4 cannot be.

    16,384 GPUs over TP·CP·PP = 2,048 is DP = 8, and 8 × 16 × 131,072 = 16.8M tokens is its batch.
    """
    peak = float(Hardware["H100"].peak_flops.m_as("TFLOP/s"))
    for gpus, tp, cp, pp, dp, seq, per_dp, tokens, tflops, mfu in LLAMA3_TABLE_4:
        assert 100 * tflops / peak == pytest.approx(mfu, abs=1)
        assert gpus // (tp * cp * pp) * per_dp * seq == pytest.approx(tokens, rel=0.05)
        if dp != gpus // (tp * cp * pp):
            assert (gpus, dp) == (16384, 4)
            assert dp * per_dp * seq == pytest.approx(tokens / 2, rel=0.05)  # half the batch: DP is 8


def test_jax_scaling_book_44_days_on_tpu_v5p() -> None:
    """Llama 3 70B on 15T tokens, 6·N·D FLOPs on 8,960 TPU v5p at 40 % MFU: about 44 days at the catalog's 459 TFLOPS."""
    peak = float(Hardware["TPU_V5P"].peak_flops.m_as("FLOP/s"))
    assert 6 * 70e9 * 15e12 / (8960 * peak * 0.4) / DAY == pytest.approx(44, abs=0.5)


def test_hardware_links_per_node() -> None:
    """NVLink per GPU and direction (half the datasheet's both-ways figure), network per GPU, eight GPUs a node."""
    expected = {"A100_80GB": (300, 25), "A100_40GB": (300, 25), "H100": (450, 50), "H200": (450, 50),
                "B200": (900, 50)}  # fmt: skip
    for key, (link, network) in expected.items():
        node = Hardware[key]
        assert node.link_bandwidth == Q_(link, "GB/s")
        assert node.network_bandwidth == Q_(network, "GB/s")
        assert node.node_devices == 8
        assert node.node_name.startswith("DGX")
        assert node.link_source.startswith("https://")


def test_a_device_without_links_is_not_timed_and_says_why() -> None:
    """On a TPU v5p (no links in the catalog) the layout still shows its memory; the time names what it needs."""
    s = Scenarios["Gpt3_175BKorthikantiTable5OnA100"]
    tpu = s.variant(layout=s.layout.variant(state=s.layout.state.variant(hardware=Hardware["TPU_V5P"])))
    assert "not timed: the time needs hardware.network_bandwidth (Google TPU v5p gives none)" in repr(tpu)
    assert tpu.companion_chart() is None
    assert tpu._repr_html_().count('<img class="msn-chart"') == 1  # the memory bar alone
    assert s.companion_chart() is not None


def test_a_mamba_2_hybrid_is_refused_by_name() -> None:
    """Every layer is timed as attention and an MLP: Bamba 9B's Mamba-2 layers are refused naming the layout."""
    with pytest.raises(FieldError, match=r"TrainingTimeScenario\.layout: models Bamba 9B, whose layers are not all"):
        TrainingTimeScenario(layout=Scenarios.Bamba9BZero3On8H100, global_batch_size=64)


def test_a_workload_without_its_own_layer_is_timed_at_the_activations_mlp_width() -> None:
    """GPT-3 175B as the catalog gives it (no architecture fields): 2·12·h² + 4·s·h FLOPs per token and layer.

    h = 12,288, s = 2,048: 24 · 150,994,944 + 4 · 2,048 · 12,288 = 3,724,541,952 with f = 4·h; with f = 2·h the
    MLP holds 2·2·h² and the layer 8·h²: 16 · 150,994,944 + 100,663,296 = 2,516,582,400.
    """
    layout = Scenarios["Gpt3_175BKorthikantiTable3OnA100"]
    assert layout.workload.reference_style
    assert TrainingTimeScenario(layout=layout, global_batch_size=64).layer_forward_flops_per_token == 3_724_541_952
    narrow = layout.variant(activations=layout.activations.variant(ffn_multiple=2))
    assert TrainingTimeScenario(layout=narrow, global_batch_size=64).layer_forward_flops_per_token == 2_516_582_400


def test_the_time_of_a_run_that_does_not_fit_says_so() -> None:
    """GPT-3 175B on one A100 (t = p = 1, b = 1): its 12.39 s carries the run's 3360 % of the device, refused as ok."""
    s = Scenarios["Gpt3_175BKorthikantiTable5OnA100"]
    one = s.variant(layout=s.layout.variant(pipeline_parallel=1, interleave=1, tensor_parallel=1,
                                            sequence_parallel=False), global_batch_size=1)  # fmt: skip
    assert not one.layout.training_fits
    assert repr(one).endswith("most of it compute; a run that does not fit: a device needs 3360 % of its memory>")
    assert one.headline().verdict.ok is False
    assert repr(s).endswith("MFU 54.3 %; most of it compute>")  # Table 3's layout fits


def test_a_global_batch_sweep_beside_a_layout_sweep_must_form_one_grid() -> None:
    """B of 3 values with N_d of 2: a raw NumPy ValueError before; refused naming global_batch_size now."""
    layout = Scenarios["Gpt3_175BKorthikantiTable5OnA100"].layout.variant(data_parallel=[1, 2])
    with pytest.raises(
        FieldError, match=r"global_batch_size: .* global_batch_size \(3,\), layout\.data_parallel \(2,\)"
    ):
        TrainingTimeScenario(layout=layout, global_batch_size=[64, 128, 192])
    paired = TrainingTimeScenario(layout=layout, global_batch_size=[64, 128])  # 64 micro-batches each
    assert paired.micro_batches.tolist() == [64.0, 64.0]


def _selective(key: str, *, t: int, attention: str = "fused", seq: int = 4096) -> TrainingTimeScenario:
    """A model from its config.json, selective recomputation and SP at t, one sequence per micro-batch, B = 8."""
    w = Workloads.configuration(key)
    state = TrainingStateFitScenario(workload=w, hardware=Hardware["H100"], bytes_per_value=2,
                                     optimizer_bytes_per_parameter=8, master_bytes_per_parameter=4)  # fmt: skip
    acts = ActivationMemoryScenario(workload=w, micro_batch=1, seq_len=seq, attention=attention)
    layout = ParallelTrainingScenario(state=state, activations=acts, recompute="selective", tensor_parallel=t,
                                      sequence_parallel=t > 1)  # fmt: skip
    return TrainingTimeScenario(layout=layout, global_batch_size=8)


def test_latent_attention_and_dense_first_layers_count_their_own_matrices() -> None:
    """DeepSeek-V3: 3 dense layers and 58 expert layers, each with latent attention's seven matrices.

    Latent attention: the query latent (h·r_q) and its decompression (r_q·a·d_qk), the key/value latent (h·r_kv),
    the rotary key (h·d_rope), keys and values from the latent (r_kv·a·d_nope, r_kv·a·d_v), the output (a·d_v·h).
    A dense layer's MLP is 3·h·18432; an expert layer's is the router (E·h) and 8 routed + 1 shared expert of
    3·h·2048. The score products meet s keys over A = a·(d_qk + d_v)/2 = 128·320/2.
    """
    s = _selective("deepseek-v3", t=8)
    h, a, r_q, r_kv, rope, nope, v = 7168, 128, 1536, 512, 64, 128, 128
    attention = h * r_q + r_q * a * (nope + rope) + h * r_kv + h * rope + r_kv * a * (nope + v) + a * v * h
    dense, moe = attention + 3 * h * 18432, attention + 256 * h + 9 * 3 * h * 2048
    assert s._env.values["layer_matrix_parameters"] == pytest.approx((3 * dense + 58 * moe) / 61, rel=1e-12)
    assert s._env.values["attention_width"] == a * (nope + rope + v) / 2
    per_token = 2 * (3 * dense + 58 * moe) / 61 + 4 * 4096 * a * 320 / 2
    assert float(s.layer_forward_flops_per_token) == pytest.approx(per_token, rel=1e-12)
    # the layers' matrices are the active parameters less the lookups, the norms and the output layer
    w = s.layout.state.workload
    norms = 61 * (2 * h + r_q + r_kv) + h
    assert 3 * dense + 58 * moe == w.active_parameters - 2 * 129280 * h - norms


def test_a_fused_kernel_skips_what_a_sliding_window_masks() -> None:
    """Gemma 3 27B at s = 4096: 52 local layers meet 1,024 keys, 10 global ones 4,096; eager multiplies them all."""
    fused, eager = _selective("gemma-3-27b", t=8), _selective("gemma-3-27b", t=8, attention="eager")
    assert float(fused.attended_keys) == pytest.approx((52 * 1024 + 10 * 4096) / 62, rel=1e-12)  # 1,519.5
    assert float(eager.attended_keys) == 4096
    assert fused.model_flops_per_iteration < eager.model_flops_per_iteration
    assert "sliding windows, a fused kernel" in fused.to_text()
    gpt = Scenarios["Gpt3_175BKorthikantiTable5OnA100"]
    assert float(gpt.attended_keys) == 2048  # no window: the whole sequence, Korthikanti's count


def test_isca_25_table_2_training_flops_per_token() -> None:
    """DeepSeek's ISCA '25 paper, Table 2 (s = 4096): 250 GFLOP per token for DeepSeek-V3, 2448 for Llama 3.1 405B.

    Our count at s = 4096 gives 281.2 and 2524.0 with the causal square counted whole (Korthikanti's convention,
    which the derivation states); without the masked half of the score products (6·s·A·L per token) they are
    250.4 (0.2 % from the table) and 2473.2 (1.0 %): the table skips the masked half. Latent attention's seven
    matrices, the dense first layers and the 9 of 257 experts a token uses are what make V3's figure.
    """
    for key, published, rel in (("deepseek-v3", 250e9, 0.003), ("llama-3.1-405b", 2448e9, 0.011)):
        s = _selective(key, t=8)
        layers = s.layout.state.workload.layers
        masked_half = 6 * 4096 * s._env.values["attention_width"] * layers
        assert float(s.model_flops_per_token) - masked_half == pytest.approx(published, rel=rel), key
