"""The model's scenario of the step ``measure_step`` measures: the same sizes, read without transformers."""

from __future__ import annotations

from typing import Any

__all__ = ["hf_config_dict", "measured_step_scenario"]


def hf_config_dict(config: dict[str, Any]) -> dict[str, Any]:
    """The ``config.json`` keys of the small model ``measure_step`` builds (dropout 0), without transformers."""
    if config["model_type"] == "gpt2":
        return {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": config["hidden"],
                "n_head": config["heads"], "n_layer": config["layers"], "n_positions": config["seq_len"],
                "vocab_size": config["vocab"], "resid_pdrop": 0.0, "attn_pdrop": 0.0, "embd_pdrop": 0.0}  # fmt: skip
    return {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": config["hidden"],
            "intermediate_size": config["ffn"], "num_attention_heads": config["heads"],
            "num_key_value_heads": config["kv_heads"], "num_hidden_layers": config["layers"],
            "vocab_size": config["vocab"], "max_position_embeddings": max(config["seq_len"], 64),
            "tie_word_embeddings": False, "attention_dropout": 0.0}  # fmt: skip


def measured_step_scenario(config: dict[str, Any]) -> Any:
    """The scenario of one step of ``measure_step``'s model on one CPU device (its configuration's keys).

    AdamW's two moments follow the parameters' dtype (PyTorch keeps them in it), no master copy; the
    activations are transformers' own rows at the parameters' dtype; recomputation is per layer (``"full"``).
    """
    from mlsysim_nb.kinds.activation.model import ActivationMemoryScenario
    from mlsysim_nb.kinds.parallel.model import ParallelTrainingScenario
    from mlsysim_nb.kinds.training.model import TrainingStateFitScenario
    from mlsysim_nb.records.workloads import Workload

    width = {"float32": 4, "bfloat16": 2}[config["dtype"]]
    workload = Workload.from_hf_config(hf_config_dict(config), name=f"small random {config['model_type']}")
    state = TrainingStateFitScenario(workload=workload, bytes_per_value=width, optimizer_bytes_per_parameter=2 * width)
    acts = ActivationMemoryScenario(workload=workload, micro_batch=config["micro_batch"], seq_len=config["seq_len"],
                                    precision_bytes=width, attention="fused" if config["attention"] == "sdpa" else
                                    "eager", implementation="transformers")  # fmt: skip
    return ParallelTrainingScenario(state=state, activations=acts, recompute="full" if config["recompute"] else "none",
                                    optimizer_implementation=config["optimizer_implementation"])  # fmt: skip
