"""clusterctl.train.parse without a node list (Kubernetes: mpirun's output has no GPUCL-TRAIN-NODES
line and no task labels): rank 0's start line says how many ranks to expect, and ranks that
stopped reporting are a `lost` failure, named by their node where their node's peers reported.
With a node list (Slurm) the lost node is named as before."""

from __future__ import annotations

import json
from pathlib import Path

from clusterctl.train.parse import parse

DATA = Path(__file__).resolve().parents[2] / "data" / "train"


def _line(kind: str, body: dict) -> str:
    return f"GPUCL-TRAIN{kind} {json.dumps(body, sort_keys=True)}"


def _rank(rank: int, node: str, local: int, steps: int = 4) -> list[str]:
    return [
        _line("-STEPS", {"rank": rank, "first": 0, "step_s": [0.1] * steps,
                         "forward_s": [0.03] * steps}),
        _line("", {"rank": rank, "node": node, "local_rank": local, "world": 0,
                   "tokens_per_step": 1024, "steps": steps, "loss": 7.0}),
    ]  # fmt: skip


def _log(world: int, reported: list[tuple[int, str, int]], extra: list[str] = ()) -> str:
    lines = [_line("-START", {"world": world, "backend": "nccl", "device": "H100",
                              "params": 1, "torch": "2.10"})]  # fmt: skip
    for rank, node, local in reported:
        lines += _rank(rank, node, local)
    return "\n".join([*lines, *extra]) + "\n"


def _unlabelled(path: Path) -> str:
    """A recorded Slurm output as mpirun would print it: no node list, no `K: ` labels."""
    out = []
    for line in path.read_text().splitlines():
        if line.startswith("GPUCL-TRAIN-NODES"):
            continue
        out.append(line.split(": ", 1)[1] if line[:1].isdigit() and ": " in line else line)
    return "\n".join(out) + "\n"


def test_a_complete_run_without_a_node_list_has_no_failure() -> None:
    run = parse(_unlabelled(DATA / "healthy-2-node.out"))
    assert run.failures == () and [r.node for r in run.ranks] == ["gpu-pg0-1", "gpu-pg0-2"]


def test_a_node_whose_ranks_all_stopped_is_counted_when_nothing_names_it() -> None:
    reported = [(r, "aks-gpu-0", r) for r in range(8)]
    run = parse(_log(16, reported))
    (lost,) = run.failures
    assert lost.kind == "lost" and lost.node is None
    assert lost.detail.startswith("8 of 16 ranks stopped reporting mid-run")


def test_a_silent_rank_among_its_nodes_reporting_peers_names_that_node() -> None:
    reported = [(r, "aks-gpu-0", r) for r in range(8)]
    reported += [(8 + r, "aks-gpu-1", r) for r in range(8) if r != 3]
    run = parse(_log(16, reported))
    (lost,) = run.failures
    assert (lost.kind, lost.node) == ("lost", "aks-gpu-1")
    assert lost.detail == "1 of its ranks stopped reporting mid-run"


def test_a_rank_that_named_its_own_failure_is_not_also_lost() -> None:
    reported = [(0, "aks-gpu-0", 0)]
    error = _line("-ERROR", {"rank": 1, "node": "aks-gpu-1", "local_rank": 0, "kind": "oom",
                             "message": "CUDA out of memory"})  # fmt: skip
    run = parse(_log(2, reported, [error]))
    assert [(f.kind, f.node) for f in run.failures] == [("oom", "aks-gpu-1")]


def test_with_a_node_list_the_lost_node_is_named_as_before() -> None:
    text = (DATA / "healthy-2-node.out").read_text()
    cut = "\n".join(x for x in text.splitlines() if not x.startswith("1: ")) + "\n"
    run = parse(cut)
    assert [(f.kind, f.node, f.detail) for f in run.failures] == [
        ("lost", "gpu-pg0-2", "its ranks stopped reporting mid-run")
    ]
    # the same output without its node list and labels (as mpirun prints it): counted, not named
    no_list = "\n".join(x.split(": ", 1)[1] for x in cut.splitlines() if x.startswith("0: "))
    (lost,) = parse(no_list + "\n").failures
    assert (lost.kind, lost.node) == ("lost", None) and lost.detail.startswith("1 of 2 ranks")
