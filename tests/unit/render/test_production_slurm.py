"""What a cluster on Azure's slurm-smd 25.11 needs beyond a booting slurm.conf: PMIx
where srun runs, sackd on the login nodes, pam_slurm_adopt on the GPU nodes, and container jobs
that see the node's NCCL settings. Each test reads the user-data (or runs the rendered script) as
the node would."""

from __future__ import annotations

import configparser
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.render.paths import ADOPT_ACCESS, NCCL_CONF_OURS
from clusterctl.render.user_data import MUNGE_PLACEHOLDER
from clusterctl.spec.catalog import catalog
from clusterctl.spec.load import load_stack_spec
from tests.conftest import node_script

ROLES = ("scheduler", "login", "gpu")


def _user_data(stack: str, role: str, *overrides: str) -> dict:
    spec, _ = load_stack_spec(stack, ["headNode.accounting=true", *overrides])
    text = render_cloud_init(
        spec,
        stack,
        munge_key_b64=MUNGE_PLACEHOLDER,
        partition=spec.partitions[0] if role == "gpu" else None,
        db_password="x",
        login_index=0 if role == "login" else None,
    )
    return yaml.safe_load(text)


def _files(doc: dict) -> dict[str, str]:
    return {f["path"]: f.get("content", "") for f in doc["write_files"]}


def _packages(doc: dict) -> dict[str, str | None]:
    return {p[0] if isinstance(p, list) else p: p[1] if isinstance(p, list) else None
            for p in doc["packages"]}  # fmt: skip


def _pins() -> dict:
    return catalog().versions["nodePackages"]


@pytest.mark.parametrize("role", ROLES)
def test_every_role_where_srun_runs_installs_the_pinned_pmix(role: str) -> None:
    """The pmix plugin dlopens libpmix.so.2 in srun too: `srun --mpi=pmix` from the login node (or
    the scheduler) failed where only the GPU nodes' image had PMIx."""
    pkgs = _packages(_user_data("azure-team", role))
    assert pkgs.get("pmix") == f"{_pins()['pmix']['version']}*"
    assert not {"libpmix2", "libpmix2t64", "libpmix-dev"} & set(pkgs)  # another path, PMIx 5


def test_the_login_node_runs_sackd_against_slurmctld_and_it_never_gives_up() -> None:
    doc = _user_data("azure-team", "login")
    assert _packages(doc)["slurm-smd-sackd"] == f"{_pins()['slurm']['version']}*"
    files = _files(doc)
    conf = configparser.ConfigParser(strict=False, interpolation=None)
    conf.optionxform = str  # type: ignore[assignment,method-assign]
    conf.read_string(files["/etc/systemd/system/sackd.service.d/40-gpucl-restart.conf"])
    assert conf.get("Service", "Restart") == "always"
    assert conf.get("Service", "TimeoutStartSec") == "infinity"
    assert conf.get("Unit", "StartLimitIntervalSec") == "0"
    runcmd = [c if isinstance(c, str) else " ".join(c) for c in doc["runcmd"]]
    start = runcmd.index("systemctl restart sackd")
    assert "systemctl enable sackd" in runcmd[:start]
    assert runcmd.index("systemctl restart munge") < start  # sackd authenticates with munge
    assert not any(p.startswith("/etc/slurm/") for p in files)  # it would win over /run/slurm/conf


def test_gpu_nodes_install_pam_slurm_adopt_and_jobs_get_an_extern_step() -> None:
    spec, _ = load_stack_spec("azure-team")
    doc = _user_data("azure-team", "gpu")
    assert _packages(doc)["slurm-smd-libpam-slurm-adopt"] == f"{_pins()['slurm']['version']}*"
    slurm_conf = _files(_user_data("azure-team", "scheduler"))["/etc/slurm/slurm.conf"]
    (flags,) = re.findall(r"^PrologFlags=(\S+)$", slurm_conf, re.M)
    assert {"alloc", "contain"} <= set(flags.lower().split(","))
    rules = _files(doc)[ADOPT_ACCESS].split("\n")
    assert rules[0].split(":") == ["+", f"root {spec.ssh.admin_user}", "ALL"]
    assert "+:(gpucl-admins):ALL" in rules and [r for r in rules if r][-1] == "-:ALL:ALL"
    runcmd = " ".join(str(c) for c in doc["runcmd"])
    assert "gpucl-pam-adopt.sh" in runcmd


# Ubuntu 22.04's /etc/pam.d/sshd account and session part and its common-session (as shipped).
UBUNTU_SSHD = """\
@include common-auth
account    required     pam_nologin.so
@include common-account
session [success=ok ignore=ignore module_unknown=ignore default=bad]        pam_selinux.so close
session    required     pam_loginuid.so
@include common-session
@include common-password
"""
UBUNTU_COMMON_SESSION = """\
session	[default=1]			pam_permit.so
session	requisite			pam_deny.so
session	required			pam_permit.so
session optional			pam_umask.so
session	required	pam_unix.so
session	optional	pam_systemd.so
"""


