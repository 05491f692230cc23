"""`gpucl-power ACTION HOSTLIST`: Slurm's ResumeProgram, SuspendProgram and ResumeFailProgram,
`return` (a timer on the scheduler) for the nodes a failed power-up left DOWN, and `names`, which
keeps the map from Slurm names to VMs (names.py; a path unit and a timer on the scheduler).

Exit status (slurmctld logs a non-zero one): 0 every node done, 1 some nodes failed (each set
DOWN with a reason starting with the cluster's prefix, e.g. "gpucl: power: start failed:
AllocationFailed"), 2 usage or configuration error. Every request and outcome is logged.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import importlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import down_billing as leak
from . import names as naming
from . import slurm
from .backend import THROTTLED, PowerBackend
from .names import NodeRef, node_ref

CONFIG = Path("/etc/gpu-clusters/power.json")
LOG = logging.getLogger("gpucl-power")
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
MAX_REASON = 120


@dataclass
class Config:
    cluster: str
    reason_prefix: str = naming.DRAIN_PREFIX
    resume_wait_s: float = 900.0
    """How long `resume` watches the started VMs for a platform failure (< ResumeTimeout)."""
    poll_s: float = 15.0
    resume_deadline_s: float = 1740.0
    """Every call and retry of a resume or fail run ends within this (< ResumeTimeout, which
    kills the program: power.json has ResumeTimeout less a minute)."""
    suspend_deadline_s: float = 540.0
    """The same for suspend, return and delete (< SuspendTimeout)."""
    return_after_s: float = 900.0
    """How long a node a failed power-up set DOWN stays DOWN before `return` gives it back: the
    job it failed is requeued elsewhere first, and a capacity shortage has time to pass."""
    backend: str = "azure"
    """"azure", or NAME for a module NAME_backend.py placed beside this package (make_backend)."""
    settings: dict[str, Any] = field(default_factory=dict)
    """The chosen backend's own block, power.json's key of the same name. Azure's:
    subscriptionId, resourceGroup (default: the scheduler's own, from IMDS), clientId."""
    log_file: str | None = "/var/log/slurm/gpucl-power.log"
    names_root: str = str(naming.SCHED)
    """Where <cluster>/names.json and <cluster>/name-requests live (the scheduler's /sched)."""
    names_grace_s: float = naming.NAME_GRACE_S
    down_billing_record: bool = False
    """`return` writes <names_root>/<cluster>/down-billing.json (down_billing.py): the DOWN nodes
    whose VM bills, for `clusterctl status`."""
    textfile: str | None = None
    """node_exporter's textfile `return` writes the same nodes to, for Prometheus; None: none."""
    prices: dict[str, float] = field(default_factory=dict)
    """Scale set -> its VM size's on-demand USD per hour (a set without a price: unknown)."""

    @property
    def names_file(self) -> Path:
        return naming.names_file(self.cluster, Path(self.names_root))

    @classmethod
    def load(cls, path: Path) -> Config:
        """power.json, then each power.d/*.json beside it in name order, key by key (an operator's
        or the sandbox's overrides: poll interval, resume wait, backend)."""
        raw = json.loads(path.read_text())
        for extra in sorted(path.with_suffix(".d").glob("*.json")):
            raw.update(json.loads(extra.read_text()))
        return cls(
            cluster=raw["cluster"],
            reason_prefix=raw.get("reasonPrefix", naming.DRAIN_PREFIX),
            resume_wait_s=float(raw.get("resumeWaitSeconds", 900)),
            poll_s=float(raw.get("pollSeconds", 15)),
            resume_deadline_s=float(raw.get("resumeDeadlineSeconds", 1740)),
            suspend_deadline_s=float(raw.get("suspendDeadlineSeconds", 540)),
            return_after_s=float(raw.get("returnAfterSeconds", 900)),
            backend=(backend := str(raw.get("backend", "azure"))),
            settings=dict(raw.get(backend, {})),
            log_file=raw.get("logFile", "/var/log/slurm/gpucl-power.log"),
            names_root=raw.get("namesRoot", str(naming.SCHED)),
            names_grace_s=float(raw.get("nameGraceSeconds", naming.NAME_GRACE_S)),
            down_billing_record=bool(raw.get("downBillingRecord", False)),
            textfile=raw.get("textfile"),
            prices={k: float(v) for k, v in (raw.get("pricesUsdPerHour") or {}).items()},
        )


@dataclass
class PowerProgram:
    config: Config
    backend: PowerBackend
    runner: slurm.Runner = slurm.run
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    now: Callable[[], float] = time.time
    _names: dict[str, Any] | None = field(default=None, init=False)
    _names_read: bool = field(default=False, init=False)

    def reason(self, text: str) -> str:
        return f"{self.config.reason_prefix} power: {text}"[:MAX_REASON]

    @property
    def name_map(self) -> dict[str, Any] | None:
        """The map's names section, read once per call (None: no map, the old rule)."""
        if not self._names_read:
            self._names = naming.load_names(self.config.names_file)
            self._names_read = True
        return self._names

    def resolve(self, names: Sequence[str]) -> tuple[list[NodeRef], list[str]]:
        """Slurm names -> the VMs holding them, and the names no VM holds (names.json)."""
        refs, missing = [], []
        for n in names:
            try:
                refs.append(node_ref(self.config.cluster, n, self.name_map))
            except LookupError:
                missing.append(n)
        return refs, missing

    def refs(self, names: Sequence[str]) -> list[NodeRef]:
        refs, missing = self.resolve(names)
        if missing:
            raise LookupError(f"no VM holds {','.join(missing)} (names.json)")
        return refs

    def mark_down(self, failures: dict[str, str]) -> None:
        for name, why in sorted(failures.items()):
            LOG.error("%s: %s; setting it DOWN", name, why)
            try:
                slurm.update([name], "DOWN", self.reason(why), self.runner)
            except RuntimeError as exc:
                LOG.error("%s: could not set DOWN: %s", name, exc)

    def _deadline(self, seconds: float) -> float:
        """One deadline for this run, shared by every retry the backend makes (Retry-After is
        honoured up to it, never past it)."""
        deadline = self.clock() + seconds
        if hasattr(self.backend, "deadline"):
            self.backend.deadline = deadline
        return deadline

    def resume(self, names: Sequence[str]) -> int:
        """Starts first, for every node (a start of a running VM is accepted and changes
        nothing): reading each VM before any start cost a subscription read per node, so under
        throttled reads the starts went out after slurmctld's ResumeTimeout. Then one list per
        scale set per poll watches for platform failures until resume_wait_s or the deadline."""
        deadline = self._deadline(self.config.resume_deadline_s)
        refs, missing = self.resolve(names)
        failures = {n: f"start refused: {e}" for n, e in self.backend.start(refs).items() if e}
        failures |= {n: "no VM holds this name (names.json)" for n in missing}
        pending = {r.name: r for r in refs if r.name not in failures}
        watch = min(deadline, self.clock() + self.config.resume_wait_s)
        while pending and self.clock() + self.config.poll_s < watch:
            self.sleep(self.config.poll_s)
            for name, st in self.backend.state(list(pending.values())).items():
                if st.error:
                    failures[name] = f"start failed: {st.error}"
                    del pending[name]
                elif st.power == "running":
                    LOG.info("%s: running; slurmd registers on its own", name)
                    del pending[name]
        for name in sorted(pending):
            LOG.warning(
                "%s: not running after %.0f s; ResumeTimeout decides",
                name,
                self.config.resume_wait_s,
            )
        self.mark_down(failures)
        if failures:
            self._stop_quietly(r for r in refs if r.name in failures)
        return EXIT_FAILED if failures else EXIT_OK

    def suspend(self, names: Sequence[str]) -> int:
        """A node's drain is kept through its suspend (no idle_on_node_suspend). A spot-evicted
        node needs nothing lifted here: it was forced down (POWER_DOWN_FORCE), and Slurm clears
        the drain of a node it powers down on request (power_save.c, "power_down_asap").
        A refused deallocate is sent again, backing off, until it is accepted or the run's
        deadline (< SuspendTimeout) comes; a node still refused is set DOWN with the reason and
        `return` keeps deallocating its VM (a DOWN node's VM bills until someone stops it)."""
        deadline = self._deadline(self.config.suspend_deadline_s)
        refs, missing = self.resolve(names)
        for n in missing:
            LOG.info("%s: no VM holds this name (names.json); nothing to deallocate", n)
        refused = {n: e for n, e in self.backend.stop(refs).items() if e}
        wait = max(self.config.poll_s, 1.0)
        while refused and self.clock() + wait < deadline:
            if any(e.startswith(THROTTLED) for e in refused.values()):
                break
            LOG.warning("%d deallocates refused; again in %.0f s", len(refused), wait)
            self.sleep(wait)
            again = [r for r in refs if r.name in refused]
            refused = {n: e for n, e in self.backend.stop(again).items() if e}
            wait = min(wait * 2, 120.0)
        self.mark_down({n: f"deallocate failed: {e}" for n, e in refused.items()})
        return EXIT_FAILED if refused else EXIT_OK

    def give_back(self, names: Sequence[str]) -> int:
        """`return`: a node this program set DOWN (its VM could not start, or never registered)
        is, once powered down with its VM stopped and DOWN for `return_after_s`, made IDLE again:
        an ordinary powered-down node the next job may start, as Azure/cyclecloud-slurm's
        return_to_idle does. `State=IDLE`, not RESUME: on a powered-down node RESUME and UNDRAIN
        ask it to register, which it cannot. Such a node whose VM still runs (a deallocate that
        failed until its run's deadline) is deallocated again, every run, until it stops.
        Every DOWN node's VM is read, whoever set it DOWN, and those that bill are written down
        (down_billing.py) for `clusterctl status` and Prometheus; nodes drained or set DOWN by
        anyone else are reported, never touched, and nodes not powered down are left alone."""
        self._deadline(self.config.suspend_deadline_s)
        down, todo, powered_down = self._down_nodes(names)
        refs = self.resolve(sorted(down))[0]
        states = self.backend.state(refs) if refs else {}
        billing = [r for r in refs if states[r.name].power in leak.BILLING_POWER]
        refused = self._stop_billing(billing, todo, down, states)
        self._write_down_billing(billing, states, down, refused)
        todo = [n for n in todo if n in powered_down and n in states]
        todo = [n for n in todo if states[n].power == "stopped"]
        if todo:
            self._return_to_idle(todo)
        return EXIT_OK

    def _down_nodes(self, names: Sequence[str]) -> tuple[dict[str, str], list[str], set[str]]:
        """Every DOWN node with its reason; those this program set DOWN (in name order); those
        of them powered down (`down~`)."""
        ours = f"{self.config.reason_prefix} power:"
        down: dict[str, str] = {}
        todo: list[str] = []
        powered_down: set[str] = set()
        for name, (state, why) in sorted(slurm.states(names, self.runner).items()):
            if state.rstrip("*~#%!$@^-") != "down":
                continue
            down[name] = why
            if why.startswith(ours):
                todo.append(name)
                if state == "down~":
                    powered_down.add(name)
        return down, todo, powered_down

    def _stop_billing(
        self, billing: list[NodeRef], ours: list[str], down: dict[str, str], states: dict[str, Any]
    ) -> dict[str, str | None]:
        """Deallocates the billing VMs of nodes this program set DOWN; the others' are only
        reported. Returns the deallocates sent (node -> None, or why refused)."""
        to_stop = [r for r in billing if r.name in ours]
        refused = self.backend.stop(to_stop) if to_stop else {}
        for name, error in sorted(refused.items()):
            # DOWN by a power failure with its VM up: it bills and no job can use it.
            LOG.warning("%s: DOWN with its VM running: deallocate %s", name,
                        f"refused: {error}" if error else "sent")  # fmt: skip
        for r in billing:
            if r.name not in ours:
                LOG.warning("%s: DOWN (%s) with its VM %s: it bills; not ours to stop", r.name,
                            down[r.name] or "no reason", states[r.name].power)  # fmt: skip
        return refused

    def _return_to_idle(self, todo: list[str]) -> None:
        """State=IDLE for the nodes DOWN for return_after_s; the others are held."""
        since = slurm.reason_times(todo, self.runner)
        now = self.now()
        held = [n for n in todo if (since.get(n) or 0) > now - self.config.return_after_s]
        for name in held:
            LOG.info("%s: DOWN %.0f s ago by a power failure; returned after %.0f s", name,
                     now - (since[name] or now), self.config.return_after_s)  # fmt: skip
        ready = [n for n in todo if n not in held]
        if ready:
            slurm.update(ready, "IDLE", None, self.runner)
            for name in ready:
                LOG.info("%s: returned to the powered-down pool (State=IDLE)", name)

    def _write_down_billing(
        self,
        billing: Sequence[NodeRef],
        states: dict[str, Any],
        reasons: dict[str, str],
        refused: dict[str, str | None],
    ) -> None:
        if not self.config.down_billing_record and not self.config.textfile:
            return
        record = leak.DownBillingRecord(
            checkedAt=self.now(),
            nodes=[
                leak.DownBillingNode(
                    node=r.name,
                    vm=naming.vm_name(r.scale_set, r.instance_id),
                    power=states[r.name].power,
                    reason=reasons.get(r.name, ""),
                    usdPerHour=self.config.prices.get(r.scale_set),
                    deallocateSent=r.name in refused and not refused[r.name],
                )
                for r in billing
            ],
        )
        path = (
            leak.record_path(self.config.cluster, Path(self.config.names_root))
            if self.config.down_billing_record
            else None
        )
        textfile = Path(self.config.textfile) if self.config.textfile else None
        try:
            leak.write(record, path, textfile)
        except OSError as exc:
            LOG.error("return: cannot write what bills while DOWN: %s", exc)

    def fail(self, names: Sequence[str]) -> int:
        """ResumeFailProgram: slurmctld already set these DOWN after ResumeTimeout and requeued
        their jobs; give them a reason that names the cause and stop their billing."""
        refs, missing = self.resolve(names)
        states = self.backend.state(refs)
        failures = {n: "no VM holds this name (names.json)" for n in missing}
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

    def delete(self, names: Sequence[str]) -> int:
        """`delete`: the VMs of nodes a shrink takes out, deleted by their instance ids (the name
        map's), before Pulumi lowers the scale sets' capacity: Azure would otherwise pick the
        VMs by instance id, which after a scale-in and out is not the highest Slurm names. Run by
        the resize drain once the nodes are drained and idle; a node that runs a job is refused,
        a name no VM holds is already gone. Waits (bounded) until the VMs are no longer listed."""
        refs, gone = self.resolve(names)
        for name in gone:
            LOG.info("%s: no VM holds it (names.json); nothing to delete", name)
        busy = self._running_a_job(refs)
        todo = [r for r in refs if r.name not in busy]
        refused = self._delete_vms(todo)
        pending = self._wait_unlisted([r for r in todo if r.name not in refused])
        return EXIT_FAILED if busy or refused or pending else EXIT_OK

    def _running_a_job(self, refs: Sequence[NodeRef]) -> set[str]:
        """The nodes that run a job: their VMs are not deleted."""
        busy = slurm.busy([r.name for r in refs], self.runner)
        for name in sorted(busy):
            LOG.error("%s: runs a job; its VM is not deleted", name)
        return busy

    def _delete_vms(self, todo: Sequence[NodeRef]) -> dict[str, str]:
        """Asks for the VMs to be deleted; returns the refused ones (node name -> why)."""
        refused = {n: e for n, e in (self.backend.delete(todo) if todo else {}).items() if e}
        for name, why in sorted(refused.items()):
            LOG.error("%s: delete refused: %s", name, why)
        return refused

    def _wait_unlisted(self, pending: list[NodeRef]) -> list[NodeRef]:
        """Waits (up to resume_wait_s) until the VMs are no longer listed in their scale sets;
        returns those still listed."""
        pending = list(pending)
        deadline = self.clock() + self.config.resume_wait_s
        while pending:
            listed = {ss: set(self.backend.list(ss)) for ss in {r.scale_set for r in pending}}
            for r in [r for r in pending if r.instance_id not in listed[r.scale_set]]:
                LOG.info("%s: VM %s_%s deleted", r.name, r.scale_set, r.instance_id)
                pending.remove(r)
            if not pending or self.clock() >= deadline:
                break
            self.sleep(self.config.poll_s)
        for r in pending:
            LOG.error("%s: VM %s_%s still listed after %.0f s", r.name, r.scale_set,
                      r.instance_id, self.config.resume_wait_s)  # fmt: skip
        return pending

    def show(self, names: Sequence[str]) -> int:
        for name, st in sorted(self.backend.state(self.refs(names)).items()):
            print(f"{name} {st.power}{' ' + st.error if st.error else ''}")
        return EXIT_OK

    def reconcile_names(self) -> int:
        """`names`: bring /sched/<cluster>/names.json to the VMs that exist (naming.assign): keep
        the names of existing VMs, free those of deleted ones, name new VMs (ascending id, lowest
        free name within the group's size in the live slurm.conf), answer the nodes waiting at
        boot, deallocate (never delete) a VM whose name left slurm.conf, and report a VM left
        without a name past the grace (a growth's VMs wait for theirs: never deallocated).
        Nothing is written when Slurm or the platform cannot be read: a failed read never frees
        a name."""
        cluster, path = self.config.cluster, self.config.names_file
        requests_dir = naming.requests_dir(cluster, Path(self.config.names_root))
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.parent / ".names.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            sizes = naming.sizes_from_nodes(cluster, slurm.all_nodes(self.runner))
            if not sizes:
                raise RuntimeError("sinfo lists no nodes; the name map is left as it is")
            doc = _read_names_doc(path)
            known = set(doc.get("names", {})) | set(doc.get("unnamed", {}))
            existing = self._list_scale_sets(sorted(set(sizes) | known), sizes)
            result = naming.assign(
                doc,
                existing,
                sizes,
                cluster,
                _boot_requests(requests_dir),
                self.now(),
                self.config.names_grace_s,
            )
            if result.doc != doc:
                _write_names_doc(path, result.doc)
        self._log_assignment(result)
        for ss, instance, _ in result.named:
            (requests_dir / naming.vm_name(ss, instance)).unlink(missing_ok=True)
        return self._deallocate_unnamed(result.deallocate)

    def _list_scale_sets(
        self, scale_sets: Sequence[str], sizes: dict[str, int]
    ) -> dict[str, list[str]]:
        """Each scale set's VM instance ids; a set slurm.conf no longer names that is gone (it
        left the stack, deleted by Pulumi) holds none."""
        existing = {}
        for ss in scale_sets:
            try:
                existing[ss] = self.backend.list(ss)
            except LookupError:
                if ss in sizes:  # slurm.conf names it: a missing set is an error, not empty
                    raise
                existing[ss] = []
                LOG.info("names: %s is gone; the names it held are freed", ss)
        return existing

    def _log_assignment(self, result: naming.Assignment) -> None:
        for ss, instance, name in result.freed:
            LOG.info("names: %s freed (%s_%s is gone or left slurm.conf)", name, ss, instance)
        for ss, instance, name in result.named:
            LOG.info("names: %s_%s is %s", ss, instance, name)
        for ss, instance in result.waiting:
            LOG.warning("names: %s_%s has no name yet (no free name in slurm.conf)", ss, instance)
        for ss, instance in result.late:
            LOG.error(
                "names: %s_%s has had no name for over %.0f s and runs (bills): a resize whose "
                "config sync has not come, or a VM beyond the stack's count (delete it)",
                ss,
                instance,
                self.config.names_grace_s,
            )

    def _deallocate_unnamed(self, vms: Sequence[tuple[str, str]]) -> int:
        """Deallocates the VMs whose name left slurm.conf; EXIT_FAILED if one was refused."""
        if not vms:
            return EXIT_OK
        code = EXIT_OK
        refs = [NodeRef(naming.vm_name(ss, i), ss, i) for ss, i in vms]
        for vm, error in sorted(self.backend.stop(refs).items()):
            if error:
                LOG.error("names: %s has no Slurm name; deallocate refused: %s", vm, error)
                code = EXIT_FAILED
            else:
                LOG.warning(
                    "names: %s has no Slurm name: deallocated (delete it, or reimage it "
                    "once a name is free)",
                    vm,
                )
        return code

    def _stop_quietly(self, refs: Iterable[NodeRef]) -> None:
        errors = self.backend.stop(list(refs))
        for name, error in errors.items():
            if error:
                LOG.error("%s: deallocate after failure refused: %s", name, error)


def _read_names_doc(path: Path) -> dict[str, Any]:
    try:
        doc: dict[str, Any] = json.loads(path.read_text())
        return doc
    except FileNotFoundError:
        return {}


def _write_names_doc(path: Path, doc: dict[str, Any]) -> None:
    """Atomically: a node reading the map at boot never sees half of it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    tmp.chmod(0o644)
    os.replace(tmp, path)


def _boot_requests(requests_dir: Path) -> set[tuple[str, str]]:
    """(scale set, instance id) of each VM waiting at boot for its name (a file named for it)."""
    requests = set()
    for req in sorted(requests_dir.glob("*")) if requests_dir.is_dir() else []:
        parts = naming.split_vm_name(req.name)
        if parts:
            requests.add(parts)
    return requests


ACTIONS = (
    "resume",
    "suspend",
    "fail",
    "return",
    "reimage",
    "redeploy",
    "state",
    "names",
    "delete",
)


def make_backend(config: Config) -> PowerBackend:
    """Azure's backend, shipped in this package; or, for any other name, the module
    `<name>_backend.py` someone placed beside it, whose `make(settings)` returns a PowerBackend.
    Nothing else is shipped: a test rig (the VM sandbox) places its own module and names it in a
    power.d override, as an operator could."""
    if config.backend == "azure":
        from .azure_backend import AzureBackend

        return AzureBackend.from_config(config.settings)
    if not config.backend.isidentifier():
        raise ValueError(f"backend '{config.backend}' in {CONFIG} is not a module name")
    try:
        module = importlib.import_module(f".{config.backend}_backend", __package__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.{config.backend}_backend":
            raise
        raise ValueError(
            f"unknown backend '{config.backend}' in {CONFIG}: no module "
            f"{config.backend}_backend.py beside {Path(__file__).parent}"
        ) from None
    backend: PowerBackend = module.make(config.settings)
    return backend


def main(
    argv: Sequence[str] | None = None,
    backend: PowerBackend | None = None,
    runner: slurm.Runner = slurm.run,
    config: Config | None = None,
) -> int:
    parser = argparse.ArgumentParser(prog="gpucl-power", description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=ACTIONS)
    parser.add_argument(
        "hostlist",
        nargs="?",
        default="ALL",
        help="Slurm hostlist, e.g. gpu-pg0-[1-4], or ALL (every node; `names` takes none)",
    )
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
    if args.action == "names":
        try:
            code = PowerProgram(config, backend or make_backend(config), runner).reconcile_names()
        except (RuntimeError, ValueError, LookupError, ImportError, OSError) as exc:
            LOG.error("names: %s", exc)
            return EXIT_USAGE
        LOG.info("names: exit %d", code)
        return code
    try:
        names = (
            slurm.all_nodes(runner)
            if args.hostlist == "ALL"
            else slurm.expand(args.hostlist, runner)
        )
        program = PowerProgram(config, backend or make_backend(config), runner)
        for name in names:  # refuse names outside the scheme before any call
            node_ref(config.cluster, name)
        if args.action in ("reimage", "redeploy", "state"):
            program.refs(names)  # and names no VM holds, where a VM is needed
    except (RuntimeError, ValueError, LookupError, ImportError) as exc:
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
