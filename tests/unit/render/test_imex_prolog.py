"""The GB200 prolog finds a node's NVLink domain (its topology/block block) with every Slurm the
sandbox and the cloud run: 24.11 (trixie), 25.11 (slurm-smd on Azure) and 26.05 (sid). Since 25.05
`scontrol show topology X` reads X as a topology name (scontrol.1; src/scontrol/info_node.c
scontrol_print_topo): asked that way, a 25.11 node found no block and gave IMEX itself alone.

The rendered prolog runs under bash against a stand-in `scontrol` that answers as each release's
source does (24.11 topology_block.c topology_p_topology_print; 25.11 scontrol_print_topo and
topology_p_topoinfo_print)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from clusterctl.render.paths import IMEX_DIR
from tests.conftest import node_script

NODES = 36  # two NVL72 blocks of 18
ADDRESSES = {f"gpu-pg0-{n}": f"10.40.{n // 200}.{n % 200 + 10}" for n in range(1, 1009)}

SCONTROL = r'''#!PYTHON
"""scontrol as SLURM_RELEASE answers `show topology`, `show hostnames`, `show node -o`."""
import os, re, sys

RACKS = int(os.environ.get("RACKS", "2"))
BLOCKS = [(f"gpu-pg0-nvl{b}", f"gpu-pg0-[{18 * b + 1}-{18 * b + 18}]") for b in range(RACKS)]
ADDR = {f"gpu-pg0-{n}": f"10.40.{n // 200}.{n % 200 + 10}" for n in range(1, 18 * RACKS + 1)}
release = os.environ["SLURM_RELEASE"]
with open(os.environ["SCONTROL_CALLS"], "a") as calls:
    calls.write(" ".join(sys.argv[1:]) + "\n")


def expand(hostlist):
    out = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", hostlist):
        m = re.fullmatch(r"(.*)\[(.*)\]", part)
        if not m:
            out.append(part)
            continue
        for rng in m.group(2).split(","):
            lo, _, hi = rng.partition("-")
            out += [f"{m.group(1)}{i}" for i in range(int(lo), int(hi or lo) + 1)]
    return out


def record(name, nodes):
    return f"BlockName={name} BlockIndex=0 Nodes={nodes} BlockSize=18"


args = sys.argv[1:]
if args == ["--version"]:
    print(f"slurm {release}.5")
elif args[:2] == ["show", "hostnames"]:
    print("\n".join(expand(args[2])))
elif args[:3] == ["show", "node", "-o"]:
    for n in expand(args[3]):
        print(f"NodeName={n} Arch=aarch64 NodeAddr={ADDR[n]} NodeHostName={n} State=IDLE")
elif args[:2] == ["show", "topology"]:
    rest = args[2:]
    name = unit = nodes = None
    if release == "24.11":  # one optional node list or block name, nothing else
        nodes = rest[0] if rest else None
        for b, members in BLOCKS:
            if nodes == b:
                print(record(b, members))
                sys.exit(0)
    else:  # 25.05+: [topology_name] [unit=NAME] [node=NAME]
        for i, a in enumerate(rest):
            tag, eq, val = a.partition("=")
            if not eq:
                name = a
            elif tag.lower().startswith("node"):
                nodes = val
            else:
                unit = val
        if name is not None and name != "default":
            print("slurm_load_topo error: Invalid topology name", file=sys.stderr)
            sys.exit(1)
    hits = [(b, m) for b, m in BLOCKS
            if (nodes is None or set(expand(nodes)) <= set(expand(m))) and unit in (None, b)]
    if not hits:
        print(f"error: Topology information contains no block with nodes {nodes}",
              file=sys.stderr)
    for b, m in hits:
        print(record(b, m))
elif args[:1] == ["update"]:
    with open(os.environ["SCONTROL_LOG"], "a") as f:
        f.write(" ".join(args) + "\n")
else:
    sys.exit(f"scontrol stand-in: {args} not understood")
'''


def _prolog(tmp_path: Path) -> Path:
    text = node_script("azure-gb200", "prolog.sh", f"partitions[0].nodes={NODES}")
    imex = tmp_path / "imex"
    imex.mkdir()
    (imex / "config.cfg").write_text("SERVER_PORT=12345\n")
    script = tmp_path / "prolog.sh"
    script.write_text(text.replace(IMEX_DIR, str(imex)))
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    stand_ins = {
        "scontrol": SCONTROL.replace("#!PYTHON", f"#!{sys.executable}"),
        "systemctl": '#!/bin/sh\necho "$*" >> "$SYSTEMCTL_LOG"\n',
        "nvidia-smi": '#!/bin/sh\nfor i in 0 1 2 3; do echo "GPU $i: NVIDIA GB200"; done\n',
    }
    for name, body in stand_ins.items():
        (bin_ / name).write_text(body)
        (bin_ / name).chmod(0o755)
    return script


def _run(tmp_path: Path, script: Path, release: str, me: str, nodelist: str, racks: int) -> None:
    env = {
        "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin",
        "SLURM_RELEASE": release,
        "RACKS": str(racks),
        "SLURMD_NODENAME": me,
        "SLURM_JOB_ID": "5234",
        "SLURM_JOB_NODELIST": nodelist,
        "SCONTROL_LOG": str(tmp_path / "scontrol.log"),
        "SCONTROL_CALLS": str(tmp_path / "calls.log"),
        "SYSTEMCTL_LOG": str(tmp_path / "systemctl.log"),
    }
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("release", ["24.11", "25.11", "26.05"])
def test_imex_peers_are_the_jobs_nodes_in_this_nodes_nvl72_block(tmp_path, release) -> None:
    script = _prolog(tmp_path)
    _run(tmp_path, script, release, "gpu-pg0-2", "gpu-pg0-[1-2],gpu-pg0-19", racks=2)
    peers = (tmp_path / "imex" / "nodes_config.cfg").read_text().split()
    # gpu-pg0-19 is in the job but in the other NVL72 block
    assert peers == [ADDRESSES["gpu-pg0-1"], ADDRESSES["gpu-pg0-2"]]
    # one static port whatever the job (Azure/cyclecloud-slurm imex_prolog.sh went back to it
    # after per-job ports conflicted), not SLURM_JOB_ID % 16384 + 33792
    assert (tmp_path / "imex" / "config.cfg").read_text() == "SERVER_PORT=50000\n"
    assert (tmp_path / "systemctl.log").read_text() == "restart nvidia-imex.service\n"
    assert not (tmp_path / "scontrol.log").exists(), "the prolog drained the node"


@pytest.mark.parametrize("release", ["24.11", "25.11", "26.05"])
def test_the_prolog_asks_slurm_a_fixed_number_of_times_however_many_racks(
    tmp_path, release
) -> None:
    """56 NVL72 racks (1,008 nodes), this node in the last: the prolog of every node of a job
    asks slurmctld for this node's block and the job's addresses once each, and expands each
    hostlist once, never once per block or per node."""
    script = _prolog(tmp_path)  # the topology is the stand-in's
    _run(tmp_path, script, release, "gpu-pg0-1000", "gpu-pg0-[991-1008],gpu-pg0-1", racks=56)
    peers = (tmp_path / "imex" / "nodes_config.cfg").read_text().split()
    assert peers == [ADDRESSES[f"gpu-pg0-{n}"] for n in range(991, 1009)]
    calls = (tmp_path / "calls.log").read_text().splitlines()
    asked = [c for c in calls if c.startswith(("show topology", "show node"))]
    assert len(asked) == 2, calls
    assert len(calls) <= 5, calls
