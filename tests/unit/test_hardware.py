"""The hardware catalog: every entry loads with units and a source; malformed files are named."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlsysim_nb import Q_, Hardware, HardwareCatalog, HardwareFileError, HardwareNode, load_hardware

REQUIRED = [
    "A100_40GB",
    "A100_80GB",
    "H100",
    "H100_PCIE",
    "H200",
    "B200",
    "MI300X",
    "GAUDI3",
    "TPU_V5E",
    "TPU_V5P",
    "L4",
    "T4",
    "RTX_4090",
    "JETSON_AGX_ORIN",
]


def test_catalog_covers_training_accelerators() -> None:
    """The issue's list of accelerators is present."""
    for key in REQUIRED:
        assert key in Hardware


def test_h100_agrees_with_reference() -> None:
    """80 GiB and 3.35 TB/s, as in mlsysim 0.3.0."""
    h = Hardware.H100
    assert Q_(80, "GiB") == h.memory.capacity
    assert Q_(3.35, "TB/s") == h.memory.bandwidth


@pytest.mark.parametrize("key", list(Hardware))
def test_every_entry_has_units_and_source(key: str) -> None:
    """Capacity is information, bandwidth information per time, and a URL is given."""
    h = Hardware[key]
    assert h.memory.capacity.check("[information]")
    assert h.memory.bandwidth.check("[information]/[time]")
    if h.peak_flops is not None:
        assert h.peak_flops.check("[compute]/[time]")
    assert h.source.startswith("https://")
    assert h.vendor


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "lab.toml"
    path.write_text(text, encoding="utf-8")
    return path


GOOD = '[MY_GPU]\nname = "Lab GPU"\nmemory_capacity = "48 GB"\nmemory_bandwidth = "960 GB/s"\nsource = "https://example.org/ds.pdf"\n'


def test_user_file_loads_and_joins_catalog(tmp_path: Path) -> None:
    """A user's file loads and can be added to a catalog."""
    nodes = load_hardware(_write(tmp_path, GOOD))
    assert Q_(48, "GB") == nodes["MY_GPU"].memory.capacity
    catalog = HardwareCatalog()
    assert catalog.add_file(tmp_path / "lab.toml") == ["MY_GPU"]
    assert "MY_GPU" in catalog
    assert "MY_GPU" not in Hardware


@pytest.mark.parametrize(
    ("text", "entry", "key", "reason"),
    [
        (GOOD.replace('"48 GB"', '"48"'), "MY_GPU", "memory_capacity", "units of"),
        (GOOD.replace('"48 GB"', "48"), "MY_GPU", "memory_capacity", "string with its unit"),
        (GOOD.replace('"48 GB"', '"48 GB/s"'), "MY_GPU", "memory_capacity", "units of"),
        (GOOD.replace('"960 GB/s"', '"960 GB"'), "MY_GPU", "memory_bandwidth", "units of"),
        (GOOD.replace('"48 GB"', '"-48 GB"'), "MY_GPU", "memory_capacity", "positive"),
        (GOOD.replace('"48 GB"', '"lots"'), "MY_GPU", "memory_capacity", "cannot read"),
        (GOOD.replace('source = "https://example.org/ds.pdf"\n', ""), "MY_GPU", "source", "required"),
        (GOOD.replace("https://example.org/ds.pdf", "my notes"), "MY_GPU", "source", "URL"),
        (GOOD + 'colour = "green"\n', "MY_GPU", "colour", "unknown key"),
        (GOOD + "release_year = 1800\n", "MY_GPU", "release_year", "year"),
        (GOOD.replace("[MY_GPU]", "[my-gpu]"), "my-gpu", None, "letters"),
    ],
)
def test_malformed_entry_names_file_entry_key(
    tmp_path: Path, text: str, entry: str, key: str | None, reason: str
) -> None:
    """Every malformed entry raises HardwareFileError naming the file, the entry and the key."""
    path = _write(tmp_path, text)
    with pytest.raises(HardwareFileError, match=reason) as info:
        load_hardware(path)
    assert str(path) in str(info.value)
    assert entry == info.value.entry
    assert key == info.value.key


def test_malformed_toml_names_file(tmp_path: Path) -> None:
    """Invalid TOML is reported with the file name."""
    path = _write(tmp_path, "[A\nname=")
    with pytest.raises(HardwareFileError, match="not valid TOML"):
        load_hardware(path)


def test_missing_file(tmp_path: Path) -> None:
    """A missing file is a HardwareFileError."""
    with pytest.raises(HardwareFileError, match="cannot be read"):
        load_hardware(tmp_path / "nope.toml")


def test_unknown_key_lists_known() -> None:
    """Hardware['X'] names the known keys."""
    with pytest.raises(KeyError, match="H100"):
        Hardware["X100"]


def test_hardware_node_direct() -> None:
    """A node can be built in code, with plain bandwidth read as bytes per second."""
    from mlsysim_nb import Memory

    h = HardwareNode(name="n", memory=Memory(Q_(1, "GB"), 1e9))
    assert Q_(1, "GB/s") == h.memory.bandwidth


def test_data_files_ship_in_wheel(tmp_path: Path) -> None:
    """The built wheel contains the hardware TOML files."""
    import subprocess
    import sys
    import zipfile

    repo = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(repo),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    wheel = next(tmp_path.glob("mlsysim_nb-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for vendor in ("nvidia", "amd", "intel", "google"):
        assert f"mlsysim_nb/hardware/{vendor}.toml" in names
    assert "mlsysim_nb/units.txt" in names
