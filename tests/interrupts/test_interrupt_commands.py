"""A signal to any harness command ends it with 128 + the signal's number, one line saying it
was interrupted, no verdict, and none of its processes left running.

Each command runs as a child in a session of its own; a signal "to the group" is what a
terminal sends (Ctrl-C, a hang-up), one to the process alone what a supervisor sends. The
points: a mesh step under way (the adapter blocks in it and says so), the reference's INV6
(its collections are long: the Ctrl-C that used to be swallowed), a scan's parser workers
at work, a mutation score's workers each in a step, a HypoFuzz session's workers fuzzing.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from interrupt_runs import (
    EXIT_CODES,
    HANG_GUARD_SECONDS,
    MODE_ENV,
    Command,
    Ended,
    big_tree,
    children,
    interrupted_lines,
    repo,
)

SIGINT, SIGTERM, SIGHUP = signal.SIGINT, signal.SIGTERM, signal.SIGHUP


def _no_verdict(ended: Ended, signum: signal.Signals, command: str) -> None:
    assert ended.returncode == EXIT_CODES[signum], ended.output
    assert interrupted_lines(ended) == [
        f"mesh-harness {command}: interrupted ({signum.name}): no verdict"
    ], ended.stderr
    assert "Traceback" not in ended.output, ended.output
    assert not ended.left, f"still running after the command exited: {ended.left}"


@pytest.mark.parametrize(("signum", "group"), [
    (SIGINT, True), pytest.param(SIGTERM, False, marks=pytest.mark.slow)])
def test_check_in_a_mesh_step(tmp_path: Path, signum: signal.Signals, group: bool) -> None:
    command = Command(["harness", "check"], repo(tmp_path), env={MODE_ENV: "block"})
    command.wait_for_mesh("blocked")
    ended = command.signal(signum, group=group)
    _no_verdict(ended, signum, "check")
    assert "Result:" not in ended.stdout
    assert ": pass on its own run (" not in ended.stderr  # no invariant reached its verdict


@pytest.mark.parametrize(("signum", "group"), [(SIGINT, True), (SIGHUP, True)])
@pytest.mark.slow
def test_check_during_the_reference_inv6(
    tmp_path: Path, signum: signal.Signals, group: bool
) -> None:
    command = Command(["harness", "check", "--no-prove", "--invariants", "INV6"], tmp_path)
    command.wait_for_line("dynamic invariants on the reference mesh")
    ended = command.signal(signum, group=group)
    _no_verdict(ended, signum, "check")
    assert "Result:" not in ended.stdout
    assert "INV6 on" not in ended.stderr  # its run gave no verdict, pass or fail


@pytest.mark.parametrize(("signum", "group"), [
    (SIGINT, True), pytest.param(SIGTERM, False, marks=pytest.mark.slow)])
def test_prove_kill_matrix(tmp_path: Path, signum: signal.Signals, group: bool) -> None:
    command = Command(["harness", "prove", "--mutant", "M1", "--check", "INV6"], tmp_path)
    command.wait_for_line("reference")
    ended = command.signal(signum, group=group)
    _no_verdict(ended, signum, "prove")
    assert not ended.stdout  # no matrix
    assert "killed" not in ended.stderr and "survived" not in ended.stderr


@pytest.mark.parametrize(("signum", "group"), [(SIGINT, True), (SIGTERM, False)])
@pytest.mark.slow
def test_prove_kill_matrix_workers(tmp_path: Path, signum: signal.Signals, group: bool) -> None:
    command = Command(["harness", "prove", "--mutant", "M1", "--mutant", "M2", "--check",
                       "INV6", "--jobs", "2"], tmp_path)
    workers = command.wait_for_children(2)  # the pool is running the dynamic cells
    ended = command.signal(signum, group=group)
    _no_verdict(ended, signum, "prove")
    assert workers <= ended.started
    assert not ended.stdout  # no matrix


@pytest.mark.parametrize(("signum", "group"), [(SIGINT, True), (SIGTERM, False)])
@pytest.mark.slow
def test_prove_mutate_workers(tmp_path: Path, signum: signal.Signals, group: bool) -> None:
    command = Command(
        ["harness", "prove", "--mutate", "--jobs", "2", "--no-cache", "--sample", "4"],
        repo(tmp_path), env={MODE_ENV: "block-in-worker"},
    )
    worker = command.wait_for_mesh("blocked")  # a worker is in a mutant's step
    assert worker in children(command.process.pid)
    ended = command.signal(signum, group=group)
    _no_verdict(ended, signum, "prove")
    assert worker in ended.started
    assert "mutation score" not in ended.stdout
    assert "] cr-" not in ended.stderr  # no mutant got a verdict


@pytest.mark.parametrize(("signum", "group", "jobs"),
                         [(SIGTERM, False, "1"), (SIGINT, True, "2"), (SIGHUP, True, "1")])
def test_scan_parser_workers(
    tmp_path: Path, signum: signal.Signals, group: bool, jobs: str
) -> None:
    command = Command(["harness", "scan", "--no-cache", "--jobs", jobs], big_tree(tmp_path))
    workers = command.wait_for_children(int(jobs))
    ended = command.signal(signum, group=group)
    _no_verdict(ended, signum, "scan")
    assert workers <= ended.started
    assert not ended.stdout  # no findings, no "clean"
    assert "MESH000" not in ended.output and "not analysed" not in ended.output


@pytest.mark.parametrize(("signum", "group"), [(SIGINT, True), (SIGTERM, False)])
@pytest.mark.slow
def test_pytest_plugin_in_a_mesh_step(
    tmp_path: Path, signum: signal.Signals, group: bool
) -> None:
    command = Command(["pytest", "-p", "harness", "-p", "no:cacheprovider", "-q"],
                      repo(tmp_path), env={MODE_ENV: "block"})
    command.wait_for_mesh("blocked")
    ended = command.signal(signum, group=group)
    assert ended.returncode == EXIT_CODES[signum], ended.output
    assert f"mesh-harness: interrupted ({signum.name}): the run is incomplete, no verdict" in (
        ended.stdout
    )
    assert "failed" not in ended.stdout and "error" not in ended.stdout.lower()
    assert "harness::INV1" not in ended.stdout  # the interrupted item has no outcome
    assert not ended.left, f"still running after pytest exited: {ended.left}"


@pytest.mark.parametrize(("signum", "group"), [(SIGTERM, False), (SIGHUP, False), (SIGINT, True)])
@pytest.mark.slow
def test_fuzz_session(tmp_path: Path, signum: signal.Signals, group: bool) -> None:
    pytest.importorskip("hypofuzz", reason="needs the fuzz extra: pip install -e '.[fuzz]'")
    command = Command(["harness", "fuzz", "--minutes", "5", "--workers", "2",
                       "--invariant", "INV1"], repo(tmp_path), env={MODE_ENV: "announce"})
    worker = command.wait_for_mesh("stepping")  # a HypoFuzz worker runs the machine
    ended = command.signal(signum, group=group)
    _no_verdict(ended, signum, "fuzz")
    assert worker in ended.started  # the hub's workers were the command's to stop
    assert "fuzz session:" not in ended.stdout  # no summary, no exit code of one


@pytest.mark.parametrize("signum", [SIGTERM, pytest.param(SIGINT, marks=pytest.mark.slow)])
def test_an_in_place_mutate_run_says_it_was_interrupted_on_standard_output(
    tmp_path: Path, signum: signal.Signals
) -> None:
    # What a Cosmic Ray worker runs: it records standard output and counts a non-zero exit
    # without a verdict line as a kill, so the run says on standard output why it had none.
    command = Command(["harness", "prove", "--mutate", "--in-place"], repo(tmp_path),
                      env={MODE_ENV: "block"})
    command.wait_for_mesh("blocked")
    ended = command.signal(signum)
    _no_verdict(ended, signum, "prove")
    assert ended.stdout.splitlines() == [f"harness-interrupted: {signum.name}"]


@pytest.mark.slow
def test_check_fails_a_blocked_step_as_hung_within_the_wall_budget(tmp_path: Path) -> None:
    command = Command(["harness", "check"], repo(tmp_path),
                      env={MODE_ENV: "block", "HARNESS_STEP_WALL_BUDGET": "0.5"})
    command.wait_for_mesh("blocked")
    stdout, stderr = command.process.communicate(timeout=HANG_GUARD_SECONDS)
    os.close(command.announced)
    assert command.process.returncode == 1, stdout + stderr.decode()
    text = stdout.decode()
    assert "Result: FAIL" in text
    assert "MeshHung: step 'advance' at " in text
    assert "did not return within 0.5 seconds of wall-clock time" in text
