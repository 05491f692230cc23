"""`clusterctl notebook`: the request checked against the stack, the commands it sends over SSH,
JupyterLab's URL read from its log, the Kubernetes Job it renders, and the job cancelled on
Ctrl-C, SIGTERM, the job's end or a broken tunnel (a fake transport stands for the cluster)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from dataclasses import dataclass, field

import pytest

from clusterctl.errors import UserError
from clusterctl.notebook import session as session_mod
from clusterctl.notebook.kube import QUEUE_LABEL, KubeNotebook, notebook_job, queue_of
from clusterctl.notebook.request import NotebookRequest, notebook_request, parse_minutes
from clusterctl.notebook.session import Clock, Limits, run_notebook
from clusterctl.notebook.slurm import (
    SlurmNotebook,
    batch_script,
    parse_squeue,
    parse_url,
    sbatch_command,
)
from clusterctl.spec.catalog import catalog
from clusterctl.spec.load import load_stack_spec
from clusterctl.validate.transport import Ssh, SshTarget

MIG7 = "partitions[0].sharing={mig: {1g.10gb: 7}}"

# What JupyterLab 4 (jupyter_server 2) prints once it serves, bound to one address.
LAB_LOG = """\
[I 2026-11-28 16:01:02.345 ServerApp] jupyterlab | extension was successfully loaded.
[I 2026-11-28 16:01:02.350 ServerApp] Serving notebooks from local directory: /home/ann
[I 2026-11-28 16:01:02.350 ServerApp] Jupyter Server 2.17.0 is running at:
[I 2026-11-28 16:01:02.350 ServerApp] http://10.1.2.7:41234/lab?token=0f3a9c51b2e84d7a6c1e
[I 2026-11-28 16:01:02.350 ServerApp]     http://127.0.0.1:41234/lab?token=0f3a9c51b2e84d7a6c1e
[C 2026-11-28 16:01:02.352 ServerApp]
    To access the server, open this file in a browser:
        file:///tmp/clusterctl-notebook-17/jpserver-99-open.html
    Or copy and paste one of these URLs:
        http://10.1.2.7:41234/lab?token=0f3a9c51b2e84d7a6c1e
