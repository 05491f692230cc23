"""The add-on pins the cluster takes from config/versions.yaml, checked against
their sources: the DOCA driver and SR-IOV device plugin against the pinned Network Operator's own
release matrix, the MPI operator manifest against its sha256 (applied from config/, never
fetched at deploy time)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from clusterctl.project import config_dir
from clusterctl.render.kubernetes import cluster_manifests
from clusterctl.render.vendored import VendoredFileError, mpi_operator_manifest
from clusterctl.spec.catalog import catalog, load_catalog
from clusterctl.spec.kubernetes_addons import chart_pins
from tests.crd_schema import crds
from tests.unit.spec.test_rules_kubernetes import load_stack_spec

DATA = Path(__file__).resolve().parents[2] / "data"
ROOT = Path(__file__).resolve().parents[3]


def release_matrix() -> dict:
    """Mellanox/network-operator hack/release.yaml at the pinned chart's tag."""
    version = chart_pins(catalog())["network-operator"].version.lstrip("v")
    path = DATA / "network-operator" / f"release-v{version}.yaml"
    assert path.is_file(), f"bumping the network-operator chart needs its {path.name} beside it"
    return yaml.safe_load(path.read_text())


def test_network_operator_images_are_the_operator_releases_own() -> None:
    matrix = release_matrix()
    entry = catalog().versions["helmCharts"]["networkOperator"]
    assert matrix["NetworkOperator"]["version"].lstrip("v") == str(entry["version"]).lstrip("v")
    for ours, theirs in (("docaDriver", "Mofed"), ("sriovDevicePlugin", "SriovDevicePlugin")):
        pin = entry["components"][ours]
        assert (pin["repository"], pin["image"], pin["version"]) == (
            matrix[theirs]["repository"],
            matrix[theirs]["image"],
            matrix[theirs]["version"],
        ), ours
    assert "hack/release.yaml" in entry["componentsSource"]


def nic_cluster_policy() -> dict:
    spec, _ = load_stack_spec("aks-h100", [])
    text = cluster_manifests(spec, "aks-h100")["nic-cluster-policy.yaml"]
    (doc,) = [d for d in yaml.safe_load_all(text) if d]
    return doc


def test_the_nic_cluster_policy_runs_the_pinned_doca_driver() -> None:
    matrix = release_matrix()
    spec = nic_cluster_policy()["spec"]
    assert spec["ofedDriver"]["image"] == matrix["Mofed"]["image"]
    assert spec["ofedDriver"]["repository"] == matrix["Mofed"]["repository"]
    assert spec["ofedDriver"]["version"] == matrix["Mofed"]["version"]
    assert spec["sriovDevicePlugin"]["version"] == matrix["SriovDevicePlugin"]["version"]


def test_mpi_operator_manifest_is_the_pinned_file() -> None:
    pin = catalog().versions["manifests"]["mpiOperator"]
    path = mpi_operator_manifest(catalog())
    assert hashlib.sha256(path.read_bytes()).hexdigest() == pin["sha256"]
    assert path.name == f"mpi-operator-{pin['version']}.yaml"
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    (crd,) = [d for d in docs if d["kind"] == "CustomResourceDefinition"]
    # the MPIJob schema the CRD/CEL tests check our MPIJobs against is the one it installs
    ours = crds()[("kubeflow.org", "MPIJob")]
    assert crd["spec"]["versions"] == ours["spec"]["versions"]


def _own_catalog(tmp_path: Path, edit) -> Path:
    folder = tmp_path / "config"
    shutil.copytree(config_dir(), folder)
    edit(folder)
    return folder


def test_a_changed_manifest_stops_the_render(tmp_path, monkeypatch) -> None:
    def tamper(folder: Path) -> None:
        path = folder / catalog().versions["manifests"]["mpiOperator"]["file"]
        path.write_text(path.read_text().replace("mpioperator/mpi-operator:", "evil/operator:"))

    folder = _own_catalog(tmp_path, tamper)
    monkeypatch.setenv("GPU_CLUSTERS_CONFIG_DIR", str(folder))
    with pytest.raises(VendoredFileError) as exc:
        mpi_operator_manifest(load_catalog(folder))
    assert "manifests.mpiOperator" in str(exc.value) and "sha256" in str(exc.value)


def test_a_pin_without_a_digest_is_refused_by_plan(tmp_path) -> None:
    def unpin(folder: Path) -> None:
        path = folder / "versions.yaml"
        doc = yaml.safe_load(path.read_text())
        del doc["manifests"]["mpiOperator"]["sha256"]
        path.write_text(yaml.safe_dump(doc))

    folder = _own_catalog(tmp_path, unpin)
    proc = subprocess.run(
        [sys.executable, "-m", "clusterctl", "plan", "-s", "aws-p5"],
        capture_output=True, text=True, cwd=ROOT, check=False, timeout=300,
        env={**os.environ, "GPU_CLUSTERS_CONFIG_DIR": str(folder)},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if x.strip()]
    assert "manifests.mpiOperator" in line and "sha256" in line
    assert "Traceback" not in proc.stderr
