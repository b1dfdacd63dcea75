"""The HTML, Markdown and text reprs: complete, escaped, static-safe, deterministic."""

from __future__ import annotations

import re
import subprocess
import sys
from html import escape, unescape
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from mlsysim_nb import (
    Q_,
    ActivationMemoryScenario,
    Hardware,
    Scenarios,
    TrainingStateFitScenario,
    Workload,
    Workloads,
    set_options,
)
from mlsysim_nb.render.charts import alt_text, memory_breakdown
from mlsysim_nb.render.derivation import explain, step_parts
from tests.strategies import every_kind_scenarios
from tests.unit.test_equations import SEED_ACTIVATION, SEED_TRAINING

SNAPSHOTS = Path(__file__).resolve().parents[1] / "snapshots"
NASTY = "<script>alert(1)</script> & co"


def _stripped_text(html: str) -> str:
    """What GitHub shows: no <style>, no style=, no class=, then the text content."""
    html = re.sub(r"<style>.*?</style>", "", html, flags=re.DOTALL)
    html = re.sub(r'\s(style|class)="[^"]*"', "", html)
    text = re.sub(r"<[^>]+>", " ", html)
    return re.sub(r"\s+", " ", unescape(text))


def _step_names(s: Any) -> list[str]:
    return [step.name.split("(")[0].split(" ")[0] for sec in explain(s).sections for step in sec.steps]


def _missing(names: list[str], shown: str | list[str]) -> list[str]:
    """The names not in ``shown`` (a list of step names, or a rendering's text)."""
    return [n for n in names if n not in shown]


def test_every_training_seed_attribute_in_derivation() -> None:
    """Each property and method of the training model appears in a full derivation, HTML and text."""
    s = Scenarios.Llama3_8BLoraOnH100
    renderings = {"steps": _step_names(s), "html": s.to_html(chart=False), "text": s.to_text()}
    missing = {where: _missing(SEED_TRAINING, shown) for where, shown in renderings.items()}
    assert missing == {"steps": [], "html": [], "text": []}


def test_every_activation_seed_attribute_in_derivation() -> None:
    """Each property and method of the activation seed appears in the derivation."""
    s = Scenarios.Gpt2XlBatch32SegmentCheckpointed
    names = [*SEED_ACTIVATION, "activations"]
    missing = {"steps": _missing(names, _step_names(s)), "html": _missing(names, s.to_html(chart=False))}
    assert missing == {"steps": [], "html": []}


def test_derivation_substitutes_numbers() -> None:
    """A step shows symbols, then numbers, then the result in GB and GiB."""
    text = Scenarios.Gpt2Fp32AdamOnH100.to_text()
    assert "M_w = P · b_val" in text
    assert "= 1.5×10⁹ · 4 B" in text
    assert "= 6 GB (5.588 GiB)" in text


def _nasty_scenarios() -> list[Any]:
    w = Workload(name=NASTY, parameters=10**9, layers=4, hidden_dim=64, heads=4, context_length=128)
    t = TrainingStateFitScenario(
        name=NASTY,
        description=NASTY,
        workload=w,
        hardware=Hardware.H100,
        bytes_per_value=2,
        optimizer_bytes_per_parameter=8,
    )
    a = ActivationMemoryScenario(name=NASTY, workload=w, micro_batch=2)
    return [t, a]


@pytest.mark.parametrize("index", [0, 1])
def test_names_are_escaped_everywhere(index: int) -> None:
    """A scenario and workload named like a script tag never inject markup."""
    s = _nasty_scenarios()[index]
    html = s.to_html()
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in html
    assert "<script" not in s.workload._repr_html_()
    md = s.to_markdown()
    assert "<script" not in md


def test_no_ids_no_scripts() -> None:
    """Static-safe: no id= and no <script> in any named scenario's repr.

    The chart adds one ``<img>``: base64 (which holds neither) and its alt text, checked for every
    scenario; the whole repr with its chart is checked for one.
    """
    pieces = [Scenarios.Llama3_8BLoraOnH100.to_html()]
    for s in dict(Scenarios.items()).values():
        breakdown = memory_breakdown(s)
        pieces += [s.to_html(chart=False), escape(alt_text(breakdown), quote=True) if breakdown else ""]
    assert [p for p in pieces if " id=" in p or "<script" in p.lower()] == []
    assert "data:image/png;base64," in pieces[0]


