"""up / status / exec / down for the local Slurm sandbox."""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clusterctl.render.site import SlurmSite

from . import cgroups, daemons, devices, netns, preflight, sshd
from .health import stand_in_script
from .layout import Layout
from .state import SandboxError, SandboxState, load

Progress = Callable[[str], None]


def _noop(_: str) -> None:
    pass


def up(
    files: dict[str, str],
    nodes: list[str],
    *,
    workdir: str | os.PathLike[str],
    site: SlurmSite,
    reason_prefix: str = "gpucl:",
    health_check: str | None = None,
    timeout: float = 60.0,
    progress: Progress | None = None,
) -> SandboxState:
    """Boot slurmctld + sshd and one slurmd per node on `files`; return when all nodes are idle.

    `site` must come from `sandbox_site(nodes, workdir)` and `files` be rendered with it.
    `health_check` is the HealthCheckProgram's text; None installs a stand-in that drains a
    node while `faults.fail_health_check` has marked it. On any failure up tears down what it
    made before raising.
    """
    say = progress or _noop
    lay = Layout.of(workdir)
    preflight.check_host()
    preflight.check_workdir(lay.workdir)
    _refuse_if_present(lay)
    state = _new_state(lay, nodes, site, reason_prefix)
    try:
        _build(state, lay, files, site, health_check, say)
        _wait_idle(state, lay, timeout, say)
    except BaseException:
        say("up failed: tearing down")
        try:
            down(lay.workdir)
        except SandboxError as e:
            say(f"teardown after failure incomplete: {e}")
        raise
    state.phase = "up"
    state.save()
    say(f"sandbox up: {len(nodes)} nodes idle")
    return state


def _refuse_if_present(lay: Layout) -> None:
    old = load(lay.workdir)
    if old is None:
        return
    if any(daemons.is_alive(r) for r in old.of_kind("process")):
        raise SandboxError(f"a sandbox already runs in {lay.workdir}: run `down` on it first")
    raise SandboxError(
        f"{lay.workdir} holds what a crashed sandbox left (phase {old.phase}): run `down` first"
    )


def _new_state(lay: Layout, nodes: list[str], site: SlurmSite, reason_prefix: str) -> SandboxState:
    if not nodes or len(set(nodes)) != len(nodes):
        raise SandboxError(f"node names must be unique and at least one: {nodes}")
    if site.controller_host in nodes:
        raise SandboxError(f"a node may not be named like the controller ({site.controller_host})")
    if site.controller_addr is None:
        raise SandboxError(
            "site has no controller_addr: build it with sandbox_site(nodes, workdir)"
        )
    state = SandboxState(
        workdir=str(lay.workdir),
        sandbox_id=netns.sandbox_id(str(lay.workdir)),
        controller=site.controller_host,
        nodes=list(nodes),
        subnet=site.controller_addr.rsplit(".", 1)[0],
        reason_prefix=reason_prefix,
    )
    expected = {n: netns.pod_addr(state, n) for n in nodes}
    if site.node_addrs != expected or site.etc_dir != str(lay.etc):
        raise SandboxError("site does not match nodes/workdir: build it with sandbox_site()")
    lay.workdir.mkdir(parents=True, exist_ok=True)
    state.save()
    return state


def _mkdir(path: Path, owner: str = "root", mode: int = 0o755) -> None:
    path.mkdir(parents=True, exist_ok=True)
    os.chown(path, pwd.getpwnam(owner).pw_uid, grp.getgrnam(owner).gr_gid)
    path.chmod(mode)


