"""The EKS GPU node reserves the 2 MiB huge pages its EFA worker requests, before nodeadm starts
kubelet: else the worker pends while the autoscaler (told the node has them) keeps adding nodes."""

from __future__ import annotations

import base64
import email
import shutil
import subprocess

import pytest

from clusterctl.spec.catalog import catalog
from clusterctl.spec.kubernetes import worker_resources
from tests.conftest import plan_stack, resources

LT = "aws:ec2/launchTemplate:LaunchTemplate"


def _parts(plan) -> list[tuple[str, str]]:
    (template,) = [r for r in resources(plan, LT) if "instanceType" in r.inputs]
    message = email.message_from_bytes(base64.b64decode(template.inputs["userData"]))
    return [(p.get_content_type(), p.get_payload()) for p in message.get_payload()]


def test_an_efa_node_reserves_the_workers_huge_pages_before_nodeadm() -> None:
    """Old code: the user data was only nodeadm's RAID0 NodeConfig."""
    parts = _parts(plan_stack("aws-p5"))
    kinds = [kind for kind, _ in parts]
    assert kinds == ["text/x-shellscript", "application/node.eks.aws"]
    script = parts[0][1]
    pages = int(script.split("want=", 1)[1].split()[0])
    asked = worker_resources(catalog().require("p5.48xlarge"), "efa")["hugepages-2Mi"]
    assert f"{pages * 2}Mi" == asked
    assert "/etc/sysctl.d/" in script and "sysctl -q -w vm.nr_hugepages" in script


def test_a_node_without_efa_gets_no_huge_pages_script() -> None:
    parts = _parts(plan_stack("aws-p5", "partitions[0].fabric=none"))
    assert [kind for kind, _ in parts] == ["application/node.eks.aws"]


@pytest.mark.skipif(not shutil.which("shellcheck"), reason="needs shellcheck")
def test_the_huge_pages_script_passes_shellcheck(tmp_path) -> None:
    script = tmp_path / "hugepages.sh"
    script.write_text(_parts(plan_stack("aws-p5"))[0][1])
    proc = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
