"""Live parts: controls built from the knobs, the explorer panel, side-by-side comparison and sweeps.

They hold scenarios and replace them through ``variant()``; they render with :mod:`mlsysim_nb.render`.
Only the explorer imports the widget libraries: a static comparison or a sweep loads none (``sweep_axes``
reads and describes a sweep's axes).
"""
