"""JSON numbers as a person would write them: binary float noise (26.779999999999994) rounded
away at 10 significant digits, far finer than any figure measured or priced here."""

from __future__ import annotations

from typing import Any


def tidy_floats(value: Any) -> Any:
    """`value` with every float in it (through dicts, lists and tuples) rounded to 10 significant
    digits; everything else as it was."""
    if isinstance(value, float):
        return float(f"{value:.10g}")
    if isinstance(value, dict):
        return {k: tidy_floats(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [tidy_floats(v) for v in value]
    return value
