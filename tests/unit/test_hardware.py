"""The hardware catalog: every entry loads with units and a source; malformed files are named."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mlsysim_nb import (
    Q_,
    FieldError,
    Hardware,
    HardwareCatalog,
    HardwareFileError,
    HardwareNode,
    NotApplicableError,
    Scenarios,
    load_hardware,
)
from mlsysim_nb.records.hardware import Memory

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
    """The built wheel carries the top-level ``hardware/`` folder, byte for byte, inside the package."""
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
    archive = zipfile.ZipFile(wheel)
    names = archive.namelist()
    shipped = sorted(p.name for p in (repo / "hardware").iterdir())
    assert shipped == ["README.md", "amd.toml", "google.toml", "intel.toml", "nvidia.toml"]
    for name in shipped:
        packed = archive.read(f"mlsysim_nb/records/data/hardware/{name}")
        assert packed == (repo / "hardware" / name).read_bytes()
    assert "mlsysim_nb/units.txt" in names


def test_a_clone_reads_the_top_level_catalog() -> None:
    """In a clone the catalog is read from ``hardware/`` at the top level; the package holds no second copy."""
    from mlsysim_nb.records.hardware import _data_dir

    repo = Path(__file__).resolve().parents[2]
    assert _data_dir() == repo / "hardware"
    assert not (repo / "mlsysim_nb" / "records" / "data" / "hardware").exists()


def _capacity_number(text: str) -> tuple[float, str]:
    """The number and unit of a printed capacity such as "80GB" or "32 GiB"."""
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
    [("vendor", 3), ("source", None), ("note", ["a"]), ("key", 1.5), ("capacity_label", 80), ("release_year", 1850),
     ("release_year", True), ("release_year", 22.0), ("release_year", 2101)],
)  # fmt: skip
def test_text_fields_reject_wrong_types(field: str, value: object) -> None:
    """Text fields and release_year refuse values that a repr could not show, naming the field."""
    from mlsysim_nb import FieldError, Memory

    with pytest.raises(FieldError, match=rf"HardwareNode\.{field}: must be") as info:
        HardwareNode(name="n", memory=Memory(Q_(1, "GB"), 1e9), **{field: value})  # type: ignore[arg-type]
    assert info.value.field == field


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("", "must be a non-empty string, got ''"),
        (None, "must be a string, got NoneType None"),
        (3, "must be a string, got int 3"),
    ],
)
def test_a_name_is_a_non_empty_string(value: object, reason: str) -> None:
    """The name shown in tables is a string with at least one character; the message names the field and the rule."""
    from mlsysim_nb import FieldError, Memory

    with pytest.raises(FieldError, match=rf"HardwareNode\.name: {reason}$"):
        HardwareNode(name=value, memory=Memory(Q_(1, "GB"), 1e9))  # type: ignore[arg-type]


def test_a_year_in_a_file_may_be_typed_text(tmp_path: Path) -> None:
    """release_year reads like every count (typed text "2022" is 2022); a year out of 1990..2100 names the key."""
    assert load_hardware(_write(tmp_path, GOOD + 'release_year = "2022"\n'))["MY_GPU"].release_year == 2022
    with pytest.raises(HardwareFileError, match="at most 2,100") as info:
        load_hardware(_write(tmp_path, GOOD + "release_year = 2202\n"))
    assert info.value.key == "release_year"


def test_records_declare_each_field_with_a_knob() -> None:
    """Every init field of Memory and HardwareNode but the memory record is a knob; their checks are the knobs'."""
    import dataclasses

    from mlsysim_nb import Memory
    from mlsysim_nb.model.knob import knobs

    for cls, record_fields in ((Memory, set()), (HardwareNode, {"memory"})):
        init = {f.name for f in dataclasses.fields(cls) if f.init}
        assert set(knobs(cls)) == init - record_fields
    capacity = knobs(Memory)["capacity"]
    assert (capacity.unit, capacity.least, capacity.high) == ("byte", 1024.0, 1e16)
    assert capacity.symbol == "C_mem"


def test_links_are_checked_on_the_record() -> None:
    """A link bandwidth is a rate in range; a node holds a whole number of devices."""
    from mlsysim_nb import FieldError, Memory

    with pytest.raises(FieldError, match=r"HardwareNode\.network_bandwidth"):
        HardwareNode(name="n", memory=Memory(Q_(1, "GB"), 1e9), network_bandwidth=Q_(3, "GB"))
    with pytest.raises(FieldError, match=r"HardwareNode\.node_devices: must be at least 1, got 0"):
        HardwareNode(name="n", memory=Memory(Q_(1, "GB"), 1e9), node_devices=0)
    node = HardwareNode(name="n", memory=Memory(Q_(1, "GB"), 1e9), link_bandwidth="300 GB/s", node_devices=8)
    assert node.link_bandwidth == Q_(300, "GB/s")
    # a link without the node's size went unused: t = 8 on it was timed over the network (or not at all)
    with pytest.raises(FieldError, match=r"HardwareNode\.link_bandwidth: needs node_devices"):
        HardwareNode(name="n", memory=Memory(Q_(1, "GB"), 1e9), link_bandwidth="300 GB/s")


