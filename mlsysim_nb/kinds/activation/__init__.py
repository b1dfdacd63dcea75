"""The activation kind: the saved activations of a transformer under each recomputation strategy.

``physics`` holds its equations (``EQUATIONS``, which the helper functions evaluate too), ``model``
:class:`ActivationMemoryScenario` (fields and properties), ``view`` its presentation as data and ``cases``
its named scenarios. This file is the declaration :mod:`mlsysim_nb.kinds` reads; the class loads on
first use.
"""

from __future__ import annotations

#: The scenario class this kind exports (defined in ``model.py``).
KIND = "ActivationMemoryScenario"
#: Its cases come after the training kind's in the catalog (the reference's order).
ORDER = 20
#: Colours of its chart parts, colour-blind safe (Okabe-Ito) and readable on the white card.
COLORS = {
    "linear (per-token)": "#56B4E9",
    "attention scores": "#D55E00",
}
