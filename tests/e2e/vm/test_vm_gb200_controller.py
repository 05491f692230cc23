"""azure-gb200's Slurm files under a real slurmctld: the sandbox's two Slurm releases (sid's 26.05
and trixie's 24.11, either side of Azure's 25.11; `scontrol show topology` changed between them).

The GB200 nodes are arm64 and cannot boot here (substitutions.cannot_boot says why), but the
controller's side of the cluster can be checked by the program that consumes it: slurmctld reads
topology/block's NVL72 block and the 4 gb200 GPUs per node, and runs as the primary controller.
The daemon runs in a chroot of the node image (an overlay, so the cache is untouched) for as long
as it takes to say so; root only.

Then the GPU nodes' rendered prolog and epilog run in that chroot against it, with the release's
scontrol: a job's IMEX peers are its nodes in this node's NVL72 block, by the address slurmctld
holds. What stands in: nvidia-smi (the image's, over four /dev/nvidiaN files) and
systemctl (a recorder: no systemd in a chroot). Last, each node's NVLink domain report (the
stand-in's `nvidia-smi -q` Fabric section) and the scheduler's check of the rendered blocks
against the reports, agreeing and contradicted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import boot, image, repo
from tests.e2e.vm.conftest import need_sandbox

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[3]
SLURM_DEBS = ("slurmctld", "slurm-client", "libslurm[0-9]*", "slurm-wlm-basic-plugins")
MUNGE_DEBS = ("libmunge2", "munge")
NODES = 36  # two NVL72 blocks: gpu-pg0-[1-18] and gpu-pg0-[19-36]
ADDRESSES = {f"gpu-pg0-{n}": f"10.40.128.{n + 10}" for n in range(1, NODES + 1)}
SYSTEMCTL = """#!/bin/sh
echo "$*" >> /tmp/systemctl.calls
"""
SLURM_UID, MUNGE_UID = 11100, 11101  # render/paths.py SERVICE_IDS
# What this chroot lacks and the scheduler VM has, said by slurmctld as errors: the PMIx plugin's
# hwloc library (not in these debs), state files (a first start), the power programs (cloud-init
# writes them: 24.11 says "power_save", 26.05 "Invalid SuspendProgram PowerAction").
EXPECTED = ("mpi_pmix", "mpi/pmix", "MPI: Cannot create context", "state file", "Trying backup",
            "power_save", "PowerAction")  # fmt: skip


def _start(argv: list[str], log: Path) -> subprocess.Popen:
    with log.open("w") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)


def _debs(img: image.Image, slurm: str) -> list[Path]:
    """The .debs to unpack: the release's Slurm, with sid's libraries for sid's; trixie's munge."""
    sid = slurm == repo.SLURM_VERSIONS[0]
    source = img.sid_debs if sid else img.debs
    debs = [sorted(source.glob(f"{name}_*.deb"))[0] for name in SLURM_DEBS]
    if sid:
        debs += [d for d in sorted(img.sid_debs.glob("*.deb")) if not repo.SLURM_DEB.match(d.name)]
    return debs + [sorted(img.debs.glob(f"{name}_*.deb"))[0] for name in MUNGE_DEBS]


@pytest.mark.parametrize("slurm", repo.SLURM_VERSIONS)
def test_slurmctld_runs_the_gb200_cluster_with_its_nvl72_block(tmp_path: Path, slurm) -> None:
    need_sandbox()
    img = boot.prepare_layers(slurm, log=lambda _m: None)[0]
    plan = tmp_path / "plan"
    subprocess.run(
        [sys.executable, "-m", "clusterctl", "plan", "-s", "azure-gb200", "--out", str(plan),
         "--set", f"partitions[0].nodes={NODES}"],
        cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip
    upper, work, root = tmp_path / "upper", tmp_path / "work", tmp_path / "root"
    for d in (upper, work, root):
        d.mkdir()
    overlay = f"lowerdir={img.rootfs},upperdir={upper},workdir={work}"
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o", overlay, str(root)], check=True)
    procs: list[subprocess.Popen] = []
    try:
        for deb in _debs(img, slurm):
            subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
        ctld = root / "usr/sbin/slurmctld"
        if not ctld.exists():  # Debian installs slurmctld-wlm and an alternatives link
            ctld.symlink_to("slurmctld-wlm")
        with (root / "etc/passwd").open("a") as f:
            f.write(f"slurm:x:{SLURM_UID}:{SLURM_UID}::/nonexistent:/usr/sbin/nologin\n")
            f.write(f"munge:x:{MUNGE_UID}:{MUNGE_UID}::/nonexistent:/usr/sbin/nologin\n")
        with (root / "etc/group").open("a") as f:
            f.write(f"slurm:x:{SLURM_UID}:\nmunge:x:{MUNGE_UID}:\n")
        for rel, uid in (("etc/munge", MUNGE_UID), ("run/munge", MUNGE_UID),
                         ("var/lib/munge", MUNGE_UID), ("var/log/munge", MUNGE_UID),
                         ("shared/spool/slurmctld", SLURM_UID), ("var/log/slurm", SLURM_UID),
                         ("run/slurm", SLURM_UID), ("etc/slurm", 0)):  # fmt: skip
            (root / rel).mkdir(parents=True, exist_ok=True)
            os.chown(root / rel, uid, uid)
        key = root / "etc/munge/munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        os.chown(key, MUNGE_UID, MUNGE_UID)
        for conf in (plan / "slurm").glob("*.conf"):
            (root / "etc/slurm" / conf.name).write_text(conf.read_text())
        # (26.05's scontrol wants a configuration even for --version)
        version = subprocess.run(["chroot", str(root), "scontrol", "--version"],
                                 capture_output=True, text=True).stdout  # fmt: skip
        assert version.startswith(f"slurm-wlm {slurm}."), version
        conf = (root / "etc/slurm/slurm.conf").read_text()
        (host,) = [x.split("=", 1)[1] for x in conf.splitlines() if x.startswith("SlurmctldHost=")]
        procs.append(_start(["chroot", str(root), "/usr/sbin/munged", "-F", "--force"],
                            tmp_path / "munged.out"))  # fmt: skip
        ctld_argv = f"hostname {host} && exec chroot {root} /usr/sbin/slurmctld -D -vv"
        procs.append(_start(["unshare", "-u", "sh", "-c", ctld_argv], tmp_path / "slurmctld.out"))
        log = root / "var/log/slurm/slurmctld.log"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and procs[-1].poll() is None:
            if log.exists() and "Running as primary controller" in log.read_text():
                break
            time.sleep(0.5)
        text = log.read_text() if log.exists() else (tmp_path / "slurmctld.out").read_text()
        if "Running as primary controller" in text:
            with (root / "etc/hosts").open("a") as f:
                f.write(f"127.0.0.1 {host}\n")
            imex = _run_the_imex_prolog(root)
            racks = _report_the_racks(root)
            submit = _one_fabric_per_job(root)
    finally:
        for proc in reversed(procs):
            _stop(proc)
        subprocess.run(["umount", str(root)], check=True)
    assert "Running as primary controller" in text, text[-3000:]
    assert "topology/block: init: topology block plugin loaded" in text
    assert "Block name:gpu-pg0-nvl0 nodes:gpu-pg0-[1-18]" in text
    assert "Gres Name=gpu Type=gb200 Count=4" in text
    errors = [x for x in text.splitlines() if " error: " in x or " fatal: " in x]
    unexpected = [x for x in errors if not any(e in x for e in EXPECTED)]
    assert unexpected == [], unexpected
    assert imex["peers 2 of block 0 + 1 of block 1, on gpu-pg0-2"] == (
        0,
        f"{ADDRESSES['gpu-pg0-1']}\n{ADDRESSES['gpu-pg0-2']}\n",
        "SERVER_PORT=50000",
    )
    assert imex["peers on gpu-pg0-19"] == (0, f"{ADDRESSES['gpu-pg0-19']}\n", "SERVER_PORT=50000")
    assert imex["systemctl"] == (
        "restart nvidia-imex.service\nrestart nvidia-imex.service\nstop nvidia-imex.service\n"
    )
    assert "MaxNodes=36" in conf and "EnforcePartLimits=ANY" in conf  # one scale set of 36
    fits, too_big = submit
    assert fits.returncode == 0 and fits.stdout.startswith("Submitted batch job"), fits.stderr
    assert too_big.returncode != 0, too_big.stdout
    assert "Node count specification invalid" in too_big.stderr, too_big.stderr
    assert imex["after the epilog"] == (0, "", "SERVER_PORT=50000")
    # each node's nvidia-smi -q (the stand-in, as a GB200 answers) made its report; the rendered
    # blocks are verified by racks of consecutive names and contradicted, loudly, by a swap
    assert racks["report"] == (0, f"{RACKS[0]} 32766")
    assert racks["as rendered"][0] == 0, racks["as rendered"]
    assert "every block of /etc/slurm/topology.conf is one NVLink domain" in racks["as rendered"][1]
    code, _, err = racks["swapped"]
    assert code == 1, racks["swapped"]
    assert "WARNING: block gpu-pg0-nvl0 is 2 NVLink domains" in err, err
    assert "WARNING: block gpu-pg0-nvl1 is 2 NVLink domains" in err, err
    assert "gpu-pg0-5" in racks["reported blocks"]["gpu-pg0-nvl1"], racks["reported blocks"]
    # the prolog's gpucl-hosts.sh named the job's nodes by the addresses slurmctld holds
    assert imex["names"] == sorted(
        f"{ADDRESSES[n]} {n}" for n in ("gpu-pg0-1", "gpu-pg0-2", "gpu-pg0-19")
    )


RACKS = ("b78ed242-7b98-426f-b194-b76b8899f4ec", "cc79d754-915f-408b-b1c3-b8c3aa6668ab")


def _report_the_racks(root: Path) -> dict:
    """Every node's report through the product's own reader (gpucl_power.fabric report) of the
    image's nvidia-smi stand-in, one node at a time in this one chroot (the stand-in reads the
    node's domain from /etc/gpucl-sandbox/fabric); then the scheduler's check of the rendered
    topology.conf, with the release's scontrol expanding its host lists: racks of consecutive
    names, then nodes 5 and 30 in each other's rack."""
    lib = root / "opt/gpucl/lib/gpucl_power"
    lib.mkdir(parents=True, exist_ok=True)
    for name in ("__init__.py", "names.py", "slurm.py", "fabric.py"):
        (lib / name).write_text((ROOT / "clusterctl/power" / name).read_text())
    env = ["env", "-i", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
           "PYTHONPATH=/opt/gpucl/lib"]  # fmt: skip

    def py(*args: str) -> tuple[int, str, str]:
        done = subprocess.run(["chroot", str(root), *env, "python3", "-m", "gpucl_power.fabric",
                               *args], capture_output=True, text=True, timeout=120)  # fmt: skip
        return done.returncode, done.stdout.strip(), done.stderr

    def report_all(swap: bool) -> tuple[int, str, str]:
        first = (0, "", "")
        for n in range(1, NODES + 1):
            rack = RACKS[0] if n <= 18 else RACKS[1]
            if swap and n in (5, 30):
                rack = RACKS[1] if n == 5 else RACKS[0]
            (root / "etc/gpucl-sandbox").mkdir(parents=True, exist_ok=True)
            (root / "etc/gpucl-sandbox/fabric").write_text(f"{rack} 32766\n")
            done = py("report", "gb200", f"gpu-pg0-{n}")
            first = first if n > 1 else done
        return first

    out: dict = {"report": report_all(swap=False)[:2]}
    out["as rendered"] = py("topology", "gb200", "/etc/slurm/topology.conf")[:2]
    report_all(swap=True)
    out["swapped"] = py("topology", "gb200", "/etc/slurm/topology.conf")
    reported = (root / "sched/gb200/topology.reported.conf").read_text().splitlines()
    out["reported blocks"] = {
        ln.split()[0].removeprefix("BlockName="): ln.split("Nodes=")[1].split(",")
        for ln in reported
        if ln.startswith("BlockName=")
    }
    return out


