"""The training job's output -> a TrainRun. Pure: text in, data out.

The batch script prints `GPUCL-TRAIN-NODES n1 n2 ...` (the job's nodes in task order), then
`srun -l` labels every line of task K (node K) with `K: `. gpt.py's own lines carry their node;
torchrun's rendezvous errors are known by name and placed by their label. On Kubernetes
(mpirun, clusterctl.validate.train_k8s) there is neither list nor label: rank 0's start line says
how many ranks to expect, and the silent ones are named by the node of their reporting peers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from clusterctl.train.model import Failure, RankReport, TrainRun

_LABEL = re.compile(r"^\s*(\d+): ?(.*)$")
_MARK = re.compile(r"GPUCL-TRAIN(-START|-ERROR|-STEPS)? (\{.*\})\s*$")
_NODES = re.compile(r"GPUCL-TRAIN-NODES\s+(.+)$")
_RDZV_TIMEOUT = re.compile(r"RendezvousTimeoutError|rendezvous .*timed out", re.IGNORECASE)
_RDZV_CONNECT = re.compile(
    r"RendezvousConnectionError|DistNetworkError|The client socket has failed to connect"
)


@dataclass
class _Reading:
    """What the output's lines said so far, gathered in one pass."""

    ranks: dict[int, RankReport] = field(default_factory=dict)
    # rank -> first step of a piece -> (step seconds, forward seconds)
    pieces: dict[int, dict[int, tuple[list[float], list[float]]]] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    start: dict = field(default_factory=dict)
    timed_out: set[str] = field(default_factory=set)
    unreachable: set[str] = field(default_factory=set)  # torchrun could not reach the store
    errored: set[int] = field(default_factory=set)  # ranks that named their own failure


def parse(text: str, nodes: tuple[str, ...] = ()) -> TrainRun:
    """`nodes`: the job's nodes when the caller knows them (the output's own list wins)."""
    nodes, labelled = _labelled_lines(text, nodes)
    seen = _Reading()
    for task, line in labelled:
        m = _MARK.search(line)
        if m:
            _read_mark(seen, m.group(1), m.group(2))
        else:
            _read_rendezvous_error(seen, _node_of(nodes, task), line)
    if not seen.ranks and (seen.timed_out or seen.unreachable):
        seen.failures += _rendezvous(nodes, seen.timed_out, seen.unreachable)
    seen.failures += _lost_nodes(nodes, seen)
    if not nodes:
        seen.failures += _silent_ranks(seen.start, seen.ranks, seen.errored)
    if not seen.ranks and not seen.failures:
        seen.failures.append(Failure("no-output", None, "the job printed no training result"))
    return TrainRun(nodes=tuple(nodes),
                    ranks=tuple(sorted(seen.ranks.values(), key=lambda r: r.rank)),
                    failures=tuple(seen.failures), start=seen.start)  # fmt: skip


def _labelled_lines(
    text: str, nodes: tuple[str, ...]
) -> tuple[tuple[str, ...], list[tuple[int | None, str]]]:
    """The job's nodes (the output's own list wins over `nodes`) and every other line with the
    task number of its `srun -l` label (None when unlabelled)."""
    labelled: list[tuple[int | None, str]] = []
    for raw in text.splitlines():
        m = _LABEL.match(raw)
        task, line = (int(m.group(1)), m.group(2)) if m else (None, raw)
        found = _NODES.search(line)
        if found:
            nodes = tuple(found.group(1).split())
        else:
            labelled.append((task, line))
    return nodes, labelled


def _node_of(nodes: tuple[str, ...], task: int | None) -> str | None:
    return nodes[task] if task is not None and task < len(nodes) else None


def _read_mark(seen: _Reading, kind: str | None, raw: str) -> None:
    """One `GPUCL-TRAIN[-START|-ERROR|-STEPS] {json}` line; a body that is not JSON is skipped."""
    try:
        body = json.loads(raw)
    except json.JSONDecodeError:
        return
    if kind == "-START":
        seen.start = body
    elif kind == "-STEPS":
        seen.pieces.setdefault(int(body["rank"]), {})[int(body["first"])] = (
            [float(x) for x in body["step_s"]],
            [float(x) for x in body["forward_s"]],
        )
    elif kind == "-ERROR":
        if "rank" in body:
            seen.errored.add(int(body["rank"]))
        seen.failures.append(Failure(body.get("kind", "crash"), body.get("node"),
                                     _error_detail(body)))  # fmt: skip
    else:
        _read_rank_report(seen, body)