"""


def _team(*sets: str):
    spec, _ = load_stack_spec("azure-team", list(sets))
    return spec


# --- the request --------------------------------------------------------------------------


def test_the_request_defaults_to_one_gpu_on_the_first_partition_for_four_hours() -> None:
    spec = _team()
    req = notebook_request(spec, catalog(), "azure-team")
    assert req == NotebookRequest(spec.partitions[0].name, "gpu:1", 240)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"gpus": 1, "gres": "gpu:1"}, "--gpus and --gres"),
        ({"partition": "nosuch"}, "--partition nosuch"),
        ({"gpus": 9}, "--gpus 9"),
        ({"gres": "gpu:1g.10gb:1"}, "--gres gpu:1g.10gb:1"),  # no MIG layout on this partition
        ({"gres": "shard:1"}, "--gres shard:1"),
        ({"gres": "gpu-1"}, "--gres gpu-1"),
        ({"time": "4 hours"}, "--time 4 hours"),
        ({"time": "0h"}, "--time 0h"),
    ],
)
def test_bad_input_is_one_line_naming_the_flag(kwargs, field) -> None:
    with pytest.raises(UserError) as exc:
        notebook_request(_team(), catalog(), "azure-team", **kwargs)
    (line,) = exc.value.problems
    assert line.startswith(field), line


def test_a_mig_slice_is_asked_for_by_its_profile_and_bounded_by_the_layout() -> None:
    spec = _team(MIG7)
    req = notebook_request(spec, catalog(), "azure-team", gres="gpu:1g.10gb:1", time="90m")
    assert (req.gres, req.minutes) == ("gpu:1g.10gb:1", 90)
    assert req.k8s_resources == {"nvidia.com/mig-1g.10gb": 1}
    per_node = catalog().gpus_per_node(spec.partitions[0].sku) or 0
    with pytest.raises(UserError, match="has 56 of those" if per_node == 8 else "of those"):
        notebook_request(spec, catalog(), "azure-team", gres=f"gpu:1g.10gb:{7 * per_node + 1}")


def test_durations() -> None:
    assert [parse_minutes(t) for t in ("90", "90m", "4h", "1d")] == [90, 90, 240, 1440]


# --- the commands sent over SSH --------------------------------------------------------------


def test_the_job_is_submitted_with_the_request_and_its_log_kept_private() -> None:
    cmd = sbatch_command(NotebookRequest("gpu", "gpu:1g.10gb:1", 90))
    prefix, _, sbatch = cmd.rpartition(" && ")
    assert prefix.startswith("umask 077 && mkdir -p .clusterctl/notebooks")
    argv = shlex.split(sbatch)
    assert argv[:2] == ["sbatch", "--parsable"]
    wanted = ["--partition=gpu", "--gres=gpu:1g.10gb:1", "--time=90", "--nodes=1",
              "--output=.clusterctl/notebooks/%j.log",
              "--job-name=clusterctl-notebook"]  # fmt: skip
    assert set(wanted) <= set(argv), argv


def test_the_batch_script_installs_the_pin_once_and_leaves_nothing_on_the_node() -> None:
    script = batch_script("4.6.6")
    assert '"jupyterlab==4.6.6"' in script
    assert 'venv="$HOME/.clusterctl/jupyterlab-4.6.6"' in script
    assert "flock 9" in script and '"$venv/.complete"' in script  # one install, finished or redone
    assert "trap cleanup EXIT" in script and "trap 'exit 143' TERM" in script
    assert 'rm -rf "$rt"' in script and 'JUPYTER_RUNTIME_DIR="$rt"' in script
    assert '--ip="$addr"' in script and "--no-browser" in script
    assert "token=" not in script  # JupyterLab's own random token, never on a command line
    proc = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
    assert proc.returncode == 0, proc.stderr


def test_the_tunnel_goes_through_the_login_node_to_the_node_address() -> None:
    target = SshTarget("login.example", user="ann", identity="/k/ann")
    argv = target.forward_argv(8899, "10.1.2.7", 41234)
    assert argv[0] == "ssh" and argv[-1] == "ann@login.example"
    assert argv[argv.index("-L") + 1] == "127.0.0.1:8899:10.1.2.7:41234"
    assert "-N" in argv and "ExitOnForwardFailure=yes" in argv and "BatchMode=yes" in argv
    assert target.argv("true")[:-3] == argv[: len(target.argv("true")) - 3]  # the same options


def test_the_url_is_read_from_jupyterlabs_log() -> None:
    url = parse_url(LAB_LOG)
    assert url is not None
    assert (url.host, url.port, url.token) == ("10.1.2.7", 41234, "0f3a9c51b2e84d7a6c1e")
    assert url.local(8899) == "http://127.0.0.1:8899/lab?token=0f3a9c51b2e84d7a6c1e"
    assert parse_url(LAB_LOG.split("is running at")[0]) is None  # not serving yet
    assert parse_url("http://127.0.0.1:8888/lab?token=ab") is None  # loopback only: unreachable


def test_squeue_lines() -> None:
    assert parse_squeue("PENDING|Resources|\n") == session_mod.JobState("PENDING", "Resources", "")
    assert parse_squeue("RUNNING|None|gpu-1\n").node == "gpu-1"
    assert parse_squeue("") is None


# --- the session, against a fake cluster -------------------------------------------------------


@dataclass
class FakeCluster:
    """Answers the notebook's SSH commands as a login node would: the job pends twice, runs,
    JupyterLab serves on the third log read; scancel takes it out of the queue."""

    pending: int = 2
    log_reads_before_url: int = 2
    ends_after: int | None = None  # squeue calls while running before the time limit ends it
    commands: list[str] = field(default_factory=list)
    cancelled: bool = False
    running_polls: int = 0

    def __call__(self, argv, **kw) -> subprocess.CompletedProcess[str]:
        cmd = argv[-1]
        self.commands.append(cmd)
        return subprocess.CompletedProcess(argv, 0, self._answer(cmd), "")

    def _answer(self, cmd: str) -> str:
        if "sbatch" in cmd:
            return "17\n"
        if cmd.startswith("squeue"):
            return self._squeue()
        if cmd.startswith("cat "):
            self.log_reads_before_url -= 1
            return LAB_LOG if self.log_reads_before_url < 0 else "clusterctl-notebook: installing\n"
        if cmd.startswith("scancel"):
            self.cancelled = True
        return ""

    def _squeue(self) -> str:
        if self.cancelled:
            return ""
        if self.pending > 0:
            self.pending -= 1
            return "PENDING|Resources|\n"
        self.running_polls += 1
        if self.ends_after is not None and self.running_polls > self.ends_after:
            return ""
        return "RUNNING|None|gpu-1\n"


class FakeTunnel:
    def __init__(self, argv, **kw) -> None:
        self.argv = argv
        self.returncode: int | None = None
        self.terminated = False

    def poll(self) -> int | None:
        return self.returncode

    def terminate(self) -> None:
        self.terminated = True
        self.returncode = -15

    def wait(self, timeout=None) -> int:
        return self.returncode or 0

    def kill(self) -> None:
        self.returncode = -9


def _run(cluster: FakeCluster, *, interrupt_after: int | None = None, signum: int | None = None):
    said: list[str] = []
    urls: list[str] = []
    tunnels: list[FakeTunnel] = []
    ticks = {"n": 0}

    def sleep(_s: float) -> None:
        ticks["n"] += 1
        if interrupt_after is not None and tunnels and ticks["n"] >= interrupt_after:
            if signum is not None:
                os.kill(os.getpid(), signum)  # a real signal to this process, mid-wait
                return
            raise KeyboardInterrupt  # what Ctrl-C raises in the wait

    def popen(argv, **kw):
        tunnels.append(FakeTunnel(argv))
        return tunnels[-1]

    nb = SlurmNotebook(Ssh(SshTarget("login", user="ann"), runner=cluster),
                       NotebookRequest("gpu", "gpu:1", 60), "4.6.6")  # fmt: skip
    code = run_notebook(
        nb, say=said.append, show_url=urls.append, popen=popen, local_port=8899,
        limits=Limits(start_s=100, url_s=100, cancel_s=10, poll_s=1, hold_poll_s=1),
        clock=Clock(sleep=sleep, now=lambda: float(ticks["n"])),
    )  # fmt: skip
    return code, said, urls, tunnels


def test_ctrl_c_cancels_the_job_stops_the_tunnel_and_says_so() -> None:
    cluster = FakeCluster()
    code, said, urls, tunnels = _run(cluster, interrupt_after=8)
    assert code == 0
    assert urls == ["http://127.0.0.1:8899/lab?token=0f3a9c51b2e84d7a6c1e"]
    assert "127.0.0.1:8899:10.1.2.7:41234" in tunnels[0].argv and tunnels[0].terminated
    assert "scancel 17" in cluster.commands
    assert cluster.commands[-1] == "rm -f .clusterctl/notebooks/17.log"  # after it left the queue
    assert any("PENDING (Resources)" in line for line in said), said  # the wait's progress
    assert "job 17 cancelled (Ctrl-C)" in said[-1], said


def test_sigterm_cancels_the_job_too() -> None:
    cluster = FakeCluster()

    def unhandled(*_: object) -> None:
        raise AssertionError("SIGTERM reached the process's own handler, not the notebook's")

    before = signal.signal(signal.SIGTERM, unhandled)
    try:
        code, said, urls, tunnels = _run(cluster, interrupt_after=8, signum=signal.SIGTERM)
        assert signal.getsignal(signal.SIGTERM) is unhandled  # restored afterwards
    finally:
        signal.signal(signal.SIGTERM, before)
    assert code == 0 and urls and tunnels[0].terminated
    assert "scancel 17" in cluster.commands and "job 17 cancelled" in said[-1], said


def test_the_time_limit_ends_the_notebook_and_it_says_so() -> None:
    cluster = FakeCluster(ends_after=4)
    code, said, urls, tunnels = _run(cluster)
    assert code == 0 and urls and tunnels[0].terminated
    assert "its time limit" in said[-1], said


def test_a_job_that_never_starts_is_cancelled_within_the_bound() -> None:
    cluster = FakeCluster(pending=10_000)
    code, said, urls, tunnels = _run(cluster)
    assert code == 3 and not urls and not tunnels
    assert "scancel 17" in cluster.commands
    assert "still PENDING (Resources) after 100 s" in said[-1], said


def test_a_broken_tunnel_cancels_the_job() -> None:
    cluster = FakeCluster()

    def popen_dead(argv, **kw):
        tunnel = FakeTunnel(argv)
        tunnel.returncode = 255
        return tunnel

    nb = SlurmNotebook(Ssh(SshTarget("login"), runner=cluster), NotebookRequest("g", "gpu:1", 5),
                       "4.6.6")  # fmt: skip
    said: list[str] = []
    code = run_notebook(nb, say=said.append, show_url=lambda _u: None, popen=popen_dead,
                        limits=Limits(poll_s=0, hold_poll_s=0),
                        clock=Clock(sleep=lambda _s: None))  # fmt: skip
    assert code == 3 and "scancel 17" in cluster.commands
    assert "the tunnel ended (ssh exit 255)" in said[-1]


# --- Kubernetes ---------------------------------------------------------------------------


def _aks(*sets: str):
    spec, _ = load_stack_spec("aks-h100", list(sets))
    return spec


def test_a_kubernetes_stack_without_a_queue_is_refused_in_one_line() -> None:
    with pytest.raises(UserError) as exc:
        queue_of(_aks(), "aks-h100")
    (line,) = exc.value.problems
    assert "kubernetes.kueue" in line and "aks-h100" in line


def test_the_kubernetes_job_is_queued_bounded_and_asks_for_the_request() -> None:
    spec = _aks("kubernetes.kueue=true")
    queue = queue_of(spec, "aks-h100")
    req = NotebookRequest(spec.partitions[0].name, "gpu:2", 90)
    job = notebook_job(spec, req, name="clusterctl-notebook-abc", queue=queue,
                       image="nvcr.io/nvidia/pytorch:25.12-py3", version="4.6.6")  # fmt: skip
    assert job["kind"] == "Job" and job["metadata"]["labels"][QUEUE_LABEL] == queue
    assert job["spec"]["activeDeadlineSeconds"] == 90 * 60 and job["spec"]["backoffLimit"] == 0
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 2}
    assert "jupyterlab==4.6.6" in container["command"][-1]
    assert pod["nodeSelector"] and pod["tolerations"]  # on the partition's GPU nodes
    nb = KubeNotebook("/k/config", job)
    nb._pod = "clusterctl-notebook-abc-xyz"
    argv = nb.tunnel_argv(parse_url(LAB_LOG), 8899)  # type: ignore[arg-type]
    assert argv[:3] == ["kubectl", "--kubeconfig", "/k/config"]
    assert argv[-3:] == ["port-forward", "pod/clusterctl-notebook-abc-xyz", "8899:41234"]


def test_an_unreachable_login_node_submits_nothing_and_exits_3() -> None:
    def unreachable(argv, **kw):
        return subprocess.CompletedProcess(argv, 255, "", "ssh: connect to host login: timed out")

    nb = SlurmNotebook(Ssh(SshTarget("login"), runner=unreachable),
                       NotebookRequest("g", "gpu:1", 5), "4.6.6")  # fmt: skip
    said: list[str] = []
    code = run_notebook(nb, say=said.append, show_url=lambda _u: None,
                        clock=Clock(sleep=lambda _s: None))  # fmt: skip
    assert code == 3
    assert said[-1].startswith("notebook: no job submitted (cannot reach login over ssh"), said


@dataclass
class FlakyCluster(FakeCluster):
    """A login that fails once while the notebook serves: the notebook stays up."""

    flaked: bool = False

    def __call__(self, argv, **kw) -> subprocess.CompletedProcess[str]:
        if self.running_polls >= 3 and not self.flaked and argv[-1].startswith("squeue"):
            self.flaked = True
            return subprocess.CompletedProcess(argv, 255, "", "Connection reset")
        return super().__call__(argv, **kw)


def test_one_failed_look_at_the_job_does_not_end_the_notebook() -> None:
    cluster = FlakyCluster(ends_after=5)
    code, said, urls, _ = _run(cluster)
    assert cluster.flaked and code == 0 and urls
    assert "its time limit" in said[-1], said
