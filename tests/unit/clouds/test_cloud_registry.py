"""The cloud registry: every cloud module found without a list, what it does not support named by
a Feature (the messages read as they did when they were free text), and the list users see."""

from __future__ import annotations

import dataclasses

import pytest

from clusterctl import clouds, platform
from clusterctl.clouds import ANY, Feature
from clusterctl.spec.model import ClusterSpec

MESSAGES = {
    (Feature.CLUSTERS, "aws", "slurm"): (
        "clusters are not supported on AWS Slurm yet: use cloud: azure for Slurm, or scheduler: "
        "kubernetes on aws"
    ),
    (Feature.ZONES_AND_RESERVATIONS, "azure", "slurm"): (
        "zones and capacity reservations are not supported on Azure yet: they are AWS options; "
        "Azure scale sets for InfiniBand stay in one placement group"
    ),
    (Feature.ZONES_AND_RESERVATIONS, "azure", "kubernetes"): (
        "zones and capacity reservations are not supported on Azure yet: they are AWS options; "
        "Azure scale sets for InfiniBand stay in one placement group"
    ),
    (Feature.ARM64_GPU_NODES, "azure", "kubernetes"): (
        "arm64 GPU nodes are not supported on Azure Kubernetes yet: the AKS GPU node pool and its "
        "add-ons are set up for x86_64 nodes only"
    ),
    (Feature.ARM64_GPU_NODES, "aws", "kubernetes"): (
        "arm64 GPU nodes are not supported on AWS Kubernetes yet: the EKS GPU node group uses the "
        "AL2023_x86_64_NVIDIA AMI"
    ),
    (Feature.SHARED_LUSTRE, "azure", "kubernetes"): (
        "shared Lustre file systems are not supported on Azure Kubernetes yet: the AKS cluster "
        "runs in the VNet AKS makes itself (Azure CNI overlay), and Azure Managed Lustre needs a "
        "subnet of its own (at least /24) in a VNet the nodes reach, which the stack does not "
        "build yet; remove kubernetes.sharedFilesystem (FSx for Lustre on EKS works)"
    ),
    (Feature.MULTI_NODE_NVLINK, "azure", "kubernetes"): (
        "NVLink domains across nodes are not supported on Kubernetes yet: IMEX channels for "
        "multi-node NVLink (NVIDIA's DRA ComputeDomain) are not set up; use scheduler: slurm"
    ),
    (Feature.MULTI_NODE_NVLINK, "aws", "kubernetes"): (
        "NVLink domains across nodes are not supported on Kubernetes yet: IMEX channels for "
        "multi-node NVLink (NVIDIA's DRA ComputeDomain) are not set up; use scheduler: slurm"
    ),
}
"""Every "not supported" line as users read it before the features were an enum."""


def test_every_not_supported_message_reads_as_it_did() -> None:
    said = {
        (feature, cloud, scheduler): message
        for feature in Feature
        for cloud in clouds.names()
        for scheduler in platform.SCHEDULERS
        if (message := platform.unsupported(feature, cloud, scheduler))
    }
    assert said == MESSAGES


def test_what_a_cloud_does_not_support_is_named_by_a_feature() -> None:
    for cloud in clouds.all_clouds():
        for feature, scheduler in cloud.unsupported:
            assert isinstance(feature, Feature), (cloud.name, feature)
            assert scheduler == ANY or scheduler in platform.SCHEDULERS, (cloud.name, scheduler)
    for scheduler in platform.SCHEDULERS.values():
        assert all(isinstance(f, Feature) for f in scheduler.unsupported)


def test_the_clouds_are_found_by_their_modules_and_listed_as_users_know_them() -> None:
    assert clouds.names() == ("azure", "aws")
    schema = ClusterSpec.model_json_schema(by_alias=True)
    assert schema["properties"]["cloud"]["enum"] == list(clouds.names())


def test_a_cloud_registered_after_the_stack_model_listed_them_is_refused() -> None:
    late = dataclasses.replace(clouds.cloud_of("aws"), name="late")
    with pytest.raises(RuntimeError, match=r"before clusterctl\.spec is imported"):
        clouds.register(late)
    assert "late" not in clouds.names()


def test_a_cloud_is_registered_once() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        clouds.register(clouds.cloud_of("aws"))