def _build(
    state: SandboxState,
    lay: Layout,
    files: dict[str, str],
    site: SlurmSite,
    health_check: str | None,
    say: Progress,
) -> None:
    pods = [state.controller, *state.nodes]
    lay.workdir.chmod(0o755)  # munged refuses a socket under a group/world-writable dir
    for name in ("etc", "ssh", "dev", "bin", "health", "state", "pods", "run", "log", "spool"):
        path = getattr(lay, name)
        state.record("dir", str(path))
        _mkdir(path)
    say("writing config, keys and device nodes")
    for name, text in files.items():
        (lay.etc / name).write_text(text)
    hosts = [f"127.0.0.1 localhost\n{netns.pod_addr(state, state.controller)} {state.controller}"]
    hosts += [f"{netns.pod_addr(state, n)} {n}" for n in state.nodes]
    (lay.etc / "hosts.sandbox").write_text("\n".join(hosts) + "\n")
    (lay.etc / "resolv.conf.sandbox").write_text("# sandbox: no DNS\n")
    _mkdir(lay.etc / "munge", "munge", 0o700)
    lay.munge_key.write_bytes(os.urandom(1024))
    os.chown(lay.munge_key, pwd.getpwnam("munge").pw_uid, grp.getgrnam("munge").gr_gid)
    lay.munge_key.chmod(0o400)
    ctrl_addr = netns.pod_addr(state, state.controller)
    sshd_config = sshd.setup(lay, ctrl_addr)
    for minor, path in enumerate(devices.gpu_paths(lay.dev)):
        devices.make_gpu(path, minor)
    program = Path(site.health_check_program)
    program.write_text(health_check or stand_in_script(lay, state.reason_prefix))
    program.chmod(0o755)
    _mkdir(Path(site.state_dir), site.slurm_user, 0o700)
    for pod in pods:
        _mkdir(lay.pod(pod) / "run")
        _mkdir(lay.pod(pod) / "run" / "munge", "munge")
        _mkdir(lay.pod(pod) / "run" / "slurm", site.slurm_user)
        _mkdir(lay.pod(pod) / "log", site.slurm_user)
        _mkdir(lay.pod(pod) / "spool" / "slurmd")
    _mkdir(lay.pod(state.controller) / "sysrun" / "sshd")

    say("creating bridge and network namespaces")
    netns.create_bridge(state)
    ns_of = {pod: netns.create_pod_net(state, pod) for pod in pods}
    hierarchies = cgroups.v1_hierarchies()
    for h in hierarchies:
        for path in [cgroups.subtree(h, state.sandbox_id)] + [
            cgroups.subtree(h, state.sandbox_id, n) for n in state.nodes
        ]:
            state.record("cgroup", str(path))
            cgroups.make_dir(path)

    common = [
        (str(lay.etc / "hosts.sandbox"), "/etc/hosts"),
        (str(lay.etc / "resolv.conf.sandbox"), "/etc/resolv.conf"),
    ]
    for pod in pods:
        binds = common + [(str(lay.pod(pod) / d), str(lay.workdir / d)) for d in ("run", "log")]
        if pod == state.controller:
            # sshd insists on /run/sshd; give the controller its own /run instead of the host's
            binds.append((str(lay.pod(pod) / "sysrun"), "/run"))
        else:
            binds.append((str(lay.pod(pod) / "spool"), str(lay.spool)))
            binds += [(str(cgroups.subtree(h, state.sandbox_id, pod)), str(h)) for h in hierarchies]
        daemons.start_holder(
            state, pod, netns=ns_of[pod], hostname=pod, binds=binds, log=lay.pod(pod) / "pod.log"
        )

    say("starting munged in every pod")
    for pod in pods:
        _start_munged(state, lay, pod)
    _wait_for(
        lambda: all((lay.pod(p) / "run/munge/munge.socket").exists() for p in pods),
        10,
        lambda: (
            "munged did not create its socket: "
            + daemons.tail(lay.pod(state.controller) / "log" / "munged.out")
        ),
    )
    env = {"SLURM_CONF": str(lay.slurm_conf)}
    ctrl = state.controller
    say("starting slurmctld and sshd")
    daemons.start(
        state,
        f"slurmctld@{ctrl}",
        [*daemons.in_pod(state, ctrl), "slurmctld", "-D", "-f", str(lay.slurm_conf)],
        pod=ctrl,
        log=lay.pod(ctrl) / "log" / "slurmctld.out",
        env=env,
    )
    sshd_bin = shutil.which("sshd") or "/usr/sbin/sshd"
    daemons.start(
        state,
        f"sshd@{ctrl}",
        [*daemons.in_pod(state, ctrl), sshd_bin, "-D", "-e", "-f", str(sshd_config)],
        pod=ctrl,
        log=lay.pod(ctrl) / "log" / "sshd.out",
    )
    for i, node in enumerate(state.nodes, 1):
        say(f"starting slurmd {i}/{len(state.nodes)} on {node}")
        daemons.start(
            state,
            f"slurmd@{node}",
            [*daemons.in_pod(state, node), "slurmd", "-D", "-f", str(lay.slurm_conf), "-N", node],
            pod=node,
            log=lay.pod(node) / "log" / "slurmd.out",
            env=env,
        )


