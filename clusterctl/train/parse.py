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

from clusterctl.train.model import Failure, RankReport, TrainRun

_LABEL = re.compile(r"^\s*(\d+): ?(.*)$")
_MARK = re.compile(r"GPUCL-TRAIN(-START|-ERROR|-STEPS)? (\{.*\})\s*$")
_NODES = re.compile(r"GPUCL-TRAIN-NODES\s+(.+)$")
_RDZV_TIMEOUT = re.compile(r"RendezvousTimeoutError|rendezvous .*timed out", re.IGNORECASE)
_RDZV_CONNECT = re.compile(
    r"RendezvousConnectionError|DistNetworkError|The client socket has failed to connect"
)


def parse(text: str, nodes: tuple[str, ...] = ()) -> TrainRun:
    """`nodes`: the job's nodes when the caller knows them (the output's own list wins)."""
    ranks: dict[int, RankReport] = {}
    pieces: dict[int, dict[int, tuple[list[float], list[float]]]] = {}
    failures: list[Failure] = []
    start: dict = {}
    timed_out: set[str] = set()
    unreachable: set[str] = set()  # its torchrun could not connect to the rendezvous store
    errored: set[int] = set()  # ranks that named their own failure
    labelled: list[tuple[int | None, str]] = []
    for raw in text.splitlines():
        m = _LABEL.match(raw)
        task, line = (int(m.group(1)), m.group(2)) if m else (None, raw)
        found = _NODES.search(line)
        if found:
            nodes = tuple(found.group(1).split())
            continue
        labelled.append((task, line))

    def node_of(task: int | None) -> str | None:
        return nodes[task] if task is not None and task < len(nodes) else None

    for task, line in labelled:
        m = _MARK.search(line)
        if m:
            try:
                body = json.loads(m.group(2))
            except json.JSONDecodeError:
                continue
            if m.group(1) == "-START":
                start = body
            elif m.group(1) == "-STEPS":
                pieces.setdefault(int(body["rank"]), {})[int(body["first"])] = (
                    [float(x) for x in body["step_s"]],
                    [float(x) for x in body["forward_s"]],
                )
            elif m.group(1) == "-ERROR":
                if "rank" in body:
                    errored.add(int(body["rank"]))
                failures.append(Failure(body.get("kind", "crash"), body.get("node"),
                                        _error_detail(body)))  # fmt: skip
            else:
                rank = int(body["rank"])
                got = [pieces.get(rank, {})[k] for k in sorted(pieces.get(rank, {}))]
                step_s = tuple(x for p in got for x in p[0])
                if len(step_s) != int(body["steps"]):  # a piece lost: this rank did not report
                    continue
                ranks[rank] = RankReport(
                    rank=rank,
                    node=str(body["node"]),
                    local_rank=int(body.get("local_rank", 0)),
                    tokens_per_step=int(body["tokens_per_step"]),
                    step_s=step_s,
                    forward_s=tuple(x for p in got for x in p[1]),
                )
            continue
        node = node_of(task)
        if node and _RDZV_TIMEOUT.search(line):
            timed_out.add(node)
        elif node and _RDZV_CONNECT.search(line) and not ranks:
            unreachable.add(node)
    if not ranks and (timed_out or unreachable):
        failures += _rendezvous(nodes, timed_out, unreachable)
    # A node that said nothing after the training started, while others reported or named their
    # own failure, was lost mid-run (the caller may know better: clusterctl.validate.train).
    heard = {r.node for r in ranks.values()} | {f.node for f in failures}
    if start or ranks or any(f.kind == "peer" for f in failures):
        for n in nodes:
            if n not in heard:
                failures.append(Failure("lost", n, "its ranks stopped reporting mid-run"))
    if not nodes:
        failures += _silent_ranks(start, ranks, errored)
    if not ranks and not failures:
        failures.append(Failure("no-output", None, "the job printed no training result"))
    return TrainRun(nodes=tuple(nodes), ranks=tuple(sorted(ranks.values(), key=lambda r: r.rank)),
                    failures=tuple(failures), start=start)  # fmt: skip


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
