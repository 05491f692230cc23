"""Every validation kept per stack, in one SQLite file the user can find and query.

Where: `$GPU_CLUSTERS_VALIDATE_HISTORY` if set, else `<project>/.clusterctl/validate-history.sqlite`
(next to the stack's kubeconfig and, with the default file backend, its Pulumi state in
`.pulumi-state/`). One row per run: when, the status, the worst judged busbw against its floor,
the network NCCL used, the NCCL version, and the whole JSON result, so a later report can draw an
earlier run's curve. "Accepted" is a run that passed (or passed with warnings).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clusterctl.errors import UserError

ENV = "GPU_CLUSTERS_VALIDATE_HISTORY"
FILE = "validate-history.sqlite"
ACCEPTED = ("pass", "warn")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  stack TEXT NOT NULL,
  at TEXT NOT NULL,
  status TEXT NOT NULL,
  source TEXT NOT NULL,
  sku TEXT,
  nodes INTEGER,
  busbw_gbps REAL,
  floor_gbps REAL,
  margin_pct REAL,
  network TEXT,
  nccl_version TEXT,
  result TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_stack ON runs (stack, id);
CREATE TABLE IF NOT EXISTS train_runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  stack TEXT NOT NULL,
  at TEXT NOT NULL,
  status TEXT NOT NULL,
  preset TEXT NOT NULL,
  sku TEXT,
  nodes INTEGER,
  gpus INTEGER,
  tokens_per_s_per_gpu REAL,
  scaling REAL,
  floor REAL,
  result TEXT NOT NULL
);
"""


_COLUMNS = (
    "id", "stack", "at", "status", "source", "sku", "nodes", "busbw_gbps", "floor_gbps",
    "margin_pct", "network", "nccl_version",
)  # fmt: skip


@dataclass(frozen=True)
class HistoryRun:
    id: int
    stack: str
    at: str
    """UTC, ISO 8601 to the second."""
    status: str
    source: str
    """What was judged: `run` (clusterctl launched it) or `log FILE` (--from-log)."""
    sku: str | None
    nodes: int | None
    busbw_gbps: float | None
    floor_gbps: float | None
    margin_pct: float | None
    network: str | None
    nccl_version: str | None
    result: dict[str, Any]

    @property
    def accepted(self) -> bool:
        return self.status in ACCEPTED

    @property
    def kind(self) -> tuple[str | None, int | None]:
        """What a run can be compared with: the same VM size on the same number of nodes (a
        1-node run measures NVLink, a 2-node run the fabric; another SKU has another
        baseline). The network is left out on purpose: a run that fell back to sockets is
        the regression a trend must show, not a different kind of run."""
        return (self.sku, self.nodes)

    @property
    def fabric(self) -> str | None:
        """Each host's fabric as the run's NCCL INFO lines showed it: `h100-0 8 IB GDR; h100-1
        7 IB GDR` (None where the run's log had no such lines)."""
        short = {"infiniband": "IB", "efa": "EFA", "socket": "Socket"}
        hosts = [f for g in self.result.get("groups", []) for f in g.get("fabric") or []]
        if not hosts:
            return None
        parts = []
        for f in hosts:
            n = f.get("device_count")
            gdr = {True: " GDR", False: " no GDR"}.get(f.get("gdr"), "")
            what = short.get(f.get("kind") or "", f.get("network") or "?")
            parts.append(f"{f['host']} {'' if n is None else f'{n} '}{what}{gdr}")
        return "; ".join(parts)

    @property
    def expected_gbps(self) -> float | None:
        """The expected busbw the run was judged against (its worst group's)."""
        for g in self.result.get("groups", []):
            value = (g.get("thresholds") or {}).get("expected_gbps")
            if value is not None:
                return float(value)
        return None

    @property
    def reasons(self) -> list[str]:
        """Why the run got its status, as its verdicts said."""
        return [r for g in self.result.get("groups", []) for r in g.get("reasons") or []]

    def group_points(self, group: str) -> tuple[tuple[int, float], ...]:
        """(message bytes, worst busbw) of one group of this run, from its stored result."""
        for g in self.result.get("groups", []):
            if g.get("group") == group:
                return tuple(
                    (
                        int(s["size_bytes"]),
                        min(s["busbw_out_of_place_gbps"], s["busbw_in_place_gbps"]),
                    )
                    for s in g.get("sizes", [])
                    if s["size_bytes"] > 0
                )
        return ()


def outcome_kind(outcome: Any) -> tuple[str | None, int | None]:
    """A validate Outcome's HistoryRun.kind: its SKU and the most nodes a verdict spanned."""
    return (outcome.sku, max((len(v.hosts) for v in outcome.verdicts), default=None) or None)


def path_for(project_dir: Path | None) -> Path:
    """The history file: $GPU_CLUSTERS_VALIDATE_HISTORY, else the project's .clusterctl/."""
    override = os.environ.get(ENV)
    if override:
        return Path(override).expanduser()
    if project_dir is None:
        raise UserError(f"no project to keep the validation history in: set {ENV}=FILE")
    return project_dir / ".clusterctl" / FILE


def project_history() -> History:
    """The history of the project the command (or `pulumi up`'s program) runs in, or
    $GPU_CLUSTERS_VALIDATE_HISTORY's."""
    from clusterctl.project import find_project

    return History(path_for(None if os.environ.get(ENV) else find_project().dir))


