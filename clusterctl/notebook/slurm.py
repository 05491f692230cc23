"""A notebook on Slurm: a batch job that runs JupyterLab on its node, reached through the login
node with `ssh -L`. Every remote command goes through the validate SSH transport (the user's own
`ssh`, their keys and config), as the invoking user.

JupyterLab comes from PyPI at the pin in config/versions.yaml (`notebook.jupyterlab`), installed
once into a venv in the user's home (shared by every node), under flock so two first notebooks
do not install over each other; a marker file says the install finished.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from clusterctl.notebook.request import NotebookRequest
from clusterctl.validate.transport import Ssh, SshTarget

JOB_NAME = "clusterctl-notebook"
LOG_DIR = ".clusterctl/notebooks"
"""Relative to the user's home, where ssh commands and the batch job start."""
URL = re.compile(
    r"(?P<url>https?://(?P<host>[0-9A-Za-z.\-\[\]:]+?):(?P<port>[0-9]+)/(?P<path>lab|tree)?"
    r"\?token=(?P<token>[0-9a-f]+))"
)

# The batch script. JupyterLab binds the node's own address (what the login node reaches) and
# prints its URL with that address and, when it made the token itself, the token in full
# (jupyter_server 2.21 serverapp.py `_get_urlparts`; auth/identity.py `_token_default`: 24 random
# bytes, hex). JUPYTER_TOKEN from the user's environment would print `token=...` instead: unset.
# Slurm's scancel or time limit sends SIGTERM to every process of the job (SchedMD, scancel(1),
# KillWait): the TERM trap ends the script, the EXIT trap stops JupyterLab and removes its runtime
# dir (kernel connection files).
SCRIPT = """#!/bin/bash
set -u
umask 077
venv="$HOME/.clusterctl/jupyterlab-{version}"
rt="${{TMPDIR:-/tmp}}/{job_name}-$SLURM_JOB_ID"
# the address of the interface the default route leaves by: the node's own on the cluster network
# (connect() on a UDP socket sends nothing)
ADDR='import socket; s = socket.socket(2, 2); s.connect(("10.255.255.255", 1))
print(s.getsockname()[0])'

lab=""
cleanup() {{ [ -n "$lab" ] && kill "$lab" 2>/dev/null; wait; rm -rf "$rt"; }}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP
mkdir -p "$HOME/.clusterctl" "$rt"
exec 9>"$venv.lock"
flock 9
if [ ! -e "$venv/.complete" ]; then
  echo "{job_name}: installing jupyterlab=={version} into $venv (first use)"
  rm -rf "$venv"
  python3 -m venv "$venv" &&
    "$venv/bin/pip" install -q --disable-pip-version-check "jupyterlab=={version}" &&
    touch "$venv/.complete" || {{ echo "{job_name}: could not install jupyterlab"; exit 1; }}
fi
flock -u 9
addr=$(python3 -c "$ADDR" 2>/dev/null || hostname -I | awk '{{print $1}}')
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')
export JUPYTER_RUNTIME_DIR="$rt"
unset JUPYTER_TOKEN JUPYTER_TOKEN_FILE
echo "{job_name}: JupyterLab on $addr:$port"
"$venv/bin/jupyter-lab" --no-browser --ip="$addr" --port="$port" --ServerApp.root_dir="$HOME" &
lab=$!
wait "$lab"
"""


def batch_script(version: str) -> str:
    return SCRIPT.format(version=version, job_name=JOB_NAME)


def log_path(job: str) -> str:
    return f"{LOG_DIR}/{job}.log"


def sbatch_command(request: NotebookRequest) -> str:
    """The job's submission: the script comes on stdin; its output (JupyterLab's log, with the
    token) in a file only the user can read."""
    argv = ["sbatch", "--parsable", f"--job-name={JOB_NAME}", "--nodes=1", "--ntasks=1",
            f"--partition={request.partition}", f"--gres={request.gres}",
            f"--time={request.minutes}", f"--output={LOG_DIR}/%j.log"]  # fmt: skip
    return f"umask 077 && mkdir -p {LOG_DIR} && {shlex.join(argv)}"


def squeue_command(job: str) -> str:
    return shlex.join(["squeue", "--noheader", f"--jobs={job}", "--format=%T|%r|%N"])


@dataclass(frozen=True)
class JobState:
    state: str
    reason: str
    node: str


def parse_squeue(text: str) -> JobState | None:
    """squeue's line for the job; None once it has left the queue."""
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 3 and parts[0]:
            return JobState(*parts)
    return None


@dataclass(frozen=True)
class LabUrl:
    host: str
    port: int
    path: str
    token: str

    def local(self, port: int) -> str:
        return f"http://127.0.0.1:{port}/{self.path}?token={self.token}"


def parse_url(log: str) -> LabUrl | None:
    """The URL JupyterLab prints once it serves (`http://ADDR:PORT/lab?token=...`), preferring
    the node's address over a loopback one; None while it is not up yet."""
    found = [m for m in URL.finditer(log) if not m["host"].startswith(("127.", "localhost"))]
    if not found:
        return None
    m = found[0]
    return LabUrl(m["host"].strip("[]"), int(m["port"]), m["path"] or "lab", m["token"])


class SlurmNotebook:
    """The notebook's job on a Slurm cluster, seen through one SSH target (the login node)."""

    def __init__(self, ssh: Ssh, request: NotebookRequest, version: str) -> None:
        self.ssh = ssh
        self.request = request
        self.version = version
        self.job = ""

    @property
    def target(self) -> SshTarget:
        return self.ssh.target

    def submit(self) -> str:
        proc = self.ssh.run(sbatch_command(self.request), input=batch_script(self.version))
        self.job = proc.stdout.strip().split(";")[0]
        return self.job

    def state(self) -> JobState | None:
        proc = self.ssh.run(squeue_command(self.job), check=False, timeout=60)
        return parse_squeue(proc.stdout) if proc.returncode == 0 else None

    def log(self) -> str:
        return self.ssh.run(f"cat {log_path(self.job)}", check=False, timeout=60).stdout

    def tunnel_argv(self, url: LabUrl, local_port: int) -> list[str]:
        return self.target.forward_argv(local_port, url.host, url.port)

    def cancel(self) -> None:
        self.ssh.run(shlex.join(["scancel", self.job]), check=False, timeout=60)

    def remove_log(self) -> None:
        self.ssh.run(f"rm -f {log_path(self.job)}", check=False, timeout=60)
