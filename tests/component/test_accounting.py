"""headNode.accounting builds slurmdbd for real: a generated database password kept as a
Pulumi secret, slurmdbd.conf readable by SlurmUser only, MariaDB and slurmdbd ordered and set up by
a script, slurm.conf pointing at slurmdbd. Without it, none of this exists."""

from __future__ import annotations

import yaml

from tests.conftest import plan_stack, resources

PASSWORD = "random:index/randomPassword:RandomPassword"
VM = "azure-native:compute:VirtualMachine"


def test_accounting_makes_a_secret_password_and_the_slurmdbd_files() -> None:
    plan = plan_stack("azure-h100", "headNode.accounting=true")
    (pw,) = resources(plan, PASSWORD)
    assert pw.inputs["length"] >= 32 and pw.inputs["special"] is False
    (vm,) = resources(plan, VM)
    assert "osProfile.customData" in vm.secret_paths  # it carries the password: masked here
    doc = yaml.safe_load(plan.files["cloud-init/scheduler.yaml"])  # the same text, placeholders
    (conf,) = [f for f in doc["write_files"] if f["path"] == "/etc/slurm/slurmdbd.conf"]
    assert (conf["owner"], conf["permissions"]) == ("slurm:slurm", "0600")
    assert "StorageType=accounting_storage/mysql" in conf["content"]
    assert "StoragePass=" in conf["content"] and "StoragePass=\n" not in conf["content"]
    assert {"mariadb-server"} <= {p for p in doc["packages"] if isinstance(p, str)}
    runcmd = [str(c) for c in doc["runcmd"]]
    acct = next(i for i, c in enumerate(runcmd) if "gpucl-accounting.sh" in c)
    ctld = next(i for i, c in enumerate(runcmd) if "restart" in c and "slurmctld" in c)
    assert acct < ctld  # slurmdbd and its database before slurmctld
    slurm_conf = next(f for f in doc["write_files"] if f["path"] == "/etc/slurm/slurm.conf")
    assert "AccountingStorageType=accounting_storage/slurmdbd" in slurm_conf["content"]


def test_without_accounting_there_is_no_password_and_no_slurmdbd() -> None:
    plan = plan_stack("azure-h100")
    assert plan.run.by_type(PASSWORD) == []
    assert "slurmdbd" not in plan.files["cloud-init/scheduler.yaml"]
