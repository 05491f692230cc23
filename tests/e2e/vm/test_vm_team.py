"""The team stack (stacks/Pulumi.azure-team.yaml) booted from its own user-data, and what a team
lives through: each user logs in to the login node with their own key (not to the scheduler), with
the same uid everywhere and a shared home; an account over its GPU cap pends with Slurm's reason;
fair share puts the lighter account first; IMDS's identity is out of a user's reach; `clusterctl
users add/remove` on the running cluster (the team Run Command's script, run as root over SSH)
with no reboot; a user's `clusterctl notebook` served through its tunnel and cancelled by Ctrl-C.

And `headNode.accounting` underneath: MariaDB on the data disk, slurmdbd after it, the
cluster registered, the admin user associated with an account; a finished job shows in `sacct` and
in `sreport`'s job report by account, and a restart of slurmdbd loses nothing. sreport reports
whole hours only (it clamps a report's end to now and rounds it down to the hour), so the report
is asked with its client clock an hour ahead (the host's libfaketime, preloaded into sreport
alone): what a user reading it next hour sees. Root only."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import boot
from tests.conftest import need_tool
from tests.e2e.vm.conftest import booted_stack

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[3]


TEAM = ("ann", "bob", "cat", "dan")
CLUSTER = "team"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A project with the team example, its users' keys made here (the example's are
    placeholders): `users add` edits this copy, never the shipped file."""
    need_tool("ssh-keygen")
    root = tmp_path_factory.mktemp("team-project")
    subprocess.run(
        [sys.executable, "-m", "clusterctl", "init", "--example", "azure-team", str(root)],
        cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip
    keys = root / "keys"
    keys.mkdir()
    stack = root / "stacks" / "Pulumi.azure-team.yaml"
    text = stack.read_text()
    for user in TEAM:
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", user, "-f", str(keys / user)],
            check=True,
        )
        pub = (keys / f"{user}.pub").read_text().strip()
        text, n = re.subn(rf"ssh-ed25519 \S+ {user}@laptop", pub, text)
        assert n == (0 if user == "dan" else 1), user
    stack.write_text(text)
    return root, keys


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, project):
    root, _ = project
    plan = tmp_path_factory.mktemp("plan-team")
    subprocess.run(
        [sys.executable, "-m", "clusterctl", "plan", "-s", "azure-team", "--out", str(plan),
         "--set", "partitions[0].nodes=2"],
        cwd=root, check=True, capture_output=True, env=_env(),
    )  # fmt: skip
    with booted_stack(tmp_path_factory, nodes=2, plan=plan) as (specs, workdir, reports):
        sched = next(s.name for s in specs if s.role == "scheduler")
        for spec in specs:
            assert reports[spec.name]["cloud_init"] == "done", reports[spec.name]
            assert not reports[spec.name]["errors"], reports[spec.name]
        # what `pulumi up` does next on Azure: the team Run Command (substitution run-command)
        synced = subprocess.run(
            [sys.executable, "-m", "clusterctl", "users", "sync", "-s", "azure-team",
             "--sandbox-dir", str(workdir)],
            cwd=root, capture_output=True, text=True, env=_env(), timeout=600,
        )  # fmt: skip
        assert synced.returncode == 0, synced.stdout + synced.stderr
        yield workdir, sched


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def sh(cluster, cmd: str) -> subprocess.CompletedProcess[str]:
    workdir, sched = cluster
    return boot.run(workdir, sched, ["sh", "-c", cmd], timeout=180)


def sacct_state(cluster, job: str) -> str:
    out = sh(cluster, f"sacct -n -X -P -j {job} -o State").stdout.split()
    return out[0] if out else ""