def _start_munged(state: SandboxState, lay: Layout, pod: str) -> None:
    run = lay.run / "munge"  # the pod's own, through its bind mount
    argv = [*daemons.in_pod(state, pod), "setpriv", "--reuid=munge", "--regid=munge"]
    argv += ["--init-groups", "--", "munged", "-F", f"--socket={lay.munge_socket}"]
    argv += [f"--key-file={lay.munge_key}", f"--pid-file={run}/munged.pid"]
    argv += [f"--seed-file={run}/munged.seed", f"--log-file={run}/munged.log"]
    argv += [f"--origin={netns.pod_addr(state, pod)}"]
    daemons.start(state, f"munged@{pod}", argv, pod=pod, log=lay.pod(pod) / "log" / "munged.out")


def _wait_for(ok: Callable[[], bool], timeout: float, why: Callable[[], str]) -> None:
    deadline = time.monotonic() + timeout
    while not ok():
        if time.monotonic() > deadline:
            raise SandboxError(why())
        time.sleep(0.05)


def _dead_daemon(state: SandboxState, lay: Layout) -> str | None:
    for r in state.of_kind("process"):
        if not daemons.is_alive(r):
            daemon = r.name.split("@")[0]
            return f"{r.name} died: {daemons.tail(lay.pod(r.pod or '') / 'log' / f'{daemon}.out')}"
    return None


def _wait_idle(state: SandboxState, lay: Layout, timeout: float, say: Progress) -> None:
    deadline = time.monotonic() + timeout
    last = ""
    while True:
        dead = _dead_daemon(state, lay)
        if dead:
            raise SandboxError(dead)
        out = exec(lay.workdir, ["sinfo", "-h", "-N", "-o", "%N %t"], timeout=10).stdout
        states = dict(line.split() for line in out.splitlines() if len(line.split()) == 2)
        idle = [n for n in state.nodes if states.get(n) == "idle"]
        summary = f"{len(idle)}/{len(state.nodes)} nodes idle"
        if summary != last:
            say(summary)
            last = summary
        if len(idle) == len(state.nodes):
            return
        if time.monotonic() > deadline:
            raise SandboxError(
                f"nodes not idle after {timeout:.0f} s ({out.strip() or 'no sinfo output'}); "
                f"see the logs in {lay.pods}"
            )
        time.sleep(0.2)


def _require(workdir: str | os.PathLike[str]) -> tuple[SandboxState, Layout]:
    lay = Layout.of(workdir)
    state = load(lay.workdir)
    if state is None:
        raise SandboxError(f"no sandbox in {lay.workdir}: run `up` first")
    return state, lay


