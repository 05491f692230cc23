"""Each Slurm node role's user-data, rendered once per run with its deploy-time secrets as
placeholders: what `plan --out` writes, and what the program fills in once the secrets (munge key,
database password, storage account, identity) resolve. Each secret enters the text verbatim (the
templates apply no filter to it), so filling a placeholder in gives the bytes that rendering with
the secret would."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType

from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.render.power_files import CLIENT_ID_PLACEHOLDER
from clusterctl.render.roles import SCHEDULER, SlurmPlan
from clusterctl.render.storage import FILES_ACCOUNT_PLACEHOLDER, uses_files_share
from clusterctl.spec.catalog import Catalog, catalog
from clusterctl.spec.defaults import login_count
from clusterctl.spec.lustre import AMLFS_MGS_PLACEHOLDER
from clusterctl.spec.model import ClusterSpec

MUNGE_PLACEHOLDER = base64.b64encode(b"munge key: a Pulumi secret made at deploy time").decode()
DB_PASSWORD_PLACEHOLDER = "a-Pulumi-secret-made-at-deploy-time"


def login_role(index: int) -> str:
    """The user-data role of the login node `index` (each names its own host)."""
    return f"login/{index}"


@dataclass(frozen=True)
class UserDataPlan:
    """Each role's user-data (SCHEDULER, login_role(i), each partition's name), secrets left as
    placeholders."""

    roles: Mapping[str, str]
    accounting: bool
    """headNode.accounting: the scheduler's needs the database password."""
    files_share: bool
    """storage.kind azure-files-nfs: every role's needs the share's storage account."""
    lustre: bool = False
    """storage.lustre: the GPU and login nodes' need the file system's MGS address."""

    def filled(
        self,
        role: str,
        *,
        munge_key_b64: str,
        db_password: str | None = None,
        files_account: str | None = None,
        identity_client_id: str | None = None,
        lustre_mgs: str | None = None,
    ) -> str:
        """The role's user-data with the deploy-time secrets in place of the placeholders."""
        if self.files_share and not files_account:
            raise ValueError("storage.kind azure-files-nfs: the storage account name is needed")
        text = self.roles[role].replace(MUNGE_PLACEHOLDER, munge_key_b64)
        if self.lustre and role != SCHEDULER:
            if not lustre_mgs:
                raise ValueError("storage.lustre: the file system's MGS address is needed")
            text = text.replace(AMLFS_MGS_PLACEHOLDER, lustre_mgs)
        if role == SCHEDULER:
            text = self._scheduler_secrets(text, db_password, identity_client_id)
        if self.files_share:
            text = text.replace(FILES_ACCOUNT_PLACEHOLDER, files_account or "")
        return text

    def _scheduler_secrets(
        self, text: str, db_password: str | None, identity_client_id: str | None
    ) -> str:
        if self.accounting:
            if not db_password:
                raise ValueError("headNode.accounting needs the database password")
            text = text.replace(DB_PASSWORD_PLACEHOLDER, db_password)
        if identity_client_id:
            text = text.replace(CLIENT_ID_PLACEHOLDER, identity_client_id)
        return text


def plan_user_data(
    spec: ClusterSpec, stack: str, plan: SlurmPlan, cat: Catalog | None = None
) -> UserDataPlan:
    """Render every role's user-data once (the caller keeps it for the run)."""
    render = partial(
        render_cloud_init,
        spec,
        stack,
        cat=cat or catalog(),
        plan=plan,
        munge_key_b64=MUNGE_PLACEHOLDER,
        files_account=FILES_ACCOUNT_PLACEHOLDER,
    )
    mgs = AMLFS_MGS_PLACEHOLDER if spec.storage.lustre is not None else None
    roles = {SCHEDULER: render(db_password=DB_PASSWORD_PLACEHOLDER)}
    roles |= {
        login_role(i): render(login_index=i, lustre_mgs=mgs) for i in range(login_count(spec))
    }
    roles |= {part.name: render(partition=part, lustre_mgs=mgs) for part in spec.partitions}
    return UserDataPlan(
        roles=MappingProxyType(roles),
        accounting=spec.head_node.accounting,
        files_share=uses_files_share(spec),
        lustre=spec.storage.lustre is not None,
    )
