"""Run all_reduce on a Slurm cluster: render the sbatch script, submit it over ssh, wait with
progress shown, bring back the output file."""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, NoReturn, Protocol

from rich.console import Console
from rich.status import Status

from clusterctl.constants import NCCL_MAX_BYTES, NCCL_MIN_BYTES
from clusterctl.validate import CouldNotRun
from clusterctl.validate.transport import Ssh

TEMPLATE = "validate/nccl_allreduce.sbatch.j2"
NCCL_TESTS_BINARY = "/opt/nccl-tests/build/all_reduce_perf"
_DONE_OK = {"COMPLETED"}
_NOT_STARTED = {"PENDING", "CONFIGURING", "REQUEUED", "RESV_DEL_HOLD", "REQUEUE_HOLD"}


@dataclass(frozen=True)
class SlurmJob:
    nodes: int
    gpus_per_node: int = 1
    """GPUs (and ranks) per node for nccl-tests; the probe runs one rank per node on no GPU."""
    benchmark: Literal["nccl-tests", "probe"] = "nccl-tests"
    env: dict[str, str] = field(default_factory=dict)
    partition: str | None = None
    nodelist: tuple[str, ...] = ()
    min_bytes: str = NCCL_MIN_BYTES
    max_bytes: str = NCCL_MAX_BYTES
    iters: int = 20
    warmup: int = 5
    container_image: str | None = None
    time_limit_min: int = 30
    sku: str | None = None
    binary: str = NCCL_TESTS_BINARY
    python: str = "python3"
    pythonpath: str | None = None
    probe_timeout_s: int = 30
    probe_max_seconds: int = 240
    name: str = "clusterctl-nccl"
    reservation: str | None = None
    kind: str = "NCCL"
    """How progress lines and errors name the job."""
    algorithm: str = "Ring"
    """2+ nodes: `Ring` (NCCL_ALGO=Ring, the network check) or `default` (NCCL_ALGO unset)."""

    def script(self, output: str) -> str:
        return render_sbatch(self, output)


class BatchJob(Protocol):
    """What the launcher submits: SlurmJob here, clusterctl.validate.train's TrainJob."""

    name: str
    nodelist: tuple[str, ...]
    time_limit_min: int
    kind: str

    def script(self, output: str) -> str: ...


def _shquote(value: object) -> str:
    return shlex.quote(str(value))


def render_sbatch(job: SlurmJob, output: str) -> str:
    """The batch script (pure: the same job gives the same text)."""
    from clusterctl.render.templates import environment

    env = environment()
    env.filters.setdefault("shquote", _shquote)
    return env.get_template(TEMPLATE).render(
        job_name=job.name,
        nodes=job.nodes,
        gpus_per_node=job.gpus_per_node,
        benchmark=job.benchmark,
        partition=job.partition,
        nodelist=",".join(job.nodelist),
        time_limit_min=job.time_limit_min,
        output=output,
        env=job.env,
        multi_node=job.nodes > 1,
        container_image=job.container_image,
        binary=job.binary,
        min_bytes=job.min_bytes,
        max_bytes=job.max_bytes,
        iters=job.iters,
        warmup=job.warmup,
        python=job.python,
        pythonpath=job.pythonpath,
        probe_timeout_s=job.probe_timeout_s,
        probe_max_seconds=job.probe_max_seconds,
        sku=job.sku,
        reservation=job.reservation,
        algorithm=job.algorithm,
    )


class NodeLost(CouldNotRun):
    """A node of the job became unusable (not responding, down) while the job waited on it."""

    def __init__(self, message: str, states: dict[str, str]) -> None:
        super().__init__(message)
        self.states = states
        """node -> what Slurm reports it (e.g. `idle (not responding)`)"""


@dataclass(frozen=True)
class JobResult:
    job_id: str
    state: str
    output: str


NODE_CHECK_AFTER_S = 30.0
"""A job may take this long to start before its nodes' states are looked at."""
NODE_GRACE_S = 60.0
"""How long a node of the job may stay unusable before the job is given up (slurmctld marks a
dead slurmd `*` within about SlurmdTimeout/3, 100 s by default)."""
# Not "drain": a drained node still runs jobs in a reservation (validate --resume re-tests there).
_UNUSABLE = ("down", "fail", "not_responding", "unknown", "future")


