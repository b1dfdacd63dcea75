"""Accelerators: frozen records loaded from one TOML file per vendor in ``hardware/``."""

from __future__ import annotations

import os
import re
import threading
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from mlsysim_nb.errors import FieldError, HardwareFileError, show_number
from mlsysim_nb.files import UnreadableFileError, as_path, read_text, require_directory
from mlsysim_nb.model.knob import knob, knobs, record
from mlsysim_nb.model.notation import RECORD_QUANTITIES, written
from mlsysim_nb.model.text import is_number_text
from mlsysim_nb.render.display import RichRepr

__all__ = [
    "MAX_FILE_BYTES",
    "Hardware",
    "HardwareCatalog",
    "HardwareNode",
    "Memory",
    "load_hardware",
]

#: The largest hardware file read: each shipped file is under 5 kB, so 1 MiB holds hundreds of accelerators.
MAX_FILE_BYTES = 2**20

#: The physical range of each hardware figure, in its base unit (bytes, bytes per second, FLOP per second),
#: and in words. Wide enough for a microcontroller's SRAM and a wafer-scale engine (Cerebras WSE-3: 44 GB of
#: SRAM at 21 PB/s, 125 PFLOPS), narrow enough that every share, time and chart stays finite and readable.
_CAPACITY_RANGE: dict[str, Any] = {"least": 2.0**10, "high": 1e16, "rule": "from 1 KiB to 10 PB"}
_BANDWIDTH_RANGE: dict[str, Any] = {"least": 1e3, "high": 1e17, "rule": "from 1 kB/s to 100 PB/s"}
_FLOPS_RANGE: dict[str, Any] = {"least": 1e3, "high": 1e19, "rule": "from 1 kFLOP/s to 10 EFLOP/s"}


def _checked(record: Any) -> dict[str, Any]:
    """Check every declared field of a record (its knob: kind, range, rule), store what each check returns.

    Returns the base-unit magnitudes by field, for the few a scenario reads on every construction.
    """
    owner = type(record).__name__
    magnitudes = {}
    for name, declared in knobs(record).items():
        stored, magnitudes[name] = declared.check(owner, name, getattr(record, name))
        if np.ndim(magnitudes[name]) > 0:  # a list or array the field's check read as a sweep's values
            msg = "must be one value, not a list or array: a record is one device (to compare several, build each)"
            raise FieldError(owner, name, msg)
        object.__setattr__(record, name, stored)
    return magnitudes


@dataclass(frozen=True)
class Memory:
    """A device's memory: ``capacity`` (information) and ``bandwidth`` (information per time).

    Each is refused outside its physical range: a capacity from 1 KiB to 10 PB, a bandwidth
    from 1 kB/s to 100 PB/s.
    """

    capacity: Any = knob(
        kind="quantity", **written(RECORD_QUANTITIES["capacity"]), **_CAPACITY_RANGE,
        help="the device's memory, in any unit of information (a plain number is bytes)",
    )  # fmt: skip
    bandwidth: Any = knob(
        kind="quantity", **written(RECORD_QUANTITIES["bandwidth"]), **_BANDWIDTH_RANGE,
        help="how fast the device's memory is read or written, information per time (a plain number is B/s)",
    )  # fmt: skip
    _capacity_bytes: float = field(init=False, repr=False, compare=False)
    _bandwidth_bytes_per_second: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        magnitudes = _checked(self)
        # base-unit magnitudes, converted once: scenarios read these on every construction
        object.__setattr__(self, "_capacity_bytes", float(magnitudes["capacity"]))
        object.__setattr__(self, "_bandwidth_bytes_per_second", float(magnitudes["bandwidth"]))


def _text(label: str, *, compare: bool = True, **declaration: Any) -> Any:
    """A text field of a record: a string, empty when not given."""
    return knob("", kind="text", positive=False, label=label, compare=compare, **declaration)


