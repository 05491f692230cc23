"""The VM sandbox has no Azure Managed Lustre: a plan with storage.lustre is refused before any
VM boots, naming the field, rather than booting nodes whose Lustre mount can never succeed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clusterctl.sandbox.vm.boot import BootError, cluster_from_plan
from tests.conftest import plan_stack


def _write(plan, where: Path) -> Path:
    (where / "plan.json").write_text(json.dumps(plan.as_json()))
    return where


def test_a_plan_with_managed_lustre_is_refused(tmp_path: Path) -> None:
    plan = plan_stack("azure-h100", "storage.lustre={sizeTib: 16}")
    with pytest.raises(BootError, match=r"^storage\.lustre: .*no stand-in"):
        cluster_from_plan(_write(plan, tmp_path))
