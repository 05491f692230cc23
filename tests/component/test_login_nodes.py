"""Login nodes: where the team lands. In the scheduler's subnet, no managed identity
(nothing there can get a token that changes a VM), a public IP only with ssh.access direct; the
scheduler then exports /home and /sched to them and lets only the admin log in."""

from __future__ import annotations

import yaml

from tests.conftest import plan_stack, resources

VM = "azure-native:compute:VirtualMachine"
NIC = "azure-native:network:NetworkInterface"


def _by_role(plan, role: str):
    return [r for r in resources(plan, VM) if r.inputs["tags"]["gpu-clusters:role"] == role]


def test_a_team_cluster_gets_one_login_node_with_no_identity() -> None:
    plan = plan_stack("azure-team")
    (login,) = _by_role(plan, "login")
    (sched,) = _by_role(plan, "scheduler")
    assert "identity" not in login.inputs  # the scheduler's has the power identity
    assert "identity" in sched.inputs
    assert login.inputs["osProfile"]["computerName"] == "team-login-1"
    assert login.ignore_changes == ["osProfile.customData"]
    (nic,) = [n for n in resources(plan, NIC) if n.name == "team-login-1-nic"]
    ip = nic.inputs["ipConfigurations"][0]
    assert "publicIPAddress" in ip  # access: direct
    assert len(plan.as_json()["outputs"]["loginAddresses"]) == 1
    assert any(line.item == "login nodes" and line.count == 1 for line in plan.cost.lines)


def test_login_nodes_behind_a_jump_host_have_no_public_ip_and_none_without_a_team() -> None:
    plan = plan_stack("azure-team", "ssh.access=jumphost", "loginNodes.count=2")
    logins = _by_role(plan, "login")
    assert [v.inputs["osProfile"]["computerName"] for v in logins] == [
        "team-login-1",
        "team-login-2",
    ]
    nics = [n for n in resources(plan, NIC) if "-login-" in n.name]
    assert all("publicIPAddress" not in n.inputs["ipConfigurations"][0] for n in nics)
    assert _by_role(plan_stack("azure-h100"), "login") == []
    assert "cloud-init/login.yaml" not in plan_stack("azure-h100").files


def test_the_scheduler_serves_the_login_nodes_and_takes_only_the_admins_logins() -> None:
    team = yaml.safe_load(plan_stack("azure-team").files["cloud-init/scheduler.yaml"])
    files = {f["path"]: f["content"] for f in team["write_files"]}
    exports = files["/etc/exports.d/gpu-clusters.exports"]
    assert "/shared/home 10.40.0.0/24(" in exports and "/shared/sched 10.40.0.0/24(" in exports
    assert files["/etc/ssh/sshd_config.d/50-gpu-clusters-scheduler.conf"].strip() == (
        "AllowUsers azureuser"
    )
    plain = yaml.safe_load(plan_stack("azure-h100").files["cloud-init/scheduler.yaml"])
    paths = [f["path"] for f in plain["write_files"]]
    assert "/etc/ssh/sshd_config.d/50-gpu-clusters-scheduler.conf" not in paths


def test_the_login_user_data_mounts_the_shares_and_reaches_slurmctld_configless() -> None:
    doc = yaml.safe_load(plan_stack("azure-team").files["cloud-init/login.yaml"])
    files = {f["path"]: f["content"] for f in doc["write_files"]}
    # sackd, not an environment variable that systemd units and cron jobs never read
    assert "/etc/environment" not in files and "SLURM_CONF_SERVER" not in str(doc)
    sackd = files["/etc/systemd/system/sackd.service.d/50-gpu-clusters.conf"]
    assert 'Environment="SACKD_OPTIONS=--conf-server team-scheduler:6817"' in sackd.splitlines()
    runcmd = " ".join(str(c) for c in doc["runcmd"])
    assert "team-scheduler:/shared/home /home nfs" in runcmd
    assert "gpucl-pyxis.sh" in runcmd and "gpucl-users.timer" in runcmd
    assert not any("slurmd" in str(p) or "slurmctld" in str(p) for p in doc["packages"])


def test_entra_id_login_is_the_extension_and_the_user_login_role_for_the_group_alone() -> None:
    group = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
    plan = plan_stack("azure-team", f"loginNodes.entraIdGroup={group}")
    (login,) = _by_role(plan, "login")
    assert login.inputs["identity"] == {"type": "SystemAssigned"}  # the extension needs one
    (ext,) = resources(plan, "azure-native:compute:VirtualMachineExtension")
    assert (ext.inputs["publisher"], ext.inputs["type"]) == (
        "Microsoft.Azure.ActiveDirectory",
        "AADSSHLoginForLinux",
    )
    roles = [
        r
        for r in resources(plan, "azure-native:authorization:RoleAssignment")
        if r.inputs.get("principalType") == "Group"
    ]
    assert len(roles) == 1 and roles[0].inputs["principalId"] == group
    assert roles[0].inputs["roleDefinitionId"].endswith("fb879df8-f326-4884-b1cf-06f3ad86be52")
    # the login VM's identity is given no role: only the power identity may change VMs
    others = [
        r
        for r in resources(plan, "azure-native:authorization:RoleAssignment")
        if r.inputs.get("principalType") == "ServicePrincipal"
    ]
    assert others and all("login" not in r.name for r in others)
