"""Where everything of one sandbox lives in its workdir, and the SlurmSite it boots with."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from clusterctl.render.site import SlurmSite

from . import devices, netns, state

CONTROLLER_HOST = "scheduler"  # the same SlurmctldHost name as in the cloud
HEALTH_CHECK_INTERVAL_S = 5

# What works on this host (see report): cgroup v1 hierarchies split per node by bind mounts.
CGROUP_PLUGIN = "autodetect"
PROCTRACK = "proctrack/cgroup"
TASK_PLUGINS = "task/affinity,task/cgroup"


@dataclass(frozen=True)
class Layout:
    workdir: Path

    @classmethod
    def of(cls, workdir: str | os.PathLike[str]) -> Layout:
        return cls(Path(workdir).resolve())

    def __getattr__(self, name: str) -> Path:
        sub = _DIRS.get(name)
        if sub is None:
            raise AttributeError(name)
        return self.workdir / sub

    def pod(self, pod: str) -> Path:
        return self.workdir / "pods" / pod

    @property
    def slurm_conf(self) -> Path:
        return self.workdir / "etc" / "slurm.conf"

    @property
    def munge_key(self) -> Path:
        return self.workdir / "etc" / "munge" / "munge.key"

    @property
    def munge_socket(self) -> Path:
        return self.workdir / "run" / "munge" / "munge.socket"

    @property
    def ssh_key(self) -> Path:
        return self.workdir / "ssh" / "id_ed25519"

    @property
    def known_hosts(self) -> Path:
        return self.workdir / "ssh" / "known_hosts"

    @property
    def health_check(self) -> Path:
        return self.workdir / "bin" / "health-check"


# Top-level dirs. run, log and spool are mount points: each pod binds its own copy over them.
_DIRS = {
    "etc": "etc",
    "ssh": "ssh",
    "dev": "dev",
    "bin": "bin",
    "health": "health",
    "state": "state",
    "pods": "pods",
    "run": "run",
    "log": "log",
    "spool": "spool",
}


def sandbox_site(nodes: list[str], workdir: str | os.PathLike[str]) -> SlurmSite:
    lay = Layout.of(workdir)
    existing = state.load(lay.workdir)  # a running sandbox keeps its subnet
    subnet = existing.subnet if existing else netns.pick_subnet(netns.sandbox_id(str(lay.workdir)))
    return SlurmSite(
        controller_host=CONTROLLER_HOST,
        controller_addr=f"{subnet}.2",
        node_addrs={n: f"{subnet}.{10 + i}" for i, n in enumerate(nodes)},
        slurm_user="slurm",
        etc_dir=str(lay.etc),
        state_dir=str(lay.state / "slurmctld"),
        spool_dir=str(lay.spool / "slurmd"),
        log_dir=str(lay.log),
        run_dir=str(lay.run / "slurm"),
        munge_socket=str(lay.munge_socket),
        gpu_device_glob=devices.gpu_glob(lay.dev),
        health_check_program=str(lay.health_check),
        health_check_interval_s=HEALTH_CHECK_INTERVAL_S,
        libexec_dir=str(lay.workdir / "libexec"),
        config_overrides=True,
        cloud_power_saving=False,
        configless=False,
        cgroup_plugin=CGROUP_PLUGIN,
        proctrack=PROCTRACK,
        task_plugins=TASK_PLUGINS,
    )
