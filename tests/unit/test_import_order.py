"""Nothing depends on import order: the kinds imported in any order give the same equations and notation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mlsysim_nb import kinds

ROOT = Path(__file__).resolve().parents[2]

_TABLES = """
import json, sys
for module in sys.argv[1:]:
    __import__(module)
from mlsysim_nb import kinds
out = {}
for kind in kinds.all_kinds():
    cls = kind.load()
    out[kind.name] = {
        "formulas": {n: [c.expression for c in f.cases] for n, f in cls.EQUATIONS.formulas.items()},
        "notation": {n: [q.symbol.text(), q.base, q.label] for n, q in cls.notation().items()},
        "docs": {n: getattr(cls, n).__doc__ for n in cls.FORMULA_NAMES if isinstance(getattr(cls, n, None), property)},
    }
print(json.dumps(out, sort_keys=True))
"""

_ORDERS = [
    ("mlsysim_nb.kinds.training.model", "mlsysim_nb.kinds.activation.model", "mlsysim_nb.kinds.parallel.model"),
    ("mlsysim_nb.kinds.parallel.model", "mlsysim_nb.kinds.activation.model", "mlsysim_nb.kinds.training.model"),
    ("mlsysim_nb.kinds.parallel.physics", "mlsysim_nb.helpers", "mlsysim_nb.kinds.training.model"),
    ("mlsysim_nb.kinds.activation.model", "mlsysim_nb.kinds.parallel.model"),
    ("mlsysim_nb.kinds.inference.model", "mlsysim_nb.kinds.parallel.model", "mlsysim_nb.kinds.training.model"),
]


def _tables(order: tuple[str, ...]) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", _TABLES, *order], capture_output=True, text=True, check=True, env=env, cwd=ROOT
    )
    tables: dict[str, object] = json.loads(result.stdout)
    return tables


@pytest.fixture(scope="module")
def first() -> dict[str, object]:
    """The tables after importing the kinds in the catalog's order."""
    return _tables(_ORDERS[0])


@pytest.mark.parametrize("order", _ORDERS[1:], ids=lambda o: " then ".join(m.rsplit(".", 2)[-2] for m in o))
def test_the_tables_do_not_depend_on_import_order(first: dict[str, object], order: tuple[str, ...]) -> None:
    """Each kind's formulas, notation and property docstrings are the same whichever kind is imported first."""
    assert len(first) == len(kinds.all_kinds())
    assert first == _tables(order)
