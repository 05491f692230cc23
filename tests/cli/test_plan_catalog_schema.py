"""`clusterctl plan --json` is stable, `catalog` refuses unknown clouds, `schema` writes nowhere
it was not told to."""

from __future__ import annotations

import json
import random

from clusterctl.cli.plan import IMAGE_GB
from clusterctl.plan.mockengine import RecordedResource, in_tree_order
from clusterctl.render.paths import ENROOT_CACHE, ENROOT_CACHE_GIB
from clusterctl.spec.catalog import catalog
from tests.cli.conftest import error_lines, run_cli


def test_plan_json_is_byte_identical_across_runs() -> None:
    # Different hash seeds and a fresh event loop each time: what varied before (registration
    # order of resources, key order of their inputs) must not show in the output.
    runs = [run_cli("plan", "-s", "aks-h100", "--json", PYTHONHASHSEED=s) for s in ("1", "2")]
    for run in runs:
        assert run.returncode == 0, run.stderr
    assert runs[0].stdout == runs[1].stdout
    names = [r["name"] for r in json.loads(runs[0].stdout)["resources"]]
    assert len(names) > 10


def _res(name: str, parent: str | None) -> RecordedResource:
    return RecordedResource(
        type="t:m:T", name=name, parent=parent, custom=True, inputs={},
        urn=f"urn:{name}", parent_urn=f"urn:{parent}" if parent else "urn:stack",
    )  # fmt: skip


def test_tree_order_parents_first_siblings_by_name() -> None:
    tree = [_res("c", None), _res("a", None), _res("a-2", "a"), _res("a-1", "a"), _res("b", None)]
    want = ["a", "a-1", "a-2", "b", "c"]
    for seed in range(5):
        shuffled = tree[:]
        random.Random(seed).shuffle(shuffled)
        assert [r.name for r in in_tree_order(shuffled)] == want


def test_catalog_unknown_cloud_is_one_line_exit_2(cli) -> None:
    res = cli("catalog", "--cloud", "gcp")
    assert res.exit_code == 2
    lines = error_lines(res.stderr)
    assert len(lines) == 1 and "--cloud gcp" in lines[0] and "azure, aws" in lines[0], lines
    assert res.stdout == ""
    assert cli("catalog", "--cloud", "aws", "--json").exit_code == 0


def test_schema_goes_to_stdout_and_writes_only_where_told(tmp_path) -> None:
    run = run_cli("schema", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "gpu-clusters:cluster" in json.loads(run.stdout)["properties"]["config"]["properties"]
    assert list(tmp_path.iterdir()) == []  # nothing in ./config/ or anywhere else

    run = run_cli("schema", "--out", "my.schema.json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "" and "wrote my.schema.json" in run.stderr
    assert json.loads((tmp_path / "my.schema.json").read_text()) == json.loads(
        run_cli("schema", cwd=tmp_path).stdout
    )


def test_plan_shows_the_power_roles_actions_and_scopes(cli) -> None:
    """What the scheduler's identity may do, and where, is visible before `up`."""
    result = cli("plan", "-s", "azure-h100", "--set", "partitions[0].nodes=150")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "role gpu-clusters power h100 (azure-h100) " in text and "(custom) may:" in text
    assert "  Microsoft.Compute/virtualMachineScaleSets/virtualMachines/reimage/action" in text
    assert "assigned on 2 scope(s):" in text
    assert text.count("/providers/Microsoft.Compute/virtualMachineScaleSets/h100-gpu-pg") == 2
    assert "Reader" not in text
    # head node, NAT and its IP, the data disk's backups
    assert "idle, with Slurm power saving: $0.50 per hour" in text


def test_plan_prices_an_image_pull_and_says_a_resume_pulls_nothing(cli) -> None:
    """The layer cache's trade-off in one line: a node's first pull through the NAT gateway at
    its catalog price per GB, none after a resume (the cache is on the OS disk)."""
    result = cli("plan", "-s", "azure-h100")
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    line = text[text.index("container images:") :]
    per_gb = catalog().services["azure"]["natGateway"].usd_per_gb_processed
    assert per_gb is not None
    assert f"${IMAGE_GB * per_gb:,.2f} through the NAT gateway" in line
    assert f"({ENROOT_CACHE}, kept to {ENROOT_CACHE_GIB} GiB)" in line
    assert "resumed from power saving downloads nothing" in line


def test_plan_leaves_no_event_loop_open_for_interpreter_exit() -> None:
    # An unclosed loop is closed by its finaliser at interpreter exit, sometimes after its
    # self-pipe socket is gone: a 'ValueError: Invalid file descriptor: -1' traceback on the
    # stderr of a plan that succeeded (it failed a CI run). Dev mode names every such loop.
    run = run_cli(
        "plan", "-s", "azure-h100", PYTHONDEVMODE="1", PYTHONWARNINGS="always::ResourceWarning"
    )
    assert run.returncode == 0, run.stderr
    assert "unclosed event loop" not in run.stderr
    assert "Traceback" not in run.stderr


def test_plan_says_the_largest_job_each_partition_can_run(cli) -> None:
    """A job spans one scale set (one InfiniBand fabric); slurm.conf's MaxNodes refuses more."""
    result = cli("plan", "-s", "azure-h100", "--set", "partitions[0].nodes=250")
    assert result.exit_code == 0, result.output
    assert (
        "partition gpu: the largest job is 100 node(s), one of its 3 scale set(s) (one InfiniBand "
        "fabric each); a larger one is refused at submission" in result.stdout
    )
