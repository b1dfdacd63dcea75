"""The size guard's estimate against the process's real peak: never below it, and not loose (within 2x)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.measure

ROOT = Path(__file__).resolve().parents[2]

# One fresh process per run: warm the imports and kernels on a tiny layer, hand freed heap memory back and lock
# the pages mapped so far (the libraries' code, which memory pressure could otherwise evict and the run fault in
# again; locking needs root or a large RLIMIT_MEMLOCK and is skipped without), read the resident memory, run the
# layer, read the process's peak (VmHWM, reset to the resident memory just before the run: an import's or the
# warm-up's earlier high-water mark would otherwise stand for it). ru_maxrss, the fallback, is KiB on Linux, bytes on macOS.
_RUN = """
import ctypes, json, resource, sys
from mlsysim_nb.measure import measure_layer
from mlsysim_nb.measure.layer import DTYPES, layer_scenario
from mlsysim_nb.measure.peak import run_peak_bytes

s, b, h, a = map(int, sys.argv[1:5])
dtype, attention = sys.argv[5], sys.argv[6]
measure_layer(seq_len=16, micro_batch=1, hidden=64, heads=4, dtype=dtype, attention=attention)
libc = ctypes.CDLL(None)
if hasattr(libc, "malloc_trim"):
    libc.malloc_trim(0)
if hasattr(libc, "mlockall"):
    libc.mlockall(1)  # MCL_CURRENT
scale = 1 if sys.platform == "darwin" else 1024
def resident():
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
def high_water():
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
try:  # reset the peak to what is resident now (Linux 4.0+), so an earlier high-water mark cannot stand for the run's
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
except OSError:
    pass
before = resident()
measure_layer(seq_len=s, micro_batch=b, hidden=h, heads=a, dtype=dtype, attention=attention, memory_limit="16 GiB")
peak = high_water()
sizes = {"seq_len": s, "micro_batch": b, "hidden": h, "heads": a}
terms = run_peak_bytes(layer_scenario(s, b, h, a, dtype), sizes, DTYPES[dtype], attention, "scaled")
print(json.dumps({"grew": peak - before, "estimate": sum(terms.values())}))
"""

#: (s, b, h, a, dtype, attention): the scores dominate, then the weights (h = 2048, where the math library's
#: working memory is the tightest term: measured at 0.95 of the estimate).
RUNS = [
    (512, 4, 512, 8, "bfloat16", "explicit"),
    (512, 4, 512, 8, "float32", "fused"),
    (64, 2, 2048, 16, "float32", "fused"),
]


def _peak(run: tuple[Any, ...]) -> tuple[int, float]:
    """(bytes the process's peak grew by during the run, the guard's estimate), from a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _RUN, *map(str, run)], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return int(found["grew"]), float(found["estimate"])


@pytest.mark.parametrize("run", RUNS, ids=lambda r: "-".join(map(str, r)))
def test_the_estimate_bounds_the_measured_peak(torch: Any, run: tuple[Any, ...]) -> None:
    """The process's peak grows by at most the guard's estimate, and by more than half of it.

    Measured here (2 threads; growth / estimate): 0.72 for s = 512, b = 4, h = 512, a = 8 in BF16 with explicit
    attention (the scores dominate), 0.81 in FP32 fused; 0.95 for s = 64, b = 2, h = 2048, FP32 fused, where the
    weights dominate. (BF16 fused and FP32 explicit at the first shape measured 0.70 and 0.77; they are left out
    to keep this test to three fresh processes.)
    """
    grew, estimate = _peak(run)
    assert grew <= estimate, f"{run}: grew {grew / 2**20:.1f} MiB, estimated {estimate / 2**20:.1f} MiB"
    assert grew > estimate / 2, f"{run}: grew {grew / 2**20:.1f} MiB, estimated {estimate / 2**20:.1f} MiB"


def test_saved_bytes_of_the_estimate_are_the_measured_ones(torch: Any) -> None:
    """The estimate's saved-activation term is what the lab measures, byte for byte, in all eight settings.

    s = 256, b = 2, h = 512, a = 8: sbh = 262,144, as²b = 1,048,576, sb = 512; BF16, explicit, F.dropout:
    36·sbh + 6·as²b + 8·sb = 15,732,736 (test_layer.py's hand count).
    """
    from mlsysim_nb.measure import measure_layer
    from mlsysim_nb.measure.layer import DTYPES, layer_scenario
    from mlsysim_nb.measure.peak import saved_bytes

    sizes = {"seq_len": 256, "micro_batch": 2, "hidden": 512, "heads": 8}
    for dtype in ("bfloat16", "float32"):
        scenario = layer_scenario(**sizes, dtype=dtype)
        for attention in ("explicit", "fused"):
            for mask in ("scaled", "bool"):
                measured = measure_layer(**sizes, dtype=dtype, attention=attention, dropout_mask=mask).measured
                assert measured.m_as("B") == saved_bytes(scenario, sizes, DTYPES[dtype], attention, mask)
    assert saved_bytes(layer_scenario(**sizes, dtype="bfloat16"), sizes, 2, "explicit", "scaled") == 15_732_736


def test_terms_by_hand() -> None:
    """The terms at s = 256, b = 2, h = 512, a = 8, BF16, explicit: 6,304,768 + 15,732,736 + 6,291,456 B + 16 MiB a thread.

    Weights (12h² + 13h)·2; temporaries max(4·sbh + 2·as²b, 7·sbh)·2 = (1,048,576 + 2,097,152)·2. Fused: saved
    36·sbh + 4·asb + 8·sb = 9,437,184 + 16,384 + 4,096 = 9,457,664 (asb = 4,096), temporaries 4·sbh·2 = 2,097,152.
    """
    from mlsysim_nb.measure.layer import layer_scenario
    from mlsysim_nb.measure.peak import WORKSPACE_PER_THREAD, run_peak_bytes, threads

    sizes = {"seq_len": 256, "micro_batch": 2, "hidden": 512, "heads": 8}
    scenario = layer_scenario(**sizes, dtype="bfloat16")
    workspace = threads() * WORKSPACE_PER_THREAD
    assert run_peak_bytes(scenario, sizes, 2, "explicit", "scaled") == {
        "weights": 6_304_768, "saved activations": 15_732_736, "forward temporaries": 6_291_456,
        "library workspace": workspace,
    }  # fmt: skip
    assert run_peak_bytes(scenario, sizes, 2, "fused", "scaled") == {
        "weights": 6_304_768, "saved activations": 9_457_664, "forward temporaries": 2_097_152,
        "library workspace": workspace,
    }  # fmt: skip
    assert WORKSPACE_PER_THREAD == 16 * 2**20
