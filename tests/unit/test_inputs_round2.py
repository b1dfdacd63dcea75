"""Bad input, second round: huge and odd numbers, hardware figures, data files, layouts, names, the CLI."""

from __future__ import annotations

import re
import time
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest

from mlsysim_nb import Q_, FieldError, Scenarios, Workload, sweep
from mlsysim_nb.errors import show_number
from mlsysim_nb.records.hardware import Memory

T = Scenarios.Gpt2Fp32AdamOnH100
A = Scenarios.Gpt2XlBatch32SegmentCheckpointed


# -- 1. numbers no float can hold are refused with the field and its range --------------------------------------
@pytest.mark.parametrize(
    ("build", "field", "rule"),
    [
        (lambda: T.variant(batch_size=10**400), "batch_size", "must be from 1 to 1,048,576, got 1e+400"),
        (lambda: T.variant(batch_size=-(10**5000)), "batch_size", "must be from 1 to 1,048,576, got -1e+5000"),
        (lambda: T.variant(batch_size=Decimal("1e400")), "batch_size", "from 1 to 1,048,576, got 1e+400"),
        (lambda: T.variant(batch_size=Fraction(10**400, 3)), "batch_size", "from 1 to 1,048,576, got 3.33e+399"),
        (lambda: T.variant(bytes_per_value=10**400), "bytes_per_value", "must be at most 8 B, got 1e+400 B"),
        (lambda: T.variant(bytes_per_value=Q_(10**400, "GB")), "bytes_per_value", "at most 8 B, got 1e+400 GB"),
        (lambda: T.variant(bytes_per_value="1e400 B"), "bytes_per_value", "at most 8 B, got 1e+400 B"),
        (lambda: T.variant(bytes_per_value="10**400 B"), "bytes_per_value", "at most 8 B, got 1e+400 B"),
        (lambda: T.variant(bytes_per_value=-(10**400)), "bytes_per_value", "must be positive, got -1e+400"),
        (lambda: A.variant(precision_bytes=10**400), "precision_bytes", "must be at most 8, got 1e+400"),
        (lambda: Workload(name="w", parameters=10**400), "parameters", "from 1 to 1,000,000,000,000,000, got 1e+400"),
        (lambda: Workload(name="w", parameters=Q_(10**400, "Gparam")), "parameters", "got 1e+400 Gparam"),
        (lambda: sweep(T, batch_size=[1, 10**400]), "batch_size", "from 1 to 1,048,576, got 1e+400"),
        (lambda: sweep(T, bytes_per_value=[1, 10**400]), "bytes_per_value", "at most 8 B, got 1e+400"),
        (lambda: sweep(A, precision_bytes=[2, 10**400]), "precision_bytes", "at most 8, got 1e+400"),
    ],
)
def test_huge_numbers_name_the_field_and_range(build: Any, field: str, rule: str) -> None:
    """10**400 and its kin: a FieldError naming the field and its range, never an OverflowError."""
    with pytest.raises(FieldError) as caught:
        build()
    assert caught.value.field == field
    assert rule in str(caught.value)


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: T.variant(batch_size=Decimal("sNaN")), "batch_size"),
        (lambda: T.variant(bytes_per_value=Decimal("sNaN")), "bytes_per_value"),
        (lambda: T.variant(bytes_per_value=Decimal("NaN")), "bytes_per_value"),
        (lambda: A.variant(precision_bytes=Decimal("-sNaN")), "precision_bytes"),
        (lambda: sweep(T, batch_size=[1, Decimal("sNaN")]), "batch_size"),
        (lambda: Workload(name="w", parameters=Decimal("sNaN")), "parameters"),
    ],
)
def test_decimal_nan_is_a_field_error(build: Any, field: str) -> None:
    """Decimal("sNaN") (which float() refuses with a bare ValueError) is refused as not finite, naming the field."""
    with pytest.raises(FieldError, match="must be a finite number") as caught:
        build()
    assert caught.value.field == field