def _read_rank_report(seen: _Reading, body: dict) -> None:
    """A rank's final line, joined with its step pieces; a rank with a piece lost did not report."""
    rank = int(body["rank"])
    got = [seen.pieces.get(rank, {})[k] for k in sorted(seen.pieces.get(rank, {}))]
    step_s = tuple(x for p in got for x in p[0])
    if len(step_s) != int(body["steps"]):
        return
    seen.ranks[rank] = RankReport(
        rank=rank,
        node=str(body["node"]),
        local_rank=int(body.get("local_rank", 0)),
        tokens_per_step=int(body["tokens_per_step"]),
        step_s=step_s,
        forward_s=tuple(x for p in got for x in p[1]),
    )


def _read_rendezvous_error(seen: _Reading, node: str | None, line: str) -> None:
    """torchrun's rendezvous errors, placed on the node of their label."""
    if node and _RDZV_TIMEOUT.search(line):
        seen.timed_out.add(node)
    elif node and _RDZV_CONNECT.search(line) and not seen.ranks:
        seen.unreachable.add(node)


def _lost_nodes(nodes: tuple[str, ...], seen: _Reading) -> list[Failure]:
    """A node that said nothing after the training started, while others reported or named their
    own failure, was lost mid-run (the caller may know better: clusterctl.validate.train)."""
    if not (seen.start or seen.ranks or any(f.kind == "peer" for f in seen.failures)):
        return []
    heard = {r.node for r in seen.ranks.values()} | {f.node for f in seen.failures}
    return [
        Failure("lost", n, "its ranks stopped reporting mid-run") for n in nodes if n not in heard
    ]


def _silent_ranks(start: dict, ranks: dict[int, RankReport], errored: set[int]) -> list[Failure]:
    """With no node list (Kubernetes: mpirun's output carries no task labels), the ranks rank 0's
    start line counts (`world`) that neither reported nor named their own failure. torchrun
    numbers ranks node by node (rank = node index x processes per node + local rank), so a silent
    rank whose node's other ranks reported is placed on that node; the others are counted."""
    try:
        world = int(start.get("world", 0))
    except (TypeError, ValueError):
        return []
    silent = [r for r in range(world) if r not in ranks and r not in errored]
    if not silent:
        return []
    per_node = max((r.local_rank for r in ranks.values()), default=-1) + 1
    blocks = (
        per_node > 0
        and world % per_node == 0
        and all(r.rank % per_node == r.local_rank for r in ranks.values())
    )  # a node's last local ranks all silent would make the blocks look smaller: then unplaced
    where = {r.rank // per_node: r.node for r in ranks.values()} if blocks else {}
    named: dict[str, int] = {}
    unplaced = 0
    for r in silent:
        node = where.get(r // per_node) if blocks else None
        if node is None:
            unplaced += 1
        else:
            named[node] = named.get(node, 0) + 1
    found = [
        Failure("lost", node, f"{count} of its ranks stopped reporting mid-run")
        for node, count in sorted(named.items())
    ]
    if unplaced:
        found.append(Failure("lost", None, (
            f"{unplaced} of {world} ranks stopped reporting mid-run; the output does not say "
            "which node they ran on")))  # fmt: skip
    return found


def _rendezvous(
    nodes: tuple[str, ...], timed_out: set[str], unreachable: set[str]
) -> list[Failure]:
    """Who is to blame when the rendezvous did not form. Once the first node (which hosts the
    store) gives up, every other node loses the store too: those errors are its consequence."""
    head = nodes[0] if nodes else None
    if head in timed_out:
        timed_out, unreachable = timed_out | unreachable, set()
    found = [
        Failure("rendezvous", n, f"could not reach the rendezvous on the first node ({head})")
        for n in sorted(unreachable)
    ]
    if timed_out:
        missing = [n for n in nodes if n not in timed_out and n not in unreachable]
        found += [Failure("rendezvous", n, "never joined the rendezvous") for n in missing]
        if not missing:
            found.append(Failure("rendezvous", None, (
                f"the rendezvous timed out with {len(timed_out)} of {len(nodes)} nodes waiting: "
                "every node's torchrun started, so the nodes disagree on the job (node count, "
                "rendezvous id) or cannot all reach the first node")))  # fmt: skip
    return found


def _error_detail(body: dict) -> str:
    where = f"rank {body.get('rank')} (local {body.get('local_rank')})"
    kind = body.get("kind")
    if kind == "oom":
        return f"{where} ran out of memory: {body.get('message', '')}"
    if kind == "peer":
        return f"{where} lost its peers: {body.get('message', '')}"
    return f"{where} crashed: {body.get('message', '')}"
