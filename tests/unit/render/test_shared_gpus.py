"""Shared GPUs on Slurm (a partition's `sharing`): MIG layouts checked against NVIDIA's placement
rules, refused with one line naming the field, rendered as typed GRES with their boot step and
health check, and priced per slice-hour."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import yaml

from clusterctl.errors import SpecError
from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.render.paths import NHC_FAST_CONF
from clusterctl.render.site import cloud_site
from clusterctl.render.slurm_conf import render_slurm
from clusterctl.render.user_data import MUNGE_PLACEHOLDER
from clusterctl.spec.catalog import catalog
from clusterctl.spec.cost import shared_gpu_offers
from clusterctl.spec.load import load_stack_spec
from clusterctl.spec.mig import cap_minor, place
from clusterctl.spec.rules_sharing import sharing_fits_the_gpu

MIG7 = "partitions[0].sharing={mig: {1g.10gb: 7}}"
FIELD = "gpu-clusters:cluster.partitions[0].sharing"


def _h100():
    cat = catalog()
    return cat.mig(cat.require("Standard_ND96isr_H100_v5"))


@pytest.mark.parametrize(
    ("layout", "fits"),
    [
        ({"1g.10gb": 7}, True),
        ({"3g.40gb": 2}, True),
        ({"4g.40gb": 1, "3g.40gb": 1}, True),
        ({"3g.40gb": 1, "2g.20gb": 2}, True),  # 2g at 0 and 2, 3g at 4
        ({"2g.20gb": 3, "1g.10gb": 1}, True),
        ({"1g.20gb": 4}, True),
        ({"4g.40gb": 1, "2g.20gb": 1, "1g.20gb": 1}, True),
        ({"1g.10gb": 7, "1g.20gb": 1}, False),  # 8 compute slices
        ({"4g.40gb": 2}, False),  # a 4g starts only at 0
        ({"3g.40gb": 1, "2g.20gb": 1, "1g.20gb": 2}, False),  # 7 compute, 10 memory slices
        ({"7g.80gb": 1, "1g.10gb": 1}, False),
    ],
)
def test_a_layout_fits_one_gpu_only_by_nvidias_placement_rules(layout, fits) -> None:
    assert (place(_h100(), layout) is not None) is fits


def test_instance_ids_and_capability_minors_are_the_drivers_numbering() -> None:
    ones = place(_h100(), {"1g.10gb": 7})
    assert [(p.start, p.gi_id) for p in ones] == [(i, 7 + i) for i in range(7)]
    halves = place(_h100(), {"3g.40gb": 2})
    assert [(p.start, p.gi_id) for p in halves] == [(0, 1), (4, 2)]
    assert place(_h100(), {"7g.80gb": 1})[0].gi_id == 0
    # gres.conf(5)'s own MIG example: GPU 0's instance 2 is nvidia-cap21, its compute instance 22
    assert (cap_minor(0, 2), cap_minor(0, 2, 0)) == (21, 22)
    assert cap_minor(1, 0) == 3 + 15 * 9  # 15 instances of 9 minors per GPU


def test_every_mig_gpu_in_the_catalog_matches_a_sku_and_names_its_source() -> None:
    cat = catalog()
    for gpu in cat.mig_gpus:
        assert any(cat.mig(s) == gpu for s in cat.skus), gpu.name
        assert "Multi-Instance GPU User Guide" in gpu.source
        assert place(gpu, {gpu.profiles[0].name: 7}) is not None, gpu.name
    assert cat.mig(cat.require("Standard_ND96isr_H200_v5")).profile("1g.18gb") is not None
    assert cat.mig(cat.require("Standard_ND96amsr_A100_v4")).profile("1g.10gb") is not None
    assert cat.mig(cat.require("Standard_ND96asr_v4")).profile("1g.5gb") is not None


@pytest.mark.parametrize(
    ("override", "field", "words"),
    [
        ("{mig: {2g.10gb: 3}}", f"{FIELD}.mig", "not a MIG profile of H100-SXM5-80GB"),
        ("{mig: {1g.10gb: 7, 1g.20gb: 1}}", f"{FIELD}.mig", "8 compute slices of 7"),
        ("{mig: {4g.40gb: 2}}", f"{FIELD}.mig", "8 compute slices of 7"),
        (
            "{mig: {3g.40gb: 1, 2g.20gb: 1, 1g.20gb: 2}}",
            f"{FIELD}.mig",
            "no placement without overlapping memory slices",
        ),
        ("{mig: {1g.10gb: 7}, shards: 4}", FIELD, "not both"),
        ("{}", FIELD, "give mig (a layout) or shards"),
        ("{shards: 1}", f"{FIELD}.shards", "greater than or equal to 2"),
    ],
)
def test_each_refusal_is_one_line_naming_the_field(override, field, words) -> None:
    with pytest.raises(SpecError) as caught:
        load_stack_spec("azure-h100", [f"partitions[0].sharing={override}"])
    lines = caught.value.problems
    assert len(lines) == 1 and lines[0].startswith(field + ":") and words in lines[0], lines


def test_mig_on_a_gpu_without_it_is_refused() -> None:
    spec, _ = load_stack_spec("azure-h100", [MIG7])
    no_mig = catalog().model_copy(update={"mig_gpus": ()})
    (finding,) = sharing_fits_the_gpu(spec, no_mig)
    assert finding.level == "error" and finding.field == f"{FIELD}.mig"
    assert "has no MIG; use sharing.shards" in finding.message


def test_plan_exits_2_with_one_error_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "clusterctl", "plan", "-s", "azure-h100", "--set",
         "partitions[0].sharing={mig: {4g.40gb: 2}}"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "partitions[0].sharing.mig" in errors[0], result.stderr


def _slurm(*overrides: str) -> dict[str, str]:
    spec, _ = load_stack_spec("azure-h100", list(overrides))
    return render_slurm(spec, cloud_site(spec))


def test_mig_slices_are_typed_gres_with_their_capability_devices() -> None:
    files = _slurm(MIG7, "headNode.accounting=true")
    conf = files["slurm.conf"]
    assert re.search(r"^NodeName=gpu-pg0-\S+ .* Gres=gpu:1g\.10gb:56 ", conf, re.M)
    part = next(line for line in conf.splitlines() if line.startswith("PartitionName=gpu "))
    assert "OverSubscribe=NO" in part  # two 1g jobs share a node
    # and one asking for no memory takes its core's share, not the node's (Slurm's default)
    sku = catalog().require("Standard_ND96isr_H100_v5")
    assert f"DefMemPerCPU={sku.real_memory_mib // sku.vcpus} " in part
    assert 'TRESBillingWeights="CPU=0,GRES/gpu:1g.10gb=1.714"' in part  # 96/8 CPUs x 1/7
    assert "AccountingStorageTRES=gres/gpu,gres/gpu:1g.10gb" in conf
    lines = [x for x in files["gres.conf"].splitlines() if x.startswith("NodeName=")]
    assert len(lines) == 56
    assert lines[0].endswith(
        "Name=gpu Type=1g.10gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap66,"
        "/dev/nvidia-caps/nvidia-cap67"
    )  # instance 7 of GPU 0: 3 + 7 x 9
    assert "File=/dev/nvidia[" not in files["gres.conf"]
    assert "ConstrainDevices=yes" in files["cgroup.conf"]


def test_shards_share_whole_gpus() -> None:
    files = _slurm("partitions[0].sharing={shards: 4}", "headNode.accounting=true")
    conf = files["slurm.conf"]
    assert "GresTypes=gpu,shard" in conf and "Gres=gpu:h100:8,shard:32 " in conf
    assert "AccountingStorageTRES=gres/gpu,gres/shard" in conf
    assert 'TRESBillingWeights="CPU=0,GRES/shard=3"' in conf
    gres = files["gres.conf"]
    assert "Name=gpu Type=h100 File=/dev/nvidia[0-7]" in gres
    assert [f"Count=4 File=/dev/nvidia{g}" in gres for g in range(8)] == [True] * 8


def test_partitions_without_sharing_keep_whole_nodes() -> None:
    conf = _slurm()["slurm.conf"]
    assert "OverSubscribe=EXCLUSIVE" in conf and "GresTypes=gpu\n" in conf
    assert "TRESBillingWeights" not in conf


def _gpu_user_data(*overrides: str) -> dict:
    spec, _ = load_stack_spec("azure-h100", list(overrides))
    text = render_cloud_init(
        spec, "azure-h100", munge_key_b64=MUNGE_PLACEHOLDER, partition=spec.partitions[0]
    )
    return yaml.safe_load(text)


def test_the_layout_is_applied_before_slurmd_at_every_boot() -> None:
    doc = _gpu_user_data(MIG7)
    files = {f["path"]: f.get("content", "") for f in doc["write_files"]}
    unit = files["/etc/systemd/system/gpucl-mig.service"]
    assert "Before=slurmd.service" in unit and "RequiredBy=slurmd.service" in unit
    runcmd = [" ".join(map(str, c)) if isinstance(c, list) else c for c in doc["runcmd"]]
    enable = runcmd.index("systemctl enable --now gpucl-mig.service")
    assert enable < next(i for i, c in enumerate(runcmd) if "gpu-node-setup.sh" in c)
    plain = _gpu_user_data()
    assert not any("gpucl-mig" in f["path"] for f in plain["write_files"])


def test_the_health_check_expects_the_partitions_mig_mode() -> None:
    mig = _gpu_user_data(MIG7)
    plain = _gpu_user_data()
    nhc = {
        name: next(f["content"] for f in d["write_files"] if f["path"] == NHC_FAST_CONF)
        for name, d in (("mig", mig), ("plain", plain))
    }
    assert "gpucl_check_mig 8 7" in nhc["mig"] and "gpucl_check_mig 8 0" in nhc["plain"]


def test_plan_prices_a_slice_hour_as_its_share_of_a_gpu() -> None:
    cat = catalog()
    spec, _ = load_stack_spec(
        "azure-h100", ["partitions[0].sharing={mig: {3g.40gb: 1, 2g.20gb: 2}}"]
    )
    price = cat.require("Standard_ND96isr_H100_v5").price.usd_per_hour
    offers = {o.gres: o for o in shared_gpu_offers(spec, cat)}
    assert set(offers) == {"gpu:3g.40gb", "gpu:2g.20gb"}
    assert offers["gpu:2g.20gb"].per_node == 16 and offers["gpu:3g.40gb"].per_node == 8
    assert offers["gpu:2g.20gb"].total == 16 * spec.partitions[0].nodes
    assert offers["gpu:3g.40gb"].usd_per_hour_each == pytest.approx(price / 8 * 3 / 7)
    spec, _ = load_stack_spec("azure-h100", ["partitions[0].sharing={shards: 4}"])
    (shard,) = shared_gpu_offers(spec, cat)
    assert shard.gres == "shard" and shard.usd_per_hour_each == pytest.approx(price / 32)
    assert shared_gpu_offers(load_stack_spec("azure-h100")[0], cat) == []


def test_the_catalog_refuses_a_placement_past_the_last_memory_slice() -> None:
    from pydantic import ValidationError

    from clusterctl.spec.catalog import MigGpu

    bad = {"name": "x", "gpuModel": "H100", "gpuMemoryGiB": 80, "source": "s",
           "profiles": [{"name": "2g.20gb", "computeSlices": 2, "memorySlices": 2,
                         "placements": [6, 7]}]}  # fmt: skip
    with pytest.raises(ValidationError, match="runs past memory slice 8"):
        MigGpu.model_validate(bad)


def test_plan_out_writes_what_a_mig_partitions_nodes_get() -> None:
    from clusterctl.render.bundle import render_bundle

    spec, _ = load_stack_spec("azure-h100", [MIG7])
    files = render_bundle(spec, "azure-h100")
    assert "gpucl_check_mig 8 7" in files["nodes/gpu/nhc.conf"]
    assert "-cgi 1g.10gb:0,1g.10gb:1," in files["nodes/gpu/gpucl-mig.sh"]
    assert "scripts/gpucl-mig.sh" not in files


def test_the_deep_tier_skips_mig_partitions_whose_gpus_are_slices() -> None:
    from clusterctl.render.scripts import node_scripts as scripts

    spec, _ = load_stack_spec("azure-h100", [MIG7])
    deep = scripts(spec, cloud_site(spec), None)["gpucl-deep-health.sh"]
    assert 'mig_partitions=" gpu "' in deep and "has MIG slices, not whole GPUs" in deep
    plain, _ = load_stack_spec("azure-h100")
    assert "MIG" not in scripts(plain, cloud_site(plain), None)["gpucl-deep-health.sh"]
