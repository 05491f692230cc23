"""What the cloud's slurm-smd cluster needs beyond a booting slurm.conf, on the team stack booted
from its own user-data (a login node, 2 GPU nodes): SSH to a GPU node only with a job there and
into its cgroup (pam_slurm_adopt, PrologFlags=Contain; admins exempt), Slurm's commands from a
systemd unit on the login node (sackd's /run/slurm/conf, no environment variable), the NCCL files
container jobs need in enroot's mount table, logrotate on a GPU node, Slurm's names resolving in a
job and on the login node, and a GPU node that boots while slurmctld is away. Root only. (`srun
--mpi=pmix` where srun runs is in test_vm_user_path's Slurm 24.11 run: Debian's 26.05 build ships
no pmix plugin.)

Stand-ins this relies on (the sandbox's archive): slurm-smd-sackd, slurm-smd-libpam-slurm-adopt and
pmix, repackaging Debian's sackd, libpam-slurm-adopt and libpmix2t64."""

from __future__ import annotations

import re
import time

import pytest

from clusterctl.sandbox.vm import boot
from tests.e2e.vm import test_vm_team as team
from tests.e2e.vm.test_vm_team import gpu_nodes, login_node, on_node, sh, ssh_as, wait_for

# the team stack booted as test_vm_team boots it, with its users' keys and the team synced
project = team.project
cluster = team.cluster

pytestmark = pytest.mark.sandbox

USER = "bob"  # account language: no GPU cap, so a 2-node allocation runs; not an admin


def test_ssh_to_a_gpu_node_needs_a_job_there_and_lands_in_its_cgroup(cluster, project):
    node = gpu_nodes(cluster)[0]
    # each node's timer makes the team's users (within a minute of the sync): this node's, and
    # the login node's, where the job is submitted (seen failing when only the first was awaited)
    for where in (node, login_node(cluster)):
        wait_for(f"{USER} on {where}", lambda where=where: on_node(
            cluster, where, f"getent passwd {USER} ann").stdout.count("\n") == 2, 120)  # fmt: skip
    since = on_node(cluster, node, "date '+%Y-%m-%d %H:%M:%S'").stdout.strip()
    refused = ssh_as(cluster, project, USER, "true", node=node)
    assert refused.returncode != 0, refused.stdout
    # with a key, sshd runs PAM's account stack inside authentication: the client sees only
    # "Permission denied"; the refusal and its reason are in the node's journal (journald may
    # write it a moment later on a loaded host: seen empty right after the refusal)
    journal = f"journalctl --no-pager -q --since '{since}'"
    refusal = r"pam_slurm_adopt.*\b(no active jobs|Access denied)"
    wait_for("pam_slurm_adopt's refusal in the journal", lambda: re.search(
        refusal, on_node(cluster, node, journal).stdout), 30,
        detail=lambda: on_node(cluster, node, journal).stdout[-3000:])  # fmt: skip
    # the team's admin (group gpucl-admins) and root log in without a job
    assert ssh_as(cluster, project, "ann", "true", node=node).returncode == 0
    slurm_name = on_node(cluster, node, "hostname").stdout.strip()  # the node's Slurm name
    submit = f"cd ~ && sbatch --parsable -w {slurm_name} --time=5 -o /dev/null --wrap 'sleep 300'"
    job = ssh_as(cluster, project, USER, submit)
    job_id = job.stdout.strip().split(";")[0]
    assert job_id, job.stderr
    try:
        wait_for(f"job {job_id} running", lambda: sh(
            cluster, f"squeue -h -j {job_id} -o %T").stdout.strip() == "RUNNING", 120)  # fmt: skip
        inside = ssh_as(cluster, project, USER, "cat /proc/self/cgroup", node=node)
        assert inside.returncode == 0, inside.stderr
        assert re.search(rf"job_{job_id}/step_extern", inside.stdout), inside.stdout
    finally:
        sh(cluster, f"scancel {job_id}")