def test_decimal_too_small_for_a_float_is_not_zero() -> None:
    """1e-400 B is not silently 0 B: it is refused as too small to represent."""
    with pytest.raises(FieldError, match="too small to represent"):
        T.variant(bytes_per_value="1e-400 B")


@pytest.mark.parametrize(
    "text", ["10**10**10 B", "1 B**10**400", "(10**999)**999 B", "10⁹⁹⁹⁹⁹⁹⁹⁹⁹ B", "1" * 500 + " B"]
)
def test_text_that_would_take_forever_is_refused_unread(text: str) -> None:
    """Quantity text whose arithmetic would exhaust time or memory is refused at once, naming the field."""
    start = time.perf_counter()
    with pytest.raises(FieldError, match="cannot read") as caught:
        T.variant(bytes_per_value=text)
    assert caught.value.field == "bytes_per_value"
    assert time.perf_counter() - start < 1


@pytest.mark.parametrize("text", ["4*3 B", "80GiB", "9 B**1", "3² B", "1.5e3 B/B*B"])
def test_ordinary_quantity_text_is_still_read(text: str) -> None:
    """The guard leaves ordinary quantity text alone: each reads as an amount (refused here only for its size)."""
    with pytest.raises(FieldError, match="at most 8 B"):
        T.variant(bytes_per_value=text)


# -- 2. one spelling of numbers in range messages -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "text"),
    [(2**20, "1,048,576"), (1e18, "1,000,000,000,000,000,000"), (2.5, "2.5"), (10**400, "1e+400"), (8, "8")],
)
def test_show_number(value: Any, text: str) -> None:
    """Whole numbers with thousands separators, others to six digits, huge ones without a float."""
    assert show_number(value) == text


@pytest.mark.parametrize(
    ("build", "text"),
    [
        (lambda: T.variant(batch_size=2**21), "must be at most 1,048,576, got 2,097,152"),
        (lambda: T.variant(activations=Q_(2e18, "B")), "must be at most 1,000,000,000,000,000,000 B"),
        (lambda: T.variant(bytes_per_value=Q_(80, "GiB")), "must be at most 8 B, got 85,899,345,920 B"),
        (lambda: sweep(T, batch_size=[1, 2**21]), "must be at most 1,048,576, got 2,097,152"),
    ],
)
def test_range_messages_write_whole_numbers_with_separators(build: Any, text: str) -> None:
    """Every range message spells a whole number one way: 1,048,576, never 1.04858e+06 or 1e+18."""
    with pytest.raises(FieldError) as caught:
        build()
    assert text in str(caught.value)


def test_knob_describe_uses_the_same_spelling() -> None:
    """A field's description of its range uses the messages' spelling."""
    from mlsysim_nb.model.knob import knobs

    declared = knobs(T)
    assert declared["batch_size"].describe() == "a whole number from 1 to 1,048,576, or None"
    assert declared["activations"].describe().endswith("at most 1,000,000,000,000,000,000 B, or None")


def test_memory_refuses_a_huge_integer() -> None:
    """Memory(10**400, ...) is a FieldError naming the capacity, not an OverflowError."""
    with pytest.raises(FieldError) as caught:
        Memory(10**400, Q_(1, "TB/s"))
    assert caught.value.field == "capacity"


# -- 3. every hardware figure within a physical range ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("capacity", "bandwidth", "field", "text"),
    [
        (Q_(1e300, "GB"), "3 TB/s", "capacity", "must be from 1 KiB to 10 PB, got 1e+300 GB"),
        ("80 GiB", Q_(1e300, "TB/s"), "bandwidth", "must be from 1 kB/s to 100 PB/s, got 1e+300 TB/s"),
        (Q_(1e-320, "B"), "3 TB/s", "capacity", "must be from 1 KiB to 10 PB"),
        ("20 PB", "3 TB/s", "capacity", "must be from 1 KiB to 10 PB, got 20 PB"),
        ("80 GiB", "1 B/s", "bandwidth", "from 1 kB/s to 100 PB/s"),
        (10**400, "3 TB/s", "capacity", "from 1 KiB to 10 PB, got 1e+400 B"),
    ],
)
def test_memory_figures_are_bounded(capacity: Any, bandwidth: Any, field: str, text: str) -> None:
    """Capacity and bandwidth outside their physical range are refused, the range said in the message."""
    with pytest.raises(FieldError) as caught:
        Memory(capacity, bandwidth)
    assert caught.value.field == field
    assert text in str(caught.value)


