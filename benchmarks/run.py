"""Benchmarks against the reference implementation (mlsysim==0.3.0), reported as medians and ratios.

Run with ``make bench`` (or ``python benchmarks/run.py``). Not a test: timings
on shared two-core machines are noisy, so this prints medians of repeated
runs and the ratio reference / ours, and never fails on a number.

Measured, each side by side with the reference where it has the feature:

* time to first answer: a fresh process imports the package and evaluates one
  named scenario (median of several processes);
* full evaluation: construct a scenario and read every property and method;
* ``variant()``;
* one HTML repr, without and with its chart; one control change; a sweep of
  100,000 configurations (when those features exist).
"""

from __future__ import annotations

import argparse
import contextlib
import platform
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

warnings.filterwarnings("ignore")

FIRST_ANSWER_OURS = "from mlsysim_nb import Scenarios; Scenarios.Gpt2Fp32AdamOnH100.total"
FIRST_ANSWER_REF = (
    "import warnings; warnings.filterwarnings('ignore'); "
    "from mlsysim import Scenarios; Scenarios.Gpt2Fp32AdamOnH100.total"
)


def fresh_process(code: str, runs: int) -> float:
    """Median wall time of ``python -c code`` in new processes."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def median_time(fn: Callable[[], Any], *, repeat: int = 7, min_time: float = 0.2) -> float:
    """Median seconds per call of ``fn``, calibrating the loop count to ``min_time``."""
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time / repeat or number >= 1 << 20:
            break
        number *= 2
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples)


def _read_all(s: Any, props: list[str], calls: list[tuple[str, tuple[Any, ...]]]) -> None:
    # not-applicable quantities raise (ours NotApplicableError, the reference TypeError); time still counts
    for name in props:
        with contextlib.suppress(Exception):
            getattr(s, name)
    for name, args in calls:
        with contextlib.suppress(Exception):
            getattr(s, name)(*args)


def full_evaluation(first_runs: int) -> list[tuple[str, float | None, float | None]]:
    """Rows of (what, ours seconds, reference seconds)."""
    sys.path.insert(0, ".")
    from mlsysim_nb import Q_, Scenarios
    from tests.reference import ACTIVATION_PROPERTIES, RQ, TRAINING_PROPERTIES, ref_scenario

    rows: list[tuple[str, float | None, float | None]] = []
    ours_first = fresh_process(FIRST_ANSWER_OURS, first_runs)
    ref_first = fresh_process(FIRST_ANSWER_REF, max(1, first_runs // 2))
    rows.append(("time to first answer (fresh process)", ours_first, ref_first))

    t = Scenarios.Llama3_8BLoraOnH100
    a = Scenarios.Gpt2XlBatch32SegmentCheckpointed
    rt, ra = ref_scenario(t), ref_scenario(a)
    t_calls = [("activations_at", (8,)), ("checkpoint_write_time", (Q_(2, "GB/s"),))]
    rt_calls = [("activations_at", (8,)), ("checkpoint_write_time", (RQ(2, "GB/s"),))]
    a_calls = [("activations", (k,)) for k in ("none", "selective", "full")] + [("checkpoint_memory_units", (4,))]

    def ours_training() -> None:
        _read_all(t.variant(batch_size=4), TRAINING_PROPERTIES, t_calls)

    def ref_training() -> None:
        _read_all(rt.model_copy(update={"batch_size": 4}), TRAINING_PROPERTIES, rt_calls)

    def ours_activation() -> None:
        _read_all(a.variant(micro_batch=32), ACTIVATION_PROPERTIES, a_calls)

    def ref_activation() -> None:
        _read_all(ra.model_copy(update={"micro_batch": 32}), ACTIVATION_PROPERTIES, a_calls)

    rows.append(("full evaluation, TrainingStateFit", median_time(ours_training), median_time(ref_training)))
    rows.append(("full evaluation, ActivationMemory", median_time(ours_activation), median_time(ref_activation)))
    rows.append(
        (
            "variant(batch_size=8)",
            median_time(lambda: t.variant(batch_size=8)),
            median_time(lambda: rt.variant(batch_size=8)) if hasattr(rt, "variant") else None,
        )
    )
    rows.extend(_optional_rows(t))
    return rows


def _optional_rows(t: Any) -> list[tuple[str, float | None, float | None]]:
    """Rows for features that exist only on our side (no reference equivalent)."""
    from mlsysim_nb.live.explorer import explore
    from mlsysim_nb.render.html import scenario_html

    rows: list[tuple[str, float | None, float | None]] = []
    scenario_html(t, chart=True)  # warm matplotlib's import and font cache
    rows.append(("HTML repr without chart", median_time(lambda: scenario_html(t, chart=False)), None))
    rows.append(("HTML repr with chart", median_time(lambda: scenario_html(t, chart=True), repeat=5), None))
    html = scenario_html(t, chart=True)
    rows.append(("HTML repr size with chart (KB)", len(html.encode()) / 1e3, None))
    panel = explore(t)
    batches = iter([8, 16] * 10_000)
    rows.append(("one control change (new value to new HTML and chart data)",
                 median_time(lambda: panel.set("batch_size", next(batches)), repeat=5), None))  # fmt: skip
    return rows


def serving_rows() -> list[tuple[str, float | None, float | None]]:
    """The serving kind, ours only (the reference has no serving model): one evaluation, a fit map, a control."""
    import numpy as np

    from mlsysim_nb import Scenarios, sweep
    from mlsysim_nb.live.explorer import explore

    base = Scenarios.Llama3_1_70BServeOn8H100
    names = sweep(base, batch_size=[1]).names()

    def evaluate() -> None:
        s = base.variant(batch_size=65)
        for name in names:
            s.magnitude(name)

    batches, contexts = np.arange(1, 257), np.linspace(256, 131072, 256).astype(int)

    def fit_map() -> None:
        s = sweep(base, batch_size=batches, context_length=contexts)
        s.fits()
        s["decode_time_per_token"]

    panel = explore(base)
    sizes = iter([32, 64] * 10_000)
    return [
        ("serving: variant() and every quantity", median_time(evaluate), None),
        ("serving: fit map of 256 batches x 256 contexts (65,536)", median_time(fit_map, repeat=5), None),
        ("serving: one control change", median_time(lambda: panel.set("batch_size", next(sizes)), repeat=5), None),
    ]


SWEEP_SIZE = 100_000
REFERENCE_SAMPLE = 500


def sweep_rows() -> list[tuple[str, float | None, float | None]]:
    """100,000 configurations: ours as one vectorised sweep; the reference by its natural loop on a sample."""
    import numpy as np

    from mlsysim_nb import Scenarios, sweep
    from tests.reference import ref_scenario

    base = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100
    batches = np.arange(1, SWEEP_SIZE + 1)

    def ours() -> None:
        s = sweep(base, batch_size=batches)
        s.fits()
        s["training_total"]
        s["resident_batch_limit"]

    ref = ref_scenario(base)
    per_sequence = ref.activations / ref.batch_size

    def reference_sample() -> None:
        for b in range(1, REFERENCE_SAMPLE + 1):
            v = ref.model_copy(update={"batch_size": b, "activations": per_sequence * b})
            v.fits  # noqa: B018 - reading is the work
            v.training_total  # noqa: B018
            v.resident_batch_limit  # noqa: B018

    ref_total = median_time(reference_sample, repeat=3, min_time=0.5) * SWEEP_SIZE / REFERENCE_SAMPLE
    label = f"sweep of {SWEEP_SIZE:,} configurations (reference: loop over {REFERENCE_SAMPLE}, extrapolated)"
    return [(label, median_time(ours, repeat=5), ref_total)]


def _fmt(seconds: float | None, what: str) -> str:
    if seconds is None:
        return "n/a"
    if "KB" in what:
        return f"{seconds:.1f}"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


def table(rows: list[tuple[str, float | None, float | None]]) -> str:
    """A Markdown table of medians and reference/ours ratios."""
    lines = ["| measurement | mlsysim_nb | mlsysim 0.3.0 | ratio (ref / ours) |", "|---|---:|---:|---:|"]
    for what, ours, ref in rows:
        ratio = f"{ref / ours:.0f}x" if ours and ref else "n/a"
        lines.append(f"| {what} | {_fmt(ours, what)} | {_fmt(ref, what)} | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    """Run every benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first-runs", type=int, default=7, help="fresh processes for time to first answer")
    args = parser.parse_args()
    rows = full_evaluation(args.first_runs) + sweep_rows() + serving_rows()
    cpu = platform.processor() or platform.machine()
    print(f"Benchmarks, {datetime.now(UTC).date().isoformat()}, Python {platform.python_version()}, {cpu}, medians\n")
    print(table(rows))


if __name__ == "__main__":
    main()
