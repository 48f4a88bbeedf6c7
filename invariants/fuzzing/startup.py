"""A fuzzing session's start-up, phase by phase: what the seconds before the first example
are spent on, in the hub and in each worker.

The session names a file in `HARNESS_FUZZ_STARTUP_LOG`; the hub and each worker append one
JSON line per phase they reach (`mark`): the hub once its imports are done and once it has
collected the tests and started its manager, each worker when it starts (forked from the
hub), when it has collected the tests again, when its database is open and when its first
example has run. The session reads them back (`read_startup`) to start the time box once
every worker is ready and to say how long start-up took (`Startup`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

ENV_STARTUP_LOG = "HARNESS_FUZZ_STARTUP_LOG"
LOG_NAME = "startup.jsonl"

HUB_IMPORTED = "hub imported"  # interpreter up, HypoFuzz, Hypothesis and the harness imported
HUB_COLLECTED = "hub collected"  # the hub's pytest collection done, its manager started
WORKER_STARTED = "worker started"  # forked and running
WORKER_COLLECTED = "worker collected"  # the worker's own pytest collection done
WORKER_DATABASE = "worker database"  # the worker's database open, its first slice next
FIRST_EXAMPLE = "first example"  # the worker's first example has run
WORKER_PHASES = (WORKER_STARTED, WORKER_COLLECTED, WORKER_DATABASE, FIRST_EXAMPLE)
# What the seconds until each phase was reached were spent on.
SPENT_ON = {
    HUB_IMPORTED: "hub imports", HUB_COLLECTED: "hub collection", WORKER_STARTED: "fork",
    WORKER_COLLECTED: "worker collection", WORKER_DATABASE: "worker database",
    FIRST_EXAMPLE: "first example",
}


def mark(phase: str, environ: Mapping[str, str] | None = None) -> None:
    """Append `phase` reached now by this process (nothing when no log is named)."""
    path = (os.environ if environ is None else environ).get(ENV_STARTUP_LOG)
    if not path:
        return
    line = json.dumps({"pid": os.getpid(), "phase": phase, "at": time.time()}) + "\n"
    with open(path, "a", encoding="utf-8") as log:  # one short append: whole lines
        log.write(line)


@dataclass
class Startup:
    """The phases each process reached, epoch seconds; the origin is the session's start."""

    started_at: float
    hub: dict[str, float] = field(default_factory=dict)
    workers: dict[int, dict[str, float]] = field(default_factory=dict)

    def ready_at(self, workers: int) -> float | None:
        """When the last of `workers` workers had run its first example; None before."""
        done = [w[FIRST_EXAMPLE] for w in self.workers.values() if FIRST_EXAMPLE in w]
        return max(done) if len(done) >= workers else None

    def seconds(self, workers: int) -> float | None:
        """Start-up: from the session's start until every worker had run an example."""
        ready = self.ready_at(workers)
        return None if ready is None else max(0.0, ready - self.started_at)

    def breakdown(self) -> dict[str, float]:
        """Seconds spent on each phase (`SPENT_ON`): the hub's, then the slowest worker's
        for each of its phases."""
        steps: dict[str, float] = {}
        previous = self.started_at
        for phase in (HUB_IMPORTED, HUB_COLLECTED):
            if phase in self.hub:
                steps[SPENT_ON[phase]] = self.hub[phase] - previous
                previous = self.hub[phase]
        for phase in WORKER_PHASES:
            spans = [w[phase] - _before(w, phase, previous) for w in self.workers.values()
                     if phase in w]
            if spans:
                steps[SPENT_ON[phase]] = max(spans)
        return steps


def _before(worker: Mapping[str, float], phase: str, hub_ready: float) -> float:
    index = WORKER_PHASES.index(phase)
    return hub_ready if index == 0 else worker.get(WORKER_PHASES[index - 1], hub_ready)


def read_startup(path: Path, started_at: float) -> Startup:
    """The phases logged in `path` so far (a line being written is skipped)."""
    startup = Startup(started_at)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return startup
    hub_pid: int | None = None
    for line in text.splitlines():
        try:
            record = json.loads(line)
            pid, phase, at = int(record["pid"]), str(record["phase"]), float(record["at"])
        except (ValueError, KeyError, TypeError):
            continue
        if phase.startswith("hub"):
            hub_pid = pid
            startup.hub.setdefault(phase, at)
        elif pid != hub_pid:
            startup.workers.setdefault(pid, {}).setdefault(phase, at)
    return startup
