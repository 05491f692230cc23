"""Kubernetes GPU node groups scale to zero: minNodes is the autoscaler's minimum (refused where
it cannot be one), the plan states what an idle cluster bills, and the autoscaler is told what a
node of each group offers while there is none (the components: tests/component/
test_gpu_autoscaling.py)."""

from __future__ import annotations

import json

import pytest

from clusterctl.project import config_dir
from clusterctl.spec.catalog import catalog
from clusterctl.spec.cost import cost_per_hour, idle_cost_per_hour
from clusterctl.spec.kubernetes import (
    aks_node_template_tags,
    autoscaler_node_template,
    eks_node_template_tags,
    kubernetes_version,
)
from clusterctl.spec.kubernetes_addons import cluster_autoscaler_image, helm_addons
from tests.unit.spec.test_rules_kubernetes import errors_of, load_stack_spec, plan_cli

STACKS = ("aws-p5", "aks-h100")
RESERVED = [
    "partitions[0].capacityBlock=true",
    "partitions[0].capacityReservationId=cr-0123456789abcdef0",
]


@pytest.mark.parametrize("stack", STACKS)
def test_min_nodes_is_the_autoscalers_minimum_on_kubernetes(stack: str) -> None:
    """Old code: refused ('minNodes (Slurm power saving) has no effect on a Kubernetes
    cluster'), and every GPU node ran whether used or not."""
    spec, findings = load_stack_spec(stack, ["partitions[0].minNodes=1"])
    assert not [f for f in findings if f.level == "error"]
    assert spec.partitions[0].min_nodes == 1


@pytest.mark.parametrize("stack", STACKS)
def test_min_nodes_above_nodes_is_refused(stack: str) -> None:
    (line,) = errors_of(stack, "partitions[0].minNodes=3")
    assert line.startswith("gpu-clusters:cluster.partitions[0].minNodes: ")
    assert "set minNodes to at most 2" in line


def test_min_nodes_in_reserved_capacity_is_refused() -> None:
    (line,) = errors_of("aws-p5", *RESERVED, "partitions[0].minNodes=1")
    assert line.startswith("gpu-clusters:cluster.partitions[0].minNodes: ")
    assert "reserved capacity" in line and "remove minNodes" in line


@pytest.mark.parametrize("stack", STACKS)
def test_idle_minutes_stays_refused_on_kubernetes(stack: str) -> None:
    (line,) = errors_of(stack, "partitions[0].idleMinutes=5")
    assert line.startswith("gpu-clusters:cluster.partitions[0].idleMinutes: ")
    assert "10 minutes after its last GPU pod" in line


@pytest.mark.parametrize("stack", STACKS)
def test_idle_cost_is_the_system_nodes_and_services(stack: str) -> None:
    """Old code: a Kubernetes cluster idled at its full cost, every GPU node up."""
    cat = catalog()
    spec, _ = load_stack_spec(stack, [])
    full = cost_per_hour(spec, cat)
    fixed = sum(x.usd_per_hour or 0.0 for x in full.lines if not x.item.startswith("partition "))
    assert idle_cost_per_hour(spec, cat) == round(fixed, 2)
    assert idle_cost_per_hour(spec, cat) < full.total / 50
    one, _ = load_stack_spec(stack, ["partitions[0].minNodes=1"])
    price = cat.require(spec.partitions[0].sku).price.usd_per_hour
    assert idle_cost_per_hour(one, cat) == pytest.approx(fixed + price, abs=0.01)


def test_reserved_capacity_idles_at_full_size() -> None:
    cat = catalog()
    spec, _ = load_stack_spec("aws-p5", RESERVED)
    assert idle_cost_per_hour(spec, cat) == cost_per_hour(spec, cat).total


@pytest.mark.parametrize(("stack", "idle"), [("aws-p5", "$0.92"), ("aks-h100", "$0.90")])
def test_plan_shows_the_idle_cost(stack: str, idle: str) -> None:
    proc = plan_cli(config_dir(), "-s", stack)
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert f"idle, with the cluster autoscaler: {idle} per hour" in text
    doc = json.loads(plan_cli(config_dir(), "-s", stack, "--json").stdout)
    assert doc["idle_cost_per_hour_usd"] == float(idle[1:])


def test_eks_node_template_names_what_the_worker_requests() -> None:
    """Without these tags the autoscaler sees no group where an EFA worker fits at 0 nodes."""
    spec, _ = load_stack_spec("aws-p5", [])
    part = spec.partitions[0]
    tags = eks_node_template_tags(autoscaler_node_template(part, catalog(), {}))
    prefix = "k8s.io/cluster-autoscaler/node-template/"
    assert tags[prefix + "resources/vpc.amazonaws.com/efa"] == "32"
    assert tags[prefix + "resources/nvidia.com/gpu"] == "8"
    assert tags[prefix + "resources/hugepages-2Mi"] == "5120Mi"
    assert tags[prefix + "taint/nvidia.com/gpu"] == "present:NoSchedule"
    assert tags[prefix + "label/gpu-clusters/partition"] == part.name


def test_aks_node_template_tags_are_valid_azure_tag_names() -> None:
    spec, _ = load_stack_spec("aks-h100", [])
    part = spec.partitions[0]
    tags = aks_node_template_tags(autoscaler_node_template(part, catalog(), {"a_b/c": "x"}))
    prefix = "k8s.io_cluster-autoscaler_node-template_"
    assert tags[prefix + "resources_rdma_ib"] == "8"
    assert tags[prefix + "resources_nvidia.com_gpu"] == "8"
    assert tags[prefix + "taint_nvidia.com_gpu"] == "present:NoSchedule"
    assert tags[prefix + "label_gpu-clusters_partition"] == part.name
    assert tags[prefix + "label_a~2b_c"] == "x"
    assert not [k for k in tags if set(k) & set("<>%&\\?/")]  # Azure refuses these in names


def test_cluster_autoscaler_runs_on_eks_only_and_matches_the_kubernetes_minor() -> None:
    cat = catalog()
    eks, _ = load_stack_spec("aws-p5", [])
    aks, _ = load_stack_spec("aks-h100", [])
    (ca,) = [a for a in helm_addons(eks, "aws-p5", cat) if a.release == "cluster-autoscaler"]
    assert not [a for a in helm_addons(aks, "aks-h100", cat) if a.release == "cluster-autoscaler"]
    assert ca.values["autoDiscovery"]["clusterName"] == f"{eks.name}-aws-p5"
    assert ca.values["awsRegion"] == eks.region
    minor = ".".join(cluster_autoscaler_image(cat).lstrip("v").split(".")[:2])
    assert minor == kubernetes_version(eks, cat)


def test_a_min_nodes_edit_on_kubernetes_is_described_as_the_autoscalers() -> None:
    """Old code: `up`'s preview said 'slurm.conf on the scheduler' for an EKS stack."""
    from clusterctl.spec.update_policy import diff

    old, _ = load_stack_spec("aws-p5", [])
    new, _ = load_stack_spec("aws-p5", ["partitions[0].minNodes=1"])
    (change,) = diff(old, new)
    assert change.path == "partitions[0].minNodes" and change.policy == "in place"
    assert "autoscaler" in change.affects and "slurm" not in change.affects.lower()
