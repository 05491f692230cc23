"""clusterctl.train.parse on marks it cannot use: a mark whose body is not JSON is skipped, and an
error mark that names no rank still fails the run without counting a rank as having named its
own failure."""

from __future__ import annotations

import json

from clusterctl.train.parse import parse


def _line(kind: str, body: dict) -> str:
    return f"GPUCL-TRAIN{kind} {json.dumps(body, sort_keys=True)}"


def test_a_mark_whose_body_is_not_json_is_skipped() -> None:
    text = 'GPUCL-TRAIN-START {not json}\nGPUCL-TRAIN-ERROR {"kind": \n'
    run = parse(text)
    assert run.start == {}
    assert [(f.kind, f.node) for f in run.failures] == [("no-output", None)]


def test_an_error_without_a_rank_fails_the_run_and_leaves_silent_ranks_counted() -> None:
    text = "\n".join([
        _line("-START", {"world": 2}),
        _line("-ERROR", {"kind": "peer", "node": "n1", "message": "gone"}),
    ])  # fmt: skip
    run = parse(text)
    peer, silent = run.failures
    assert (peer.kind, peer.node) == ("peer", "n1")
    assert peer.detail == "rank None (local None) lost its peers: gone"
    assert silent.kind == "lost" and silent.detail.startswith("2 of 2 ranks stopped")


def test_an_error_naming_its_rank_is_not_counted_silent() -> None:
    text = "\n".join([
        _line("-START", {"world": 2}),
        _line("-ERROR", {"kind": "oom", "rank": 1, "local_rank": 1, "node": "n1",
                         "message": "CUDA out of memory"}),
    ])  # fmt: skip
    run = parse(text)
    oom, silent = run.failures
    assert oom.detail == "rank 1 (local 1) ran out of memory: CUDA out of memory"
    assert silent.detail.startswith("1 of 2 ranks stopped")
