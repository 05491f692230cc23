"""Every custom resource the cluster gets or `validate` creates passes its CRD's structural schema
and CEL rules at the pinned operator version (tests/data/crds/, tests/crd_schema.py): MPIJob,
NicClusterPolicy, NodeFeatureRule, Kueue's ResourceFlavor / ClusterQueue / LocalQueue.
kubernetes-validate only knows the built-in kinds (tests/integration/test_k8s_manifests.py)."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import yaml

from clusterctl.render.kubernetes import render_k8s_bundle
from clusterctl.spec.load import load_stack_spec
from clusterctl.validate.k8s_launcher import build_mpijob
from clusterctl.validate.targets import launcher_for_sku
from tests.conftest import plan_stack
from tests.crd_schema import cel_results, cel_results_of, check, crds, schema_for, validate

CASES = [
    ("aws-p5", []),
    ("aws-p5", ["kubernetes.kueue=true", "kubernetes.gpuDriver=managed"]),
    ("aks-h100", []),
    ("aks-h100", ["kubernetes.gpuDriver=managed", "kubernetes.kueue=true"]),
    ("aks-h100", ["partitions[0].sku=Standard_ND96asr_v4", "kubernetes.kueue=true"]),
]
BUILT_IN_GROUPS = {
    "",
    "v1",
    "apps/v1",
    "storage.k8s.io/v1",
    "networking.k8s.io/v1",
}  # kubernetes-validate checks these
CHARTS = Path(__file__).resolve().parents[2] / "data" / "charts"
# The CEL rules (x-kubernetes-validations) our objects reach over CASES: (kind, node, message,
# outcome). Equality, so a rule that stops being reached (or starts) shows here. The rules on
# flavorFungibility and preemption are reached only through the CRD's defaults (`{}` plus nested
# defaults); the transition rules (oldSelf) are skipped on a create, as the API server does.
# MPIJob and NodeFeatureRule have no rules; NicClusterPolicy's (nicConfigurationOperator) are not
# reached.
EXPECTED_CEL = {
    ("ClusterQueue", "$.spec", "borrowingLimit must be nil when cohort is empty", "pass"),
    ("ClusterQueue", "$.spec.flavorFungibility",
     "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor",
     "pass"),
    ("ClusterQueue", "$.spec.preemption",
     "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never", "pass"),
    ("ClusterQueue", "$.spec.resourceGroups[*]",
     "flavors must have the same number of resources as the coveredResources", "pass"),
    ("LocalQueue", "$.spec.clusterQueue", "field is immutable", "skipped"),
    ("ResourceFlavor", "$.spec", "at least one nodeLabel is required when topology is set", "pass"),
    ("ResourceFlavor", "$.spec", "nodeLabels are immutable when topologyName is set", "skipped"),
    ("ResourceFlavor", "$.spec", "tolerations are immutable when topologyName is set", "skipped"),
    ("ResourceFlavor", "$.spec", "topologyName is immutable when topologyName is set", "skipped"),
    ("ResourceFlavor", "$.spec.tolerations",
     "a value must be empty when 'operator' is 'Exists'", "pass"),
    ("ResourceFlavor", "$.spec.tolerations",
     "effect must be 'NoExecute' when 'tolerationSeconds' is set", "pass"),
    ("ResourceFlavor", "$.spec.tolerations",
     "operator must be Exists when 'key' is empty, which means 'match all values and all keys'",
     "pass"),
    ("ResourceFlavor", "$.spec.tolerations",
     "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'", "pass"),
    ("ResourceFlavor", "$.spec.tolerations",
     "supported toleration values: 'Equal'(default), 'Exists'", "pass"),
}  # fmt: skip


def custom_docs(stack: str, overrides: list[str]) -> list[tuple[str, dict]]:
    spec, _ = load_stack_spec(stack, overrides)
    found = []
    for rel, text in render_k8s_bundle(spec, stack).items():
        if rel.startswith("helm/"):
            continue
        for doc in yaml.safe_load_all(text):
            if doc and doc["apiVersion"] not in BUILT_IN_GROUPS:
                found.append((rel, doc))
    return found


def test_every_vendored_crd_is_loaded() -> None:
    kinds = {kind for _, kind in crds()}
    assert kinds == {
        "MPIJob", "NicClusterPolicy", "NodeFeatureRule", "ClusterQueue", "LocalQueue",
        "ResourceFlavor",
    }  # fmt: skip


@pytest.mark.parametrize(("stack", "overrides"), CASES)
def test_rendered_custom_resources_match_their_crds(stack: str, overrides: list[str]) -> None:
    docs = custom_docs(stack, overrides)
    assert docs, "no custom resource rendered"
    for rel, doc in docs:
        assert schema_for(doc["apiVersion"], doc["kind"]) is not None, (rel, doc["kind"])
        assert validate(doc) == [], f"{rel} {doc['kind']}/{doc['metadata']['name']}"


def test_the_cel_rules_our_objects_reach() -> None:
    reached = set()
    for stack, overrides in CASES:
        for _, doc in custom_docs(stack, overrides):
            for r in cel_results_of(doc):
                path = re.sub(r"\[\d+\]", "[*]", r.path)
                reached.add((doc["kind"], path, r.message or r.rule, r.outcome))
    assert reached == EXPECTED_CEL


@pytest.mark.parametrize("stack", ["aws-p5", "aks-h100"])
def test_the_mpijob_validate_creates_matches_the_crd(stack: str) -> None:
    """What `validate -s` creates, from the stack's own ncclLauncher output."""
    launcher = plan_stack(stack).run.outputs["ncclLauncher"]
    assert validate(build_mpijob(launcher)) == []


