"""`validate --train`: the parser and judge on recorded job outputs (tests/data/train), the batch
script for the cloud and the sandbox, the train_slurm flow with a fake launcher, and the CLI's
refusals, --from-log and the history's calibrated floor."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from clusterctl.train.judge import STRAGGLER_RATIO, Floor, judge, metrics, percentile, stragglers
from clusterctl.train.model import PRESETS
from clusterctl.train.parse import parse
from clusterctl.train.report import to_json, to_junit
from clusterctl.validate.slurm_launcher import JobResult, NodeLost
from clusterctl.validate.targets import Benchmark, SlurmTarget
from clusterctl.validate.train import TrainJob, TrainOptions, render_sbatch, train_slurm
from clusterctl.validate.transport import SshTarget

DATA = Path(__file__).resolve().parents[1] / "data" / "train"
NONE = Floor(None, "no floor")


def sample(name: str) -> str:
    return (DATA / name).read_text()


def test_a_healthy_two_node_run_parses_into_two_ranks_and_passes():
    run = parse(sample("healthy-2-node.out"))
    assert run.nodes == ("gpu-pg0-1", "gpu-pg0-2")
    assert [(r.rank, r.node, len(r.step_s)) for r in run.ranks] == [
        (0, "gpu-pg0-1", 12),
        (1, "gpu-pg0-2", 12),
    ]
    assert run.failures == () and run.start["backend"] == "gloo" and run.start["world"] == 2
    v = judge(run, NONE, scaling_floor=None)
    assert v.status == "pass" and v.exit_code == 0 and v.stragglers == ()
    m = v.metrics
    assert m is not None and (m.nodes, m.gpus) == (2, 2)
    # a step lasts as long as its slowest rank: the median of the per-step maxima
    steps = sorted(max(a, b) for a, b in zip(run.ranks[0].step_s, run.ranks[1].step_s, strict=True))
    assert m.step_median_s == pytest.approx((steps[5] + steps[6]) / 2)
    assert m.step_p99_s == steps[-1]
    assert m.tokens_per_s_per_gpu == pytest.approx(256 / m.step_median_s)
    assert "throughput not judged: no floor" in v.notes


def test_the_slowed_node_is_named_as_the_straggler():
    run = parse(sample("straggler-2-node.out"))
    v = judge(run, NONE, scaling_floor=None)
    assert v.status == "fail" and v.exit_code == 1
    assert [s.node for s in v.stragglers] == ["gpu-pg0-2"]
    s = v.stragglers[0]
    assert s.ratio > 3 and s.rank == 1
    assert v.bad_nodes == ("gpu-pg0-2",)
    assert v.reasons[0].startswith("gpu-pg0-2: rank 1 (GPU 0) drags the steps: forward pass")


def test_straggler_threshold_is_the_stated_ratio_against_the_median_rank():
    run = parse(sample("healthy-2-node.out"))
    fast, slow = run.ranks
    just_under = replace(
        slow, forward_s=tuple(x * 0 + 0.99 * STRAGGLER_RATIO * 0.138 for x in slow.forward_s)
    )
    ref = replace(fast, forward_s=(0.138,) * len(fast.forward_s))
    assert stragglers(replace(run, ranks=(ref, just_under))) == ()
    over = replace(slow, forward_s=(1.01 * STRAGGLER_RATIO * 0.138,) * len(slow.forward_s))
    assert [s.node for s in stragglers(replace(run, ranks=(ref, over)))] == ["gpu-pg0-2"]


def test_a_rendezvous_timeout_fails_and_blames_no_one_when_every_node_started():
    run = parse(sample("rendezvous-timeout.out"))
    assert run.ranks == ()
    assert [f.kind for f in run.failures] == ["rendezvous"]
    v = judge(run, NONE)
    assert (
        v.status == "fail" and "the rendezvous timed out with 2 of 2 nodes waiting" in v.reasons[0]
    )


def test_a_node_that_never_joins_the_rendezvous_is_named():
    text = "\n".join(
        line for line in sample("rendezvous-timeout.out").splitlines() if not line.startswith("1:")
    )
    run = parse(text)
    assert [(f.kind, f.node) for f in run.failures] == [("rendezvous", "gpu-pg0-2")]
    assert run.failures[0].detail == "never joined the rendezvous"


def test_a_node_unreachable_while_the_first_waits_is_named_unreachable():
    text = (
        "GPUCL-TRAIN-NODES a b c\n"
        "1: torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to "
        "the C10d store has failed.\n"
    )
    run = parse(text)
    assert [(f.node, f.detail) for f in run.failures] == [
        ("b", "could not reach the rendezvous on the first node (a)")
    ]


def test_out_of_memory_is_inconclusive_naming_the_node_and_gpu():
    run = parse(sample("oom-constructed.out"))
    v = judge(run, NONE)
    assert v.status == "inconclusive" and v.exit_code == 3
    oom = [f for f in run.failures if f.kind == "oom"]
    assert [(f.node, f.detail.split(":")[0]) for f in oom] == [
        ("nd-b", "rank 3 (local 1) ran out of memory")
    ]
    assert v.bad_nodes[0] == "nd-b"


def test_a_node_silent_mid_run_is_lost_and_the_other_is_not():
    # derived from the healthy run: node 2 said nothing after the start, node 1 lost its peer
    gone = ("0: GPUCL-TRAIN-STEPS", "0: GPUCL-TRAIN {", "1:")
    kept = [x for x in sample("healthy-2-node.out").splitlines() if not x.startswith(gone)]
    kept.append(
        '0: GPUCL-TRAIN-ERROR {"kind": "peer", "local_rank": 0, "message": "RuntimeError: '
        'Connection closed by peer", "node": "gpu-pg0-1", "rank": 0}'
    )
    run = parse("\n".join(kept))
    assert [(f.kind, f.node) for f in run.failures] == [
        ("peer", "gpu-pg0-1"),
        ("lost", "gpu-pg0-2"),
    ]
    v = judge(run, NONE)
    assert v.status == "fail"


def test_a_truncated_rank_report_is_not_taken_as_a_report():
    text = sample("healthy-2-node.out").replace(
        '"steps": 12, "tokens_per_step": 256, "world": 2}',
        '"steps": 13, "tokens_per_step": 256, "world": 2}',
        1,
    )
    run = parse(text)
    assert [r.rank for r in run.ranks] == [0]
    assert [(f.kind, f.node) for f in run.failures] == [("lost", "gpu-pg0-2")]


def test_no_output_is_inconclusive():
    v = judge(parse("srun: error: Unable to create step\n"), NONE)
    assert v.status == "inconclusive" and v.exit_code == 3


def test_throughput_below_the_floor_fails_with_the_floor_source():
    run = parse(sample("healthy-2-node.out"))
    tps = metrics(run).tokens_per_s_per_gpu
    low = judge(run, Floor(tps * 1.1, "--min-tokens-per-gpu"), scaling_floor=None)
    assert (
        low.status == "fail"
        and "below the floor" in low.reasons[0]
        and "--min-tokens-per-gpu" in low.reasons[0]
    )
    assert judge(run, Floor(tps * 0.9, "x"), scaling_floor=None).status == "pass"


def test_weak_scaling_is_judged_against_its_floor_when_one_applies():
    multi = parse(sample("healthy-2-node.out"))
    one = replace(multi, nodes=multi.nodes[:1], ranks=multi.ranks[:1])
    fast = replace(
        one, ranks=tuple(replace(r, step_s=tuple(x / 2 for x in r.step_s)) for r in one.ranks)
    )
    v = judge(multi, NONE, single=fast, scaling_floor=0.8)
    assert v.scaling == pytest.approx(0.5, rel=0.1) and v.status == "fail"
    assert any(r.startswith("scaling efficiency") for r in v.reasons)
    assert judge(multi, NONE, single=fast, scaling_floor=None, scaling_note="n").status == "pass"


def test_percentile_is_nearest_rank():
    assert percentile([1.0, 2.0, 3.0], 99) == 3.0
    assert percentile([float(i) for i in range(1, 101)], 99) == 99.0


def test_json_and_junit_carry_the_verdict():
    v = judge(parse(sample("straggler-2-node.out")), NONE, scaling_floor=None)
    data = to_json(v, preset="cpu", sku=None, target="t", command="c")
    assert data["status"] == "fail" and data["stragglers"][0]["node"] == "gpu-pg0-2"
    assert json.loads(json.dumps(data)) == data
    root = ET.fromstring(to_junit(v))
    suite = root.find("testsuite")
    assert suite.get("failures") == "1"
    failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failed == ["stragglers"]


def _job(**kw) -> TrainJob:
    base = dict(nodes=2, procs_per_node=8, gpus_per_node=8, preset=PRESETS["gpu"],
                program="clusterctl-validate/gpucl_train.py",
                container_image="nvcr.io#nvidia/pytorch:25.12-py3",
                env={"NCCL_IB_PCI_RELAXED_ORDERING": "1"}, partition="gpu",
                nodelist=("n1", "n2"), sku="Standard_ND96isr_H100_v5")  # fmt: skip
    base.update(kw)
    return TrainJob(**base)


def test_the_cloud_batch_script_runs_torchrun_in_the_container_on_every_node():
    script = render_sbatch(_job(), "out.txt")
    assert "#SBATCH --gpus-per-node=8" in script and "#SBATCH --ntasks-per-node=1" in script
    assert "--container-image='nvcr.io#nvidia/pytorch:25.12-py3'" in script
    assert "--nproc-per-node=8 --rdzv-backend=c10d" in script
    assert "export NCCL_IB_PCI_RELAXED_ORDERING=1" in script
    assert "srun -l --kill-on-bad-exit=1" in script
    assert "NodeAddr" in script  # the rendezvous host by its address, not Slurm's name
    assert "--layers 12 --dim 1024" in script and "--threads" not in script
    proc = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
    assert proc.returncode == 0, proc.stderr


def test_the_sandbox_batch_script_runs_one_cpu_rank_per_node_without_a_container():
    cpu = _job(procs_per_node=1, gpus_per_node=0, container_image=None, preset=PRESETS["cpu"],
               env={"OMP_NUM_THREADS": "1"})  # fmt: skip
    script = render_sbatch(cpu, "o")
    assert "--gpus-per-node" not in script and "--container-image" not in script
    assert "--nproc-per-node=1" in script and "--threads 1" in script


class FakeSsh:
    def __init__(self):
        self.commands: list[str] = []
        self.target = SimpleNamespace(label="fake")

    def run(self, command, input=None, check=True, timeout=None):
        self.commands.append(command)
        return subprocess.CompletedProcess(command, 0, "", "")


class FakeLauncher:
    def __init__(self, outputs, trouble=None):
        self.ssh = FakeSsh()
        self.outputs = list(outputs)
        self.jobs: list[TrainJob] = []
        self.trouble = trouble or {}

    def run(self, job, timeout_s=None):
        self.jobs.append(job)
        out = self.outputs.pop(0)
        if isinstance(out, Exception):
            raise out
        state, text = out
        return JobResult(str(len(self.jobs)), state, text)

    def node_trouble(self, nodes):
        return {n: s for n, s in self.trouble.items() if n in nodes}


def _target(**kw) -> SlurmTarget:
    base = dict(ssh=SshTarget(host="h"), nodes=2, gpus_per_node=8,
                sku="Standard_ND96isr_H100_v5", node_names=("gpu-pg0-1", "gpu-pg0-2"))  # fmt: skip
    base.update(kw)
    return SlurmTarget(**base)


def test_train_slurm_runs_the_one_node_reference_then_all_nodes_and_judges_scaling():
    healthy = sample("healthy-2-node.out")
    one = "\n".join(x for x in healthy.splitlines() if not x.startswith("1:")).replace(
        "GPUCL-TRAIN-NODES gpu-pg0-1 gpu-pg0-2", "GPUCL-TRAIN-NODES gpu-pg0-1"
    )
    launcher = FakeLauncher([("COMPLETED", one), ("COMPLETED", healthy)])
    outcome = train_slurm(_target(), TrainOptions(floor=NONE), {}, launcher=launcher)
    assert [(j.nodes, j.nodelist) for j in launcher.jobs] == [
        (1, ("gpu-pg0-1",)),
        (2, ("gpu-pg0-1", "gpu-pg0-2")),
    ]
    assert launcher.jobs[1].gpus_per_node == 8 and launcher.jobs[1].procs_per_node == 8
    v = outcome.verdict
    assert v.scaling is not None and v.scaling_floor == 0.8 and v.single is not None
    assert any("cat > clusterctl-validate/gpucl_train.py" in c for c in launcher.ssh.commands)


def test_a_node_lost_while_the_job_waits_fails_naming_it():
    launcher = FakeLauncher([NodeLost("node gpu-pg0-2 (down): ...", {"gpu-pg0-2": "down"})])
    outcome = train_slurm(_target(), TrainOptions(floor=NONE, scaling=False), {}, launcher=launcher)
    assert outcome.exit_code == 1
    assert [(f.kind, f.node) for f in outcome.verdict.failures] == [("lost", "gpu-pg0-2")]
    assert "Slurm reports it down" in outcome.verdict.reasons[0]


def test_a_failed_job_blames_the_node_slurm_sees_down_not_every_silent_one():
    start_only = 'GPUCL-TRAIN-NODES gpu-pg0-1 gpu-pg0-2\n0: GPUCL-TRAIN-START {"world": 2}\n'
    launcher = FakeLauncher(
        [("NODE_FAIL", start_only)], trouble={"gpu-pg0-2": "down (not responding)"}
    )
    outcome = train_slurm(_target(), TrainOptions(floor=NONE, scaling=False), {}, launcher=launcher)
    assert outcome.verdict.bad_nodes == ("gpu-pg0-2",)


def test_the_cpu_target_keeps_files_off_and_scaling_unjudged():
    healthy = sample("healthy-2-node.out")
    one = "\n".join(x for x in healthy.splitlines() if not x.startswith("1:")).replace(
        "GPUCL-TRAIN-NODES gpu-pg0-1 gpu-pg0-2", "GPUCL-TRAIN-NODES gpu-pg0-1"
    )
    launcher = FakeLauncher([("COMPLETED", one), ("COMPLETED", healthy)])
    target = _target(
        benchmark=Benchmark("probe", "1K", "1M", 1, 1), gpus_per_node=1, keep_files=False
    )
    outcome = train_slurm(target, TrainOptions(floor=NONE), {}, launcher=launcher)
    assert launcher.jobs[1].gpus_per_node == 0 and launcher.jobs[1].container_image is None
    assert outcome.verdict.scaling_floor is None and "not judged" in outcome.verdict.notes[-1]
    assert launcher.ssh.commands[-1].startswith("rm -f ")


# --- the command line -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (("--nccl",), "--nccl and --train are separate checks"),
        (("--sweep",), "--sweep measures NCCL pairs"),
        (("-b", "1M"), "-b/--min-bytes sizes NCCL messages"),
        (("--fail-below", "3"), "use --min-tokens-per-gpu"),
        (("--peer-floor", "0.9"), "--peer-floor compares NCCL pairs"),
    ],
)
def test_options_the_training_check_has_no_use_for_are_refused(cli, extra, words):
    result = cli("--train", "--from-log", str(DATA / "healthy-2-node.out"), *extra)
    assert result.exit_code == 2
    assert words in result.output and "Traceback" not in result.output


def test_training_options_without_train_are_refused(cli):
    result = cli("--nccl", "--from-log", str(DATA / "healthy-2-node.out"), "--min-scaling", "0.5")
    assert result.exit_code == 2 and "--min-scaling goes with --train" in result.output


def test_from_log_judges_a_recorded_run(cli, tmp_path):
    junit = tmp_path / "train.xml"
    ok = cli(
        "--train", "--from-log", str(DATA / "healthy-2-node.out"), "--json", "--junit", str(junit)
    )
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["status"] == "pass" and junit.is_file()
    bad = cli("--train", "--from-log", str(DATA / "straggler-2-node.out"))
    assert bad.exit_code == 1 and "gpu-pg0-2: rank 1" in bad.output
    oom = cli("--train", "--from-log", str(DATA / "oom-constructed.out"))
    assert oom.exit_code == 3 and "ran out of memory" in oom.output


def test_the_first_passing_run_kept_becomes_the_floor_of_later_runs(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_CLUSTERS_VALIDATE_HISTORY", str(tmp_path / "h.sqlite"))
    log = str(DATA / "healthy-2-node.out")
    first = cli("--train", "--from-log", log, "--record", "azure-h100", "--json")
    assert first.exit_code == 0 and "calibrating" in json.loads(first.stdout)["floor"]["source"]
    second = json.loads(
        cli("--train", "--from-log", log, "--record", "azure-h100", "--json").stdout
    )
    tps = second["metrics"]["tokens_per_s_per_gpu"]
    assert second["floor"]["tokens_per_s_per_gpu"] == pytest.approx(0.8 * tps)
    assert second["floor"]["source"].startswith("calibrated: 80% of run #1")
    from clusterctl.validate.history import History

    kept = History(tmp_path / "h.sqlite").train_runs("azure-h100")
    assert [r.status for r in kept] == ["pass", "pass"]


def test_validate_history_lists_the_training_runs(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_CLUSTERS_VALIDATE_HISTORY", str(tmp_path / "h.sqlite"))
    cli("--train", "--from-log", str(DATA / "healthy-2-node.out"), "--record", "azure-h100")
    cli("--train", "--from-log", str(DATA / "straggler-2-node.out"), "--record", "azure-h100")
    shown = cli("history", "-s", "azure-h100")
    assert shown.exit_code == 0 and "training runs of azure-h100" in shown.output
    assert "pass" in shown.output and "fail" in shown.output
    data = json.loads(cli("history", "-s", "azure-h100", "--json").stdout)
    assert [r["status"] for r in data["train_runs"]] == ["pass", "fail"] and data["runs"] == []
