"""The team (users, accounts, QoS) as the nodes read it: the tab-separated files of TEAM_DIR and the
scheduler's sync script that writes them, run at first boot, by `up` (Run Command) and by
`clusterctl users`. Pure: spec in, text out."""

from __future__ import annotations

from clusterctl.constants import TEAM_ADMIN_GROUP
from clusterctl.render.paths import TEAM_DIR, TEAM_GECOS
from clusterctl.render.site import cloud_site
from clusterctl.render.templates import render_template
from clusterctl.spec.model import ClusterSpec

UNLIMITED = "-1"
"""sacctmgr's "no limit" (it clears a limit set before)."""


def _tsv(rows: list[tuple[object, ...]]) -> str:
    return "".join("\t".join(str(v) for v in row) + "\n" for row in rows)


def team_files(spec: ClusterSpec) -> dict[str, str]:
    """TEAM_DIR's files, by path relative to it."""
    files = {
        "users.tsv": _tsv(
            [(u.name, u.uid, u.account, "yes" if u.admin else "no") for u in spec.users]
        ),
        "accounts.tsv": _tsv(
            [
                (a.name, a.fairshare, a.gpu_limit or UNLIMITED, ",".join(a.qos))
                for a in spec.accounts
            ]
        ),
        "qos.tsv": _tsv(
            [
                (
                    q.name,
                    q.priority,
                    q.max_wall_minutes or UNLIMITED,
                    q.max_gpus_per_user or UNLIMITED,
                )
                for q in spec.qos
            ]
        ),
    }
    for user in spec.users:
        files[f"keys/{user.name}"] = "".join(f"{key.strip()}\n" for key in user.ssh_public_keys)
    return files


def team_context(spec: ClusterSpec) -> dict[str, object]:
    return {
        "team_dir": TEAM_DIR,
        "team_gecos": TEAM_GECOS,
        "cluster": spec.name,
        "admin_group": TEAM_ADMIN_GROUP,
    }


def render_team_sync(spec: ClusterSpec, stack: str) -> str:
    """The Run Command's script (also what `clusterctl users --sandbox` runs as root). Not in the
    scheduler's user-data: Azure caps that at 64 KiB, and Slurm's associations live on the data
    disk (MariaDB), so a re-created scheduler keeps them; its users come back from TEAM_DIR."""
    files = team_files(spec)
    return render_template(
        "scripts/gpucl-team-sync.sh.j2",
        **team_context(spec),
        stack=stack,
        libexec=cloud_site(spec).libexec_dir,
        users_tsv=files["users.tsv"],
        accounts_tsv=files["accounts.tsv"],
        qos_tsv=files["qos.tsv"],
        keys={k.removeprefix("keys/"): v for k, v in files.items() if k.startswith("keys/")},
    )
