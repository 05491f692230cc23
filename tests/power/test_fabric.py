"""A GB200 node's NVLink domain from `nvidia-smi -q`, and topology.conf's blocks checked against
the nodes' reports (gpucl_power.fabric).

The samples keep `nvidia-smi -q`'s layout: a `GPU <bus id>` line, fields indented 4 with the key
padded to a colon at column 38, the Fabric section's fields indented 8 and its Health sub-section
12, as in a captured 8 x H100 SXM `nvidia-smi -q`/`-a` (thamada/nvidia-smi
`nvsim/H100SXMx8_smi.py`: State, Status, CliqueId, ClusterUUID all N/A on HGX). The GB200
values (fabric Completed/Success, CliqueId 32766, a ClusterUUID per rack) are those
Azure/cyclecloud-slurm's README shows `azslurm topology -n` reading from GB200 nodes
(`azure-slurm/slurmcc/topology.py` greps ClusterUUID and CliqueId from `nvidia-smi -q`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from clusterctl.power import fabric
from clusterctl.render.bundle import render_bundle
from clusterctl.spec.load import load_stack_spec

RACK_A = "b78ed242-7b98-426f-b194-b76b8899f4ec"
RACK_B = "cc79d754-915f-408b-b1c3-b8c3aa6668ab"
STANDIN = Path("clusterctl/sandbox/vm/files/rootfs/usr/bin/nvidia-smi")


def _gpu(bus: str, state: str, status: str, clique: str, uuid: str) -> str:
    return f"""GPU {bus}
    Product Name                          : NVIDIA GB200
    Product Architecture                  : Blackwell
    Persistence Mode                      : Enabled
    Fabric
        State                             : {state}
        Status                            : {status}
        CliqueId                          : {clique}
        ClusterUUID                       : {uuid}
        Health
            Bandwidth                     : Full
            Route Recovery in progress    : False
            Route Unhealthy               : False
            Access Timeout Recovery       : False
    Processes                             : None

"""


def _smi(*gpus: str) -> str:
    head = "\n==============NVSMI LOG==============\n\n"
    head += "Timestamp                                 : Sat Nov 28 16:00:00 2026\n"
    head += "Driver Version                            : 570.148.08\n"
    head += f"Attached GPUs                             : {len(gpus)}\n"
    return head + "".join(gpus)


def _node(uuid: str = RACK_A, clique: str = "32766", state: str = "Completed") -> str:
    status = "Success" if state == "Completed" else "N/A"
    buses = ("00000008:01:00.0", "00000009:01:00.0", "00000018:01:00.0", "00000019:01:00.0")
    return _smi(*(_gpu(b, state, status, clique, uuid) for b in buses))


def test_every_gpus_fabric_section_is_read() -> None:
    gpus = fabric.parse(_node())
    assert [g.gpu for g in gpus] == [
        "00000008:01:00.0",
        "00000009:01:00.0",
        "00000018:01:00.0",
        "00000019:01:00.0",
    ]
    assert {(g.state, g.status, g.clique_id, g.cluster_uuid) for g in gpus} == {
        ("Completed", "Success", "32766", RACK_A)
    }


def test_a_node_reports_the_domain_all_its_gpus_share() -> None:
    assert fabric.node_domain(_node()) == f"{RACK_A} 32766"


def test_a_fabric_not_yet_up_is_no_domain() -> None:
    with pytest.raises(fabric.FabricError, match="fabric State In Progress, Status N/A"):
        fabric.node_domain(_node(state="In Progress"))


def test_an_hgx_node_has_no_domain_to_report() -> None:
    with pytest.raises(fabric.FabricError, match="State N/A"):
        fabric.node_domain(_node(uuid="N/A", clique="N/A", state="N/A"))


def test_gpus_in_two_domains_are_refused() -> None:
    text = _smi(
        _gpu("00000008:01:00.0", "Completed", "Success", "32766", RACK_A),
        _gpu("00000009:01:00.0", "Completed", "Success", "32766", RACK_B),
    )
    with pytest.raises(fabric.FabricError, match="2 NVLink domains"):
        fabric.node_domain(text)


def test_no_gpu_is_no_domain() -> None:
    with pytest.raises(fabric.FabricError, match="no GPU"):
        fabric.node_domain("No devices were found\n")


def test_the_report_lands_where_the_scheduler_reads_it(tmp_path: Path) -> None:
    fabric.report("gb200", "gpu-pg0-7", _node(), root=tmp_path)
    assert (tmp_path / "gb200/fabric/gpu-pg0-7").read_text() == f"{RACK_A} 32766\n"
    assert fabric.read_reports("gb200", tmp_path) == {"gpu-pg0-7": f"{RACK_A} 32766"}


def _rendered_topology(nodes: int) -> str:
    spec, _ = load_stack_spec("azure-gb200", [f"partitions[0].nodes={nodes}"])
    return render_bundle(spec, "azure-gb200")["slurm/topology.conf"]


def _expand(hostlist: str) -> list[str]:
    """Slurm's `scontrol show hostnames` for the one form topology.conf uses: prefix-[a-b]."""
    prefix, _, span = hostlist.rstrip("]").partition("[")
    first, _, last = span.partition("-")
    return [f"{prefix}{n}" for n in range(int(first), int(last) + 1)]


def _reports(tmp_path: Path, racks: dict[str, str]) -> None:
    d = tmp_path / "gb200" / "fabric"
    d.mkdir(parents=True, exist_ok=True)
    for node, rack in racks.items():
        (d / node).write_text(f"{rack} 32766\n")


