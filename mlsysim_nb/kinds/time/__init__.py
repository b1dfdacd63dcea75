"""The training-time kind: how long one iteration of a many-device layout takes, and where the time goes.

``model`` holds :class:`TrainingTimeScenario` (fields and properties), ``physics`` its equations, ``table`` what
it reads off the layer table, ``view`` its presentation as data and ``cases`` its named scenarios. This file is
the declaration :mod:`mlsysim_nb.kinds` reads; the class and its equations load on first use.
"""

from __future__ import annotations

#: The scenario class this kind exports (defined in ``model.py``).
KIND = "TrainingTimeScenario"
#: Its cases come after the many-device kind's, whose layouts they time, before the serving kind's.
ORDER = 35
#: Colours of its chart parts: the many-device kind's memory parts, and an iteration's time by cause.
COLORS = {
    "weights": "#0072B2",
    "gradients": "#E69F00",
    "optimizer state": "#009E73",
    "master copy": "#CC79A7",
    "activations": "#56B4E9",
    "compute": "#332288",
    "recompute": "#882255",
    "elementwise": "#44AA99",
    "communication exposed": "#DDCC77",
    "bubble": "#BBBBBB",
    "optimizer step": "#117733",
}