@dataclass(frozen=True, kw_only=True, repr=False)
class HardwareNode(RichRepr):
    """One accelerator, as its datasheet describes it.

    >>> from mlsysim_nb.units import Q_
    >>> h = HardwareNode(name="My GPU", memory=Memory(Q_(24, "GB"), Q_(1, "TB/s")))
    >>> h.memory.capacity
    <Quantity(24, 'gigabyte')>
    """

    name: str = knob(kind="text", label="name", help="the name shown in tables and dropdowns")
    memory: Memory = record(label="device memory", help="its capacity and bandwidth, a Memory(capacity, bandwidth)")
    peak_flops: Any = knob(
        None, kind="quantity", **written(RECORD_QUANTITIES["peak_flops"]), **_FLOPS_RANGE, optional=True,
        help="dense 16-bit tensor throughput, FLOP per time (a plain number is FLOP/s)",
    )  # fmt: skip
    vendor: str = _text("vendor")
    key: str = _text("catalog key")
    release_year: int | None = knob(None, kind="count", low=1990, high=2100, optional=True, label="release year")
    source: str = _text("source", compare=False, help="the datasheet the numbers come from")
    note: str = _text("note", compare=False)
    #: the capacity as the vendor prints it, e.g. "80GB" (the catalog stores that number in GiB)
    capacity_label: str = _text("capacity as labelled", compare=False)
    #: the total the driver reports (e.g. nvidia-smi's "81559MiB"), where a public record of it is known
    driver_capacity: Any = knob(
        None, kind="quantity", unit="byte", **_CAPACITY_RANGE, optional=True, compare=False,
        label="capacity the driver reports",
    )  # fmt: skip
    driver_capacity_source: str = _text("where the driver's total is printed", compare=False)
    # -- the links that time reads (kinds/time): per device, one direction, from the node's datasheet ------
    node_name: str = _text(
        "node", compare=False, help="the node the device sits in (e.g. DGX A100), whose datasheet gives the links"
    )
    node_devices: int | None = knob(
        None, kind="count", low=1, high=2**20, optional=True, compare=False, label="devices per node",
        help="devices one node joins with its link (NVLink/NVSwitch): a group of at most this many talks over it",
    )  # fmt: skip
    link_bandwidth: Any = knob(
        None, kind="quantity", **written(RECORD_QUANTITIES["link_bandwidth"]), **_BANDWIDTH_RANGE, optional=True,
        compare=False, help="inside a node, per device and direction (NVLink: half the datasheet's both-ways figure)",
    )  # fmt: skip
    network_bandwidth: Any = knob(
        None, kind="quantity", **written(RECORD_QUANTITIES["network_bandwidth"]), **_BANDWIDTH_RANGE, optional=True,
        compare=False, help="between nodes, per device and direction (the network adapters' rate over the devices)",
    )  # fmt: skip
    link_source: str = _text("where the link figures are printed", compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.memory, Memory):
            raise FieldError("HardwareNode", "memory", f"must be a Memory(capacity, bandwidth), got {self.memory!r}")
        magnitudes = _checked(self)
        if self.link_bandwidth is not None and self.node_devices is None:  # else the link would go unused, unsaid
            reason = "needs node_devices, the devices one node joins with that link (no group could use it otherwise)"
            raise FieldError("HardwareNode", "link_bandwidth", reason)
        driver, capacity = self.driver_capacity, self.memory.capacity
        if driver is not None and magnitudes["driver_capacity"] > self.memory._capacity_bytes:  # noqa: SLF001
            labelled = f"{capacity:~P}"
            if capacity.units != driver.units:  # in the driver figure's unit too, so the two read side by side
                labelled += f" = {show_number(capacity.m_as(driver.units))} {driver.units:~P}"
            reason = (
                f"must be at most the labelled memory capacity, {labelled} (the driver sees "
                f"the memory less what ECC and firmware reserve, never more), got {driver:~P}"
            )
            raise FieldError("HardwareNode", "driver_capacity", reason)

    def __repr__(self) -> str:
        mem = self.memory
        return f"HardwareNode({self.name!r}, capacity={mem.capacity:~P}, bandwidth={mem.bandwidth:~P})"

    def _markdown_rows(self) -> tuple[list[str], list[list[str]]]:
        mem = self.memory
        rows = [
            ["name", self.name],
            ["memory.capacity", f"{mem.capacity:~P}"],
            ["memory.bandwidth", f"{mem.bandwidth:~P}"],
            ["source", self.source or "None"],
        ]  # fmt: skip
        return ["field", "value"], rows

    def _repr_html_(self) -> str:
        from mlsysim_nb.render.html import hardware_html

        return hardware_html(self)


