"""Run HypoFuzz for at most N minutes in its own process group, then stop it cleanly.

HypoFuzz runs until it is stopped (or every test has failed). The harness owns the time
box: it starts `hypothesis fuzz -n K --no-dashboard -- <targets>` as a new session (so the
hub, its manager and its workers share one process group), waits on it, polls the
database for new failures, and at the deadline sends SIGTERM to the group, then SIGKILL
to whatever is left after a grace period. The box's clock starts after start-up, once
every worker has run its first example (`startup`), so a short box under load is spent
fuzzing; a start-up that has not finished after `STARTUP_LIMIT_SECONDS` starts it then.
Nothing is left running when `run_session` returns, also when it is interrupted: an
interrupt (Ctrl-C, or SIGTERM or SIGHUP to the harness, `invariants.interrupts`) stops the
group, then goes on up, with no summary.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import invariants.fuzzing.targets_path as targets_path
from invariants import interrupts
from invariants.fuzzing.config import FuzzConfig
from invariants.fuzzing.observed import observed_directory
from invariants.fuzzing.schedule import ENV_SLICE_SECONDS, slice_seconds
from invariants.fuzzing.startup import ENV_STARTUP_LOG, read_startup
from invariants.fuzzing.startup import LOG_NAME as STARTUP_LOG

POLL_SECONDS = 1.0
GRACE_SECONDS = 10.0
KILL_CHECK_SECONDS = 0.05
STARTUP_LIMIT_SECONDS = 60.0  # the box starts then at the latest, start-up done or not
LOG_NAME = "hypofuzz.log"
INI_NAME = "pytest.ini"
TMP_NAME = "tmp"

# pytest options for the collection HypoFuzz runs in the hub and in each worker: only the
# target module, with the session's own (empty) ini, and none of the project's conftest
# files or plugins that would add work or output to every worker.
_PYTEST_ISOLATION = ("--noconftest", "-p", "no:cacheprovider", "-p", "no:harness")


@dataclass(frozen=True)
class SessionPlan:
    config: FuzzConfig
    workers: int
    seconds: float
    stop_on_failure: bool = False
    grace_seconds: float = GRACE_SECONDS
    min_examples: int = 1  # a test with fewer examples than this did not get its share

    @property
    def processes(self) -> int:
        """Every worker is used: with more workers than tests, tests get several
        (`schedule.assign`)."""
        return max(1, self.workers)

    @property
    def slice_seconds(self) -> float:
        """How long each worker fuzzes one of its tests before it turns to the next."""
        return slice_seconds(self.seconds, len(self.config.invariants), self.processes)


@dataclass(frozen=True)
class SessionRun:
    elapsed: float  # seconds from start to the end of the shutdown
    started_at: float  # epoch seconds, to relate observed test cases to the session
    ended_by: str  # "time box", "failure found", "hypofuzz exited"
    exit_code: int | None  # HypoFuzz's own exit code when it exited by itself
    first_failure_seconds: float | None  # when the database first held a new failure
    log_path: Path
    # From the start until the box's clock started: every worker had run an example. None:
    # start-up did not finish within STARTUP_LIMIT_SECONDS (the box started then).
    startup_seconds: float | None = 0.0

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def hypofuzz_command(plan: SessionPlan, session_dir: Path) -> list[str]:
    module = targets_path.targets_file()
    return [
        sys.executable,
        "-m",
        "invariants.fuzzing.hypofuzz_main",
        "-n",
        str(plan.processes),
        "--no-dashboard",
        "--",
        str(module),
        "-c",
        str(session_dir / INI_NAME),
        "--rootdir",
        str(module.parent),
        *_PYTEST_ISOLATION,
    ]


def session_environ(
    plan: SessionPlan, base: Mapping[str, str], cwd: Path, session_dir: Path
) -> dict[str, str]:
    env = dict(base)
    env.update(plan.config.to_environ())
    env[ENV_SLICE_SECONDS] = f"{plan.slice_seconds:.3f}"
    env[ENV_STARTUP_LOG] = str(session_dir / STARTUP_LOG)
    # Every test case a worker runs is written to the session's observed/ directory.
    env["HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY"] = "1"
    env["HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY_NOCOVER"] = "1"
    # The session runs in its own directory; the caller's modules (its adapter) stay
    # importable as they were from where the harness was started.
    paths = [str(cwd), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    # A killed hub runs no exit handlers; what it and its workers put in temporary
    # directories (a mutant's source copy) goes with the session directory instead.
    env["TMPDIR"] = str(session_dir / TMP_NAME)
    return env


def prepare(session_dir: Path) -> None:
    session_dir.mkdir(parents=True, exist_ok=True)
    (session_dir / TMP_NAME).mkdir(exist_ok=True)
    # A kept session directory may hold an earlier session's test cases: not this one's.
    shutil.rmtree(observed_directory(session_dir), ignore_errors=True)
    (session_dir / STARTUP_LOG).unlink(missing_ok=True)
    (session_dir / INI_NAME).write_text("[pytest]\n", encoding="utf-8")


@dataclass(frozen=True)
class Supervised:
    ended_by: str
    exit_code: int | None
    first_failure_seconds: float | None
    elapsed: float
    startup_seconds: float | None = 0.0  # when the box started (None: at the limit)


def _at_once() -> float:
    return 0.0


@dataclass
class _Box:
    """The time box, whose clock starts when start-up is over (or at the limit)."""

    seconds: float
    started: Callable[[], float | None]
    startup_limit: float
    start: float = field(default_factory=time.monotonic)
    startup: float | None = None

    def deadline(self) -> float:
        if self.startup is None and time.monotonic() - self.start < self.startup_limit:
            self.startup = self.started()
        opened = self.startup if self.startup is not None else self.startup_limit
        return self.start + opened + self.seconds


def supervise(
    process: subprocess.Popen[bytes],
    *,
    seconds: float,
    new_failure: Callable[[], bool],
    stop_on_failure: bool = False,
    grace_seconds: float = GRACE_SECONDS,
    started: Callable[[], float | None] = _at_once,
    startup_limit: float = STARTUP_LIMIT_SECONDS,
) -> Supervised:
    """Wait on a session leading its own process group for `seconds` after its start-up,
    polling `new_failure()` and `started()` (seconds from the start until start-up was
    over, None while it is not; default: no start-up) about once a second; then stop the
    whole group (also when interrupted, before the interrupt goes on up)."""
    box = _Box(seconds, started, startup_limit)
    start = box.start
    first_failure: float | None = None
    exit_code: int | None = None
    ended_by = "time box"
    try:
        while True:
            remaining = box.deadline() - time.monotonic()
            if remaining <= 0:
                break
            try:
                exit_code = process.wait(timeout=min(POLL_SECONDS, remaining))
            except subprocess.TimeoutExpired:
                pass
            else:
                ended_by = "hypofuzz exited"
                break
            if first_failure is None and new_failure():
                first_failure = time.monotonic() - start
                if stop_on_failure:
                    ended_by = "failure found"
                    break
    finally:
        stop_group(process, grace_seconds)
    if first_failure is None and new_failure():  # saved just before the stop
        first_failure = time.monotonic() - start
    return Supervised(ended_by, exit_code, first_failure, time.monotonic() - start,
                      box.startup)


def run_session(
    plan: SessionPlan,
    session_dir: Path,
    *,
    new_failure: Callable[[], bool],
    environ: Mapping[str, str] | None = None,
) -> SessionRun:
    """Run one time-boxed HypoFuzz session in `session_dir`."""
    prepare(session_dir)
    log_path = session_dir / LOG_NAME
    base = os.environ if environ is None else environ
    env = session_environ(plan, base, Path.cwd(), session_dir)
    started_at = time.time()  # reported beside observed test cases, never decides anything
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            hypofuzz_command(plan, session_dir),
            cwd=session_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        outcome = supervise(
            process,
            seconds=plan.seconds,
            new_failure=new_failure,
            stop_on_failure=plan.stop_on_failure,
            grace_seconds=plan.grace_seconds,
            started=partial(_startup_over, session_dir / STARTUP_LOG, started_at,
                            plan.processes),
        )
    return SessionRun(
        elapsed=outcome.elapsed,
        started_at=started_at,
        ended_by=outcome.ended_by,
        exit_code=outcome.exit_code,
        first_failure_seconds=outcome.first_failure_seconds,
        log_path=log_path,
        startup_seconds=outcome.startup_seconds,
    )


def _startup_over(log: Path, started_at: float, workers: int) -> float | None:
    """Seconds from the start until every worker had run its first example, or None."""
    return read_startup(log, started_at).seconds(workers)


def stop_group(process: subprocess.Popen[bytes], grace_seconds: float) -> None:
    """SIGTERM the session's process group, then SIGKILL what is left after the grace."""
    group = process.pid  # start_new_session: the hub leads its own group
    with interrupts.deferred():  # a second Ctrl-C must not leave the group running
        start = time.monotonic()
        _signal_group(group, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace_seconds)
        # The hub goes at once; its workers first write out what they still hold (the
        # failures, corpus and reports queued for the database), within the same grace.
        _await_group_exit(group, grace_seconds - (time.monotonic() - start))
        # Nothing of the group may survive.
        _signal_group(group, signal.SIGKILL)
        process.wait()
        _await_group_exit(group, grace_seconds)


def _signal_group(group: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # the whole group has already exited
        os.killpg(group, signum)


def _await_group_exit(group: int, limit_seconds: float) -> None:
    """SIGKILL takes effect asynchronously; wait (bounded) until no member still runs."""
    settled = threading.Event()
    for _ in range(max(1, int(limit_seconds / KILL_CHECK_SECONDS))):
        if not group_members(group):
            return
        settled.wait(KILL_CHECK_SECONDS)


def group_members(group: int) -> list[int]:
    """Processes of the group that still run (a killed one awaiting its reaper does not)."""
    proc = Path("/proc")
    if not proc.is_dir():  # no procfs: ask the kernel whether any member is left
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return []
        return [group]
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue  # exited while we looked
        # pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its ")".
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == group and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members
