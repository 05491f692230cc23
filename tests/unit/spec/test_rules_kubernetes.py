"""Preflight rules for EKS/AKS GPU clusters, and bad input through `clusterctl plan` (exit 2)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

import clusterctl.spec.rules_k8s as rk
from clusterctl.errors import SpecError
from clusterctl.project import config_dir
from clusterctl.spec.catalog import Catalog, catalog, load_catalog
from clusterctl.spec.load import load_spec
from clusterctl.spec.model import CONFIG_KEY
from clusterctl.spec.stackfile import apply_overrides, read_stack_config

CLUSTERCTL = [sys.executable, "-m", "clusterctl"]
# GPU types without an RDMA fabric, added to a copy of the shipped catalog when it has none.
FABRICLESS = {
    "aws": {"name": "g6.2xlarge", "family": "G6", "gpuModel": "L4", "vcpus": 8, "memoryGiB": 32},
    "azure": {
        "name": "Standard_NC24ads_A100_v4",
        "family": "NC A100 v4",
        "gpuModel": "A100",
        "vcpus": 24,
        "memoryGiB": 220,
    },
}
IMAGE_FAMILY = {"aws": "al2023-nvidia", "azure": "ubuntu-hpc"}


@pytest.fixture(scope="module")
def fabricless_catalog(tmp_path_factory) -> Path:
    """The shipped catalog plus a fabric-less GPU type per cloud where it has none."""
    folder = tmp_path_factory.mktemp("catalog")
    for path in config_dir().glob("*.yaml"):
        shutil.copy(path, folder / path.name)
    doc = yaml.safe_load((folder / "skus.yaml").read_text())
    for cloud, extra in FABRICLESS.items():
        if not _fabricless(catalog(), cloud):
            doc["skus"].append(
                {
                    **extra,
                    "cloud": cloud,
                    "gpus": 1,
                    "fabric": {"kind": "none"},
                    "price": {"usdPerHour": 1.0, "region": "x", "asOf": "2026", "source": "test"},
                    "node": {
                        "cpuArch": "x86_64",
                        "sockets": 1,
                        "nvlinkDomainGpus": 1,
                        "fabricManager": False,
                        "imex": False,
                        "imageFamily": IMAGE_FAMILY[cloud],
                        "source": "test",
                    },
                }
            )
    (folder / "skus.yaml").write_text(yaml.safe_dump(doc))
    return folder


def _fabricless(cat: Catalog, cloud: str) -> str | None:
    return next(
        (s.name for s in cat.skus if s.cloud == cloud and s.gpus > 0 and s.fabric.kind == "none"),
        None,
    )


def plan_cli(config: Path, *args: str) -> subprocess.CompletedProcess:
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "GPU_CLUSTERS_CONFIG_DIR": str(config)}
    return subprocess.run(
        [*CLUSTERCTL, "plan", *args], capture_output=True, text=True, cwd=root, env=env, check=False
    )


def load_stack_spec(stack: str, overrides: list[str], cat: Catalog | None = None):
    raw = apply_overrides(read_stack_config(stack)[CONFIG_KEY], overrides)
    return load_spec(raw, cat)


def errors_of(stack: str, *overrides: str, cat: Catalog | None = None) -> list[str]:
    with pytest.raises(SpecError) as exc:
        load_stack_spec(stack, list(overrides), cat)
    return [f.line() for f in exc.value.findings]


@pytest.mark.parametrize(
    ("stack", "overrides", "field"),
    [
        (
            "aws-p5",
            ["partitions[0].sku={non_efa}", "partitions[0].fabric=efa"],
            "partitions[0].fabric",
        ),
        (
            "aks-h100",
            ["partitions[0].sku={non_ib}", "partitions[0].fabric=infiniband"],
            "partitions[0].fabric",
        ),
        ("aws-p5", ["partitions[0].zones=[us-east-1a, us-east-1b]"], "partitions[0].zones"),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_the_field(
    fabricless_catalog: Path, stack: str, overrides: list[str], field: str
) -> None:
    cat = load_catalog(fabricless_catalog)
    names = {"non_efa": _fabricless(cat, "aws"), "non_ib": _fabricless(cat, "azure")}
    args = ["-s", stack]
    for item in overrides:
        args += ["--set", item.format(**names)]
    proc = plan_cli(fabricless_catalog, *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert f"gpu-clusters:cluster.{field}" in lines[0]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("stack", "override"),
    [("aws-p5", "partitions[0].fabric=infiniband"), ("aks-h100", "partitions[0].fabric=efa")],
)
def test_the_other_fabric_exits_2(stack: str, override: str) -> None:
    proc = plan_cli(config_dir(), "-s", stack, "--set", override)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if x.strip()]
    assert "gpu-clusters:cluster.partitions[0].fabric" in line


def test_shipped_stacks_have_no_errors() -> None:
    for stack, cloud in (("aws-p5", "aws"), ("aks-h100", "azure")):
        spec, findings = load_stack_spec(stack, [])
        assert (spec.cloud, spec.scheduler) == (cloud, "kubernetes")
        assert [f for f in findings if f.level == "error"] == []


def test_non_efa_gpu_node_group_over_two_zones(fabricless_catalog: Path) -> None:
    cat = load_catalog(fabricless_catalog)
    (line,) = errors_of(
        "aws-p5",
        f"partitions[0].sku={_fabricless(cat, 'aws')}",
        "partitions[0].zones=[us-east-1a, us-east-1b]",
        cat=cat,
    )
    assert line.startswith("gpu-clusters:cluster.partitions[0].zones:")
    assert "one zone" in line


def test_capacity_block_with_spot_is_refused() -> None:
    lines = errors_of(
        "aws-p5",
        "partitions[0].capacityBlock=true",
        "partitions[0].capacityReservationId=cr-0abc1234def567890",
        "partitions[0].spot=true",
    )
    assert any(x.startswith("gpu-clusters:cluster.partitions[0].spot:") for x in lines)


def test_capacity_block_reports_no_placement_group() -> None:
    _, findings = load_stack_spec(
        "aws-p5",
        [
            "partitions[0].capacityBlock=true",
            "partitions[0].capacityReservationId=cr-0123456789abcdef0",
        ],
    )
    (block,) = [f for f in findings if f.field and f.field.endswith("capacityBlock")]
    assert block.level == "info" and "no placement group" in block.message


def test_capacity_block_on_azure_is_refused() -> None:
    lines = errors_of("aks-h100", "partitions[0].capacityBlock=true")
    assert any("partitions[0].capacityBlock" in x for x in lines)


def test_node_count_above_the_reservation() -> None:
    part = SimpleNamespace(
        sku="p5.48xlarge", nodes=4, capacity_reservation_id="cr-1", capacity_reservation_size=2
    )
    spec = SimpleNamespace(cloud="aws", partitions=(part,))
    (finding,) = rk.capacity_reservation_size(spec, catalog())  # type: ignore[arg-type]
    assert finding.level == "error"
    assert finding.field == "gpu-clusters:cluster.partitions[0].nodes"
    unknown = SimpleNamespace(sku="p5.48xlarge", nodes=4, capacity_reservation_id="cr-1")
    (info,) = rk.capacity_reservation_size(  # type: ignore[arg-type]
        SimpleNamespace(cloud="aws", partitions=(unknown,)), catalog()
    )
    assert info.level == "info"


def test_aks_infiniband_registration_is_reported() -> None:
    _, findings = load_stack_spec("aks-h100", [])
    assert any("AKSInfinibandSupport" in f.message for f in findings)


def test_aks_pool_name_too_long() -> None:
    (line,) = errors_of("aks-h100", "partitions[0].name=gpupartition1")
    assert line.startswith("gpu-clusters:cluster.partitions[0].name:")


def test_custom_node_image_is_refused_on_kubernetes() -> None:
    (line,) = errors_of("aws-p5", "partitions[0].image=ami-0123456789abcdef0")
    assert "partitions[0].image" in line


def test_fabricless_multinode_warns(fabricless_catalog: Path) -> None:
    cat = load_catalog(fabricless_catalog)
    _, findings = load_stack_spec("aws-p5", [f"partitions[0].sku={_fabricless(cat, 'aws')}"], cat)
    assert any(f.level == "warning" and "TCP" in f.message for f in findings)
