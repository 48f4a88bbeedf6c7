"""`--jobs K`, as every job that runs work in forked workers reads it (`check`, `prove`)."""

from __future__ import annotations


def jobs_problem(jobs: int) -> str | None:
    """The usage error of a bad `--jobs` (one line), or None."""
    return f"--jobs: must be at least 1, got {jobs}" if jobs < 1 else None
