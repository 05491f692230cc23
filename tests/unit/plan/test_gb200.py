"""ND GB200 v6 (azure-gb200): an arm64, 4-GPU node whose NVLink domain is an NVL72 rack of 18
VMs renders, plans, and is refused clearly by the x86 sandbox."""

from __future__ import annotations

import pytest

from clusterctl.errors import UserError
from clusterctl.plan.program import make_plan
from clusterctl.render.bundle import render_bundle
from clusterctl.sandbox.vm.substitutions import cannot_boot
from clusterctl.spec.catalog import catalog
from clusterctl.spec.load import load_stack_spec
from clusterctl.validate.targets import resolve

GB200 = "Standard_ND128isr_NDR_GB200_v6"


def test_the_catalog_entry_is_a_4_gpu_arm64_nvl72_node() -> None:
    sku = catalog().require(GB200)
    assert (sku.gpus, sku.vcpus, sku.fabric.nics, sku.fabric.gbps_per_nic) == (4, 128, 4, 400)
    shape = sku.shape
    assert (shape.cpu_arch, shape.sockets, shape.fabric_manager, shape.imex) == (
        "arm64",
        2,
        False,
        True,
    )
    assert sku.nodes_per_nvlink_domain == 18
    assert catalog().gpu_image(sku)["arch"] == "arm64"


def test_it_renders_blocks_imex_and_the_noble_slurm_repo() -> None:
    spec, _ = load_stack_spec("azure-gb200", [])
    files = render_bundle(spec, "azure-gb200")
    assert "TopologyPlugin=topology/block" in files["slurm/slurm.conf"]
    assert "BlockName=gpu-pg0-nvl0 Nodes=gpu-pg0-[1-18]" in files["slurm/topology.conf"]
    assert "File=/dev/nvidia[0-3]" in files["slurm/gres.conf"]
    assert "SocketsPerBoard=2 CoresPerSocket=64 " in files["slurm/slurm.conf"]
    setup = files["scripts/gpu-node-setup.sh"]
    assert "nvidia-imex.service" in setup and "nvidia-fabricmanager" not in setup
    assert "slurm-ubuntu-noble" in files["cloud-init/gpu.yaml"]
    assert "NCCL_MNNVL_ENABLE=1" in files["nodes/gpu/nccl.conf"]
    assert "gpucl_check_gpu_count 4" in files["nodes/gpu/nhc.conf"]


def test_it_plans_with_its_gallery_image_placeholder_named() -> None:
    plan = make_plan("azure-gb200", [])
    assert not [f for f in plan.findings if f.level == "error"]
    (ph,) = [f for f in plan.findings if "is a placeholder" in f.message]
    assert ph.field.endswith("partitions[0].image") and ph.level == "warning"


@pytest.mark.parametrize(
    "image", ["null", "Canonical:ubuntu-24_04-lts:server-arm64:24.04.202609040"]
)
def test_a_gb200_partition_on_plain_ubuntu_is_refused(image: str) -> None:
    """Plain Ubuntu arm64 has no NVIDIA driver, IMEX or DOCA: its 18 VMs bill and run no job."""
    with pytest.raises(UserError) as err:
        load_stack_spec("azure-gb200", [f"partitions[0].image={image}"])
    (line,) = [x for x in str(err.value).splitlines() if "partitions[0].image" in x]
    assert "without the NVIDIA driver" in line and "Azure Compute Gallery" in line


