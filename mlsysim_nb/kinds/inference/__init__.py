"""The serving kind: a trained model's weights and key/value cache against the devices that serve it.

``model`` holds :class:`InferenceMemoryScenario` (fields and properties), ``physics`` its equations (assembled
from ``weights``, ``cache``, ``fit``, ``decode`` and ``timing``), ``table`` what it reads of the layer table,
``view`` its presentation as data and ``cases`` its named scenarios. This file is the declaration
:mod:`mlsysim_nb.kinds` reads; the class loads on first use.
"""

from __future__ import annotations

#: The scenario class this kind exports (defined in ``model.py``).
KIND = "InferenceMemoryScenario"
#: Its cases come after the training kinds' in the catalog.
ORDER = 40
#: Colours of its chart parts: the weights as in the training kinds, the rest colour-blind safe (Tol's palette).
COLORS = {
    "weights": "#0072B2",
    "KV cache": "#882255",
    "block waste": "#DDCC77",
    "reserve": "#888888",
    "free": "#D9EEF0",
}
