"""One size syntax for the spec, `validate -b/-e` and the sandbox probe (clusterctl.nccl.units)."""

from __future__ import annotations

import argparse

import pytest
from pydantic import ValidationError

from clusterctl.nccl.units import SizeError, fmt_bytes, format_size, normalize_size, parse_size
from clusterctl.probe.__main__ import parse_size as probe_size
from clusterctl.spec.model import NcclValidationSpec

G = 1 << 30
SAME = {
    "16G": 16 * G,
    "16GB": 16 * G,
    "16GiB": 16 * G,
    "16g": 16 * G,
    "17179869184": 16 * G,
    "1.5G": 3 * G // 2,
    "1536M": 3 * G // 2,
    "16M": 16 << 20,
    "64K": 64 << 10,
    "8": 8,
    "8B": 8,
    ".5K": 512,
}
BAD = ["", "x", "16X", "16 GBs", "-1", "0", "1.3K", "1e9", "16T", "G"]


@pytest.mark.parametrize(("text", "want"), SAME.items())
def test_binary_multiples_as_nccl_tests(text: str, want: int) -> None:
    assert parse_size(text) == want
    # nccl-tests reads an integer and one of K/M/G: the respelt size means the same bytes to it.
    spelt = format_size(want)
    digits, unit = (spelt[:-1], spelt[-1]) if spelt[-1] in "KMG" else (spelt, "")
    assert (
        digits.isdigit() and int(digits) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": G}[unit] == want
    )


@pytest.mark.parametrize("text", BAD)
def test_refused_with_one_line(text: str) -> None:
    with pytest.raises(SizeError) as exc:
        parse_size(text)
    assert "\n" not in str(exc.value)


def test_respelt_for_nccl_tests() -> None:
    assert normalize_size("16GiB") == "16G"
    assert normalize_size("1.5G") == "1536M"
    assert normalize_size(8) == "8"
    assert normalize_size("1536") == "1536"
    assert fmt_bytes(4 * G) == "4 GiB" and fmt_bytes(1500000) == "1500000 B"


@pytest.mark.parametrize(("text", "want"), SAME.items())
def test_spec_and_probe_agree(text: str, want: int) -> None:
    spec = NcclValidationSpec(minBytes=text)
    assert parse_size(spec.min_bytes) == want
    assert probe_size(text) == want - want % 4  # the probe rounds down to whole 4-byte lanes


@pytest.mark.parametrize("text", ["x", "1.3K", "0"])
def test_spec_and_probe_refuse_the_same_way(text: str) -> None:
    with pytest.raises(SizeError) as direct:
        parse_size(text)
    with pytest.raises(ValidationError) as spec:
        NcclValidationSpec(maxBytes=text)
    assert str(direct.value) in str(spec.value)
    with pytest.raises(argparse.ArgumentTypeError) as probe:
        probe_size(text)
    assert str(probe.value) == str(direct.value)