def wait_sacct(cluster, job: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while (state := sacct_state(cluster, job)) != "COMPLETED" and time.monotonic() < deadline:
        time.sleep(2)
    return state


def test_database_slurmdbd_and_cluster_are_up(cluster) -> None:
    for unit in ("mariadb", "slurmdbd", "slurmctld"):
        assert sh(cluster, f"systemctl is-active {unit}").stdout.strip() == "active", unit
    assert sh(cluster, "sacctmgr -n -P show cluster format=cluster").stdout.split() == [CLUSTER]
    datadir = sh(cluster, "mariadb -N -e 'select @@datadir'").stdout.strip()
    assert datadir.startswith("/shared/"), datadir  # on the data disk, not the OS disk
    conf = sh(cluster, "stat -c '%U %a' /etc/slurm/slurmdbd.conf").stdout.split()
    assert conf == ["slurm", "600"], conf  # slurmdbd refuses a readable StoragePass


def test_a_finished_job_shows_in_sacct_and_survives_a_slurmdbd_restart(cluster):
    job = sh(cluster, "sbatch --parsable --wait -N1 --time=1 --wrap 'sleep 2'")
    assert job.returncode == 0, job.stderr
    job_id = job.stdout.strip().split(";")[0]
    assert wait_sacct(cluster, job_id) == "COMPLETED"
    assert sh(cluster, "systemctl restart slurmdbd").returncode == 0
    assert wait_sacct(cluster, job_id) == "COMPLETED"  # still there
    second = sh(cluster, "sbatch --parsable --wait -N1 --time=1 --wrap true").stdout.strip()
    assert wait_sacct(cluster, second.split(";")[0]) == "COMPLETED"  # and recording again


FAKETIME_LIB = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")  # Debian's libfaketime


def next_hours_sreport(cluster, args: str) -> str:
    """`sreport ARGS` run on the scheduler as if an hour later (the report client only)."""
    workdir, sched = cluster
    if not FAKETIME_LIB.is_file():
        pytest.fail(f"{FAKETIME_LIB} missing: apt install libfaketime (.ci/run does)")
    shutil.copy(FAKETIME_LIB, Path(workdir) / "nodes" / sched / "root" / "var/tmp")
    lib = f"/var/tmp/{FAKETIME_LIB.name}"
    return sh(cluster, f"env LD_PRELOAD={lib} FAKETIME=+1h sreport {args}").stdout


def test_the_admins_finished_jobs_show_in_sreport_by_account(cluster) -> None:
    assocs = sh(cluster, "sacctmgr -n -P show assoc format=cluster,account,user").stdout.split()
    assert f"{CLUSTER}|users|azureuser" in assocs, assocs
    # sreport's job reports leave out jobs that ran for 0 s: this one runs for 2
    job = sh(cluster, "cd /tmp && runuser -u azureuser -- sbatch --parsable --wait -N1 --time=1 "
                      "--output=/dev/null --wrap 'sleep 2'")  # fmt: skip
    assert job.returncode == 0, job.stderr
    assert wait_sacct(cluster, job.stdout.strip().split(";")[0]) == "COMPLETED"
    jobs = sh(cluster, "sacct -n -X -P -S now-2hours -o User,Account,State").stdout.split()
    assert "azureuser|users|COMPLETED" in jobs, jobs
    report = next_hours_sreport(
        cluster, "-n -P job sizesbyaccount PrintJobCount FlatView start=now-3hours end=now"
    )
    counts = {r[1]: int(r[7]) for r in (x.split("|") for x in report.splitlines()) if len(r) > 7}
    assert counts.get("users", 0) >= 1, f"sreport:\n{report}\nsacct:\n{jobs}"


# --- the team -------------------------------------------------------------------------------


def login_node(cluster) -> str:
    workdir, _ = cluster
    (name,) = [n for n, v in boot.status(workdir).items() if v["role"] == "login"]
    return name


def ssh_as(
    cluster, project, user: str, cmd: str, key: str | None = None, timeout: float = 60,
    node: str | None = None, input: str | None = None,
):  # fmt: skip
    """`cmd` as `user` over SSH to the login node (or `node`), with `key`'s private key (default:
    their own), through the lab as the cloud's users come in; the host's key pinned; BatchMode:
    no password prompt."""
    workdir, _ = cluster
    access = boot.validation_access(workdir)
    node = node or login_node(cluster)
    address = boot.status(workdir)[node]["address"]
    hostkey = boot.run(workdir, node, ["cat", "/etc/ssh/ssh_host_ed25519_key.pub"]).stdout.split()
    known = Path(workdir) / f"known_hosts-{node}"
    known.write_text(f"{address} {hostkey[0]} {hostkey[1]}\n")
    _, keys = project
    argv = [
        "ssh", "-i", str(keys / (key or user)), "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
        "-o", f"UserKnownHostsFile={known}", "-o", "StrictHostKeyChecking=yes",
        "-o", f"ProxyCommand={access['proxy_command']}", "-o", "ConnectTimeout=20",
        f"{user}@{address}", cmd,
    ]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, input=input)


