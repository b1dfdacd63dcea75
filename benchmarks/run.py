"""Benchmarks against the reference implementation (mlsysim==0.3.0), reported as medians and ratios.

Run with ``make bench`` (or ``python benchmarks/run.py``). Not a test: timings
on shared two-core machines are noisy, so this prints medians of repeated
runs and, on each row, what it is compared with and the ratio, and never fails on a number.
Times are CPU time (of this process, or of a fresh child process), not wall time, which
on a shared machine also counts whatever else runs there.

Measured, each beside what it is compared with:

* time to first answer: a fresh process imports the package and evaluates one
  named scenario (median of several processes), against the reference's and against
  importing pint and NumPy alone (what the package cannot do without); every fresh
  process runs once untimed first, so that each side's bytecode is compiled;
* full evaluation: construct a scenario and read every property and method;
* ``variant()``;
* one HTML repr, without and with its chart; one control change; a sweep of
  100,000 configurations (when those features exist);
* the peak memory of a sweep of 10**7 configurations of each kind, read whole (every
  quantity and verdict), in a fresh process, block by block as the package evaluates it
  and with the whole grid at once.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

warnings.filterwarnings("ignore")

FIRST_ANSWER_OURS = "from mlsysim_nb import Scenarios; Scenarios.Gpt2Fp32AdamOnH100.total"
FIRST_ANSWER_REF = (
    "import warnings; warnings.filterwarnings('ignore'); "
    "from mlsysim import Scenarios; Scenarios.Gpt2Fp32AdamOnH100.total"
)
#: what the package needs before it can answer anything: its units (pint) and its arrays (NumPy)
IMPORT_FLOOR = "import numpy, pint"

#: the environment of a fresh process: bytecode is written, as an installed package has it
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


@dataclass(frozen=True)
class Row:
    """One line of the table: our measurement, what it is compared with, and how the ratio reads."""

    what: str
    ours: float | None
    against: str = ""
    theirs: float | None = None
    unit: str = "s"  # "s" (a time), "KB" or "GB" (a size)
    reading: str = "faster"  # "faster": theirs / ours, "share": ours / theirs ("1.2x the time"), "less": theirs / ours


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _cpu_of(code: str) -> float:
    """CPU time (user and system) of one ``python -c code`` in a new process."""
    start = _children_cpu()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=_ENV)
    return _children_cpu() - start


def fresh_processes(codes: list[str], runs: int) -> list[float]:
    """Median CPU time of each ``python -c code`` in new processes, the codes taking turns run after run.

    CPU time of the child, not wall time: on a shared machine wall time also counts whatever else runs
    there; taking turns spreads that load over every code alike. Each code runs once untimed first, so
    that its bytecode is compiled.
    """
    for code in codes:
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=_ENV)
    times: list[list[float]] = [[] for _ in codes]
    for _ in range(runs):
        for column, code in zip(times, codes, strict=True):
            column.append(_cpu_of(code))
    return [statistics.median(column) for column in times]


def median_time(fn: Callable[[], Any], *, repeat: int = 7, min_time: float = 0.2) -> float:
    """Median CPU seconds per call of ``fn`` (this process's), calibrating the loop count to ``min_time``."""
    number = 1
    while True:
        start = time.process_time()
        for _ in range(number):
            fn()
        elapsed = time.process_time() - start
        if elapsed >= min_time / repeat or number >= 1 << 20:
            break
        number *= 2
    samples = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            fn()
        samples.append((time.process_time() - start) / number)
    return statistics.median(samples)


def _read_all(s: Any, props: list[str], calls: list[tuple[str, tuple[Any, ...]]]) -> None:
    # not-applicable quantities raise (ours NotApplicableError, the reference TypeError); time still counts
    for name in props:
        with contextlib.suppress(Exception):
            getattr(s, name)
    for name, args in calls:
        with contextlib.suppress(Exception):
            getattr(s, name)(*args)


REFERENCE = "mlsysim 0.3.0"


def first_answer(first_runs: int) -> list[Row]:
    """A fresh process's first answer, against the reference's and against importing pint and NumPy alone."""
    ours, floor = fresh_processes([FIRST_ANSWER_OURS, IMPORT_FLOOR], first_runs)
    (ref,) = fresh_processes([FIRST_ANSWER_REF], max(1, first_runs // 2))
    what = "time to first answer (fresh process: import, one named scenario's total)"
    return [
        Row(what, ours, REFERENCE, ref),
        Row(what, ours, "importing pint and NumPy alone (fresh process)", floor, reading="share"),
    ]


def full_evaluation() -> list[Row]:
    """Full evaluations and ``variant()``, beside the reference."""
    sys.path.insert(0, ".")
    from mlsysim_nb import Q_, Scenarios
    from tests.reference import ACTIVATION_PROPERTIES, RQ, TRAINING_PROPERTIES, ref_scenario

    rows: list[Row] = []

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

    what = "full evaluation (variant, every property and method), {}"
    rows.append(Row(what.format("TrainingStateFit"), median_time(ours_training), REFERENCE, median_time(ref_training)))
    rows.append(
        Row(what.format("ActivationMemory"), median_time(ours_activation), REFERENCE, median_time(ref_activation))
    )
    rows.append(
        Row(
            "variant(batch_size=8) of Llama3_8BLoraOnH100 (every field checked)",
            median_time(lambda: t.variant(batch_size=8)),
            f"{REFERENCE}'s variant (a copy, nothing checked)",
            median_time(lambda: rt.variant(batch_size=8)) if hasattr(rt, "variant") else None,
        )
    )
    rows.extend(_optional_rows(t))
    return rows


def _optional_rows(t: Any) -> list[Row]:
    """Rows for features that exist only on our side (no reference equivalent)."""
    from mlsysim_nb.live.explorer import explore
    from mlsysim_nb.render.html import scenario_html

    rows: list[Row] = []
    scenario_html(t, chart=True)  # warm matplotlib's import and font cache
    rows.append(Row("HTML repr without chart", median_time(lambda: scenario_html(t, chart=False))))
    rows.append(Row("HTML repr with chart", median_time(lambda: scenario_html(t, chart=True), repeat=5)))
    html = scenario_html(t, chart=True)
    rows.append(Row("HTML repr size with chart", len(html.encode()) / 1e3, unit="KB"))
    panel = explore(t)
    batches = iter([8, 16] * 10_000)
    change = median_time(lambda: panel.set("batch_size", next(batches)), repeat=5)
    rows.append(Row("one control change (new value to new HTML and chart data)", change))
    return rows


def serving_rows() -> list[Row]:
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
        Row("serving: variant() and every quantity", median_time(evaluate)),
        Row("serving: fit map of 256 batches x 256 contexts (65,536)", median_time(fit_map, repeat=5)),
        Row("serving: one control change", median_time(lambda: panel.set("batch_size", next(sizes)), repeat=5)),
    ]


def parallel_rows() -> list[Row]:
    """The many-devices kind, ours only (the reference has none): one variant() and every quantity."""
    from mlsysim_nb import Scenarios, sweep

    base = Scenarios.Llama3_8BZero3On8H100
    names = sweep(base, data_parallel=[1]).names()

    def evaluate() -> None:
        s = base.variant(data_parallel=16)
        for name in names:
            s.magnitude(name)

    return [Row("many devices: variant() and every quantity", median_time(evaluate))]


SWEEP_SIZE = 100_000
REFERENCE_SAMPLE = 500


def sweep_rows() -> list[Row]:
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
    label = f"sweep of {SWEEP_SIZE:,} configurations, fits and two quantities"
    against = f"{REFERENCE}, a loop over {REFERENCE_SAMPLE} configurations, extrapolated"
    return [Row(label, median_time(ours, repeat=5), against, ref_total)]


#: a sweep of 10**7 configurations of each kind: a named case and axes whose grid holds exactly that many
MEMORY_SWEEPS = {
    "training": ("Gpt2MixedPrecisionFlashAttentionOnH100",
                 "batch_size=np.arange(1, 10**6 + 1), optimizer_bytes_per_parameter=np.arange(10)"),
    "activation": ("Gpt2XlBatch32SegmentCheckpointed",
                   "micro_batch=np.arange(1, 10**4 + 1), seq_len=np.arange(1, 10**3 + 1)"),
    "many devices": ("Llama3_8BZero3On8H100",
                     ("data_parallel=np.arange(1, 625_001), zero_stage=[0, 1, 2, 3], "
                      "gradient_bytes_per_value=[1, 2, 4, 8]")),
    "serving": ("Llama3_1_70BServeOn8H100",
                "batch_size=np.arange(1, 10**4 + 1), context_length=np.arange(1, 10**3 + 1)"),
}  # fmt: skip

_MEMORY_PROBE = """
import resource, sys
import numpy as np
from mlsysim_nb import Hardware, Scenarios, sweep
from mlsysim_nb.live import sweeps
sweeps.MAX_SWEEP_SIZE = 10**7
sweeps.CHUNK_SIZE = {chunk}
s = sweep(Scenarios.{case}, {axes})
assert len(s) == 10**7, len(s)
for question in s._questions() or ["fits"]:  # every verdict; a kind without hardware is held against an H100
    getattr(s, question)() if question in s._questions() else s.fits(hardware=Hardware.H100)
for name in s.names():
    s[name]
scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale)
"""


def peak_memory(case: str, axes: str, chunk: int) -> float:
    """Peak resident memory (bytes) of a fresh process that sweeps ``case`` over ``axes`` and reads everything."""
    code = _MEMORY_PROBE.format(case=case, axes=axes, chunk=chunk)
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=_ENV)
    return float(done.stdout.split()[-1])


def memory_rows() -> list[Row]:
    """Peak memory of a 10**7-configuration sweep of each kind, block by block and with the whole grid at once."""
    rows = []
    for kind, (case, axes) in MEMORY_SWEEPS.items():
        blockwise = peak_memory(case, axes, 2**18)
        whole = peak_memory(case, axes, 10**8)
        what = f"peak memory of a sweep of 10^7 configurations read whole, {kind} (block by block)"
        rows.append(Row(what, blockwise / 1e9, "the same sweep with the whole grid at once", whole / 1e9,
                        unit="GB", reading="less"))  # fmt: skip
    return rows


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit != "s":
        return f"{value:.2f} {unit}" if unit == "GB" else f"{value:.1f} {unit}"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.2f} ms"
    return f"{value * 1e6:.1f} us"


