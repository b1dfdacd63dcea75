"""Markdown and text reprs escape hostile names: no image, link, markup or broken row survives."""

from __future__ import annotations

import dataclasses
import re
import time
from html import unescape
from typing import Any

import mistune
import pytest

from mlsysim_nb import (
    ActivationMemoryScenario,
    Hardware,
    HardwareCatalog,
    HardwareNode,
    Memory,
    Scenarios,
    TrainingStateFitScenario,
    Workload,
    sweep,
)
from mlsysim_nb.render.text import escape_markdown, one_line

HOSTILE = [
    "![i](https://x.example/i.png)",
    "[c](javascript:alert(1))",
    "&amp;",
    "a | b",
    "line one\nline two\r\nthree\u2028four",
    "`tick` and ``two``",
    "<script>alert(1)</script>",
    "*bold* _it_ ~~gone~~ $x^2$ # not a heading",
    "<https://x.example>",
    "see https://x.example/a_b_c> or www.x.example",
    "1. first",
    "- item",
]

# the renderer nbconvert uses for Markdown, with the GitHub table, strikethrough and bare-URL extensions
_RENDER = mistune.create_markdown(escape=False, plugins=["table", "strikethrough", "url"])


def _html(markdown: str) -> str:
    html = _RENDER(markdown)
    assert isinstance(html, str)
    return html


def _visible(html: str) -> str:
    """The text a reader sees: tags removed, entities decoded."""
    return unescape(re.sub(r"<[^>]+>", "", html))


def _assert_inert(html: str) -> None:
    """No image, link, script, emphasis, code, heading, list or quote markup."""
    for tag in (
        "<img",
        "<a ",
        "<script",
        "<em>",
        "<strong>",
        "<code>",
        "<del>",
        "<h1>",
        "<ol>",
        "<ul>",
        "<blockquote>",
    ):
        assert tag not in html, tag


@pytest.mark.parametrize("name", HOSTILE)
def test_escape_markdown_renders_literally(name: str) -> None:
    """escape_markdown(name) renders as exactly the name, on one line."""
    html = _html(escape_markdown(name))
    _assert_inert(html)
    assert _visible(html).strip() == one_line(name)


def _scenarios(name: str) -> list[Any]:
    w = Workload(name=name, parameters=10**9, layers=4, hidden_dim=64, heads=4, context_length=128)
    t = TrainingStateFitScenario(
        name=name, workload=w, hardware=Hardware.H100, bytes_per_value=2, optimizer_bytes_per_parameter=8
    )
    return [t, ActivationMemoryScenario(name=name, workload=w, micro_batch=2)]


def _tags(html: str) -> dict[str, int]:
    """How many of each opening tag the rendered HTML holds."""
    names = re.findall(r"<([a-z][a-z0-9]*)\b", html)
    return {name: names.count(name) for name in sorted(set(names))}


@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize("index", [0, 1])
def test_scenario_markdown_is_inert(name: str, index: int) -> None:
    """A hostile scenario and workload name renders the same tags as a plain name, and shows as written."""
    html = _html(_scenarios(name)[index].to_markdown())
    plain = _html(_scenarios("plain")[index].to_markdown())
    assert _tags(html) == _tags(plain)
    assert one_line(name) in _visible(html)


@pytest.mark.parametrize("name", HOSTILE)
def test_hardware_and_workload_markdown_tables_are_inert(name: str) -> None:
    """Hardware, catalog and workload Markdown tables escape a hostile name; each row stays one row."""
    node = HardwareNode(name=name, memory=Memory("80 GiB", "3 TB/s"))
    catalog = HardwareCatalog()
    catalog.add("HOSTILE", node)
    workload = Workload(name=name, parameters=10**9, layers=4, hidden_dim=64, heads=4, context_length=128)
    for markdown in (node._repr_markdown_(), catalog._repr_markdown_(), workload._repr_markdown_()):
        assert markdown is not None
        html = _html(markdown)
        _assert_inert(html)
        assert one_line(name) in _visible(html)
        assert html.count("<tr>") == markdown.count("\n")  # one <tr> per Markdown row except the separator


@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize("index", [0, 1])
def test_text_repr_one_line_per_row(name: str, index: int) -> None:
    """The text repr shows a name with line breaks on one line, with ⏎ where each break was."""
    s = _scenarios(name)[index]
    text = s.to_text()
    plain = _scenarios("plain")[index].to_text()
    assert len(text.splitlines()) == len(plain.splitlines())
    assert one_line(name) in text
    assert text.splitlines()[0].startswith(one_line(name))


