"""Money as the commands print it: a catalog price, or "unknown" where the catalog has none.

Kept free of the spec and pydantic so every command can import it at no cost.
"""

from __future__ import annotations

from collections.abc import Iterable


def known_sum(values: Iterable[float | None]) -> float | None:
    """The sum rounded to cents, or None when any value is unknown."""
    items = list(values)
    if any(v is None for v in items):
        return None
    return round(sum(v for v in items if v is not None), 2)


def usd(value: float | None, *, per: str = "") -> str:
    """$1,234.56 (with `per`, e.g. "/h"), or "unknown" where the catalog has no price."""
    return "unknown" if value is None else f"${value:,.2f}{per}"
