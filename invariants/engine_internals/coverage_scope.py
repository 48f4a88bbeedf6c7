"""HypoFuzz's coverage guidance, measured on the mesh under test and not on the harness.

HypoFuzz traces every line of every file outside the standard library and its own
dependencies: on Python before 3.12 with a `sys.settrace` function called for each line.
Most lines an example runs are the harness's own (the driver posting, every monitor
reading every trace event), and their branches say nothing about the mesh that the mesh's
own branches and the goals do not; tracing them cost more than half of each example's
time (examples in 15 s of one worker, before and after: INV1 150 and 274; INV5 173 and
324; INV6 8 and 12).

`measure_the_mesh_only` leaves the `invariants` package out of what HypoFuzz traces, and
on Python before 3.12 skips the frames of every file it does not trace at once (the
trace function is not asked about their lines at all). What is traced of the mesh, a
mutant's copy of it included, is unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any

import invariants
from invariants.engine_internals import HYPOFUZZ_PIN, private_attribute, private_imports

with private_imports("hypofuzz", HYPOFUZZ_PIN):
    import hypofuzz.coverage as hypofuzz_coverage

HARNESS_DIRECTORY = str(Path(invariants.__file__).resolve().parent) + os.sep
_MARK = "_harness_mesh_only"

# HypoFuzz's own filter and line tracer, kept for the negative control in the tests.
TRACES_ALL: Callable[[str], bool] = private_attribute(
    hypofuzz_coverage, "should_trace", HYPOFUZZ_PIN)
_TRACE_LINES: Callable[..., Any] = private_attribute(
    private_attribute(hypofuzz_coverage, "CoverageCollector", HYPOFUZZ_PIN), "trace_pre_312",
    HYPOFUZZ_PIN)


@cache
def traces(filename: str) -> bool:
    """Whether HypoFuzz measures `filename`: what it would, less the harness's own code."""
    return TRACES_ALL(filename) and not filename.startswith(HARNESS_DIRECTORY)


def _trace_mesh_lines(self: Any, frame: FrameType, event: str, arg: Any) -> Any:
    if event == "call" and not traces(frame.f_code.co_filename):
        return None  # no line events for this frame; the calls it makes are still seen
    return _TRACE_LINES(self, frame, event, arg)


def measure_the_mesh_only() -> None:
    """Install `traces` as HypoFuzz's filter (once; idempotent)."""
    if getattr(hypofuzz_coverage, _MARK, False):
        return
    setattr(hypofuzz_coverage, "should_trace", traces)  # noqa: B010 (read at each call)
    if sys.version_info < (3, 12):
        setattr(hypofuzz_coverage.CoverageCollector, "trace_pre_312",  # noqa: B010
                _trace_mesh_lines)
    setattr(hypofuzz_coverage, _MARK, True)
