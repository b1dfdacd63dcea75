"""The time equations: how long one training iteration takes on a layout, and where the time goes.

Arithmetic (Korthikanti et al. 2022, Appendix A; Narayanan et al. 2021, Sec. 5.1): a layer's forward pass
multiplies each of its matrix parameters once per token (2 FLOPs) and computes the attention scores and their
product with the values (``2·s·A`` FLOPs per token each); the backward pass does twice the forward's work;
the output layer adds ``2·v·h`` per token forward. For Korthikanti's GPT layer (``12·h²`` matrix parameters,
``A = h``) the model's FLOPs per iteration are ``72·B·s·L·h²·(1 + s/(6·h) + v/(12·h·L))``. Recomputation
runs a forward pass again: the whole layer (full), or the attention scores only (selective: the matrix
products ``Q·Kᵀ`` and scores·V, ``4·s·A`` FLOPs per token). Model FLOPs count the model's arithmetic once;
hardware FLOPs add what recomputation runs again.

Time (per device, nothing overlapped unless a field says so, as Megatron-LM ran these layouts):

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
* tensor (and sequence) parallelism: four all-reduces of ``s·b·h`` values per layer and micro-batch (two
  forward, two backward; with SP the same volume as all-gathers and reduce-scatters), six with full
  recomputation (its forward rerun all-reduces again), over the node's links at ``η_link`` when the ``t``
  devices sit in one node, else over the network at ``η_net``; under sequence parallelism the reduce-scatters
  and all-gathers cost ``κ`` times their ring volume (Calculon's NVLink: 1.5, an all-reduce 1);
* pipeline parallelism: each device sends one micro-batch's activations forward and their gradients
  backward per virtual stage, ``s·b·h/t`` values each (Narayanan et al. 2021, Sec. 4.1, the scatter/gather
  across the ``t`` links); the bubble of the interleaved schedule is ``(p − 1)/(m·n_micro)`` of the ideal time
  of a stage's layers (Narayanan et al. 2021, Sec. 2.2.2, with ``m`` virtual stages per device and ``n_micro``
  micro-batches): the fill and the drain pass through the stages that hold no output layer;
* data parallelism: the gradient reduction (ZeRO's traffic at stage 3) over the network, exposed, or hidden
  behind the backward pass as far as it lasts when overlapped; expert parallelism's all-to-alls, exposed;
* the optimizer step at ``η_mem`` of the memory bandwidth (read the gradient, read and write the weights and
  the optimizer state).
"""

from __future__ import annotations

from mlsysim_nb.formula import Case
from mlsysim_nb.kinds.parallel.physics import EQUATIONS as PARALLEL_EQUATIONS
from mlsysim_nb.model.equations import Equations, defined
from mlsysim_nb.model.notation import RECORD_QUANTITIES, Quantity, quantity

__all__ = ["EQUATIONS", "NOTATION"]

_D = defined

