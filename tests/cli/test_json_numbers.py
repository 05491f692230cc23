"""JSON carries numbers as a person writes them: no binary float noise, margins in hundredths."""

from __future__ import annotations

import json
import re

from tests.cli.conftest import H100, NCCL_DATA

LOW = NCCL_DATA / "derived_h100_12pct_low.txt"  # margin -0.591715976331361 unrounded
NOISE = re.compile(r"\d\.\d{11,}")


def test_validate_and_history_json_have_no_float_noise(cli, _validation_history) -> None:
    res = cli("validate", "--nccl", "--from-log", str(LOW), "--sku", H100, "--json",
              "--record", "azure-h100")  # fmt: skip
    assert res.exit_code == 1, res.output
    assert not NOISE.search(res.stdout), NOISE.findall(res.stdout)
    assert json.loads(res.stdout)["groups"][0]["margin_pct"] == -0.59
    hist = cli("validate", "history", "-s", "azure-h100", "--json").stdout
    assert not NOISE.search(hist), NOISE.findall(hist)


def test_tidy_floats_rounds_noise_away_and_keeps_the_rest() -> None:
    from clusterctl.figures import tidy_floats

    doc = {"a": 0.1 + 0.2, "b": [26.779999999999994, 3, "x"], "c": (1.5, None), "d": True}
    assert tidy_floats(doc) == {"a": 0.3, "b": [26.78, 3, "x"], "c": [1.5, None], "d": True}
