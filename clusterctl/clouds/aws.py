"""AWS: EKS with EFA (components/aws/); Slurm clusters are Azure's only."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from clusterctl.clouds.base import (
    Cloud,
    CloudResource,
    Feature,
    SurvivorFinder,
    run_cli,
)
from clusterctl.constants import STACK_TAG

# "Tagging best practices": key 128, value 256, letters, digits, spaces and _ . : / = + - @,
# prefix aws: reserved.
TAG_CHARS = re.compile(r"^[\w .:/=+\-@]*$")
IMAGE_ID = re.compile(r"^ami-[0-9a-f]{8}([0-9a-f]{9})?$")


@dataclass
class AwsTagFinder:
    """The Resource Groups Tagging API in the cluster's region. It lists terminated EC2
    instances for a while after they are gone, so instances are checked for their state."""

    region: str
    run: Callable[[list[str]], str] = run_cli

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


def _caller(_: dict) -> dict:
    return {"accountId": "123456789012", "arn": "arn:aws:iam::123456789012:user/plan", "id": "plan"}


def session_context(args: dict) -> dict:
    """What IAM answers: an STS session's role ARN with the role's path (SSO's permission-set
    roles live under aws-reserved/sso.amazonaws.com/); anything else is its own issuer."""
    arn = args.get("arn", "")
    match = re.match(r"^arn:([^:]+):sts::(\d+):assumed-role/([^/]+)/(.+)$", arn)
    if not match:
        return {"arn": arn, "issuerArn": arn, "issuerId": "", "issuerName": "", "id": arn}
    part, account, role, _ = match.groups()
    path = "aws-reserved/sso.amazonaws.com/" if role.startswith("AWSReservedSSO_") else ""
    issuer = f"arn:{part}:iam::{account}:role/{path}{role}"
    return {"arn": arn, "issuerArn": issuer, "issuerId": "AROA", "issuerName": role, "id": arn}


def _partition(_: dict) -> dict:
    return {"partition": "aws", "dnsSuffix": "amazonaws.com", "id": "aws"}


def _azs(_: dict) -> dict:
    names = ["us-east-1a", "us-east-1b", "us-east-1c"]
    return {"names": names, "zoneIds": ["use1-az1", "use1-az2", "use1-az4"], "id": "us-east-1"}


def _ssm(args: dict) -> dict:
    name = str(args.get("name") or "")
    value = "ami-0123456789abcdef0"
    if name.endswith("/release_version"):  # as EKS names AMI releases: <k8s>.<patch>-<date>
        version = name.split("/optimized-ami/", 1)[1].split("/", 1)[0]
        value = f"{version}.0-20260101"
    return {"name": name, "value": value, "type": "String"}


ADDON_VERSION_K8S_ARG = "kubernetesVersion"
"""aws.eks.getAddonVersion's input (an invoke argument, not the stack output of that name)."""


def _addon_version(args: dict) -> dict:
    version = f"resolved-at-up-for-kubernetes-{args.get(ADDON_VERSION_K8S_ARG)}"
    return {**args, "id": args.get("addonName"), "version": version}


def _region(_: dict) -> dict:
    return {"name": "us-east-1", "region": "us-east-1", "id": "us-east-1"}


@dataclass(frozen=True)
class Aws(Cloud):
    def tag_problem(self, key: str, value: str) -> str | None:
        if key.lower().startswith("aws:"):
            return "AWS reserves tag keys starting with 'aws:'"
        if not TAG_CHARS.match(key) or not TAG_CHARS.match(value):
            return "AWS tags use letters, digits, spaces and _ . : / = + - @ only"
        return None

    def image_form_ok(self, image: str) -> bool:
        return bool(IMAGE_ID.match(image))

    def survivor_finder(self, region: str) -> SurvivorFinder:
        return AwsTagFinder(region)


CLOUD = Aws(
    name="aws",
    title="AWS",
    listed=1,
    provider_namespaces=("aws",),
    # The program uses the default AWS provider, which otherwise takes the region from the
    # environment.
    region_key="aws:region",
    region_key_required=True,
    tag_key_max=128,
    tag_value_max=256,
    image_word="id",
    image_example="ami-0abc...",
    default_head_sku="m6i.2xlarge",
    clusters={"kubernetes": ("components.aws.eks_cluster", "EksGpuCluster")},
    mock_invokes={
        "aws:index/getCallerIdentity:getCallerIdentity": _caller,
        "aws:index/getPartition:getPartition": _partition,
        "aws:iam/getSessionContext:getSessionContext": session_context,
        "aws:index/getAvailabilityZones:getAvailabilityZones": _azs,
        "aws:index/getRegion:getRegion": _region,
        "aws:ssm/getParameter:getParameter": _ssm,
        "aws:eks/getAddonVersion:getAddonVersion": _addon_version,
    },
    unsupported={
        (Feature.CLUSTERS, "slurm"): "use cloud: azure for Slurm, or scheduler: kubernetes on aws",
        (Feature.ARM64_GPU_NODES, "kubernetes"): (
            "the EKS GPU node group uses the AL2023_x86_64_NVIDIA AMI"
        ),
    },
    nat_egress=frozenset({"kubernetes"}),  # components/aws/vpc.py
    disk_backup=frozenset(),
    kubernetes_service="eks",
    quota_preflight=False,
    gpu_scale_sets=False,
    kubernetes_node_image="EKS AL2023 NVIDIA AMI",
    kubernetes_admin_principals=True,
    kubernetes_driver_in_image=True,
    kubernetes_default_storage_class=True,
    kubernetes_autoscaler_release=True,
    # awsome-distributed-training micro-benchmarks/nccl-tests: the image, where its Dockerfile
    # builds all_reduce_perf, and kubernetes/nccl-tests.yaml calls /opt/amazon/openmpi/bin/mpirun;
    # the image also sets LD_PRELOAD, which ranks started through sshd must get (-x).
    nccl_tests_image="public.ecr.aws/hpc-cloud/nccl-tests:latest",
    nccl_tests_binary="/opt/nccl-tests/build/all_reduce_perf",
    mpirun="/opt/amazon/openmpi/bin/mpirun",
    forward_env=("PATH", "LD_LIBRARY_PATH", "LD_PRELOAD"),
    kubernetes_services=("eksControlPlane",),
)
