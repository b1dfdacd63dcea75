"""Count how many times each course notebook is executed while a command runs (``make test``, say).

Usage: ``python -m mlsysim_nb.course.count_runs -- make test`` (``make count-runs`` runs it on the test
command). Every IPython kernel that starts while the command runs (nbval's, nbgrader's autograder's,
nbclient's, a kernel in another virtual environment) loads a startup file from a temporary
``IPYTHONDIR`` that appends the source of each cell it runs to a log of its own. Afterwards a kernel
counts as one execution of notebook NN when it ran a code cell that only NN holds (the same cell in the
instructor's version, the student version and a submission), and as one *full* execution when it ran
the last such cell too. Prints one row per notebook and exits with the command's status.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from mlsysim_nb.course import cells
from mlsysim_nb.course.repository import NOTEBOOKS, course_notebooks

__all__ = ["STARTUP", "count", "main", "signatures"]

STARTUP = """\
import hashlib, os
_log = os.path.join(os.environ["MLSYSIM_NB_RUN_LOG"], f"{os.getpid()}.log")

def _mlsysim_nb_record(info):
    with open(_log, "a", encoding="utf-8") as f:
        f.write(hashlib.sha256(info.raw_cell.strip().encode()).hexdigest() + "\\n")

get_ipython().events.register("pre_run_cell", _mlsysim_nb_record)
"""


def _digest(source: str) -> str:
    return hashlib.sha256(source.strip().encode()).hexdigest()


def signatures(folder: Path) -> dict[str, list[str]]:
    """For each notebook, the digests (in order) of its code cells that no other notebook holds.

    Cells graded by nbgrader are left out: the release and a submission change them.
    """
    own: dict[str, list[str]] = {}
    for path in course_notebooks(folder):
        own[path.stem] = [
            _digest(cells.source(c))
            for c in cells.cells(path)
            if c["cell_type"] == "code" and not cells.grading(c) and cells.source(c).strip()
        ]
    seen = Counter(d for digests in own.values() for d in set(digests))
    return {name: [d for d in digests if seen[d] == 1] for name, digests in own.items()}


def count(log_dir: Path, folder: Path) -> dict[str, tuple[int, int]]:
    """For each notebook: (kernels that ran any of its own cells, kernels that ran its last own cell)."""
    sig = signatures(folder)
    runs = [set(p.read_text(encoding="utf-8").split()) for p in log_dir.glob("*.log")]
    return {
        name: (sum(1 for r in runs if r & set(digests)), sum(1 for r in runs if digests and digests[-1] in r))
        for name, digests in sig.items()
    }


_SUMMARY = "Count how many times each course notebook is executed while a command runs (make test, say)."


def main(argv: list[str] | None = None) -> int:
    """Run the command with counting kernels; print each notebook's executions."""
    parser = argparse.ArgumentParser(prog="python -m mlsysim_nb.course.count_runs", description=_SUMMARY)
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    args = parser.parse_args(argv)
    command = [c for c in args.command if c != "--"] or ["make", "test"]
    with tempfile.TemporaryDirectory(prefix="count-runs-") as tmp:
        ipython_dir, log_dir = Path(tmp) / "ipython", Path(tmp) / "log"
        (ipython_dir / "profile_default" / "startup").mkdir(parents=True)
        (ipython_dir / "profile_default" / "startup" / "00-count-runs.py").write_text(STARTUP, encoding="utf-8")
        log_dir.mkdir()
        env = {**os.environ, "IPYTHONDIR": str(ipython_dir), "MLSYSIM_NB_RUN_LOG": str(log_dir)}
        start = time.monotonic()
        status = subprocess.run(command, env=env, check=False).returncode  # noqa: S603 - the user's own command
        elapsed = time.monotonic() - start
        counts = count(log_dir, NOTEBOOKS)
        kernels = len(list(log_dir.glob("*.log")))
    print(f"\n{' '.join(command)}: exit {status}, {elapsed:.0f} s wall, {kernels} kernels started")
    print(f"{'notebook':<45} {'executions':>10} {'to the end':>10}")
    for name, (started, finished) in counts.items():
        print(f"{name:<45} {started:>10} {finished:>10}")
    return status


if __name__ == "__main__":
    sys.exit(main())
