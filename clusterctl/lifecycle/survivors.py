"""Ask the cloud which resources still carry the stack's tag, behind one small interface.

`down` compares the answer with what the stack keeps on purpose (protected storage and what it
needs); anything else tagged with the stack is a survivor that may still bill.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from clusterctl.spec.model import ClusterSpec
from clusterctl.spec.tags import STACK_TAG


@dataclass(frozen=True)
class CloudResource:
    id: str
    type: str
    name: str

    def as_json(self) -> dict[str, str]:
        return {"id": self.id, "type": self.type, "name": self.name}


class CheckUnavailable(Exception):
    """The cloud could not be asked (its CLI is missing or not logged in)."""


class SurvivorFinder(Protocol):
    """Lists every resource that carries `gpu-clusters:stack=<stack>`."""

    @property
    def description(self) -> str:
        """The command a person would run to check by hand."""
        ...

    def tagged(self, stack: str) -> list[CloudResource]: ...


def _run(argv: list[str]) -> str:
    if shutil.which(argv[0]) is None:
        raise CheckUnavailable(f"`{argv[0]}` is not installed")
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CheckUnavailable(f"`{' '.join(argv[:3])}` failed: {exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise CheckUnavailable(f"`{' '.join(argv[:3])}` failed: {last}")
    return done.stdout


@dataclass
class AzureTagFinder:
    """`az resource list --tag` (every ARM resource) plus `az group list --tag` (groups are not
    in the resource list). Works in the subscription `az` is logged in to."""

    subscription: str | None = None
    run: Callable[[list[str]], str] = _run

    @property
    def description(self) -> str:
        return (
            f"az resource list --tag {STACK_TAG}=<stack>; az group list --tag {STACK_TAG}=<stack>"
        )

    def tagged(self, stack: str) -> list[CloudResource]:
        sub = ["--subscription", self.subscription] if self.subscription else []
        found = []
        for what in (["resource", "list"], ["group", "list"]):
            text = self.run(["az", *what, "--tag", f"{STACK_TAG}={stack}", "-o", "json", *sub])
            for row in json.loads(text or "[]"):
                found.append(
                    CloudResource(
                        row["id"],
                        row.get("type", "Microsoft.Resources/resourceGroups"),
                        row["name"],
                    )
                )
        return found


@dataclass
class AwsTagFinder:
    """The Resource Groups Tagging API in the cluster's region. It lists terminated EC2
    instances for a while after they are gone, so instances are checked for their state."""

    region: str
    run: Callable[[list[str]], str] = _run

    @property
    def description(self) -> str:
        return (
            f"aws resourcegroupstaggingapi get-resources --region {self.region} "
            f"--tag-filters Key={STACK_TAG},Values=<stack>"
        )

    def tagged(self, stack: str) -> list[CloudResource]:
        text = self.run(
            [
                "aws", "resourcegroupstaggingapi", "get-resources", "--region", self.region,
                "--tag-filters", f"Key={STACK_TAG},Values={stack}", "--output", "json",
            ]
        )  # fmt: skip
        arns = [
            m["ResourceARN"] for m in json.loads(text or "{}").get("ResourceTagMappingList", [])
        ]
        gone = self._terminated([a.rsplit("/", 1)[-1] for a in arns if ":instance/" in a])
        return [_aws_resource(a) for a in arns if a.rsplit("/", 1)[-1] not in gone]

    def _terminated(self, instance_ids: list[str]) -> set[str]:
        if not instance_ids:
            return set()
        text = self.run(
            [
                "aws", "ec2", "describe-instances", "--region", self.region, "--instance-ids",
                *instance_ids, "--query", "Reservations[].Instances[].[InstanceId,State.Name]",
                "--output", "json",
            ]
        )  # fmt: skip
        return {i for i, state in json.loads(text or "[]") if state == "terminated"}


def _aws_resource(arn: str) -> CloudResource:
    # arn:aws:<service>:<region>:<account>:<type>/<id> (or <type>:<id>)
    parts = arn.split(":", 5)
    rest = parts[5] if len(parts) > 5 else arn
    kind, _, name = rest.partition("/") if "/" in rest else rest.partition(":")
    return CloudResource(arn, f"{parts[2]}:{kind}" if len(parts) > 2 else kind, name or kind)


FINDERS: dict[str, Callable[[ClusterSpec], SurvivorFinder]] = {
    "aws": lambda spec: AwsTagFinder(spec.region),
    "azure": lambda spec: AzureTagFinder(),
}
"""Per cloud (platform.CLOUDS): what asks it for the resources still tagged with the stack."""


def finder_for(spec: ClusterSpec) -> SurvivorFinder:
    return FINDERS[spec.cloud](spec)


def survivors(found: Iterable[CloudResource], kept_ids: Iterable[str]) -> list[CloudResource]:
    """Tagged resources the stack does not keep on purpose. Azure ids differ in case between
    APIs, so ids compare case-insensitively."""
    kept = {i.lower() for i in kept_ids}
    seen: set[str] = set()
    out = []
    for res in found:
        key = res.id.lower()
        if key not in kept and key not in seen:
            seen.add(key)
            out.append(res)
    return out