_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
#: An http(s) URL: no spaces and no control characters (a terminal escape in a file's source is no address).
_URL = re.compile(r"^https?://[^\s\x00-\x1f\x7f]+$")
#: A file's key for each figure of the record (``memory_capacity`` is ``Memory.capacity``).
_FIGURES = {"memory_capacity": "capacity", "memory_bandwidth": "bandwidth"}
#: The keys a file may give: the memory's figures and every field of the node (its key is the table's name), so
#: a field declared on HardwareNode is read from a file with no other edit; a figure is written with its unit.
_KNOWN = {*_FIGURES, *(name for name in knobs(HardwareNode) if name != "key")}
_WITH_UNIT = (*_FIGURES, *(name for name, k in knobs(HardwareNode).items() if k.kind == "quantity"))
_REQUIRED = ("name", "memory_capacity", "memory_bandwidth", "source")


def _entry(path: str, key: str, table: Any, vendor: str) -> HardwareNode:
    """One accelerator table: the file's own rules here, every field's rule in the record's declaration."""
    _file_rules(path, key, table)
    fields = {name: value for name, value in table.items() if name not in _FIGURES}
    try:
        node = HardwareNode(
            **{"vendor": vendor, **fields, "key": key},
            memory=Memory(table["memory_capacity"], table["memory_bandwidth"]),
        )
    except FieldError as err:  # any rule of the record: name the file, the entry and the key
        name = {figure: name for name, figure in _FIGURES.items()}.get(err.field, err.field)
        raise HardwareFileError(path, err.reason, entry=key, key=name) from None
    if "driver_capacity" in table and "driver_capacity_source" not in table:
        reason = "needs driver_capacity_source, the http(s) URL where that driver total is printed"
        raise HardwareFileError(path, reason, entry=key, key="driver_capacity")
    for name in ("source", "driver_capacity_source", "link_source"):
        if name in table and not _URL.match(table[name]):
            raise HardwareFileError(path, "must be an http(s) URL of where the number is printed", entry=key, key=name)
    return node


def _file_rules(path: str, key: str, table: Any) -> None:
    """What a file must say beyond the record's rules: known and required keys, every figure with its unit."""
    if not isinstance(table, dict):
        raise HardwareFileError(path, "each accelerator must be a [table]", entry=key)
    if not _KEY.match(key):
        raise HardwareFileError(path, "an entry key must be letters, digits and underscores", entry=key)
    for name in table:
        if name not in _KNOWN:
            raise HardwareFileError(path, f"unknown key; known keys are {sorted(_KNOWN)}", entry=key, key=name)
    for name in _REQUIRED:
        if name not in table:
            raise HardwareFileError(path, "is required", entry=key, key=name)
    for name in _WITH_UNIT:
        raw = table.get(name)
        if raw is not None and (not isinstance(raw, str) or is_number_text(raw)):  # a file states the unit
            raise HardwareFileError(path, f'must be a string with its unit, like "80 GB", got {raw!r}', key, name)
    links = [name for name in ("link_bandwidth", "network_bandwidth", "node_devices") if name in table]
    if links and "link_source" not in table:
        reason = "needs link_source, the http(s) URL of the node's datasheet that prints the links"
        raise HardwareFileError(path, reason, entry=key, key=links[0])