def test_peak_flops_is_bounded() -> None:
    """Peak FLOPS beyond 10 EFLOP/s (a hundred wafer-scale engines) is refused."""
    from mlsysim_nb.records.hardware import HardwareNode

    with pytest.raises(FieldError, match=r"from 1 kFLOP/s to 10 EFLOP/s, got 1e\+30 FLOPS"):
        HardwareNode(name="x", memory=Memory("80 GiB", "3 TB/s"), peak_flops="1e30 FLOPS")


def test_hardware_file_with_a_huge_figure_names_the_file(tmp_path: Any) -> None:
    """A hardware file's "10**400 B" is a HardwareFileError naming the file, the entry and the key."""
    from mlsysim_nb.errors import HardwareFileError
    from mlsysim_nb.records.hardware import load_hardware

    path = tmp_path / "lab.toml"
    path.write_text(
        '[BIG]\nname = "Big"\nmemory_capacity = "10**400 B"\nmemory_bandwidth = "1 TB/s"\nsource = "https://x.example"\n',
        encoding="utf-8",
    )
    with pytest.raises(HardwareFileError, match=r"lab\.toml, entry \[BIG\], key 'memory_capacity': must be from 1 KiB"):
        load_hardware(path)


def test_the_bounds_leave_every_shipped_accelerator_alone() -> None:
    """Every shipped accelerator lies inside the bounds (they load), and the smallest and largest are far inside."""
    from mlsysim_nb import Hardware

    capacities = [node.memory.capacity.m_as("B") for _, node in Hardware.items()]
    assert min(capacities) > 2**30
    assert max(capacities) < 1e13


# -- 4. a user file never replaces a shipped accelerator ---------------------------------------------------------------
def _lab_file(tmp_path: Any, key: str, name: str, capacity: str = "1 GiB") -> Any:
    path = tmp_path / f"{key.lower()}.toml"
    path.write_text(
        f'[{key}]\nname = "{name}"\nmemory_capacity = "{capacity}"\nmemory_bandwidth = "1 TB/s"\n'
        'source = "https://lab.example/gpu"\n',
        encoding="utf-8",
    )
    return path


def test_user_file_with_a_shipped_key_is_refused_naming_both_files(tmp_path: Any) -> None:
    """A user's [H100] is refused, naming the user's file and the shipped one; the shipped H100 and its cases stay."""
    from mlsysim_nb.errors import HardwareFileError
    from mlsysim_nb.records.hardware import HardwareCatalog

    catalog = HardwareCatalog()
    path = _lab_file(tmp_path, "H100", "My tiny H100")
    with pytest.raises(HardwareFileError) as caught:
        catalog.add_file(path)
    message = str(caught.value)
    assert str(path) in message
    assert "nvidia.toml" in message
    assert "[H100]" in message
    assert catalog["H100"].memory.capacity == Q_(80, "GiB")


def test_shipped_catalog_is_unchanged_after_a_refused_file(tmp_path: Any) -> None:
    """A refused file adds nothing, not even its other entries; the named case keeps reporting "fits"."""
    from mlsysim_nb import Hardware
    from mlsysim_nb.errors import HardwareFileError

    path = tmp_path / "two.toml"
    path.write_text(
        '[LAB_OK]\nname = "Lab OK"\nmemory_capacity = "1 GiB"\nmemory_bandwidth = "1 TB/s"\nsource = "https://x.example"\n'
        '[H100]\nname = "Fake"\nmemory_capacity = "1 GiB"\nmemory_bandwidth = "1 TB/s"\nsource = "https://x.example"\n',
        encoding="utf-8",
    )
    with pytest.raises(HardwareFileError):
        Hardware.add_file(path)
    assert "LAB_OK" not in Hardware
    assert Hardware.H100.memory.capacity == Q_(80, "GiB")
    assert Scenarios.Gpt2Fp32AdamOnH100.fits


