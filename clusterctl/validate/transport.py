"""Commands on a remote scheduler through the user's own `ssh` binary.

Running `ssh` (not a Python SSH library) keeps ~/.ssh/config, the agent, ProxyJump and
certificates working exactly as they do for the user. BatchMode=yes: never prompt.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from clusterctl.validate import CouldNotRun

Runner = Callable[..., subprocess.CompletedProcess[str]]


@dataclass(frozen=True)
class SshTarget:
    host: str
    user: str | None = None
    port: int | None = None
    identity: str | None = None
    known_hosts: str | None = None
    config: str | None = None  # -F FILE; None: the user's own ~/.ssh/config
    options: tuple[str, ...] = ()  # extra `-o Key=Value` settings
    connect_timeout: int = 10

    @property
    def label(self) -> str:
        who = f"{self.user}@{self.host}" if self.user else self.host
        return f"{who}:{self.port}" if self.port else who

    def argv(self, remote: str) -> list[str]:
        return [*self._options(), self._destination(), "--", remote]

    def forward_argv(self, local_port: int, host: str, port: int) -> list[str]:
        """`ssh -N -L`: 127.0.0.1:local_port here reaches host:port as seen from this target
        (a compute node's port through the login node); ExitOnForwardFailure: a port that
        cannot be bound ends ssh instead of leaving a tunnel-less session up."""
        forward = f"127.0.0.1:{local_port}:{host}:{port}"
        return [*self._options(), "-N", "-o", "ExitOnForwardFailure=yes", "-L", forward,
                self._destination()]  # fmt: skip

    def _destination(self) -> str:
        return f"{self.user}@{self.host}" if self.user else self.host

    def _options(self) -> list[str]:
        argv = ["ssh"]
        if self.config:
            argv += ["-F", self.config]
        if self.identity:
            argv += ["-i", self.identity, "-o", "IdentitiesOnly=yes"]
        if self.known_hosts:
            argv += ["-o", f"UserKnownHostsFile={self.known_hosts}"]
            argv += ["-o", "StrictHostKeyChecking=yes"]
        if self.port:
            argv += ["-p", str(self.port)]
        argv += ["-o", "BatchMode=yes", "-o", f"ConnectTimeout={self.connect_timeout}"]
        argv += ["-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4"]
        for opt in self.options:
            argv += ["-o", opt]
        return argv


def parse_host(text: str) -> SshTarget:
    """`[user@]host[:port]` (an ssh config alias works as the host)."""
    user, _, rest = text.rpartition("@")
    host, port = rest, None
    if rest.count(":") == 1:
        host, _, p = rest.partition(":")
        if not p.isdigit():
            raise ValueError(f"--host {text!r}: port must be a number")
        port = int(p)
    if not host:
        raise ValueError(f"--host {text!r}: no host name")
    return SshTarget(host=host, user=user or None, port=port)


def quote(argv: Sequence[str]) -> str:
    return shlex.join(argv)


class Ssh:
    def __init__(self, target: SshTarget, runner: Runner = subprocess.run) -> None:
        self.target = target
        self._run = runner

    def run(
        self, command: str, *, input: str | None = None, timeout: float = 120.0, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run a shell command line remotely. Exit 255 (ssh itself failed) raises CouldNotRun."""
        argv = self.target.argv(command)
        try:
            proc = self._run(argv, capture_output=True, text=True, input=input, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise CouldNotRun(
                f"ssh {self.target.label}: no answer within {timeout:g} s running {command!r}"
            ) from None
        except FileNotFoundError:
            raise CouldNotRun("no `ssh` client on PATH: install OpenSSH") from None
        if proc.returncode == 255:
            raise CouldNotRun(f"cannot reach {self.target.label} over ssh: {_last(proc.stderr)}")
        if check and proc.returncode != 0:
            raise CouldNotRun(
                f"{command.split()[0]} on {self.target.label} failed ({proc.returncode}): "
                f"{_last(proc.stderr) or _last(proc.stdout)}"
            )
        return proc

    def check_reachable(self) -> None:
        self.run("true", timeout=self.target.connect_timeout + 10)


def _last(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else "(no message)"
