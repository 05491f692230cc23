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


def test_code_that_needs_a_spec_default_reads_the_models() -> None:
    from clusterctl.render.site import SlurmSite
    from clusterctl.spec.model import HealthChecksSpec as H
    from clusterctl.validate.run import Options

    assert SlurmSite().health_check_interval_s == H().interval_seconds
    assert Options().timeout_minutes == NcclValidationSpec().timeout_minutes


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


def test_node_and_scale_set_names_are_spelled_only_in_power_names() -> None:
    """Old code: `-pg<k>`, `<cluster>-<group>`, `<group>-<n>` and `<set>_<id>` spelled in 6
    modules (spec/topology, render/slurm_conf, render/power_files, components, sandbox, the power
    program). Now one home, clusterctl/power/names.py; every other module calls it."""
    patterns = (
        "-pg{",
        "{spec.name}-{g.name}",
        "{spec.name}-{scale_set.name}",
        "{cluster}-{group}",
        "{ss.name}-[",
        "{ss}_{",
        "{vmss}_{",
    )
    patterns += ('f"{ref.scale_set}_', "{g.name}-{i", "{group}-{n}", "{self.name}-{i}")
    spelled = []
    for path in sorted((ROOT / "clusterctl").rglob("*.py")) + sorted(
        (ROOT / "components").rglob("*.py")
    ):
        if path == ROOT / "clusterctl/power/names.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if any(p in line for p in patterns):
                spelled.append(f"{path.relative_to(ROOT)}:{n}")
    assert not spelled, spelled


def test_the_names_round_trip() -> None:
    group = names.group_name("gpu", 1)
    vm = names.vm_name(names.vm_set_name("c", group), 4)
    assert (group, vm) == ("gpu-pg1", "c-gpu-pg1_4")
    assert names.split_vm_name(vm) == ("c-gpu-pg1", "4")
    assert names.split_vm_name("c-scheduler") is None
    assert names.node_name("c", vm) == names.slurm_name(group, 5)  # without a map: id + 1
    assert names.node_ref("c", "gpu-pg1-5").instance_id == "4"
    assert names.hostlist(group, 1, 1) == "gpu-pg1-1"
    assert names.hostlist(group, 2, 9) == "gpu-pg1-[2-9]"
