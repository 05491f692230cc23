"""Slurm's node names resolve on every node (gpucl-hosts.sh): Azure DNS knows only the VMs' computer
names, so the addresses slurmctld holds go into a marked block of /etc/hosts. The rendered script
runs here against a stand-in scontrol that answers as `scontrol show node -o` does."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from clusterctl.render.paths import hosts_map
from tests.conftest import node_script
from tests.unit.render.test_production_slurm import _files, _user_data

NODES = {  # NodeName -> NodeAddr (a powered-down cloud node's address is its name)
    "gpu-pg0-1": "10.40.128.5",
    "gpu-pg0-2": "10.40.128.6",
    "gpu-pg0-3": "gpu-pg0-3",
}
SCONTROL = """#!/bin/bash
# scontrol show node -o [NODES]: one line per node, as Slurm prints them
if [ -e "$STATE/down" ]; then
  echo "slurm_load_node error: Unable to contact slurm controller" >&2
  exit 1
fi
want=" $(echo "${4:-}" | tr ',' ' ') "
while read -r name addr; do
  if [ -z "${4:-}" ] || [[ $want == *" $name "* ]]; then
    echo "NodeName=$name Arch=x86_64 NodeAddr=$addr NodeHostName=$name Version=26.05.5"
  fi
done < "$STATE/nodes"
"""
HOSTS = "127.0.0.1\tlocalhost\n10.40.128.4\th100-scheduler\n"


@pytest.fixture
def node(tmp_path: Path):
    script = tmp_path / "gpucl-hosts.sh"
    script.write_text(node_script("azure-h100", "gpucl-hosts.sh"))
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "scontrol").write_text(SCONTROL)
    (bin_ / "scontrol").chmod(0o755)
    (tmp_path / "nodes").write_text("".join(f"{n} {a}\n" for n, a in NODES.items()))
    (tmp_path / "hosts").write_text(HOSTS)
    env = {
        "PATH": f"{bin_}:/usr/bin:/bin",
        "STATE": str(tmp_path),
        "GPUCL_HOSTS_MAP": str(tmp_path / "map"),
        "GPUCL_HOSTS_FILE": str(tmp_path / "hosts"),
        "GPUCL_RUN_DIR": str(tmp_path),
    }

    def run(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", str(script), *args], env={**env, **extra},
                              capture_output=True, text=True, timeout=30)  # fmt: skip

    return tmp_path, run


def _resolves(hosts: str) -> dict[str, str]:
    return {f[1]: f[0] for f in (x.split() for x in hosts.splitlines()) if len(f) == 2}


def test_the_scheduler_publishes_addressed_nodes_and_every_node_takes_them(node) -> None:
    tmp, run = node
    assert run("publish").returncode == 0
    assert (tmp / "map").read_text() == "10.40.128.5 gpu-pg0-1\n10.40.128.6 gpu-pg0-2\n"
    hosts = (tmp / "hosts").read_text()
    assert hosts.startswith(HOSTS)  # what was there stays, first
    names = _resolves(hosts)
    assert names["gpu-pg0-1"] == "10.40.128.5" and names["gpu-pg0-2"] == "10.40.128.6"
    assert "gpu-pg0-3" not in names  # powered down: no address to give
    # another node (no scontrol call): the published file into its own block; twice is once
    other = tmp / "other"
    other.write_text(HOSTS)
    for _ in range(2):
        assert run(GPUCL_HOSTS_FILE=str(other), PATH="/usr/bin:/bin").returncode == 0
    assert other.read_text() == hosts


def test_a_node_that_moves_or_goes_is_followed_and_an_unreachable_controller_changes_nothing(
    node,
) -> None:
    tmp, run = node
    run("publish")
    (tmp / "nodes").write_text(
        "gpu-pg0-1 10.40.128.9\ngpu-pg0-2 gpu-pg0-2\ngpu-pg0-3 10.40.128.7\n"
    )
    run("publish")
    names = _resolves((tmp / "hosts").read_text())
    assert {k: v for k, v in names.items() if k.startswith("gpu-")} == {
        "gpu-pg0-1": "10.40.128.9",
        "gpu-pg0-3": "10.40.128.7",
    }
    before = ((tmp / "map").read_text(), (tmp / "hosts").read_text())
    (tmp / "down").touch()
    assert run("publish").returncode == 0
    assert ((tmp / "map").read_text(), (tmp / "hosts").read_text()) == before


def test_a_jobs_prolog_adds_its_nodes_at_once_and_keeps_the_rest(node) -> None:
    tmp, run = node
    (tmp / "map").write_text("10.40.128.5 gpu-pg0-1\n")
    run()  # the timer: gpu-pg0-1 only
    (tmp / "nodes").write_text(
        "gpu-pg0-1 10.40.128.5\ngpu-pg0-2 10.40.128.6\ngpu-pg0-3 10.40.128.7\n"
    )
    assert run("job", SLURM_JOB_NODELIST="gpu-pg0-2,gpu-pg0-3").returncode == 0
    names = _resolves((tmp / "hosts").read_text())
    assert [names[f"gpu-pg0-{i}"] for i in (1, 2, 3)] == [f"10.40.128.{n}" for n in (5, 6, 7)]


@pytest.mark.parametrize("role", ["scheduler", "login", "gpu"])
def test_every_role_runs_it_by_timer_and_the_prolog_for_each_job(role: str) -> None:
    doc = _user_data("azure-team", role)
    files = _files(doc)
    assert "/usr/local/libexec/gpu-clusters/gpucl-hosts.sh" in files  # the script itself
    service = files["/etc/systemd/system/gpucl-hosts.service"]
    mode = " publish" if role == "scheduler" else ""
    assert f"ExecStart=/usr/local/libexec/gpu-clusters/gpucl-hosts.sh{mode}\n" in service
    assert "OnUnitActiveSec=30s" in files["/etc/systemd/system/gpucl-hosts.timer"]
    runcmd = [" ".join(map(str, c)) if isinstance(c, list) else c for c in doc["runcmd"]]
    assert any("enable --now" in c and "gpucl-hosts.timer" in c for c in runcmd), runcmd
    assert hosts_map("team") == "/sched/team/hosts"
    if role == "gpu":
        assert "gpucl-hosts.sh job" in node_script("azure-team", "prolog.sh")


def test_a_scheduler_with_no_addressed_node_yet_publishes_nothing_and_succeeds(node) -> None:
    """The scheduler's first boot: slurmctld holds no node address (or does not answer yet) and
    nothing was published; the timer's run is a success with nothing to do, not a failed unit
    (seen on azure-h200: `gpucl-hosts.service` failed, the scheduler `degraded`)."""
    tmp, run = node
    (tmp / "nodes").write_text("gpu-pg0-1 gpu-pg0-1\ngpu-pg0-2 gpu-pg0-2\n")  # all powered down
    for state in ("up", "down"):
        if state == "down":
            (tmp / "down").touch()
        done = run("publish")
        assert done.returncode == 0, (state, done.stderr)
        assert not (tmp / "map").exists() and (tmp / "hosts").read_text() == HOSTS
