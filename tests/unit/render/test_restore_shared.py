"""The restore path of /shared's backups (storage.backup): the rendered restore-shared.sh runs
under bash with stub `az` and `ssh` that log what they were asked. It lists the snapshots, makes
a disk from one and mounts it on the scheduler as a throwaway copy (the live disk, which Pulumi
owns, is never replaced), rolls /shared back with every writer stopped, and cleans up."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from clusterctl.render.storage import render_restore_script
from clusterctl.spec.load import load_stack_spec

SNAP = (
    "/subscriptions/s/resourceGroups/rg-h100-azure-h100-snapshots"
    "/providers/Microsoft.Compute/snapshots/x"
)


def _run(tmp_path: Path, *args: str, ssh: bool = True, stack: str = "azure-h100", **extra):
    spec, _ = load_stack_spec(stack, [f"{k}={v}" for k, v in extra.items()])
    script = tmp_path / "restore-shared.sh"
    script.write_text(render_restore_script(spec, stack))
    bins, log = tmp_path / "bin", tmp_path / "log"
    bins.mkdir(exist_ok=True)
    stubs = {
        "az": f'echo "az $*" >> {log}; [ "$1 $2" = "vm list" ] && echo h100-scheduler-vm1; exit 0',
        "ssh": f'shift; echo "ssh $*" >> {log}',
    }
    for name, body in stubs.items():
        (bins / name).write_text(f"#!/bin/bash\n{body}\n")
        (bins / name).chmod(0o755)
    env = {"PATH": f"{bins}:/usr/bin:/bin"} | ({"SSH": "ssh azureuser@10.0.0.4"} if ssh else {})
    run = subprocess.run(["bash", str(script), *args], capture_output=True, text=True, env=env)
    return run, log.read_text().splitlines() if log.exists() else []


def test_attach_makes_a_disk_from_the_snapshot_and_mounts_a_copy_on_the_scheduler(tmp_path) -> None:
    run, calls = _run(tmp_path, "attach", SNAP)
    assert run.returncode == 0, run.stderr
    create, vm_list, attach, mount = calls
    assert create.startswith("az disk create -g rg-h100-azure-h100 -n h100-shared-restored")
    assert f"--source {SNAP}" in create and "gpu-clusters:role=restore" in create
    assert vm_list.startswith("az vm list -g rg-h100-azure-h100")
    assert "--vm-name h100-scheduler-vm1 --name h100-shared-restored --lun 1" in attach
    assert "mount -t xfs -o nouuid /dev/disk/azure/scsi1/lun1 /mnt/restore" in mount


def test_rollback_stops_every_writer_of_shared_then_starts_them_again(tmp_path) -> None:
    run, (remote,) = _run(tmp_path, "rollback", **{"headNode.accounting": "true"})
    assert run.returncode == 0, run.stderr
    stop = "systemctl stop slurmctld slurmdbd mariadb prometheus nfs-server"
    start = "systemctl start nfs-server prometheus mariadb slurmdbd slurmctld"
    copy = "rsync -aHAX --delete /mnt/restore/ /shared/"
    assert remote.index("mountpoint -q /mnt/restore") < remote.index(stop)
    assert remote.index(stop) < remote.index(copy) < remote.index(start)


def test_without_accounting_the_rollback_has_no_database_to_stop(tmp_path) -> None:
    run, (remote,) = _run(tmp_path, "rollback")  # azure-h100 runs without accounting
    assert run.returncode == 0, run.stderr
    assert "systemctl stop slurmctld prometheus nfs-server" in remote


def test_detach_unmounts_detaches_and_deletes_the_copy(tmp_path) -> None:
    run, calls = _run(tmp_path, "detach")
    assert run.returncode == 0, run.stderr
    assert calls[0].startswith("ssh ") and "umount /mnt/restore" in calls[0]
    assert [c.split()[1:3] for c in calls[1:]] == [
        ["vm", "list"],
        ["vm", "disk"],
        ["disk", "delete"],
    ]
    assert "--name h100-shared-restored" in calls[2] and "-n h100-shared-restored" in calls[3]


def test_list_shows_the_snapshot_group_and_bad_use_says_how(tmp_path) -> None:
    run, calls = _run(tmp_path, "list")
    assert run.returncode == 0 and calls[0].startswith(
        "az snapshot list -g rg-h100-azure-h100-snapshots"
    )
    bad, _ = _run(tmp_path, "restore")
    assert bad.returncode == 2 and "restore-shared.sh attach SNAPSHOT" in bad.stderr
    no_ssh, _ = _run(tmp_path, "rollback", ssh=False)
    assert no_ssh.returncode == 2
    assert no_ssh.stderr.strip() == "restore-shared: set SSH to the stack output sshCommand"


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not installed")
def test_the_restore_script_passes_shellcheck(tmp_path) -> None:
    spec, _ = load_stack_spec("azure-h100")
    script = tmp_path / "restore-shared.sh"
    script.write_text(render_restore_script(spec, "azure-h100"))
    run = subprocess.run(["shellcheck", "-s", "bash", str(script)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout
