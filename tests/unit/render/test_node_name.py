"""node-name.sh: a GPU node takes its Slurm name from the scheduler's name map,
not from its instance id (never reused: after 4 -> 2 -> 4 nodes the ids are 0, 1, 4, 5). The
rendered script runs under bash with a fake IMDS (a file:// URL curl reads)."""

from __future__ import annotations

import json
import os
import subprocess
import time

from clusterctl.render.scripts import node_scripts
from clusterctl.render.site import cloud_site
from clusterctl.spec.catalog import catalog
from clusterctl.spec.load import load_stack_spec

IMDS = "http://169.254.169.254/metadata/instance/compute?api-version=2021-02-01"
"""The fake IMDS: curl reads a file:// URL (the Metadata header is ignored there)."""


def setup(tmp_path, vm: str, names: dict | None):
    spec, _ = load_stack_spec("azure-h100")
    sku = catalog().get(spec.partitions[0].sku)
    script = tmp_path / "node-name.sh"
    sched = tmp_path / "sched"
    text = node_scripts(spec, cloud_site(spec), sku)["node-name.sh"]
    text = text.replace(IMDS, f"file://{tmp_path}/meta.json").replace(
        f"/sched/{spec.name}", str(sched)
    )
    script.write_text(text)
    (tmp_path / "meta.json").write_text(json.dumps({"name": f"{spec.name}-gpu-pg0_{vm}"}))
    (sched / "name-requests").mkdir(parents=True)
    if names is not None:
        (sched / "names.json").write_text(json.dumps({"names": {f"{spec.name}-gpu-pg0": names}}))
    env = {
        **os.environ,
        "GPUCL_NAME_POLL": "1",
    }
    return script, sched, env, f"{spec.name}-gpu-pg0"


def test_a_node_finds_its_name_in_the_map(tmp_path) -> None:
    script, sched, env, _ = setup(tmp_path, "4", {"0": "gpu-pg0-1", "4": "gpu-pg0-3"})
    proc = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "gpu-pg0-3"  # the old rule gave gpu-pg0-5
    assert list((sched / "name-requests").iterdir()) == []


def test_a_node_not_in_the_map_asks_and_waits_for_the_scheduler(tmp_path) -> None:
    script, sched, env, scale_set = setup(tmp_path, "5", {"0": "gpu-pg0-1"})
    proc = subprocess.Popen(["bash", str(script)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    request = sched / "name-requests" / f"{scale_set}_5"
    deadline = time.monotonic() + 20
    while not request.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert request.exists(), "no request left for the scheduler"
    # the scheduler's reconciler answers
    (sched / "names.json").write_text(
        json.dumps({"names": {scale_set: {"0": "gpu-pg0-1", "5": "gpu-pg0-2"}}})
    )
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert out.strip() == "gpu-pg0-2"
    assert "asking the scheduler for its Slurm name" in err
    assert not request.exists()


def test_a_node_without_a_name_gives_up_after_the_bound(tmp_path) -> None:
    script, sched, env, _ = setup(tmp_path, "6", None)
    env["GPUCL_NAME_WAIT"] = "2"
    proc = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True,
                          timeout=30)  # fmt: skip
    assert proc.returncode == 1 and proc.stdout == ""
    assert "got no Slurm name from the scheduler within 2s" in proc.stderr
    assert list((sched / "name-requests").iterdir()) == []


def test_a_node_without_a_name_keeps_asking_past_ten_minutes(tmp_path) -> None:
    """A growth names its VMs only once every new VM has provisioned and the config sync has
    their names (tens of minutes): a node asks until it is named. `sleep` is a stand-in that
    returns at once and, 25 polls of 30 s in (12.5 minutes), has the scheduler answer."""
    script, sched, env, scale_set = setup(tmp_path, "7", {"0": "gpu-pg0-1"})
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    answer = json.dumps({"names": {scale_set: {"0": "gpu-pg0-1", "7": "gpu-pg0-2"}}})
    (bin_dir / "sleep").write_text(
        "#!/bin/bash\n"
        f"n=$(( $(cat {tmp_path}/slept 2>/dev/null || echo 0) + 1 )); echo $n > {tmp_path}/slept\n"
        f"[ $n -eq 25 ] && echo '{answer}' > {sched}/names.json\n"
        "exit 0\n"
    )
    (bin_dir / "sleep").chmod(0o755)
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    env["GPUCL_NAME_POLL"] = "30"
    proc = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-500:]
    assert proc.stdout.strip() == "gpu-pg0-2"
    assert int((tmp_path / "slept").read_text()) == 25
