"""Every edit of a deployed stack says what it does, field by field."""

from __future__ import annotations

from clusterctl.spec.load import load_stack_spec
from clusterctl.spec.update_policy import diff, refusal


def spec(*overrides: str):
    return load_stack_spec("azure-h100", list(overrides))[0]


def by_path(old, new) -> dict:
    return {c.path: c for c in diff(old, new)}


def test_no_edit_no_change() -> None:
    assert diff(spec(), spec()) == []


def test_a_shrink_names_the_nodes_it_drains_and_deletes_highest_first() -> None:
    old = spec("partitions[0].nodes=5", "partitions[0].maxNodesPerScaleSet=2")
    new = spec("partitions[0].nodes=3", "partitions[0].maxNodesPerScaleSet=2")
    (c,) = diff(old, new)
    assert c.path == "partitions[0].nodes" and c.policy == "in place" and not c.loses
    assert c.detail == (
        "5 -> 3: drains gpu-pg1-2 .. gpu-pg2-1 (2 nodes), waits until they are idle, "
        "then deletes their VMs"
    )
    assert refusal([c], allow_replace=False) is None


def test_growth_adds_names_after_the_existing_ones() -> None:
    (c,) = diff(spec("partitions[0].nodes=100"), spec("partitions[0].nodes=101"))
    assert c.detail == "100 -> 101: adds gpu-pg1-1"


def test_a_scale_set_limit_change_is_refused() -> None:
    changes = diff(spec(), spec("partitions[0].maxNodesPerScaleSet=2"))
    assert [(c.path, c.policy) for c in changes] == [
        ("partitions[0].maxNodesPerScaleSet", "refused")
    ]
    line = refusal(changes, allow_replace=True)
    assert line and line.startswith("partitions[0].maxNodesPerScaleSet: cannot change")


def test_replacements_that_lose_jobs_or_data_need_the_flag() -> None:
    changes = by_path(
        spec(),
        spec("headNode.sku=Standard_D4s_v5", "network.addressSpace=10.50.0.0/16"),
    )
    assert changes["headNode.sku"].policy == "replaces"
    assert "scheduler VM" in changes["headNode.sku"].affects
    assert "VNet" in changes["network.addressSpace"].affects
    line = refusal(list(changes.values()), allow_replace=False)
    assert line and "--allow-replace" in line and line.startswith("headNode.sku: ")
    assert refusal(list(changes.values()), allow_replace=True) is None


def test_in_place_edits_pass() -> None:
    changes = diff(spec(), spec("partitions[0].idleMinutes=5", "tags.team=ml"))
    assert {c.path: c.policy for c in changes} == {
        "partitions[0].idleMinutes": "in place",
        "tags.team": "in place",
    }
    assert refusal(changes, allow_replace=False) is None


def test_a_team_change_is_applied_in_place_by_the_team_run_command() -> None:
    from clusterctl.spec.load import load_stack_spec
    from clusterctl.spec.update_policy import diff

    old, _ = load_stack_spec("azure-team")
    new, _ = load_stack_spec("azure-team", ["users[1].account=vision", "accounts[0].gpuLimit=16"])
    changes = diff(old, new)
    assert {c.path for c in changes} == {"users", "accounts"}, changes
    assert all(c.policy == "in place" and "team Run Command" in c.affects for c in changes)


JAMMY = "Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2"


def test_a_moved_head_image_pin_names_every_vm_it_replaces_and_what_each_keeps() -> None:
    old = spec(f"headNode.image={JAMMY}:22.04.202501010")
    (c,) = diff(old, spec(f"headNode.image={JAMMY}:22.04.202502010"))
    assert c.path == "headNode.image" and c.policy == "replaces"
    for vm in ("scheduler VM", "login VMs", "jump host"):
        assert vm in c.affects, c.affects
    assert "running jobs go on" in c.affects and "running jobs are lost" not in c.affects
    for kept in ("NIC", "private and public IP", "data disk", "/home", "Slurm's state"):
        assert kept in c.keeps, c.keeps
    line = refusal([c], allow_replace=False)  # the scheduler is down for minutes: the flag
    assert line and line.startswith("headNode.image: ") and "--allow-replace" in line


def test_a_new_head_size_keeps_the_schedulers_data_too() -> None:
    (c,) = diff(spec(), spec("headNode.sku=Standard_D4s_v5"))
    assert c.policy == "replaces" and "scheduler VM" in c.affects
    assert "data disk" in c.keeps and "/home" in c.keeps


def test_a_new_login_size_replaces_the_login_vms_which_keep_their_addresses() -> None:
    old = spec("loginNodes.count=1", "loginNodes.sku=Standard_D8s_v5")
    (c,) = diff(old, spec("loginNodes.count=1", "loginNodes.sku=Standard_D4s_v5"))
    assert c.policy == "replaces" and "login VMs" in c.affects
    assert "NIC" in c.keeps and "/home" in c.keeps


HPC = "microsoft-dsvm:ubuntu-hpc"


def test_a_moved_gpu_image_version_is_in_place_and_says_running_vms_keep_theirs() -> None:
    old = spec(f"partitions[0].image={HPC}:2204:22.04.2026010101")
    (c,) = diff(old, spec(f"partitions[0].image={HPC}:2204:22.04.2026020101"))
    assert c.path == "partitions[0].image" and c.policy == "in place" and not c.loses
    assert "created from now on" in c.affects and "update-instances" in c.affects
    # the stack's first pin of the catalog's own image is a version move too
    (first,) = diff(spec(), spec(f"partitions[0].image={HPC}:2204:22.04.2026020101"))
    assert first.policy == "in place"


def test_a_gpu_image_of_another_release_replaces_the_partitions_scale_sets() -> None:
    (c,) = diff(spec(), spec(f"partitions[0].image={HPC}:2404:24.04.2026072901"))
    assert c.path == "partitions[0].image" and c.policy == "replaces" and c.loses
    assert "scale sets" in c.affects
    line = refusal([c], allow_replace=False)
    assert line and line.startswith("partitions[0].image: ") and "--allow-replace" in line


def test_a_private_api_server_is_refused_on_a_deployed_aks_cluster_and_in_place_on_eks() -> None:
    edit = ["kubernetes.privateApiServer=true", "ssh.allowedCidrs=[10.8.0.0/16]"]
    changes = {}
    for stack in ("aks-h100", "aws-p5"):
        old = load_stack_spec(stack, ["ssh.allowedCidrs=[10.8.0.0/16]"])[0]
        (changes[stack],) = diff(old, load_stack_spec(stack, edit)[0])
        assert changes[stack].path == "kubernetes.privateApiServer"
    assert changes["aks-h100"].policy == "refused" and "new cluster" in changes["aks-h100"].affects
    assert changes["aws-p5"].policy == "in place"
