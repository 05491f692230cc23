"""The sbatch script (rendered for the azure-h100 stack, linted by shellcheck) and the Slurm
launcher's submit / wait / collect logic against recorded scheduler answers."""

from __future__ import annotations

import re
import subprocess

import pytest

from clusterctl.validate import CouldNotRun
from clusterctl.validate.run import Options, validate_slurm
from clusterctl.validate.slurm_launcher import SlurmJob, SlurmLauncher, pair_job, render_sbatch
from clusterctl.validate.targets import stack_target
from clusterctl.validate.transport import Ssh
from tests.conftest import need_tool
from tests.validate.conftest import DATA

# What `pulumi stack output --json` gives for azure-h100 (components/azure/slurm/slurm_cluster.py).
H100_OUTPUTS = {
    "schedulerAddress": "20.1.2.3",
    "adminUser": "azureuser",
    "scheduler": "slurm",
    "drainPrefix": "gpucl:",
    "partitions": [
        {
            "name": "gpu",
            "sku": "Standard_ND96isr_H100_v5",
            "nodes": 2,
            "gpusPerNode": 8,
            "scaleSets": ["h100-gpu-pg0"],
        }
    ],
}


def h100_job(**extra) -> SlurmJob:
    from clusterctl.validate.run import profile_env

    t = stack_target("azure-h100", H100_OUTPUTS)
    return SlurmJob(
        nodes=t.nodes,
        gpus_per_node=t.gpus_per_node,
        partition=t.partition,
        env=profile_env(t.sku),
        sku=t.sku,
        **extra,
    )


def test_stack_outputs_make_a_slurm_target() -> None:
    t = stack_target("azure-h100", H100_OUTPUTS)
    assert t.ssh.argv("true")[-3:] == ["azureuser@20.1.2.3", "--", "true"]
    assert (t.nodes, t.gpus_per_node, t.partition) == (2, 8, "gpu")


def test_sbatch_for_the_h100_stack() -> None:
    text = render_sbatch(h100_job(container_image="nvcr.io/nvidia/pytorch:24.07-py3"), "o.out")
    lines = text.splitlines()
    for want in (
        "#SBATCH --nodes=2",
        "#SBATCH --gpus-per-node=8",
        "#SBATCH --ntasks-per-node=8",
        "#SBATCH --partition=gpu",
        "#SBATCH --output=o.out",
        "export NCCL_ALGO=Ring",
        "export NCCL_DEBUG=INFO",
        "export NCCL_DEBUG_SUBSYS=INIT,NET,ENV",
        "export NCCL_TOPO_FILE=/opt/microsoft/ndv5-topo.xml",
        "export NCCL_IB_PCI_RELAXED_ORDERING=1",
    ):
        assert want in lines, want
    srun = next(line for line in lines if line.startswith("srun"))
    assert "--mpi=pmix" in srun and "--container-image=nvcr.io/nvidia/pytorch:24.07-py3" in srun
    assert "-b 8 -e 16G -f 2 -g 1 -c 1" in text


def test_host_nccl_tests_load_hpcx_before_srun_and_containers_do_not() -> None:
    lines = render_sbatch(h100_job(), "o.out").splitlines()
    load = lines.index("module load mpi/hpcx")
    srun = next(i for i, line in enumerate(lines) if line.startswith("srun"))
    assert lines.index(". /etc/profile.d/modules.sh") < load < srun
    boxed = render_sbatch(h100_job(container_image="nvcr.io/nvidia/pytorch:24.07-py3"), "o")
    assert "module load" not in boxed  # the image brings its own MPI


def test_single_node_has_no_ring_override_and_no_image_by_default() -> None:
    from dataclasses import replace

    text = render_sbatch(replace(h100_job(), nodes=1), "o.out")
    assert "NCCL_ALGO" not in text and "--container-image" not in text
    assert "NCCL_DEBUG" not in text  # one node: no network to prove


