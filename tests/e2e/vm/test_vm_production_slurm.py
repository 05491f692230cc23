"""What the cloud's slurm-smd cluster needs beyond a booting slurm.conf, on the team stack booted
from its own user-data: Slurm's commands from a systemd unit on the login node (sackd's
/run/slurm/conf, no environment variable) and the NCCL files container jobs need in enroot's mount
table. Root only. (pam_slurm_adopt's SSH refusal and GPU-node logrotate are not shown here yet:
the first was refused by sshd before PAM's message, the second needs logrotate in the image.)"""

from __future__ import annotations

import pytest

from tests.e2e.vm import test_vm_team as team
from tests.e2e.vm.test_vm_team import gpu_nodes, login_node, on_node

# the team stack booted as test_vm_team boots it, with its users' keys and the team synced
project = team.project
cluster = team.cluster

pytestmark = pytest.mark.sandbox

USER = "bob"  # account language: no GPU cap, so a 2-node allocation runs; not an admin


def test_sbatch_from_a_systemd_unit_on_the_login_node_reaches_slurmctld(cluster):
    login = login_node(cluster)
    assert on_node(cluster, login, "systemctl is-active sackd").stdout.strip() == "active"
    assert on_node(cluster, login, "test -e /run/slurm/conf/slurm.conf").returncode == 0
    assert on_node(cluster, login, "grep -c SLURM_CONF_SERVER /etc/environment").stdout.strip() in (
        "",
        "0",
    )
    # a transient unit: no login shell, no /etc/environment, as a timer or a service would run it
    sbatch = "sbatch --parsable --wait -N1 --time=1 --output=/dev/null --wrap true"
    run = on_node(cluster, login, f"systemd-run --wait --pipe --quiet -p User=azureuser {sbatch}")
    assert run.returncode == 0, run.stdout + run.stderr


def test_container_jobs_get_the_nodes_nccl_conf_through_enroots_mount_table(cluster):
    """The sandbox's enroot runs no container (substitution github-downloads) and its image has no
    /opt/microsoft: what it shows is the mount table where enroot reads it, beside the package's
    own, and the node's /etc/nccl.conf there to mount."""
    node = gpu_nodes(cluster)[0]
    table = on_node(cluster, node, "cat /etc/enroot/mounts.d/50-gpu-clusters.fstab").stdout
    assert "/etc/nccl.conf /etc/nccl.conf none" in table, table
    assert on_node(cluster, node, "ls /etc/enroot/mounts.d/").stdout.split().count(
        "50-gpu-clusters.fstab") == 1  # fmt: skip
    assert on_node(cluster, node, "grep -q NCCL_ /etc/nccl.conf").returncode == 0
