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
    assert sorted(set(REQUIRED) - set(Hardware)) == []


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
        (GOOD.replace('"48 GB"', '"48"'), "MY_GPU", "memory_capacity", "string with its unit"),
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
        assert f"mlsysim_nb/records/data/hardware/{vendor}.toml" in names
    assert "mlsysim_nb/units.txt" in names


def _capacity_number(text: str) -> tuple[float, str]:
    """The number and unit of a printed capacity such as "80GB" or "32 GiB"."""
    import re

    match = re.fullmatch(r"([\d.]+)\s*(GB|GiB)", text)
    assert match is not None, f"cannot read the printed capacity {text!r}"
    return float(match.group(1)), match.group(2)


def _raw_entries() -> list[tuple[str, str, dict[str, object]]]:
    """Every accelerator table of every shipped file, as written."""
    import tomllib

    from mlsysim_nb.records.hardware import _data_dir

    out = []
    for path in sorted(_data_dir().glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        out += [(path.name, key, table) for key, table in data.items() if isinstance(table, dict)]
    return out


def test_policy_covers_every_file() -> None:
    """The policy test below sees every shipped file and every catalog entry."""
    entries = _raw_entries()
    assert {name for name, _, _ in entries} == {"amd.toml", "google.toml", "intel.toml", "nvidia.toml"}
    assert sorted(key for _, key, _ in entries) == sorted(HardwareCatalog())


@pytest.mark.parametrize(("file", "key", "table"), _raw_entries(), ids=lambda v: v if isinstance(v, str) else "")
def test_capacity_policy_binary(file: str, key: str, table: dict[str, object]) -> None:
    """Every capacity is written in GiB, with the number the vendor prints on its label."""
    assert isinstance(table["memory_capacity"], str)
    assert table["memory_capacity"].endswith(" GiB"), f"{file} [{key}]"
    assert isinstance(table["capacity_label"], str)
    number, _ = _capacity_number(table["capacity_label"])
    assert Hardware[key].memory.capacity == Q_(number, "GiB")
    assert Hardware[key].capacity_label == table["capacity_label"]


@pytest.mark.parametrize("key", [k for k in Hardware if Hardware[k].driver_capacity is not None])
def test_driver_capacity_is_below_binary_capacity(key: str) -> None:
    """The driver reports at most the binary capacity and at least 90 % of it (ECC and firmware reserve the rest)."""
    node = Hardware[key]
    share = (node.driver_capacity / node.memory.capacity).to("").magnitude
    assert 0.9 <= share <= 1.0, f"{key}: {share}"
    assert node.driver_capacity_source.startswith("https://")


def test_named_capacities() -> None:
    """H100 and A100 80GB both hold 80 GiB = 85.9 GB; the RTX 4090 24 GiB; nvidia-smi's H100 total is 81559 MiB."""
    assert Hardware.H100.memory.capacity == Q_(80, "GiB")
    assert Hardware.H100.memory.capacity == Hardware.A100_80GB.memory.capacity
    assert Hardware.H100.memory.capacity == Hardware.H100_PCIE.memory.capacity
    assert round(Hardware.H100.memory.capacity.to("GB").magnitude, 1) == 85.9
    assert Hardware.RTX_4090.memory.capacity == Q_(24, "GiB")
    assert Hardware.H100.driver_capacity == Q_(81559, "MiB")
    with_driver = [k for k in Hardware if Hardware[k].driver_capacity is not None]
    assert with_driver == ["A100_40GB", "A100_80GB", "H100", "B200", "L4", "T4", "RTX_4090"]


def test_not_utf8_names_file(tmp_path: Path) -> None:
    """A file that is not UTF-8 raises HardwareFileError naming the file and the byte."""
    path = tmp_path / "latin1.toml"
    path.write_bytes(GOOD.replace("Lab GPU", "Labor-GPU für Übungen").encode("latin-1"))
    with pytest.raises(HardwareFileError, match="not UTF-8") as info:
        load_hardware(path)
    assert str(path) in str(info.value)
    assert "0xfc" in str(info.value)


@pytest.mark.parametrize(
    ("field", "value"),
    [("vendor", 3), ("source", None), ("note", ["a"]), ("key", 1.5), ("capacity_label", 80), ("release_year", "2022"),
     ("release_year", True), ("release_year", 22.0)],
)  # fmt: skip
def test_text_fields_reject_wrong_types(field: str, value: object) -> None:
    """Text fields and release_year refuse values that a repr could not show, naming the field."""
    from mlsysim_nb import FieldError, Memory

    with pytest.raises(FieldError, match=rf"HardwareNode\.{field}: must be") as info:
        HardwareNode(name="n", memory=Memory(Q_(1, "GB"), 1e9), **{field: value})  # type: ignore[arg-type]
    assert info.value.field == field


def test_driver_capacity_must_be_information() -> None:
    """driver_capacity is a quantity of information."""
    from mlsysim_nb import FieldError, Memory

    with pytest.raises(FieldError, match=r"HardwareNode\.driver_capacity"):
        HardwareNode(name="n", memory=Memory(Q_(1, "GB"), 1e9), driver_capacity=Q_(3, "s"))


@pytest.mark.parametrize(
    ("text", "key", "reason"),
    [
        (GOOD + "capacity_label = 48\n", "capacity_label", "must be a string"),
        (GOOD + 'driver_capacity = "45000 MiB/s"\n', "driver_capacity", "units of"),
        (GOOD + 'driver_capacity_source = "nvidia-smi"\n', "driver_capacity_source", "URL"),
    ],
)
def test_new_keys_checked_in_files(tmp_path: Path, text: str, key: str, reason: str) -> None:
    """The label and driver keys are checked like the others, naming file, entry and key."""
    with pytest.raises(HardwareFileError, match=reason) as info:
        load_hardware(_write(tmp_path, text))
    assert info.value.key == key


@pytest.mark.parametrize(("key", "node"), [(7, "node"), ("OK", "not a node"), ("OK", None)])
def test_catalog_add_rejects_wrong_types(key: object, node: object) -> None:
    """HardwareCatalog.add() names the key or node that has the wrong type."""
    from mlsysim_nb import FieldError

    field = "key" if not isinstance(key, str) else "node"
    with pytest.raises(FieldError, match=rf"HardwareCatalog\.{field}:"):
        HardwareCatalog().add(key, node)  # type: ignore[arg-type]


def test_first_load_is_thread_safe(tmp_path: Path) -> None:
    """add_file from another thread while the catalog first loads never loses the added entry (100 trials)."""
    import shutil
    import threading

    from mlsysim_nb.records.hardware import _data_dir

    shipped = tmp_path / "shipped"
    shipped.mkdir()
    for path in _data_dir().glob("*.toml"):
        shutil.copy(path, shipped / path.name)
    user = _write(tmp_path, GOOD)
    lost = 0
    for _ in range(100):
        catalog = HardwareCatalog(shipped)
        barrier = threading.Barrier(2)

        def first_use(c: HardwareCatalog = catalog, b: threading.Barrier = barrier) -> None:
            b.wait()
            len(c)

        def add(c: HardwareCatalog = catalog, b: threading.Barrier = barrier) -> None:
            b.wait()
            c.add_file(user)

        threads = [threading.Thread(target=first_use), threading.Thread(target=add)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        lost += "MY_GPU" not in catalog
    assert lost == 0