def test_slurm_names_resolve_inside_a_job_and_on_the_login_node(cluster, project):
    """MASTER_ADDR as torchrun scripts take it: the first of `scontrol show hostnames`, resolved
    on every node of the job to the address slurmctld holds (Azure DNS would not know it)."""
    addr = {n: a for n, a in (line.split() for line in sh(
        cluster, "sinfo -h -N -o '%N %o'").stdout.splitlines())}  # fmt: skip
    login = login_node(cluster)
    wait_for(f"{USER} on {login}", lambda: on_node(
        cluster, login, f"getent passwd {USER}").returncode == 0, 120)  # fmt: skip
    job = ("cd ~ && salloc -N2 --time=2 srun -N2 bash -c "
           "'master=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1); "
           "echo $(hostname) $(getent hosts \"$master\" | cut -d\" \" -f1) $master'")  # fmt: skip
    run = ssh_as(cluster, project, USER, job, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    seen = sorted(line.split() for line in run.stdout.splitlines() if line.strip())
    assert len(seen) == 2 and len({m for _, _, m in seen}) == 1, run.stdout
    assert all(ip == addr[master] for _, ip, master in seen), (seen, addr)
    wait_for("the login node resolving every GPU node", lambda: all(
        on_node(cluster, login, f"getent hosts {n}").stdout.split()[:1] == [a]
        for n, a in addr.items()), 90)  # fmt: skip


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
    # sackd stopped (a restart, a crash): its unit's RuntimeDirectory stays, and with it the
    # configuration every command reads (it was removed with /run/slurm before)
    assert on_node(cluster, login, "systemctl stop sackd").returncode == 0
    try:
        assert on_node(cluster, login, "test -e /run/slurm/conf/slurm.conf").returncode == 0
        sinfo = on_node(cluster, login, "runuser -u azureuser -- sinfo -h -o %P")
        assert sinfo.returncode == 0 and sinfo.stdout.strip(), sinfo.stdout + sinfo.stderr
    finally:
        assert on_node(cluster, login, "systemctl start sackd").returncode == 0


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


def test_logrotate_rotates_the_gpu_nodes_slurm_logs(cluster):
    node = gpu_nodes(cluster)[0]
    run = on_node(cluster, node, "logrotate -f /etc/logrotate.d/gpu-clusters-slurm")
    assert run.returncode == 0, run.stdout + run.stderr
    logs = on_node(cluster, node, "ls /var/log/slurm").stdout.split()
    assert any(re.fullmatch(r"slurmd-.*\.log\.1(\.gz)?", x) for x in logs), logs
    # a fresh log in its place, root's as slurmd (root) writes it; logrotate told slurmd (SIGUSR2)
    owner = on_node(cluster, node, "stat -c %U /var/log/slurm/slurmd-*.log").stdout.split()
    assert owner == ["root"], owner


PEER_SSH = """#!/bin/bash
# the batch script runs on one node of the allocation; ssh to the other, as launchers do
for node in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
  [ "$node" = "$SLURMD_NODENAME" ] || peer=$node
done
echo "from $SLURMD_NODENAME"
ssh -o BatchMode=yes "$peer" hostname
"""


def test_a_user_in_a_two_node_job_sshes_from_one_node_to_the_other(cluster, project):
    """mpirun, pdsh and deepspeed launchers: `ssh -o BatchMode=yes <peer> hostname` from the
    job's first node. The user's key is the cluster's own in their shared home (gpucl-users.sh),
    the peer's host key the one it published (gpucl-known-hosts.sh, KnownHostsCommand): nothing
    of the peer's in the user's known_hosts, and a stale line there does no harm."""
    nodes = gpu_nodes(cluster)
    names = [on_node(cluster, n, "hostname").stdout.strip() for n in nodes]  # Slurm names
    for node in [*nodes, login_node(cluster)]:
        wait_for(f"{USER} on {node}", lambda node=node: on_node(
            cluster, node, f"getent passwd {USER}").returncode == 0, 120)  # fmt: skip
    # the key pair: made once, as the user, on the shared home
    wait_for(f"{USER}'s cluster key", lambda: on_node(
        cluster, nodes[0], f"test -s /home/{USER}/.ssh/id_ed25519").returncode == 0,
        120)  # fmt: skip
    ssh_dir = f"/home/{USER}/.ssh"
    stat = f"stat -c '%U %a' {ssh_dir}/id_ed25519 {ssh_dir}/authorized_keys {ssh_dir}"
    owner = on_node(cluster, nodes[0], stat).stdout.split()
    assert owner == [USER, "600", USER, "600", USER, "700"], owner
    pub = on_node(cluster, nodes[0], f"cut -d' ' -f1,2 /home/{USER}/.ssh/id_ed25519.pub").stdout
    auth = on_node(cluster, nodes[0], f"cat /home/{USER}/.ssh/authorized_keys").stdout
    assert auth.count(pub.strip()) == 1, auth
    # every GPU node published its host key under its Slurm name (boot, timer)
    for node, name in zip(nodes, names, strict=True):
        wait_for(f"{name}'s host key published", lambda name=name: sh(
            cluster, f"cat /sched/*/host-keys/{name}").stdout.startswith(f"{name},"),
            60)  # fmt: skip
        mine = on_node(cluster, node, "cut -d' ' -f2 /etc/ssh/ssh_host_ed25519_key.pub").stdout
        assert mine.strip() in sh(cluster, f"cat /sched/*/host-keys/{name}").stdout, name
    # a stale line for the peer in the user's own known_hosts (a VM that was re-created since)
    stale = ("rm -f /tmp/stale-$$ && ssh-keygen -q -t ed25519 -N '' -f /tmp/stale-$$ && "
             f"echo \"{names[1]} $(cut -d' ' -f1,2 /tmp/stale-$$.pub)\" >> ~/.ssh/known_hosts && "
             "rm -f /tmp/stale-$$ /tmp/stale-$$.pub")  # fmt: skip
    assert ssh_as(cluster, project, USER, stale).returncode == 0
    known_before = ssh_as(cluster, project, USER, "cat ~/.ssh/known_hosts").stdout
    assert ssh_as(cluster, project, USER, "cat > ~/ssh-peer.sh", input=PEER_SSH).returncode == 0
    submit = (f"cd ~ && sbatch --parsable --wait -N2 -w {','.join(names)} --time=5 "
              "-o ~/ssh-peer-%j.out ~/ssh-peer.sh")  # fmt: skip
    run = ssh_as(cluster, project, USER, submit, timeout=300)
    job_id = run.stdout.strip().split(";")[0]
    out = ssh_as(cluster, project, USER, f"cat ~/ssh-peer-{job_id}.out").stdout
    assert run.returncode == 0, run.stdout + run.stderr + out
    lines = out.split()
    assert len(lines) == 3 and lines[0] == "from", out
    assert {lines[1], lines[2]} == set(names), out  # the peer's hostname, not an ssh error
    # nothing learned on the way (BatchMode, StrictHostKeyChecking left at its default)
    assert ssh_as(cluster, project, USER, "cat ~/.ssh/known_hosts").stdout == known_before


def test_a_gpu_node_booted_while_slurmctld_is_away_waits_and_joins_when_it_returns(cluster):
    """Configless slurmd loops until slurmctld hands it the configuration, before it tells systemd
    READY: past systemd's default 90 s start timeout it must still be waiting (never timed out,
    never restarted toward a start limit), and register within a minute of slurmctld's return.
    The scheduler's NFS server is away too (a scheduler re-created): the boot's nofail mounts of
    /home and /sched fail, slurmd's start mounts them once they are exported again and runs
    nothing before. The login node, rebooted then too, mounts them once they are back, and its
    users' timer fires again. Last in the module: it stops slurmctld and nfs-server for two and
    a half minutes."""
    workdir, sched = cluster
    node = gpu_nodes(cluster)[-1]
    login = login_node(cluster)
    name = on_node(cluster, node, "hostname").stdout.strip()
    spool = on_node(cluster, node, "scontrol show config | sed -n 's/^SlurmdSpoolDir *= *//p'")
    assert spool.stdout.strip().startswith("/"), spool
    # stopped as an admin stops it: the scheduler's units that need it skip their runs, and
    # none starts it again (they once Required= it, and the test had to mask it)
    assert on_node(cluster, sched, "systemctl stop slurmctld nfs-server").returncode == 0
    try:
        # a VM new to the cluster (a resize, a replacement) has no configuration cached: a
        # rebooted one would start slurmd from slurmd's conf-cache without the controller
        on_node(cluster, node, f"rm -rf {spool.stdout.strip()}/conf-cache")
        boot.reboot(workdir, node, timeout=5, log=lambda _m: None)  # its boot waits on slurmd
        # the login node too: its nofail mounts fail at this boot, and its users' timer fires
        # (a minute after boot) into a /sched that is not there
        boot.reboot(workdir, login, timeout=5, log=lambda _m: None)  # its boot waits on sackd
        deadline = time.monotonic() + 120  # well past the 90 s a start may take by default
        ticks = "systemctl start gpucl-names.service gpucl-power-return.service"
        while time.monotonic() < deadline:
            show = on_node(cluster, node, "systemctl show slurmd -p ActiveState -p NRestarts")
            # inactive while its start job waits for the boot's try of the mounts (ordered after
            # them), then activating: never failed, never restarted
            state, restarts = sorted(show.stdout.split())
            assert state in ("ActiveState=inactive", "ActiveState=activating"), show
            assert restarts == "NRestarts=0", show
            on_node(cluster, sched, ticks)  # what their timers do; skipped, not failed
            failed = on_node(cluster, sched, "systemctl --failed --no-legend --plain").stdout
            assert not re.search(r"gpucl-(names|power-return)\.service", failed), failed
            ctld = on_node(cluster, sched, "systemctl is-active slurmctld").stdout.strip()
            assert ctld == "inactive", ctld
            time.sleep(5)
        # past the boot's own try of the nofail mounts (systemd cuts a mount at 90 s): slurmd is
        # still mounting them (ExecStartPre), not failed on them and not running without them
        show = on_node(cluster, node, "systemctl show slurmd -p ActiveState -p SubState")
        assert sorted(show.stdout.split()) == ["ActiveState=activating", "SubState=start-pre"], show
        bare = on_node(cluster, node, "mountpoint -q /home || mountpoint -q /sched")
        assert bare.returncode != 0, "a shared file system mounted while its server was away"
        # the login node's wait runs without holding its boot: an empty /home for now
        waiting = on_node(cluster, login, "systemctl is-active gpucl-mounts.service; "
                          "mountpoint -q /home || echo bare")  # fmt: skip
        assert waiting.stdout.split() == ["active", "bare"], waiting
        users_ran = "systemctl show gpucl-users.service -p ExecMainStartTimestampMonotonic --value"
        before = int(on_node(cluster, login, users_ran).stdout.strip() or 0)
    finally:
        assert on_node(cluster, sched, "systemctl start nfs-server slurmctld").returncode == 0
    wait_for(f"/home and /sched on {login}", lambda: on_node(
        cluster, login, "mountpoint -q /home && mountpoint -q /sched").returncode == 0,
        60)  # fmt: skip
    # and the team's users timer still fires once they are back, succeeding
    wait_for(f"gpucl-users.service run again on {login}", lambda: int(on_node(
        cluster, login, users_ran).stdout.strip() or 0) > before and on_node(
        cluster, login, "systemctl show gpucl-users.service -p Result --value").stdout.strip()
        == "success", 150)  # fmt: skip
    wait_for(f"slurmd on {name} ready", lambda: on_node(
        cluster, node, "systemctl is-active slurmd").stdout.strip() == "active", 60)  # fmt: skip
    mounted = on_node(cluster, node, "mountpoint -q /home && mountpoint -q /sched")
    assert mounted.returncode == 0, "slurmd runs without /home or /sched"
    # responding again (a trailing * is a node slurmctld cannot reach)
    wait_for(f"{name} responding", lambda: sh(
        cluster, f"sinfo -h -n {name} -o %t").stdout.strip() in ("idle", "mix", "alloc"),
        30)  # fmt: skip
