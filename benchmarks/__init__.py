"""Benchmarks against the reference implementation (run with ``make bench``)."""