def gpu_nodes(cluster) -> list[str]:
    workdir, _ = cluster
    return sorted(n for n, v in boot.status(workdir).items() if v["role"] == "gpu")


def on_node(cluster, node: str, cmd: str) -> subprocess.CompletedProcess[str]:
    workdir, _ = cluster
    return boot.run(workdir, node, ["sh", "-c", cmd], timeout=60)


def wait_for(what: str, probe, timeout: float, every: float = 3, detail=None):
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout:g} s" + (f"\n{detail()}" if detail else ""))
        time.sleep(every)


def queue(cluster) -> str:
    return sh(cluster, "squeue -a -o '%i %u %a %T %r %q %b' ; sprio -l").stdout


def jobs_of(cluster, user: str) -> dict[str, tuple[str, str]]:
    """job id -> (state, reason) of `user`'s jobs."""
    lines = sh(cluster, f"squeue -h -u {user} -o '%i|%T|%r'").stdout.split()
    return {i: (st, r) for i, st, r in (line.split("|") for line in lines)}


def test_each_user_logs_in_with_their_own_key_with_one_uid_everywhere(cluster, project):
    node = gpu_nodes(cluster)[0]
    for uid, user in enumerate(("ann", "bob", "cat"), start=20001):
        # the login node makes the team's users within a minute of the sync (its timer)
        wait_for(f"{user} on the login node", lambda u=user: ssh_as(
            cluster, project, u, "true").returncode == 0, 120)  # fmt: skip
        got = ssh_as(cluster, project, user, "id -u; id -g; echo hello-$(id -un) > ~/hello")
        assert got.returncode == 0, got.stderr
        assert got.stdout.split() == [str(uid), str(uid)], got.stdout
        # the GPU node has them with the same ids, and the shared home
        ids = wait_for(
            f"{user} on {node}", lambda u=user: on_node(cluster, node, f"id {u}").stdout, 90
        )
        assert f"uid={uid}({user}) gid={uid}({user})" in ids, ids
        home = on_node(cluster, node, f"cat /home/{user}/hello; stat -c %u /home/{user}")
        assert home.stdout.split() == [f"hello-{user}", str(uid)], home
    wrong = ssh_as(cluster, project, "ann", "true", key="bob")
    assert wrong.returncode == 255 and "Permission denied" in wrong.stderr, wrong
    _, sched = cluster  # the scheduler, next to the power identity, takes no team logins
    there = ssh_as(cluster, project, "bob", "true", node=sched)
    assert there.returncode == 255 and "Permission denied" in there.stderr, there
    sudo = ssh_as(cluster, project, "ann", "sudo -n id -u")  # ann is the team's admin
    assert sudo.stdout.strip() == "0", sudo
    assert ssh_as(cluster, project, "bob", "sudo -n true").returncode != 0


def test_imds_identity_is_out_of_a_team_users_reach(cluster, project):
    url = "http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01&resource=https://management.azure.com/"
    curl = f"curl -s -o /dev/null -m 5 -w '%{{http_code}}' -H Metadata:true '{url}'"
    # the login node has no identity: IMDS (the stand-in, as Azure's) hands no token there
    user = ssh_as(cluster, project, "bob", curl)
    assert user.stdout.strip() == "400", user
    # the scheduler's identity holds the power role: only root and slurm reach IMDS there
    there = sh(cluster, f'runuser -u bob -- sh -c "{curl} || echo refused"')
    assert "200" not in there.stdout and "refused" in there.stdout, there
    assert sh(cluster, curl).stdout.strip() == "200"  # root (the power program's user) gets one


