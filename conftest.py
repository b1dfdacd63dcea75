"""Repository-wide collection rules (the package's doctests are collected from ``mlsysim_nb/``).

The measurement lab's PyTorch side (``mlsysim_nb/measure/_layer.py`` and ``_saved.py``) imports torch when
it is imported; without the optional ``measure`` extra those two modules, which hold no doctests, are not
collected. ``tests/measure`` then skips locally and fails in CI, as its own conftest says.
The course's tools (``mlsysim_nb/course/``) need the ``course`` extra, which the ``test`` extra includes; in an
environment without it their doctests are not collected (the tests that import them fail, naming the extra).
``notebooks/nbgrader_config.py`` is nbgrader's configuration, read by nbgrader (which provides its
``get_config``), never imported as a module.
"""

from __future__ import annotations

import importlib.util

_TORCH_SIDE = ["mlsysim_nb/measure/_layer.py", "mlsysim_nb/measure/_saved.py"]

collect_ignore = ["notebooks/nbgrader_config.py"]
if importlib.util.find_spec("torch") is None:
    collect_ignore += _TORCH_SIDE
if importlib.util.find_spec("nbgrader") is None:
    collect_ignore += ["mlsysim_nb/course"]
