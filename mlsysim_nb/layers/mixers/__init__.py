"""The token mixers a layer can hold, one module each, found by listing this package's modules.

A mixer is what a layer uses to mix information across tokens: multi-head or grouped-query attention
(:mod:`~mlsysim_nb.layers.mixers.attention`) today; latent attention or a state-space layer are one module
more. A mixer's module defines ``MIXER``, an instance of a :class:`Mixer` subclass, which owns everything the
layer table asks of that mixer:

* ``weights(arch)``: its :class:`~mlsysim_nb.layers.rows.Weight` rows (the parameter count sums them);
* ``saved(arch, implementation, attention, device)``: the :class:`~mlsysim_nb.layers.rows.Saved` rows its
  block keeps for backward, in the paper's (``"megatron"``) or the framework's (``"transformers"``) accounting;
* ``cache(arch)``: the :class:`~mlsysim_nb.layers.rows.Cached` rows a serving engine keeps per layer (per
  token, or a fixed state per sequence), which the serving kind sums as the parameter count sums weights;
* ``symbols(arch)``: the sizes of the symbols of its own that its rows use (a state size, a latent width), and
  ``run_symbols(arch, seq_len)`` those that follow a run's sequence length (a chunked scan's chunks);
* ``per_device(arch, t, engine)`` and ``refusal(arch, t, engine)``: its tensor-parallel rule, one per
  engine (:data:`ENGINES`): the sizes of its symbols on one of ``t`` devices, and the rule a refused ``t``
  breaks with the engine's reason (``None`` when it accepts it). The training kinds follow Megatron-LM, the
  serving kind vLLM.

A layer names its mixer and its window (:class:`~mlsysim_nb.layers.architecture.Layer`); a model is a pattern
of layers (``Architecture.pattern``). A mixer kept outside the package (a course's, a lab's) is a module in a
folder given to :func:`register_mixer_path`; it becomes ``mlsysim_nb.layers.mixers.<module>``.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from mlsysim_nb.errors import FieldError

if TYPE_CHECKING:
    from mlsysim_nb.layers.architecture import Architecture
    from mlsysim_nb.layers.rows import Cached, Saved, Weight

__all__ = ["ENGINES", "Mixer", "all_mixers", "find", "register_mixer_path"]

#: The engines whose tensor-parallel rules the kinds follow, by key: the training kinds Megatron-LM's, the
#: serving kind vLLM's.
ENGINES = {"megatron": "Megatron-LM", "vllm": "vLLM"}


class Mixer:
    """A token mixer's rows and rules; a subclass overrides what its layer has (the defaults: nothing, whole)."""

    #: The module's name, which a :class:`~mlsysim_nb.layers.architecture.Layer` gives as its ``mixer``.
    name: ClassVar[str] = ""
    #: What the mixer is called in tables and reprs.
    label: ClassVar[str] = ""

    def check(self, arch: Architecture) -> None:
        """Refuse an architecture this mixer cannot be built from (a :class:`FieldError` naming the field)."""

    def symbols(self, arch: Architecture) -> dict[str, int]:
        """Sizes of the symbols of its own that its rows use (beyond :data:`~mlsysim_nb.layers.rows.SYMBOLS`)."""
        return {}

    def run_symbols(self, arch: Architecture, seq_len: Any) -> dict[str, Any]:
        """Sizes of its symbols that follow the sequence length of a run (a chunked scan's padded length)."""
        return {}

    def weights(self, arch: Architecture) -> tuple[Weight, ...]:
        """Its weights in one layer."""
        return ()

    def saved(self, arch: Architecture, implementation: str, attention: str, device: str) -> tuple[Saved, ...]:
        """What its block keeps for backward in one layer, in forward order."""
        return ()

    def cache(self, arch: Architecture) -> tuple[Cached, ...]:
        """What a serving engine keeps of it per layer: per token (up to the layer's window) or per sequence."""
        return ()

    def attended_width(self, arch: Architecture) -> float:
        """A quarter of its attention FLOPs per token attended; 0 when it attends to no past tokens.

        Attention's is ``a·d`` (QKᵀ and AV take 2·a·d each); a state-space layer's FLOPs are its weights'.
        """
        return 0

    def per_device(self, arch: Architecture, tensor_parallel: Any, engine: str) -> dict[str, Any]:
        """Sizes of the symbols its rows use on one of ``tensor_parallel`` devices under ``engine``'s rule."""
        return {}

    def refusal(self, arch: Architecture, tensor_parallel: int, engine: str) -> tuple[str, str] | None:
        """The rule ``tensor_parallel`` breaks under ``engine`` and the engine's reason; ``None`` when it splits.

        The rule reads as a field's (``"must divide the 8 key/value heads"``); the caller names the model and t.
        """
        return None


def register_mixer_path(folder: str | Path) -> None:
    """Look for mixers in ``folder`` too: each module there defining ``MIXER`` is a mixer."""
    path = str(folder)
    if path not in __path__:
        __path__.append(path)


#: The mixer modules found, by the path they were looked for on.
_found: dict[tuple[str, ...], tuple[str, ...]] = {}


def all_mixers() -> tuple[str, ...]:
    """The names of every mixer module on this package's path."""
    key = tuple(__path__)
    if key not in _found:
        importlib.invalidate_caches()  # a module written since the last look is seen
        _found.clear()
        _found[key] = tuple(sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.ispkg))
    return _found[key]


def find(name: object, owner: str = "Architecture", field: str = "pattern") -> Mixer:
    """The mixer called ``name``; a :class:`FieldError` naming ``owner.field`` and the known mixers otherwise."""
    known = all_mixers()
    if not isinstance(name, str) or name not in known:
        raise FieldError(owner, field, f"names a mixer of the layer table ({', '.join(known)}), got {name!r}")
    mixer = getattr(importlib.import_module(f"{__name__}.{name}"), "MIXER", None)
    if not isinstance(mixer, Mixer):
        raise FieldError(owner, field, f"the mixer module {name!r} defines no MIXER (a Mixer)")
    return mixer