def test_an_account_over_its_gpu_cap_pends_with_slurms_reason(cluster, project):
    submit = "cd ~ && sbatch --parsable -N1 --gpus=8 --output=/dev/null --wrap 'sleep 600'"
    subs = [ssh_as(cluster, project, "ann", submit) for _ in range(3)]
    ids = [p.stdout.strip() for p in subs]
    assert all(ids), [p.stderr for p in subs]

    def settled():
        jobs = jobs_of(cluster, "ann")
        running = [j for j, (st, _) in jobs.items() if st == "RUNNING"]
        # a job just queued shows None, then Priority, until the scheduler has weighed it
        weighed = all(r not in ("None", "Priority") for st, r in jobs.values() if st == "PENDING")
        return jobs if len(running) == 1 and len(jobs) == 3 and weighed else None

    jobs = wait_for("one of ann's jobs running", settled, 240)
    pending = {r for st, r in jobs.values() if st == "PENDING"}
    # the other GPU node is idle: the limit holds them, not a lack of nodes
    assert pending == {"AssocGrpGRES"}, jobs
    share = sh(cluster, "sacctmgr -n -P show assoc where account=vision user= format=grptres")
    assert share.stdout.strip() == "gres/gpu=8", share


def test_fair_share_puts_the_lighter_account_first(cluster, project):
    """ann's (vision's) running job has used GPUs for a while; bob's account (language) none."""

    def vision_heavier():
        rows = sh(cluster, "sshare -n -P -a -o Account,User,RawUsage,FairShare").stdout.split()
        got = {(r.split("|")[0].strip(), r.split("|")[1]): r.split("|") for r in rows}
        ann, bob = got.get(("vision", "ann")), got.get(("language", "bob"))
        if not (ann and bob) or int(ann[2] or 0) == 0:
            return None
        return float(ann[3]) < float(bob[3])

    wait_for("vision's usage lowering ann's fair share below bob's", vision_heavier, 180, every=5)
    sh(cluster, "scancel -u ann")
    wait_for("ann's jobs gone", lambda: not jobs_of(cluster, "ann"), 120)
    # both nodes busy, then ann and bob each queue one job; the first free node goes to bob
    blockers = [
        sh(cluster, "cd /tmp && runuser -u azureuser -- sbatch --parsable -N1 --gpus=8 "
                    "--output=/dev/null --wrap 'sleep 600'").stdout.strip()
        for _ in range(2)
    ]  # fmt: skip
    wait_for("both nodes busy", lambda: all(
        st == "RUNNING" for st, _ in jobs_of(cluster, "azureuser").values()
    ) and len(jobs_of(cluster, "azureuser")) == 2, 180)  # fmt: skip
    submit = "cd ~ && sbatch --parsable -N1 --gpus=8 --output=/dev/null --wrap 'sleep 600'"
    ann_job = ssh_as(cluster, project, "ann", submit).stdout.strip()
    time.sleep(2)
    bob_job = ssh_as(cluster, project, "bob", submit).stdout.strip()

    def priorities():
        # squeue's %Q: the multifactor priority sprio breaks down (FAIRSHARE for these two)
        got = sh(cluster, f"squeue -h -j {ann_job},{bob_job} -o '%i %Q'").stdout.split()
        pairs = dict(zip(got[::2], got[1::2], strict=False))
        return pairs if {ann_job, bob_job} <= set(pairs) else None

    prio = wait_for(
        f"jobs {ann_job} and {bob_job} weighed", priorities, 60, detail=lambda: queue(cluster)
    )
    assert int(prio[bob_job]) > int(prio[ann_job]), (prio, sh(cluster, "sprio -l").stdout)
    sh(cluster, f"scancel {blockers[0]}")
    wait_for(
        "bob's job started",
        lambda: jobs_of(cluster, "bob").get(bob_job, ("",))[0] == "RUNNING",
        120,
    )
    assert jobs_of(cluster, "ann")[ann_job][0] == "PENDING"
    sh(cluster, "scancel -u ann; scancel -u bob; scancel -u azureuser")


