"""Every knob of every kind fed a battery of bad values: the package's named error, or a value in range.

The kinds come from :mod:`mlsysim_nb.kinds` (a new kind is fuzzed with no change here); each is started
from its first named case. A refusal must be a :class:`~mlsysim_nb.FieldError` naming the field (a rule
between two fields may blame the other one, and says so by name); an accepted value must be within the
field's declared range and render.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from mlsysim_nb import Q_, FieldError, Scenarios, kinds
from mlsysim_nb.model.knob import Knob, knobs

#: an overflow NumPy only warns about would be a number computed from a value no float holds
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


class _HostileFloat:
    """An object whose ``__float__`` and ``__index__`` raise: it must be refused by type, never called."""

    def __float__(self) -> float:
        raise RuntimeError("__float__ was called")

    def __index__(self) -> int:
        raise RuntimeError("__index__ was called")

    def __repr__(self) -> str:
        return "<hostile>"


class _NanFloat(float):
    """A float subclass that claims to be 2 but converts to NaN."""

    def __float__(self) -> float:
        return math.nan


class _HugeIndex(int):
    """An int subclass whose ``__index__`` gives 10**400."""

    def __index__(self) -> int:
        return 10**400


def _generator() -> Any:
    return (v for v in (1, 2))


BAD_VALUES: list[tuple[str, Any]] = [
    ("negative", -1),
    ("negative float", -2.5),
    ("zero", 0),
    ("minus zero", -0.0),
    ("nan", math.nan),
    ("inf", math.inf),
    ("minus inf", -math.inf),
    ("huge int", 10**400),
    ("huge negative int", -(10**400)),
    ("int64 max", 2**63),
    ("tiny", 1e-320),
    ("wrong dimension: seconds", Q_(3, "s")),
    ("wrong dimension: rate", Q_(2, "GB/s")),
    ("wrong dimension: bytes", Q_(2, "GB")),
    ("tiny bytes", Q_(1e-320, "B")),
    ("percent", Q_(150, "percent")),
    ("nan quantity", Q_(math.nan, "B")),
    ("complex quantity", Q_(1 + 2j, "B")),
    ("2-D quantity", Q_(np.array([[1.0, 2.0], [3.0, 4.0]]), "B")),
    ("word", "abc"),
    ("empty text", ""),
    ("blank text", "   "),
    ("tower of powers", "9**9**9**9 GB"),
    ("nan text", "nan"),
    ("inf text", "inf GB"),
    ("NUL text", "\x00"),
    ("two units", "2 GB GB"),
    ("open paren", "("),
    ("division by zero", "1/0 B"),
    ("long text", "1" * 10_000),
    ("bytes", b"2"),
    ("none", None),
    ("true", True),
    ("false", False),
    ("nested list", [[1, 2], [3, 4]]),
    ("ragged list", [[1, 2], [3]]),
    ("empty list", []),
    ("2-D array", np.array([[2, 4], [1, 2]])),
    ("3-D array", np.ones((2, 2, 2))),
    ("empty array", np.array([])),
    ("text array", np.array(["a", "b"])),
    ("object array", np.array([1, None], dtype=object)),
    ("complex", 1 + 2j),
    ("numpy complex", np.complex128(1 + 1j)),
    ("fraction", Fraction(1, 3)),
    ("huge fraction", Fraction(10**400, 3)),
    ("decimal nan", Decimal("NaN")),
    ("decimal snan", Decimal("sNaN")),
    ("decimal tiny", Decimal("1e-400")),
    ("decimal huge", Decimal("1e400")),
    ("hostile object", _HostileFloat()),
    ("nan float subclass", _NanFloat(2.0)),
    ("huge index int subclass", _HugeIndex(2)),
    ("plain object", object()),
    ("dict", {"a": 1}),
    ("set", {1, 2}),
    ("generator", _generator()),
    ("range", range(3)),
    ("numpy datetime", np.datetime64("2024-01-01")),
    ("numpy nan", np.float64("nan")),
    ("numpy bool", np.bool_(True)),
    ("numpy long double beyond a float", np.longdouble(10) ** 4000 if np.finfo(np.longdouble).maxexp > 1024 else 1e308),
    ("uint64 max", np.array([2**64 - 1], dtype=np.uint64)),
    ("numpy nan array", np.array([np.nan, 1.0])),
    ("list with text", [1, "a"]),
    ("list with none", [1, None]),
    ("list of bools", [True, False]),
    ("list of complex", [1 + 2j]),
    ("list of fractions", [Fraction(1, 3), Fraction(2, 3)]),
    ("list of mixed dimensions", [Q_(1, "B"), Q_(1, "s")]),
    ("list of quantity text", ["2 GB", "abc"]),
    ("list of lists of text", [["a"], ["b"]]),
    ("quantity of seconds array", Q_(np.array([1.0, 2.0]), "s")),
    ("percent array", Q_(np.array([10.0, 200.0]), "percent")),
    ("nan decimal quantity", Q_(Decimal("NaN"), "B")),
    ("fraction quantity", Q_(Fraction(1, 3), "GB")),
    ("huge negative percent", Q_(-(10**400), "percent")),
    ("overflowing conversion", Q_(1e308, "GiB")),
    ("overflowing percent", Q_(1e308, "percent")),
    ("text beyond a float", "1e400"),
    ("text below a float", "1e-400"),
    ("minus zero text", "-0"),
    ("hex text", "0x10"),
    ("underscored text", "1_000"),
    ("vulgar fraction text", "\u00bd"),
    ("arabic digit text", "\u0663"),
    ("rate text", "2 GB/s"),
    ("time text", "3 s"),
    ("percent text", "150 %"),
    ("bit text", "2 bit"),
    ("huge count text", "1e9 count"),
    ("nan bytes text", "NaN B"),
    ("power text", "2 ** 999 B"),
    ("huge digits text", "9" * 400),
    ("bidi text", "\u202e2 GB"),
]


def _bases() -> list[tuple[str, Any]]:
    """One scenario per kind: its first named case, found through the registry."""
    out = []
    for kind in kinds.all_kinds():
        names = list(kind.cases())
        if names:
            out.append((kind.name, getattr(Scenarios, names[0])))
    return out


BASES = _bases()
CASES = [
    pytest.param(base, name, label, value, id=f"{kind}.{name}[{label}]")
    for kind, base in BASES
    for name in knobs(base)
    for label, value in BAD_VALUES
]


def _within(declared: Knob, magnitude: Any) -> bool:
    """The checked magnitude lies within the field's declared range (a choice: one of its values)."""
    if magnitude is None:
        return declared.optional
    if declared.kind == "choice":
        return True
    values = np.asarray(magnitude, dtype=float)
    if not np.all(np.isfinite(values)):
        return False
    low = declared.low if declared.kind == "count" else 0.0
    ok = values > 0 if declared.positive and declared.kind != "count" else values >= low
    if declared.high is not None:
        ok &= values <= declared.high
    return bool(np.all(ok))


