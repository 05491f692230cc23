"""A team user in a job's allocation can `ssh gpu-pg0-2` from gpu-pg0-1: gpucl-known-hosts.sh
publishes each node's current host key under /sched and prints it for ssh's KnownHostsCommand. The
rendered script runs here against temporary folders with stand-ins for ip, getent and hostname. The
user-key half (made as the user with setpriv: root) is tests/e2e/test_user_cluster_keys.py."""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from clusterctl.render.paths import host_keys
from tests.conftest import node_script
from tests.unit.render.test_production_slurm import _files, _user_data

TEAM = "azure-team"
LIBEXEC = "/usr/local/libexec/gpu-clusters"


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


# --- host keys: publish and lookup ---------------------------------------------------------

IP = r"""#!/bin/bash
# ip -4 -o route get ADDR: the route's source address, as iproute2 prints it
echo "$4 dev eth0 src $(cat "$STATE/address") uid 0 \    cache "
"""
GETENT_HOSTS = r"""#!/bin/bash
[ "$1" = ahostsv4 ] && [ "$2" = team-scheduler ] && printf '10.40.0.4       STREAM team-scheduler\n'
"""
HOSTNAME = """#!/bin/bash
case "${1:-}" in
  -I) echo "10.99.0.1 172.17.0.1" ;;
  *) cat "$STATE/hostname" ;;
esac
"""
NODE_NAME = """#!/bin/bash
echo "node-name.sh" >> "$STATE/calls"
[ "${GPUCL_NAME_WAIT:-}" = 0 ] || { echo "would wait" >&2; exit 1; }
cat "$STATE/slurm-name"
"""


def _host_keys(ssh_dir: Path, *types: str) -> dict[str, str]:
    ssh_dir.mkdir(exist_ok=True)
    out = {}
    for t in types:
        key = ssh_dir / f"ssh_host_{t}_key"
        for p in (key, key.with_suffix(".pub")):
            p.unlink(missing_ok=True)
        subprocess.run(["ssh-keygen", "-q", "-t", t, "-N", "", "-C", "root@vm", "-f", str(key)],
                       check=True)  # fmt: skip
        kind, body = key.with_suffix(".pub").read_text().split()[:2]
        out[kind] = body
    return out


@pytest.fixture
def node(tmp_path: Path):
    if not shutil.which("ssh-keygen"):
        pytest.skip("ssh-keygen (openssh-client) is not installed")
    script = tmp_path / "gpucl-known-hosts.sh"
    script.write_text(node_script(TEAM, "gpucl-known-hosts.sh"))
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for name, text in {"ip": IP, "getent": GETENT_HOSTS, "hostname": HOSTNAME}.items():
        (bin_ / name).write_text(text)
        (bin_ / name).chmod(0o755)
    libexec = tmp_path / "libexec"
    libexec.mkdir()
    (libexec / "node-name.sh").write_text(NODE_NAME)
    (libexec / "node-name.sh").chmod(0o755)
    (tmp_path / "sched").mkdir()
    (tmp_path / "run").mkdir()
    (tmp_path / "address").write_text("10.40.128.6\n")
    (tmp_path / "slurm-name").write_text("gpu-pg0-2\n")
    (tmp_path / "hostname").write_text("team-gpu-pg0_5\n")
    env = {
        "PATH": f"{bin_}:/usr/bin:/bin",
        "STATE": str(tmp_path),
        "GPUCL_HOST_KEYS": str(tmp_path / "sched" / "host-keys"),
        "GPUCL_SSH_DIR": str(tmp_path / "ssh"),
        "GPUCL_RUN_DIR": str(tmp_path / "run"),
        "GPUCL_LIBEXEC": str(libexec),
    }

    def run(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", str(script), *args], env={**env, **extra},
                              capture_output=True, text=True, timeout=30)  # fmt: skip

    return tmp_path, run


def _published(keys: dict[str, str], host: str) -> list[str]:
    return sorted(f"{host} {kind} {body}" for kind, body in keys.items())


def test_a_gpu_node_publishes_its_host_keys_under_its_slurm_name(node) -> None:
    tmp, run = node
    keys = _host_keys(tmp / "ssh", "ed25519", "ecdsa")
    done = run("publish")  # the timer: no name given, node-name.sh (without waiting) says it
    assert done.returncode == 0, done.stderr
    published = tmp / "sched" / "host-keys" / "gpu-pg0-2"
    assert published.read_text().splitlines() == _published(keys, "gpu-pg0-2,10.40.128.6")
    assert _mode(published) == 0o644 and _mode(published.parent) == 0o755
    assert (tmp / "run" / "gpucl-node-name").read_text().strip() == "gpu-pg0-2"
    # later runs take the name from /run: node-name.sh (IMDS) is asked once per boot
    mtime = published.stat().st_mtime_ns
    assert run("publish").returncode == 0
    assert (tmp / "calls").read_text().count("node-name.sh") == 1
    assert published.stat().st_mtime_ns == mtime  # unchanged: not rewritten
    assert [p.name for p in published.parent.iterdir()] == ["gpu-pg0-2"]  # no temporary left