@pytest.mark.integration
@pytest.mark.parametrize(
    "job",
    [
        h100_job(container_image="nvcr.io/nvidia/pytorch:24.07-py3"),
        h100_job(),
        SlurmJob(
            nodes=4,
            benchmark="probe",
            nodelist=("n1", "n2", "n3", "n4"),
            python="/opt/venv/bin/python",
            pythonpath="/src/repo dir",
        ),
    ],
    ids=["h100-pyxis", "h100-host", "probe"],
)
def test_sbatch_passes_shellcheck(job, tmp_path) -> None:
    shellcheck = need_tool("shellcheck")
    path = tmp_path / "job.sbatch"
    path.write_text(render_sbatch(job, "/home/u/clusterctl-validate/x.out"))
    proc = subprocess.run([shellcheck, "-s", "bash", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


class RecordedSsh(Ssh):
    """Answers commands from a script of (prefix, stdout, rc); records what was asked."""

    def __init__(self, answers: list[tuple[str, str, int]]) -> None:
        self.answers = answers
        self.asked: list[str] = []
        self.inputs: list[str | None] = []
        from clusterctl.validate.transport import SshTarget

        self.target = SshTarget("sched")

    def run(self, command, *, input=None, timeout=120.0, check=True):
        self.asked.append(command)
        self.inputs.append(input)
        for i, (prefix, out, rc) in enumerate(self.answers):
            if command.startswith(prefix):
                del self.answers[i]
                if check and rc:
                    raise CouldNotRun(f"{command.split()[0]} failed")
                return subprocess.CompletedProcess(command, rc, out, "boom" if rc else "")
        raise AssertionError(f"unexpected command {command!r}")


def test_submit_wait_collect() -> None:
    log = (DATA / "nccl_tests_issue309_h100_2node.txt").read_text()
    ssh = RecordedSsh(
        [
            ("mkdir -p", "4242\n", 0),
            ("squeue", "4242 PENDING Resources\n", 0),
            ("squeue", "4242 RUNNING None\n", 0),
            ("squeue", "", 0),
            ("sacct", "COMPLETED\n", 0),
            ("cat ", log, 0),
            # the same run with NCCL's default algorithm
            ("mkdir -p", "4243\n", 0),
            ("squeue", "", 0),
            ("sacct", "COMPLETED\n", 0),
            ("cat ", log, 0),
        ]
    )
    launcher = SlurmLauncher(ssh, sleep=lambda _: None)
    outcome = validate_slurm(stack_target("azure-h100", H100_OUTPUTS), Options(), launcher=launcher)
    assert outcome.status == "pass" and outcome.exit_code == 0
    assert outcome.default_algorithm is not None and outcome.default_algorithm.status == "pass"
    assert "sbatch --parsable" in ssh.asked[0]
    assert "#SBATCH --nodes=2" in (ssh.inputs[0] or "")
    # what the report shows: the benchmark's command as the script runs it, and the parsed run
    assert outcome.command is not None and outcome.command.startswith("srun --mpi=pmix ")
    assert outcome.command in " ".join((ssh.inputs[0] or "").replace("\\\n", " ").split())
    assert outcome.runs[0].nccl_version == "2.26.2+cuda12.8" and outcome.sku is not None


def test_job_that_never_starts_is_cancelled_and_could_not_run() -> None:
    ssh = RecordedSsh(
        [("mkdir -p", "77\n", 0)]
        + [("squeue", "77 PENDING ReqNodeNotAvail\n", 0)] * 5
        + [("scancel 77", "", 0)]
    )
    clock = iter(range(0, 1000, 30))
    launcher = SlurmLauncher(ssh, sleep=lambda _: None)
    import clusterctl.validate.slurm_launcher as sl

    real = sl.time.monotonic
    sl.time.monotonic = lambda: float(next(clock))  # type: ignore[assignment]
    try:
        with pytest.raises(CouldNotRun, match=r"never started.*ReqNodeNotAvail"):
            launcher.run(h100_job(), timeout_s=100)
    finally:
        sl.time.monotonic = real  # type: ignore[assignment]
    assert any(c.startswith("scancel 77") for c in ssh.asked)


def test_a_node_that_stops_responding_ends_the_wait_naming_it() -> None:
    """A killed slurmd kept validate waiting for its whole timeout (37 min); now the
    job's nodes are watched and the wait ends once one has been unusable for NODE_GRACE_S."""
    import clusterctl.validate.slurm_launcher as sl

    job = pair_job(h100_job(), "gpu-pg0-1", "gpu-pg0-2")
    ssh = RecordedSsh(
        [("mkdir -p", "81\n", 0)]
        + [("squeue", "81 CONFIGURING None\n", 0)] * 6
        + [("sinfo -h -N -n gpu-pg0-1,gpu-pg0-2", "gpu-pg0-1 allocated\ngpu-pg0-2 allocated*\n", 0)]
        * 6
        + [("scancel 81", "", 0)]
    )
    clock = iter(range(0, 10_000, 20))
    real = sl.time.monotonic
    sl.time.monotonic = lambda: float(next(clock))  # type: ignore[assignment]
    try:
        with pytest.raises(CouldNotRun, match=r"node gpu-pg0-2 \(allocated \(not responding\)\)"):
            SlurmLauncher(ssh, sleep=lambda _: None).run(job, timeout_s=1800)
    finally:
        sl.time.monotonic = real  # type: ignore[assignment]
    assert any(c.startswith("scancel 81") for c in ssh.asked)
    # well before the job's timeout: the clock advanced 20 s per reading
    assert len([c for c in ssh.asked if c.startswith("squeue")]) <= 6


def test_job_files_are_removed_after_a_timeout_too() -> None:
    """Validation left its job files behind after a failure or a timeout."""
    import clusterctl.validate.slurm_launcher as sl

    ssh = RecordedSsh(
        [("mkdir -p", "77\n", 0)]
        + [("squeue", "77 PENDING Resources\n", 0)] * 5
        + [("scancel 77", "", 0), ("rm -f ", "", 0)]
    )
    clock = iter(range(0, 1000, 30))
    real = sl.time.monotonic
    sl.time.monotonic = lambda: float(next(clock))  # type: ignore[assignment]
    try:
        with pytest.raises(CouldNotRun, match="never started"):
            SlurmLauncher(ssh, sleep=lambda _: None, keep_files=False).run(
                h100_job(), timeout_s=100
            )
    finally:
        sl.time.monotonic = real  # type: ignore[assignment]
    rm = next(c for c in ssh.asked if c.startswith("rm -f "))
    assert ".sbatch" in rm and ".out" in rm


def test_a_refused_second_job_cancels_the_first() -> None:
    ssh = RecordedSsh([("mkdir -p", "5\n", 0), ("mkdir -p", "", 1), ("scancel 5", "", 0)])
    jobs = [pair_job(h100_job(), "a", "b"), pair_job(h100_job(), "c", "d")]
    with pytest.raises(CouldNotRun, match="sbatch refused"):
        SlurmLauncher(ssh, sleep=lambda _: None).run_many(jobs)
    assert "scancel 5" in ssh.asked


def test_sbatch_refusal_is_could_not_run() -> None:
    ssh = RecordedSsh([("mkdir -p", "", 1)])
    with pytest.raises(CouldNotRun, match=r"sbatch refused the job"):
        SlurmLauncher(ssh).run(h100_job())


def test_job_without_output_is_could_not_run() -> None:
    ssh = RecordedSsh(
        [
            ("mkdir -p", "9\n", 0),
            ("squeue", "", 0),
            ("sacct", "", 1),
            ("scontrol show job 9", "JobId=9 JobState=FAILED Reason=x", 0),
            ("cat ", "", 0),
        ]
    )
    launcher = SlurmLauncher(ssh, sleep=lambda _: None)
    with pytest.raises(CouldNotRun, match=r"ended FAILED without output"):
        validate_slurm(stack_target("azure-h100", H100_OUTPUTS), Options(), launcher=launcher)


def _short_log(drop) -> str:
    """The 2-node H100 log with the `# Rank` lines that `drop(host, device)` picks removed and
    the rest renumbered from 0, as nccl-tests numbers the ranks that ran."""
    lines, rank = [], 0
    for line in (DATA / "nccl_tests_issue309_h100_2node.txt").read_text().splitlines():
        m = re.match(r"#\s+Rank\s+\d+ (.* on (\S+) device\s+(\d+) .*)", line)
        if m:
            if drop(m[2], int(m[3])):
                continue
            line, rank = f"#  Rank {rank:2d} {m[1]}", rank + 1
        lines.append(line)
    return "\n".join(lines) + "\n"


def _validate_output(log: str):
    """A stack validation whose job prints `log`; a failing verdict's 2-node pair (the same two
    hosts) prints it again."""
    job = [("mkdir -p", "4242\n", 0), ("squeue", "", 0), ("sacct", "COMPLETED\n", 0)]
    # the Ring run, the default-algorithm run, the pair
    ssh = RecordedSsh([*job, ("cat ", log, 0)] * 3)
    launcher = SlurmLauncher(ssh, sleep=lambda _: None)
    return validate_slurm(stack_target("azure-h100", H100_OUTPUTS), Options(), launcher=launcher)


@pytest.mark.parametrize(
    ("drop", "named"),
    [
        (lambda host, dev: dev == 7, "bm-h100-01 ran 7 of 8 GPUs"),  # each node short of one GPU
        (lambda host, dev: host == "bm-h100-02", "ranks ran on 1 of 2 nodes (bm-h100-01)"),
    ],
)
def test_a_stack_run_short_of_gpus_fails_naming_what_is_missing(drop, named) -> None:
    outcome = _validate_output(_short_log(drop))
    assert outcome.status == "fail"
    text = " ".join(o.message for v in outcome.verdicts for o in v.findings)
    assert named in text, text


def test_a_log_gets_one_plain_line_per_job_state_change() -> None:
    """Not a terminal (CI): no spinner, a plain line each time the job's state changes, with the
    seconds waited; nothing repeated while the state holds."""
    import io

    from rich.console import Console

    ssh = RecordedSsh(
        [
            ("squeue", "4242 PENDING Resources\n", 0),
            ("squeue", "4242 PENDING Resources\n", 0),
            ("squeue", "4242 RUNNING None\n", 0),
            ("squeue", "4242 RUNNING None\n", 0),
            ("squeue", "", 0),
            ("sacct", "COMPLETED\n", 0),
        ]
    )
    buf = io.StringIO()
    launcher = SlurmLauncher(ssh, sleep=lambda _: None)
    launcher.console = Console(file=buf, force_terminal=False, width=200)
    assert launcher.wait(["4242"], timeout_s=60) == ["COMPLETED"]
    lines = buf.getvalue().splitlines()
    assert [re.sub(r" \(\d+ s\)$", "", x) for x in lines] == [
        "NCCL job(s) 4242: 4242 PENDING Resources",
        "NCCL job(s) 4242: 4242 RUNNING",
        "NCCL job(s) 4242: 4242 COMPLETED",
    ], lines
    assert all(re.search(r" \(\d+ s\)$", x) for x in lines), lines
    assert "\x1b" not in buf.getvalue()
