"""The team (users, accounts, QoS): what Slurm, sacctmgr or useradd would refuse or get wrong on
the cluster, refused at plan time with the field as the user wrote it."""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import TypeVar

from clusterctl.constants import SERVICE_IDS, TEAM_ADMIN_GROUP
from clusterctl.errors import Finding
from clusterctl.platform import only_on
from clusterctl.spec.catalog import Catalog
from clusterctl.spec.defaults import login_count
from clusterctl.spec.model import ClusterSpec, field_path
from clusterctl.spec.rules import Rule
from clusterctl.spec.rules_input import _ssh_key_problem

RESERVED_USERS = frozenset(
    {
        "root", "daemon", "bin", "sys", "sync", "games", "man", "lp", "mail", "news", "uucp",
        "proxy", "www-data", "backup", "list", "irc", "gnats", "nobody", "sshd", "syslog",
        "messagebus", "ubuntu", "sudo", "admin", "adm", "users", "staff", "docker",
        "nogroup", "mysql", "_apt", "polkitd", "tss", "uuidd", "tcpdump", "landscape",
        *SERVICE_IDS, TEAM_ADMIN_GROUP,
    }
)  # fmt: skip
"""Names an Ubuntu HPC image (or this project: slurm, munge) already has as a user or group."""
RESERVED_ACCOUNTS = frozenset({"root"})
"""Slurm's association tree has its own root account."""


