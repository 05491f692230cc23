"""The sandbox as a stack sees it: the stack's own Slurm files and health check on local daemons.

Only host-specific values change (clusterctl/sandbox/layout.py `sandbox_site`): addresses, paths,
a private munge socket, mknod'ed GPU stand-ins, and config_overrides so a small host poses as
the stack's 8-GPU nodes. The health check is the cloud's gpucl-health.sh with NHC swapped for a
per-node fault marker.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from clusterctl.errors import UserError
from clusterctl.project import DEFAULT_WORKDIR as DEFAULT_WORKDIR
from clusterctl.render.engine import health_script, node_scripts, render_slurm
from clusterctl.spec.load import load_stack_spec
from clusterctl.spec.model import ClusterSpec
from clusterctl.spec.topology import fabric_groups

MAX_NODES = 16


def sandbox_spec(spec: ClusterSpec, nodes: int) -> ClusterSpec:
    """The stack's first partition with `nodes` nodes: the sandbox boots one partition."""
    first = spec.partitions[0].model_copy(update={"nodes": nodes, "default": True})
    return spec.model_copy(update={"partitions": (first,)})


def node_names(spec: ClusterSpec) -> list[str]:
    part = spec.partitions[0]
    return [h for g in fabric_groups(part.name, part.nodes) for h in g.hostnames()]


def sandbox_health_check(spec: ClusterSpec, site, workdir: Path) -> str:
    markers = shlex.quote(str(workdir / "health"))
    conf = shlex.quote(f"{site.etc_dir}/slurm.conf")
    preamble = "\n".join(
        [
            "# Sandbox: NHC is swapped for a per-node fault marker (clusterctl/sandbox/faults.py).",
            f"SLURM_CONF={conf}",
            "export SLURM_CONF",
            "sandbox_check() {",
            f'  marker={markers}/"${{SLURMD_NODENAME:-$(hostname)}}"',
            '  if [ -e "$marker" ]; then head -c 200 "$marker"; return 1; fi',
            "}",
            "CHECK_CMD=sandbox_check",
            "GPUCL_HEALTH_ENV=/nonexistent",
        ]
    )
    return health_script(spec, site, preamble=preamble)


def up(stack: str, nodes: int, workdir: Path, progress=None) -> dict:
    from clusterctl import sandbox

    if not 1 <= nodes <= MAX_NODES:
        raise UserError(f"--nodes {nodes}: the sandbox runs 1 to {MAX_NODES} nodes on one machine")
    base, _ = load_stack_spec(stack)
    if base.scheduler != "slurm":
        raise UserError(
            f"stack '{stack}' is a {base.scheduler} cluster; the sandbox boots Slurm stacks"
        )
    spec = sandbox_spec(base, nodes)
    names = node_names(spec)
    workdir.mkdir(parents=True, exist_ok=True, mode=0o755)
    site = sandbox.sandbox_site(names, workdir)
    # pyxis/enroot are not installable here: the sandbox boots without the SPANK plugin stack.
    files = {
        k: v for k, v in render_slurm(spec, site, stack).items() if not k.startswith("plugstack")
    }
    libexec = Path(site.libexec_dir)
    libexec.mkdir(parents=True, exist_ok=True)
    for name, text in node_scripts(spec, site, None).items():
        (libexec / name).write_text(text)
        (libexec / name).chmod(0o755)
    try:
        sandbox.up(
            files,
            names,
            workdir=workdir,
            site=site,
            reason_prefix=spec.health_checks.drain_prefix,
            health_check=sandbox_health_check(spec, site, workdir),
            progress=progress,
        )
    except sandbox.SandboxError as exc:
        raise UserError(str(exc)) from None
    info = {
        "stack": stack,
        "cluster": spec.name,
        "partition": spec.partitions[0].name,
        "sku": spec.partitions[0].sku,
        "nodes": names,
        "controller": site.controller_addr,
        "drainPrefix": spec.health_checks.drain_prefix,
        "ssh": sandbox.ssh_argv(workdir),
    }
    (workdir / "sandbox.json").write_text(json.dumps(info, indent=2) + "\n")
    return info


def down(workdir: Path) -> None:
    """Tear the sandbox down, with the files this module added to its workdir."""
    import shutil

    from clusterctl import sandbox

    try:
        sandbox.down(workdir)
    except sandbox.SandboxError as exc:
        raise UserError(str(exc)) from None
    (workdir / "sandbox.json").unlink(missing_ok=True)
    shutil.rmtree(workdir / "libexec", ignore_errors=True)