def _one_fabric_per_job(root: Path) -> tuple[subprocess.CompletedProcess[str], ...]:
    """A user's job of more nodes than the partition's MaxNodes (a scale set: one fabric) is
    refused at submission, one of MaxNodes is accepted. Root and SlurmUser are exempt from
    partition limits (slurm.conf(5)), so a user (nobody) submits; MaxNodes is lowered to one
    NVL72 block's 18 here, as a partition of 36 over two scale sets of 18 would render it."""
    subprocess.run(["chroot", str(root), "scontrol", "update", "PartitionName=gpu",
                    "MaxNodes=18"], check=True, timeout=60)  # fmt: skip
    user = ["chroot", "--userspec=65534:65534", str(root)]
    return tuple(
        subprocess.run(
            [*user, "sbatch", "-N", str(n), "--chdir=/tmp", "--wrap", "true"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        for n in (18, 19)
    )


def _run_the_imex_prolog(root: Path) -> dict:
    """Render the GPU nodes' prolog and epilog, run them in the chroot for job 5234 on
    gpu-pg0-[1-2],gpu-pg0-19 (two NVLink domains), and read what they leave."""
    from clusterctl.render.scripts import node_scripts
    from clusterctl.render.site import cloud_site
    from clusterctl.spec.catalog import catalog
    from clusterctl.spec.load import load_stack_spec

    spec, _ = load_stack_spec("azure-gb200", [f"partitions[0].nodes={NODES}"])
    sku = catalog().require(spec.partitions[0].sku)
    scripts = node_scripts(spec, cloud_site(spec), sku)
    for name in ("prolog.sh", "epilog.sh"):
        (root / "tmp" / name).write_text(scripts[name])
    libexec = root / "usr/local/libexec/gpu-clusters"  # the prolog calls these there
    libexec.mkdir(parents=True, exist_ok=True)
    for name in ("gpucl-hosts.sh", "gpucl-known-hosts.sh"):
        (libexec / name).write_text(scripts[name])
        (libexec / name).chmod(0o755)
    for i in range(sku.gpus):
        (root / f"dev/nvidia{i}").touch()
    systemctl = root / "usr/local/sbin/systemctl"
    systemctl.write_text(SYSTEMCTL)
    systemctl.chmod(0o755)
    imex = root / "etc/nvidia-imex"
    imex.mkdir()
    (imex / "config.cfg").write_text("SERVER_PORT=12345\nIMEX_CMD_ENABLED=0\n")
    scontrol = ["chroot", str(root), "scontrol"]
    for node, address in ADDRESSES.items():
        subprocess.run([*scontrol, "update", f"nodename={node}", f"nodeaddr={address}"],
                       check=True, capture_output=True, timeout=30)  # fmt: skip
    path = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    def run(script: str, node: str) -> tuple[int | str, str, str]:
        env = [path, f"SLURMD_NODENAME={node}", "SLURM_JOB_ID=5234",
               "SLURM_JOB_NODELIST=gpu-pg0-[1-2],gpu-pg0-19"]  # fmt: skip
        done = subprocess.run(["chroot", str(root), "env", "-i", *env, "bash", f"/tmp/{script}"],
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        port = [x for x in (imex / "config.cfg").read_text().splitlines() if "SERVER_PORT" in x]
        status = f"{done.returncode}: {done.stderr[-800:]}" if done.returncode or done.stderr else 0
        return status, (imex / "nodes_config.cfg").read_text(), port[0]

    out = {"peers 2 of block 0 + 1 of block 1, on gpu-pg0-2": run("prolog.sh", "gpu-pg0-2")}
    out["peers on gpu-pg0-19"] = run("prolog.sh", "gpu-pg0-19")
    out["after the epilog"] = run("epilog.sh", "gpu-pg0-19")
    out["systemctl"] = (root / "tmp/systemctl.calls").read_text()
    hosts = (root / "etc/hosts").read_text().splitlines()
    out["names"] = sorted(" ".join(x.split()) for x in hosts if x.split()[-1:] and
                          x.split()[-1] in ("gpu-pg0-1", "gpu-pg0-2", "gpu-pg0-19"))  # fmt: skip
    return out


def test_the_image_trusts_both_releases_archives_whichever_was_prepared_last() -> None:
    """A 24.11 sandbox and a 26.05 one may run at once on one image (the e2e suite's two workers);
    each release's archive has its own key, and the image's keyring must verify both, or the
    first sandbox's nodes stop trusting their archive when the second prepares its own."""
    need_sandbox()
    for slurm in (*repo.SLURM_VERSIONS, *reversed(repo.SLURM_VERSIONS)):
        img, repo_dir, _ = boot.prepare_layers(slurm, log=lambda _m: None)
        keyring = img.rootfs / "usr/share/keyrings/gpucl-sandbox.gpg"
        for other in repo.SLURM_VERSIONS:
            signed = repo_dir.with_name(repo_dir.name.rsplit("-slurm", 1)[0] + f"-slurm{other}")
            ms = signed / "microsoft/repos/slurm-ubuntu-jammy"
            for release in (
                signed / "debian/dists/sandbox/InRelease",
                ms / "dists/stable/InRelease",
            ):
                check = subprocess.run(["gpgv", "--keyring", str(keyring), str(release)],
                                       capture_output=True, text=True)  # fmt: skip
                assert check.returncode == 0, (slurm, other, check.stderr)