def test_sshd_checks_pam_access_then_pam_slurm_adopt_last_and_drops_pam_systemd(
    tmp_path: Path,
) -> None:
    script = tmp_path / "gpucl-pam-adopt.sh"
    script.write_text(node_script("azure-team", "gpucl-pam-adopt.sh"))
    pam = tmp_path / "pam.d"
    pam.mkdir()
    (pam / "sshd").write_text(UBUNTU_SSHD)
    (pam / "common-session").write_text(UBUNTU_COMMON_SESSION)
    env = {"GPUCL_PAM_DIR": str(pam), "PATH": "/usr/bin:/bin"}
    for _ in range(2):  # a second run (cloud-init rerun) changes nothing
        done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    lines = (pam / "sshd").read_text().splitlines()
    account = [x.split() for x in lines if x.startswith(("account", "@include common-account"))]
    assert account[-3] == ["@include", "common-account"]
    assert account[-2] == ["account", "sufficient", "pam_access.so", f"accessfile={ADOPT_ACCESS}"]
    assert account[-1][:3] == ["account", "required", "pam_slurm_adopt.so"]
    assert {"action_adopt_failure=deny", "action_generic_failure=deny"} <= set(account[-1])
    session = (pam / "common-session").read_text().splitlines()
    assert not [x for x in session if "pam_systemd" in x and not x.startswith("#")]
    assert len(session) == len(UBUNTU_COMMON_SESSION.splitlines())
    # a sshd file of another shape fails the node's setup instead of leaving logins open
    (pam / "sshd").write_text("account required pam_nologin.so\n")
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True)
    assert done.returncode == 1 and "common-account" in done.stderr


@pytest.mark.parametrize("stack", ["azure-h100", "azure-a100"])
def test_container_jobs_get_the_nodes_nccl_conf_and_its_topology_file(stack: str) -> None:
    """pyxis/enroot containers (validate --train's NGC image) saw neither /etc/nccl.conf nor the
    NCCL_TOPO_FILE it names under /opt/microsoft: exported, not mounted."""
    files = _files(_user_data(stack, "gpu"))
    fstab = [
        line.split() for line in files["/etc/enroot/mounts.d/50-gpu-clusters.fstab"].splitlines()
    ]
    assert all(len(f) == 6 for f in fstab), fstab
    mounts = {f[0]: f for f in fstab}
    # ours is merged into the image's /etc/nccl.conf at boot (gpucl-nccl-conf.sh)
    (topo,) = re.findall(r"^NCCL_TOPO_FILE=(\S+)$", files[NCCL_CONF_OURS], re.M)
    for path in ("/etc/nccl.conf", topo):
        src = next((s for s in mounts if path == s or path.startswith(s.rstrip("/") + "/")), None)
        assert src is not None, f"{path} is not mounted into containers: {fstab}"
        _, dst, _, options, _, _ = mounts[src]
        assert dst == src and {"bind", "ro"} <= set(options.split(",")), mounts[src]


def test_no_scheduler_unit_starts_a_slurmctld_an_admin_stopped() -> None:
    """A timer's service with Requires=slurmctld.service starts slurmctld again after an admin's
    `systemctl stop slurmctld` (seen in the e2e controller-away test, which had to mask it). Every
    unit ordered after slurmctld skips its run while slurmctld is not active instead."""
    for stack in ("azure-h100", "azure-team"):
        files = _files(_user_data(stack, "scheduler"))
        units = {p: t for p, t in files.items() if p.startswith("/etc/systemd/system/")}
        # the ones that act on slurmctld (the metrics one reports it away, so it always runs)
        needs = ["gpucl-names.service", "gpucl-power-return.service"]
        after = [f"/etc/systemd/system/{u}" for u in needs]
        for path, text in units.items():
            pulls = [ln for ln in text.splitlines() if ln.startswith(("Requires=", "Wants=",
                     "BindsTo=")) and "slurmctld" in ln]  # fmt: skip
            assert pulls == [], (stack, path, pulls)
        for path in after:
            cond = "ExecCondition=/bin/systemctl is-active --quiet slurmctld.service"
            assert cond in units[path].splitlines(), (stack, path)


def test_the_login_nodes_slurm_conf_outlives_a_stopped_sackd() -> None:
    """sackd's unit removes its RuntimeDirectory (/run/slurm, where /run/slurm/conf lives) when
    it stops; the login node's commands and units would lose their configuration with it."""
    files = _files(_user_data("azure-team", "login"))
    conf = configparser.ConfigParser(strict=False, interpolation=None)
    conf.optionxform = str  # type: ignore[assignment,method-assign]
    conf.read_string(files["/etc/systemd/system/sackd.service.d/50-gpu-clusters.conf"])
    assert conf.get("Service", "RuntimeDirectoryPreserve") == "yes"