def test_user_file_with_a_shipped_display_name_is_refused(tmp_path: Any) -> None:
    """A new key whose name is a shipped accelerator's ("NVIDIA H100", any case or spacing) is refused too."""
    from mlsysim_nb.errors import HardwareFileError
    from mlsysim_nb.records.hardware import HardwareCatalog

    with pytest.raises(
        HardwareFileError, match=r"name 'nvidia  H100' is already used by \[H100\] \(from .*nvidia\.toml\)"
    ):
        HardwareCatalog().add_file(_lab_file(tmp_path, "MY_H100", "nvidia  H100"))


def test_duplicate_names_within_one_file_are_refused(tmp_path: Any) -> None:
    """Two entries of one file with the same display name are refused, naming the first."""
    from mlsysim_nb.errors import HardwareFileError
    from mlsysim_nb.records.hardware import HardwareCatalog

    path = tmp_path / "dup.toml"
    path.write_text(
        '[A]\nname = "Lab"\nmemory_capacity = "1 GiB"\nmemory_bandwidth = "1 TB/s"\nsource = "https://x.example"\n'
        '[B]\nname = "Lab"\nmemory_capacity = "2 GiB"\nmemory_bandwidth = "1 TB/s"\nsource = "https://x.example"\n',
        encoding="utf-8",
    )
    with pytest.raises(HardwareFileError, match=r"entry \[B\], key 'name': the name 'Lab' is already used by \[A\]"):
        HardwareCatalog().add_file(path)


def test_add_refuses_a_key_already_in_the_catalog() -> None:
    """HardwareCatalog.add("H100", ...) is refused, naming where the existing entry came from."""
    from mlsysim_nb.records.hardware import HardwareCatalog, HardwareNode

    catalog = HardwareCatalog()
    with pytest.raises(FieldError, match=r"HardwareCatalog.key: the catalog already has an accelerator \[H100\]"):
        catalog.add("H100", HardwareNode(name="Tiny", memory=Memory("1 GiB", "1 TB/s")))
    assert catalog.H100.memory.capacity == Q_(80, "GiB")


# -- 5. data files and count text ----------------------------------------------------------------------------------
_LAB = '[LAB]\nname = "Lab GPU"\nmemory_capacity = "48 GiB"\nmemory_bandwidth = "960 GB/s"\nsource = "https://lab.example"\n'


def test_hardware_file_with_a_byte_order_mark_loads(tmp_path: Any) -> None:
    """A UTF-8 file that starts with a byte-order mark (as some editors save it) loads like one without."""
    from mlsysim_nb.records.hardware import load_hardware

    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + _LAB.encode("utf-8"))
    assert load_hardware(path)["LAB"].memory.capacity == Q_(48, "GiB")


def test_empty_name_in_a_hardware_file_names_the_file_and_entry(tmp_path: Any) -> None:
    """An empty name (name = "") is a HardwareFileError naming the file, the entry and the key, not a bare FieldError."""
    from mlsysim_nb.errors import HardwareFileError
    from mlsysim_nb.records.hardware import load_hardware

    path = tmp_path / "noname.toml"
    path.write_text(_LAB.replace('"Lab GPU"', '""'), encoding="utf-8")
    with pytest.raises(HardwareFileError, match=r"noname\.toml, entry \[LAB\], key 'name': must be a non-empty"):
        load_hardware(path)


