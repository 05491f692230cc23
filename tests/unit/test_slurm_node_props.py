"""The Azure Slurm components build from frozen props made once from the spec
(components/azure/slurm/props.py): the components neither import nor receive ClusterSpec, the
props cannot be changed after they are made, and each role's bound user-data is that role's."""

from __future__ import annotations

import ast
import base64
import dataclasses
import gzip
import inspect
from pathlib import Path

import pytest

from clusterctl.render.roles import plan_slurm
from clusterctl.spec.load import load_stack_spec

ROOT = Path(__file__).resolve().parents[2]
NODE_COMPONENTS = ("scheduler_node", "login_node", "gpu_partition")
BASE_COMPONENTS = ("network", "cluster_secrets", "jump_host", "files_share", "disk_backup")
SECRETS = {"munge_key_b64": base64.b64encode(b"k" * 32).decode(), "files_account": None}


def _props(*overrides: str):
    from components.azure.slurm.props import slurm_node_props

    spec, _ = load_stack_spec("azure-h100", list(overrides))
    return spec, slurm_node_props(spec, "azure-h100", plan_slurm(spec, "azure-h100"))


def _user_data(custom_data: str) -> str:
    return gzip.decompress(base64.b64decode(custom_data)).decode()


@pytest.mark.parametrize("module", NODE_COMPONENTS + BASE_COMPONENTS)
def test_component_neither_imports_nor_takes_the_cluster_spec(module: str) -> None:
    path = ROOT / "components" / "azure" / "slurm" / f"{module}.py"
    tree = ast.parse(path.read_text(), str(path))
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert "ClusterSpec" not in imported and "PartitionSpec" not in imported
    components = [
        obj
        for obj in vars(__import__(f"components.azure.slurm.{module}", fromlist=["_"])).values()
        if inspect.isclass(obj) and obj.__module__.endswith(module)
    ]
    assert components
    for cls in components:
        params = inspect.signature(cls.__init__).parameters
        assert "spec" not in params and "props" in params, (cls.__name__, list(params))


def test_the_import_contract_holds_every_module_but_the_two_that_read_the_spec() -> None:
    """props.py reads the spec and slurm_cluster.py hands it over; lint-imports keeps every
    other module of the package from importing the spec model or the renderers."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["id"] == "slurm-nodes-from-props"]
    package = ROOT / "components" / "azure" / "slurm"
    modules = {p.stem for p in package.glob("*.py")} - {"__init__", "props", "slurm_cluster"}
    assert set(NODE_COMPONENTS + BASE_COMPONENTS) <= modules
    listed = {m.removeprefix("components.azure.slurm.") for m in contract["source_modules"]}
    assert listed == modules
    assert "clusterctl.spec.model" in contract["forbidden_modules"]


def test_the_base_props_cannot_be_changed_once_made() -> None:
    from components.azure.slurm.props import slurm_base_props

    spec, _ = load_stack_spec("azure-h100")
    base = slurm_base_props(spec, "azure-h100")
    with pytest.raises(dataclasses.FrozenInstanceError):
        base.network.region = "elsewhere"
    with pytest.raises(TypeError):
        base.disk_backup.tags["gpu-clusters:role"] = "other"
    with pytest.raises(TypeError):
        base.jump_host.image["sku"] = "other"


def test_props_cannot_be_changed_once_made() -> None:
    _, props = _props("loginNodes.count=1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        props.scheduler.vm.vm_size = "Standard_B1s"
    with pytest.raises(TypeError):
        props.partitions[0].vm.tags["gpu-clusters:role"] = "other"
    with pytest.raises(TypeError):
        props.logins[0].vm.image["sku"] = "other"


def test_props_hold_one_entry_per_login_node_and_partition_in_the_spec_order() -> None:
    spec, props = _props("loginNodes.count=2", "partitions[0].nodes=150")
    assert [p.partition for p in props.partitions] == [p.name for p in spec.partitions]
    assert [s.size for s in props.partitions[0].scale_sets] == [100, 50]
    assert [login.computer_name for login in props.logins] == [
        f"{spec.name}-login-1",
        f"{spec.name}-login-2",
    ]


def test_each_role_gets_its_own_user_data() -> None:
    spec, props = _props("loginNodes.count=2")
    scheduler = _user_data(
        props.scheduler.vm.user_data(**SECRETS, db_password=None, identity_client_id="id-1")
    )
    logins = [_user_data(login.vm.user_data(**SECRETS)) for login in props.logins]
    gpu = _user_data(props.partitions[0].vm.user_data(**SECRETS))
    assert len({scheduler, *logins, gpu}) == 4
    assert "id-1" in scheduler and "id-1" not in gpu
    for i, text in enumerate(logins):
        assert f"{spec.name}-login-{i + 1}" in text
    assert f"{spec.name}-login-2" not in logins[0]
