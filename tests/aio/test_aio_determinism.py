"""Same choices, same schedule and same output: in one process, in fresh processes, under
other hash seeds; and a replay that meets another run says where it diverged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aio_programs import run_program

from invariants.adapter import SeededChooser
from invariants.aio import Schedule, ScheduleDivergence, VirtualLoop

PROGRAMS = Path(__file__).with_name("aio_programs.py")


def _in_process(program: str, chooser: str, seed: str, replay: Path | None = None) -> Any:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    argv = [sys.executable, str(PROGRAMS), program, chooser]
    if replay is not None:
        argv.append(str(replay))
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    return done


def _output(program: str, chooser: str, seed: str) -> dict[str, Any]:
    done = _in_process(program, chooser, seed)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_same_choices_same_schedule_in_one_process() -> None:
    first = run_program("mixed", SeededChooser(11))
    second = run_program("mixed", SeededChooser(11))
    assert first[0] == second[0]
    assert first[1].dumps() == second[1].dumps()
    assert first[1].reorderings()  # the seed did reorder something


def test_same_choices_same_schedule_across_processes_and_hash_seeds() -> None:
    here_log, here_schedule = run_program("mixed", SeededChooser(11))
    runs = [_output("mixed", "seed11", seed) for seed in ("0", "1", "4242")]
    for other in runs:
        assert other["log"] == here_log
        assert other["schedule"] == here_schedule.dumps()
    assert len({run["rendered"] for run in runs}) == 1


def test_negative_control_a_program_iterating_a_set_of_strings_leaks_the_hash_seed() -> None:
    runs = [_output("hash_ordered", "first", seed) for seed in ("1", "2")]
    assert runs[0]["log"] != runs[1]["log"]
    assert runs[0]["schedule"] != runs[1]["schedule"]


def test_a_replay_of_the_same_run_passes(tmp_path: Path) -> None:
    log, schedule = run_program("mixed", SeededChooser(5))
    recording = tmp_path / "schedule.json"
    recording.write_text(schedule.dumps())
    done = _in_process("mixed", "first", "3", recording)  # the chooser is not asked
    assert done.returncode == 0, done.stderr
    replayed = json.loads(done.stdout)
    assert replayed["log"] == log
    assert replayed["schedule"] == schedule.dumps()


def test_a_replay_under_another_hash_seed_names_the_first_divergent_step(
    tmp_path: Path,
) -> None:
    recording = tmp_path / "schedule.json"
    recording.write_text(_output("hash_ordered", "first", "1")["schedule"])
    done = _in_process("hash_ordered", "first", "2", recording)
    assert done.returncode != 0
    assert "ScheduleDivergence: the run diverged from its recording at step " in done.stderr
    assert "option 0 is timer:_set_result_unless_cancelled(" in done.stderr


def test_replay_divergences_in_one_process() -> None:
    _, schedule = run_program("crossing", SeededChooser(3))
    with pytest.raises(ScheduleDivergence, match="this run had 3 options; the recording"):
        run_program("crossing", replay=_with(schedule, options=2))
    with pytest.raises(ScheduleDivergence, match="recording had no choice here"):
        run_program("crossing", replay=_with(schedule, step=+1))
    with pytest.raises(ScheduleDivergence, match="this run had one option"):
        run_program("crossing", replay=_with(schedule, step=-4))
    with pytest.raises(ScheduleDivergence, match="the recording has no more choices"):
        run_program("crossing", replay=Schedule(decisions=schedule.decisions[:1]))
    extra = Schedule(decisions=[*schedule.decisions, schedule.decisions[-1]])
    extra.decisions[-1] = _shifted(extra.decisions[-1], 10_000)
    with pytest.raises(ScheduleDivergence, match=r"recorded choice\(s\) left"):
        run_program("crossing", replay=extra)


def test_a_recording_names_its_python_and_a_divergence_says_so_when_it_differs() -> None:
    _, schedule = run_program("crossing", SeededChooser(3))
    assert schedule.python == f"{sys.version_info.major}.{sys.version_info.minor}." + str(
        sys.version_info.micro
    )
    elsewhere = Schedule.loads(schedule.dumps())
    elsewhere.python = "3.99.0"
    elsewhere.decisions[0] = _with(elsewhere, options=9).decisions[0]
    with pytest.raises(ScheduleDivergence, match=r"\(recorded on Python 3.99.0, replayed on"):
        run_program("crossing", replay=elsewhere)


def test_the_loop_keeps_the_recording_it_was_given() -> None:
    loop = VirtualLoop(replay=Schedule())
    loop.check_replay_finished()  # nothing recorded, nothing left


def _shifted(decision: Any, steps: int) -> Any:
    data = decision.to_json()
    data["step"] += steps
    return type(decision).from_json(data)


def _with(schedule: Schedule, *, options: int | None = None, step: int = 0) -> Schedule:
    data = schedule.to_json()
    first = data["decisions"][0]
    if options is not None:
        first["options"] = options
    first["step"] += step
    return Schedule.from_json(data)