def _boot_id(cluster) -> str:
    return sh(cluster, "cat /proc/sys/kernel/random/boot_id").stdout.strip()


def _users(project, *args: str) -> subprocess.CompletedProcess[str]:
    root, _ = project
    return subprocess.run(
        [sys.executable, "-m", "clusterctl", "users", *args, "-s", "azure-team"],
        cwd=root, capture_output=True, text=True, env=_env(), timeout=600,
    )  # fmt: skip


def test_users_add_and_remove_on_the_running_cluster_without_a_reboot(cluster, project):
    workdir, _ = cluster
    _, keys = project
    booted = _boot_id(cluster)
    added = _users(project, "add", "dan", "--uid", "20004", "--account", "language",
                   "--key", str(keys / "dan.pub"), "--sandbox-dir", str(workdir))  # fmt: skip
    assert added.returncode == 0, added.stderr + added.stdout
    # the login node makes dan within a minute (its timer); the keys are read from /sched
    wait_for(
        "dan on the login node",
        lambda: ssh_as(cluster, project, "dan", "true").returncode == 0,
        120,
    )
    job = "id -u && cd ~ && sbatch --parsable --wait -N1 --output=out.txt --wrap 'id -un; hostname'"
    login = ssh_as(cluster, project, "dan", job)
    assert login.returncode == 0, login.stderr
    assert login.stdout.split()[0] == "20004", login.stdout
    out = ssh_as(cluster, project, "dan", "cat ~/out.txt").stdout.split()
    slurm_nodes = sh(cluster, "sinfo -h -N -o %N").stdout.split()
    assert out[0] == "dan" and out[1] in slurm_nodes, out  # ran as dan on a GPU node
    assoc = sh(cluster, "sacctmgr -n -P show assoc where user=dan format=account").stdout.split()
    assert assoc == ["language"], assoc

    removed = _users(project, "remove", "dan", "--sandbox-dir", str(workdir))
    assert removed.returncode == 0, removed.stderr + removed.stdout
    refused = ssh_as(cluster, project, "dan", "true")
    assert refused.returncode == 255, refused
    assert sh(cluster, "cat /home/dan/out.txt").stdout.split()[0] == "dan"  # files stay
    assert sh(cluster, "sacctmgr -n -P show assoc where user=dan format=account").stdout == ""
    submit = sh(cluster, "cd /tmp && runuser -u dan -- sbatch -N1 --wrap true")
    assert submit.returncode != 0 and "account" in submit.stderr.lower(), submit
    node = gpu_nodes(cluster)[0]  # the other nodes lock dan within a minute (their timer)
    wait_for(f"dan locked on {node}", lambda: on_node(
        cluster, node, "getent shadow dan | cut -d: -f8").stdout.strip() == "1", 120)  # fmt: skip
    assert _boot_id(cluster) == booted
    assert on_node(
        cluster, login_node(cluster), "getent shadow dan | cut -d: -f8"
    ).stdout.strip() in ("", "1")
    names = [line.split()[0] for line in _users(project, "list").stdout.splitlines()]
    assert names == ["ann", "bob", "cat"], names


SUBMITIT_SETUP = "python3 -m venv ~/venv && ~/venv/bin/pip install submitit==1.5.4"
SUBMITIT_RUN = "~/venv/bin/python submitit_hello.py"


