"""A new cloud is its own module, its components and its catalog rows: a stub `gcp` (stub_gcp.py,
stub_gke.py beside this file) is registered from here, its SKUs and regions go into a copy of the
catalog, and `clusterctl plan` of a gcp stack runs the stub's component, with no file of the
product edited."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

HERE = Path(__file__).parent
ROOT = HERE.parents[2]

GPU_SKU = {
    "name": "a3-highgpu-8g",
    "cloud": "gcp",
    "family": "A3",
    "gpus": 8,
    "gpuModel": "H100",
    "gpuMemoryGiB": 80,
    "vcpus": 208,
    "memoryGiB": 1872,
    "fabric": {"kind": "none", "source": "stub"},
    "node": {
        "cpuArch": "x86_64",
        "sockets": 2,
        "nvlinkDomainGpus": 8,
        "fabricManager": True,
        "imex": False,
        "imageFamily": "cos",
        "source": "stub",
    },
    "price": {"usdPerHour": 88.0, "region": "us-central1", "asOf": "2026-01-01", "source": "stub"},
}
SYSTEM_SKU = {
    "name": "n2-standard-8",
    "cloud": "gcp",
    "family": "N2",
    "gpus": 0,
    "vcpus": 8,
    "memoryGiB": 32,
    "fabric": {"kind": "none", "source": "stub"},
    "price": {"usdPerHour": 0.39, "region": "us-central1", "asOf": "2026-01-01", "source": "stub"},
}
STACK = {
    "config": {
        "gcp:region": "us-central1",
        "gpu-clusters:cluster": {
            "name": "gke-a3",
            "cloud": "gcp",
            "region": "us-central1",
            "scheduler": "kubernetes",
            "ssh": {"allowedCidrs": ["203.0.113.0/24"]},
            "partitions": [{"name": "gpu", "sku": "a3-highgpu-8g", "nodes": 2}],
        },
    }
}
DRIVER = textwrap.dedent(
    """
    import os
    import sys
    import clusterctl.clouds
    import stub_gcp

    if os.environ.get("REGISTER_STUB") == "1":
        clusterctl.clouds.register(stub_gcp.CLOUD)  # before clusterctl.spec lists the clouds
    from clusterctl.cli import main

    sys.argv = ["clusterctl", *sys.argv[1:]]
    main()
    """
)


def _catalog_with_gcp(tmp: Path) -> Path:
    config = tmp / "config"
    if config.is_dir():
        return config
    shutil.copytree(ROOT / "config", config)
    skus = yaml.safe_load((config / "skus.yaml").read_text())
    skus["skus"] += [GPU_SKU, SYSTEM_SKU]
    (config / "skus.yaml").write_text(yaml.safe_dump(skus))
    regions = yaml.safe_load((config / "regions.yaml").read_text())
    regions["gcp"] = {"regions": ["us-central1"], "source": "stub"}
    (config / "regions.yaml").write_text(yaml.safe_dump(regions))
    images = yaml.safe_load((config / "images.yaml").read_text())
    images["gcp"] = {"gpuNodes": {"family": "cos", "arch": "x86_64", "source": "stub"}}
    (config / "images.yaml").write_text(yaml.safe_dump(images))
    return config


def _clusterctl(
    tmp: Path,
    *argv: str,
    register: bool = True,
    scheduler: str = "kubernetes",
    region_key: bool = True,
) -> subprocess.CompletedProcess[str]:
    project = tmp / "project"
    (project / "stacks").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "Pulumi.yaml", project)
    stack = copy.deepcopy(STACK)
    stack["config"]["gpu-clusters:cluster"]["scheduler"] = scheduler
    if not region_key:
        del stack["config"]["gcp:region"]
    (project / "stacks" / "Pulumi.gcp-a3.yaml").write_text(yaml.safe_dump(stack))
    env = {
        **os.environ,
        "REGISTER_STUB": "1" if register else "0",
        "GPU_CLUSTERS_CONFIG_DIR": str(_catalog_with_gcp(tmp)),
        "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT)]),
    }
    return subprocess.run(
        [sys.executable, "-c", DRIVER, *argv],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_stub_cloud_plans_as_far_as_its_own_component(tmp_path: Path) -> None:
    done = _clusterctl(tmp_path, "plan", "-s", "gcp-a3", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    plan = json.loads(done.stdout)
    types = {r["type"] for r in plan["resources"]}
    assert "gcp:container/cluster:Cluster" in types, types
    cluster = next(r for r in plan["resources"] if r["type"] == "gcp:container/cluster:Cluster")
    assert cluster["inputs"]["project"] == "stub-project"  # the stub's own mock invoke answered
    assert plan["outputs"]["cloud"] == "gcp"


def test_the_stub_clouds_answers_reach_the_rendered_files(tmp_path: Path) -> None:
    done = _clusterctl(tmp_path, "plan", "-s", "gcp-a3", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stdout + done.stderr
    job = (tmp_path / "out" / "k8s" / "validation" / "nccl-tests-mpijob.yaml").read_text()
    assert "us-docker.pkg.dev/stub/nccl-tests:1" in job  # stub_gcp nccl_tests_image
    assert "gcp:container/cluster:Cluster" in done.stdout


def test_an_unregistered_cloud_and_its_provider_keys_are_refused_by_name(tmp_path: Path) -> None:
    done = _clusterctl(tmp_path, "plan", "-s", "gcp-a3", register=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "unknown config key 'gcp:region'" in done.stderr, done.stderr
    done = _clusterctl(tmp_path, "plan", "-s", "gcp-a3", register=False, region_key=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "gpu-clusters:cluster.cloud: 'gcp' is not one of azure, aws" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_registered_cloud_needs_its_own_region_key(tmp_path: Path) -> None:
    done = _clusterctl(tmp_path, "plan", "-s", "gcp-a3", region_key=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "gcp:region: is not set" in done.stderr, done.stderr


def test_a_scheduler_the_stub_builds_no_component_for_is_refused(tmp_path: Path) -> None:
    done = _clusterctl(tmp_path, "plan", "-s", "gcp-a3", scheduler="slurm")
    assert done.returncode == 2, done.stdout + done.stderr
    assert (
        "clusters are not supported on GCP Slurm yet: use scheduler: kubernetes" in done.stderr
    ), done.stderr
