"""The Microsoft apt key travels in the user-data as the published key file,
its fingerprint checked at every render, instead of a keyserver lookup by key id at boot."""

from __future__ import annotations

import subprocess
from types import SimpleNamespace

import pytest
import yaml

from clusterctl.project import config_dir
from clusterctl.render.apt_key import AptKeyError, fingerprint, microsoft_apt_key
from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.render.user_data import MUNGE_PLACEHOLDER
from clusterctl.spec.catalog import catalog
from clusterctl.spec.load import load_stack_spec
from tests.conftest import need_tool

PINNED = "BC528686B50D79E339D3721CEB3E94ADBE1229CF"


@pytest.mark.parametrize("role", ["scheduler", "gpu"])
def test_the_slurm_source_carries_the_pinned_key_and_asks_no_keyserver(role: str) -> None:
    spec, _ = load_stack_spec("azure-h100")
    part = None if role == "scheduler" else spec.partitions[0]
    doc = yaml.safe_load(
        render_cloud_init(spec, "s", munge_key_b64=MUNGE_PLACEHOLDER, partition=part)
    )
    source = doc["apt"]["sources"]["slurm.list"]
    assert "keyid" not in source and "keyserver" not in source and "keyserver" not in doc["apt"]
    assert fingerprint(source["key"]) == PINNED
    assert "$KEY_FILE" in source["source"]


def test_our_fingerprint_is_gpgs() -> None:
    gpg = need_tool("gpg")  # in CI a missing gpg fails, as every other tool does
    path = config_dir() / "keys" / "microsoft.asc"
    out = subprocess.run(
        [gpg, "--show-keys", "--with-colons", str(path)], capture_output=True, text=True, check=True
    ).stdout
    fprs = [ln.split(":")[9] for ln in out.splitlines() if ln.startswith("fpr:")]
    assert fprs[0] == fingerprint(path.read_text()) == PINNED


def test_a_key_file_that_is_not_the_pinned_key_stops_the_render() -> None:
    versions = catalog().versions
    pin = {**versions["nodePackages"]["slurm"]["aptKey"], "fingerprint": "00" * 20}
    fake = SimpleNamespace(versions={"nodePackages": {"slurm": {"aptKey": pin}}})
    with pytest.raises(AptKeyError, match=f"fingerprint {PINNED}, but .* pins 0000"):
        microsoft_apt_key(fake)  # type: ignore[arg-type]
