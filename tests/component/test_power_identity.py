"""The scheduler's power program authenticates as the scheduler's user-assigned
identity named by its client id (power.json azure.clientId from the identity the program makes),
not as whichever identity IMDS would pick."""

from __future__ import annotations

import json

import pytest
import yaml

from clusterctl.power.azure_backend import AzureBackend
from clusterctl.render.cloud_init import azure_custom_data
from clusterctl.render.power_files import POWER_CONFIG
from tests.conftest import plan_stack, resources

MOCK_CLIENT_ID = "22222222-2222-2222-2222-222222222222"  # clusterctl/plan/mockengine.py


def test_power_json_names_the_scheduler_identitys_client_id(monkeypatch) -> None:
    """customData is masked under the mock engine: the user-data is watched instead as the node
    props pack it, its secrets filled in (components/azure/slurm/props.py)."""
    import components.azure.slurm.props as props

    seen: list[str] = []

    def pack(text: str) -> str:
        files = yaml.safe_load(text)["write_files"]
        for power in (f for f in files if f["path"] == POWER_CONFIG):  # the scheduler's alone
            seen.append(json.loads(power["content"])["azure"]["clientId"])
        return azure_custom_data(text)

    monkeypatch.setattr(props, "azure_custom_data", pack)
    plan = plan_stack("azure-h100")
    (vm,) = resources(plan, "azure-native:compute:VirtualMachine")
    assert seen == [MOCK_CLIENT_ID]  # the client id the mock engine gave the identity
    (identity,) = resources(plan, "azure-native:managedidentity:UserAssignedIdentity")
    assert [identity.name] == [
        i.rsplit("/", 1)[1] for i in vm.inputs["identity"]["userAssignedIdentities"]
    ]


def test_the_backend_refuses_to_guess_an_identity() -> None:
    with pytest.raises(ValueError, match="clientId"):
        AzureBackend.from_config({"subscriptionId": "s", "resourceGroup": "rg"})


def test_only_the_scheduler_holds_an_identity() -> None:
    """The IMDS guard (gpucl-imds-guard.service) is on the scheduler alone: no GPU scale set may
    carry an identity a job's process could ask IMDS for."""
    plan = plan_stack("azure-h100")
    for vmss in resources(plan, "azure-native:compute:VirtualMachineScaleSet"):
        assert not vmss.inputs.get("identity"), (vmss.name, vmss.inputs.get("identity"))
    (vm,) = resources(plan, "azure-native:compute:VirtualMachine")
    assert vm.inputs["identity"]["type"] == "UserAssigned"
