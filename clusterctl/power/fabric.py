"""NVLink domains (racks) as the GPU nodes report them, and topology/block built from the reports.

A GB200 NVL72 rack is one NVLink domain of 18 VMs. Each GPU's `nvidia-smi -q` Fabric section names
its domain: ClusterUUID and CliqueId, once the fabric is up (State Completed, Status Success).
Azure/cyclecloud-slurm builds Slurm's blocks the same way (`azure-slurm/slurmcc/topology.py`
`get_rack_id`: ClusterUUID + CliqueId of each host, grouped), and its README shows blocks whose
node names are far from consecutive. The rendered topology.conf assumes consecutive names per
rack (render/slurm_conf.nvlink_blocks); this module checks that against what the nodes say.

On a GPU node, at every boot (a deallocated VM may come back in another rack):
`python3 -m gpucl_power.fabric report CLUSTER NODE` writes `/sched/<cluster>/fabric/<node>`, one
line `<ClusterUUID> <CliqueId>`, or fails with the reason the fabric gave.
On the scheduler: `python3 -m gpucl_power.fabric topology CLUSTER TOPOLOGY_CONF` compares the
reports with topology.conf's blocks, writes the blocks the reports make to
`/sched/<cluster>/topology.reported.conf` and exits 0 when they agree, 1 when a reported domain
disagrees with the assumed naming (one line per block), 3 while nodes have not reported.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .names import SCHED
from .slurm import expand

READY = ("Completed", "Success")
"""A GPU's Fabric State and Status once its NVLink fabric is up (nvidia-smi -q); before that,
`In Progress` / `N/A`, and an HGX GPU (no multi-node NVLink) says N/A throughout."""


class FabricError(Exception):
    """The node cannot say its NVLink domain (fabric not up, GPUs disagreeing, no GPUs)."""


@dataclass(frozen=True)
class GpuFabric:
    gpu: str
    """The GPU's PCI bus id, as the `GPU 00000008:01:00.0` line names it."""
    state: str
    status: str
    clique_id: str
    cluster_uuid: str


_GPU = re.compile(r"^GPU ([0-9A-Fa-f:.]+)\s*$")
_KEY = re.compile(r"^ {8}(\S[^:]*?)\s*:\s*(.*?)\s*$")


def parse(text: str) -> list[GpuFabric]:
    """Every GPU's Fabric section of `nvidia-smi -q`: a `GPU <bus id>` line at column 0, then a
    `Fabric` line indented 4, its fields indented 8 (`Health` and its fields, deeper, skipped);
    the section ends at the next line indented less."""
    out: list[GpuFabric] = []
    gpu, fields, inside = "", dict[str, str](), False
    for line in text.splitlines():
        if m := _GPU.match(line):
            gpu, inside = m.group(1), False
        elif line.rstrip() == "    Fabric":
            fields, inside = {}, True
        elif inside and (m := _KEY.match(line)):
            fields[m.group(1)] = m.group(2)
        elif inside and line.strip() and not line.startswith(" " * 8):
            inside = False
            out.append(_gpu_fabric(gpu, fields))
    if inside:
        out.append(_gpu_fabric(gpu, fields))
    return out


def _gpu_fabric(gpu: str, fields: dict[str, str]) -> GpuFabric:
    return GpuFabric(
        gpu,
        fields.get("State", ""),
        fields.get("Status", ""),
        fields.get("CliqueId", ""),
        fields.get("ClusterUUID", ""),
    )


def node_domain(text: str) -> str:
    """`<ClusterUUID> <CliqueId>` shared by every GPU of the node, or FabricError saying why not."""
    gpus = parse(text)
    if not gpus:
        raise FabricError("nvidia-smi -q shows no GPU with a Fabric section")
    for g in gpus:
        if (g.state, g.status) != READY:
            raise FabricError(
                f"GPU {g.gpu}: fabric State {g.state or '?'}, Status {g.status or '?'} "
                f"(not {READY[0]}/{READY[1]}: is nvidia-imex or the NVLink fabric up?)"
            )
    domains = sorted({f"{g.cluster_uuid} {g.clique_id}" for g in gpus})
    if len(domains) > 1:
        raise FabricError(f"the node's GPUs are in {len(domains)} NVLink domains: {domains}")
    return domains[0]


def fabric_dir(cluster: str, root: Path = SCHED) -> Path:
    return root / cluster / "fabric"


def reported_topology_file(cluster: str, root: Path = SCHED) -> Path:
    return root / cluster / "topology.reported.conf"


def report(cluster: str, node: str, text: str, root: Path = SCHED) -> str:
    """Write this node's domain where the scheduler reads it (atomically: a reader never sees
    half a line); return it."""
    domain = node_domain(text)
    d = fabric_dir(cluster, root)
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / f".{node}.tmp"
    tmp.write_text(domain + "\n")
    tmp.replace(d / node)
    return domain


def read_reports(cluster: str, root: Path = SCHED) -> dict[str, str]:
    d = fabric_dir(cluster, root)
    if not d.is_dir():
        return {}
    return {p.name: p.read_text().strip() for p in d.iterdir() if not p.name.startswith(".")}


