"""Every custom resource the cluster gets or `validate` creates passes its CRD's structural schema
at the pinned operator version (tests/data/crds/, tests/crd_schema.py): MPIJob, NicClusterPolicy,
NodeFeatureRule, Kueue's ResourceFlavor / ClusterQueue / LocalQueue. kubernetes-validate only knows
the built-in kinds (tests/integration/test_k8s_manifests.py)."""

from __future__ import annotations

import copy

import pytest
import yaml

from clusterctl.render.kubernetes import render_k8s_bundle
from clusterctl.spec.load import load_stack_spec
from clusterctl.validate.k8s_launcher import build_mpijob
from clusterctl.validate.targets import launcher_for_sku
from tests.conftest import plan_stack
from tests.crd_schema import crds, schema_for, validate

CASES = [
    ("aws-p5", []),
    ("aws-p5", ["kubernetes.kueue=true", "kubernetes.gpuDriver=managed"]),
    ("aks-h100", []),
    ("aks-h100", ["kubernetes.gpuDriver=managed", "kubernetes.kueue=true"]),
    ("aks-h100", ["partitions[0].sku=Standard_ND96asr_v4", "kubernetes.kueue=true"]),
]
BUILT_IN_GROUPS = {"", "v1", "apps/v1"}


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
