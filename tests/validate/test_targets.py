"""Targets from stack outputs (the file backend's checkpoint), --host, --kubeconfig."""

from __future__ import annotations

import pytest

from clusterctl.errors import UserError
from clusterctl.validate.targets import (
    KubeTarget,
    SlurmTarget,
    outputs_from_checkpoint,
    resolve,
    stack_target,
)

SECRET = {
    "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
    "ciphertext": "v1:x",
}
STACK_URN = "urn:pulumi:azure-h100::gpu-clusters::pulumi:pulumi:Stack::gpu-clusters-azure-h100"
PROVIDER_URN = "urn:pulumi:azure-h100::gpu-clusters::pulumi:providers:azure-native::default"
CHECKPOINT = {
    "version": 3,
    "checkpoint": {
        "stack": "organization/gpu-clusters/azure-h100",
        "latest": {
            "resources": [
                {"urn": PROVIDER_URN,
                 "type": "pulumi:providers:azure-native"},
                {"urn": STACK_URN,
                 "type": "pulumi:pulumi:Stack",
                 "outputs": {"schedulerAddress": "20.1.2.3", "adminUser": "azureuser",
                             "scheduler": "slurm", "drainPrefix": "ops:",
                             "partitions": [{"name": "gpu", "sku": "Standard_ND96isr_H100_v5",
                                             "nodes": 4, "gpusPerNode": 8}],
                             "sshPrivateKey": SECRET}},
            ]
        },
    },
}  # fmt: skip


def test_outputs_from_checkpoint_leave_secrets_out() -> None:
    outputs = outputs_from_checkpoint(CHECKPOINT)
    assert outputs["schedulerAddress"] == "20.1.2.3" and "sshPrivateKey" not in outputs


def test_slurm_stack_target_with_partition_and_node_count() -> None:
    t = stack_target("azure-h100", outputs_from_checkpoint(CHECKPOINT), nodes=2)
    assert isinstance(t, SlurmTarget)
    assert (t.nodes, t.partition, t.drain_prefix, t.ssh.user) == (2, "gpu", "ops:", "azureuser")
    with pytest.raises(UserError, match="no partition 'cpu'"):
        stack_target("azure-h100", outputs_from_checkpoint(CHECKPOINT), partition="cpu")


def test_undeployed_stack_is_a_clear_error() -> None:
    with pytest.raises(UserError, match="no schedulerAddress"):
        stack_target("azure-h100", {"scheduler": "slurm"})


def test_kubernetes_stack_uses_its_ncclLauncher_output() -> None:
    launcher = {
        "namespace": "nccl-validation",
        "workers": 2,
        "slotsPerWorker": 8,
        "sku": "p5.48xlarge",
    }
    t = stack_target("aws-p5", {"scheduler": "kubernetes", "ncclLauncher": launcher})
    assert isinstance(t, KubeTarget) and t.nodes == 2 and t.sku == "p5.48xlarge"


def test_host_and_kubeconfig_need_sizes() -> None:
    with pytest.raises(UserError, match="--nodes"):
        resolve(host="sched")
    with pytest.raises(UserError, match="--sku and --nodes"):
        resolve(kubeconfig="kc")
    t = resolve(host="me@sched:2222", nodes=2, sku="Standard_ND96isr_H100_v5")
    assert isinstance(t, SlurmTarget) and t.ssh.port == 2222 and t.gpus_per_node == 8


def test_sandbox_without_a_sandbox_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(UserError, match="no sandbox running in"):
        resolve(sandbox=str(tmp_path))
