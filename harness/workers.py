"""`--jobs K`, as every job that runs work in forked workers reads it (`check`, `prove`).

The default, 0, is one worker per core this process may run on: the work is CPU-bound
and the results are the same for every K (`--jobs 1` runs everything in this process).
"""

from __future__ import annotations

import os
from typing import Any


def available_cores() -> int:
    """The cores this process may run on (its affinity where the platform tells it)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        return max(len(affinity(0)), 1)
    return os.cpu_count() or 1


def add_jobs_option(parser: Any, runs: str) -> None:
    """`--jobs K`: `runs` says what the workers run."""
    parser.add_argument("--jobs", type=int, metavar="K", default=0,
                        help=f"worker processes for {runs} (default 0: one per core; 1: "
                        "all in this process; the results are the same for every K)")


def jobs_problem(jobs: int) -> str | None:
    """The usage error of a bad `--jobs` (one line), or None."""
    return f"--jobs: must be 0 (one per core) or more, got {jobs}" if jobs < 0 else None


def worker_count(jobs: int) -> int:
    """How many workers `--jobs jobs` runs: 0 is one per available core."""
    return jobs or available_cores()
