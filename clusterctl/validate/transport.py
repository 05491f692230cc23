"""Commands on a remote scheduler through the user's own `ssh` binary.

Running `ssh` (not a Python SSH library) keeps ~/.ssh/config, the agent, ProxyJump and
certificates working exactly as they do for the user. BatchMode=yes: never prompt.

`Ssh(reuse=True)` multiplexes every command over one connection (OpenSSH ControlMaster,
ssh_config(5)): a localisation round at 1,024 nodes submits, polls and reads hundreds of pair
jobs, each of which would otherwise open its own connection (a handshake, an auth, an sshd fork
and a log line each).
The control socket lives in a directory of this run's own (mode 0700, so no other user can
ride the connection), the master outlives its last client by at most CONTROL_PERSIST_S, and
`close()` stops it and removes the directory, on an error too.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from clusterctl.validate import CouldNotRun

Runner = Callable[..., subprocess.CompletedProcess[str]]

CONTROL_PERSIST_S = 60
"""How long an idle master connection stays up after its last command (the launcher polls every
few seconds; a run killed outright leaves nothing behind for longer than this)."""


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

    def argv(self, remote: str, extra: Sequence[str] = ()) -> list[str]:
        return [*self.ssh_options(extra), self.destination, "--", remote]

    def forward_argv(self, local_port: int, host: str, port: int) -> list[str]:
        """`ssh -N -L`: 127.0.0.1:local_port here reaches host:port as seen from this target
        (a compute node's port through the login node); ExitOnForwardFailure: a port that
        cannot be bound ends ssh instead of leaving a tunnel-less session up."""
        forward = f"127.0.0.1:{local_port}:{host}:{port}"
        return [*self.ssh_options(()), "-N", "-o", "ExitOnForwardFailure=yes", "-L", forward,
                self.destination]  # fmt: skip

    @property
    def destination(self) -> str:
        return f"{self.user}@{self.host}" if self.user else self.host

    def ssh_options(self, extra: Sequence[str]) -> list[str]:
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
        return argv + list(extra)


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
    def __init__(
        self, target: SshTarget, runner: Runner = subprocess.run, *, reuse: bool = False
    ) -> None:
        self.target = target
        self._run = runner
        self._reuse = reuse
        self._control_dir: str | None = None

    def __enter__(self) -> Ssh:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _control(self) -> list[str]:
        """The ControlMaster options, the socket directory made on first use. One Ssh talks to
        one target, so the socket needs no %C hash in its name; a short path keeps it under
        the 104-byte limit of a Unix socket's name on macOS."""
        if not self._reuse:
            return []
        if self._control_dir is None:
            self._control_dir = tempfile.mkdtemp(prefix="gpucl-ssh-")  # mode 0700
        return [
            "-o", "ControlMaster=auto",
            "-o", f"ControlPath={self._control_dir}/master",
            "-o", f"ControlPersist={CONTROL_PERSIST_S}",
        ]  # fmt: skip

    def close(self) -> None:
        """Stops the master connection (`ssh -O exit`) and removes the socket directory."""
        if self._control_dir is None:
            return
        argv = [*self.target.ssh_options(self._control()), "-O", "exit", self.target.destination]
        try:
            self._run(argv, capture_output=True, text=True, timeout=15)
        except (OSError, subprocess.TimeoutExpired):
            pass  # no master running, or it hangs: ControlPersist ends it
        finally:
            shutil.rmtree(self._control_dir, ignore_errors=True)
            self._control_dir = None

    def run(
        self, command: str, *, input: str | None = None, timeout: float = 120.0, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run a shell command line remotely. Exit 255 (ssh itself failed) raises CouldNotRun."""
        argv = self.target.argv(command, self._control())
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
