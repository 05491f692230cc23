"""An unreachable scheduler is `could not run`: exit 2 with one clear line, quickly."""

from __future__ import annotations

import socket
import time

import pytest

from clusterctl.validate import CouldNotRun
from clusterctl.validate.transport import Ssh, SshTarget, parse_host
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