def test_record_rules_in_a_hardware_file_name_the_file(tmp_path: Any) -> None:
    """A rule the record itself enforces (a capacity beyond 10 PB) is reported with the file, entry and key."""
    from mlsysim_nb.errors import HardwareFileError
    from mlsysim_nb.records.hardware import load_hardware

    path = tmp_path / "big.toml"
    path.write_text(_LAB.replace('"48 GiB"', '"20 PB"'), encoding="utf-8")
    with pytest.raises(HardwareFileError, match=r"big\.toml, entry \[LAB\], key 'memory_capacity': must be from 1 KiB"):
        load_hardware(path)


def test_driver_capacity_needs_its_source(tmp_path: Any) -> None:
    """A driver_capacity without driver_capacity_source is refused, like every other figure without its source."""
    from mlsysim_nb.errors import HardwareFileError
    from mlsysim_nb.records.hardware import load_hardware

    path = tmp_path / "driver.toml"
    path.write_text(_LAB + 'driver_capacity = "47000 MiB"\n', encoding="utf-8")
    with pytest.raises(HardwareFileError, match=r"key 'driver_capacity': needs driver_capacity_source"):
        load_hardware(path)
    path.write_text(_LAB + 'driver_capacity = "47000 MiB"\ndriver_capacity_source = "https://lab.example/smi"\n')
    assert load_hardware(path)["LAB"].driver_capacity == Q_(47000, "MiB")


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("8.03 Gparam", 8_030_000_000),
        ("1.5 Bparam", 1_500_000_000),
        ("1500000000", 1_500_000_000),
        ("2e9 count", 2 * 10**9),
    ],
)
def test_count_fields_read_quantity_text(text: str, count: int) -> None:
    """Count text reads like a Quantity, with the same whole-number tolerance ("8.03 Gparam" is 8,030,000,000)."""
    workload = Workload(name="w", parameters=text)
    assert workload.parameters.magnitude == count


def test_count_text_in_a_scenario_field() -> None:
    """A scenario's count field takes text too: batch_size="16" is 16."""
    assert T.variant(batch_size="16").batch_size == 16


@pytest.mark.parametrize(
    ("text", "reason"),
    [("8.03 GB", "must be a plain count, got a quantity in GB"), ("2.5", "fraction"), ("lots", "cannot read")],
)
def test_count_text_follows_the_count_rules(text: str, reason: str) -> None:
    """Count text of the wrong dimension, a fraction or unreadable text is refused as a Quantity would be."""
    with pytest.raises(FieldError, match=reason) as caught:
        T.variant(batch_size=text)
    assert caught.value.field == "batch_size"


# -- 6. attention layouts that cannot exist -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("shape", "field", "rule"),
    [
        ({"hidden_dim": 4096, "heads": 32, "kv_heads": 5}, "kv_heads", "must divide heads (32) evenly"),
        ({"hidden_dim": 4096, "heads": 32, "kv_heads": 64}, "kv_heads", "must be at most 32"),
        ({"hidden_dim": 1000, "heads": 16}, "heads", "must divide hidden_dim (1,000) evenly"),
    ],
)
def test_impossible_attention_layouts_are_refused(shape: dict[str, int], field: str, rule: str) -> None:
    """kv_heads must divide heads (and not exceed it); heads must divide hidden_dim: each refusal names the field."""
    with pytest.raises(FieldError, match=re.escape(rule)) as caught:
        Workload(name="w", parameters=10**9, layers=4, **shape)
    assert caught.value.field == field


def test_every_shipped_workload_and_case_still_loads() -> None:
    """The shipped workloads and every named case satisfy the layout rules (heads divide the width, GQA divides)."""
    from mlsysim_nb import Workloads

    for workload in Workloads.all().values():
        rebuilt = Workload(
            name=workload.name,
            parameters=workload.parameters,
            layers=workload.layers,
            hidden_dim=workload.hidden_dim,
            heads=workload.heads,
            kv_heads=workload.kv_heads,
            context_length=workload.context_length,
        )
        assert rebuilt == workload
    assert all(Scenarios[name].title() for name in Scenarios)


