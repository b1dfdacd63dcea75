"""The time equations: how long one training iteration takes on a layout, and where the time goes.

The FLOPs are counted in :mod:`~mlsysim_nb.kinds.time.flops`, the communication per parallelism in
:mod:`~mlsysim_nb.kinds.time.communication`; this module adds up one iteration (per device, nothing overlapped
unless a field says so, as Megatron-LM ran these layouts):

* the pipeline's last stage paces the others: it holds ``L/p`` layers like every stage, and the output layer
  besides (Megatron-LM places it there), so every micro-batch's logits are its work too;
* matrix work at ``η_mm`` of the device's peak, each stage's ``L/p`` layers over its ``N_d·t`` devices, and then the
  matrix products' own memory traffic (their inputs, weights and outputs; forward once, backward twice, the
  rerun again) at ``η_mem`` of the bandwidth, not overlapped with their arithmetic, as Calculon's A100 system
  counts an operation (Isaev et al. 2023; systems/a100_80g.json, ``"processing_mode": "no_overlap"``);
* element-wise work (norms, residual adds, activation, softmax, dropout) at ``η_mem`` of the memory
  bandwidth: the bytes the layer table says each token moves (:mod:`~mlsysim_nb.kinds.time.table`),
  forward once, backward twice (it reads the output's gradient and the saved input, writes the input's
  gradient), and again for what recomputation reruns;
* the bubble of the interleaved schedule, ``(p − 1)/(m·n_micro)`` of the ideal time of a stage's layers
  (Narayanan et al. 2021, Sec. 2.2.2, with ``m`` virtual stages per device and ``n_micro`` micro-batches): the
  fill and the drain pass through the stages that hold no output layer;
* the data-parallel time left exposed, and the optimizer step at ``η_mem`` of the memory bandwidth (read the
  gradient, read and write the weights and the optimizer state).
"""

from __future__ import annotations

from mlsysim_nb.formula import Case
from mlsysim_nb.kinds.parallel.physics import EQUATIONS as PARALLEL_EQUATIONS
from mlsysim_nb.kinds.time.communication import DATA_PARALLEL, MODEL_PARALLEL
from mlsysim_nb.kinds.time.flops import ARITHMETIC
from mlsysim_nb.model.equations import Equations, defined
from mlsysim_nb.model.notation import RECORD_QUANTITIES, Quantity, quantity

__all__ = ["EQUATIONS", "NOTATION"]

_D = defined