def test_a_new_vm_under_the_same_name_rewrites_the_published_keys(node) -> None:
    tmp, run = node
    _host_keys(tmp / "ssh", "ed25519")
    run("publish", "gpu-pg0-2")  # the prolog names the node ($SLURMD_NODENAME)
    new = _host_keys(tmp / "ssh", "ed25519")  # a re-created VM: new keys, a new address
    (tmp / "address").write_text("10.40.128.9\n")
    assert run("publish", "gpu-pg0-2").returncode == 0
    published = (tmp / "sched" / "host-keys" / "gpu-pg0-2").read_text().splitlines()
    assert published == _published(new, "gpu-pg0-2,10.40.128.9")


def test_the_scheduler_and_login_nodes_publish_under_their_host_name(node) -> None:
    tmp, run = node
    (tmp / "libexec" / "node-name.sh").unlink()  # only GPU nodes have it
    (tmp / "hostname").write_text("team-login-0\n")
    keys = _host_keys(tmp / "ssh", "ed25519")
    assert run("publish").returncode == 0
    published = (tmp / "sched" / "host-keys" / "team-login-0").read_text().splitlines()
    assert published == _published(keys, "team-login-0,10.40.128.6")
    assert not (tmp / "run" / "gpucl-node-name").exists()


def test_nothing_is_published_without_sched_or_a_name(node) -> None:
    tmp, run = node
    _host_keys(tmp / "ssh", "ed25519")
    (tmp / "slurm-name").write_text("")  # not named yet (node-name.sh without waiting: none)
    assert run("publish").returncode == 0
    assert not (tmp / "sched" / "host-keys").exists()
    (tmp / "sched").rmdir()  # /sched not mounted
    assert run("publish", "gpu-pg0-2").returncode == 0
    assert not (tmp / "sched").exists()


def test_lookup_prints_a_published_host_by_name_or_address_and_nothing_else(node) -> None:
    tmp, run = node
    keys = _host_keys(tmp / "ssh", "ed25519")
    run("publish", "gpu-pg0-2")
    want = _published(keys, "gpu-pg0-2,10.40.128.6")
    for host in ("gpu-pg0-2", "10.40.128.6"):
        done = run("lookup", host)
        assert done.returncode == 0 and done.stdout.splitlines() == want, host
    (tmp / "secret").write_text("ssh-ed25519 AAAA not a host key\n")
    (tmp / "sched" / "host-keys" / ".hidden").write_text("x\n")
    for host in ("gpu-pg0-9", "github.com", "10.40.128.7", "", "../../secret", "..", ".hidden",
                 "/etc/passwd", "GPU-PG0-2", "gpu-pg0-2/../../../secret", "-gpu", "[gpu-pg0-2]:22",
                 "gpu pg0 2", "*"):  # fmt: skip
        done = run("lookup", host)
        assert (done.returncode, done.stdout) == (0, ""), host


@pytest.mark.parametrize("role", ["scheduler", "login", "gpu"])
def test_every_role_has_ssh_check_host_keys_through_the_published_ones(role: str) -> None:
    doc = _user_data(TEAM, role)
    files = _files(doc)
    assert f"{LIBEXEC}/gpucl-known-hosts.sh" in files  # the command ssh runs is there
    conf = files["/etc/ssh/ssh_config.d/60-gpu-clusters-known-hosts.conf"]
    assert f"KnownHostsCommand {LIBEXEC}/gpucl-known-hosts.sh lookup %H" in conf.splitlines()[1]
    service = files["/etc/systemd/system/gpucl-hosts.service"]
    assert f"ExecStart=-{LIBEXEC}/gpucl-known-hosts.sh publish\n" in service
    code = [line.lower() for text in files.values() for line in text.splitlines()
            if not line.lstrip().startswith("#")]  # fmt: skip
    for weakened in ("stricthostkeychecking", "userknownhostsfile", "globalknownhostsfile"):
        assert not [c for c in code if weakened in c], weakened  # host key checks stay as they are
    if role == "gpu":
        prolog = node_script(TEAM, "prolog.sh")
        assert f'{LIBEXEC}/gpucl-known-hosts.sh publish "${{SLURMD_NODENAME:-}}"' in prolog
    assert host_keys("team") == "/sched/team/host-keys"
