"""The many-device kind: one training recipe spread over data, tensor and pipeline parallelism.

``model`` holds :class:`ParallelTrainingScenario` (fields and properties), ``physics`` its own equations,
``view`` its presentation as data and ``cases`` its named scenarios. This file is the declaration
:mod:`mlsysim_nb.kinds` reads; the class and its equations load on first use.
"""

from __future__ import annotations

#: The scenario class this kind exports (defined in ``model.py``).
KIND = "ParallelTrainingScenario"
#: Its cases come after the single-device kinds' in the catalog.
ORDER = 30
#: Colours of its chart parts: the training kind's, part for part.
COLORS = {
    "weights": "#0072B2",
    "gradients": "#E69F00",
    "optimizer state": "#009E73",
    "master copy": "#CC79A7",
    "activations": "#56B4E9",
}