@only_on(scheduler="kubernetes")
def team_only_on_slurm(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for key in ("users", "accounts", "qos"):
        if key in spec.model_fields_set:
            yield Finding(
                "error",
                f"{key} (Slurm users, accounts and QoS) has no effect on a Kubernetes cluster; "
                "remove it (use the cloud's RBAC and Kueue's queues)",
                field_path(key),
            )


@only_on(scheduler="kubernetes")
def no_login_nodes_on_kubernetes(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    if "login_nodes" in spec.model_fields_set:
        yield Finding(
            "error",
            "loginNodes has no effect on a Kubernetes cluster (users reach it with kubectl); "
            "remove it",
            field_path("loginNodes"),
        )


@only_on(scheduler="slurm")
def login_sku_exists(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    sku = spec.login_nodes.sku
    found = cat.get(sku, spec.cloud) if sku else None
    if sku and found is None:
        known = ", ".join(s.name for s in cat.skus if s.cloud == spec.cloud and s.gpus == 0)
        yield Finding(
            "error",
            f"unknown VM type '{sku}' for {spec.cloud}; known: {known}",
            field_path("loginNodes", "sku"),
        )


@only_on(scheduler="slurm")
def entra_needs_login_nodes(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    if spec.login_nodes.entra_id_group and login_count(spec) == 0:
        yield Finding(
            "error",
            "Entra ID login applies to the login nodes, and this cluster has none; set "
            "loginNodes.count to 1 or more, or remove entraIdGroup",
            field_path("loginNodes", "entraIdGroup"),
        )


@only_on(scheduler="slurm")
def team_needs_accounting(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    if (spec.users or spec.accounts) and not spec.head_node.accounting:
        yield Finding(
            "error",
            "users and accounts are Slurm associations, which need the accounting database; set "
            "headNode.accounting: true",
            field_path("headNode", "accounting"),
        )


H = TypeVar("H", bound=Hashable)


def _duplicates(values: list[H]) -> set[H]:
    return {v for v in values if values.count(v) > 1}


@only_on(scheduler="slurm")
def qos_valid(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    gpus = _cluster_gpus(spec, cat)
    twice = _duplicates([q.name for q in spec.qos])
    for i, qos in enumerate(spec.qos):
        if qos.name in twice:
            yield Finding(
                "error",
                f"QoS '{qos.name}' is declared twice; keep one",
                field_path("qos", i, "name"),
            )
        if gpus and qos.max_gpus_per_user and qos.max_gpus_per_user > gpus:
            yield Finding(
                "error",
                f"{qos.max_gpus_per_user} GPUs per user is more than the cluster's {gpus}; "
                f"use at most {gpus}",
                field_path("qos", i, "maxGpusPerUser"),
            )


@only_on(scheduler="slurm")
def accounts_valid(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    gpus = _cluster_gpus(spec, cat)
    qos_names = {q.name for q in spec.qos}
    twice = _duplicates([a.name for a in spec.accounts])
    for i, account in enumerate(spec.accounts):
        if account.name in twice:
            yield Finding(
                "error",
                f"account '{account.name}' is declared twice; keep one",
                field_path("accounts", i, "name"),
            )
        if account.name in RESERVED_ACCOUNTS:
            yield Finding(
                "error",
                f"'{account.name}' is Slurm's own top account; pick another name",
                field_path("accounts", i, "name"),
            )
        if gpus and account.gpu_limit and account.gpu_limit > gpus:
            yield Finding(
                "error",
                f"a limit of {account.gpu_limit} GPUs is more than the cluster's {gpus} (it would "
                f"never bind); use at most {gpus} or remove gpuLimit",
                field_path("accounts", i, "gpuLimit"),
            )
        for j, name in enumerate(account.qos):
            if name not in qos_names:
                yield Finding(
                    "error",
                    f"QoS '{name}' is not declared; use one of {', '.join(sorted(qos_names))} "
                    "or add it under qos",
                    field_path("accounts", i, "qos", j),
                )


@only_on(scheduler="slurm")
def users_valid(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    accounts = {a.name for a in spec.accounts}
    names = _duplicates([u.name for u in spec.users])
    uids = _duplicates([u.uid for u in spec.users])
    owner: dict[tuple[str, ...], str] = {}  # a key's type and body (its comment aside) -> user
    for i, user in enumerate(spec.users):
        if user.name in names:
            yield Finding(
                "error", f"user '{user.name}' is declared twice; keep one",
                field_path("users", i, "name"),
            )  # fmt: skip
        if user.name in RESERVED_USERS or user.name == spec.ssh.admin_user:
            yield Finding(
                "error",
                f"'{user.name}' is already a user or group on the nodes (the image, Slurm, munge "
                "or ssh.adminUser); pick another name",
                field_path("users", i, "name"),
            )
        if user.uid in SERVICE_IDS.values():
            yield Finding(
                "error",
                f"uid {user.uid} belongs to a service user on the nodes "
                f"({', '.join(f'{k} {v}' for k, v in SERVICE_IDS.items())}); pick another",
                field_path("users", i, "uid"),
            )
        if user.uid in uids:
            yield Finding(
                "error",
                f"uid {user.uid} is given to more than one user; every user needs their own",
                field_path("users", i, "uid"),
            )
        if user.account not in accounts:
            known = ", ".join(sorted(accounts)) or "none yet"
            yield Finding(
                "error",
                f"account '{user.account}' is not declared under accounts ({known}); add it "
                "or use a declared one",
                field_path("users", i, "account"),
            )
        for j, key in enumerate(user.ssh_public_keys):
            problem = _ssh_key_problem(key)
            if problem:
                yield Finding("error", problem, field_path("users", i, "sshPublicKeys", j))
            body = tuple(key.split()[:2])
            first = owner.setdefault(body, user.name)
            if first != user.name:
                # One key logs in as both users: whoever holds it is either, and the audit
                # trail (sacct, auth.log) cannot tell them apart.
                yield Finding(
                    "error",
                    f"this key is already {first}'s: each user logs in with their own key",
                    field_path("users", i, "sshPublicKeys", j),
                )


def _cluster_gpus(spec: ClusterSpec, cat: Catalog) -> int:
    total = 0
    for part in spec.partitions:
        sku = cat.get(part.sku, spec.cloud)
        if sku is None:
            return 0  # skus_exist reports it
        total += sku.gpus * part.nodes
    return total


RULES: tuple[Rule, ...] = (
    team_only_on_slurm,
    no_login_nodes_on_kubernetes,
    login_sku_exists,
    entra_needs_login_nodes,
    team_needs_accounting,
    qos_valid,
    accounts_valid,
    users_valid,
)