@pytest.mark.parametrize("name", ["Gpt2MixedPrecisionAdamOnH100", "Gpt2XlBatch32SegmentCheckpointed"])
def test_stripped_html_lists_inputs_and_results_in_order(name: str) -> None:
    """Without CSS and classes the text still holds every input and every result, in order."""
    s = Scenarios[name]
    text = _stripped_text(s.to_html())
    d = explain(s)
    assert d.inputs
    assert d.sections
    position = 0
    for row in d.inputs:
        found = text.find(row.name, position)
        assert found >= 0, row.name
        position = found
    for section in d.sections:
        for step in section.steps:
            needle = _stripped_text(step_parts(step, html=True)[3] or step.not_applicable).strip()
            found = text.find(needle, position)
            assert found >= 0, (step.name, needle)
            position = found


def test_details_and_summary_for_collapsing() -> None:
    """Sections collapse with <details>/<summary>, each summary stating a result."""
    html = Scenarios.Gpt2Fp32AdamOnH100.to_html(chart=False)
    summaries = re.findall(r"<summary>(.*?)</summary>", html)
    # inputs, parameter state, fit, checkpoint and update, notes; adapter and activation sections are folded away
    assert len(summaries) == 5
    assert "<var>M</var><sub>state</sub>" in html
    assert any("24 GB" in unescape(s) for s in summaries)


def test_same_html_in_two_processes() -> None:
    """Byte-identical HTML (chart included) from this process and a fresh one (another hash seed)."""
    code = "import sys; from mlsysim_nb import Scenarios; sys.stdout.write(Scenarios.Llama3_8BLoraOnH100.to_html())"
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout
    here = Scenarios.Llama3_8BLoraOnH100.to_html().encode()
    assert fresh == here
    assert len(here) > 1000


@pytest.mark.parametrize(
    ("scenario", "missing"),
    [
        (Scenarios.ResNet50Fp32SgdMomentum, "hardware"),
        (Scenarios.Rank16AdaptersOnHypothetical8B, "hardware"),
        (Scenarios.Gpt2XlBatch32SegmentCheckpointed, ""),
        (Scenarios.Gpt2XlBatch32Activations, "checkpoint_segments"),
        (ActivationMemoryScenario(workload=Workloads.HYPOTHETICAL_8B, micro_batch=1, seq_len=512), "workload.heads"),
    ],
)
def test_reprs_render_without_raising(scenario: Any, missing: str) -> None:
    """Missing pieces show as 'not applicable: needs ...', never as an exception."""
    bundle = scenario._repr_mimebundle_()
    assert {"text/plain", "text/html", "text/markdown"} <= set(bundle)
    assert 'class="msn-error"' not in bundle["text/html"]
    if missing:
        assert f"not applicable: needs {missing}" in bundle["text/plain"]
    else:
        assert "not applicable" not in bundle["text/plain"]


def test_display_style_text() -> None:
    """set_options(display_style='text') leaves HTML out of the bundle."""
    with set_options(display_style="text"):
        assert "text/html" not in Scenarios.Gpt2Fp32AdamOnH100._repr_mimebundle_()
    assert "text/html" in Scenarios.Gpt2Fp32AdamOnH100._repr_mimebundle_()


def test_set_options_refuses_unknown() -> None:
    """Unknown options and values are errors."""
    with pytest.raises(TypeError, match="unknown option 'colour'"):
        set_options(colour="red")
    with pytest.raises(ValueError, match="display_style"):
        set_options(display_style="latex")


def test_repr_is_one_line() -> None:
    """repr() stays a one-line summary."""
    r = repr(Scenarios.Gpt2Fp32AdamOnH100)
    assert "\n" not in r
    assert "state 24 GB, 27.9 % of 85.9 GB (80 GiB): fits" in r


