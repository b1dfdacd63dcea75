"""Running one submitted notebook in a kernel of its own, within limits, for the regrade.

Each submission runs in a temporary copy of its folder (the kernel's working folder), with a time limit for
each cell and a time budget for the whole submission, a cap on the output it may send (each message the kernel
sends is refused above a size, so a 1 GB print never reaches this process's memory, and the output of all its
cells together is capped), and its process group ended afterwards: the kernel starts in a session of its own,
and every process left in that group (a ``sleep`` started in the background, a server) is killed when the
submission is done.

This is damage control, not a sandbox: a submission's code runs as the user who grades, and can still read and
write that user's files by absolute path, or start a process in a new session of its own. Grade in a container
that can read only the submissions (the instructor's guide shows one).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsysim_nb.course import cells

__all__ = ["Limits", "Run", "run_notebook"]


@dataclass(frozen=True)
class Limits:
    """What one submission may use: seconds per cell and in all, bytes of output, of one message, of its folder."""

    cell_timeout: float = 120.0
    budget: float = 600.0
    output_cap: int = 16 * 2**20
    message_cap: int = 8 * 2**20
    folder_cap: int = 64 * 2**20


@dataclass(frozen=True)
class Run:
    """What a submission's run gave: the text its last cell printed (``None`` if stopped), and why it stopped."""

    printed: str | None
    note: str = ""


class _StoppedError(Exception):
    """The submission was stopped: the reason, in words for the gradebook."""


def run_notebook(notebook: dict[str, Any], name: str, folder: Path | None, last_cell: str, limits: Limits) -> Run:
    """Run the code cells of ``notebook`` and then ``last_cell`` in a fresh kernel; what ``last_cell`` printed.

    The kernel's working folder is a temporary copy of ``folder`` (its regular files, up to the folder cap) with
    the notebook written as ``name``; the copy is removed afterwards, with every process of the kernel's group.
    """
    root = Path(tempfile.mkdtemp(prefix="mlsysim_nb-regrade-"))
    work = root / "submission"
    try:
        _copy_folder(folder, work, limits.folder_cap)
        (work / name).write_text(json.dumps(notebook), encoding="utf-8")
        codes = [cells.source(c) for c in notebook["cells"] if c.get("cell_type") == "code"]
        return _run_in_kernel(work, [*codes, last_cell], limits)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _copy_folder(folder: Path | None, work: Path, cap: int) -> None:
    """Copy the regular files of ``folder`` into ``work`` (no link followed, nothing past ``cap`` bytes in all)."""
    work.mkdir(parents=True)
    if folder is None:
        return
    left = cap
    for here, subfolders, files in os.walk(folder):
        subfolders[:] = [d for d in subfolders if d != ".ipynb_checkpoints"]
        target = work / Path(here).relative_to(folder)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            path = Path(here) / name
            with contextlib.suppress(OSError):
                info = path.lstat()
                if stat.S_ISREG(info.st_mode) and info.st_size <= left:
                    shutil.copyfile(path, target / name, follow_symlinks=False)
                    left -= info.st_size


def _run_in_kernel(work: Path, codes: list[str], limits: Limits) -> Run:
    import zmq
    from jupyter_client.manager import KernelManager

    start = time.monotonic()
    context = zmq.Context()
    context.setsockopt(zmq.MAXMSGSIZE, limits.message_cap)  # a larger message drops the connection, unread
    manager = KernelManager(kernel_name="python3")
    group = None
    client = None
    try:
        # the kernel's own stdout and stderr (os.write(1, ...) in a cell) never reach the grader's terminal
        manager.start_kernel(cwd=str(work), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        group = getattr(manager.provisioner, "pgid", None)
        client = manager.client(context=context)
        client.start_channels()
        client.wait_for_ready(timeout=max(1.0, min(60.0, limits.budget)))
        monitor = client.iopub_channel.socket.get_monitor_socket(zmq.EVENT_DISCONNECTED | zmq.EVENT_CLOSED)
        counted = [0]
        printed = ""
        for index, code in enumerate(codes):
            last = index == len(codes) - 1
            printed = _execute(client, manager, monitor, code, start, limits, counted, keep=last)
        return Run(printed)
    except _StoppedError as stop:
        return Run(None, str(stop))
    except Exception as error:  # noqa: BLE001 - a kernel that will not start or breaks earns nothing, with a note
        return Run(None, f"its kernel failed ({type(error).__name__})")
    finally:
        if client is not None:
            with contextlib.suppress(Exception):
                client.stop_channels()
        with contextlib.suppress(Exception):
            manager.shutdown_kernel(now=True)
        _end_group(group)
        context.destroy(linger=0)


def _end_group(group: int | None) -> None:
    """Kill every process left in the kernel's process group (never this process's own group)."""
    if group is None or group <= 1 or group == os.getpgrp():
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)


def _execute(  # noqa: PLR0917 - one private step of _run_in_kernel
    client: Any, manager: Any, monitor: Any, code: str, start: float, limits: Limits, counted: list[int], *, keep: bool
) -> str:
    """Run one cell and wait for it within its time limit and the budget; the text it printed, if ``keep``."""
    msg_id = client.execute(code, store_history=True, allow_stdin=False, stop_on_error=False)
    ends = (time.monotonic() + limits.cell_timeout, start + limits.budget)
    printed: list[str] = []
    while True:
        msg = _next_message(client, manager, monitor, ends, limits)
        if msg is None:
            continue
        kind, content = msg.get("msg_type"), msg.get("content", {})
        ours = msg.get("parent_header", {}).get("msg_id") == msg_id
        if kind not in {"status", "execute_input"}:  # output, displays, widgets, a thread's prints: all count
            counted[0] += len(json.dumps(content, default=str))
            if counted[0] > limits.output_cap:
                raise _StoppedError(f"stopped: its output passed the cap of {limits.output_cap:,} bytes")
            if ours and keep and kind == "stream" and content.get("name") == "stdout":  # the answers' line
                printed.append(str(content.get("text", "")))
        elif ours and kind == "status" and content.get("execution_state") == "idle":
            return "".join(printed)


def _next_message(client: Any, manager: Any, monitor: Any, ends: tuple[float, float], limits: Limits) -> Any:
    """The kernel's next output message, or ``None`` after a second without one; stops a cell past its time."""
    cell_end, budget_end = ends
    now = time.monotonic()
    if now >= budget_end:
        raise _StoppedError(f"stopped: past its time budget of {limits.budget:g} s")
    if now >= cell_end:
        raise _StoppedError(f"stopped: a cell ran past its limit of {limits.cell_timeout:g} s")
    try:
        return client.get_iopub_msg(timeout=min(1.0, cell_end - now, budget_end - now))
    except queue.Empty:
        if not manager.is_alive():
            raise _StoppedError("stopped: its kernel died") from None
        if monitor.poll(0):  # the kernel sent a message over the cap: the connection was dropped unread
            raise _StoppedError(f"stopped: one output message passed the cap of {limits.message_cap:,} bytes") from None
        return None
