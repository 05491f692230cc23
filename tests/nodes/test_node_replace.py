"""`clusterctl node replace` against a fake scheduler (scontrol, squeue, gpucl-power over SSH)."""

from __future__ import annotations

import shlex
import subprocess

import pytest
import typer
from typer.testing import CliRunner

from clusterctl.cli.nodes import NodeDeps, register

NODE = "gpu-pg0-3"


class FakeScheduler:
    """Answers the command lines `node replace` sends; a node that comes back after `polls_to_boot`
    looks and then passes (or fails) its health check."""

    def __init__(
        self, jobs=(), health_passes=True, polls_to_boot=2, power_rc=0, exc="(null)", state=None
    ):
        self.commands: list[str] = []
        self.exc = exc
        self.jobs = list(jobs)
        self.state, self.reason, self.start = "MIXED" if jobs else "IDLE", "", "2026-11-01T10:00:00"
        self.state = state or self.state
        self.health_passes = health_passes
        self.polls_to_boot = polls_to_boot
        self.power_rc = power_rc
        self.rebuilding = False
        self.requeued: list[str] = []

    def run(self, cmd: str, check: bool = True, **_):
        self.commands.append(cmd)
        argv = shlex.split(cmd)
        while argv[0] == "sudo":
            argv = argv[2:] if argv[1] == "-n" else argv[1:]
            if argv[0] == "-u":
                argv = argv[2:]
        out, rc = "", 0
        if argv[:3] == ["scontrol", "show", "node"]:
            out = self._show()
        elif argv[0] == "squeue":
            out = "".join(f"{j}\n" for j in self.jobs)
        elif argv[:3] == ["scontrol", "show", "config"]:
            out = f"SuspendTime             = 900 sec\nSuspendExcNodes         = {self.exc}\n"
        elif argv[:3] == ["scontrol", "show", "hostnames"]:
            expand = {
                "gpu-pg0-[1-3]": "gpu-pg0-1\ngpu-pg0-2\ngpu-pg0-3\n",
                "gpu-pg0-1": "gpu-pg0-1\n",
            }
            out = expand[argv[3]]
        elif argv[:3] == ["scontrol", "update", f"SuspendExcNodes+={NODE}"]:
            self.exc = NODE if self.exc == "(null)" else f"{self.exc},{NODE}"
        elif argv[:3] == ["scontrol", "update", f"SuspendExcNodes-={NODE}"]:
            self.exc = self.exc.replace(f",{NODE}", "").replace(NODE, "") or "(null)"
        elif argv[:2] == ["scontrol", "update"]:
            fields = dict(a.split("=", 1) for a in argv[2:])
            if fields["State"] == "DRAIN":
                self.state, self.reason = "DRAIN", fields["Reason"]
        elif argv[:2] == ["scontrol", "requeue"]:
            self.requeued += argv[2].split(",")
            self.jobs = []
        elif argv[0] == "/usr/local/bin/gpucl-power":
            assert argv[1] in ("reimage", "redeploy") and argv[2] == NODE
            rc = self.power_rc
            self.rebuilding = rc == 0
        else:
            raise AssertionError(cmd)
        return subprocess.CompletedProcess(argv, rc, out, "refused: Conflict" if rc else "")

    def _show(self) -> str:
        if self.rebuilding:
            self.polls_to_boot -= 1
            if self.polls_to_boot < 0:
                self.rebuilding = False
                self.start = "2026-11-01T11:30:00"
            else:
                self.state = "DOWN+DRAIN+NOT_RESPONDING"
        elif self.start.endswith("11:30:00") and self.state.startswith("DOWN"):
            self.state = "IDLE+DRAIN"  # registered; the health check runs next
        elif self.state == "IDLE+DRAIN":
            if self.health_passes:
                self.state, self.reason = "IDLE", ""
            else:
                self.reason = "gpucl: nhc: check_gpu_count: 7 GPUs, expected 8"
        reason = f" Reason={self.reason} [slurm@2026-11-01T10:05:00]" if self.reason else ""
        return (
            f"NodeName={NODE} Arch=x86_64 CoresPerSocket=48 State={self.state} "
            f"SlurmdStartTime={self.start} Partitions=gpu{reason}\n"
        )


def invoke(sched: FakeScheduler, *args: str, asked: list | None = None):
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @app.callback()
    def _root() -> None:
        """Test app."""

    ticks = iter(range(0, 10**6, 60))
    deps = NodeDeps(
        target=lambda stack, sandbox: (
            (asked if asked is not None else []).append((stack, sandbox))
            or (sched, "azureuser", "gpucl:")
        ),
        sleep=lambda s: None,
        clock=lambda: float(next(ticks)),
    )
    register(app, deps=deps)
    return CliRunner().invoke(app, ["node", "replace", *args])