def _times(ratio: float) -> str:
    """A ratio as people read it: three significant figures under 10 (``1.26x``, ``7.2x``), whole above."""
    return f"{ratio:.3g}x" if ratio < 10 else f"{ratio:,.0f}x"


def ratio_text(row: Row) -> str:
    """A row's ratio in words that say which way: "15x faster", "11x slower", "1.2x the time", "7x less memory"."""
    if not row.ours or not row.theirs:
        return "n/a"
    if row.reading == "share":
        return f"{_times(row.ours / row.theirs)} the time"
    if row.reading == "less":
        if row.theirs >= row.ours:
            return f"{_times(row.theirs / row.ours)} less memory"
        return f"{_times(row.ours / row.theirs)} more memory"
    if row.theirs >= row.ours:
        return f"{_times(row.theirs / row.ours)} faster"
    return f"{_times(row.ours / row.theirs)} slower"


def table(rows: list[Row]) -> str:
    """A Markdown table: each measurement, what it is compared with, and the ratio in words."""
    lines = ["| measurement | mlsysim_nb | compared with | its figure | ratio |", "|---|---:|---|---:|---:|"]
    for row in rows:
        against = row.against or "(nothing comparable)"
        ours, theirs = _fmt(row.ours, row.unit), _fmt(row.theirs, row.unit)
        lines.append(f"| {row.what} | {ours} | {against} | {theirs} | {ratio_text(row)} |")
    return "\n".join(lines)


def main() -> None:
    """Run every benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first-runs", type=int, default=11, help="fresh processes for time to first answer")
    parser.add_argument("--no-memory", action="store_true", help="skip the 10**7-configuration memory rows")
    args = parser.parse_args()
    rows = first_answer(args.first_runs) + full_evaluation() + sweep_rows() + serving_rows() + parallel_rows()
    if not args.no_memory:
        rows += memory_rows()
    cpu = platform.processor() or platform.machine()
    print(f"Benchmarks, {datetime.now(UTC).date().isoformat()}, Python {platform.python_version()}, {cpu}, medians\n")
    print(table(rows))


if __name__ == "__main__":
    main()