_TIME = [
    _D(
        "compute_time",
        "tokens_per_iteration / devices / peak_flops * layers * (6 * layer_matrix_parameters / projection_share"
        " + 4 * attended_keys * attention_width * (1 / score_product_share + 2 / score_product_backward_share))",
        "The layers' arithmetic on one device, each class at its own share of the peak: the projections (forward, "
        "the input's and the weights' gradients), the attention scores' products (forward, and a backward of twice "
        "their FLOPs).",
        "s",
        note="Every stage holds L/p layers; the output layer is the last stage's own (t_out).",
        symbol="t_mm",
        label="compute",
        base="second",
    ),
    _D(
        "recompute_time",
        doc="Recomputation's arithmetic on one device, each class at its share of the peak.",
        unit="s",
        cases=(
            Case(
                "full recomputation: every layer's projections and score products again",
                "tokens_per_iteration / devices / peak_flops * layers * (2 * layer_matrix_parameters"
                " / projection_share + 4 * attended_keys * attention_width / score_product_share)",
                when="recomputes_layers",
            ),
            Case(
                "selective recomputation: the scores' products again",
                "tokens_per_iteration / devices / peak_flops * layers * 4 * attended_keys * attention_width"
                " / score_product_share",
                when="recomputes_scores",
            ),
            Case("no recomputation", "0"),
        ),
        symbol="t_rec",
        label="recompute",
        base="second",
    ),
    _D(
        "layer_elementwise_bytes",
        "sp_elementwise_bytes / sequence_shards + (tp_elementwise_bytes + score_elementwise_bytes * heads * sequence)"
        " / tensor_parallel",
        "Element-wise bytes one device moves per token and layer in the forward pass: the norms, adds and dropouts "
        "(split by t under SP), the activation and the attention scores (split by t).",
        "byte",
        symbol="e_layer",
        label="element-wise bytes per token and layer",
        base="byte",
    ),
    _D(
        "elementwise_traffic",
        doc="Element-wise bytes one device moves per iteration: forward once, backward twice, plus the rerun.",
        unit="GB",
        cases=(
            Case(
                "full recomputation: the whole forward again",
                "4 * layers / pipeline_parallel * tokens_per_iteration / data_parallel * layer_elementwise_bytes",
                when="recomputes_layers",
            ),
            Case(
                "selective recomputation: the scores' softmax and dropout again",
                "layers / pipeline_parallel * tokens_per_iteration / data_parallel * (3 * layer_elementwise_bytes"
                " + score_elementwise_bytes * heads * sequence / tensor_parallel)",
                when="recomputes_scores",
            ),
            Case(
                "no recomputation",
                "3 * layers / pipeline_parallel * tokens_per_iteration / data_parallel * layer_elementwise_bytes",
            ),
        ),
        symbol="T_ew",
        label="element-wise traffic",
        base="byte",
    ),
    _D(
        "layer_elementwise_weighted_bytes",
        "sp_elementwise_bytes / sequence_shards / sp_elementwise_share + (tp_elementwise_bytes / tp_elementwise_share"
        " + score_elementwise_bytes * heads * sequence / score_elementwise_share) / tensor_parallel",
        "Element-wise bytes per token and layer in the forward pass, each class over its share of the bandwidth "
        "(the norms, adds and dropouts; the activation; the scores' softmax and dropout).",
        "byte",
        symbol="e_layer/η",
        label="element-wise bytes per token and layer over their shares",
        base="byte",
    ),
    _D(
        "elementwise_time",
        doc="The element-wise work (memory-bound), each class at its share of the memory bandwidth: forward once, "
        "backward twice, plus the rerun.",
        unit="s",
        cases=(
            Case(
                "full recomputation: the whole forward again",
                "4 * layers / pipeline_parallel * tokens_per_iteration / data_parallel"
                " * layer_elementwise_weighted_bytes / bandwidth",
                when="recomputes_layers",
            ),
            Case(
                "selective recomputation: the scores' softmax and dropout again",
                "layers / pipeline_parallel * tokens_per_iteration / data_parallel * (3"
                " * layer_elementwise_weighted_bytes + score_elementwise_bytes * heads * sequence / tensor_parallel"
                " / score_elementwise_share) / bandwidth",
                when="recomputes_scores",
            ),
            Case(
                "no recomputation",
                "3 * layers / pipeline_parallel * tokens_per_iteration / data_parallel"
                " * layer_elementwise_weighted_bytes / bandwidth",
            ),
        ),
        symbol="t_ew",
        label="element-wise",
        base="second",
    ),
    _D(
        "layer_operand_bytes",
        "precision_bytes * (unsplit_operand_values + (split_operand_values + score_operand_values * heads * sequence)"
        " / tensor_parallel + layer_matrix_parameters / (tensor_parallel * micro_batch * sequence))",
        "Bytes one device's matrix products read and write per token and layer in the forward pass: the whole-width "
        "inputs and outputs, the sides t splits (and the scores, with eager attention), and the layer's weights "
        "once per micro-batch.",
        "byte",
        symbol="m_mm,layer",
        label="matrix operand bytes per token and layer",
        base="byte",
    ),
    _D(
        "output_operand_bytes",
        "precision_bytes * (hidden_dim + vocabulary / tensor_parallel + vocabulary * hidden_dim"
        " / (tensor_parallel * micro_batch * sequence))",
        "Bytes the output layer's product reads and writes per token on one device: its input of h, its v/t "
        "logits, and its weights once per micro-batch.",
        "byte",
        symbol="m_mm,out",
        label="output-layer operand bytes per token",
        base="byte",
    ),
    _D(
        "matrix_traffic",
        doc="Bytes one device's layers' matrix products move per iteration: forward once, backward twice (the input's "
        "gradient and the weights' gradient each read the saved input and the output's gradient), plus the rerun.",
        unit="GB",
        cases=(
            Case(
                "full recomputation: every layer's products again",
                "4 * tokens_per_iteration / data_parallel / pipeline_parallel * layers * layer_operand_bytes",
                when="recomputes_layers",
            ),
            Case(
                "selective recomputation: the scores' products again",
                "tokens_per_iteration / data_parallel / pipeline_parallel * layers * (3 * layer_operand_bytes"
                " + precision_bytes * (attention_operand_values + score_operand_values * heads * sequence)"
                " / tensor_parallel)",
                when="recomputes_scores",
            ),
            Case(
                "no recomputation",
                "3 * tokens_per_iteration / data_parallel / pipeline_parallel * layers * layer_operand_bytes",
            ),
        ),
        symbol="T_mm",
        label="matrix operand traffic",
        base="byte",
    ),
    _D(
        "matrix_operand_time",
        "matrix_traffic / (bandwidth * memory_share)",
        "The matrix products' own memory traffic at η_mem of the bandwidth, not overlapped with their arithmetic "
        "(Calculon's A100 system runs each operation's arithmetic and memory time back to back).",
        "s",
        symbol="t_mm,mem",
        label="matrix operands",
        base="second",
    ),
    _D(
        "output_layer_time",
        "tokens_per_iteration / (data_parallel * tensor_parallel) * 6 * vocabulary * hidden_dim"
        " / (peak_flops * output_share) + 3 * tokens_per_iteration / data_parallel * output_operand_bytes"
        " / (bandwidth * memory_share)",
        "The output layer on the pipeline's last stage, which holds it whole: its logits' products (forward, the "
        "input's and the weights' gradients) at η_out of the peak, and their operands at η_mem of the bandwidth.",
        "s",
        note="Every micro-batch passes the last stage, so it does this work besides its L/p layers and paces the "
        "pipeline (Megatron-LM places the output layer there); the embedding's lookup on the first stage is a "
        "gather, left out.",
        symbol="t_out",
        label="output layer",
        base="second",
    ),
    *MODEL_PARALLEL,
    _D(
        "pipeline_work_time",
        "compute_time + recompute_time + matrix_operand_time + elementwise_time + tensor_parallel_time"
        " + pipeline_transfer_time + expert_time + output_layer_time",
        "The last stage's work on its micro-batches, back to back: its layers and the output layer, the ideal "
        "pipeline's time (the slowest stage paces the others).",
        "s",
        symbol="t_ideal",
        label="ideal pipeline time",
        base="second",
    ),
    _D(
        "bubble_fraction",
        "(pipeline_parallel - 1) / (interleave * micro_batches)",
        "Idle share of the ideal time while the pipeline fills and drains: (p − 1)/(m·n_micro) for the interleaved "
        "schedule (m = 1: plain 1F1B).",
        symbol="β",
        label="bubble fraction",
    ),
    _D(
        "bubble_time",
        "bubble_fraction * (pipeline_work_time - output_layer_time)",
        "Time the last stage waits while the pipeline fills and drains through the other stages, which hold no "
        "output layer.",
        "s",
        symbol="t_bubble",
        label="bubble",
        base="second",
    ),
    *DATA_PARALLEL,
    _D(
        "optimizer_step_time",
        "update_bytes_per_parameter * trained_parameters / model_parallel / optimizer_shards"
        " / (bandwidth * memory_share)",
        "The optimizer step on one device's parameters, at η_mem of the memory bandwidth.",
        "s",
        symbol="t_opt",
        label="optimizer step",
        base="second",
    ),
    _D(
        "communication_time",
        "tensor_parallel_time + pipeline_transfer_time + expert_time + exposed_data_parallel_time",
        "Communication on the critical path: tensor-parallel, pipeline, expert and exposed data-parallel.",
        "s",
        symbol="t_comm",
        label="communication, exposed",
        base="second",
    ),
    _D(
        "iteration_time",
        "pipeline_work_time + bubble_time + exposed_data_parallel_time + optimizer_step_time",
        "One iteration: the ideal pipeline, its bubble, exposed data-parallel communication, the optimizer step.",
        "s",
        symbol="t_iter",
        label="iteration time",
        base="second",
    ),
    _D(
        "model_flops_utilization",
        "model_flops_per_iteration / (devices * peak_flops * iteration_time)",
        "MFU: the model's FLOPs per device-second over the peak.",
        symbol="MFU",
        label="model FLOPs utilization",
    ),
    _D(
        "hardware_flops_utilization",
        "hardware_flops_per_iteration / (devices * peak_flops * iteration_time)",
        "HFU: the FLOPs run, recomputation's included, per device-second over the peak.",
        symbol="HFU",
        label="hardware FLOPs utilization",
    ),
    _D(
        "tokens_per_second",
        "tokens_per_iteration / iteration_time",
        "Training throughput of the whole run.",
        symbol="r_tok",
        label="tokens per second",
    ),
    _D(
        "time_to_train",
        "train_tokens / tokens_per_iteration * iteration_time",
        "Time to train on a number of tokens at this iteration time.",
        "day",
        symbol="t_train",
        label="time to train",
        base="second",
    ),
]

