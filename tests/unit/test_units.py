"""The registry: bytes are [information], decimal and binary prefixes, plain numbers refused."""

from __future__ import annotations

import pint
import pytest

from mlsysim_nb.units import Q_, factor, ureg


def test_byte_has_information_dimension() -> None:
    """A byte is not dimensionless, so adding a plain number fails."""
    assert str(ureg.byte.dimensionality) == "[information]"
    with pytest.raises(pint.DimensionalityError):
        Q_(2, "GB") + 3


def test_plain_number_does_not_convert_to_bytes() -> None:
    """Stock pint turns a bare 1 into 0.125 byte; ours refuses."""
    with pytest.raises(pint.DimensionalityError):
        Q_(1).to("byte")


def test_decimal_and_binary_prefixes() -> None:
    """GB and MB are decimal, GiB and MiB binary."""
    assert Q_(1, "GB").m_as("byte") == 1e9
    assert Q_(1, "GiB").m_as("byte") == 2**30
    assert Q_(1, "MB").m_as("byte") == 1e6
    assert Q_(1, "MiB").m_as("byte") == 2**20
    assert pytest.approx(Q_(80, "GiB").m_as("GB"), rel=1e-12) == 85.89934592


def test_rates_and_compute() -> None:
    """Bandwidth and FLOP rates have their own dimensions."""
    assert Q_(3.35, "TB/s").m_as("byte/second") == 3.35e12
    assert Q_(989, "TFLOPS").m_as("FLOP/second") == 989e12
    with pytest.raises(pint.DimensionalityError):
        Q_(1, "TFLOPS").to("byte/second")


def test_factor_is_cached_and_checks_dimension() -> None:
    """factor() converts once per pair and refuses mismatched dimensions."""
    assert factor("byte", "GB") == 1e-9
    with pytest.raises(pint.DimensionalityError):
        factor("byte", "second")


def test_counts_are_dimensionless() -> None:
    """Parameters are a count."""
    assert Q_(1.5e9, "param").m_as("count") == 1.5e9
