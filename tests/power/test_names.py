"""The name map: Slurm names stay `<group>-1..N` whatever instance ids Azure
gives, because a uniform scale set never reuses one (4 -> 2 -> 4 nodes leaves ids 0, 1, 4, 5).
Pure tests of clusterctl.power.names.assign and of the lookups the power program and
gpucl-events make through the map."""

from __future__ import annotations

import json

import pytest

from clusterctl.power.names import assign, node_name, node_ref, sizes_from_nodes

CLUSTER = "demo"
SET = f"{CLUSTER}-gpu-pg0"


def names_of(result) -> dict[str, str]:
    return result.doc["names"].get(SET, {})


def test_a_new_cluster_names_ids_0_to_n_minus_1_as_1_to_n() -> None:
    got = assign({}, {SET: ["3", "0", "2", "1"]}, {SET: 4}, CLUSTER)
    assert names_of(got) == {"0": "gpu-pg0-1", "1": "gpu-pg0-2", "2": "gpu-pg0-3", "3": "gpu-pg0-4"}
    assert got.deallocate == [] and got.waiting == []


def test_4_to_2_to_4_keeps_names_and_gives_the_freed_ones_to_the_new_ids() -> None:
    four = assign({}, {SET: ["0", "1", "2", "3"]}, {SET: 4}, CLUSTER).doc
    two = assign(four, {SET: ["0", "1"]}, {SET: 2}, CLUSTER)
    assert names_of(two) == {"0": "gpu-pg0-1", "1": "gpu-pg0-2"}
    assert sorted(n for _, _, n in two.freed) == ["gpu-pg0-3", "gpu-pg0-4"]
    again = assign(two.doc, {SET: ["0", "1", "4", "5"]}, {SET: 4}, CLUSTER)
    want = {"0": "gpu-pg0-1", "1": "gpu-pg0-2", "4": "gpu-pg0-3", "5": "gpu-pg0-4"}
    assert names_of(again) == want
    assert node_ref(CLUSTER, "gpu-pg0-3", again.doc["names"]).instance_id == "4"
    assert node_name(CLUSTER, f"{SET}_5", again.doc["names"]) == "gpu-pg0-4"


def test_a_vm_re_created_after_a_failed_provisioning_takes_the_freed_name() -> None:
    doc = assign({}, {SET: ["0", "1", "2", "3"]}, {SET: 4}, CLUSTER).doc
    got = assign(doc, {SET: ["0", "2", "3", "4"]}, {SET: 4}, CLUSTER)
    assert names_of(got) == {"0": "gpu-pg0-1", "2": "gpu-pg0-3", "3": "gpu-pg0-4", "4": "gpu-pg0-2"}
    assert got.freed == [(SET, "1", "gpu-pg0-2")] and got.named == [(SET, "4", "gpu-pg0-2")]


def test_a_vm_without_a_name_waits_for_one_and_is_never_deallocated_for_it() -> None:
    """A growth's VMs exist before the config sync that names them (every new VM provisioned
    first, tens of minutes at scale): past the grace such a VM is reported late, not stopped,
    and takes its name when the sync brings it."""
    got = assign({}, {SET: ["0", "1", "2"]}, {SET: 2}, CLUSTER, now=100.0, grace_s=60)
    assert names_of(got) == {"0": "gpu-pg0-1", "1": "gpu-pg0-2"}
    assert got.waiting == [(SET, "2")] and got.deallocate == []
    later = assign(got.doc, {SET: ["0", "1", "2"]}, {SET: 2}, CLUSTER, now=1900.0, grace_s=60)
    assert later.deallocate == [] and later.late == [(SET, "2")]
    assert later.doc["unnamed"][SET]["2"]["deallocated"] is False
    grown = assign(later.doc, {SET: ["0", "1", "2"]}, {SET: 3}, CLUSTER, now=2000.0)
    assert names_of(grown)["2"] == "gpu-pg0-3" and grown.deallocate == []


def test_a_vm_an_older_version_deallocated_unnamed_is_named_only_when_it_asks() -> None:
    doc = {"names": {SET: {"0": "gpu-pg0-1"}}, "unnamed": {SET: {"1": {"since": 0.0,
           "deallocated": True}}}}  # fmt: skip
    grown = assign(doc, {SET: ["0", "1"]}, {SET: 2}, CLUSTER, now=200.0)
    assert "1" not in names_of(grown) and grown.deallocate == []
    asked = assign(doc, {SET: ["0", "1"]}, {SET: 2}, CLUSTER, {(SET, "1")}, now=200.0)
    assert names_of(asked)["1"] == "gpu-pg0-2"