def test_catalog_text_one_line_per_accelerator() -> None:
    """The catalog's text repr keeps one line per accelerator when a name holds line breaks."""
    catalog = HardwareCatalog()
    plain = len(catalog._repr_text_().splitlines())
    catalog.add("HOSTILE", HardwareNode(name="two\nlines\r\nthree", memory=Memory("80 GiB", "3 TB/s")))
    text = catalog._repr_text_()
    assert len(text.splitlines()) == plain + 1
    assert "two⏎lines⏎three" in text


# -- every hostile class of character, in every rendering: text, Markdown, HTML, the chart and a sweep ---------------
HOSTILE_CLASSES = {
    "newline": "GPU\nforged line",
    "carriage return": "GPU\roverwritten",
    "CRLF": "GPU\r\nnext",
    "vertical tab and form feed": "GPU\x0b\x0cx",
    "NUL": "GPU\x00x",
    "bell and delete": "GPU\x07\x7fx",
    "terminal escape": "GPU\x1b[31mred\x1b[0m",
    "C1 controls": "GPU\x85\x9b31m",
    "bidi override": "GPU\u202eevil",
    "bidi isolate and mark": "GPU\u2066x\u2069\u200f",
    "line and paragraph separators": "GPU\u2028x\u2029y",
    "lone high surrogate": "GPU\ud800x",
    "lone low surrogate": "GPU\udfffx",
    "dollar mathtext": "$5 GPU$ a_b^c",
}
_RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u2028\u2029\ud800-\udfff]")


def _hostile_training(name: str) -> TrainingStateFitScenario:
    node = HardwareNode(name=name, memory=Memory("80 GiB", "3 TB/s"))
    w = Workload(name=name, parameters=10**9, layers=4, hidden_dim=64, heads=4, context_length=128)
    return TrainingStateFitScenario(
        name=name, workload=w, hardware=node, bytes_per_value=2, optimizer_bytes_per_parameter=8
    )


@pytest.mark.parametrize("name", HOSTILE_CLASSES.values(), ids=HOSTILE_CLASSES.keys())
def test_every_rendering_escapes_every_hostile_class(name: str) -> None:
    """Text, Markdown and HTML carry no raw control, bidi or surrogate character, and the HTML keeps its chart."""
    s = _hostile_training(name)
    html = s.to_html()
    assert 'class="msn-chart"' in html  # the derivation and its chart, not an error box
    assert 'class="msn-error"' not in html
    for rendering in (html, s.to_markdown(), repr(s)):
        assert not _RAW.search(rendering), rendering[:200]
        rendering.encode("utf-8")  # a lone surrogate could not be written
    text = s.to_text()
    assert not _RAW.search(text.replace("\n", ""))
    assert len(text.splitlines()) == len(_hostile_training("plain").to_text().splitlines())


@pytest.mark.parametrize("name", HOSTILE_CLASSES.values(), ids=HOSTILE_CLASSES.keys())
def test_the_chart_survives_every_hostile_class(name: str) -> None:
    """The memory chart and a sweep's plot and map draw a hostile device name as its visible escapes."""
    import io

    from mlsysim_nb.render.charts import chart_text

    s = _hostile_training(name)
    grid = sweep(s, bytes_per_value=[1, 2], optimizer_bytes_per_parameter=[4, 8])
    for fig in (s.plot(), grid.plot(), grid.fit_map("bytes_per_value", "optimizer_bytes_per_parameter")):
        fig.savefig(io.BytesIO(), format="png")
        for text in fig.findobj(lambda artist: hasattr(artist, "get_text")):
            assert not _RAW.search(text.get_text())
    assert chart_text(name) == one_line(name).replace("$", r"\$")  # the one escaping every repr uses


@pytest.mark.parametrize("name", HOSTILE_CLASSES.values(), ids=HOSTILE_CLASSES.keys())
def test_a_sweep_repr_is_one_escaped_line(name: str) -> None:
    """A sweep's text repr escapes the scenario's title as every other repr does (it printed it raw before)."""
    grid = sweep(_hostile_training(name), batch_size=[1, 2])
    for rendering in (repr(grid), grid._repr_text_(), grid._repr_html_()):
        assert not _RAW.search(rendering)
    assert one_line(name) in repr(grid)
    assert len(repr(grid).splitlines()) == 1


T = Scenarios.Gpt2Fp32AdamOnH100


FORGED = "GPT\nFAKE LINE: fits\x00\u202eabc\u2066\x1b[31m"


_RAW_CHARS = ("\n", "\x00", "\u202e", "\u2066", "\x1b")


def _forged_scenario() -> Any:
    import dataclasses

    return dataclasses.replace(T, name=FORGED)


def _assert_no_raw_controls(text: str, lines: int | None = None) -> None:
    body = text if lines is None else "".join(text.splitlines()[:lines])
    for char in _RAW_CHARS:
        assert char not in body, repr(char)


