"""What the per-file step yields: the analysis plus the file's suppression directives.

It is the unit that is cached and sent back from worker processes, so it holds only plain
data derived from the file's bytes, its path and the configuration.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from invariants.scan.model import FileReport
from invariants.scan.problems import Problem
from invariants.scan.suppress import Suppression


@dataclass(slots=True)
class FileOutcome:
    report: FileReport
    suppressions: list[Suppression] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)  # malformed suppressions
    cached: bool = False  # served from the cache (not stored in it)
