"""An unreachable scheduler is `could not run`: exit 2 with one clear line, quickly."""

from __future__ import annotations

import os
import socket
import sys
import tempfile
import time

import pytest

from clusterctl.validate import CouldNotRun
from clusterctl.validate.transport import CONTROL_PERSIST_S, Ssh, SshTarget, parse_host
from tests.conftest import need_tool


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again once the socket is


def test_parse_host() -> None:
    assert parse_host("azureuser@20.1.2.3:2222") == SshTarget("20.1.2.3", "azureuser", 2222)
    assert parse_host("my-alias") == SshTarget("my-alias")
    with pytest.raises(ValueError):
        parse_host("u@h:ssh")


def test_argv_keeps_the_users_config_and_never_prompts() -> None:
    argv = SshTarget("h", "u", connect_timeout=3).argv("sinfo")
    assert "-F" not in argv  # ~/.ssh/config, agent and ProxyJump stay in force
    assert "BatchMode=yes" in argv and "ConnectTimeout=3" in argv
    assert argv[-3:] == ["u@h", "--", "sinfo"]


@pytest.mark.integration
def test_closed_port_raises_could_not_run(tmp_path) -> None:
    need_tool("ssh")
    target = SshTarget(
        "127.0.0.1",
        "root",
        closed_port(),
        config="/dev/null",
        known_hosts=str(tmp_path / "kh"),
        connect_timeout=2,
    )
    with pytest.raises(
        CouldNotRun, match=r"cannot reach root@127\.0\.0\.1:\d+ over ssh: .*refused"
    ):
        Ssh(target).check_reachable()


@pytest.mark.integration
def test_cli_unreachable_host_exits_2_with_one_line(cli, tmp_path, monkeypatch) -> None:
    need_tool("ssh")
    # A bogus ssh config: the alias points at a closed port on loopback, ConnectTimeout=2.
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "config").write_text(
        f"Host bogus-scheduler\n  HostName 127.0.0.1\n  Port {closed_port()}\n"
        f"  ConnectTimeout 2\n  UserKnownHostsFile {tmp_path / 'kh'}\n"
    )
    monkeypatch.setenv("HOME", str(home))
    start = time.monotonic()
    res = cli(
        "--nccl", "--host", "bogus-scheduler", "--nodes", "2", "--sku", "Standard_ND96isr_H100_v5"
    )
    assert time.monotonic() - start < 30
    assert res.exit_code == 3  # inconclusive: unreachable, not a usage error
    lines = [line for line in res.stderr.splitlines() if line.strip() and "connecting" not in line]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: cannot reach bogus-scheduler over ssh")


@pytest.mark.integration
def test_unroutable_address_times_out_within_connect_timeout() -> None:
    need_tool("ssh")
    # TEST-NET-1 (RFC 5737) is never routed: the connection can only time out.
    target = SshTarget("192.0.2.1", "root", config="/dev/null", connect_timeout=2)
    start = time.monotonic()
    with pytest.raises(CouldNotRun, match=r"cannot reach|no answer"):
        Ssh(target).check_reachable()
    assert time.monotonic() - start < 15


# ssh as far as connection reuse goes: with ControlMaster=auto a live ControlPath socket carries
# the command (a "mux"); without one, a new connection, which then serves as the master.
STAND_IN_SSH = r"""#!PYTHON
import os, sys
args = sys.argv[1:]
opts = dict(a.split("=", 1) for a in args if "=" in a and not a.startswith("--"))
path = opts.get("ControlPath")
log = open(os.environ["SSH_LOG"], "a")
if "-O" in args:
    log.write(f"exit {path}\n")
    if path and os.path.exists(path):
        os.remove(path)
    sys.exit(0)
if path and opts.get("ControlMaster") == "auto" and os.path.exists(path):
    log.write("mux\n")
else:
    log.write("connect\n")
    if path:
        open(path, "w").close()
sys.exit(int(os.environ.get("SSH_EXIT", "0")) or (1 if args[-1] == "false" else 0))
"""


@pytest.fixture
def stand_in_ssh(tmp_path, monkeypatch):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "ssh").write_text(STAND_IN_SSH.replace("#!PYTHON", f"#!{sys.executable}"))
    (bin_ / "ssh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}:{os.environ['PATH']}")
    monkeypatch.setenv("SSH_LOG", str(tmp_path / "ssh.log"))
    control_parent = tmp_path / "tmp"
    control_parent.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(control_parent))
    return tmp_path / "ssh.log", control_parent


def test_one_connection_carries_every_command_and_closes_with_the_run(stand_in_ssh) -> None:
    log, control_parent = stand_in_ssh
    ssh = Ssh(SshTarget("sched", "u"), reuse=True)
    for _ in range(60):  # a round of pair jobs: submit, poll, read each
        ssh.run("squeue -h")
    (control,) = control_parent.iterdir()
    assert control.stat().st_mode & 0o777 == 0o700  # nobody else can use the connection
    ssh.close()
    lines = log.read_text().splitlines()
    assert lines.count("connect") == 1 and lines.count("mux") == 59
    assert lines[-1] == f"exit {control}/master"
    assert list(control_parent.iterdir()) == []


def test_the_control_directory_goes_when_a_command_fails(stand_in_ssh) -> None:
    log, control_parent = stand_in_ssh
    with pytest.raises(CouldNotRun), Ssh(SshTarget("sched"), reuse=True) as ssh:
        ssh.run("true")
        ssh.run("false")
    assert list(control_parent.iterdir()) == []
    assert log.read_text().splitlines()[-1].startswith("exit ")


def test_the_master_outlives_its_last_command_only_briefly(stand_in_ssh) -> None:
    with Ssh(SshTarget("sched"), reuse=True) as ssh:
        argv = ssh._control()
    assert f"ControlPersist={CONTROL_PERSIST_S}" in argv and 0 < CONTROL_PERSIST_S <= 300
    assert "ControlPath" not in " ".join(SshTarget("sched").argv("true"))  # only when asked


def test_validate_ends_its_shared_connection_when_the_scheduler_cannot_be_reached(
    stand_in_ssh, monkeypatch
) -> None:
    """`validate` on a stack: the shared connection's directory is gone after a failed run."""
    from clusterctl.validate.run import Options, validate_slurm
    from clusterctl.validate.targets import stack_target
    from tests.validate.test_slurm import H100_OUTPUTS

    log, control_parent = stand_in_ssh
    monkeypatch.setenv("SSH_EXIT", "255")
    target = stack_target("azure-h100", H100_OUTPUTS)
    with pytest.raises(CouldNotRun, match=r"cannot reach azureuser@20\.1\.2\.3"):
        validate_slurm(target, Options())
    assert "connect" in log.read_text().splitlines()
    assert list(control_parent.iterdir()) == []
