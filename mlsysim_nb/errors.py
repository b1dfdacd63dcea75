"""The exceptions mlsysim_nb raises, each naming what was wrong and where."""

from __future__ import annotations

__all__ = ["FieldError", "FieldUnitError", "HardwareFileError", "NotApplicableError"]


class FieldError(ValueError):
    """A field was given a value the model cannot use.

    The message starts with ``Owner.field:`` and says why; ``field`` and
    ``owner`` are attributes for programs (a widget shows the message).
    """

    def __init__(self, owner: str, field: str, reason: str) -> None:
        self.owner = owner
        self.field = field
        self.reason = reason
        super().__init__(f"{owner}.{field}: {reason}")


class FieldUnitError(FieldError, TypeError):
    """A field was given a quantity of the wrong dimension (also a ``TypeError``)."""


class NotApplicableError(ValueError):
    """A quantity cannot be computed for this scenario, e.g. ``capacity_share`` without hardware.

    ``quantity`` names what was asked for and ``needs`` what is missing, so a
    repr can write "not applicable: needs hardware" instead of failing.
    """

    def __init__(self, quantity: str, needs: str, detail: str = "") -> None:
        self.quantity = quantity
        self.needs = needs
        self.detail = detail
        message = f"{quantity} is not applicable: it needs {needs}"
        if detail:
            message += f" ({detail})"
        super().__init__(message)


class HardwareFileError(ValueError):
    """A hardware catalog file or one of its entries is malformed; names the file, entry and key."""

    def __init__(self, path: str, reason: str, entry: str | None = None, key: str | None = None) -> None:
        self.path = path
        self.entry = entry
        self.key = key
        where = path
        if entry is not None:
            where += f", entry [{entry}]"
        if key is not None:
            where += f", key {key!r}"
        super().__init__(f"{where}: {reason}")