@pytest.mark.parametrize(
    ("field", "value"),
    [("link_bandwidth", [3e11, 1e11]), ("network_bandwidth", Q_(np.array([2.5e10]), "B/s")),
     ("peak_flops", np.array([3e14, 2e14])), ("node_devices", [8, 4]), ("driver_capacity", [1e9, 2e9])],
)  # fmt: skip
def test_a_device_record_holds_one_value_per_field(field: str, value: object) -> None:
    """A list or array in a device's field is refused by name (it reached the time kind as a raw TypeError)."""
    with pytest.raises(FieldError, match=rf"HardwareNode\.{field}: must be one value, not a list or array"):
        HardwareNode(name="n", memory=Memory(Q_(80, "GB"), 2e12), **{field: value})
    with pytest.raises(FieldError, match=r"Memory\.bandwidth: must be one value"):
        Memory(Q_(80, "GB"), [1e12, 2e12])


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
        (GOOD + 'link_bandwidth = "300 GB/s"\n', "link_bandwidth", "needs link_source"),
        (GOOD + 'link_bandwidth = "300 GB"\nlink_source = "https://x.example"\n', "link_bandwidth", "units of"),
        (GOOD + 'node_devices = 8\nlink_source = "dgx"\n', "link_source", "URL"),
        (GOOD + 'node_devices = [8, 4]\nlink_source = "https://x.example"\n', "node_devices", "one value"),
        (GOOD + 'node_devices = 8\nlink_source = "https://x.example/\\u001b[31m"\n', "link_source", "URL"),
        (GOOD + 'link_bandwidth = "300 GB/s"\nlink_source = "https://x.example"\n', "link_bandwidth", "node_devices"),
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


# -- hostile paths: only regular files are read, and only so much of them ----------------------------------------------
_PROBE = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))  # the old reader of /dev/zero stops here, not the machine
from mlsysim_nb import HardwareCatalog, load_hardware
call, path = sys.argv[1], sys.argv[2]
try:
    load_hardware(path) if call == "load" else len(HardwareCatalog(path))
    print(json.dumps(["loaded", ""]))
except Exception as err:
    print(json.dumps([type(err).__name__, str(err)]))
"""


def _load_elsewhere(call: str, path: Path) -> tuple[str, str]:
    """Load ``path`` in a fresh process with 4 GiB of address space and 60 s: (exception class or "loaded", message)."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, call, str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "hang", f"{call} of {path} did not return within 60 s"
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        return "crashed", done.stderr[-2000:]
    name, message = json.loads(lines[-1])
    return str(name), str(message)


def _fifo(tmp_path: Path) -> Path:
    import os

    if not hasattr(os, "mkfifo"):
        pytest.skip("this system has no named pipes")
    path = tmp_path / "x.toml"
    os.mkfifo(path)
    return path


def test_a_named_pipe_is_refused_not_waited_on(tmp_path: Path) -> None:
    """A FIFO named x.toml is a HardwareFileError naming the path and the rule, at once (the old reader waited forever)."""
    path = _fifo(tmp_path)
    name, message = _load_elsewhere("load", path)
    assert name == "HardwareFileError", message
    assert message == f"{path}: is a named pipe (FIFO); a hardware file must be a regular file (or a link to one)"


def test_a_named_pipe_in_a_catalog_directory_is_refused(tmp_path: Path) -> None:
    """HardwareCatalog(str) over a folder holding a FIFO x.toml refuses it by name instead of hanging."""
    path = _fifo(tmp_path)
    name, message = _load_elsewhere("catalog", tmp_path)
    assert name == "HardwareFileError", message
    assert message.startswith(f"{path}: is a named pipe (FIFO)")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_named_toml_is_refused(tmp_path: Path, device: str) -> None:
    """x.toml linked to /dev/zero or /dev/urandom is refused as a character device (the old reader ran out of memory)."""
    if not Path(device).exists():
        pytest.skip(f"{device} is not on this system")
    path = tmp_path / "x.toml"
    path.symlink_to(device)
    name, message = _load_elsewhere("load", path)
    assert name == "HardwareFileError", message
    assert message == f"{path}: is a character device; a hardware file must be a regular file (or a link to one)"


