"""Issue 30 items 1-2: `validate --from-log` on ND logs of older nccl-tests builds, and runs that
stop short of the baseline's message size."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.validate.conftest import DATA

H100 = ("--sku", "Standard_ND96isr_H100_v5")
GIB = 1 << 30


def test_pci_bus_only_ids_on_azure_nd_are_eight_gpus_not_one(cli, tmp_path: Path) -> None:
    # Older nccl-tests print the PCI bus number only; on ND VMs every GPU is [0x00], each in its
    # own PCI domain, and the device index tells them apart.
    text = (DATA / "nccl_tests_issue309_h100_2node.txt").read_text()
    text, n = re.subn(r"\[0000:[0-9a-f]{2}:00\]", "[0x00]", text)
    assert n == 16
    log = tmp_path / "nd_bus_only.txt"
    log.write_text(text)
    res = cli("--nccl", "--from-log", str(log), *H100, "--nodes", "2", "--json")
    data = json.loads(res.stdout)
    messages = [f["message"] for f in data["groups"][0]["findings"]]
    assert not any("share one GPU" in m for m in messages), messages
    assert res.exit_code == 0 and data["status"] == "pass"


def test_bus_only_ids_still_catch_two_ranks_on_one_device(cli, tmp_path: Path) -> None:
    text = (DATA / "nccl_tests_issue309_h100_2node.txt").read_text()
    text = re.sub(r"\[0000:[0-9a-f]{2}:00\]", "[0x00]", text)
    text = text.replace("on bm-h100-01 device  1 [0x00]", "on bm-h100-01 device  0 [0x00]")
    log = tmp_path / "two_on_one.txt"
    log.write_text(text)
    res = cli("--nccl", "--from-log", str(log), *H100, "--nodes", "2", "--json")
    data = json.loads(res.stdout)
    messages = [f["message"] for f in data["groups"][0]["findings"]]
    assert any("ranks 0, 1 share one GPU on bm-h100-01" in m for m in messages), messages
    assert res.exit_code == 1
