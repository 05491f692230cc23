"""Rendered files checked by the real tools: cloud-init schema and shellcheck."""

from __future__ import annotations

import base64
import gzip
import subprocess

import pytest

from tests.conftest import SLURM_STACKS, need_tool, plan_stack

pytestmark = pytest.mark.integration

# Every shipped Slurm stack (a new stack file is checked without touching this list), plus one
# with accounting on.
STACKS = [*SLURM_STACKS, "azure-h100+accounting", "azure-h100+mig"]
OVERRIDES = {
    "accounting": ["headNode.accounting=true"],
    "mig": ["partitions[0].sharing={mig: {3g.40gb: 1, 2g.20gb: 2}}"],
}


@pytest.fixture(scope="module", params=STACKS)
def bundle(request, tmp_path_factory):
    from clusterctl.plan.program import make_plan, write_plan

    stack, _, variant = request.param.partition("+")
    out = tmp_path_factory.mktemp(request.param.replace("+", "-"))
    plan = make_plan(stack, OVERRIDES.get(variant, [])) if variant else plan_stack(stack)
    write_plan(plan, out)
    return out


def test_every_cloud_init_passes_cloud_init_schema(bundle) -> None:
    tool = need_tool("cloud-init")
    files = sorted((bundle / "cloud-init").glob("*.yaml"))
    assert len(files) >= 2
    for path in files:
        assert path.read_text().startswith("#cloud-config\n")
        result = subprocess.run(
            [tool, "schema", "-c", str(path)], capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, f"{path.name}: {result.stdout}{result.stderr}"
        assert "Valid cloud-config" in result.stdout


def test_every_script_passes_shellcheck(bundle) -> None:
    tool = need_tool("shellcheck")
    scripts = sorted([*(bundle / "scripts").glob("*.sh"), *(bundle / "nodes").glob("*/*.sh")])
    assert {p.name for p in scripts} >= {
        "gpucl-health.sh",
        "gpucl-scratch.sh",
        "gpu-node-setup.sh",
        "gpucl-known-hosts.sh",
    }
    result = subprocess.run(
        [tool, "-s", "bash", *map(str, scripts)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout


def test_cloud_init_stays_under_azure_custom_data_limit(bundle) -> None:
    """Azure caps customData at 64 KiB before base64; it carries the user-data gzipped (the
    scheduler's grew past 64 KiB as text with monitoring), and cloud-init unpacks what it gets."""
    from clusterctl.render.cloud_init import CUSTOM_DATA_LIMIT, azure_custom_data, gzip_user_data

    for path in (bundle / "cloud-init").glob("*.yaml"):
        text = path.read_text()
        assert len(gzip_user_data(text)) < CUSTOM_DATA_LIMIT, path.name
        assert gzip.decompress(base64.b64decode(azure_custom_data(text))).decode() == text
