"""Message sizes, one syntax everywhere: the spec's validation.nccl.minBytes/maxBytes, `clusterctl
validate -b/-e` and the sandbox probe's -b/-e.

A size is a whole number of bytes, or a number with a unit K, M or G. Units are binary, as
nccl-tests' own -b/-e read them (K = 1024): `16G`, `16GB`, `16GiB` and `17179869184` are the
same size, and so are `1.5G` and `1536M`. Case does not matter; a trailing `B` or `iB` is allowed.
Anything else, zero, and fractions that are not a whole number of bytes are refused with one line
(SizeError's message).

Standard library only: clusterctl.spec, clusterctl.probe and the CLI all import it.
"""

from __future__ import annotations

import re
from fractions import Fraction

UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_SIZE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*([KMG]?)(?:I?B)?", re.IGNORECASE)
SIZE_PATTERN = r"^\s*(\d+(\.\d*)?|\.\d+)\s*[KMGkmg]?([iI]?[bB])?\s*$"
"""The same syntax as a JSON Schema pattern (for editors; parse_size is the judge)."""
EXAMPLES = "8, 64K, 1M, 1.5G, 16GiB"
SYNTAX = f"a size like {EXAMPLES} (K/M/G are 1024-based, as in nccl-tests)"


class SizeError(ValueError):
    """A size that is not one; str() is the one line to show."""


def parse_size(text: str | int) -> int:
    """Bytes in `text`; SizeError when it is not a size."""
    if isinstance(text, bool):
        raise SizeError(f"{text!r} is not {SYNTAX}")
    if isinstance(text, int):
        if text < 1:
            raise SizeError(f"{text} is not {SYNTAX}: a size is at least 1 byte")
        return text
    match = _SIZE.fullmatch(str(text).strip())
    if match is None:
        raise SizeError(f"'{text}' is not {SYNTAX}")
    number, unit = match.groups()
    value = Fraction(number) * UNITS[unit.upper()]
    if value.denominator != 1:
        raise SizeError(f"'{text}' is not a whole number of bytes")
    if value < 1:
        raise SizeError(f"'{text}' is not {SYNTAX}: a size is at least 1 byte")
    return int(value)


def format_size(n: int) -> str:
    """The shortest exact nccl-tests spelling of n bytes: 17179869184 -> '16G', 1536 -> '1536'.

    Only whole multiples take a unit, so nccl-tests (which reads an integer and a unit letter,
    no fractions) gets exactly the size the user asked for.
    """
    for unit in ("G", "M", "K"):
        if n >= UNITS[unit] and n % UNITS[unit] == 0:
            return f"{n // UNITS[unit]}{unit}"
    return str(n)


def normalize_size(text: str | int) -> str:
    """`text` checked and respelt the nccl-tests way: '16GiB' -> '16G', '1.5G' -> '1536M'."""
    return format_size(parse_size(text))


def fmt_bytes(n: int) -> str:
    """For people: 4294967296 -> '4 GiB', 1500000 -> '1500000 B' (exact, never rounded)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"
