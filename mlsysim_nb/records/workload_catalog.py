"""The catalog of workloads: the reference's models by name, and the real ones read from their ``config.json``."""

from __future__ import annotations

import functools
from typing import Any

from mlsysim_nb.records.models import configuration_keys, read_configuration
from mlsysim_nb.records.workloads import Workload

__all__ = ["Workloads"]


def _w(**kwargs: Any) -> Workload:
    return Workload(**kwargs)


class Workloads:
    """The workloads the named scenarios use, with the reference's numbers.

    >>> Workloads.GPT2_XL.layers
    48
    """

    GPT2_XL = _w(
        name="GPT-2 XL (1.5B)",
        parameters=1_500_000_000,
        layers=48,
        hidden_dim=1600,
        heads=25,
        context_length=1024,
        source="Radford et al. (2019), Language Models are Unsupervised Multitask Learners, Table 2",
    )
    GPT3_175B = _w(
        name="GPT-3 (175B)",
        parameters=175_000_000_000,
        layers=96,
        hidden_dim=12288,
        heads=96,
        context_length=2048,
        source="Brown et al. (2020), Language Models are Few-Shot Learners, Table 2.1",
    )
    LLAMA3_8B = _w(
        name="Llama 3.1 8B",
        parameters=8_030_000_000,
        layers=32,
        hidden_dim=4096,
        heads=32,
        kv_heads=8,
        context_length=131072,
        source="Llama Team (2024), The Llama 3 Herd of Models, Table 3",
    )
    LLAMA2_7B = _w(
        name="Llama 2 7B",
        parameters=7_000_000_000,
        layers=32,
        hidden_dim=4096,
        heads=32,
        context_length=4096,
        source="Touvron et al. (2023), Llama 2: Open Foundation and Fine-Tuned Chat Models, Table 1",
    )
    RESNET50 = _w(
        name="ResNet-50",
        parameters=25_557_032,
        layers=50,
        source="He et al. (2016); exact count from torchvision.models.resnet50 (1000-class head)",
    )
    HYPOTHETICAL_8B = _w(
        name="Hypothetical 8B transformer",
        parameters=8_000_000_000,
        layers=32,
        hidden_dim=4096,
        source="A round-number model for adapter arithmetic; no attention heads given",
    )

    @staticmethod
    def configuration(key: str) -> Workload:
        """A real model from its shipped ``config.json`` (exact parameters; see :mod:`mlsysim_nb.records.models`).

        >>> Workloads.configuration("llama-3.1-8b").parameters
        <Quantity(8030261248, 'count')>
        >>> Workloads.configuration("mixtral-8x7b").active_parameters
        <Quantity(12879925248, 'count')>
        """
        return _configuration(key)

    @staticmethod
    def configurations() -> dict[str, Workload]:
        """Every shipped configuration by key, those waiting in ``pending/`` left out.

        GPT-2 XL, Llama 2 and 3.1, Mistral, Mixtral, Qwen2.5, Qwen3 and Qwen3-MoE, Gemma 3, gpt-oss, DeepSeek-V3.
        """
        return {key: _configuration(key) for key in configuration_keys()}

    @classmethod
    def all(cls) -> dict[str, Workload]:
        """Every catalog workload by its attribute name."""
        return {k: v for k, v in vars(cls).items() if isinstance(v, Workload)}


@functools.cache
def _configuration(key: str) -> Workload:
    """The workload of a shipped configuration, read once."""
    data = read_configuration(key)
    return Workload.from_hf_config(data["config"], name=data["name"], source=data["source"])
