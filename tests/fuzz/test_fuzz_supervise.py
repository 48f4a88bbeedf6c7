"""The time box and the clean shutdown of a session's whole process group.

The "sessions" here are small Python processes that block forever (on stdin, or ignoring
SIGTERM), each with a child in the same group, so only the harness can end them.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from invariants.fuzzing.session import group_members, stop_group, supervise


def group_alive(group: int) -> bool:
    """Whether some process of the group still runs."""
    return bool(group_members(group))


# A parent that starts a child in its own group, prints the child's pid, then blocks.
BLOCKING = """
import signal, subprocess, sys
if len(sys.argv) > 1:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                         stdin=subprocess.PIPE)
print(child.pid, flush=True)
sys.stdin.read()
"""


@pytest.fixture
def session() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        [sys.executable, "-c", BLOCKING], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout is not None
    process.stdout.readline()  # the child is running
    yield process
    stop_group(process, 1.0)  # whatever a test left, never leak it
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            stream.close()


def test_the_time_box_ends_the_session_and_its_group(session: subprocess.Popen[bytes]) -> None:
    assert group_alive(session.pid)  # control: it would run forever on its own
    outcome = supervise(session, seconds=0.5, new_failure=lambda: False)
    assert outcome.ended_by == "time box"
    assert outcome.first_failure_seconds is None
    assert not group_alive(session.pid)


@pytest.mark.slow
def test_a_new_failure_ends_the_session_when_asked(session: subprocess.Popen[bytes]) -> None:
    polls = iter([False, True])
    outcome = supervise(
        session, seconds=600, new_failure=lambda: next(polls, True), stop_on_failure=True
    )
    assert outcome.ended_by == "failure found"
    assert outcome.first_failure_seconds is not None
    assert not group_alive(session.pid)


def test_a_failure_is_noted_but_the_session_continues_by_default(
    session: subprocess.Popen[bytes],
) -> None:
    outcome = supervise(session, seconds=1.5, new_failure=lambda: True)
    assert outcome.ended_by == "time box"
    assert outcome.first_failure_seconds is not None


def test_a_session_that_exits_by_itself_is_reported() -> None:
    process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"],
                               start_new_session=True)
    outcome = supervise(process, seconds=600, new_failure=lambda: False)
    assert (outcome.ended_by, outcome.exit_code) == ("hypofuzz exited", 3)


def test_what_ignores_sigterm_is_killed() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", BLOCKING, "ignore-term"], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, start_new_session=True,
    )
    assert process.stdout is not None and process.stdin is not None
    process.stdout.readline()  # SIGTERM is ignored from here on
    stop_group(process, 0.5)
    assert process.returncode is not None and process.returncode < 0
    assert not group_alive(process.pid)
    process.stdout.close()
    process.stdin.close()


# A leader that dies at SIGTERM, with a child that, at SIGTERM, writes out what it holds
# (as a HypoFuzz worker does) and exits, but only once the leader is gone: exited and
# reaped, that is, once `stop_group` has seen the leader end. A stop that killed the group
# with its leader would kill the child before it wrote. The child looks every 10 ms whether
# the leader is still there (no event tells a process that another was reaped); the
# grace of `stop_group` bounds its wait.
WRITES_AT_STOP = """
import signal, subprocess, sys
child = subprocess.Popen([sys.executable, "-c", '''
import os, signal, sys, threading
leader = os.getppid()
def stop(signum, frame):
    while True:
        try:
            os.kill(leader, 0)  # a zombie still takes it: not yet reaped
        except ProcessLookupError:
            break
        threading.Event().wait(0.01)
    open(sys.argv[1], "w").write("written")
    os._exit(0)
signal.signal(signal.SIGTERM, stop)
print("ready", flush=True)
sys.stdin.read()
''', sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
child.stdout.readline()
print(child.pid, flush=True)
sys.stdin.read()
"""


def test_the_stop_lets_workers_write_out_within_the_grace(tmp_path: Path) -> None:
    written = tmp_path / "written"
    process = subprocess.Popen(
        [sys.executable, "-c", WRITES_AT_STOP, str(written)], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, start_new_session=True,
    )
    assert process.stdout is not None and process.stdin is not None
    process.stdout.readline()  # the child has its handler
    stop_group(process, 10.0)
    assert written.exists(), "the child was killed before it wrote out"
    assert written.read_text() == "written"  # not killed with the leader
    assert not group_alive(process.pid)
    process.stdout.close()
    process.stdin.close()


@pytest.mark.slow
def test_the_box_starts_once_start_up_is_over(session: subprocess.Popen[bytes]) -> None:
    polls = iter([None, None])  # start-up is over at the third poll, 1.5 s after the start
    outcome = supervise(session, seconds=0.5, new_failure=lambda: False,
                        started=lambda: next(polls, 1.5))
    assert outcome.ended_by == "time box" and outcome.startup_seconds == 1.5
    assert outcome.elapsed >= 2.0  # the start-up, then the whole box
    assert not group_alive(session.pid)


@pytest.mark.slow
def test_a_start_up_that_never_ends_starts_the_box_at_the_limit(
    session: subprocess.Popen[bytes],
) -> None:
    outcome = supervise(session, seconds=0.5, new_failure=lambda: False,
                        started=lambda: None, startup_limit=1.0)
    assert outcome.ended_by == "time box" and outcome.startup_seconds is None
    assert 1.5 <= outcome.elapsed < 10.0
    assert not group_alive(session.pid)