def load_hardware(path: str | os.PathLike[str]) -> dict[str, HardwareNode]:
    """Read one hardware TOML file into ``{key: HardwareNode}``.

    ``path`` is a ``str`` or an ``os.PathLike`` (such as ``pathlib.Path``) naming a regular file, or a
    symbolic link to one, of at most :data:`MAX_FILE_BYTES` bytes.

    Raises
    ------
    HardwareFileError
        For a path that is missing or not a regular file (a directory, a named pipe, a device),
        a file larger than the limit, unreadable TOML, a missing or unknown key, a number
        without a unit or of the wrong dimension, or a source that is not a URL; the message
        names the file, the entry and the key; a file that is not UTF-8 text is named too.
    FieldError
        For a ``path`` that is neither a ``str`` nor an ``os.PathLike``.
    """
    path = as_path("load_hardware", "path", path)
    label = str(path)
    try:
        data = tomllib.loads(read_text(path, limit=MAX_FILE_BYTES, what="a hardware file"))
    except UnreadableFileError as err:
        raise HardwareFileError(label, err.reason) from None
    except UnicodeDecodeError as err:
        byte = err.object[err.start]
        reason = f"is not UTF-8 text (byte {byte:#04x} at offset {err.start}); save it as UTF-8"
        raise HardwareFileError(label, reason) from None
    except tomllib.TOMLDecodeError as err:
        raise HardwareFileError(label, f"is not valid TOML ({err})") from None
    vendor = data.pop("vendor", "")
    if not isinstance(vendor, str):
        raise HardwareFileError(label, "must be a string", key="vendor")
    if not data:
        raise HardwareFileError(label, "holds no accelerator tables")
    return {key: _entry(label, key, table, vendor) for key, table in data.items()}


def _same_name(name: str) -> str:
    """A display name compared as a reader sees it: case and runs of spaces ignored."""
    return " ".join(name.split()).casefold()


def _refuse_clashes(
    label: str, new: dict[str, HardwareNode], nodes: dict[str, HardwareNode], origins: dict[str, str]
) -> None:
    """Refuse entries whose key or display name the catalog (or the same file) already holds, naming both sources."""
    names = {_same_name(node.name): key for key, node in nodes.items()}
    for key, node in new.items():
        if key in nodes:
            reason = (
                f"the catalog already has an accelerator [{key}] ({nodes[key].name!r}, from {origins.get(key, '?')}); "
                "give this entry another key"
            )
            raise HardwareFileError(label, reason, entry=key)
        other = names.get(_same_name(node.name))
        if other is not None:
            where = origins.get(other, label) if other in nodes else label
            reason = f"the name {node.name!r} is already used by [{other}] (from {where}); give this entry another name"
            raise HardwareFileError(label, reason, entry=key, key="name")
        names[_same_name(node.name)] = key


#: The repository's root in a clone (the folder above the package); an installed package has no catalog there.
_CLONE_ROOT = Path(__file__).resolve().parents[2]


def _data_dir() -> Path:
    """The shipped catalog, one TOML file per vendor: the repository's top-level ``hardware/`` in a clone.

    In a clone (a ``pyproject.toml`` beside the package, editable installs included) the catalog is read from
    ``hardware/`` at the top level, where a contributor edits it; the wheel carries the same files inside the
    package, as ``mlsysim_nb/records/data/hardware/`` (``pyproject.toml``'s ``force-include``).
    """
    clone = _CLONE_ROOT / "hardware"
    if (_CLONE_ROOT / "pyproject.toml").is_file() and clone.is_dir():
        return clone
    return Path(str(resources.files("mlsysim_nb.records") / "data" / "hardware"))