def test_catalog_and_record_reprs() -> None:
    """Catalogs render as tables; records as small tables."""
    assert "<table>" in Hardware._repr_html_()
    assert "NVIDIA H100" in Hardware._repr_mimebundle_()["text/plain"]
    assert "Gpt2Fp32AdamOnH100" in Scenarios._repr_html_()
    assert "85.9 GB" in Hardware.H100._repr_html_()
    assert "48" in Workloads.GPT2_XL._repr_html_()


def test_html_budget() -> None:
    """One repr with its chart stays under 40 KB."""
    for name in ("Gpt2MixedPrecisionAdamOnH100", "Llama3_8BLoraOnH100", "Gpt2XlBatch32SegmentCheckpointed"):
        assert len(Scenarios[name].to_html().encode()) < 40_000


@pytest.mark.parametrize(
    "name",
    ["Gpt2Fp32AdamOnH100", "Llama3_8BLoraOnH100", "Gpt2XlBatch32SegmentCheckpointed", "Mixtral8x7BServeOn2H100"],
)
def test_snapshot(name: str, request: pytest.FixtureRequest) -> None:
    """Golden HTML (without the chart, whose pixels depend on the matplotlib build, and the stylesheet)."""
    html = re.sub(r"<style>.*?</style>", "<style></style>", Scenarios[name].to_html(chart=False), flags=re.DOTALL)
    path = SNAPSHOTS / f"{name}.html"
    if request.config.getoption("--update-snapshots"):
        path.write_text(html, encoding="utf-8")
    if not path.exists():
        pytest.fail(f"{path} is missing; run pytest with --update-snapshots to write it, then review the diff")
    assert path.read_text(encoding="utf-8") == html


def test_plain_number_inputs_show_units() -> None:
    """Inputs print with units: 2 B, 80 GiB."""
    text = _stripped_text(
        TrainingStateFitScenario(
            workload=Workloads.GPT2_XL,
            hardware=Hardware.H100,
            bytes_per_value=2,
            optimizer_bytes_per_parameter=Q_(8, "B"),
        ).to_html(chart=False)
    )
    assert "bytes_per_value bytes per weight or gradient value 2 B" in text
    assert "80 GiB" in text


FLASH = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100  # batch 32, activations 85.56 GB


_NON_FINITE = re.compile(r"(?<![\w.])-?(inf|nan|infinity)(?![\w])", re.IGNORECASE)


def test_derivation_says_at_which_batch_the_activations_were_stated() -> None:
    """variant(batch_size=...) moves the activations with the batch; the inputs table says at which batch."""
    moved = FLASH.variant(batch_size=64)
    assert moved.activations.m_as("GB") == pytest.approx(2 * 85.5638016)
    assert "saved activations, stated at batch_size = 64" in moved.to_html(chart=False)
    restated = FLASH.variant(batch_size=64, activations=FLASH.activations)
    assert restated.activations == FLASH.activations
    assert moved.name == ""  # the case's title named batch 32; it is dropped, not kept stale


@settings(max_examples=40, deadline=None)
@given(every_kind_scenarios())
def test_every_number_shown_is_finite(s: Any) -> None:
    """For random valid inputs of every kind, no repr format shows infinity or NaN."""
    for out in (repr(s), s.to_text(), s.to_markdown(), s.to_html(chart=False)):
        assert _NON_FINITE.search(out) is None, _NON_FINITE.search(out)


SEGMENTS = Scenarios.Gpt2XlBatch32SegmentCheckpointed


def test_a_caveat_shows_in_every_repr() -> None:
    """Twenty-eight segments of 48 layers read low; the HTML, text and Markdown reprs say so, as the panel does."""
    s = SEGMENTS.variant(checkpoint_segments=28)
    assert any("28 segments do not divide the 48 layers" in c for c in s.caveats())
    assert "Caveat: 28 segments do not divide the 48 layers" in s.to_text()
    assert "**Caveat:** 28 segments do not divide the 48 layers" in s.to_markdown()
    assert '<div class="msn-warning">&#9888; 28 segments do not divide the 48 layers' in s.to_html(chart=False)
    assert "do not divide" not in SEGMENTS.to_text()  # k = 8 divides 48
