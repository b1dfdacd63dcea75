"""Reading a file a user hands over safely: a path of the right type, a regular file, a bounded size.

The one reader of such files: hardware files, a model's config.json, submitted notebooks and the
self-study answer key all go through :func:`read_bytes`.

A path named ``x.toml`` may be a named pipe (reading it would wait for a writer forever), a device
such as ``/dev/zero`` (reading it would never end) or a directory. :func:`read_text` looks at what
the path is before opening it, opens it without blocking, checks again what it opened, and reads at
most ``limit + 1`` bytes, so every such path is refused by name instead of hanging the kernel or
exhausting its memory. A symbolic link to a regular file is read like the file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from mlsysim_nb.errors import FieldError, show_number

__all__ = ["UnreadableFileError", "as_path", "read_bytes", "read_text", "require_directory"]

_KINDS = (
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class UnreadableFileError(ValueError):
    """A path that is not a regular, readable file of a sensible size; ``reason`` says which rule it breaks."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def as_path(owner: str, field: str, value: Any) -> Path:
    """``value`` as a :class:`~pathlib.Path`: a non-empty ``str`` or an ``os.PathLike`` giving one."""
    if isinstance(value, str | os.PathLike):
        raw = os.fspath(value)
        if isinstance(raw, str) and raw:
            return Path(raw)
    shown = f"{type(value).__name__} {value!r}"
    raise FieldError(
        owner, field, f"must be a path, a non-empty str or an os.PathLike such as pathlib.Path, got {shown}"
    )


def _kind(mode: int) -> str:
    """What a file of this mode is, in words (for a refusal)."""
    return next((words for test, words in _KINDS if test(mode)), "not a regular file")


def _regular(mode: int, rule: str) -> None:
    if not stat.S_ISREG(mode):
        raise UnreadableFileError(f"is {_kind(mode)}; {rule}")


def _stat(path: Path) -> os.stat_result:
    try:
        return path.stat()  # follows a symbolic link: a link to a regular file is read like the file
    except OSError as err:
        raise UnreadableFileError(f"cannot be read ({err.strerror})") from None


def read_bytes(path: str | os.PathLike[str], *, limit: int, what: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises :class:`UnreadableFileError` for a path that is missing, unreadable, not a regular file
    (a directory, a named pipe, a device, a socket) or larger than ``limit`` bytes. ``what`` names the
    kind of file in the reasons (``"a hardware file"``).
    """
    path = Path(path)
    rule = f"{what} must be a regular file (or a link to one)"
    too_big = f"{what} may hold at most {show_number(limit)} bytes"
    info = _stat(path)
    _regular(info.st_mode, rule)
    if info.st_size > limit:
        raise UnreadableFileError(f"holds {show_number(info.st_size)} bytes; {too_big}")
    # O_NONBLOCK: if the path became a named pipe since the check above, opening it does not wait for a writer
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as err:
        raise UnreadableFileError(f"cannot be read ({err.strerror})") from None
    with os.fdopen(descriptor, "rb") as file:
        _regular(os.fstat(file.fileno()).st_mode, rule)  # what was opened, not what the name showed before
        try:
            data = file.read(limit + 1)
        except OSError as err:
            raise UnreadableFileError(f"cannot be read ({err.strerror})") from None
    if len(data) > limit:
        raise UnreadableFileError(f"holds more than {show_number(limit)} bytes; {too_big}")
    return data


def read_text(path: Path, *, limit: int, what: str) -> str:
    """The UTF-8 text of the regular file ``path`` (a byte-order mark dropped, line ends read as text mode does).

    Refuses what :func:`read_bytes` refuses; the bytes of a file that is not UTF-8 raise
    :class:`UnicodeDecodeError`.
    """
    text = read_bytes(path, limit=limit, what=what).decode("utf-8-sig")  # a byte-order mark, as editors write, is fine
    return text.replace("\r\n", "\n").replace("\r", "\n")  # newlines as text mode reads them


def require_directory(path: Path) -> None:
    """Refuse (:class:`UnreadableFileError`) a path that is missing or is not a directory."""
    info = _stat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise UnreadableFileError(f"is {_kind(info.st_mode)}, not a directory")