_ARITHMETIC = [
    _D(
        "micro_batches",
        "global_batch_size / (micro_batch * data_parallel)",
        "Micro-batches each pipeline runs per iteration: the global batch over b sequences times N_d replicas.",
        symbol="n_micro",
        label="micro-batches per iteration",
    ),
    _D(
        "tokens_per_iteration",
        "global_batch_size * sequence",
        "Tokens one iteration trains on: B sequences of s tokens.",
        symbol="N_tok",
        label="tokens per iteration",
    ),
    _D(
        "layer_forward_flops_per_token",
        "2 * layer_matrix_parameters + 4 * sequence * attention_width",
        "Forward FLOPs of one layer per token: 2 per matrix parameter, and 2·s·A each for the scores Q·Kᵀ and "
        "scores·V (a causal mask counted as the full square, as Korthikanti et al. 2022 count it).",
        symbol="f_layer",
        label="layer forward FLOPs per token",
    ),
    _D(
        "output_forward_flops_per_token",
        "2 * vocabulary * hidden_dim",
        "Forward FLOPs of the output layer per token: the logits over the vocabulary.",
        symbol="f_out",
        label="output-layer forward FLOPs per token",
    ),
    _D(
        "model_flops_per_token",
        "3 * (layers * layer_forward_flops_per_token + output_forward_flops_per_token)",
        "Model FLOPs per token: forward once, backward twice the forward.",
        note="For Korthikanti's GPT layer, 72·s·L·h²·(1 + s/(6·h) + v/(12·h·L)) per sequence.",
        symbol="F_model,tok",
        label="model FLOPs per token",
    ),
    _D(
        "model_flops_per_iteration",
        "model_flops_per_token * tokens_per_iteration",
        "Model FLOPs of one iteration (the numerator of MFU): the model's arithmetic, counted once.",
        symbol="F_model",
        label="model FLOPs per iteration",
    ),
    _D(
        "recompute_flops_per_token",
        doc="FLOPs recomputation runs again per token: its forward rerun.",
        cases=(
            Case(
                "full recomputation: every layer's forward again",
                "layers * layer_forward_flops_per_token",
                when="recomputes_layers",
            ),
            Case(
                "selective recomputation: the scores' matrix products again",
                "layers * 4 * sequence * attention_width",
                when="recomputes_scores",
            ),
            Case("no recomputation", "0"),
        ),
        note="Korthikanti et al.'s Table 5 counts 12·s·A per token and layer for selective recomputation, three "
        "times the 4·s·A its forward rerun multiplies.",
        symbol="F_rec,tok",
        label="recomputed FLOPs per token",
    ),
    _D(
        "hardware_flops_per_iteration",
        "(model_flops_per_token + recompute_flops_per_token) * tokens_per_iteration",
        "Hardware FLOPs of one iteration (the numerator of HFU): the model's, plus what recomputation reruns.",
        symbol="F_hw",
        label="hardware FLOPs per iteration",
    ),
]

