"""A node's PID 1 may grant its services unlimited locked memory, as a VM's systemd does (it holds
CAP_SYS_RESOURCE; nspawn drops it, so the container's systemd could not raise a service past the
hard limit it inherited from whoever started the sandbox). Without this, slurmd's
LimitMEMLOCK=infinity was silently 8 MiB when the sandbox was started from a shell with that
limit, and every job saw `ulimit -l` 8192 (seen by the soak, issue 23). No root needed."""

from __future__ import annotations

from pathlib import Path

from clusterctl.sandbox.vm import machine


def test_nodes_boot_with_an_unlimited_memlock_hard_limit() -> None:
    spec = machine.MachineSpec("gpu-pg0-000000", "gpu", "", "10.0.0.5", "ns")
    argv = machine.nspawn_argv(spec, Path("/nodes/gpu-pg0-000000/root"), [])
    assert "--rlimit=RLIMIT_MEMLOCK=infinity" in argv
