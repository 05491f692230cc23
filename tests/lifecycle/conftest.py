"""A project copy, a fake `pulumi` on PATH and a typer app with the lifecycle commands.

The fake (tests/fixtures/fake_pulumi/fake_pulumi.py) is run through a tiny wrapper script so it
uses this interpreter (it needs grpc and pulumi's protos to stream engine events)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from clusterctl.cli.lifecycle import Deps, register
from clusterctl.lifecycle.retry import Backoff
from clusterctl.lifecycle.stack_export import parse_time
from clusterctl.lifecycle.survivors import CheckUnavailable, CloudResource

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "fixtures" / "fake_pulumi" / "fake_pulumi.py"
STACK = "azure-h100"
NOW = "2025-03-01T12:00:00.000000Z"
UP_TIME = "2025-03-01T02:00:00.000000Z"  # `up` ran 10 hours before NOW


def load_fake_module():
    spec = importlib.util.spec_from_file_location("fake_pulumi", FAKE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class FakeCloud:
    """A SurvivorFinder that answers from a list the test sets."""

    tagged_resources: list[CloudResource]
    unavailable: str | None = None
    description: str = "az resource list --tag gpu-clusters:stack=<stack>"
    asked: int = 0

    def tagged(self, stack: str) -> list[CloudResource]:
        self.asked += 1
        if self.unavailable:
            raise CheckUnavailable(self.unavailable)
        return list(self.tagged_resources)


class FakeCapacity:
    """Azure's answers to `up`'s capacity questions (tests/lifecycle/test_capacity.py holds the
    real client to the REST spec): room for the stack unless a test sets `answer`."""

    ROOM = (
        [{"resourceType": "virtualMachines", "name": n, "family": f, "locations": ["eastus"]}
         for n, f in (("Standard_ND96isr_H100_v5", "standardNDSH100v5Family"),
                      ("Standard_D8s_v5", "standardDSv5Family"))],
        [{"unit": "Count", "currentValue": 0, "limit": 1000, "name": {"value": v}}
         for v in ("cores", "standardNDSH100v5Family", "standardDSv5Family", "lowPriorityCores")],
    )  # fmt: skip

    def __init__(self) -> None:
        self.answer: tuple | Exception = self.ROOM
        self.asked: list[str] = []

    def fetch(self, region: str):
        self.asked.append(region)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@dataclass
class Env:
    project: Path
    state: Path
    bin: Path
    cloud: FakeCloud
    sleeps: list[float]
    interactive: bool = False
    capacity: FakeCapacity = field(default_factory=FakeCapacity)
    down_billing: object = None
    """What the scheduler's DOWN-billing record reads as (a record, or why not as a str)."""

    def scenario(self, **values) -> None:
        path = self.state / "scenario.json"
        doc = json.loads(path.read_text()) if path.is_file() else {}
        doc.update(values)
        path.write_text(json.dumps(doc))

    def calls(self) -> list[list[str]]:
        path = self.state / "calls.jsonl"
        if not path.is_file():
            return []
        return [json.loads(line)["argv"] for line in path.read_text().splitlines()]

    def raw_calls(self) -> list[dict]:
        path = self.state / "calls.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()]

    def forget_calls(self) -> None:
        (self.state / "calls.jsonl").unlink(missing_ok=True)

    def state_of(self, stack: str = STACK) -> dict:
        return json.loads((self.state / "stacks" / f"{stack}.json").read_text())

    def invoke(self, *args: str, input: str | None = None):
        app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

        @app.callback()
        def _root() -> None:
            """Test app."""

        deps = Deps(
            finder=lambda spec: self.cloud,
            capacity=lambda spec: self.capacity,
            interactive=lambda: self.interactive,
            now=lambda: parse_time(NOW),
            backoff=Backoff((5.0, 10.0), self.sleeps.append),
            down_billing=lambda spec, outputs: self.down_billing,
        )
        register(app, deps=deps)
        return CliRunner().invoke(app, list(args), input=input)


@pytest.fixture
def env(tmp_path, monkeypatch) -> Env:
    project = tmp_path / "project"
    (project / "stacks").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", project / "Pulumi.yaml")
    shutil.copy(ROOT / "stacks" / f"Pulumi.{STACK}.yaml", project / "stacks")
    bin_dir = tmp_path / "pulumi-root" / "bin"
    bin_dir.mkdir(parents=True)
    wrapper = bin_dir / "pulumi"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    wrapper.chmod(0o755)
    state = tmp_path / "fake-state"
    state.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("PULUMI_HOME", str(tmp_path / "pulumi-home"))
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "")
    monkeypatch.setenv("FAKE_PULUMI_DIR", str(state))
    monkeypatch.setenv("GPU_CLUSTERS_PROJECT_DIR", str(project))
    monkeypatch.setenv("COLUMNS", "240")
    monkeypatch.delenv("PULUMI_BACKEND_URL", raising=False)
    monkeypatch.delenv("PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK", raising=False)
    e = Env(project, state, bin_dir, FakeCloud([]), [])
    e.scenario(now=UP_TIME)
    return e


@pytest.fixture
def deployed(env) -> Env:
    """The stack after a successful `clusterctl up` (through the fake); calls log cleared."""
    result = env.invoke("up", "-s", STACK, "--yes")
    assert result.exit_code == 0, result.output
    env.forget_calls()
    return env
