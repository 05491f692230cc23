"""Numbers as the commands show them: money from the catalog, or "unknown" where it has no price
(never a 0 that reads as free); JSON floats without binary noise (26.779999999999994).

Kept free of the spec and pydantic so every command can import it at no cost.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def known_sum(values: Iterable[float | None]) -> float | None:
    """The sum rounded to cents, or None when any value is unknown."""
    items = list(values)
    if any(v is None for v in items):
        return None
    return round(sum(v for v in items if v is not None), 2)


def usd(value: float | None, *, per: str = "") -> str:
    """$1,234.56 (with `per`, e.g. "/h"), or "unknown" where the catalog has no price."""
    return "unknown" if value is None else f"${value:,.2f}{per}"


def tidy_floats(value: Any) -> Any:
    """`value` with every float in it (through dicts, lists and tuples) rounded to 10 significant
    digits, far finer than any figure measured or priced here; everything else as it was."""
    if isinstance(value, float):
        return float(f"{value:.10g}")
    if isinstance(value, dict):
        return {k: tidy_floats(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [tidy_floats(v) for v in value]
    return value
