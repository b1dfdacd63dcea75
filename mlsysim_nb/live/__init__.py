"""Live parts: controls built from the knobs, the explorer panel, side-by-side comparison and sweeps.

They hold scenarios and replace them through ``variant()``; they render with :mod:`mlsysim_nb.render`.
"""
