"""No token mixer: a layer that is only an MLP (Nemotron-H's ``-`` layers), with its one norm before the MLP.

A layer of the pattern with ``Layer("none")`` holds no mixer and none of a mixer's norm: its weights are the
MLP's norm and the MLP, it saves only what they save in training and it keeps nothing in a serving cache. A layer
that is only a mixer is ``Layer(mixer, mlp=False)`` (:class:`~mlsysim_nb.layers.architecture.Layer`).
"""

from __future__ import annotations

from mlsysim_nb.layers.mixers import Mixer

__all__ = ["MIXER", "NoMixer"]


class NoMixer(Mixer):
    """The absent mixer: no weights, no saved rows, no cache, whole on every device."""

    name = "none"
    label = "no token mixer (the layer is an MLP)"


MIXER = NoMixer()
