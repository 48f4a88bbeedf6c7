"""`--jobs` of `check` and `prove`: 0, the default, is one worker per available core."""

from __future__ import annotations

import argparse

import pytest

from harness import workers
from harness.workers import add_jobs_option, jobs_problem, worker_count


def test_the_default_is_one_worker_per_available_core(monkeypatch: pytest.MonkeyPatch) -> None:
    parser = argparse.ArgumentParser()
    add_jobs_option(parser, "the cells")
    assert parser.parse_args([]).jobs == 0
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    assert worker_count(0) == 3
    assert worker_count(1) == 1 and worker_count(4) == 4


def test_without_affinity_the_cpu_count_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(workers.os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(workers.os, "cpu_count", lambda: None)
    assert worker_count(0) == 1


def test_a_negative_count_is_a_usage_error() -> None:
    assert jobs_problem(0) is None and jobs_problem(2) is None
    assert jobs_problem(-1) == "--jobs: must be 0 (one per core) or more, got -1"
