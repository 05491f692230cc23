"""Where things live on the nodes, and the fixed policies every node gets: paths, service ids,
restart and log rotation, the accounting database. Values only."""

from __future__ import annotations

SCRATCH = "/nvme"
"""The local NVMe scratch. Not under /mnt: on Azure sizes with a resource (temp) disk cloud-init
mounts it at /mnt (its default `ephemeral0` mount, cc_mounts.py, ordered after cloud-init's network
stage) later at boot than gpucl-scratch.service runs, and that mount would hide a scratch mounted
below it after every power cycle. /nvme, as Azure CycleCloud's Slurm nodes use."""
IMEX_DIR = "/etc/nvidia-imex"
"""nvidia-imex's config.cfg and nodes_config.cfg (NVIDIA's IMEX guide; the HPC image ships both)."""
IMEX_SERVER_PORT = 50000
"""One static IMEX port on every node and for every job, nvidia-imex's default.
Azure/cyclecloud-slurm went back from a port per job (SLURM_JOB_ID % 16384 + 33792) to this
after per-job ports conflicted (azure-slurm-install/imex_prolog.sh, commit 6197882 'Make imex
port static.', 2025-08-08)."""


SHARED_MOUNTS = ("/home", "/sched")
"""The scheduler's NFS exports every GPU node mounts (fstab: _netdev,nofail)."""


MOUNT_RETRY = {"delay_s": 10, "total_s": 1200, "attempt_s": 30}
"""A GPU node's first boot waits `total_s` for the scheduler's exports: the scheduler's own
cloud-init (packages, MariaDB, the power venv) can take longer than a node's. slurmd's start
waits for them without end (gpucl-mounts.sh --wait). One `mount` is cut at `attempt_s`: mount.nfs
itself retries a foreground mount for 2 minutes (nfs(5), `retry=`)."""


BUILD_LOCK_S = 600
"""How long a node waits for another's build of pyxis or NHC (gpucl-build-cache.sh) before it
builds for itself: longer than one build takes on the slowest node the sandbox boots."""

PYXIS_LIBRARY = "/usr/local/lib/slurm/spank_pyxis.so"


ENROOT_RUNTIME = f"{SCRATCH}/enroot/runtime"
ENROOT_CACHE = "/var/cache/enroot"
"""enroot's layer cache (ENROOT_CACHE_PATH, one folder per group as Azure/cyclecloud-slurm's
templates/enroot.conf.template) on the OS disk, not the NVMe scratch: Azure wipes local NVMe when a
VM is deallocated, which Slurm's power saving does to every idle node, so a cache there made each
resumed node pull its images again through the NAT gateway. The OS disk survives deallocation
(docs/decisions/0009). Unpacked containers (ENROOT_DATA_PATH), the runtime and temp stay on NVMe."""
ENROOT_CACHE_GIB = 96
"""gpucl-scratch.sh trims the layer cache to this at every boot, least recently read first (enroot
itself never evicts): it shares the GPU nodes' 256 GiB OS disk
(components/azure/slurm/gpu_partition.py) with the image's own ~64 GiB."""


# Fixed ids of the service users on every node (Azure/cyclecloud-slurm install.py setup_users).


RESTART_POLICY = {"delay_s": 10, "burst": 5, "interval_s": 600}
"""The restart drop-in for munge and slurmdbd (upstream units have no Restart=): 5 starts in 600 s,
then the unit stays failed instead of looping on a broken configuration. slurmdbd waits for
MariaDB itself (accounting_storage_mysql.c retries every 5 s) and is Type=simple: no start
timeout."""


WAITS_FOR_A_PEER = {"slurmd": "always", "sackd": "always", "slurmctld": "on-failure"}
"""Daemons that wait for another host before they tell systemd READY (Type=notify), with their
Restart=: configless slurmd and sackd loop "failed to load configs. Retrying in 10 seconds" until
slurmctld answers (SchedMD src/slurmd/slurmd/slurmd.c _establish_configuration, src/sackd/sackd.c
_establish_config_source); slurmctld with slurmdbd and no state file loops "Retrying initial
connection to slurmdbd" (src/slurmctld/controller.c _retry_init_db_conn). Under systemd's 90 s start
timeout and a start limit they ended failed for good while the other host was away: these get no
start limit and no start timeout, so they wait as long as it takes. slurmd and sackd restart
always, as Azure/cyclecloud-slurm's slurmd.override (Restart=always, RestartSec=10s)."""