def test_growth_names_a_waiting_vm_when_the_config_sync_adds_its_name() -> None:
    doc = assign({}, {SET: ["0", "1", "2"]}, {SET: 2}, CLUSTER, now=0.0).doc
    got = assign(doc, {SET: ["0", "1", "2"]}, {SET: 3}, CLUSTER, now=30.0)
    assert names_of(got)["2"] == "gpu-pg0-3" and got.doc["unnamed"] == {}


def test_a_vm_whose_name_left_slurm_conf_is_deallocated_not_renamed() -> None:
    doc = assign({}, {SET: ["0", "1", "2"]}, {SET: 3}, CLUSTER).doc
    # a shrink to 2 where Azure deleted id 1 instead of the drained gpu-pg0-3 (id 2)
    got = assign(doc, {SET: ["0", "2"]}, {SET: 2}, CLUSTER)
    assert names_of(got) == {"0": "gpu-pg0-1"}
    assert got.deallocate == [(SET, "2")]


def test_assign_is_idempotent() -> None:
    first = assign({}, {SET: ["0", "1", "4", "5", "6"]}, {SET: 4}, CLUSTER, now=5.0)
    second = assign(first.doc, {SET: ["0", "1", "4", "5", "6"]}, {SET: 4}, CLUSTER, now=5.0)
    assert second.doc == first.doc
    assert second.named == [] and second.freed == [] and second.deallocate == []


def test_scale_sets_are_independent_and_sizes_come_from_slurms_names() -> None:
    nodes = ["gpu-pg0-1", "gpu-pg0-2", "gpu-pg1-1", "big-pg0-3", "big-pg0-1", "big-pg0-2"]
    sizes = sizes_from_nodes(CLUSTER, nodes)
    assert sizes == {f"{CLUSTER}-gpu-pg0": 2, f"{CLUSTER}-gpu-pg1": 1, f"{CLUSTER}-big-pg0": 3}
    existing = {f"{CLUSTER}-gpu-pg0": ["7", "9"], f"{CLUSTER}-gpu-pg1": ["3"]}
    got = assign({}, existing, sizes, CLUSTER)
    assert got.doc["names"] == {
        f"{CLUSTER}-gpu-pg0": {"7": "gpu-pg0-1", "9": "gpu-pg0-2"},
        f"{CLUSTER}-gpu-pg1": {"3": "gpu-pg1-1"},
    }


def test_without_a_map_the_old_rule_holds_and_a_name_without_a_vm_is_refused() -> None:
    assert node_ref(CLUSTER, "gpu-pg0-3").instance_id == "2"
    with pytest.raises(LookupError):
        node_ref(CLUSTER, "gpu-pg0-3", {SET: {"0": "gpu-pg0-1"}})
    with pytest.raises(LookupError):
        node_name(CLUSTER, f"{SET}_4", {SET: {"0": "gpu-pg0-1"}})


def test_the_scheduler_seeds_exactly_what_the_reconciler_gives_a_new_cluster() -> None:
    """The map the scheduler's first boot writes (so booting nodes need not wait for the
    reconciler's venv) is the reconciler's own answer for a new cluster, scale set by scale set
    (5 nodes, 2 per set: pg0 and pg1 full, pg2 one); where Azure numbered a VM otherwise, the
    reconciler corrects the seed: the name of the id that does not exist goes to the real VM."""
    from clusterctl.render.power_files import names_seed
    from clusterctl.spec.load import load_stack_spec

    spec, _ = load_stack_spec(
        "azure-h100", ["partitions[0].nodes=5", "partitions[0].maxNodesPerScaleSet=2"]
    )
    seed = json.loads(names_seed(spec))
    sets = {f"{spec.name}-gpu-pg{k}": n for k, n in enumerate((2, 2, 1))}
    new = assign({}, {s: [str(i) for i in range(n)] for s, n in sets.items()}, sets, spec.name)
    assert seed == {"names": new.doc["names"]}, (seed, new.doc)
    pg1 = f"{spec.name}-gpu-pg1"
    fixed = assign(seed, {**{s: [str(i) for i in range(n)] for s, n in sets.items()},
                          pg1: ["0", "2"]}, sets, spec.name)  # fmt: skip
    assert fixed.doc["names"][pg1] == {"0": "gpu-pg1-1", "2": "gpu-pg1-2"}
    assert fixed.freed == [(pg1, "1", "gpu-pg1-2")]