def test_a_user_submits_a_python_function_from_the_login_node_with_submitit(cluster, project):
    """Batch jobs from Python (seed 000): the commands docs/training.md shows, as bob
    on the login node: a venv with submitit from the cluster's package index, then docs/examples/
    submitit_hello.py pickles a function into the shared home, submits it, and gets its result
    back from a GPU node."""
    training = (ROOT / "docs" / "training.md").read_text()  # the page that shows the commands
    assert SUBMITIT_SETUP in training and SUBMITIT_RUN in training
    example = (ROOT / "docs" / "examples" / "submitit_hello.py").read_text()
    assert SUBMITIT_SETUP.split(" && ")[1].split()[-1] in example  # the same pin
    wait_for("bob on the login node", lambda: ssh_as(
        cluster, project, "bob", "true").returncode == 0, 120)  # fmt: skip
    setup = ssh_as(cluster, project, "bob", f"cat > submitit_hello.py && {SUBMITIT_SETUP} -q",
                   input=example, timeout=300)  # fmt: skip
    assert setup.returncode == 0, setup.stdout + setup.stderr
    got = ssh_as(cluster, project, "bob", f"{SUBMITIT_RUN} gpu", timeout=700)
    assert got.returncode == 0, got.stdout + got.stderr
    first, result = got.stdout.strip().splitlines()[0], got.stdout.strip().splitlines()[-1]
    job = re.fullmatch(r"submitted job (\d+) to partition gpu", first)
    assert job, got.stdout
    import ast

    ran = ast.literal_eval(result)
    slurm_names = sh(cluster, "sinfo -h -N -p gpu -o %N").stdout.split()
    assert ran["greeting"] == "hello from bob" and ran["job"] == job.group(1)
    print(got.stdout)
    assert ran["slurm_node"] in slurm_names
    assert ran["gpus_visible"] == "0" and ran["gpus_listed"] >= 1  # the one GPU it asked for
    # the job was bob's, charged to his account
    user = sh(cluster, f"sacct -n -X -P -j {job.group(1)} -o User,Account").stdout.split()
    assert user and user[0].startswith("bob|"), user


def test_a_team_users_notebook_answers_through_the_tunnel_and_ctrl_c_leaves_nothing(
    cluster, project
):
    """`clusterctl notebook` as ann (docs/team.md, "Notebooks"): JupyterLab, installed on first
    use from the cluster's package index into her home, serves on a GPU node; the URL it prints
    answers on this host through the tunnel via the login node; SIGINT (Ctrl-C) cancels the job:
    the queue is empty, and no jupyter process nor runtime dir of hers is left on any GPU node."""
    import queue as queue_mod
    import signal
    import threading
    import urllib.request

    workdir, _ = cluster
    root, keys = project
    wait_for("ann on the login node", lambda: ssh_as(
        cluster, project, "ann", "true").returncode == 0, 120)  # fmt: skip
    sh(cluster, "scancel -u ann")
    wait_for("ann's queue empty", lambda: not jobs_of(cluster, "ann"), 60)
    proc = subprocess.Popen(
        [sys.executable, "-m", "clusterctl", "notebook", "-s", "azure-team", "--sandbox-dir",
         str(workdir), "--user", "ann", "--identity", str(keys / "ann"), "--time", "30m"],
        cwd=root, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines: queue_mod.Queue[str] = queue_mod.Queue()

    def read() -> None:
        for line in proc.stdout or ():
            lines.put(line)
        lines.put("")  # the command ended without a URL

    threading.Thread(target=read, daemon=True).start()
    try:
        url = lines.get(timeout=900).strip()  # the first use installs JupyterLab
    except queue_mod.Empty:
        url = ""
    if not url:
        proc.send_signal(signal.SIGINT)
        pytest.fail(f"no URL within 900 s:\n{proc.communicate(timeout=240)[1]}")
    assert url.startswith("http://127.0.0.1:") and "token=" in url, url
    (job,) = jobs_of(cluster, "ann")
    page = wait_for("JupyterLab through the tunnel", lambda: _get(urllib.request, url), 60)
    assert "JupyterLab" in page, page[:500]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    assert f"job {job} cancelled (Ctrl-C)" in err, err
    assert sh(cluster, "squeue -h -u ann").stdout.strip() == ""
    for node in gpu_nodes(cluster):
        left = on_node(cluster, node, "pgrep -u ann -af jupyter; ls -d /tmp/clusterctl-notebook-*")
        assert left.stdout.strip() == "", (node, left.stdout)
    logs = ssh_as(cluster, project, "ann", "ls .clusterctl/notebooks")
    assert logs.stdout.strip() == "", logs.stdout  # its log (with the token) removed too


def _get(request, url: str) -> str:
    try:
        with request.urlopen(url, timeout=20) as resp:
            return resp.read().decode(errors="replace")
    except OSError:
        return ""
