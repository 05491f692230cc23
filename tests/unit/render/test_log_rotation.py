"""Every Slurm and gpu-clusters log on the scheduler (30 GiB OS disk) and the
GPU nodes is rotated, as the owner of its folder on that role, with Slurm's daemons
told to reopen theirs (login nodes run no Slurm daemon that writes a log file); MariaDB for slurmdbd
gets the settings Slurm's accounting guide names."""

from __future__ import annotations

import configparser
import fnmatch
import re

import pytest
import yaml

from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.render.power_files import power_config
from clusterctl.render.site import cloud_site
from clusterctl.render.slurm_conf import render_slurmdbd_conf
from clusterctl.render.user_data import MUNGE_PLACEHOLDER
from clusterctl.spec.catalog import catalog
from clusterctl.spec.load import load_stack_spec


def _files(stack: str, role: str) -> dict[str, str]:
    spec, _ = load_stack_spec(stack, ["headNode.accounting=true"])
    part = None if role == "scheduler" else spec.partitions[0]
    doc = yaml.safe_load(
        render_cloud_init(
            spec, stack, munge_key_b64=MUNGE_PLACEHOLDER, partition=part, db_password="x"
        )
    )
    return {f["path"]: f["content"] for f in doc["write_files"]}


def _logs(stack: str) -> list[str]:
    """Every log file a daemon or our power program writes, by its configured name."""
    spec, _ = load_stack_spec(stack, ["headNode.accounting=true"])
    site = cloud_site(spec)
    text = _files(stack, "scheduler")[f"{site.etc_dir}/slurm.conf"]
    text += render_slurmdbd_conf(spec, site, stack, "x")
    names = re.findall(r"^(?:SlurmctldLogFile|SlurmdLogFile|LogFile)=(\S+)", text, re.M)
    names.append(yaml.safe_load(power_config(spec, catalog()))["logFile"])
    return [n.replace("%n", "gpu-pg0-1") for n in names]


def _log_dir_owner(stack: str, role: str) -> str:
    """Who owns the Slurm log folder once cloud-init is done: a runcmd's chown, else root."""
    spec, _ = load_stack_spec(stack, ["headNode.accounting=true"])
    part = None if role == "scheduler" else spec.partitions[0]
    doc = yaml.safe_load(
        render_cloud_init(
            spec, stack, munge_key_b64=MUNGE_PLACEHOLDER, partition=part, db_password="x"
        )
    )
    log_dir = cloud_site(spec).log_dir
    runcmd = [c if isinstance(c, str) else " ".join(c) for c in doc["runcmd"]]
    made = [c for c in runcmd if re.search(rf"mkdir -p [^&]*{log_dir}\b", c)]
    assert made, f"no runcmd makes {log_dir}"
    owners = [
        m.group(1) for c in runcmd if (m := re.search(rf"chown (\w+):\w+ [^&]*{log_dir}\b", c))
    ]
    return owners[-1] if owners else "root"


@pytest.mark.parametrize("stack", ["azure-h100", "azure-a100"])
@pytest.mark.parametrize("role", ["scheduler", "gpu"])
def test_every_log_is_rotated_and_the_daemons_reopen_theirs(stack: str, role: str) -> None:
    conf = _files(stack, role).get("/etc/logrotate.d/gpu-clusters-slurm")
    assert conf, "no logrotate configuration"
    pattern = conf.split("{", 1)[0].strip()
    logs = _logs(stack)
    assert len(logs) == 4 and all(fnmatch.fnmatch(log, pattern) for log in logs), (pattern, logs)
    body = conf.split("{", 1)[1]
    # logrotate works as the folder's owner: `su` to it where that is not root (logrotate refuses a
    # folder another user can write), none where it is (`su slurm` cannot write in a root folder:
    # the GPU nodes' logs never rotated)
    owner = _log_dir_owner(stack, role)
    su = re.findall(r"^\s*su (\S+) (\S+)$", body, re.M)
    assert su == ([] if owner == "root" else [(owner, owner)]), (owner, su)
    assert re.search(rf"^\s*create 0640 {owner} {owner}$", body, re.M), body
    keep = int(re.search(r"\brotate (\d+)", body).group(1))
    assert 1 <= keep <= 30 and re.search(r"\bmaxsize \d+M\b", body) and "compress" in body
    daemons = ("slurmctld", "slurmdbd") if role == "scheduler" else ("slurmd",)
    for daemon in daemons:
        assert f"pkill -x --signal SIGUSR2 {daemon} " in body


@pytest.mark.parametrize("stack", ["azure-h100", "azure-a100"])
def test_mariadb_gets_slurms_accounting_settings(stack: str) -> None:
    files = _files(stack, "scheduler")
    cnf = configparser.ConfigParser()
    cnf.read_string(files["/etc/mysql/mariadb.conf.d/61-gpu-clusters-slurmdbd.cnf"])
    db = cnf["mysqld"]
    size = {"M": 1, "G": 1024}
    mib = lambda v: int(v[:-1]) * size[v[-1]]  # noqa: E731
    assert mib(db["innodb_buffer_pool_size"]) >= 4096
    assert mib(db["innodb_log_file_size"]) >= 64
    assert int(db["innodb_lock_wait_timeout"]) >= 900
    # slurmdbd 26.05 logs an error (fatal on a write conflict) with it on: MariaDB 11.8's default
    assert db["loose-innodb_snapshot_isolation"] == "OFF"
