"""The config sync never reconfigures slurmctld while a node is powering down: with a changed node
set, Slurm 24.11 left such a node POWERING_DOWN for good (seen in the VM sandbox). It waits for
`%` nodes (at most SuspendTimeout and a minute), and one still powering down after the
reconfigure is marked powered down, a drained one drained again with its reason."""

from __future__ import annotations

import subprocess
from pathlib import Path

from clusterctl.render.slurm_conf import render_config_sync
from clusterctl.spec.load import load_stack_spec


def run_sync(tmp_path: Path, states: list[str]) -> tuple[subprocess.CompletedProcess, list[str]]:
    """`states`: gpu-pg0-1's compact sinfo state at each look (the last one repeats)."""
    spec, _ = load_stack_spec("azure-h100", ["partitions[0].nodes=2"])
    script = (
        render_config_sync(spec, "azure-h100")
        .replace("/etc/slurm/", f"{tmp_path}/etc/")
        .replace("/etc/nfs.conf.d/", f"{tmp_path}/etc/")
    )
    log, bins = tmp_path / "events", tmp_path / "bin"
    bins.mkdir()
    (tmp_path / "states").write_text("\n".join(states) + "\n")
    two = "gpu-pg0-1\\ngpu-pg0-2\\n"
    looks = '*"%N|%t|%E"* | *"%N %t"*'
    stubs = {
        "cloud-init": "exit 0",
        "systemctl": "exit 0",
        "sleep": f'echo "sleep $*" >> {log}',
        "install": 'mkdir -p "$(dirname "${@: -1}")" && cp "${@: -2:1}" "${@: -1}"',
        # each look at the states takes the next line of the states file
        "sinfo": f'case "$*" in {looks}) ;; *) printf "{two}"; exit 0;; esac\n'
        f'st={tmp_path}/states; s=$(head -n1 "$st")\n'
        '[ "$(wc -l < "$st")" -gt 1 ] && sed -i 1d "$st"\n'
        'case "$*" in *"%N|%t|%E"*)\n'
        '  printf "gpu-pg0-1|%s|admin: bad fan\\ngpu-pg0-2|idle~|none\\n" "$s";;\n'
        '*) printf "gpu-pg0-1 %s\\ngpu-pg0-2 idle~\\n" "$s";; esac',
        "squeue": "exit 0",
        "scontrol": f'case "$1 $2" in "show hostnames") printf "{two}"; exit 0;;\n'
        '"show config") echo "SuspendTimeout          = 10 sec"; exit 0;; esac\n'
        f'echo "scontrol $*" >> {log}',
    }
    for name, body in stubs.items():
        (bins / name).write_text(f"#!/bin/bash\n{body}\n")
        (bins / name).chmod(0o755)
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                          env={"PATH": f"{bins}:/usr/bin:/bin"})  # fmt: skip
    return proc, log.read_text().splitlines() if log.exists() else []


def test_the_reconfigure_waits_until_no_node_is_powering_down(tmp_path) -> None:
    proc, events = run_sync(tmp_path, ["idle%", "idle%", "idle%", "idle%", "idle~"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first = events.index("scontrol reconfigure")
    assert events[:first] == ["sleep 2"] * 4, events  # four looks saw idle%, the fifth idle~
    assert "waiting for gpu-pg0-1 to finish powering down (0s of 70s)" in proc.stdout
    assert not any("State=RESUME" in e for e in events)


def test_a_node_stuck_powering_down_after_the_reconfigure_is_powered_down_keeping_its_drain(
    tmp_path,
) -> None:
    proc, events = run_sync(tmp_path, ["idle~", "drain%"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = events[events.index("scontrol reconfigure") + 1 :]
    assert after == ["sleep 2"] * 35 + [
        "scontrol update NodeName=gpu-pg0-1 State=RESUME",
        "scontrol update NodeName=gpu-pg0-1 State=DRAIN Reason=admin: bad fan",
    ], after
    assert "gpu-pg0-1 drained again: admin: bad fan" in proc.stdout