LOG_ROTATION = {"keep": 14, "max_size": "100M"}
"""Per log under site.log_dir (Slurm's and gpucl's): at most 15 x 100 MiB before compression."""


MARIADB_TUNING = {
    "innodb_buffer_pool_size": "4096M",
    "innodb_log_file_size": "64M",
    "innodb_lock_wait_timeout": "900",
    "loose-innodb_snapshot_isolation": "OFF",
}
"""Slurm's accounting guide (accounting.html): a buffer pool that holds the job tables' indexes, a
redo log sized for slurmdbd's bulk inserts, and a lock wait long enough for its purge and rollup
transactions (slurmdbd checks the buffer pool and the lock wait at start and logs "Database settings
not recommended values" when they are lower). Snapshot isolation off: slurmdbd 26.05 (not 24.11)
says at start it is "not supported by Slurm and will cause slurmdbd to fatal when a write
conflicts"); MariaDB 11.6+ turns it on by default, older ones lack it, hence `loose-` (an option a
server does not know is then ignored, not fatal)."""


HEALTH_ENV = "/etc/gpu-clusters/health.env"


def hosts_map(cluster: str) -> str:
    """Slurm's node names and addresses, published by the scheduler for every node's /etc/hosts
    (gpucl-hosts.sh), beside the power program's names.json."""
    return f"/sched/{cluster}/hosts"


def host_keys(cluster: str) -> str:
    """Each node's current SSH host key, one file per Slurm node name (or the scheduler's and login
    nodes' host names) as known_hosts lines, published by that node (gpucl-known-hosts.sh) and read
    by ssh on every node through KnownHostsCommand. Root-owned, readable by all."""
    return f"/sched/{cluster}/host-keys"


ADOPT_ACCESS = "/etc/security/gpucl-adopt-access.conf"
"""pam_access rules for a GPU node's sshd, before pam_slurm_adopt: who logs in without a job."""


NCCL_CONF_OURS = "/etc/gpu-clusters/nccl.conf"


JOB_ENV = "/etc/gpu-clusters/job.env"


TASK_PROLOG = "gpucl-task-env.sh"


ACCOUNTING_DB = {"db_name": "slurm_acct_db", "db_user": "slurm", "account": "users"}
"""`account`: the Slurm account the admin user's association is made in, so the admin's jobs
(validation's included) are reported by `sreport` per account; sacct lists every job anyway."""


ACCOUNTING_DATADIR = "/shared/mysql"  # on the scheduler's data disk


NHC_FAST_CONF = "/etc/nhc/gpucl-fast.conf"


NHC_CHECKS = "/etc/nhc/scripts/gpucl.nhc"

TEAM_DIR = "/sched/team"
"""The team as the stack declares it (users.tsv, accounts.tsv, qos.tsv, keys/<user>), written by
the scheduler's team sync, read by every node. Root-owned: sshd's StrictModes accepts the keys
there only if no path component is writable by another user."""
TEAM_GECOS = "gpu-clusters team"
"""The comment of every user the team sync made: a user with it who is no longer declared is
locked (files kept); users made otherwise (the image's, an admin's) are never touched."""


NFSD_THREADS = {"default": 8, "per_client": 4, "max": 256}
"""The scheduler's nfsd threads: nfs.conf(5) `[nfsd] threads` (default 8, which every mount of
every node shares). A node mounts /home and /sched and its slurmd, prolog, jobs and users' shells
each keep requests in flight, so 4 threads per NFS client (GPU and login nodes), never below the
default, at most 256."""


def nfsd_threads(clients: int) -> int:
    t = NFSD_THREADS
    return max(t["default"], min(t["max"], t["per_client"] * clients))
