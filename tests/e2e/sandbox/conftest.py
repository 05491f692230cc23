"""Shared helpers for the sandbox e2e tests (they boot real Slurm daemons; root only)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from clusterctl.render.site import SlurmSite
from clusterctl.sandbox import netns
from clusterctl.sandbox.daemons import start_time


def live_processes_mentioning(text: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline and start_time(int(proc.name)) is not None:
            found.append(f"{proc.name} {cmdline}")
    return found


def assert_no_trace(workdir: Path) -> None:
    """Nothing of the sandbox in `workdir` is left: process, netns, link, mount, cgroup, file."""
    workdir = workdir.resolve()
    sid = netns.sandbox_id(str(workdir))
    assert live_processes_mentioning(str(workdir)) == []
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"cc-{sid}-" not in namespaces
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout
    assert f"cc{sid}v" not in links and f"ccbr{sid}" not in links
    assert str(workdir) not in Path("/proc/self/mountinfo").read_text()
    assert list(Path("/sys/fs/cgroup").glob(f"*/clusterctl-{sid}")) == []
    assert list(workdir.iterdir()) == []


def make_workdir() -> Path:
    """A fresh workdir munge and slurm can reach (pytest's tmp dirs are 0700)."""
    path = Path(tempfile.mkdtemp(prefix="clusterctl-sbx-"))
    path.chmod(0o755)
    return path


@pytest.fixture(scope="session")
def new_workdir():
    return make_workdir


@pytest.fixture
def workdir():
    path = make_workdir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def no_trace():
    return assert_no_trace


@pytest.fixture(scope="session")
def render():
    """Render the Slurm files for a sandbox site (a fixture until the real renderer is wired)."""
    return slurm_files


def slurm_files(site: SlurmSite, nodes: list[str]) -> dict[str, str]:
    node_lines = "\n".join(
        f"NodeName={n} NodeAddr={site.node_addrs[n]} CPUs=4 RealMemory=1000 Gres=gpu:h100:8"
        " State=UNKNOWN"
        for n in nodes
    )
    slurm_conf = f"""\
ClusterName=sandbox
SlurmctldHost={site.controller_host}({site.controller_addr})
SlurmUser={site.slurm_user}
AuthType=auth/munge
AuthInfo=socket={site.munge_socket}
CredType=cred/munge
SlurmctldPort={site.slurmctld_port}
SlurmdPort={site.slurmd_port}
StateSaveLocation={site.state_dir}
SlurmdSpoolDir={site.spool_dir}
SlurmctldPidFile={site.run_dir}/slurmctld.pid
SlurmdPidFile={site.run_dir}/slurmd.pid
SlurmctldLogFile={site.log_dir}/slurmctld.log
SlurmdLogFile={site.log_dir}/slurmd.log
SlurmdParameters=config_overrides
ProctrackType={site.proctrack}
TaskPlugin={site.task_plugins}
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
ReturnToService=2
MailProg=/bin/true
HealthCheckProgram={site.health_check_program}
HealthCheckInterval={site.health_check_interval_s}
HealthCheckNodeState=ANY
SlurmdTimeout=15
MessageTimeout=5
SchedulerType=sched/backfill
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
{node_lines}
PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""
    gres_conf = f"Name=gpu Type=h100 File={site.gpu_device_glob}\n"
    cgroup_conf = (
        f"CgroupPlugin={site.cgroup_plugin}\n"
        "ConstrainCores=yes\nConstrainRAMSpace=yes\nConstrainDevices=yes\n"
    )
    return {"slurm.conf": slurm_conf, "gres.conf": gres_conf, "cgroup.conf": cgroup_conf}
