"""The transformer constants the package exports, and the recomputation strategies.

The equations themselves are values that live with their kinds: each kind's ``physics.py``
(:mod:`mlsysim_nb.kinds.training.physics`, :mod:`mlsysim_nb.kinds.activation.physics`,
:mod:`mlsysim_nb.kinds.parallel.physics`, :mod:`mlsysim_nb.kinds.time.physics`,
:mod:`mlsysim_nb.kinds.inference.physics`;
:func:`mlsysim_nb.kinds.all_kinds` lists them) builds an :class:`~mlsysim_nb.model.equations.Equations`
that its scenario class reads. The constants below are sums over the layer table
(:mod:`mlsysim_nb.layers`), named as Korthikanti et al. (2022) write them.
"""

from __future__ import annotations

from mlsysim_nb import layers

__all__ = [
    "KORTHIKANTI_FFN_BYTES",
    "KORTHIKANTI_FFN_FREE_BYTES",
    "KORTHIKANTI_PER_TOKEN_BYTES",
    "KORTHIKANTI_SCORE_BYTES",
    "PROJECTION_TENSORS",
    "STRATEGIES",
]

#: Bytes of linear (per-token) activations per hidden element per layer at 16 bits that do not depend on
#: the feed-forward width: attention block 11, the MLP's input and dropout mask 2 + 1, the two layer norms 4.
KORTHIKANTI_FFN_FREE_BYTES = layers.ffn_free_bytes()
#: Bytes per hidden element and per unit of the feed-forward multiple f: the GeLU's input and output,
#: each f·h wide at 2 bytes (Korthikanti's MLP has f = 4, hence its 8 + 8).
KORTHIKANTI_FFN_BYTES = layers.ffn_bytes()
#: Bytes of linear (per-token) activations per hidden element per layer at 16 bits with Korthikanti's 4h MLP:
#: attention block 11, MLP block 19, the two layer norms 4 (Korthikanti et al. 2022, Table 2): 18 + 4·4.
KORTHIKANTI_PER_TOKEN_BYTES = layers.per_token_bytes()
#: Bytes per stored attention-score element at 16 bits: softmax input 2,
#: dropout mask 1, dropout output 2 (Korthikanti et al. 2022, Sec. 4.1).
KORTHIKANTI_SCORE_BYTES = layers.score_bytes()
#: The hidden-width inputs of attention's products (Q, K, V, the output projection's), the illustrative line item.
PROJECTION_TENSORS = layers.projection_tensors()

#: The recomputation strategies the activation model and :func:`~mlsysim_nb.helpers.calc_activation_memory` know.
STRATEGIES = ("none", "selective", "full")
