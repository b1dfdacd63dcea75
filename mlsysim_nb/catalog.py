"""``Scenarios``: the reference's 22 named cases, and two many-device cases of this package.

The 22 cases of the reference implementation (mlsysim) keep its names and inputs; the two
many-device cases are ``Gpt3_175BKorthikantiTable3OnA100`` and ``Llama3_8BZero3On8H100``.

Cases are built on first use and cached. Where a training case carries saved
activations, they are taken from the matching activation case, so the
numbers visibly come from one another (the reference states the same values
as literals).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from mlsysim_nb.display import RichRepr
from mlsysim_nb.hardware import Hardware
from mlsysim_nb.scenarios import ActivationMemoryScenario, TrainingStateFitScenario
from mlsysim_nb.units import Q_
from mlsysim_nb.workloads import Workloads

__all__ = ["ScenarioCatalog", "Scenarios"]

Factory = Callable[["ScenarioCatalog"], Any]


def _case(kind: type, title: str, description: str, **fields: Any) -> Factory:
    """A named case, built on first use.

    A field given as a function of the catalog is read from another case then, and a hardware given by
    key is looked up then, so importing the catalog loads no TOML.
    """

    def build(cat: ScenarioCatalog) -> Any:
        values = {k: (v(cat) if callable(v) else v) for k, v in fields.items()}
        if isinstance(values.get("hardware"), str):
            values["hardware"] = Hardware[values["hardware"]]
        return kind(name=title, description=description, **values)

    return build


_MIXED_ADAM = {"bytes_per_value": 2, "optimizer_bytes_per_parameter": 8, "master_bytes_per_parameter": 4}
_FP32_ADAM = {"bytes_per_value": 4, "optimizer_bytes_per_parameter": 8}


def _gpt2_train(title: str, description: str, **kw: Any) -> Factory:
    fields = {"workload": Workloads.GPT2_XL, "hardware": "H100", **_MIXED_ADAM, **kw}
    return _case(TrainingStateFitScenario, title, description, **fields)


def _gpt2_acts(title: str, description: str, **kw: Any) -> Factory:
    fields = {"micro_batch": 32, "seq_len": 1024, "precision_bytes": 2, "normalization_per_layer": Q_(10, "MB")}
    return _case(ActivationMemoryScenario, title, description, workload=Workloads.GPT2_XL, **{**fields, **kw})


def _resnet(title: str, description: str, **kw: Any) -> Factory:
    fields = {"workload": Workloads.RESNET50, "hardware": "H100", **_FP32_ADAM, **kw}
    return _case(TrainingStateFitScenario, title, description, **fields)


def _llama3(title: str, description: str, **kw: Any) -> Factory:
    fields = {"workload": Workloads.LLAMA3_8B, "hardware": "H100", **_MIXED_ADAM, "batch_size": 4,
              "activations": lambda c: c.Llama3_8BBatch4Activations.per_token_activations, **kw}  # fmt: skip
    return _case(TrainingStateFitScenario, title, description, **fields)


def _adapters(title: str, description: str, rank: int) -> Factory:
    shape = {"adapter_rank": rank, "adapted_matrices": 2, "adapter_in_dim": 4096, "adapter_out_dim": 4096}
    return _case(
        TrainingStateFitScenario, title, description, workload=Workloads.HYPOTHETICAL_8B, **_MIXED_ADAM, **shape
    )


def _gpt3(title: str, micro_batch: int) -> Factory:
    description = "Full-context GPT-3 activations per replica, with and without recomputation."
    return _case(ActivationMemoryScenario, title, description, workload=Workloads.GPT3_175B, micro_batch=micro_batch)


_CASES: dict[str, Factory] = {
    # -- training state against memory
    "Gpt2Fp32AdamOnH100": _gpt2_train(
        "GPT-2 XL trained in FP32 with Adam, against one H100's memory",
        "Weights, gradients and two Adam values per parameter, all FP32, before activations.",
        bytes_per_value=4,
        master_bytes_per_parameter=None,
    ),
    "Gpt2Fp32AdamBatch32OnH100": _gpt2_train(
        "GPT-2 XL's FP32 Adam training step at batch 32 on one H100",
        "FP32 weights, gradients and Adam moments, plus FP32 activations at batch 32.",
        bytes_per_value=4,
        master_bytes_per_parameter=None,
        batch_size=32,
        activations=lambda c: c.Gpt2XlBatch32ActivationsFp32.activations("none"),
    ),
    "Gpt2MixedPrecisionAdamOnH100": _gpt2_train(
        "GPT-2 XL trained in mixed precision with Adam on one H100, batch 32",
        "16-bit weights and gradients, an FP32 master copy, two FP32 Adam moments (16 B per parameter), "
        "and 16-bit activations at batch 32 and 1,024 tokens.",
        batch_size=32,
        activations=lambda c: c.Gpt2XlBatch32Activations.activations("none"),
    ),
    "Gpt2MixedPrecisionFlashAttentionOnH100": _gpt2_train(
        "GPT-2 XL in mixed precision at batch 32 on one H100, attention scores not stored",
        "16 B per parameter of state and the per-token activations only (FlashAttention).",
        batch_size=32,
        activations=lambda c: c.Gpt2XlBatch32Activations.per_token_activations,
    ),
    "Gpt2MixedPrecisionTwoMicroBatchesOnH100": _gpt2_train(
        "GPT-2 XL's batch of 32 as two accumulated micro-batches of 16 on one H100",
        "Mixed precision, FlashAttention, and 16 sequences' activations resident at a time.",
        batch_size=16,
        activations=lambda c: c.Gpt2XlMicroBatch16Activations.per_token_activations,
    ),
    "Gpt2MixedPrecisionSegmentCheckpointedOnH100": _gpt2_train(
        "GPT-2 XL's batch of 32 with segment checkpointing on one H100",
        "Mixed precision, FlashAttention, and 8 kept segment inputs plus one rebuilt segment.",
        batch_size=32,
        activations=lambda c: c.Gpt2XlBatch32SegmentCheckpointed.checkpointed_activations,
    ),
    "Llama2_7BMixedPrecisionAdam": _case(
        TrainingStateFitScenario,
        "A 7B model trained in mixed precision with Adam, against one H100",
        "16 B per parameter before activations, against the 2 B per parameter it serves from.",
        workload=Workloads.LLAMA2_7B,
        hardware="H100",
        **_MIXED_ADAM,
    ),
    "Llama3_8BFullFineTuneOnH100": _llama3(
        "Full fine-tuning of Llama 3.1 8B on one H100",
        "Mixed-precision Adam on every parameter plus activations at batch 4 and 2,048 tokens.",
    ),
    "Llama3_8BLoraOnH100": _llama3(
        "Rank-16 LoRA fine-tuning of Llama 3.1 8B on one H100",
        "Frozen 16-bit base weights; rank-16 adapters on every query and value projection carry the "
        "mixed-precision Adam state; the same activations.",
        # 32 layers x (q: 16*(4096+4096) + v: 16*(4096+1024)) = 6,815,744 with GQA's narrower v projection
        adapter_parameters=6_815_744,
    ),
    "Rank16AdaptersOnHypothetical8B": _adapters(
        "Rank-16 low-rank adapters on a hypothetical 8B-parameter transformer, mixed-precision Adam",
        "Two 4,096-by-4,096 matrices adapted in each of 32 layers; 2 B per frozen parameter, "
        "16 B per trained parameter, before activations.",
        16,
    ),
    "Rank32AdaptersOnHypothetical8B": _adapters(
        "The same adapters at rank 32",
        "Adapter state is linear in the rank; the frozen base is unchanged.",
        32,
    ),
    "ResNet50Fp32SgdMomentum": _resnet(
        "ResNet-50 trained in FP32 with SGD and momentum",
        "Weights, gradients and one momentum value per parameter, all FP32, before activations.",
        optimizer_bytes_per_parameter=4,
        hardware=None,
    ),
    "ResNet50Fp32AdamBatch64": _resnet(
        "ResNet-50 trained in FP32 with Adam at batch 64, low activation estimate",
        "Weights, gradients, two Adam values per parameter, and 8 GB of saved activations for "
        "224x224 images, against one H100's memory.",
        batch_size=64,
        activations=Q_(8, "GB"),
    ),
    "ResNet50Fp32AdamBatch64HighActivations": _resnet(
        "ResNet-50 trained in FP32 with Adam at batch 64, high activation estimate",
        "The same training state with 12 GB of saved activations.",
        batch_size=64,
        activations=Q_(12, "GB"),
    ),
    "ResNet50Fp32AdamBatch512": _resnet(
        "ResNet-50 trained in FP32 with Adam at batch 512, low activation estimate",
        "The batch-64 state with its saved activations scaled linearly to batch 512.",
        batch_size=512,
        activations=lambda c: c.ResNet50Fp32AdamBatch64.activations_at(512),
    ),
    # -- activation memory
    "Gpt3ActivationsMicrobatch4": _gpt3("175B activations at four sequences per micro-batch", 4),
    "Gpt3ActivationsMicrobatch1": _gpt3("175B activations at one sequence per micro-batch", 1),
    "Gpt2XlBatch32Activations": _gpt2_acts(
        "GPT-2 XL's saved activations at batch 32 and 1,024 tokens, 16-bit",
        "Korthikanti et al. per-layer bytes with no recomputation, and the per-layer line items "
        "(projections, feed-forward expansion, attention scores, normalization).",
    ),
    "Gpt2XlBatch32ActivationsFp32": _gpt2_acts(
        "GPT-2 XL's saved activations at batch 32 and 1,024 tokens, FP32",
        "The same tensors stored in 32 bits.",
        precision_bytes=4,
    ),
    "Gpt2XlMicroBatch16Activations": _gpt2_acts(
        "GPT-2 XL's saved activations for a micro-batch of 16 sequences of 1,024 tokens, 16-bit",
        "Half the batch resident at a time, accumulated twice per update.",
        micro_batch=16,
    ),
    "Gpt2XlBatch32SegmentCheckpointed": _gpt2_acts(
        "GPT-2 XL's batch-32 activations, checkpointed in 8 segments of 6 layers, scores not stored",
        "Each segment's 16-bit input is kept; the backward pass rebuilds one segment at a time.",
        checkpoint_segments=8,
    ),
    "Llama3_8BBatch4Activations": _case(
        ActivationMemoryScenario,
        "Llama 3.1 8B's saved activations at batch 4 and 2,048 tokens, 16-bit",
        "Per-token tensors only: fused attention keeps no score matrices.",
        workload=Workloads.LLAMA3_8B,
        micro_batch=4,
        seq_len=2048,
        precision_bytes=2,
    ),
}


class ScenarioCatalog(RichRepr):
    """Named scenarios, built on first use: ``Scenarios.Gpt2Fp32AdamOnH100``, ``Scenarios["..."]``."""

    def __init__(self, cases: dict[str, Factory]) -> None:
        self._cases = cases
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            if name not in self._cases:
                msg = f"no scenario {name!r}; known: {', '.join(self._cases)}"
                raise KeyError(msg)
            self._built[name] = self._cases[name](self)
        return self._built[name]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as err:
            raise AttributeError(str(err)) from None

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self._cases]

    def __iter__(self) -> Iterator[str]:
        return iter(self._cases)

    def __len__(self) -> int:
        return len(self._cases)

    def __contains__(self, name: object) -> bool:
        return name in self._cases

    def names(self, kind: type | None = None) -> list[str]:
        """Case names, optionally only those of one scenario class."""
        return [n for n in self._cases if kind is None or isinstance(self[n], kind)]

    def items(self) -> list[tuple[str, Any]]:
        """``(name, scenario)`` pairs, building every case."""
        return [(n, self[n]) for n in self._cases]

    def __repr__(self) -> str:
        return f"ScenarioCatalog({len(self)} scenarios: {', '.join(self._cases)})"

    def rows(self) -> list[list[str]]:
        """One row per case: name, class, title, one-line answer."""
        from mlsysim_nb.summary import summary_line

        return [[n, type(s).__name__, s.name, summary_line(s)] for n, s in self.items()]

    def _repr_text_(self) -> str:
        lines = [f"Scenarios: {len(self)} named cases"]
        lines += [f"  {name}  ({kind})\n      {title}" for name, kind, title, _ in self.rows()]
        return "\n".join(lines)

    def _markdown_rows(self) -> tuple[list[str], list[list[str]]]:
        return ["name", "class", "title", "answer"], self.rows()

    def _repr_html_(self) -> str:
        from mlsysim_nb.repr_html import catalog_html

        return catalog_html(f"Scenarios: {len(self)} named cases", ["name", "class", "title", "answer"], self.rows())


#: The named cases.
def _many_device_case(name: str) -> Factory:
    """A many-device case whose module (and its equations) loads when the case is first built."""

    def build(cat: ScenarioCatalog) -> Any:
        from mlsysim_nb.parallel import PARALLEL_CASES

        return PARALLEL_CASES[name](cat)

    return build


def _many_devices() -> dict[str, Factory]:
    names = ("Gpt3_175BKorthikantiTable3OnA100", "Llama3_8BZero3On8H100")
    return {name: _many_device_case(name) for name in names}


Scenarios = ScenarioCatalog({**_CASES, **_many_devices()})
