"""The training-state kind: a model's weights, gradients and optimizer state against one device's memory.

``physics`` holds its equations (``EQUATIONS``), ``model`` :class:`TrainingStateFitScenario` (fields and
properties), ``view`` its presentation as data and ``cases`` its named scenarios. This file is the
declaration :mod:`mlsysim_nb.kinds` reads; the class loads on first use.
"""

from __future__ import annotations

#: The scenario class this kind exports (defined in ``model.py``).
KIND = "TrainingStateFitScenario"
#: Its cases come first in the catalog (the reference's order).
ORDER = 10
#: Colours of its chart parts, colour-blind safe (Okabe-Ito) and readable on the white card.
COLORS = {
    "weights": "#0072B2",
    "frozen weights": "#0072B2",
    "gradients": "#E69F00",
    "optimizer state": "#009E73",
    "master copy": "#CC79A7",
    "adapter state": "#D55E00",
    "activations": "#56B4E9",
}