# the former one-regex rule, kept here as the oracle the linear scan must agree with
_OLD_AUTOLINK = re.compile(r"[A-Za-z][\w+.-]*://|\bwww\.", re.IGNORECASE)


def _old_unlink(text: str) -> str:
    return _OLD_AUTOLINK.sub(lambda m: m.group(0).replace(":", "&#58;").replace(".", "&#46;"), text)


def test_text_repr_shows_controls_as_escapes() -> None:
    """The text derivation writes NUL, ESC and bidi controls as visible escapes; the stored name is unchanged."""
    s = _forged_scenario()
    text = s.to_text()
    first = text.splitlines()[0]
    _assert_no_raw_controls(first)
    assert first.startswith("GPT⏎FAKE LINE: fits\\x00\\u202eabc\\u2066\\x1b[31m")
    assert not any(line.startswith("FAKE LINE") for line in text.splitlines())
    assert s.name == FORGED


def test_markdown_repr_shows_controls_as_escapes() -> None:
    """The Markdown derivation holds no raw control or bidi character from a name."""
    markdown = _forged_scenario()._repr_mimebundle_()["text/markdown"]
    _assert_no_raw_controls(markdown.replace("\n", ""))
    assert "\\\\x00" in markdown


def test_compare_text_cannot_forge_a_line() -> None:
    """compare()'s text keeps one line per row whatever a title holds; no line starts with the forged text."""
    from mlsysim_nb import compare

    forged = compare(_forged_scenario(), T)._repr_text_()
    plain = compare(T, T)._repr_text_()
    assert len(forged.splitlines()) == len(plain.splitlines())
    assert not any(line.startswith("FAKE LINE") for line in forged.splitlines())
    _assert_no_raw_controls(forged.replace("\n", ""))


def test_compare_html_shows_controls_as_escapes() -> None:
    """compare()'s HTML escapes markup and also shows control and bidi characters as visible escapes."""
    from mlsysim_nb import compare

    html = compare(_forged_scenario(), T)._repr_html_()
    for char in ("\x00", "\u202e", "\u2066", "\x1b"):
        assert char not in html
    assert "GPT⏎FAKE LINE: fits\\x00\\u202eabc" in html


def test_catalog_and_workload_tables_show_controls_as_escapes() -> None:
    """Hardware catalog text, hardware and workload Markdown tables: no raw control or bidi character."""
    from mlsysim_nb.records.hardware import HardwareCatalog, HardwareNode

    catalog = HardwareCatalog()
    node = HardwareNode(name=FORGED, memory=Memory("80 GiB", "3 TB/s"))
    catalog.add("FORGED", node)
    _assert_no_raw_controls(catalog._repr_text_().replace("\n", "|"))
    for markdown in (node._repr_markdown_(), Workload(name=FORGED, parameters=10**9)._repr_markdown_()):
        assert markdown is not None
        _assert_no_raw_controls(markdown.replace("\n", "|"))


def test_unlink_agrees_with_the_regex_rule() -> None:
    """The linear bare-URL scan gives exactly the former regex's output on 20,000 random strings of URL pieces."""
    import random

    from mlsysim_nb.render.text import _unlink

    rng = random.Random(20261201)  # noqa: S311 - reproducible test strings, not secrets
    pieces = [*"wW.:/ a-_+1#&;\\", "K", "ſ", "ı", "\u212a", "é", "://", "www.", "http://", "x.y"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 20)))
        assert _unlink(text) == _old_unlink(text), repr(text)


@pytest.mark.parametrize("text", ["a" * 100_000, "w" * 100_000, "www. " * 20_000 + "a" * 50_000 + "://"])
def test_escape_markdown_is_linear(text: str) -> None:
    """100,000 characters escape in well under a second (the backtracking regex took over 30 s on the first two)."""
    from mlsysim_nb.render.text import escape_markdown

    start = time.perf_counter()
    escaped = escape_markdown(text)
    assert time.perf_counter() - start < 1.0
    assert len(escaped) >= len(text)


FLASH = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100


def test_names_cannot_forge_lines_or_reverse_text_in_html() -> None:
    """A NUL or a right-to-left override in a name is shown as an escape in the HTML repr too."""
    s = FLASH.variant(name="mine\u202e\x00")
    html = s.to_html(chart=False)
    assert "\u202e" not in html
    assert "\x00" not in html
    assert "\\u202e" in html


def test_the_short_repr_is_one_line_whatever_the_names() -> None:
    """A workload named with a line break cannot add a line to repr()."""
    workload = dataclasses.replace(FLASH.workload, name="GPT\nFAKE LINE: fits")
    s = FLASH.variant(workload=workload)
    assert "\n" not in repr(s)
    assert "GPT⏎FAKE LINE: fits" in repr(s)
