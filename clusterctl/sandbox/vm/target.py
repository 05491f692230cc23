"""The VM sandbox as a validation target: its scheduler reached as the cloud's is, and the
benchmark it substitutes for nccl-tests (substitutions.py, "gpus"). The CLI asks for it on
`--sandbox`; validation itself knows nothing of the sandbox."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from clusterctl.errors import UserError
from clusterctl.sandbox.vm import boot, machine, vmstate
from clusterctl.validate.targets import Benchmark, SlurmTarget
from clusterctl.validate.transport import SshTarget

PROBE = Benchmark(
    "probe",
    # small enough for a 2-core machine, large enough to load a link
    min_bytes="256K",
    max_bytes="1M",
    iters=3,
    warmup=1,
    # CPU-bound Python sharing a few cores: healthy pairs measured side by side scatter up to
    # ~2.5x (seen on a 2-core host), while a link slowed by tc is 10-1000x slower. A floor at
    # 1/4 of the best pair keeps the first from failing and still catches the second; the peer
    # check compares a pair with the others' median on the same footing.
    calibrate_ratio=0.25,
    peer_floor=0.25,
    # where the nodes list their stand-in HCAs and nvidia_peermem (substitution infiniband-hcas)
    env=(
        ("CLUSTERCTL_PROBE_IB_DIR", machine.HCA_DIR),
        ("CLUSTERCTL_PROBE_PEERMEM_DIR", machine.PEERMEM_DIR),
    ),
)


def _access(workdir: Path, read: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """What `read` says of the sandbox running in `workdir`; one line (UserError) when none runs."""
    if vmstate.load(workdir.resolve()) is None:
        raise UserError(
            f"no sandbox running in {workdir} (start one with `clusterctl sandbox up -s STACK`,"
            " or name its workdir with --sandbox-dir)"
        )
    try:
        return read(workdir)
    except boot.BootError as exc:
        raise UserError(str(exc)) from None


def sandbox_target(workdir: Path, nodes: int | None) -> SlurmTarget:
    """The VM sandbox's scheduler, reached as the cloud's is: ssh as the admin user (through the
    lab, as through a bastion), sudo for scontrol; no GPUs, so the stdlib ring probe runs."""
    acc = _access(workdir, boot.validation_access)
    # empty when slurmctld does not answer: then the ssh check fails first, naming the scheduler
    names = tuple(acc["slurm_nodes"][: nodes or len(acc["slurm_nodes"])])
    return SlurmTarget(
        ssh=SshTarget(
            host=acc["host"],
            user="azureuser",
            identity=acc["identity"],
            known_hosts=acc["known_hosts"],
            config="/dev/null",
            options=(f"ProxyCommand={acc['proxy_command']}",),
            connect_timeout=10,
        ),
        nodes=len(names),
        gpus_per_node=1,
        sku=None,
        fabric_sku=acc["gpu_vm_size"],
        benchmark=PROBE,
        group="sandbox",
        remote_dir=f"clusterctl-validate-{acc['sid']}",
        node_names=names,
        python="python3",
        pythonpath=acc["pythonpath"],
        keep_files=False,
        label=f"VM sandbox {workdir}",
    )


def sandbox_login_target(workdir: Path, user: str, identity: str | None) -> SshTarget:
    """A team user's way into the sandbox: their own key, to the login node (the scheduler where
    the stack has none), through the lab."""
    acc = _access(workdir, boot.login_access)
    return SshTarget(
        host=acc["host"],
        user=user,
        identity=identity,
        known_hosts=acc["known_hosts"],
        config="/dev/null",
        options=(f"ProxyCommand={acc['proxy_command']}",),
        connect_timeout=20,
    )