def test_replace_drains_reimages_waits_and_returns_after_checks_pass() -> None:
    sched = FakeScheduler()
    result = invoke(sched, "-s", "azure-h100", NODE)
    assert result.exit_code == 0, result.output
    assert "passed its health check" in result.output
    drain = next(c for c in sched.commands if "State=DRAIN" in c)
    assert drain.startswith("sudo -n scontrol update")
    assert "'Reason=gpucl: replace: reimage requested by clusterctl'" in drain
    power = [c for c in sched.commands if "gpucl-power" in c]
    assert power == [f"sudo -n -u slurm /usr/local/bin/gpucl-power reimage {NODE}"]
    # never resumed by hand: the health check did it
    assert not any("State=RESUME" in c for c in sched.commands)
    # power saving kept off the node while it was rebuilt, then given back
    exc = [c for c in sched.commands if "SuspendExcNodes" in c]
    assert exc == [f"sudo -n scontrol update SuspendExcNodes+={NODE}",
                   f"sudo -n scontrol update SuspendExcNodes-={NODE}"]  # fmt: skip
    assert sched.exc == "(null)"


def test_replace_refuses_a_node_with_a_running_job() -> None:
    sched = FakeScheduler(jobs=["4711"])
    result = invoke(sched, "-s", "azure-h100", NODE)
    assert result.exit_code == 2
    assert "runs job(s) 4711; pass --force" in result.output
    assert not any("State=DRAIN" in c or "gpucl-power" in c for c in sched.commands)


def test_force_requeues_the_job_first_and_redeploy_is_asked_for() -> None:
    sched = FakeScheduler(jobs=["4711", "4712"])
    result = invoke(sched, "-s", "azure-h100", NODE, "--force", "--redeploy")
    assert result.exit_code == 0, result.output
    assert sched.requeued == ["4711", "4712"]
    order = [c for c in sched.commands if "DRAIN" in c or "requeue" in c or "gpucl-power" in c]
    assert "DRAIN" in order[0] and "requeue" in order[1] and "redeploy" in order[2]


def test_a_node_failing_its_checks_stays_drained_with_the_checks_reason() -> None:
    sched = FakeScheduler(health_passes=False)
    result = invoke(sched, "-s", "azure-h100", NODE)
    assert result.exit_code == 1
    assert "failed its health check: gpucl: nhc: check_gpu_count" in result.output


def test_a_node_that_never_returns_is_bounded_by_the_timeout() -> None:
    sched = FakeScheduler(polls_to_boot=10**9)
    result = invoke(sched, "-s", "azure-h100", NODE, "--timeout", "5")
    assert result.exit_code == 1
    assert "did not register again within 5 min; left drained" in result.output


def test_a_refused_reimage_exits_2_and_says_why() -> None:
    sched = FakeScheduler(power_rc=1)
    result = invoke(sched, "-s", "azure-h100", NODE)
    assert result.exit_code == 2
    assert "reimage of gpu-pg0-3 refused: refused: Conflict" in result.output


@pytest.mark.parametrize("name", ["login-1", "gpu-3", "GPU-pg0-1"])
def test_names_outside_the_scheme_are_refused(name: str) -> None:
    sched = FakeScheduler()
    result = invoke(sched, "-s", "azure-h100", name)
    assert result.exit_code == 2 and "is not a node name" in result.output
    assert sched.commands == []


def test_the_sandbox_is_a_cluster_to_replace_nodes_in() -> None:
    sched, asked = FakeScheduler(), []
    result = invoke(sched, "--sandbox-dir", "/tmp/sbx", NODE, asked=asked)
    assert result.exit_code == 0, result.output
    assert asked == [(None, "/tmp/sbx")]


@pytest.mark.parametrize("args", [[], ["-s", "azure-h100", "--sandbox"]])
def test_exactly_one_cluster_must_be_named(args: list[str]) -> None:
    from tests.cli.conftest import run_cli

    proc = run_cli("node", "replace", *args, NODE)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == ("error: node replace: name one cluster: -s STACK or --sandbox")


def test_power_saving_is_given_back_when_the_node_does_not_come_back() -> None:
    sched = FakeScheduler(polls_to_boot=10**9, exc="gpu-pg0-1")
    result = invoke(sched, "-s", "azure-h100", NODE, "--timeout", "5")
    assert result.exit_code == 1
    assert sched.exc == "gpu-pg0-1"  # minNodes' own entry untouched, ours taken back


def test_a_node_that_min_nodes_keeps_up_keeps_its_exemption() -> None:
    sched = FakeScheduler(exc="gpu-pg0-[1-3]")
    result = invoke(sched, "-s", "azure-h100", NODE)
    assert result.exit_code == 0, result.output
    assert not any("SuspendExcNodes" in c for c in sched.commands)
    assert sched.exc == "gpu-pg0-[1-3]"


def test_a_powered_down_node_is_refused_with_the_way_to_power_it_up() -> None:
    sched = FakeScheduler(state="IDLE+POWERED_DOWN")
    result = invoke(sched, "-s", "azure-h100", NODE)
    assert result.exit_code == 2
    assert f"scontrol update NodeName={NODE} State=POWER_UP" in result.output
    assert not any("DRAIN" in c or "gpucl-power" in c for c in sched.commands)


def test_json_prints_one_document_and_refusals_as_json_errors() -> None:
    # `node replace --json`, its errors as {"error": ...} with the same exit code
    import json

    result = invoke(FakeScheduler(), "-s", "azure-h100", NODE, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["node"] == NODE and doc["returned"] is True and doc["action"] == "reimage"
    assert any("passed its health check" in line for line in doc["log"])

    refused = invoke(FakeScheduler(), "-s", "azure-h100", "not-a-node", "--json")
    assert refused.exit_code == 2
    assert "not a node name" in json.loads(refused.stdout)["error"]
