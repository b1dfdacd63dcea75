"""Figures drawn from the memory model: ZeRO's partition, pipeline timelines, memory over one step.

Each figure is two functions: a pure one that computes its data from a scenario's public numbers (or, for
the pipeline, from the schedule's rules), and one that draws that data with matplotlib's object-oriented
API on a white, fixed-dpi :class:`~matplotlib.figure.Figure` (no ``pyplot`` state). Tests assert on the
data and on the drawn artists, not on pixels.

* :func:`zero_partition` / :func:`zero_partition_figure`: what each ZeRO stage (Rajbhandari et al. 2020,
  Sec. 5 and Figure 1) shards across the ``N_d`` data-parallel devices, with the bytes per device of each
  part read from the scenario (``weights_per_device``, ``gradients_per_device``, ...).
* :func:`pipeline_schedule` / :func:`pipeline_timeline`: the 1F1B schedule and the interleaved one
  (Narayanan et al. 2021, Sec. 2.2), simulated op by op on ``p`` devices with ``n`` micro-batches and ``m``
  chunks per device. Its bubble, measured on the simulated timeline, is ``(p − 1)/(m·n)`` of the ideal time
  (Narayanan et al.'s ``(p − 1)/m`` with ``v`` chunks, in this course's letters), and the first device's
  peak of micro-batches in flight is ``p·(1 + (p − 1)/(p·m))`` (``p`` for 1F1B), Korthikanti et al.'s
  Sec. 4.2.3 factor that ``ParallelTrainingScenario.micro_batches_in_flight`` uses.
* :func:`step_memory` / :func:`step_memory_figure`: memory over one training step, event by event, with
  the peak marked. For a single-device training scenario the state (weights, gradients, optimizer state,
  master copy) is resident throughout, as the package's ``training_total`` counts it, and the activations
  are split evenly over the ``L`` layers; for an activation scenario with checkpoint segments, the segment
  inputs and the one live segment that ``checkpointed_activations`` counts. This is the sum's schematic
  (gradients held throughout); the step's real peak is the next figure's.
* :func:`step_peak_figure`: one step's memory phase by phase as ``ParallelTrainingScenario.step_timeline()``
  predicts it (no gradients before the backward pass, transients, the optimizer's temporaries), beside a
  measurement of it (``measure_step`` or a recorded one), both peaks marked and the sum drawn as a line.
"""

from mlsysim_nb.render.figures.peak import step_peak_figure
from mlsysim_nb.render.figures.pipeline import (
    PipelineOp,
    PipelineSchedule,
    bubble_fraction_formula,
    pipeline_schedule,
    pipeline_schedule_for,
    pipeline_timeline,
)
from mlsysim_nb.render.figures.step import StepMemory, step_memory, step_memory_figure
from mlsysim_nb.render.figures.zero import ZeroPartition, zero_partition, zero_partition_figure

__all__ = [
    "PipelineOp",
    "PipelineSchedule",
    "StepMemory",
    "ZeroPartition",
    "bubble_fraction_formula",
    "pipeline_schedule",
    "pipeline_schedule_for",
    "pipeline_timeline",
    "step_memory",
    "step_memory_figure",
    "step_peak_figure",
    "zero_partition",
    "zero_partition_figure",
]