class History:
    def __init__(self, path: Path) -> None:
        self.path = path

    @contextmanager
    def _db(self, *, write: bool) -> Iterator[sqlite3.Connection]:
        if write:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with closing(sqlite3.connect(self.path, timeout=10)) as db:
                db.executescript(_SCHEMA)
                with db:
                    yield db
        except sqlite3.DatabaseError as exc:
            raise UserError(f"validation history {self.path}: {exc}") from None

    def record(
        self,
        stack: str,
        result: dict[str, Any],
        *,
        at: str,
        source: str,
        sku: str | None,
        nodes: int | None,
        network: str | None,
        nccl_version: str | None,
    ) -> HistoryRun:
        """Keep one run: `result` is its JSON form (clusterctl.validate.run.outcome_json)."""
        groups = [g for g in result.get("groups", []) if g.get("measured_busbw_gbps") is not None]
        worst = min(groups, key=lambda g: g["margin_pct"], default=None)
        floor = None
        if worst is not None:
            floors = [s["floor_gbps"] for s in worst["sizes"] if s["gated"] and s["floor_gbps"]]
            floor = min(floors, default=None)
        row = (
            stack,
            at,
            str(result.get("status", "")),
            source,
            sku,
            nodes,
            worst["measured_busbw_gbps"] if worst else None,
            floor,
            worst["margin_pct"] if worst else None,
            network,
            nccl_version,
            json.dumps(result, sort_keys=True),
        )
        with self._db(write=True) as db:
            cur = db.execute(
                "INSERT INTO runs (stack, at, status, source, sku, nodes, busbw_gbps, floor_gbps,"
                " margin_pct, network, nccl_version, result) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                row,
            )
            run_id = cur.lastrowid
        assert run_id is not None
        return HistoryRun(run_id, *row[:-1], result=result)  # type: ignore[arg-type]

    def record_outcome(self, stack: str, outcome: Any, *, at: str, source: str) -> HistoryRun:
        """Keep a validate run (a clusterctl.validate.run.Outcome) as `--json` shows it."""
        from clusterctl.validate.run import outcome_json

        nets = sorted({n.label for r in outcome.runs for n in r.networks})
        return self.record(
            stack,
            outcome_json(outcome),
            at=at,
            source=source,
            sku=outcome.sku,
            nodes=outcome_kind(outcome)[1],
            network="; ".join(nets) or None,
            nccl_version=next((r.nccl_version for r in outcome.runs if r.nccl_version), None),
        )

    def runs(self, stack: str) -> list[HistoryRun]:
        """The stack's runs, oldest first; none when the file does not exist yet."""
        if not self.path.exists():
            return []
        with self._db(write=False) as db:
            rows = db.execute(
                f"SELECT {', '.join(_COLUMNS)}, result FROM runs WHERE stack = ? ORDER BY id",
                (stack,),
            ).fetchall()
        return [
            HistoryRun(**dict(zip(_COLUMNS, r[:-1], strict=True)), result=json.loads(r[-1]))
            for r in rows
        ]

    def first_accepted(self, stack: str, kind: tuple[str | None, int | None]) -> HistoryRun | None:
        """The stack's first accepted run of the same kind (HistoryRun.kind): the reference a
        later run is compared with."""
        return first_accepted_of(self.runs(stack), kind)

    def record_train(self, stack: str, result: dict[str, Any], *, at: str) -> TrainHistoryRun:
        """Keep one `validate --train` run: `result` is its JSON form (cli/train_report.py)."""
        m = result.get("metrics") or {}
        row = (
            stack, at, str(result["status"]), str(result["preset"]), result.get("sku"),
            m.get("nodes"), m.get("gpus"), m.get("tokens_per_s_per_gpu"), result.get("scaling"),
            (result.get("floor") or {}).get("tokens_per_s_per_gpu"),
        )  # fmt: skip
        with self._db(write=True) as db:
            cur = db.execute(
                "INSERT INTO train_runs (stack, at, status, preset, sku, nodes, gpus,"
                " tokens_per_s_per_gpu, scaling, floor, result) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (*row, json.dumps(result, sort_keys=True)),
            )
            run_id = cur.lastrowid
        assert run_id is not None
        return TrainHistoryRun(run_id, *row)  # type: ignore[arg-type]

    def train_runs(self, stack: str) -> list[TrainHistoryRun]:
        if not self.path.exists():
            return []
        with self._db(write=False) as db:
            rows = db.execute(
                f"SELECT {', '.join(_TRAIN_COLUMNS)} FROM train_runs WHERE stack = ? ORDER BY id",
                (stack,),
            ).fetchall()
        return [TrainHistoryRun(*r) for r in rows]

    def first_accepted_train(
        self, stack: str, preset: str, sku: str | None
    ) -> TrainHistoryRun | None:
        """The first passing training run of the same model on the same VM size: the reference a
        later run's throughput floor is calibrated on."""
        return next(
            (
                r
                for r in self.train_runs(stack)
                if r.status == "pass" and r.preset == preset and r.sku == sku
                and r.tokens_per_s_per_gpu
            ),
            None,
        )  # fmt: skip


def first_accepted_of(
    runs: list[HistoryRun], kind: tuple[str | None, int | None]
) -> HistoryRun | None:
    return next((r for r in runs if r.accepted and r.kind == kind), None)


_TRAIN_COLUMNS = (
    "id", "stack", "at", "status", "preset", "sku", "nodes", "gpus", "tokens_per_s_per_gpu",
    "scaling", "floor",
)  # fmt: skip


@dataclass(frozen=True)
class TrainHistoryRun:
    id: int
    stack: str
    at: str
    status: str
    preset: str
    sku: str | None
    nodes: int | None
    gpus: int | None
    tokens_per_s_per_gpu: float | None
    scaling: float | None
    floor: float | None
