"""The training job's output -> a TrainRun. Pure: text in, data out.

The batch script prints `GPUCL-TRAIN-NODES n1 n2 ...` (the job's nodes in task order), then
`srun -l` labels every line of task K (node K) with `K: `. gpt.py's own lines carry their node;
torchrun's rendezvous errors are known by name and placed by their label.
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
    if not ranks and not failures:
        failures.append(Failure("no-output", None, "the job printed no training result"))
    return TrainRun(nodes=tuple(nodes), ranks=tuple(sorted(ranks.values(), key=lambda r: r.rank)),
                    failures=tuple(failures), start=start)  # fmt: skip


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
