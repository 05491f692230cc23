"""The real ssh and sshd: a node's host key published by gpucl-known-hosts.sh is what ssh checks,
through the KnownHostsCommand line the nodes' ssh_config gets, with nothing in the user's
known_hosts and StrictHostKeyChecking at its default; a re-created node (new host keys) is
refused until it publishes, then accepted, whatever stale line the user kept."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import need_tool, node_script
from tests.unit.render.test_production_slurm import _files, _user_data

pytestmark = pytest.mark.integration

NAME = "gpu-pg0-2"
SCRIPT = "/usr/local/libexec/gpu-clusters/gpucl-known-hosts.sh"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _host_keys(ssh_dir: Path) -> None:
    for old in ssh_dir.glob("ssh_host_*"):
        old.unlink()
    for kind in ("ed25519", "ecdsa"):
        subprocess.run(["ssh-keygen", "-q", "-t", kind, "-N", "", "-f",
                        str(ssh_dir / f"ssh_host_{kind}_key")], check=True)  # fmt: skip


@pytest.fixture
def peer(tmp_path: Path):
    """gpu-pg0-2: an sshd on 127.0.0.1 with host keys of its own, and the rendered script."""
    sshd, ssh = need_tool("sshd"), need_tool("ssh")
    need_tool("ssh-keygen")
    if os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("the e2e suite runs as root in CI")
        pytest.skip("sshd needs root (privilege separation), as CI runs")
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation folder
    script = tmp_path / "gpucl-known-hosts.sh"
    script.write_text(node_script("azure-team", "gpucl-known-hosts.sh"))
    node_ssh = tmp_path / "etc-ssh"
    node_ssh.mkdir()
    _host_keys(node_ssh)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "id")],
                   check=True)  # fmt: skip
    port = _free_port()
    (tmp_path / "sshd_config").write_text(
        f"ListenAddress 127.0.0.1:{port}\n"
        + "".join(f"HostKey {k}\n" for k in sorted(node_ssh.glob("ssh_host_*_key")))
        + f"AuthorizedKeysFile {tmp_path / 'id.pub'}\nStrictModes no\nUsePAM no\n"
        f"PidFile {tmp_path / 'sshd.pid'}\n"
    )
    env = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
        "GPUCL_HOST_KEYS": str(tmp_path / "host-keys"),
        "GPUCL_SSH_DIR": str(node_ssh),
        "GPUCL_RUN_DIR": str(tmp_path),
    }

    def publish() -> None:
        done = subprocess.run(["bash", str(script), "publish", NAME], env=env,
                              capture_output=True, text=True, timeout=30)  # fmt: skip
        assert done.returncode == 0, done.stderr

    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([sshd, "-D", "-e", "-f", str(tmp_path / "sshd_config")],
                                stderr=subprocess.DEVNULL)  # fmt: skip
        started.append(proc)
        for _ in range(50):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return proc
            time.sleep(0.1)
        proc.kill()
        pytest.fail("sshd did not listen")

    # The nodes' own ssh_config line, the script's path pointed at this copy and its folder
    conf = _files(_user_data("azure-team", "gpu"))[
        "/etc/ssh/ssh_config.d/60-gpu-clusters-known-hosts.conf"
    ]
    command = f"/usr/bin/env GPUCL_HOST_KEYS={tmp_path / 'host-keys'} /bin/bash {script}"
    assert SCRIPT in conf
    (tmp_path / "ssh_config").write_text(
        f"Host {NAME}\n    HostName 127.0.0.1\n    Port {port}\n"
        # a port other than 22 would make %H "[name]:port"; the alias keeps it the name, as on 22
        f"    HostKeyAlias {NAME}\n" + conf.replace(SCRIPT, command)
    )
    known = tmp_path / "known_hosts"  # the user's, empty: nothing of the node's in it
    known.write_text("")

    def connect() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [ssh, "-F", str(tmp_path / "ssh_config"), "-o", "BatchMode=yes",
             "-o", f"UserKnownHostsFile={known}", "-o", "GlobalKnownHostsFile=/dev/null",
             "-i", str(tmp_path / "id"), NAME, "echo", "on", NAME],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip

    try:
        yield tmp_path, publish, connect, start, start()
    finally:
        for proc in started:
            proc.kill()
            proc.wait()


def test_ssh_to_a_peer_checks_the_key_it_published(peer) -> None:
    tmp, publish, connect, *_ = peer
    refused = connect()  # nothing published, nothing known: BatchMode refuses, as it should
    assert refused.returncode == 255 and "Host key verification failed" in refused.stderr
    publish()
    done = connect()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"on {NAME}"
    assert (tmp / "known_hosts").read_text() == ""  # nothing learned, nothing needed


def test_a_re_created_node_is_refused_until_it_publishes_then_a_stale_line_does_no_harm(
    peer,
) -> None:
    tmp, publish, connect, start, proc = peer
    publish()
    old = (tmp / "host-keys" / NAME).read_text().splitlines()
    (tmp / "known_hosts").write_text(f"{NAME} {old[0].split(' ', 1)[1]}\n")  # the user kept one
    assert connect().returncode == 0
    # a new VM under the same name: new host keys, not yet published
    proc.kill()
    proc.wait()
    _host_keys(tmp / "etc-ssh")
    start()
    changed = connect()
    assert changed.returncode == 255 and "Host key verification failed" in changed.stderr
    publish()  # its first timer run, or the prolog of its first job
    done = connect()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"on {NAME}"
