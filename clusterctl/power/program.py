"""`gpucl-power ACTION HOSTLIST`: Slurm's ResumeProgram, SuspendProgram and ResumeFailProgram,
and `return` (a timer on the scheduler) for the nodes a failed power-up left DOWN.

Exit status (slurmctld logs a non-zero one): 0 every node done, 1 some nodes failed (each set
DOWN with a reason starting with the cluster's prefix, e.g. "gpucl: power: start failed:
AllocationFailed"), 2 usage or configuration error. Every request and outcome is logged.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import slurm
from .backend import PowerBackend
from .names import NodeRef, node_ref

CONFIG = Path("/etc/gpu-clusters/power.json")
LOG = logging.getLogger("gpucl-power")
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
MAX_REASON = 120


@dataclass
class Config:
    cluster: str
    reason_prefix: str = "gpucl:"
    resume_wait_s: float = 900.0
    """How long `resume` watches the started VMs for a platform failure (< ResumeTimeout)."""
    poll_s: float = 15.0
    return_after_s: float = 900.0
    """How long a node a failed power-up set DOWN stays DOWN before `return` gives it back: the
    job it failed is requeued elsewhere first, and a capacity shortage has time to pass."""
    backend: str = "azure"
    azure: dict = field(default_factory=dict)
    """subscriptionId, resourceGroup (default: the scheduler's own, from IMDS), clientId."""
    sandbox: dict = field(default_factory=dict)
    """url: the VM sandbox's power stand-in (backend "sandbox" only)."""
    log_file: str | None = "/var/log/slurm/gpucl-power.log"

    @classmethod
    def load(cls, path: Path) -> Config:
        """power.json, then each power.d/*.json beside it in name order, key by key (an operator's
        or the sandbox's overrides: poll interval, resume wait, backend)."""
        raw = json.loads(path.read_text())
        for extra in sorted(path.with_suffix(".d").glob("*.json")):
            raw.update(json.loads(extra.read_text()))
        return cls(
            cluster=raw["cluster"],
            reason_prefix=raw.get("reasonPrefix", "gpucl:"),
            resume_wait_s=float(raw.get("resumeWaitSeconds", 900)),
            poll_s=float(raw.get("pollSeconds", 15)),
            return_after_s=float(raw.get("returnAfterSeconds", 900)),
            backend=raw.get("backend", "azure"),
            azure=dict(raw.get("azure", {})),
            sandbox=dict(raw.get("sandbox", {})),
            log_file=raw.get("logFile", "/var/log/slurm/gpucl-power.log"),
        )


@dataclass
class PowerProgram:
    config: Config
    backend: PowerBackend
    runner: slurm.Runner = slurm.run
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    now: Callable[[], float] = time.time

    def reason(self, text: str) -> str:
        return f"{self.config.reason_prefix} power: {text}"[:MAX_REASON]

    def refs(self, names: Sequence[str]) -> list[NodeRef]:
        return [node_ref(self.config.cluster, n) for n in names]

    def mark_down(self, failures: dict[str, str]) -> None:
        for name, why in sorted(failures.items()):
            LOG.error("%s: %s; setting it DOWN", name, why)
            try:
                slurm.update([name], "DOWN", self.reason(why), self.runner)
            except RuntimeError as exc:
                LOG.error("%s: could not set DOWN: %s", name, exc)

    def resume(self, names: Sequence[str]) -> int:
        refs = self.refs(names)
        states = self.backend.state(refs)
        todo = [r for r in refs if states.get(r.name) is None or states[r.name].power != "running"]
        for r in refs:
            if r not in todo:
                LOG.info("%s: already running", r.name)
        failures = {n: f"start refused: {e}" for n, e in self.backend.start(todo).items() if e}
        pending = {r for r in todo if r.name not in failures}
        deadline = self.clock() + self.config.resume_wait_s
        while pending and self.clock() < deadline:
            self.sleep(self.config.poll_s)
            for name, st in self.backend.state(sorted(pending)).items():
                ref = next(r for r in pending if r.name == name)
                if st.error:
                    failures[name] = f"start failed: {st.error}"
                    pending.discard(ref)
                elif st.power == "running":
                    LOG.info("%s: running; slurmd registers on its own", name)
                    pending.discard(ref)
        for r in sorted(pending):
            LOG.warning(
                "%s: not running after %.0f s; ResumeTimeout decides",
                r.name,
                self.config.resume_wait_s,
            )
        self.mark_down(failures)
        if failures:
            self._stop_quietly(r for r in refs if r.name in failures)
        return EXIT_FAILED if failures else EXIT_OK

    def suspend(self, names: Sequence[str]) -> int:
        """A node's drain is kept through its suspend (no idle_on_node_suspend). A spot-evicted
        node needs nothing lifted here: it was forced down (POWER_DOWN_FORCE), and Slurm clears
        the drain of a node it powers down on request (power_save.c, "power_down_asap")."""
        failures = {
            n: f"deallocate failed: {e}"
            for n, e in self.backend.stop(self.refs(names)).items()
            if e
        }
        self.mark_down(failures)
        return EXIT_FAILED if failures else EXIT_OK

    def give_back(self, names: Sequence[str]) -> int:
        """`return`: a node this program set DOWN (its VM could not start, or never registered)
        is, once powered down with its VM stopped and DOWN for `return_after_s`, made IDLE again:
        an ordinary powered-down node the next job may start, as Azure/cyclecloud-slurm's
        return_to_idle does. `State=IDLE`, not RESUME: on a powered-down node RESUME and UNDRAIN
        ask it to register, which it cannot. Nodes drained or set DOWN by anyone else, or not
        powered down, are left alone."""
        ours = f"{self.config.reason_prefix} power:"
        todo = []
        for name, (state, why) in sorted(slurm.states(names, self.runner).items()):
            if state == "down~" and why.startswith(ours):
                todo.append(name)
        if not todo:
            return EXIT_OK
        since = slurm.reason_times(todo, self.runner)
        now = self.now()
        held = [n for n in todo if (since.get(n) or 0) > now - self.config.return_after_s]
        for name in held:
            LOG.info("%s: DOWN %.0f s ago by a power failure; returned after %.0f s", name,
                     now - (since[name] or now), self.config.return_after_s)  # fmt: skip
        todo = [n for n in todo if n not in held]
        if not todo:
            return EXIT_OK
        states = self.backend.state(self.refs(todo))
        ready = [n for n in todo if states.get(n) is not None and states[n].power == "stopped"]
        for name in sorted(set(todo) - set(ready)):
            LOG.warning("%s: DOWN by a power failure but its VM is not stopped; left DOWN", name)
        if ready:
            slurm.update(ready, "IDLE", None, self.runner)
            for name in ready:
                LOG.info("%s: returned to the powered-down pool (State=IDLE)", name)
        return EXIT_OK

    def fail(self, names: Sequence[str]) -> int:
        """ResumeFailProgram: slurmctld already set these DOWN after ResumeTimeout and requeued
        their jobs; give them a reason that names the cause and stop their billing."""
        refs = self.refs(names)
        states = self.backend.state(refs)
        failures = {}
        for r in refs:
            st = states.get(r.name)
            if st is not None and st.error:
                failures[r.name] = f"start failed: {st.error}"
            else:
                power = st.power if st else "unknown"
                failures[r.name] = f"not registered within ResumeTimeout (VM {power}); deallocated"
        self.mark_down(failures)
        self._stop_quietly(refs)
        return EXIT_FAILED

    def rebuild(self, action: str, names: Sequence[str]) -> int:
        failed = 0
        for ref in self.refs(names):
            error = getattr(self.backend, action)(ref)
            if error:
                LOG.error("%s: %s refused: %s", ref.name, action, error)
                failed += 1
            else:
                LOG.info("%s: %s accepted", ref.name, action)
        return EXIT_FAILED if failed else EXIT_OK

    def show(self, names: Sequence[str]) -> int:
        for name, st in sorted(self.backend.state(self.refs(names)).items()):
            print(f"{name} {st.power}{' ' + st.error if st.error else ''}")
        return EXIT_OK

    def _stop_quietly(self, refs) -> None:
        errors = self.backend.stop(list(refs))
        for name, error in errors.items():
            if error:
                LOG.error("%s: deallocate after failure refused: %s", name, error)


ACTIONS = ("resume", "suspend", "fail", "return", "reimage", "redeploy", "state")


def make_backend(config: Config) -> PowerBackend:
    if config.backend == "azure":
        from .azure_backend import AzureBackend

        return AzureBackend.from_config(config.azure)
    if config.backend == "sandbox":
        from .sandbox_backend import SandboxBackend

        return SandboxBackend.from_config(config.sandbox)
    raise ValueError(f"unknown backend '{config.backend}' in {CONFIG}")


def main(
    argv: Sequence[str] | None = None,
    backend: PowerBackend | None = None,
    runner: slurm.Runner = slurm.run,
    config: Config | None = None,
) -> int:
    parser = argparse.ArgumentParser(prog="gpucl-power", description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=ACTIONS)
    parser.add_argument("hostlist", help="Slurm hostlist, e.g. gpu-pg0-[1-4], or ALL (every node)")
    parser.add_argument("--config", type=Path, default=CONFIG)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code else EXIT_OK
    try:
        config = config or Config.load(args.config)
    except (OSError, KeyError, ValueError) as exc:
        print(f"gpucl-power: cannot read {args.config}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    _logging(config)
    try:
        names = (
            slurm.all_nodes(runner)
            if args.hostlist == "ALL"
            else slurm.expand(args.hostlist, runner)
        )
        program = PowerProgram(config, backend or make_backend(config), runner)
        program.refs(names)  # refuse names outside the scheme before any call
    except (RuntimeError, ValueError, ImportError) as exc:
        LOG.error("%s %s: %s", args.action, args.hostlist, exc)
        return EXIT_USAGE
    LOG.info("%s %s (%d nodes)", args.action, args.hostlist, len(names))
    if args.action in ("reimage", "redeploy"):
        code = program.rebuild(args.action, names)
    elif args.action == "state":
        code = program.show(names)
    elif args.action == "return":
        code = program.give_back(names)
    else:
        code = getattr(program, args.action)(names)
    LOG.info("%s %s: exit %d", args.action, args.hostlist, code)
    return code


def _logging(config: Config) -> None:
    if LOG.handlers:
        return
    fmt = logging.Formatter("%(asctime)s gpucl-power[%(process)d] %(levelname)s %(message)s")
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if config.log_file:
        with contextlib.suppress(OSError):  # not writable: stderr (slurmctld's log) only
            handlers.append(logging.FileHandler(config.log_file))
    for h in handlers:
        h.setFormatter(fmt)
        LOG.addHandler(h)
    LOG.setLevel(logging.INFO)