@pytest.mark.parametrize("sku", ["Standard_ND96isr_H100_v5", "Standard_ND96asr_v4", "p5.48xlarge"])
def test_the_mpijob_for_a_cluster_made_elsewhere_matches_the_crd(sku: str) -> None:
    assert validate(build_mpijob(launcher_for_sku(sku, 2))) == []


# -- the validator itself finds what the API server refuses ------------------------------------


def _job() -> dict:
    return build_mpijob(launcher_for_sku("p5.48xlarge", 2))


def _launcher_container(job: dict) -> dict:
    return job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]


def test_validator_refuses_a_duplicate_env_name() -> None:
    job = _job()
    env = _launcher_container(job)["env"]
    env.append(copy.deepcopy(env[0]))
    (problem,) = validate(job)
    assert "duplicate list-map key name=" in problem


@pytest.mark.parametrize(
    ("mutate", "expect"),
    [
        (lambda j: j["spec"].update(slotsPerWorker="8"), "is not integer"),
        (lambda j: j["spec"].update(bogus=1), "spec.bogus: unknown field"),
        (lambda j: j["spec"].update(mpiImplementation="LAM"), "is not one of"),
        (lambda j: _launcher_container(j).pop("name"), ".name: required"),
        (lambda j: j["spec"]["runPolicy"].update(backoffLimit="0"), "is not integer"),
    ],
)
def test_validator_refuses_types_enums_required_and_unknown_fields(mutate, expect) -> None:
    job = _job()
    mutate(job)
    problems = validate(job)
    assert any(expect in p for p in problems), problems


def test_validator_refuses_a_version_the_crd_does_not_serve() -> None:
    with pytest.raises(ValueError, match="serves no version"):
        validate({"apiVersion": "kubeflow.org/v1", "kind": "MPIJob", "metadata": {"name": "x"}})


# -- the CEL rules are evaluated -----------------------------------------------------------------


def _kueue(kind: str) -> dict:
    docs = custom_docs("aks-h100", ["kubernetes.kueue=true"])
    return next(copy.deepcopy(doc) for _, doc in docs if doc["kind"] == kind)


def _first_resource(spec: dict) -> dict:
    return spec["resourceGroups"][0]["flavors"][0]["resources"][0]


@pytest.mark.parametrize(
    ("kind", "mutate", "expect"),
    [
        (
            "ClusterQueue",
            lambda s: s["resourceGroups"][0]["flavors"][0]["resources"].pop(),
            "$.spec.resourceGroups[0]: flavors must have the same number of resources as the "
            "coveredResources",
        ),
        (
            "ClusterQueue",
            lambda s: _first_resource(s).update(borrowingLimit=8),  # and no cohort
            "$.spec: borrowingLimit must be nil when cohort is empty",
        ),
        (  # whenCanBorrow is absent: its default, MayStopSearch, is what the rule sees
            "ClusterQueue",
            lambda s: s.update(flavorFungibility={"preference": "BorrowingOverPreemption"}),
            "$.spec.flavorFungibility: preference can only be set when both whenCanBorrow and "
            "whenCanPreempt are TryNextFlavor",
        ),
        (
            "ResourceFlavor",
            lambda s: s["tolerations"][0].update(tolerationSeconds=30),  # effect NoSchedule
            "$.spec.tolerations: effect must be 'NoExecute' when 'tolerationSeconds' is set",
        ),
    ],
)
def test_an_object_breaking_a_cel_rule_is_refused_with_its_message(kind, mutate, expect) -> None:
    doc = _kueue(kind)
    assert validate(doc) == []
    mutate(doc["spec"])
    assert validate(doc) == [expect]


