"""A real JupyterLab in headless Chromium: the explorer panel responds to a slider and a dropdown.

The server serves a temporary copy of a small notebook, with its config,
runtime, settings and workspace folders in temp folders, on 127.0.0.1 with a
token. The test runs the notebook, moves the batch slider with the keyboard,
chooses another accelerator, and checks that the displayed total, the
anywidget chart and the fit verdict change to what the Python model gives.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mlsysim_nb import Hardware, Scenarios
from mlsysim_nb.render.numbers import format_bytes
from mlsysim_nb.render.summary import summary_line

pytestmark = pytest.mark.browser

CONTRAST_JS = (Path(__file__).parent / "contrast.js").read_text(encoding="utf-8")

#: the repository this test file belongs to: the server's kernels import its package, not an installed copy
REPO = Path(__file__).resolve().parents[2]

NOTEBOOKS = {
    "explore.ipynb": "explore(Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100)",  # notebook 07's panel
    "activations.ipynb": "explore(Scenarios.Gpt2XlBatch32Activations)",  # notebook 05's panel
    "layout.ipynb": (  # notebook 09's panel
        "explore(Scenarios.Gpt3_175BKorthikantiTable3OnA100.variant("
        "data_parallel=8, zero_stage=1, tensor_parallel=2, pipeline_parallel=1, interleave=1))"
    ),
    "serve.ipynb": "explore(Scenarios.Llama3_1_8BServeOnH100)",  # notebook 11's panel
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _notebook(path: Path, panel: str) -> None:
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": "explore",
                "metadata": {},
                "outputs": [],
                "source": f"import mlsysim_nb\nfrom mlsysim_nb import Scenarios, explore\npanel = {panel}\npanel",
            }
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb), encoding="utf-8")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, chromium_path: str) -> Iterator[dict[str, Any]]:
    """A JupyterLab server on a temp copy; yields its URL and token, stops its process group after."""
    root = tmp_path_factory.mktemp("lab")
    work = root / "work"
    work.mkdir()
    for name, panel in NOTEBOOKS.items():
        _notebook(work / name, panel)
    settings = root / "settings"
    (settings / "@jupyterlab" / "notebook-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        json.dumps({"autoStartDefaultKernel": True})
    )
    (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    env = dict(os.environ)
    for name, sub in [
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
    ]:
        (root / sub).mkdir()
        env[name] = str(root / sub)
    env["JUPYTERLAB_SETTINGS_DIR"] = str(settings)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    port, token = _free_port(), secrets.token_hex(16)
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={token}",
        "--allow-root",
        f"--ServerApp.root_dir={work}",
        "--ServerApp.port_retries=0",
        "--LabApp.extension_manager=readonly",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.expose_app_in_browser=True",
    ]
    log = (root / "server.log").open("w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as r:  # noqa: S310 - loopback
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("JupyterLab did not start:\n" + (root / "server.log").read_text()[-3000:])
            time.sleep(0.5)
        yield {"url": url, "token": token}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


#: the first element that ``selector`` matches holds ``expected`` in its text
SHOWS_JS = """
([selector, expected]) => {
  const element = document.querySelector(selector);
  return element !== null && (element.textContent || "").includes(expected);
}
"""


def _wait_text(page: Any, selector: str, expected: str, timeout: float = 30) -> str:
    """Wait until the first ``selector`` shows ``expected`` (checked at every frame); return its text."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(SHOWS_JS, arg=[selector, expected], timeout=timeout * 1000)
    except PlaywrightTimeout:
        loc = page.locator(selector)
        text = (loc.first.text_content() or "") if loc.count() else ""
        raise AssertionError(f"{selector!r} never showed {expected!r}; last text: {text!r}") from None
    return page.locator(selector).first.text_content() or ""


KERNEL_JS = """
async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const future = kernel.requestExecute({code, store_history: false});
  let out = "";
  future.onIOPub = (msg) => {
    if (msg.header.msg_type === "stream") out += msg.content.text;
    if (msg.header.msg_type === "error") out += `${msg.content.ename}: ${msg.content.evalue}`;
  };
  await future.done;
  return out.trim();
}
"""


def _kernel(page: Any, code: str) -> str:
    """Run ``code`` in the notebook's kernel and return what it printed.

    The request goes to the kernel after every widget message the page has already sent, so it
    reads the state those messages left.
    """
    return str(page.evaluate(KERNEL_JS, code))


