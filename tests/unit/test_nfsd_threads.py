"""The scheduler's NFS server runs nfsd threads for the cluster's size (4 per GPU or login node,
never below nfs-utils' default 8, at most 256) instead of the default 8 for any cluster: every
mount of every node shared those 8."""

from __future__ import annotations

import pytest
import yaml

from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.spec.load import load_stack_spec


def _threads(stack: str, *overrides: str) -> int:
    spec, _ = load_stack_spec(stack, list(overrides))
    doc = yaml.safe_load(render_cloud_init(spec, stack, munge_key_b64="AAAA"))
    (conf,) = [f["content"] for f in doc["write_files"] if f["path"].startswith("/etc/nfs.conf.d/")]
    lines = conf.split()
    assert lines[0] == "[nfsd]"
    return int(lines[1].removeprefix("threads="))


@pytest.mark.parametrize(
    ("overrides", "threads"),
    [
        (["partitions[0].nodes=1"], 8),
        (["partitions[0].nodes=10"], 40),
        (["partitions[0].nodes=10", "loginNodes.count=2"], 48),
        (["partitions[0].nodes=100"], 256),
    ],
)
def test_nfsd_threads_follow_the_node_count(overrides: list[str], threads: int) -> None:
    assert _threads("azure-h100", *overrides) == threads
