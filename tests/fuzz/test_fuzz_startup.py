"""A session's start-up log: the phases the hub and each worker reach, read back into when
the box's clock starts and what start-up was spent on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from invariants.fuzzing.startup import (
    ENV_STARTUP_LOG,
    FIRST_EXAMPLE,
    HUB_COLLECTED,
    HUB_IMPORTED,
    WORKER_COLLECTED,
    WORKER_DATABASE,
    WORKER_STARTED,
    mark,
    read_startup,
)


def _log(path: Path, records: list[tuple[int, str, float]], torn: str = "") -> None:
    lines = [json.dumps({"pid": pid, "phase": phase, "at": at}) for pid, phase, at in records]
    path.write_text("\n".join(lines) + "\n" + torn, encoding="utf-8")


def _session(path: Path, *, second_ready: bool = True) -> None:
    records = [(1, HUB_IMPORTED, 100.5), (1, HUB_COLLECTED, 102.0)]
    for pid, late in ((2, 0.0), (3, 0.5)):
        records += [(pid, WORKER_STARTED, 102.0 + late), (pid, WORKER_COLLECTED, 102.1 + late),
                    (pid, WORKER_DATABASE, 102.2 + late)]
        if pid == 2 or second_ready:
            records.append((pid, FIRST_EXAMPLE, 103.2 + late))
    _log(path, records, torn='{"pid": 3, "pha')


def test_the_box_starts_when_the_last_worker_has_run_an_example(tmp_path: Path) -> None:
    _session(tmp_path / "startup.jsonl")
    startup = read_startup(tmp_path / "startup.jsonl", started_at=100.0)
    assert startup.seconds(workers=2) == pytest.approx(3.7)
    assert startup.seconds(workers=3) is None  # a third worker has not started yet
    _session(tmp_path / "startup.jsonl", second_ready=False)
    assert read_startup(tmp_path / "startup.jsonl", 100.0).seconds(workers=2) is None


def test_the_breakdown_names_what_each_second_was_spent_on(tmp_path: Path) -> None:
    _session(tmp_path / "startup.jsonl")
    phases = read_startup(tmp_path / "startup.jsonl", started_at=100.0).breakdown()
    assert list(phases) == ["hub imports", "hub collection", "fork", "worker collection",
                            "worker database", "first example"]
    expected = [0.5, 1.5, 0.5, 0.1, 0.1, 1.0]  # a worker's: the slowest worker's
    assert list(phases.values()) == pytest.approx(expected)


def test_a_missing_log_is_no_start_up_yet(tmp_path: Path) -> None:
    startup = read_startup(tmp_path / "absent.jsonl", started_at=100.0)
    assert startup.seconds(workers=1) is None and startup.breakdown() == {}


def test_mark_appends_a_line_only_when_a_log_is_named(tmp_path: Path) -> None:
    log = tmp_path / "startup.jsonl"
    mark(WORKER_STARTED, {})
    assert not log.exists()
    mark(WORKER_STARTED, {ENV_STARTUP_LOG: str(log)})
    mark(FIRST_EXAMPLE, {ENV_STARTUP_LOG: str(log)})
    startup = read_startup(log, started_at=0.0)
    assert [list(phases) for phases in startup.workers.values()] == [
        [WORKER_STARTED, FIRST_EXAMPLE]]