def test_reports_that_match_the_rendered_blocks_verify_them(tmp_path: Path, capsys) -> None:
    conf = tmp_path / "topology.conf"
    conf.write_text(_rendered_topology(36))
    racks = {f"gpu-pg0-{n}": RACK_A if n <= 18 else RACK_B for n in range(1, 37)}
    _reports(tmp_path, racks)
    assert fabric.topology("gb200", conf, root=tmp_path, expander=_expand) == 0
    assert "every block" in capsys.readouterr().out
    derived = (tmp_path / "gb200/topology.reported.conf").read_text()
    assert "BlockName=gpu-pg0-nvl0 Nodes=" + ",".join(f"gpu-pg0-{n}" for n in range(1, 19)) in (
        derived
    )
    # BlockSizes as rendered: aggregated blocks stay inside one scale set
    (sizes,) = [ln for ln in conf.read_text().splitlines() if ln.startswith("BlockSizes=")]
    assert sizes in derived.splitlines()


def test_a_rack_that_is_not_consecutive_names_is_said_loudly(tmp_path: Path, capsys) -> None:
    """Azure/cyclecloud-slurm's README shows racks like ccw-1-3-gpu-21,...-407,...-333: the
    naming the rendered file assumes can be wrong, and the nodes' reports say where."""
    conf = tmp_path / "topology.conf"
    conf.write_text(_rendered_topology(36))
    racks = {f"gpu-pg0-{n}": RACK_A if n <= 18 else RACK_B for n in range(1, 37)}
    racks["gpu-pg0-5"], racks["gpu-pg0-30"] = RACK_B, RACK_A  # two VMs in each other's rack
    _reports(tmp_path, racks)
    assert fabric.topology("gb200", conf, root=tmp_path, expander=_expand) == 1
    err = capsys.readouterr().err
    assert "WARNING: block gpu-pg0-nvl0 is 2 NVLink domains" in err
    assert f"gpu-pg0-5 in {RACK_B} 32766" in err
    assert "WARNING: block gpu-pg0-nvl1 is 2 NVLink domains" in err
    derived = (tmp_path / "gb200/topology.reported.conf").read_text().splitlines()
    blocks = {ln.split()[0]: ln.split("Nodes=")[1].split(",") for ln in derived if "Nodes=" in ln}
    assert set(blocks["BlockName=gpu-pg0-nvl0"]) == {
        f"gpu-pg0-{n}" for n in [*range(1, 5), *range(6, 19), 30]
    }
    assert "gpu-pg0-5" in blocks["BlockName=gpu-pg0-nvl1"]


def test_nodes_yet_to_report_leave_the_check_inconclusive(tmp_path: Path, capsys) -> None:
    conf = tmp_path / "topology.conf"
    conf.write_text(_rendered_topology(18))
    _reports(tmp_path, {f"gpu-pg0-{n}": RACK_A for n in range(1, 17)})
    assert fabric.topology("gb200", conf, root=tmp_path, expander=_expand) == 3
    assert "2 node(s) have not reported" in capsys.readouterr().err


def test_the_sandbox_standin_answers_q_with_a_gb200_fabric(tmp_path: Path) -> None:
    """The stand-in's `-q`, read by the product's parser: a domain with the fabric file, none
    (N/A, as an HGX node) without it."""
    dev = tmp_path / "dev"
    dev.mkdir()
    for g in range(4):
        (dev / f"nvidia{g}").touch()
    smi = tmp_path / "nvidia-smi"
    smi.write_text(STANDIN.read_text().replace("/dev/nvidia", f"{dev}/nvidia"))
    smi.chmod(0o755)
    (tmp_path / "fabric").write_text(f"{RACK_B} 32766\n")
    env = {**os.environ, "GPUCL_SANDBOX_FABRIC": str(tmp_path / "fabric")}
    out = subprocess.run([str(smi), "-q"], capture_output=True, text=True, env=env, check=True)
    assert len(fabric.parse(out.stdout)) == 4
    assert fabric.node_domain(out.stdout) == f"{RACK_B} 32766"
    env["GPUCL_SANDBOX_FABRIC"] = str(tmp_path / "none")
    out = subprocess.run([str(smi), "-q"], capture_output=True, text=True, env=env, check=True)
    with pytest.raises(fabric.FabricError, match="State N/A"):
        fabric.node_domain(out.stdout)


def test_gb200_nodes_report_at_every_boot_and_the_scheduler_checks() -> None:
    """The units that carry the reports: on every GB200 node and the scheduler, on no HGX
    cluster."""
    spec, _ = load_stack_spec("azure-gb200", [])
    files = render_bundle(spec, "azure-gb200")
    gpu, sched = files["cloud-init/gpu.yaml"], files["cloud-init/scheduler.yaml"]
    assert "gpucl_power.fabric report gb200" in gpu
    assert "[systemctl, enable, --now, --no-block, gpucl-fabric.service]" in gpu
    assert "gpucl_power.fabric topology gb200 /etc/slurm/topology.conf" in sched
    assert "PathChanged=/sched/gb200/fabric" in sched
    spec, _ = load_stack_spec("azure-h100", [])
    files = render_bundle(spec, "azure-h100")
    assert "gpucl-fabric" not in files["cloud-init/gpu.yaml"]
    assert "gpucl-fabric" not in files["cloud-init/scheduler.yaml"]