_TIME = [
    _D(
        "compute_time",
        "tokens_per_iteration / devices / peak_flops * layers * (6 * layer_matrix_parameters / projection_share"
        " + 4 * sequence * attention_width * (1 / score_product_share + 2 / score_product_backward_share))",
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
                " / projection_share + 4 * sequence * attention_width / score_product_share)",
                when="recomputes_layers",
            ),
            Case(
                "selective recomputation: the scores' products again",
                "tokens_per_iteration / devices / peak_flops * layers * 4 * sequence * attention_width"
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
    _D(
        "collective_cost",
        doc="What a tensor-parallel collective costs against a ring all-reduce of the same tensor.",
        cases=(
            Case(
                "sequence parallelism: reduce-scatters and all-gathers, each at κ times its ring volume",
                "gather_scatter_cost",
                when="sequence_split",
            ),
            Case("all-reduces", "1"),
        ),
        symbol="κ_TP",
        label="collective cost multiple",
    ),
    _D(
        "tensor_bandwidth",
        doc="Bandwidth the tensor-parallel collectives get per device: the node's links when the t devices share "
        "a node, else the network.",
        unit="GB/s",
        cases=(
            Case("t devices in one node", "link_bandwidth * link_share", when="tensor_in_node"),
            Case("t devices across nodes", "network_bandwidth * network_share"),
        ),
        symbol="BW_TP",
        label="tensor-parallel bandwidth",
        base="byte/second",
    ),
    _D(
        "tensor_parallel_time",
        doc="Tensor- and sequence-parallel collectives per iteration on one device, exposed: four of s·b·h per "
        "layer and micro-batch, six with full recomputation, at κ_TP times an all-reduce's cost.",
        unit="s",
        cases=(
            Case(
                "full recomputation: the rerun forward's two again",
                "1.5 * collective_cost * micro_batches * layers / pipeline_parallel"
                " * tensor_parallel_traffic_per_layer / tensor_bandwidth",
                when="recomputes_layers_split",
            ),
            Case(
                "t > 1",
                "collective_cost * micro_batches * layers / pipeline_parallel * tensor_parallel_traffic_per_layer"
                " / tensor_bandwidth",
                when="tensor_split",
            ),
            Case("no tensor parallelism", "0"),
        ),
        symbol="t_TP",
        label="tensor-parallel communication",
        base="second",
    ),
    _D(
        "pipeline_bandwidth",
        doc="Bandwidth between neighbouring pipeline stages per device: the node's links when every stage shares "
        "a node, else the network.",
        unit="GB/s",
        cases=(
            Case("the stages in one node", "link_bandwidth * link_share", when="pipeline_in_node"),
            Case("the stages across nodes", "network_bandwidth * network_share"),
        ),
        symbol="BW_PP",
        label="pipeline bandwidth",
        base="byte/second",
    ),
    _D(
        "pipeline_transfer_time",
        doc="Point-to-point sends per iteration on one device: activations forward and gradients backward per "
        "virtual stage and micro-batch, s·b·h/t values each, exposed.",
        unit="s",
        cases=(
            Case(
                "p > 1",
                "2 * interleave * micro_batches * sequence * micro_batch * hidden_dim * precision_bytes"
                " / tensor_parallel / pipeline_bandwidth",
                when="pipelined",
            ),
            Case("no pipeline", "0"),
        ),
        symbol="t_p2p",
        label="pipeline transfers",
        base="second",
    ),
    _D(
        "expert_bandwidth",
        doc="Bandwidth the experts' all-to-alls get per device: the node's links when the e·t devices share a "
        "node, else the network.",
        unit="GB/s",
        cases=(
            Case("e·t devices in one node", "link_bandwidth * link_share", when="experts_in_node"),
            Case("across nodes", "network_bandwidth * network_share"),
        ),
        symbol="BW_EP",
        label="expert-parallel bandwidth",
        base="byte/second",
    ),
    _D(
        "expert_time",
        doc="Expert parallelism's all-to-alls per iteration on one device, exposed.",
        unit="s",
        cases=(
            Case(
                "e > 1",
                "micro_batches * layers / pipeline_parallel * expert_all_to_all_traffic_per_layer / expert_bandwidth",
                when="experts_split",
            ),
            Case("no expert parallelism", "0"),
        ),
        symbol="t_EP",
        label="expert all-to-all",
        base="second",
    ),
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
    _D(
        "data_bandwidth",
        doc="Bandwidth the data-parallel reduction gets per device: the node's links when the N_d·t devices share "
        "a node, else the network.",
        unit="GB/s",
        cases=(
            Case("N_d·t devices in one node", "link_bandwidth * link_share", when="data_in_node"),
            Case("across nodes", "network_bandwidth * network_share"),
        ),
        symbol="BW_DP",
        label="data-parallel bandwidth",
        base="byte/second",
    ),
    _D(
        "data_parallel_time",
        doc="The gradient reduction (and ZeRO's gathers) per iteration on one device.",
        unit="s",
        cases=(
            Case("N_d > 1", "data_parallel_traffic / data_bandwidth", when="data_split"),
            Case("one replica", "0"),
        ),
        symbol="t_DP",
        label="data-parallel communication",
        base="second",
    ),
    _D(
        "exposed_data_parallel_time",
        doc="The data-parallel time left on the critical path.",
        unit="s",
        cases=(
            Case(
                "overlapped: hidden behind the backward pass's matrix work as far as it lasts",
                "max(0, data_parallel_time - 2 / 3 * compute_time)",
                when="data_parallel_overlap",
            ),
            Case("exposed", "data_parallel_time"),
        ),
        symbol="t_DP,exp",
        label="data-parallel communication, exposed",
        base="second",
    ),
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
    "layer_matrix_parameters": quantity("P_mm", "", "matrix parameters a token multiplies per layer"),
    "attention_width": quantity("A", "", "attention width a·d"),
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
EQUATIONS = Equations("the training-time equations", (*_ARITHMETIC, *_TIME), NOTATION, includes=(PARALLEL_EQUATIONS,))