class HardwareCatalog(RichRepr):
    """Every accelerator in a set of TOML files, by key: ``Hardware.H100``, ``Hardware["H100"]``.

    The shipped catalog loads on first use; add your own file with :meth:`add_file`.
    The first load and every addition hold one lock, so threads that add files
    while the catalog first loads lose nothing.
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        """``directory``: a folder of ``*.toml`` hardware files (``str`` or ``os.PathLike``); ``None``: the shipped one.

        A path that is missing or is not a directory raises :class:`HardwareFileError` naming it.
        """
        self._directory = None if directory is None else as_path("HardwareCatalog", "directory", directory)
        if self._directory is not None:
            try:
                require_directory(self._directory)
            except UnreadableFileError as err:
                raise HardwareFileError(str(self._directory), err.reason) from None
        self._nodes: dict[str, HardwareNode] | None = None
        #: where each entry came from (a file, or ``add()``), so that a clash names both sides
        self._origins: dict[str, str] = {}
        self._lock = threading.RLock()

    def _load(self) -> dict[str, HardwareNode]:
        nodes = self._nodes
        if nodes is not None:
            return nodes
        with self._lock:
            if self._nodes is None:
                loaded: dict[str, HardwareNode] = {}
                origins: dict[str, str] = {}
                directory = self._directory or _data_dir()
                paths = sorted(directory.glob("*.toml"))
                if not paths:
                    raise HardwareFileError(str(directory), "holds no .toml hardware files")
                for path in paths:
                    new = load_hardware(path)
                    _refuse_clashes(str(path), new, loaded, origins)
                    loaded.update(new)
                    origins.update(dict.fromkeys(new, str(path)))
                self._origins = origins
                self._nodes = loaded
            return self._nodes

    def add_file(self, path: str | os.PathLike[str]) -> list[str]:
        """Load a user's TOML file into this catalog; returns the keys it added.

        An entry whose key or name the catalog already holds (``[H100]``) is refused with a
        :class:`HardwareFileError` naming both files, and nothing from the file is added:
        a shipped accelerator never changes under a named case.
        """
        label = str(as_path("HardwareCatalog.add_file", "path", path))
        new = load_hardware(path)
        with self._lock:
            nodes = self._load()
            _refuse_clashes(label, new, nodes, self._origins)
            nodes.update(new)
            self._origins.update(dict.fromkeys(new, label))
        return list(new)

    def add(self, key: str, node: HardwareNode) -> None:
        """Add one node under ``key``; a key or name already in the catalog is refused, naming where it came from."""
        if not isinstance(key, str) or not _KEY.match(key):
            raise FieldError("HardwareCatalog", "key", f"must be letters, digits and underscores, got {key!r}")
        if not isinstance(node, HardwareNode):
            raise FieldError("HardwareCatalog", "node", f"must be a HardwareNode, got {type(node).__name__} {node!r}")
        with self._lock:
            nodes = self._load()
            try:
                _refuse_clashes("HardwareCatalog.add()", {key: node}, nodes, self._origins)
            except HardwareFileError as err:
                field = "key" if err.key is None else "node"
                raise FieldError("HardwareCatalog", field, err.reason) from None
            nodes[key] = node
            self._origins[key] = "HardwareCatalog.add()"

    def __getitem__(self, key: str) -> HardwareNode:
        try:
            return self._load()[key]
        except KeyError:
            msg = f"no accelerator {key!r}; known: {', '.join(self._load())}"
            raise KeyError(msg) from None

    def __getattr__(self, key: str) -> HardwareNode:
        if key.startswith("_"):
            raise AttributeError(key)
        try:
            return self[key]
        except KeyError as err:
            raise AttributeError(str(err)) from None

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self._load()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __contains__(self, key: object) -> bool:
        return key in self._load()

    def items(self) -> list[tuple[str, HardwareNode]]:
        """``(key, node)`` pairs in catalog order."""
        return list(self._load().items())

    def __repr__(self) -> str:
        return f"HardwareCatalog({len(self)} accelerators: {', '.join(self._load())})"

    def rows(self) -> list[list[str]]:
        """One row per accelerator: key, name, capacity, bandwidth, peak FLOPS, source."""
        out = []
        for key, node in self.items():
            flops = "" if node.peak_flops is None else f"{node.peak_flops:~P}"
            mem = node.memory
            out.append([key, node.name, f"{mem.capacity:~P}", f"{mem.bandwidth:~P}", flops, node.source])
        return out

    def _repr_text_(self) -> str:
        from mlsysim_nb.render.text import one_line

        rows = [[one_line(c) for c in r[:5]] for r in self.rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = [f"HardwareCatalog: {len(self)} accelerators"]
        lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
        return "\n".join(lines)

    def _markdown_rows(self) -> tuple[list[str], list[list[str]]]:
        return ["key", "name", "memory.capacity", "memory.bandwidth", "peak_flops", "source"], self.rows()

    def _repr_html_(self) -> str:
        from mlsysim_nb.render.html import catalog_html

        header = ["key", "name", "memory.capacity", "memory.bandwidth", "peak_flops", "source"]
        return catalog_html(f"Hardware catalog: {len(self)} accelerators", header, self.rows())


@lru_cache(maxsize=1)
def _catalog() -> HardwareCatalog:
    return HardwareCatalog()


#: The shipped catalog.
Hardware = _catalog()
