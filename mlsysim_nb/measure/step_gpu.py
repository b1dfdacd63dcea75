r"""The step ``measure_step`` measures, on a CUDA device: allocated, reserved, and what the driver sees.

Run where a GPU is::

    python -m mlsysim_nb.measure.step_gpu --model-type llama --dtype bfloat16 --seq-len 1024 --vocab 32000 \\
        --snapshot step.pickle

It takes one AdamW step outside the measurement (so the moments exist), then one under
``torch.cuda.memory._record_memory_history`` and prints, as JSON: the model's predicted peak and its phase;
PyTorch's peak allocated bytes (``torch.cuda.max_memory_allocated``: the tensors, what the CPU measurement
and the model count); its peak reserved bytes (``max_memory_reserved``: the caching allocator's segments,
with their free blocks: the fragmentation and reserve a CPU measurement cannot show); and the driver's view
(``torch.cuda.mem_get_info``: the device's total less its free memory at the step's end, which adds the CUDA
context and the libraries' workspaces, and another process's memory). ``--snapshot`` writes the allocator's
history (``torch.cuda.memory._dump_snapshot``) for https://pytorch.org/memory_viz.

Without a CUDA device it says so and measures the same step on the CPU with :func:`measure_step` (reserved
and driver figures are then ``null``). Arguments are checked as ``measure_step`` checks them, before
anything is imported or allocated.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from mlsysim_nb.errors import FieldError, MemoryLimitError
from mlsysim_nb.measure.guard import DEFAULT_MEMORY_LIMIT
from mlsysim_nb.measure.step import check_step

__all__ = ["main", "measure_step_gpu", "parser"]

_OWNER = "measure_step_gpu"
_SIZES = ("hidden", "heads", "kv_heads", "ffn", "layers", "vocab", "seq_len", "micro_batch", "accumulation")


def parser() -> argparse.ArgumentParser:
    """The command line: measure_step's arguments, spelled with dashes."""
    p = argparse.ArgumentParser(prog="python -m mlsysim_nb.measure.step_gpu", description=__doc__.split("\n")[0])
    p.add_argument("--model-type", default="llama")
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--attention", default="sdpa")
    defaults = {"hidden": 128, "heads": 4, "kv_heads": 2, "ffn": 256, "layers": 2, "vocab": 1000, "seq_len": 64,
                "micro_batch": 2, "accumulation": 1}  # fmt: skip
    for name in _SIZES:
        p.add_argument(f"--{name.replace('_', '-')}", type=int, default=defaults[name])
    p.add_argument("--recompute", action="store_true")
    p.add_argument("--optimizer-implementation", default="foreach")
    p.add_argument("--memory-limit", default=DEFAULT_MEMORY_LIMIT)
    p.add_argument("--random-state", type=int, default=0)
    p.add_argument("--snapshot", default=None, help="write the allocator's history here (a pickle)")
    p.add_argument("--cpu", action="store_true", help="measure on the CPU even where a GPU is")
    return p


def measure_step_gpu(args: dict[str, Any], *, snapshot: str | None = None, cpu: bool = False) -> dict[str, Any]:
    """Measure one step (``args``: measure_step's keywords) on CUDA, or on the CPU without it; a JSON-ready report."""
    config, random_state = check_step(_OWNER, **args)
    from mlsysim_nb.measure.step import step_scenario

    scenario = step_scenario(config)
    timeline = scenario.step_timeline(config["accumulation"])
    report: dict[str, Any] = {"config": config, "predicted_peak": timeline.peak, "predicted_phase": timeline.peak_phase,
                              "predicted_sum": timeline.sum_of_parts}  # fmt: skip
    import torch

    if cpu or not torch.cuda.is_available():
        from mlsysim_nb.measure.step import measure_step

        measured = measure_step(**args)
        report.update(device="cpu", note="no CUDA device: PyTorch's CPU memory profiler, tensors only",
                      allocated_peak=measured.peak, measured_phase=measured.peak_phase, reserved_peak=None,
                      driver_used=None, snapshot=None)  # fmt: skip
        return report
    from mlsysim_nb.measure.step import build_step

    step, _ = build_step(config, random_state, device="cuda")
    step(mark=False)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    torch.cuda.memory._record_memory_history(max_entries=1_000_000)  # noqa: SLF001 - PyTorch's documented tool
    step(mark=True)
    torch.cuda.synchronize()
    if snapshot:
        torch.cuda.memory._dump_snapshot(snapshot)  # type: ignore[no-untyped-call]  # noqa: SLF001
    torch.cuda.memory._record_memory_history(enabled=None)  # noqa: SLF001
    free, total = torch.cuda.mem_get_info()
    report.update(device=torch.cuda.get_device_name(), note="CUDA caching allocator", at_rest=before,
                  allocated_peak=torch.cuda.max_memory_allocated(), reserved_peak=torch.cuda.max_memory_reserved(),
                  driver_used=total - free, device_total=total, snapshot=snapshot)  # fmt: skip
    return report


def main(argv: list[str] | None = None) -> int:
    """Parse, check, measure, print the report as JSON; a bad argument prints its rule and exits with 2."""
    ns = vars(parser().parse_args(argv))
    snapshot, cpu = ns.pop("snapshot"), ns.pop("cpu")
    try:
        report = measure_step_gpu(ns, snapshot=snapshot, cpu=cpu)
    except (FieldError, MemoryLimitError) as err:
        sys.stderr.write(f"error: {err}\n")
        return 2
    sys.stdout.write(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