def test_a_directory_named_toml_is_refused(tmp_path: Path) -> None:
    """A directory x.toml is refused as a directory, naming the rule."""
    (tmp_path / "x.toml").mkdir()
    with pytest.raises(HardwareFileError, match=r"x\.toml: is a directory; a hardware file must be a regular file"):
        load_hardware(tmp_path / "x.toml")


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    """A 1 MiB + 1 byte file is refused naming its size and the limit (1,048,576 bytes); 1 MiB exactly is read."""
    from mlsysim_nb.records.hardware import MAX_FILE_BYTES

    assert MAX_FILE_BYTES == 1_048_576
    path = _write(tmp_path, GOOD)
    padding = MAX_FILE_BYTES - len(GOOD.encode())
    path.write_text(GOOD + "#" * (padding - 1) + "\n", encoding="utf-8")
    assert list(load_hardware(path)) == ["MY_GPU"]
    path.write_text(GOOD + "#" * padding + "\n", encoding="utf-8")
    with pytest.raises(HardwareFileError) as info:
        load_hardware(path)
    assert str(info.value) == f"{path}: holds 1,048,577 bytes; a hardware file may hold at most 1,048,576 bytes"


def test_a_link_to_a_regular_file_is_read(tmp_path: Path) -> None:
    """A symbolic link to a regular hardware file loads like the file itself."""
    target = _write(tmp_path, GOOD)
    link = tmp_path / "link.toml"
    link.symlink_to(target)
    assert Q_(48, "GB") == load_hardware(link)["MY_GPU"].memory.capacity


def test_windows_and_old_mac_newlines_read_as_before(tmp_path: Path) -> None:
    """CRLF and lone CR line ends read as text mode reads them (the file is read as bytes now)."""
    path = tmp_path / "lab.toml"
    for newline in ("\r\n", "\r"):
        path.write_bytes(GOOD.replace("\n", newline).encode())
        assert Q_(960, "GB/s") == load_hardware(path)["MY_GPU"].memory.bandwidth


def test_catalog_and_loader_take_str_and_pathlike(tmp_path: Path) -> None:
    """HardwareCatalog("some/dir"), load_hardware and add_file take a str or any os.PathLike (the old catalog raised AttributeError)."""

    class Where:
        """An os.PathLike that is not a pathlib.Path."""

        def __init__(self, path: Path) -> None:
            self.path = path

        def __fspath__(self) -> str:
            return str(self.path)

    _write(tmp_path, GOOD)
    assert list(HardwareCatalog(str(tmp_path))) == ["MY_GPU"]
    assert list(HardwareCatalog(Where(tmp_path))) == ["MY_GPU"]  # type: ignore[arg-type]
    assert list(load_hardware(str(tmp_path / "lab.toml"))) == ["MY_GPU"]
    assert list(load_hardware(Where(tmp_path / "lab.toml"))) == ["MY_GPU"]  # type: ignore[arg-type]
    catalog = HardwareCatalog()
    assert catalog.add_file(str(tmp_path / "lab.toml")) == ["MY_GPU"]


@pytest.mark.parametrize("value", [123, b"hardware", "", ["a.toml"]])
def test_a_path_of_the_wrong_type_is_a_field_error(value: object) -> None:
    """A path that is not a non-empty str or os.PathLike is refused, naming the argument, for all three doors."""
    from mlsysim_nb import FieldError

    with pytest.raises(FieldError, match=r"^load_hardware\.path: must be a path, a non-empty str or an os\.PathLike"):
        load_hardware(value)  # type: ignore[arg-type]
    with pytest.raises(FieldError, match=r"^HardwareCatalog\.directory: must be a path"):
        HardwareCatalog(value)  # type: ignore[arg-type]
    with pytest.raises(FieldError, match=r"^HardwareCatalog\.add_file\.path: must be a path"):
        HardwareCatalog().add_file(value)  # type: ignore[arg-type]


def test_a_catalog_directory_that_is_missing_empty_or_a_file_is_refused(tmp_path: Path) -> None:
    """HardwareCatalog(dir) refuses a missing path, a file and a folder without .toml files, naming the path."""
    with pytest.raises(HardwareFileError, match=r"nope: cannot be read \(No such file or directory\)"):
        HardwareCatalog(str(tmp_path / "nope"))
    path = _write(tmp_path, GOOD)
    with pytest.raises(HardwareFileError, match=r"lab\.toml: is a regular file, not a directory"):
        HardwareCatalog(str(path))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(HardwareFileError, match=r"empty: holds no \.toml hardware files"):
        len(HardwareCatalog(str(empty)))