@pytest.mark.parametrize(("base", "name", "label", "value"), CASES)
def test_every_knob_refuses_bad_values_by_name(base: Any, name: str, label: str, value: Any) -> None:
    """A bad value gives a FieldError naming the field (or a rule's other field by name), or a value in range."""
    try:
        made = base.variant(**{name: value})
    except FieldError as err:
        refusal = err
    except Exception as err:  # noqa: BLE001 - the failure names the raw error
        pytest.fail(f"{type(base).__name__}.{name} = {label}: raw {type(err).__name__}: {err}")
    else:
        refusal = None
    if refusal is not None:
        assert name == refusal.field or name in str(refusal), f"{label}: {refusal}"
        return
    declared = knobs(made)[name]
    shape = np.shape(getattr(made._checked[name], "magnitude", made._checked[name]))
    assert sum(n > 1 for n in shape) <= 1, f"{label} accepted as an array of shape {shape}"
    assert _within(declared, made._checked[name]), f"{label} accepted out of range: {made._checked[name]!r}"
    assert repr(made)
    assert made.to_text()


@pytest.mark.parametrize(("base", "name", "label", "value"), CASES)
def test_every_sweep_axis_refuses_bad_values_by_name(base: Any, name: str, label: str, value: Any) -> None:
    """The same battery as a sweep's axis and inside one: a FieldError naming the axis, or a sweep that evaluates."""
    from mlsysim_nb import sweep

    for axis in (value, [value]):
        if label == "generator" and axis is value:
            axis = _generator()  # noqa: PLW2901 - a fresh generator each time (the battery's one is read once)
        try:
            grid = sweep(base, **{name: axis})
        except FieldError as err:
            refusal: FieldError | None = err
        except Exception as err:  # noqa: BLE001 - the failure names the raw error
            pytest.fail(f"sweep over {type(base).__name__}.{name} = {label}: raw {type(err).__name__}: {err}")
        else:
            refusal = None
        if refusal is not None:
            assert name == refusal.field or name in str(refusal), f"{label}: {refusal}"
            continue
        assert len(grid) >= 1
        assert repr(grid)