def _open(browser: Any, lab: dict[str, Any], artifacts: Path, notebook: str) -> tuple[Any, Any, list[str]]:
    """Open ``notebook`` in JupyterLab, run it, and wait for the panel: ``(context, page, page errors)``."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{lab['url']}/lab/tree/{notebook}?reset&token={lab['token']}")  # reset: only this notebook open
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000)
    page.wait_for_function("() => window.jupyterapp !== undefined", timeout=30_000)
    # run the cell (retrying: the command is ignored until the notebook panel has its kernel session)
    deadline = time.monotonic() + 60
    while page.locator(".msn-wrap").count() == 0 and time.monotonic() < deadline:
        page.locator(".jp-Cell-inputArea").first.click()
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        with contextlib.suppress(PlaywrightTimeout):  # up to 3 s for the panel, then run the cell again
            page.wait_for_selector(".msn-wrap", state="attached", timeout=3000)
    try:
        page.wait_for_selector(".msn-summary", state="attached", timeout=60_000)
        page.wait_for_selector(".msn-bar svg", state="attached", timeout=60_000)
    except Exception:
        page.screenshot(path=str(artifacts / f"jupyterlab-{notebook}-failed.png"))
        raise
    # the kernel imports this checkout's package, not another copy
    assert _kernel(page, "print(mlsysim_nb.__file__)").startswith(str(REPO))
    return context, page, errors


def test_explorer_responds_in_jupyterlab(browser: Any, lab: dict[str, Any], artifacts: Path) -> None:
    """Run the notebook, move the batch slider, choose the T4: total, chart and verdict follow the model."""
    start = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100
    halved = start.variant(batch_size=16)
    typed = start.variant(batch_size=21)
    on_t4 = typed.variant(hardware=Hardware.T4)

    context, page, errors = _open(browser, lab, artifacts, "explore.ipynb")

    # the panel renders: the static derivation and the anywidget chart, with the model's numbers
    _wait_text(page, ".msn-summary", summary_line(start), timeout=60)
    _wait_text(page, ".msn-bar-total", format_bytes(start.training_total.m_as("B")))

    # move the batch slider one step left with the keyboard: 32 -> 16 on the powers-of-two scale
    control = page.locator(".widget-hbox", has_text="batch size")
    control.locator(".noUi-handle").focus()
    page.keyboard.press("ArrowLeft")
    _wait_text(page, ".msn-summary", summary_line(halved))
    _wait_text(page, ".msn-bar-total", format_bytes(halved.training_total.m_as("B")))
    box = control.locator("input[type='text']")
    _settled(page, control, 16)

    # a value the model refuses is not clamped by the browser: the panel says why and keeps batch 16
    # (the message appears before the box is put back: wait for the box's settled value, not the message)
    box.fill("0")
    box.press("Enter")
    _wait_text(page, ".widget-html", "must be at least 1")
    _settled(page, control, 16)
    assert _kernel(page, "print(panel.scenario.batch_size)") == "16"

    # every whole batch is reachable: type 21 in the box beside the slider
    box.fill("21")
    box.press("Enter")
    _wait_text(page, ".msn-summary", summary_line(typed))
    _settled(page, control, 21)

    # choose another accelerator: the verdict and the capacity line follow
    page.locator(".widget-dropdown", has_text="accelerator").locator("select").select_option(
        label="NVIDIA T4 (16 GiB)"
    )  # each option names its memory
    text = _wait_text(page, ".msn-summary", summary_line(on_t4))
    assert "does not fit" in text
    _wait_text(page, ".msn-bar-caplabel", "NVIDIA T4")
    assert re.search(r"does not fit", page.locator(".msn-nofit").first.inner_text())

    # hovering a bar segment shows its value, spelled as the derivation spells it (the anywidget responds)
    page.locator(".msn-bar-part").first.hover()
    _wait_text(page, ".msn-bar-tip", f"this run · weights: {format_bytes(on_t4.weights.m_as('B'))}")
    # no 0 B part: the legend lists what the bar holds
    legend = page.locator(".msn-bar-legend").all_text_contents()
    assert legend == ["weights", "gradients", "optimizer state", "master copy", "activations"]

    page.screenshot(path=str(artifacts / "jupyterlab-explorer.png"), full_page=False)

    # JupyterLab's dark theme: the derivation follows it and every text keeps 4.5:1 contrast
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
    page.wait_for_timeout(1000)
    page.evaluate("() => document.querySelectorAll('.msn-wrap details').forEach(d => d.open = true)")
    page.screenshot(path=str(artifacts / "jupyterlab-explorer-dark.png"), full_page=False)
    results = page.evaluate(CONTRAST_JS)
    context.close()
    assert len(results) > 50
    assert [r for r in results if r["ratio"] < 4.5] == []
    assert errors == []


#: the box beside a slider shows ``value`` and the slider's handle stands at ``exponent``, both at once
SETTLED_JS = """
([control, value, exponent]) => {
  const box = control.querySelector("input[type='text']");
  const handle = control.querySelector(".noUi-handle");
  return box !== null && handle !== null && box.value === value && handle.getAttribute("aria-valuenow") === exponent;
}
"""


def _settled(page: Any, control: Any, expected: int, *, kernel: bool = True) -> None:
    """Wait for the state a value leaves, not its first sign: the box and the handle together, then the kernel.

    The handle stands at the largest power of two not above the value; once it is there, whatever
    the page sent in reply has gone to the kernel before the round trip that ends this wait
    (``kernel=False`` leaves that round trip to the caller's next query of the kernel).
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    exponent = f"{math.floor(math.log2(expected)):.1f}"
    try:  # checked at every frame (expect() checks after 100, 250, 500 then 1,000 ms: most of a settle's time)
        page.wait_for_function(SETTLED_JS, arg=[control.element_handle(), str(expected), exponent], timeout=30_000)
    except PlaywrightTimeout:
        box = control.locator("input[type='text']").input_value()
        handle = control.locator(".noUi-handle").get_attribute("aria-valuenow")
        raise AssertionError(f"box {box!r} and handle {handle!r} never read {expected} and {exponent}") from None
    if kernel:
        _kernel(page, "pass")


def test_typed_value_is_kept_exactly(browser: Any, lab: dict[str, Any], artifacts: Path) -> None:
    """Typing 23 (notebook 07's answer, between two powers of two) keeps 23: the slider never rewrites the box."""
    start = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100
    context, page, errors = _open(browser, lab, artifacts, "explore.ipynb")
    control = page.locator(".widget-hbox", has_text="batch size")
    box = control.locator("input[type='text']")
    for typed in (23, 24, 11, 12, 100, 23):
        box.fill(str(typed))
        box.press("Enter")
        expected = start.variant(batch_size=typed)
        _wait_text(page, ".msn-summary", summary_line(expected))
        _settled(page, control, typed)
        assert _kernel(page, "print(panel.scenario.batch_size, repr(panel.error))") == f"{typed} ''"
        assert box.input_value() == str(typed)
        assert summary_line(expected) in (page.locator(".msn-summary").first.text_content() or "")
    assert "the run fits" in summary_line(start.variant(batch_size=23))
    # the slider still moves in powers of two from where the typed value left it
    control.locator(".noUi-handle").focus()
    page.keyboard.press("ArrowRight")
    _settled(page, control, 32)
    assert _kernel(page, "print(panel.scenario.batch_size)") == "32"
    context.close()
    assert errors == []


def test_typed_layout_is_kept_exactly(browser: Any, lab: dict[str, Any], artifacts: Path) -> None:
    """Notebook 09's panel: p = 6 stays 6 (8 x 2 x 6 = 96 devices, not 8 x 2 x 8 = 128)."""
    context, page, errors = _open(browser, lab, artifacts, "layout.ipynb")
    control = page.locator(".widget-hbox", has_text="pipeline")
    stages = control.locator("input[type='text']")
    stages.fill("6")
    stages.press("Enter")
    _settled(page, control, 6)
    assert _kernel(page, "print(panel.scenario.pipeline_parallel, panel.scenario.devices)") == "6 96"
    context.close()
    assert errors == []


def test_strategy_toggle_in_jupyterlab(browser: Any, lab: dict[str, Any], artifacts: Path) -> None:
    """Notebook 05's task: clicking "full" moves the chart's highlight and marks full in the derivation."""
    from playwright.sync_api import expect

    acts = Scenarios.Gpt2XlBatch32Activations
    context, page, errors = _open(browser, lab, artifacts, "activations.ipynb")
    expect(page.locator(".msn-bar-highlight")).to_have_text("none", timeout=30_000)
    page.locator(".widget-toggle-buttons button", has_text="full").click()
    expect(page.locator(".msn-bar-highlight")).to_have_text("full", timeout=30_000)
    full = format_bytes(acts.activations("full").m_as("B"))
    expect(page.locator(".msn-chosen-line")).to_contain_text(f"recomputation: full = {full}", timeout=30_000)
    expect(page.locator("tr.msn-chosen .msn-name")).to_contain_text('activations("full")')
    assert _kernel(page, "print(panel.view['strategy'], panel.chart.highlight)") == "full full"
    page.screenshot(path=str(artifacts / "jupyterlab-strategy.png"), full_page=False)
    context.close()
    assert errors == []


BROKEN_WORDS_JS = """
(el) => {
  // the words of el's text that the browser laid out over more than one line
  const broken = [];
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const re = /\\S+/g;
    for (let m = re.exec(node.data); m; m = re.exec(node.data)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top)));
      if (tops.size > 1) broken.push(m[0]);
    }
  }
  return broken;
}
"""


def test_refusal_message_in_full(browser: Any, lab: dict[str, Any], artifacts: Path) -> None:
    """Notebook 09: t = 3 is refused; the panel shows the model's whole message, wrapped between words only."""
    from playwright.sync_api import expect

    context, page, errors = _open(browser, lab, artifacts, "layout.ipynb")
    control = page.locator(".widget-hbox", has_text="tensor-parallel devices")
    box = control.locator("input[type='text']")
    box.fill("3")
    box.press("Enter")
    status = page.locator(".msn-error")
    expect(status).to_contain_text("was not applied", timeout=30_000)
    _settled(page, control, 2)  # the box goes back to the last good t
    error = _kernel(page, "print(panel.error)")
    assert error.startswith("tensor-parallel devices = 3 was not applied: ")
    assert "with sequence parallelism on, t must divide the 2048 tokens" in error  # the rule the student hit
    assert " ".join((status.text_content() or "").split()) == f"{error} (the last good scenario is kept)"
    for width in (1400, 900, 600, 420):  # a side-by-side or phone-width notebook wraps it over more lines
        page.set_viewport_size({"width": width, "height": 1000})
        page.wait_for_function("(w) => window.innerWidth === w", arg=width)
        assert status.evaluate(BROKEN_WORDS_JS) == [], width
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.screenshot(path=str(artifacts / "jupyterlab-refusal.png"), full_page=False)
    context.close()
    assert errors == []


def test_segment_caveat_in_jupyterlab(browser: Any, lab: dict[str, Any], artifacts: Path) -> None:
    """Notebook 06's reading of k = 28: the panel applies it and says why the number reads low."""
    from playwright.sync_api import expect

    context, page, errors = _open(browser, lab, artifacts, "activations.ipynb")
    expect(page.locator(".msn-warning")).to_have_count(0)
    segments = page.locator(".widget-slider", has_text="checkpoint segments")
    segments.locator(".widget-readout").fill("28")  # the slider's own editable readout
    segments.locator(".widget-readout").press("Enter")
    warning = page.locator(".msn-warning", has_text="28 segments do not divide the 48 layers")
    expect(warning).to_have_count(1, timeout=30_000)  # once, under the answer, as in the repr
    assert _kernel(page, "print(panel.scenario.checkpoint_segments, repr(panel.error))") == "28 ''"
    context.close()
    assert errors == []


@pytest.mark.parametrize("start", [64, 16])
def test_every_value_between_two_powers_of_two_is_applied(
    browser: Any, lab: dict[str, Any], artifacts: Path, start: int
) -> None:
    """Typing each of 33..63 from 64 (the handle moves down to 32) or from 16 (up to 32) applies it exactly.

    The browser answers the handle put at 32 with 32.00000000000002; that echo is no move (48 stayed 32).
    """
    context, page, errors = _open(browser, lab, artifacts, "explore.ipynb")
    control = page.locator(".widget-hbox", has_text="batch size")
    box = control.locator("input[type='text']")
    wrong = []
    for typed in range(33, 64):
        box.fill(str(start))
        box.press("Enter")
        _settled(page, control, start, kernel=False)  # the next value's messages reach the kernel after these
        box.fill(str(typed))
        box.press("Enter")
        _settled(page, control, typed, kernel=False)  # the query below is the round trip that ends the wait
        state = _kernel(page, "print(panel.scenario.batch_size, repr(panel.error), panel.controls['batch_size'].value)")
        if state != f"{typed} '' {typed}":
            wrong.append((typed, state))
    context.close()
    assert wrong == []
    assert errors == []


def test_typed_layout_between_powers_of_two_is_applied(browser: Any, lab: dict[str, Any], artifacts: Path) -> None:
    """Notebook 09: p = 48 and N_d = 40 stay 48 and 40 (both handles at 32): 2 x 48 x 40 = 3,840 devices."""
    context, page, errors = _open(browser, lab, artifacts, "layout.ipynb")
    for label, typed in (("pipeline", 48), ("data-parallel", 40)):
        control = page.locator(".widget-hbox", has_text=label)
        box = control.locator("input[type='text']")
        box.fill(str(typed))
        box.press("Enter")
        _settled(page, control, typed)
    state = _kernel(
        page, "print(panel.scenario.pipeline_parallel, panel.scenario.data_parallel, panel.scenario.devices)"
    )
    context.close()
    assert state == "48 40 3840"
    assert errors == []


def test_box_shows_the_value_applied(browser: Any, lab: dict[str, Any], artifacts: Path) -> None:
    """'1,024' over batch 1024 reads 1024; the current value retyped after a refusal clears its message."""
    from playwright.sync_api import expect

    context, page, errors = _open(browser, lab, artifacts, "explore.ipynb")
    control = page.locator(".widget-hbox", has_text="batch size")
    box = control.locator("input[type='text']")
    box.fill("1024")
    box.press("Enter")
    _settled(page, control, 1024)
    for spelling in ("1,024", "1_024"):
        box.fill(spelling)
        box.press("Enter")
        _settled(page, control, 1024)
    box.fill("0")
    box.press("Enter")
    expect(page.locator(".msn-error")).to_contain_text("was not applied", timeout=30_000)
    _settled(page, control, 1024)
    box.fill("1024")  # what the box already shows: the browser sends no new text, only the Enter
    box.press("Enter")
    expect(page.locator(".msn-error")).to_have_count(0, timeout=30_000)
    assert _kernel(page, "print(panel.scenario.batch_size, repr(panel.error))") == "1024 ''"
    context.close()
    assert errors == []


SVG_LAYOUT_JS = """
(svg) => {
  const box = (e) => e.getBBox();
  const caption = Array.from(svg.querySelectorAll('.msn-bar-caption tspan'));
  const cap = svg.querySelector('.msn-bar-cap');
  const totals = Array.from(svg.querySelectorAll('.msn-bar-total')).map(box);
  const width = svg.viewBox.baseVal.width;
  return {
    caption: caption.map((t) => t.textContent),
    captionRight: Math.max(...caption.map((t) => box(t).x + box(t).width)),
    width,
    capX: cap ? Number(cap.getAttribute('x1')) : null,
    totals: totals.map((b) => [b.x, b.x + b.width]),
  };
}
"""


def test_serving_panel_reads_whole(browser: Any, lab: dict[str, Any], artifacts: Path) -> None:
    """Notebook 11: the caption wraps whole, the total clears the capacity line, each model is named once."""
    from mlsysim_nb.live.explorer import chart_data

    context, page, errors = _open(browser, lab, artifacts, "serve.ipynb")
    caption = chart_data(Scenarios.Llama3_1_8BServeOnH100)["caption"]
    assert "104 tokens/s per sequence" in caption
    layout = page.locator(".msn-bar svg").first.evaluate(SVG_LAYOUT_JS)
    assert " ".join(layout["caption"]) == caption
    assert len(layout["caption"]) >= 2
    assert layout["captionRight"] <= layout["width"]
    assert layout["capX"] is not None
    assert all(not (left - 2 <= layout["capX"] <= right + 2) for left, right in layout["totals"]), layout
    models = page.locator(".widget-dropdown").filter(has=page.locator("label", has_text=re.compile(r"^model$")))
    options = [" ".join(o.split()) for o in models.locator("option").all_text_contents()]  # no-break spaces
    assert "Llama 3.1 8B (from its published config.json)" in options
    assert len(options) == len(set(options))
    page.screenshot(path=str(artifacts / "jupyterlab-serve.png"), full_page=False)
    context.close()
    assert errors == []