def test_a_str_path_never_replaces_a_shipped_accelerator(tmp_path: Path) -> None:
    """Through a str path too, a user's [H100] is refused naming both files, and a folder's two [H100]s are refused."""
    from mlsysim_nb.records.hardware import _data_dir

    clash = tmp_path / "mine.toml"
    clash.write_text(GOOD.replace("[MY_GPU]", "[H100]"), encoding="utf-8")
    catalog = HardwareCatalog()
    with pytest.raises(
        HardwareFileError, match=r"already has an accelerator \[H100\] \('NVIDIA H100', from .*nvidia\.toml\)"
    ):
        catalog.add_file(str(clash))
    assert catalog.H100.memory.capacity == Q_(80, "GiB")
    (tmp_path / "nvidia.toml").write_text((_data_dir() / "nvidia.toml").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(
        HardwareFileError, match=r"nvidia\.toml, entry \[H100\]: the catalog already has an accelerator \[H100\]"
    ):
        len(HardwareCatalog(str(tmp_path)))


# -- the driver sees at most what the label says ------------------------------------------------------------------------
@pytest.mark.parametrize(("file", "key", "table"), _raw_entries(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_shipped_driver_capacity_is_at_most_the_labelled_one(
    file: str, key: str, table: dict[str, object]
) -> None:
    """In every shipped file, driver_capacity (where given) is at most memory_capacity, read from the text itself."""
    driver = table.get("driver_capacity")
    if driver is None:
        return
    assert isinstance(driver, str)
    assert isinstance(table["memory_capacity"], str)
    assert Q_(driver) <= Q_(table["memory_capacity"]), f"{file} [{key}]"


def test_driver_capacity_above_the_label_is_refused_in_a_file(tmp_path: Path) -> None:
    """800 GiB seen by the driver beside an 80 GiB label is refused, naming the file, the entry and driver_capacity."""
    text = (
        GOOD.replace('"48 GB"', '"80 GiB"')
        + 'driver_capacity = "800 GiB"\ndriver_capacity_source = "https://x.example"\n'
    )
    with pytest.raises(HardwareFileError) as info:
        load_hardware(_write(tmp_path, text))
    assert info.value.key == "driver_capacity"
    assert str(info.value).endswith(
        "entry [MY_GPU], key 'driver_capacity': must be at most the labelled memory capacity, 80 GiB "
        "(the driver sees the memory less what ECC and firmware reserve, never more), got 800 GiB"
    )


def test_driver_capacity_above_the_label_is_refused_in_code() -> None:
    """HardwareNode refuses 81,921 MiB beside 80 GiB (= 81,920 MiB, which it accepts), naming driver_capacity."""
    from mlsysim_nb import FieldError, Memory

    memory = Memory(Q_(80, "GiB"), Q_(2, "TB/s"))
    assert HardwareNode(name="n", memory=memory, driver_capacity=Q_(81920, "MiB")).driver_capacity == Q_(80, "GiB")
    with pytest.raises(FieldError, match=r"^HardwareNode\.driver_capacity: .* 80 GiB = 81,920 MiB .* got 81921 MiB$"):
        HardwareNode(name="n", memory=memory, driver_capacity=Q_(81921, "MiB"))


def _lab_file(tmp_path: Any, key: str, name: str, capacity: str = "1 GiB") -> Any:
    path = tmp_path / f"{key.lower()}.toml"
    path.write_text(
        f'[{key}]\nname = "{name}"\nmemory_capacity = "{capacity}"\nmemory_bandwidth = "1 TB/s"\n'
        'source = "https://lab.example/gpu"\n',
        encoding="utf-8",
    )
    return path


_LAB = '[LAB]\nname = "Lab GPU"\nmemory_capacity = "48 GiB"\nmemory_bandwidth = "960 GB/s"\nsource = "https://lab.example"\n'


def test_memory_refuses_a_huge_integer() -> None:
    """Memory(10**400, ...) is a FieldError naming the capacity, not an OverflowError."""
    with pytest.raises(FieldError) as caught:
        Memory(10**400, Q_(1, "TB/s"))
    assert caught.value.field == "capacity"


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


def test_a_name_cannot_drive_the_terminal_through_a_message() -> None:
    """An accelerator or model named with ESC and BEL: the text of a refusal escapes them as Python writes them."""
    hostile = "Evil\x1b[2J\x1b]0;pwned\x07"
    s = Scenarios["Gpt3_175BKorthikantiTable5OnA100"]
    tpu = HardwareNode(name=hostile + "TPU", memory=Memory(Q_(95, "GiB"), "2765 GB/s"), peak_flops="459 TFLOP/s")
    timed = s.variant(layout=s.layout.variant(state=s.layout.state.variant(hardware=tpu)))
    with pytest.raises(NotApplicableError) as info:
        _ = timed.iteration_time
    assert r"(Evil\x1b[2J\x1b]0;pwned\x07TPU gives none)" in str(info.value)
    model = s.workload.variant(name=hostile + "GPT")
    with pytest.raises(FieldError) as refused:  # the layers of a model named in the rule
        s.layout.variant(workload=model, pipeline_parallel=5, interleave=1)
    assert r"Evil\x1b[2J" in str(refused.value)
    assert "\x1b" not in str(info.value) + str(refused.value)
    assert "\x07" not in str(info.value) + str(refused.value)