#: The notation of the other names these equations define: the layer table's, the device's, flags, arguments.
NOTATION: dict[str, Quantity] = {
    # -- the layer table (kinds/time/table.py)
    "layer_matrix_parameters": quantity("P_mm", "", "matrix parameters a token multiplies, per layer on average"),
    "attention_width": quantity("A", "", "attention width a·d (latent attention: a·(d_qk + d_v)/2)"),
    "windowed_keys": quantity("s_W", "", "keys per query and layer a fused kernel meets under the windows"),
    "sp_elementwise_bytes": quantity("e_SP", "byte", "element-wise bytes per token and layer only SP splits"),
    "tp_elementwise_bytes": quantity("e_TP", "byte", "element-wise bytes per token and layer t splits"),
    "score_elementwise_bytes": quantity("e_score", "byte", "element-wise bytes per attention score"),
    "unsplit_operand_values": quantity("o_h", "", "matrix operand values per token and layer of width h"),
    "split_operand_values": quantity("o_t", "", "matrix operand values per token and layer t splits"),
    "attention_operand_values": quantity("o_att", "", "attention products' operand values per token and layer"),
    "score_operand_values": quantity("o_score", "", "matrix operand values per attention score"),
    "vocabulary": quantity("v", "", "vocabulary"),
    # -- the classes' achieved shares (kinds/time/efficiency.py: Calculon's A100 tables at each class's size,
    #    capped by the flat shares; the flat shares themselves when share_curves is "flat")
    "projection_share": quantity("η_proj", "", "projections' share of peak (at their fused operations' FLOPs)"),
    "score_product_share": quantity("η_score", "", "score products' share of peak, forward (at 2·b·s²·A/t FLOPs)"),
    "score_product_backward_share": quantity("η_score,bw", "", "score products' share of peak, backward"),
    "output_share": quantity("η_out", "", "output layer's share of peak (at 2·b·s·h·v/t FLOPs)"),
    "sp_elementwise_share": quantity("η_ew,SP", "", "norms' and adds' share of bandwidth (a norm's bytes)"),
    "tp_elementwise_share": quantity("η_ew,TP", "", "MLP activation's share of bandwidth (its kernel's bytes)"),
    "score_elementwise_share": quantity("η_ew,score", "", "softmax's share of bandwidth (the scores' bytes)"),
    # -- the device
    "peak_flops": RECORD_QUANTITIES["peak_flops"],
    "link_bandwidth": RECORD_QUANTITIES["link_bandwidth"],
    "network_bandwidth": RECORD_QUANTITIES["network_bandwidth"],
    # -- flags the fields set
    "windows_cut_scores": quantity("[W < s, fused]", "", "sliding windows a fused kernel skips"),
    "recomputes_layers": quantity("[rec = full]", "", "full recomputation"),
    "recomputes_layers_split": quantity("[rec = full, t > 1]", "", "full recomputation under tensor parallelism"),
    "recomputes_scores": quantity("[rec = selective]", "", "selective recomputation"),
    "tensor_split": quantity("[t > 1]", "", "tensor parallelism on"),
    "sequence_split": quantity("[SP, t > 1]", "", "sequence parallelism on"),
    "pipelined": quantity("[p > 1]", "", "pipeline parallelism on"),
    "data_split": quantity("[N_d > 1]", "", "data parallelism on"),
    "experts_split": quantity("[e > 1, E > 0]", "", "expert parallelism on"),
    "tensor_in_node": quantity("[t ≤ n_node]", "", "the t devices share a node"),
    "pipeline_in_node": quantity("[N_dev ≤ n_node]", "", "every stage shares a node"),
    "data_in_node": quantity("[N_d·t ≤ n_node]", "", "the data-parallel replicas share a node"),
    "experts_in_node": quantity("[e·t ≤ n_node]", "", "the expert-parallel devices share a node"),
    # -- the method's argument
    "train_tokens": quantity("D_train", "", "tokens to train on"),
}

#: The time equations, with the many-device equations they read.
EQUATIONS = Equations("the training-time equations", (*ARITHMETIC, *_TIME), NOTATION, includes=(PARALLEL_EQUATIONS,))