# -- 7. names cannot forge lines, hide text or reverse what follows -------------------------------------------------
FORGED = "GPT\nFAKE LINE: fits\x00\u202eabc\u2066\x1b[31m"
_RAW = ("\n", "\x00", "\u202e", "\u2066", "\x1b")


def _forged_scenario() -> Any:
    import dataclasses

    return dataclasses.replace(T, name=FORGED)


def _assert_no_raw_controls(text: str, lines: int | None = None) -> None:
    body = text if lines is None else "".join(text.splitlines()[:lines])
    for char in _RAW:
        assert char not in body, repr(char)


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


# -- 8. escape_markdown in linear time, output unchanged --------------------------------------------------------
# the former one-regex rule, kept here as the oracle the linear scan must agree with
_OLD_AUTOLINK = re.compile(r"[A-Za-z][\w+.-]*://|\bwww\.", re.IGNORECASE)


def _old_unlink(text: str) -> str:
    return _OLD_AUTOLINK.sub(lambda m: m.group(0).replace(":", "&#58;").replace(".", "&#46;"), text)


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


# -- 9. the command line under a closed pipe and an ASCII-only terminal -------------------------------------------------
def _cli(args: list[str], env: dict[str, str] | None = None, stdout: Any = None) -> Any:
    """``python -m mlsysim_nb ARGS`` in a fresh process that imports this package."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import mlsysim_nb

    root = str(Path(mlsysim_nb.__file__).resolve().parents[1])
    environment = {**os.environ, "PYTHONPATH": root, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "mlsysim_nb", *args],
        stdout=subprocess.PIPE if stdout is None else stdout,
        stderr=subprocess.PIPE,
        env=environment,
        check=False,
        timeout=120,
    )


@pytest.mark.parametrize("args", [["list"], ["show", "Gpt2Fp32AdamOnH100"]])
def test_cli_closed_pipe_exits_quietly(args: list[str]) -> None:
    """Writing into a pipe whose reader has gone (`list | head -1`) ends with status 1 and no traceback."""
    import os

    read, write = os.pipe()
    os.close(read)  # the reader has gone before the first line
    try:
        result = _cli(args, stdout=write)
    finally:
        os.close(write)
    assert result.returncode == 1
    assert result.stderr == b""


@pytest.mark.parametrize(
    "env",
    [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}],
)
def test_cli_under_an_ascii_terminal_degrades(env: dict[str, str]) -> None:
    """Under an ASCII-only terminal `show` prints the derivation with ASCII spellings (x, *, ^9), no traceback."""
    result = _cli(["show", "Gpt2XlBatch32SegmentCheckpointed"], env=env)
    assert result.returncode == 0, result.stderr.decode("ascii", "replace")
    assert result.stderr == b""
    text = result.stdout.decode("ascii")
    assert "1.5x10^9" in text or "x10^" in text
    assert "*" in text


def test_ascii_spelling() -> None:
    """Symbols spelt out, a run of superscripts as one exponent, Greek by name, anything else escaped."""
    from mlsysim_nb.__main__ import _ascii_spelling

    assert _ascii_spelling("1.5×10⁹ · κ ≤ ⌊x⌋, 10⁻¹² — ☃") == "1.5x10^9 * kappa <= floor(x), 10^-12 -- \\u2603"


def test_choice_field_names_a_huge_integer_safely() -> None:
    """A choice field given an integer of 5,000 digits (whose repr Python refuses) names it as 1e+4999."""
    from mlsysim_nb.model.fields import check_choice

    with pytest.raises(FieldError, match=r"must be one of 'none', 'full', got 1e\+4999"):
        check_choice("S", "recompute", 10**4999, ("none", "full"))


def test_parse_quantity_is_the_guarded_reader() -> None:
    """parse_quantity reads quantity text and refuses nested powers before evaluating them."""
    from mlsysim_nb.model.fields import parse_quantity

    assert parse_quantity("80 GiB") == Q_(80, "GiB")
    with pytest.raises(ValueError, match="no nested powers"):
        parse_quantity("10**10**10 B")