def exec(
    workdir: str | os.PathLike[str],
    argv: Sequence[str],
    *,
    timeout: float = 60.0,
    check: bool = False,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command in the controller's pod (e.g. sinfo, `srun -N4 hostname`)."""
    state, lay = _require(workdir)
    return _run_in(state, lay, state.controller, argv, timeout=timeout, check=check, input=input)


def exec_on_node(
    workdir: str | os.PathLike[str],
    node: str,
    argv: Sequence[str],
    *,
    timeout: float = 60.0,
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    state, lay = _require(workdir)
    if node not in state.nodes:
        raise SandboxError(f"no node {node} in the sandbox (nodes: {', '.join(state.nodes)})")
    return _run_in(state, lay, node, argv, timeout=timeout, check=check)


def _run_in(
    state: SandboxState,
    lay: Layout,
    pod: str,
    argv: Sequence[str],
    *,
    timeout: float,
    check: bool,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    full = [*daemons.in_pod(state, pod), "env", f"SLURM_CONF={lay.slurm_conf}", *argv]
    proc = subprocess.run(full, capture_output=True, text=True, timeout=timeout, input=input)
    if check and proc.returncode != 0:
        raise SandboxError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc


def ssh_argv(workdir: str | os.PathLike[str]) -> list[str]:
    """`ssh ... root@CONTROLLER`; append a remote command, as for a cloud scheduler."""
    state, lay = _require(workdir)
    return sshd.ssh_argv(lay, netns.pod_addr(state, state.controller))


@dataclass
class SandboxStatus:
    phase: str
    daemons: dict[str, bool]
    sinfo: str | None

    @property
    def healthy(self) -> bool:
        return self.phase == "up" and all(self.daemons.values())


def status(workdir: str | os.PathLike[str]) -> SandboxStatus | None:
    """None when no sandbox is in `workdir`."""
    lay = Layout.of(workdir)
    state = load(lay.workdir)
    if state is None:
        return None
    alive = {r.name: daemons.is_alive(r) for r in state.of_kind("process")}
    sinfo = None
    if alive.get(f"pod@{state.controller}"):
        proc = exec(lay.workdir, ["sinfo", "-N", "-o", "%N %t %G %E"], timeout=15)
        sinfo = proc.stdout if proc.returncode == 0 else proc.stderr
    return SandboxStatus(phase=state.phase, daemons=alive, sinfo=sinfo)


def down(workdir: str | os.PathLike[str]) -> None:
    """Remove everything the state file records; safe to repeat, and after a crashed `up`."""
    lay = Layout.of(workdir)
    state = load(lay.workdir)
    if state is None:
        return
    errors: list[str] = []

    def attempt(what: str, fn: Callable[[], object]) -> None:
        try:
            fn()
        except (OSError, SandboxError, subprocess.SubprocessError) as e:
            errors.append(f"{what}: {e}")

    strays = [p for r in state.of_kind("netns") for p in netns.netns_pids(r.name)]
    attempt("processes", lambda: daemons.stop(state.of_kind("process"), strays))
    attempt("mounts", lambda: _unmount_under(lay.workdir))
    for r in reversed(state.of_kind("netns")):
        attempt(f"netns {r.name}", lambda r=r: netns.delete_netns(r.name))
    for r in reversed(state.of_kind("veth") + state.of_kind("bridge")):
        attempt(f"link {r.name}", lambda r=r: netns.delete_link(r.name))
    for r in reversed(state.of_kind("cgroup")):
        attempt(f"cgroup {r.name}", lambda r=r: cgroups.remove_tree(Path(r.name)))
    for r in reversed(state.of_kind("file")):
        attempt(f"file {r.name}", lambda r=r: Path(r.name).unlink(missing_ok=True))
    for r in reversed(state.of_kind("dir")):
        attempt(f"dir {r.name}", lambda r=r: _rmtree(Path(r.name)))
    if errors:
        state.save()
        raise SandboxError(f"down left something behind ({'; '.join(errors)}); run down again")
    state.path.unlink(missing_ok=True)


def _rmtree(path: Path) -> None:
    if path.exists():
        shutil.rmtree(path)


def _unmount_under(workdir: Path) -> None:
    """Pod mounts live in private mount namespaces; none should show here, but never leave one."""
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f]
    for point in reversed(points):
        if point == str(workdir) or point.startswith(f"{workdir}/"):
            subprocess.run(["umount", "-l", point], check=True, capture_output=True)
