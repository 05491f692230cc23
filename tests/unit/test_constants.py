"""One home per value (clusterctl/constants.py): the spec model's defaults are those values, and the
power program's copy (it ships alone to the nodes) equals the one home."""

from __future__ import annotations

from pathlib import Path

from clusterctl import constants
from clusterctl.power import names, program
from clusterctl.spec.model import HealthChecksSpec, NcclValidationSpec

ROOT = Path(__file__).parents[2]


def test_the_models_defaults_are_the_one_home() -> None:
    assert HealthChecksSpec().drain_prefix == constants.DRAIN_PREFIX
    v = NcclValidationSpec()
    assert (v.min_bytes, v.max_bytes) == (constants.NCCL_MIN_BYTES, constants.NCCL_MAX_BYTES)


def test_the_power_programs_copy_equals_the_one_home() -> None:
    assert names.DRAIN_PREFIX == constants.DRAIN_PREFIX
    assert program.Config(cluster="c").reason_prefix == constants.DRAIN_PREFIX


def test_no_module_spells_the_values_again() -> None:
    """Old code: "gpucl:" in 10 places and "16G" in 7."""
    spelled = []
    for path in sorted((ROOT / "clusterctl").rglob("*.py")) + sorted(
        (ROOT / "components").rglob("*.py")
    ):
        if path.name in ("constants.py",) or path == ROOT / "clusterctl/power/names.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#")[0]
            if '= "gpucl:"' in code or 'default="gpucl:"' in code or '"16G"' in code:
                spelled.append(f"{path.relative_to(ROOT)}:{n}")
    assert not spelled, spelled
