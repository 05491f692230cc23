"""Slurm node name <-> scale set and instance id: the cluster's name map.

A node of scale set `<partition>-pg<k>` (spec/topology.ScaleSet) is a VM of the Azure scale set
`<cluster>-<partition>-pg<k>` and is called `<partition>-pg<k>-<n>`, n in 1..N where slurm.conf
lists `<partition>-pg<k>-[1-N]`. Uniform
scale sets never reuse an instance id (a scale-in then scale-out, or a VM re-created after a
failed provisioning, gets a new, higher id), so n cannot be derived from the id: the scheduler
keeps a map on its data disk, /sched/<cluster>/names.json, shared read-only with the nodes:

    {"names": {"<scale set>": {"<instance id>": "<slurm name>"}},
     "unnamed": {"<scale set>": {"<instance id>": {"since": <epoch s>, "deallocated": bool}}}}

`gpucl-power names` (program.py) keeps it (assign() below): a name stays with its VM for the VM's
life (deallocate/start, reimage and redeploy keep the id); a deleted VM's name is freed; a new VM
(ascending id) gets the lowest free name within its group's size; one that gets none waits
(growth: the VMs come before the config sync that names them), reported past a grace.
A new cluster gives ids 0..N-1 the names 1..N. Without a map (a cluster from before the map) the
old rule applies: name n is instance n - 1.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

DRAIN_PREFIX = "gpucl:"
"""The default owner prefix of the reasons the power program sets (power.json reasonPrefix);
clusterctl.constants.DRAIN_PREFIX, copied: this package imports nothing outside itself."""
NODE_NAME = re.compile(r"^(?P<group>[a-z][a-z0-9]{0,14}-pg\d+)-(?P<index>[1-9]\d*)$")
SCHED = Path("/sched")
NAME_GRACE_S = 900.0
"""How long a VM may wait for a name before `gpucl-power names` reports it as late (it is never
deallocated for it: a growth's config sync adds its name after every new VM has provisioned)."""


def group_name(partition: str, index: int) -> str:
    """Scale set k of a partition: `<partition>-pg<k>` (pg: placement group, as CycleCloud)."""
    return f"{partition}-pg{index}"


def vm_set_name(cluster: str, group: str) -> str:
    """The Azure scale set holding a group's VMs: `<cluster>-<group>`."""
    return f"{cluster}-{group}"


def computer_name_prefix(group: str) -> str:
    """The VMs' hostname prefix (Azure appends 6 base-36 digits: `gpu-pg0-000000`)."""
    return f"{group}-"


def slurm_name(group: str, n: int) -> str:
    """The Slurm name of node n (1-based) of a group: `<group>-<n>`."""
    return f"{group}-{n}"


def hostlist(group: str, first: int, last: int) -> str:
    """Nodes first..last of a group in Slurm's hostlist syntax."""
    return f"{group}-[{first}-{last}]" if last > first else slurm_name(group, first)


def vm_name(scale_set: str, instance_id: str | int) -> str:
    """Azure's name of a scale set's VM: `<scale set>_<instance id>`."""
    return f"{scale_set}_{instance_id}"


def split_vm_name(vm: str) -> tuple[str, str] | None:
    """`<scale set>_<instance id>` -> (scale set, id); None for any other name."""
    scale_set, _, instance = vm.rpartition("_")
    return (scale_set, instance) if scale_set and instance.isdigit() else None


def names_dir(cluster: str, root: Path = SCHED) -> Path:
    return root / cluster


def names_file(cluster: str, root: Path = SCHED) -> Path:
    return names_dir(cluster, root) / "names.json"


def requests_dir(cluster: str, root: Path = SCHED) -> Path:
    """A booting node without a name touches <dir>/<vm name> and waits for the map to name it."""
    return names_dir(cluster, root) / "name-requests"


@dataclass(frozen=True, order=True)
class NodeRef:
    name: str
    scale_set: str
    instance_id: str


def _index(name: str) -> tuple[str, int]:
    m = NODE_NAME.match(name)
    if not m:
        raise ValueError(f"'{name}' is not a node name of this cluster (<partition>-pg<k>-<n>)")
    return m["group"], int(m["index"])


def node_ref(cluster: str, name: str, names: dict[str, Any] | None = None) -> NodeRef:
    """The VM holding a Slurm name: from the map's `names` section, or, without a map, the old
    rule (instance n - 1). A name the map gives to no VM raises LookupError."""
    group, index = _index(name)
    scale_set = vm_set_name(cluster, group)
    if names is None:
        return NodeRef(name, scale_set, str(index - 1))
    for instance_id, held in names.get(scale_set, {}).items():
        if held == name:
            return NodeRef(name, scale_set, instance_id)
    raise LookupError(f"{name}: no VM holds this name (names.json)")


def node_name(cluster: str, vm_name: str, names: dict[str, Any] | None = None) -> str:
    """Azure's VM name `<scale set>_<instance id>` -> the Slurm node name (map or old rule)."""
    parts = split_vm_name(vm_name)
    prefix = f"{cluster}-"
    if parts is None or not parts[0].startswith(prefix):
        raise ValueError(f"'{vm_name}' is not a VM of cluster {cluster}")
    scale_set, instance = parts
    if names is None:
        return slurm_name(scale_set[len(prefix) :], int(instance) + 1)
    held = names.get(scale_set, {}).get(instance)
    if held is None:
        raise LookupError(f"{vm_name} has no Slurm name in names.json")
    return str(held)


def load_names(path: Path) -> dict[str, Any] | None:
    """The map's `names` section, read once; None when there is no map file (old rule)."""
    try:
        return dict(json.loads(path.read_text()).get("names", {}))
    except FileNotFoundError:
        return None


def by_scale_set(refs: list[NodeRef]) -> dict[str, list[NodeRef]]:
    out: dict[str, list[NodeRef]] = {}
    for ref in sorted(refs):
        out.setdefault(ref.scale_set, []).append(ref)
    return out


@dataclass
class Assignment:
    doc: dict[str, Any]
    """The new names.json content."""
    named: list[tuple[str, str, str]] = field(default_factory=list)
    """(scale set, instance id, name) given in this pass."""
    freed: list[tuple[str, str, str]] = field(default_factory=list)
    """(scale set, instance id, name) whose VM is gone, or whose name left slurm.conf."""
    deallocate: list[tuple[str, str]] = field(default_factory=list)
    """(scale set, instance id): VMs without a name to stop now, so nothing bills without one."""
    waiting: list[tuple[str, str]] = field(default_factory=list)
    """(scale set, instance id): VMs without a name, still within the grace."""
    late: list[tuple[str, str]] = field(default_factory=list)
    """(scale set, instance id): VMs without a name past the grace: running, billing, reported
    (a resize whose config sync did not come, or a VM Azure made beyond the stack's count)."""


def sizes_from_nodes(cluster: str, nodes: list[str]) -> dict[str, int]:
    """Slurm's node names (sinfo) -> scale set -> its group's size N (`<group>-[1-N]`)."""
    sizes: dict[str, int] = {}
    for node in nodes:
        group, index = _index(node)
        key = vm_set_name(cluster, group)
        sizes[key] = max(sizes.get(key, 0), index)
    return sizes


def assign(
    doc: dict[str, Any],
    existing: dict[str, list[str]],
    sizes: dict[str, int],
    cluster: str,
    requests: set[tuple[str, str]] = frozenset(),  # type: ignore[assignment]
    now: float = 0.0,
    grace_s: float = NAME_GRACE_S,
) -> Assignment:
    """One pass of the map (pure). `existing`: scale set -> the instance ids that exist now
    (every scale set of the cluster); `sizes`: scale set -> N from the live slurm.conf;
    `requests`: (scale set, id) of nodes waiting at boot for a name.

    A named VM keeps its name while it exists and the name is within N. A VM whose name left
    slurm.conf (a shrink that deleted other VMs than the drained ones) loses it and is stopped.
    A VM without a name (new, or waiting) takes the lowest free name, in ascending id order; one
    that gets none waits, never deallocated (a growth's VMs come before the names), reported late
    past `grace_s`. A VM deallocated by an older version for want of a name is not named again
    unless it asks anew (a reimage runs its first boot again)."""
    prefix = f"{cluster}-"
    old_names: dict[str, dict[str, str]] = doc.get("names", {})
    old_unnamed: dict[str, dict[str, dict[str, Any]]] = doc.get("unnamed", {})
    out = Assignment({"names": {}, "unnamed": {}})
    for scale_set in sorted(set(existing) | set(old_names) | set(old_unnamed)):
        ids = sorted(set(existing.get(scale_set, [])), key=int)
        size = sizes.get(scale_set, 0)
        group = scale_set[len(prefix) :] if scale_set.startswith(prefix) else scale_set
        names = _kept_names(out, scale_set, old_names.get(scale_set, {}), ids, size)
        lost = {i for s, i, _ in out.freed if s == scale_set and i in ids}
        taken = set(names.values())
        free = [n for n in map(partial(slurm_name, group), range(1, size + 1)) if n not in taken]
        seen = old_unnamed.get(scale_set, {})
        unnamed: dict[str, dict[str, Any]] = {}
        for instance_id in (i for i in ids if i not in names):
            waits = _unnamed_since(seen.get(instance_id), (scale_set, instance_id) in requests)
            if instance_id in lost:  # its slurmd keeps the old name: stop it, never rename it
                unnamed[instance_id] = {"since": now, "deallocated": True}
                out.deallocate.append((scale_set, instance_id))
            elif waits is not None and waits.get("deallocated"):
                unnamed[instance_id] = waits
            elif free:
                names[instance_id] = free.pop(0)
                out.named.append((scale_set, instance_id, names[instance_id]))
            else:
                unnamed[instance_id] = _wait(out, scale_set, instance_id, waits, now, grace_s)
        if names:
            out.doc["names"][scale_set] = dict(sorted(names.items(), key=lambda kv: int(kv[0])))
        if unnamed:
            out.doc["unnamed"][scale_set] = dict(sorted(unnamed.items(), key=lambda kv: int(kv[0])))
    return out


def _kept_names(
    out: Assignment, scale_set: str, old: dict[str, str], ids: list[str], size: int
) -> dict[str, str]:
    """The names a scale set's VMs keep: the VM exists and its name is within N; every other
    old name is freed."""
    names: dict[str, str] = {}
    for instance_id, name in sorted(old.items()):
        _, index = _index(name)
        if instance_id in ids and index <= size:
            names[instance_id] = name
        else:
            out.freed.append((scale_set, instance_id, name))
    return names


def _unnamed_since(seen: dict[str, Any] | None, asks: bool) -> dict[str, Any] | None:
    """A VM's record without a name; a VM deallocated for want of one that asks anew was
    reimaged (its first boot asks again): it starts afresh."""
    if seen is not None and seen.get("deallocated") and asks:
        return None
    return seen


def _wait(
    out: Assignment,
    scale_set: str,
    instance_id: str,
    seen: dict[str, Any] | None,
    now: float,
    grace_s: float,
) -> dict[str, Any]:
    """A VM that finds no free name waits. Never deallocated for want of a name: a growth's VMs
    exist before the config sync that names them (after every new VM has provisioned, tens of
    minutes at scale), and a VM stopped here was never named again. Past the grace it is
    reported late."""
    seen = dict(seen) if seen else {"since": now, "deallocated": False}
    late = now - float(seen["since"]) >= grace_s
    (out.late if late else out.waiting).append((scale_set, instance_id))
    return seen