def test_plan_refuses_it_in_one_line_with_exit_2() -> None:
    import subprocess
    import sys

    from tests.conftest import ROOT

    cmd = [sys.executable, "-m", "clusterctl", "plan", "-s", "azure-gb200"]
    got = subprocess.run(
        [*cmd, "--set", "partitions[0].image=null"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert got.returncode == 2, got.stderr
    lines = [x for x in got.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "partitions[0].image" in lines[0], got.stderr


def test_the_x86_sandbox_says_why_it_cannot_boot_it() -> None:
    spec, _ = load_stack_spec("azure-gb200", [])
    why = cannot_boot(spec, catalog())
    assert why and "arm64" in why and "\n" not in why
    assert cannot_boot(load_stack_spec("azure-h100", [])[0], catalog()) is None


def test_arm64_and_cross_vm_nvlink_are_refused_on_kubernetes() -> None:
    with pytest.raises(UserError) as err:
        load_stack_spec("aks-h100", [f"partitions[0].sku={GB200}"])
    assert "arm64 GPU nodes are not supported on Azure Kubernetes yet" in str(err.value)
    assert "NVLink domains across nodes are not supported on Kubernetes yet" in str(err.value)


def test_validate_over_ssh_asks_for_four_gpus_per_node() -> None:
    t = resolve(host="sched", nodes=2, sku=GB200)
    assert t.gpus_per_node == 4


def test_sandbox_up_refuses_it_with_one_line_and_exit_2() -> None:
    import subprocess
    import sys

    from tests.conftest import ROOT

    cmd = [sys.executable, "-m", "clusterctl", "sandbox", "up", "-s", "azure-gb200"]
    got = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert got.returncode == 2
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and "arm64" in lines[0], got.stderr
    explain = subprocess.run([*cmd, "--explain"], cwd=ROOT, capture_output=True, text=True)
    assert explain.returncode == 0
    assert "stack azure-gb200: cannot boot here: " in explain.stdout


@pytest.mark.parametrize(
    ("overrides", "field", "fix"),
    [
        (["partitions[0].nodes=20"], "partitions[0].nodes", "use a multiple of 18"),
        (["partitions[0].nodes=108"], "partitions[0].maxNodesPerScaleSet", "(at most 90)"),
    ],
)
def test_a_partial_nvl72_block_is_refused(overrides: list[str], field: str, fix: str) -> None:
    """slurmctld 24.11 exits on a block smaller than the first ('children count lower than
    bblock_node_cnt'): seen with 20 nodes (blocks of 18 and 2) before this rule."""
    with pytest.raises(UserError) as err:
        load_stack_spec("azure-gb200", overrides)
    assert field in str(err.value) and fix in str(err.value)


def test_whole_blocks_in_whole_scale_sets_render() -> None:
    spec, _ = load_stack_spec(
        "azure-gb200", ["partitions[0].nodes=108", "partitions[0].maxNodesPerScaleSet=54"]
    )
    topology = render_bundle(spec, "azure-gb200")["slurm/topology.conf"]
    blocks = [x for x in topology.splitlines() if x.startswith("BlockName=")]
    assert len(blocks) == 6 and "BlockName=gpu-pg1-nvl2 Nodes=gpu-pg1-[37-54]" in topology


def test_the_prolog_gives_imex_its_peers_and_the_epilog_ends_them() -> None:
    spec, _ = load_stack_spec("azure-gb200", [])
    files = render_bundle(spec, "azure-gb200")
    prolog, epilog = files["scripts/prolog.sh"], files["scripts/epilog.sh"]
    assert "/etc/nvidia-imex/nodes_config.cfg" in prolog and "NodeAddr=" in prolog
    assert "systemctl stop nvidia-imex.service" in epilog
    h100 = render_bundle(load_stack_spec("azure-h100", [])[0], "azure-h100")
    assert "imex" not in h100["scripts/prolog.sh"] + h100["scripts/epilog.sh"]


def _aggregates(topology: str) -> list[list[str]]:
    """Slurm topology/block's aggregated blocks as block_record.c builds them: at each level k
    that BlockSizes enables (without it, levels 0-4), the 2^k consecutive base blocks in file
    order starting at a multiple of 2^k; each aggregate as the node hostlists it joins."""
    blocks = [
        line.split("Nodes=")[1] for line in topology.splitlines() if line.startswith("BlockName=")
    ]
    sizes = [line for line in topology.splitlines() if line.startswith("BlockSizes=")]
    if sizes:
        counts = [int(n) for n in sizes[0].removeprefix("BlockSizes=").split(",")]
        levels = [c // counts[0] for c in counts]
    else:
        levels = [1, 2, 4, 8, 16]
    return [blocks[i : i + size] for size in levels for i in range(0, len(blocks), size)]


@pytest.mark.parametrize(
    ("nodes", "per_set", "sizes", "max_nodes"),
    [(144, 72, "18,36,72", 72), (108, 54, "18", 18), (180, 90, "18", 18), (72, 36, "18,36", 36)],
)
def test_block_aggregation_stays_inside_one_scale_set(nodes, per_set, sizes, max_nodes) -> None:
    spec, _ = load_stack_spec(
        "azure-gb200",
        [f"partitions[0].nodes={nodes}", f"partitions[0].maxNodesPerScaleSet={per_set}"],
    )
    files = render_bundle(spec, "azure-gb200")
    topology = files["slurm/topology.conf"]
    assert f"BlockSizes={sizes}" in topology.splitlines()
    for aggregate in _aggregates(topology):
        sets = {hostlist.split("[")[0] for hostlist in aggregate}
        assert len(sets) == 1, f"an aggregated block spans scale sets: {aggregate}"
    part = next(x for x in files["slurm/slurm.conf"].splitlines() if x.startswith("PartitionName"))
    assert f" MaxNodes={max_nodes} " in part


@pytest.mark.parametrize(
    ("nodes", "per_set", "warns", "largest"),
    [(180, 90, True, 18), (108, 72, True, 36), (144, 72, False, 72), (36, 36, False, 36)],
)
def test_plan_warns_when_scale_sets_are_not_a_power_of_two_racks(
    nodes, per_set, warns, largest
) -> None:
    """5 racks per set (or a set of 4 beside one of 2): BlockSizes loses the levels above what
    every set divides by, and the largest job shrinks to them; plan says so, naming the field and
    a size that keeps every level."""
    plan = make_plan(
        "azure-gb200",
        [f"partitions[0].nodes={nodes}", f"partitions[0].maxNodesPerScaleSet={per_set}"],
    )
    found = [f for f in plan.findings if "BlockSizes" in f.message]
    assert bool(found) is warns
    if warns:
        (f,) = found
        assert f.level == "warning" and f.field.endswith("partitions[0].maxNodesPerScaleSet")
        assert f"the largest job is {largest} nodes, not {per_set}" in f.message
        best = int(f.message.split("maxNodesPerScaleSet to ")[1].split()[0])
        fixed = make_plan(
            "azure-gb200",
            [f"partitions[0].nodes={2 * best}", f"partitions[0].maxNodesPerScaleSet={best}"],
        )
        assert not [x for x in fixed.findings if "BlockSizes" in x.message]