class SlurmLauncher:
    """Submit, wait, collect. `remote_dir` must be visible from the compute nodes and the
    scheduler (the shared /home in the cloud; a host path in the sandbox)."""

    def __init__(
        self,
        ssh: Ssh,
        *,
        remote_dir: str = "clusterctl-validate",
        poll_s: float = 2.0,
        console: Console | None = None,
        keep_files: bool = True,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.ssh = ssh
        self.remote_dir = remote_dir
        self.poll_s = poll_s
        self.console = console or Console(stderr=True)
        self.keep_files = keep_files
        self._sleep = sleep
        self._seq = 0

    def run(self, job: BatchJob, *, timeout_s: float | None = None) -> JobResult:
        return self.run_many([job], timeout_s=timeout_s)[0]

    def run_many(
        self, jobs: Sequence[BatchJob], *, timeout_s: float | None = None
    ) -> list[JobResult]:
        """Submit every job at once (they run in parallel on disjoint nodes), wait for all."""
        submitted: list[tuple[str, str]] = []
        try:
            try:
                for job in jobs:
                    submitted.append(self.submit(job))
            except CouldNotRun:
                if submitted:  # the jobs already queued would otherwise run unwatched
                    self.ssh.run(f"scancel {' '.join(j for j, _ in submitted)}", check=False)
                raise
            except KeyboardInterrupt:  # a submission in flight may have queued a job: by name
                in_flight = jobs[len(submitted)].name
                self._cancel_interrupted([j for j, _ in submitted], in_flight)
                raise
            limit = timeout_s or max(j.time_limit_min for j in jobs) * 60 + 120
            nodes = sorted({n for j in jobs for n in j.nodelist})
            try:
                states = self.wait(
                    [jid for jid, _ in submitted], limit, nodes=nodes, what=jobs[0].kind
                )
            except KeyboardInterrupt:
                self._cancel_interrupted([j for j, _ in submitted])
                raise
            results = []
            for (jid, out), state in zip(submitted, states, strict=True):
                text = self.ssh.run(f"cat {shlex.quote(out)} 2>/dev/null || true").stdout
                results.append(JobResult(jid, state, text))
            return results
        finally:
            # after a failure or a timeout too: nothing of ours is left on the cluster
            if not self.keep_files and submitted:
                paths = " ".join(
                    shlex.quote(p) for _, o in submitted for p in (o, o[:-4] + ".sbatch")
                )
                d = shlex.quote(self.remote_dir)
                self.ssh.run(f"rm -f {paths}; rmdir {d} 2>/dev/null || true", check=False)

    def _cancel_interrupted(self, job_ids: list[str], in_flight: str | None = None) -> None:
        """Ctrl-C: cancel the jobs this run submitted (and one whose sbatch was cut short, by
        name), and say so: the GPU nodes are not left running an unwatched test."""
        what = ", ".join(job_ids)
        if job_ids:
            self.ssh.run(f"scancel {' '.join(job_ids)}", check=False, timeout=30)
        if in_flight:
            self.ssh.run(f"scancel --name={shlex.quote(in_flight)}", check=False, timeout=30)
            what = ", ".join(x for x in (what, f"any job named {in_flight}") if x)
        if what:
            self.console.print(f"interrupted: cancelled Slurm job(s) {what}", highlight=False)

    def submit(self, job: BatchJob) -> tuple[str, str]:
        self._seq += 1
        stem = f"{self.remote_dir}/{job.name}-{int(time.time())}-{self._seq}"
        script = job.script(f"{stem}.out")
        d = shlex.quote(self.remote_dir)
        proc = self.ssh.run(
            f"mkdir -p {d} && cat > {shlex.quote(stem)}.sbatch && "
            f"sbatch --parsable {shlex.quote(stem)}.sbatch",
            input=script,
            check=False,
        )
        if proc.returncode != 0:
            raise CouldNotRun(f"sbatch refused the job: {_last(proc.stderr) or _last(proc.stdout)}")
        job_id = proc.stdout.strip().split(";")[0]
        if not job_id.isdigit():
            raise CouldNotRun(f"sbatch gave no job id: {proc.stdout.strip()!r}")
        return job_id, f"{stem}.out"

    def wait(
        self, job_ids: list[str], timeout_s: float, nodes: Sequence[str] = (), what: str = "NCCL"
    ) -> list[str]:
        """Final state per job; CouldNotRun (after scancel) when the time runs out, or as soon as
        one of `nodes` has been unusable (not responding, down) for NODE_GRACE_S: a job
        waiting on a dead slurmd would otherwise sit until the whole timeout."""
        start = time.monotonic()
        final: dict[str, str] = {}
        bad_since: dict[str, float] = {}
        said = ""
        with self.console.status("") as status:
            while True:
                live = self._poll(job_ids, final)
                waited = time.monotonic() - start
                line = f"{what} job(s) {', '.join(job_ids)}: " + ", ".join(
                    f"{j} {final.get(j) or live.get(j, '?')}" for j in job_ids
                )
                said = self._show(status, line, waited, said)
                if len(final) == len(job_ids):
                    return [final[j] for j in job_ids]
                if nodes and waited >= NODE_CHECK_AFTER_S:
                    bad_since = self._watch_nodes(nodes, bad_since, job_ids, final, what, waited)
                if waited > timeout_s:
                    self._time_out(job_ids, final, live, what, timeout_s)
                self._sleep(self.poll_s)

    def _poll(self, job_ids: list[str], final: dict[str, str]) -> dict[str, str]:
        """The unfinished jobs squeue still shows (id -> state and reason); a job it no longer
        shows has ended, and its final state goes into `final`."""
        live = self._squeue([j for j in job_ids if j not in final])
        for jid in job_ids:
            if jid not in final and jid not in live:
                final[jid] = self._final_state(jid)
        return live

    def _show(self, status: Status, line: str, waited: float, said: str) -> str:
        """The spinner's text; a log (CI) gets a plain line per change instead. Returns the line
        last printed."""
        status.update(f"{line} ({waited:.0f} s)")
        if self.console.is_terminal or line == said:
            return said
        self.console.print(f"{line} ({waited:.0f} s)", highlight=False, markup=False)
        return line

    def _cancel_unfinished(self, job_ids: list[str], final: dict[str, str]) -> list[str]:
        pending = [j for j in job_ids if j not in final]
        self.ssh.run(f"scancel {' '.join(pending)}", check=False)
        return pending

    def _watch_nodes(
        self,
        nodes: Sequence[str],
        bad_since: dict[str, float],
        job_ids: list[str],
        final: dict[str, str],
        what: str,
        waited: float,
    ) -> dict[str, float]:
        """Since when each of `nodes` has been unusable (a node that recovers starts afresh);
        NodeLost, after cancelling the unfinished jobs, once one has been so for NODE_GRACE_S."""
        now = time.monotonic()
        trouble = self.node_trouble(nodes)
        bad_since = {n: bad_since.get(n, now) for n in trouble}
        dead = [n for n, t in bad_since.items() if now - t >= NODE_GRACE_S]
        if not dead:
            return bad_since
        pending = self._cancel_unfinished(job_ids, final)
        lost = ", ".join(f"{n} ({trouble[n]})" for n in dead)
        raise NodeLost(
            f"node {lost}: unusable for {NODE_GRACE_S:.0f} s while {what} job(s) "
            f"{', '.join(pending)} waited on it; cancelled after {waited:.0f} s",
            {n: trouble[n] for n in dead},
        )

    def _time_out(
        self,
        job_ids: list[str],
        final: dict[str, str],
        live: dict[str, str],
        what: str,
        timeout_s: float,
    ) -> NoReturn:
        """Cancels the unfinished jobs; CouldNotRun saying whether they never started."""
        pending = self._cancel_unfinished(job_ids, final)
        why = ", ".join(f"{j} {live.get(j, '?')}" for j in pending)
        how = (
            "never started"
            if all(live.get(j, "").split()[0] in _NOT_STARTED for j in pending)
            else "did not finish"
        )
        raise CouldNotRun(f"{what} job {how} within {timeout_s:.0f} s ({why}); cancelled")

    def node_trouble(self, nodes: Sequence[str]) -> dict[str, str]:
        """Nodes that cannot run a job now: not responding (`*`), down, failing."""
        out = self.ssh.run(f"sinfo -h -N -n {','.join(nodes)} -o '%N %T'", check=False).stdout
        trouble = {}
        for line in out.splitlines():
            name, _, state = line.partition(" ")
            state = state.strip().lower()
            if state.endswith("*") or state.startswith(_UNUSABLE):
                trouble[name] = state.replace("*", " (not responding)").strip()
        return trouble

    def _squeue(self, job_ids: list[str]) -> dict[str, str]:
        if not job_ids:
            return {}
        out = self.ssh.run(f"squeue -h -j {','.join(job_ids)} -o '%i %T %r'", check=False).stdout
        live = {}
        for line in out.splitlines():
            parts = line.split(None, 1)
            if len(parts) == 2 and parts[0] in job_ids:
                live[parts[0]] = parts[1].replace(" None", "").strip()
        return live

    def _final_state(self, job_id: str) -> str:
        proc = self.ssh.run(f"sacct -n -X -P -j {job_id} -o State", check=False)
        state = proc.stdout.strip().split("\n")[0].split()[0] if proc.stdout.strip() else ""
        if proc.returncode == 0 and state:
            return state
        # No accounting (slurmdbd off): slurmctld remembers finished jobs for MinJobAge seconds.
        shown = self.ssh.run(f"scontrol show job {job_id} -o", check=False).stdout
        m = re.search(r"JobState=(\S+)", shown)
        return m.group(1) if m else "UNKNOWN"


def _last(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def pair_job(job: SlurmJob, a: str, b: str) -> SlurmJob:
    return replace(job, nodes=2, nodelist=(a, b), name=f"clusterctl-nccl-{a}-{b}"[:60])