def test_a_cel_rule_sees_the_defaults_and_passes_when_kept() -> None:
    doc = _kueue("ClusterQueue")
    doc["spec"]["flavorFungibility"] = {
        "whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor",
        "preference": "BorrowingOverPreemption",
    }  # fmt: skip
    assert validate(doc) == []
    doc["spec"]["cohort"] = "all"
    _first_resource(doc["spec"])["borrowingLimit"] = 8
    assert validate(doc) == []


def test_a_resource_root_rule_sees_metadata_name() -> None:
    """GPUCluster (gpu-operator chart's crds/): `self.metadata.name == 'gpu-cluster'`."""
    path = CHARTS / "gpu-operator" / "crds" / "nvidia.com_gpuclusters.yaml"
    (version,) = yaml.safe_load(path.read_text())["spec"]["versions"]
    schema = version["schema"]["openAPIV3Schema"]
    body = {"apiVersion": "nvidia.com/v1alpha1", "kind": "GPUCluster"}
    (ok,) = cel_results(body, schema, "$", {"name": "gpu-cluster"})
    (bad,) = cel_results(body, schema, "$", {"name": "other", "labels": {"a": "b"}})
    assert ok.outcome == "pass"
    assert bad.problem == "$: GPUCluster is a singleton, metadata.name must be 'gpu-cluster'"


_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "count": {"type": "integer", "default": 3},
        "limit": {"type": "integer"},
        "max-pods": {"type": "integer"},
        "namespace": {"type": "string"},
        "port": {"x-kubernetes-int-or-string": True},
        "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        "note": {"type": "string", "nullable": True,
                 "x-kubernetes-validations": [{"rule": "false"}]},
    },
}  # fmt: skip
_VALUE = {
    "name": "a",
    "max-pods": 4,
    "namespace": "ns",
    "port": "http",
    "tags": ["x"],
    "note": None,
}


@pytest.mark.parametrize(
    ("rule", "expect"),
    [
        # escaped names, int-or-string as dyn, defaults seen by has(), null nodes not validated
        ({"rule": "self.max__dash__pods == 4 && self.__namespace__ == 'ns'"}, []),
        ({"rule": "self.port == 'http' && has(self.count) && self.count == 3"}, []),
        ({"rule": "!has(self.limit) && 'x' in self.tags && self.name.matches('^a$')"}, []),
        # an absent field read is an error, which refuses the object too
        ({"rule": "self.limit > 0", "message": "limit"}, ["$: no such member in mapping: 'limit'"
                                                          " evaluating rule: limit"]),
        # no message: the rule; messageExpression and fieldPath
        ({"rule": "self.name == 'b'"}, ["$: failed rule: self.name == 'b'"]),
        ({"rule": "self.name == 'b'", "message": "m", "messageExpression": "'got ' + self.name",
          "fieldPath": ".name"}, ["$.name: got a"]),
        # a transition rule is skipped on a create
        ({"rule": "self.name == oldSelf.name", "message": "immutable"}, []),
    ],
)  # fmt: skip
def test_cel_semantics_follow_the_api_server(rule: dict, expect: list[str]) -> None:
    schema = {**_SCHEMA, "x-kubernetes-validations": [rule]}
    assert check(_VALUE, schema, "$") == expect


@pytest.mark.parametrize(
    ("rule", "expect"),
    [
        ({"rule": "self.name.lowerAscii() == self.name"}, "it calls lowerAscii, not implemented"),
        # even where the call is not reached: the API server type-checks every rule
        ({"rule": "!has(self.limit) || self.tags.isSorted()"}, "it calls isSorted"),
        ({"rule": "quantity(self.name).isInteger()"}, "it calls isInteger, quantity"),
        ({"rule": "self.tags.map(t, t != '', t) == ['x']"}, "it calls map/3"),
        ({"rule": "self.?limit.orValue(1) == 1"}, "cel-python cannot parse it"),
        ({"rule": "self.name == oldSelf.name", "optionalOldSelf": True}, "optionalOldSelf rules"),
        ({"rule": "self.tags == ['x']"}, "set/map lists are not implemented"),
    ],
)
def test_a_cel_rule_this_cannot_evaluate_fails_the_check_naming_it(rule: dict, expect: str):
    schema = {**_SCHEMA, "x-kubernetes-validations": [rule]}
    (problem,) = check(_VALUE, schema, "$")
    assert expect in problem and rule["rule"] in problem, problem
