"""Localisation pairs two nodes of one scale set only: each scale set is its own InfiniBand
fabric, and a pair across two has no RDMA (it would fail and blame healthy nodes)."""

from __future__ import annotations

import random

from clusterctl.nccl.localize import localize
from clusterctl.validate import run as validate_run
from clusterctl.validate.run import fabric_of

HEALTHY, FLOOR = 400.0, 300.0


def cluster(nodes: int, set_size: int = 100) -> list[str]:
    return [f"gpu-pg{k // set_size}-{k % set_size + 1}" for k in range(nodes)]


def test_fabric_of_is_the_scale_set_of_a_slurm_name() -> None:
    assert fabric_of("gpu-pg3-17") == "gpu-pg3"
    assert fabric_of("aks-gpu-12345678-vmss000000") == ""


def test_at_1024_nodes_no_pair_crosses_a_scale_set() -> None:
    """11 scale sets (10 of 100, one of 24), 12 bad nodes spread over them: every round's pairs
    stay inside one set, and the bad nodes are found."""
    nodes = cluster(1024)
    rng = random.Random(7)
    bad = set(rng.sample(nodes, 12))
    crossed: list[tuple[str, str]] = []

    def measure(pairs):
        out = {}
        for a, b in pairs:
            if fabric_of(a) != fabric_of(b):
                crossed.append((a, b))
                out[(a, b)] = 0.0  # no RDMA between two fabrics
            else:
                out[(a, b)] = HEALTHY * (0.5 if {a, b} & bad else rng.uniform(0.97, 1.03))
        return out

    loc = localize(nodes, measure, lambda v: v >= FLOOR, fabric=fabric_of)
    assert crossed == []
    assert loc.bad == bad
    assert loc.rounds > 1


def test_a_set_with_one_node_left_is_never_paired_across(monkeypatch) -> None:
    nodes = [*cluster(4), "gpu-pg1-1"]
    seen: list[tuple[str, str]] = []

    def measure(pairs):
        seen.extend(pairs)
        return {p: HEALTHY for p in pairs}

    localize(nodes, measure, lambda v: v >= FLOOR, fabric=fabric_of)
    assert all(fabric_of(a) == fabric_of(b) for a, b in seen)


def test_validate_hands_the_sweep_each_nodes_scale_set(monkeypatch) -> None:
    got = {}

    def run_sweep(nodes, run_pairs, **kwargs):
        got.update(kwargs)

    monkeypatch.setattr(validate_run, "run_sweep", run_sweep)
    monkeypatch.setattr(validate_run, "peer_floor", lambda target, opts: 0.8)

    class Opts:
        say = staticmethod(lambda _: None)

    class Th:
        message_bytes, fail_below_gbps = 1, 1.0

    validate_run._localise(cluster(4), None, Th(), None, Opts())
    assert got["fabric"] is fabric_of