def assumed_blocks(
    topology_conf: str, expander: Callable[[str], list[str]]
) -> dict[str, list[str]]:
    """topology.conf's `BlockName=... Nodes=...` lines, node lists expanded."""
    blocks = {}
    for line in topology_conf.splitlines():
        m = re.match(r"^BlockName=(\S+)\s+Nodes=(\S+)", line)
        if m:
            blocks[m.group(1)] = expander(m.group(2))
    return blocks


@dataclass(frozen=True)
class Check:
    problems: list[str]
    """One line per assumed block the reports split, or that shares a domain with another."""
    missing: list[str]
    """Nodes of the assumed blocks with no report yet."""
    topology: str
    """topology.conf's block lines as the reports make them (BlockSizes kept)."""


def check(assumed: dict[str, list[str]], reports: dict[str, str], block_sizes: str) -> Check:
    nodes = [n for members in assumed.values() for n in members]
    missing = [n for n in nodes if n not in reports]
    problems = []
    owner: dict[str, str] = {}
    for name, members in assumed.items():
        domains = sorted({reports[n] for n in members if n in reports})
        if len(domains) > 1:
            split = "; ".join(
                f"{', '.join(n for n in members if reports.get(n) == d)} in {d}" for d in domains
            )
            problems.append(
                f"block {name} is {len(domains)} NVLink domains by the nodes' reports: {split}"
            )
        for d in domains:
            if owner.setdefault(d, name) != name:
                problems.append(
                    f"NVLink domain {d} is reported by nodes of blocks {owner[d]} and {name}"
                )
    return Check(problems, missing, _topology(assumed, reports, block_sizes))


def _topology(assumed: dict[str, list[str]], reports: dict[str, str], block_sizes: str) -> str:
    """One block per reported domain, in topology.conf's node order, named after the assumed block
    that holds most of its nodes; a domain's nodes in the order topology.conf listed them."""
    order = [n for members in assumed.values() for n in members]
    where = {n: name for name, members in assumed.items() for n in members}
    groups: dict[str, list[str]] = {}
    for n in order:
        if n in reports:
            groups.setdefault(reports[n], []).append(n)
    lines = ["# topology.conf's blocks as the GPU nodes report their NVLink domains (gpucl_power)"]
    used: dict[str, int] = {}
    for domain, members in groups.items():
        homes = [where[n] for n in members]
        base = max(dict.fromkeys(homes), key=homes.count)  # most of its nodes; ties: first
        used[base] = used.get(base, 0) + 1
        name = base if used[base] == 1 else f"{base}-{used[base]}"
        lines.append(f"# {domain}")
        lines.append(f"BlockName={name} Nodes={','.join(members)}")
    if block_sizes:
        lines.append(f"BlockSizes={block_sizes}")
    return "\n".join(lines) + "\n"


def _block_sizes(topology_conf: str) -> str:
    m = re.search(r"^BlockSizes=(\S+)", topology_conf, re.M)
    return m.group(1) if m else ""


def topology(
    cluster: str,
    conf: Path,
    root: Path = SCHED,
    expander: Callable[[str], list[str]] = expand,
) -> int:
    text = conf.read_text()
    result = check(assumed_blocks(text, expander), read_reports(cluster, root), _block_sizes(text))
    reported_topology_file(cluster, root).write_text(result.topology)
    for line in result.problems:
        print(f"gpucl-fabric: WARNING: {line}", file=sys.stderr)
    if result.problems:
        print(
            f"gpucl-fabric: {conf} assumes racks of consecutive names, which the nodes contradict: "
            f"the blocks they report are in {reported_topology_file(cluster, root)}",
            file=sys.stderr,
        )
        return 1
    if result.missing:
        print(
            f"gpucl-fabric: {len(result.missing)} node(s) have not reported their NVLink domain "
            f"yet ({', '.join(result.missing[:5])}{', ...' if len(result.missing) > 5 else ''})",
            file=sys.stderr,
        )
        return 3
    print(f"gpucl-fabric: every block of {conf} is one NVLink domain, as its nodes report")
    return 0


REPORT_WAIT = {"tries": 30, "every_s": 10}
"""The fabric comes up some time after boot (State In Progress): asked again for 5 minutes."""


def _report_when_up(cluster: str, node: str, sleep: Callable[[float], None] = time.sleep) -> int:
    for attempt in range(REPORT_WAIT["tries"]):
        smi = subprocess.run(["nvidia-smi", "-q"], capture_output=True, text=True, check=False)
        try:
            print(report(cluster, node, smi.stdout))
            return 0
        except FabricError as e:
            if attempt == REPORT_WAIT["tries"] - 1:
                print(f"gpucl-fabric: {node} has no NVLink domain to report: {e}", file=sys.stderr)
        sleep(REPORT_WAIT["every_s"])
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 3 and args[0] == "report":
        return _report_when_up(args[1], args[2])
    if len(args) == 3 and args[0] == "topology":
        return topology(args[1], Path(args[2]))
    print("usage: gpucl_power.fabric report CLUSTER NODE | topology CLUSTER TOPOLOGY_CONF")
    return 2


if __name__ == "__main__":
    sys.exit(main())
