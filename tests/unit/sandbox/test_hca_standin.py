"""The GPU nodes' stand-in InfiniBand HCAs (substitution infiniband-hcas): as many as the size has,
made once per node, and the faults that take one away (drop-hca) or turn GPUDirect RDMA off
(no-gdr), undone by clear; the probe reads what is left, as NCCL reads sysfs."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterctl.probe import netinfo
from clusterctl.sandbox.vm import boot, faults, machine, substitutions, vmstate


def _node(tmp_path: Path, size: str = "Standard_ND96isr_H100_v5"):
    state = vmstate.VmState(workdir=str(tmp_path), sid="t")
    state.nodes["gpu-pg0-000001"] = {"role": "gpu", "address": "10.40.128.5", "index": 1}
    state.save()
    spec = machine.MachineSpec("gpu-pg0-000001", "gpu", "", "10.40.128.5", "ns",
                               **boot.standin_hcas(size))  # fmt: skip
    binds = machine.make_hcas(state, spec)
    return state, binds


def test_an_nd_node_has_its_eight_hcas_active_and_peermem_and_a_cpu_size_none(tmp_path) -> None:
    state, binds = _node(tmp_path)
    assert [dst for _src, dst in binds] == [machine.HCA_ROOT]  # the parent: faults rename inside
    ib = binds[0][0] / "infiniband"
    assert f"{machine.HCA_ROOT}/infiniband" == machine.HCA_DIR
    assert f"{machine.HCA_ROOT}/module/nvidia_peermem" == machine.PEERMEM_DIR
    assert (binds[0][0] / "module" / "nvidia_peermem").is_dir()
    assert netinfo.active_hcas(ib) == [f"mlx5_ib{i}" for i in range(8)]
    assert (ib / "mlx5_ib0/ports/1/rate").read_text() == "400 Gb/sec (4X NDR)\n"
    assert boot.standin_hcas("Standard_ND96amsr_A100_v4")["hca_rate"] == "200 Gb/sec (4X HDR)"
    assert boot.standin_hcas("Standard_D4s_v5") == {} and boot.standin_hcas("") == {}
    # made once: a reboot (the same spec started again) keeps what a fault took away
    (ib / "mlx5_ib3").rename(tmp_path / "gone")
    spec = machine.MachineSpec("gpu-pg0-000001", "gpu", "", "a", "ns", hcas=("mlx5_ib0",))
    machine.make_hcas(state, spec)
    assert "mlx5_ib3" not in netinfo.active_hcas(ib)


@pytest.mark.parametrize("device", [None, "mlx5_ib5", "mlx5_ib0"])
def test_drop_hca_takes_one_away_and_clear_brings_it_back(tmp_path, device) -> None:
    _, binds = _node(tmp_path)
    ib = binds[0][0] / "infiniband"
    done = faults._inject(tmp_path, "gpu-pg0-000001", "drop-hca", "20mbit", device)
    gone = device or "mlx5_ib7"  # the last, in NCCL's order (mlx5_ib10 would sort after 9)
    assert done == f"gpu-pg0-000001: InfiniBand HCA {gone} gone"
    assert gone not in netinfo.active_hcas(ib) and len(netinfo.active_hcas(ib)) == 7
    assert vmstate.load(tmp_path).nodes["gpu-pg0-000001"]["faults"] == {"drop-hca": [gone]}
    faults._clear(tmp_path, "gpu-pg0-000001")
    assert netinfo.active_hcas(ib) == [f"mlx5_ib{i}" for i in range(8)]


def test_no_gdr_unloads_peermem_and_bad_requests_say_why(tmp_path) -> None:
    _, binds = _node(tmp_path)
    peermem = binds[0][0] / "module" / "nvidia_peermem"
    faults._inject(tmp_path, "gpu-pg0-000001", "no-gdr", "20mbit")
    assert not peermem.exists()
    faults._clear(tmp_path, "gpu-pg0-000001")
    assert peermem.is_dir()
    with pytest.raises(faults.FaultError, match="has no HCA 'mlx5_ib9' \\(it has mlx5_ib0, "):
        faults._inject(tmp_path, "gpu-pg0-000001", "drop-hca", "20mbit", "mlx5_ib9")


def test_the_substitution_list_names_the_stand_in_paths() -> None:
    entry = next(s for s in substitutions.SUBSTITUTIONS if s.name == "infiniband-hcas")
    assert machine.HCA_DIR in entry.sandbox and machine.PEERMEM_DIR in entry.sandbox
