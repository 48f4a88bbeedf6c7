"""One scan of a tree with the baseline applied, grouped by file for per-file pytest items.

The scan itself (discovery, cached analysis, the tree-level pass, suppressions) is
`invariants.scan.runner.scan`; this adds the baseline and answers "what fails in this
file?" and "what fails that belongs to no scanned file?" (the emit-site canary, a path that
does not exist, a stale entry of a file that is not scanned any more).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from invariants.scan import baseline as baselines
from invariants.scan.model import Finding, ScanConfig
from invariants.scan.problems import Problem
from invariants.scan.runner import ScanResult, scan


@dataclass
class ScanVerdict:
    result: ScanResult
    findings: list[Finding]  # not suppressed, not covered by the baseline: these fail
    problems: list[Problem]  # scan errors plus stale baseline entries: these fail too
    baselined: int
    outcome: baselines.Outcome | None = None  # the baseline comparison, where one was given
    _by_path: dict[str, list[Finding]] = field(default_factory=dict)
    _problems_by_path: dict[str, list[Problem]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for finding in self.findings:
            self._by_path.setdefault(finding.path, []).append(finding)
        for problem in self.problems:
            self._problems_by_path.setdefault(problem.path, []).append(problem)

    def findings_in(self, path: str) -> list[Finding]:
        return self._by_path.get(path, [])

    def problems_in(self, path: str) -> list[Problem]:
        return self._problems_by_path.get(path, [])

    def unowned(self) -> tuple[list[Finding], list[Problem]]:
        """Findings and problems of no scanned file: they fail the tree-level item."""
        scanned = set(self.result.scanned_paths)
        return (
            [f for f in self.findings if f.path not in scanned],
            [p for p in self.problems if p.path not in scanned],
        )

    def per_rule(self) -> Counter[str]:
        return Counter(finding.rule for finding in self.findings)


def baseline_not_found(path: Path) -> baselines.BaselineError:
    """The one line every entry point gives for a baseline that is named but missing."""
    return baselines.BaselineError(
        f"{path}: baseline not found (create it with "
        f"`python -m harness scan --baseline {path} --update-baseline`)"
    )


def load_baseline(path: Path | None) -> Counter[tuple[str, str, str, str]] | None:
    """The baseline's entries; a missing file is an error (a typo must not pass silently)."""
    if path is None:
        return None
    if not path.exists():
        raise baseline_not_found(path)
    return baselines.load(path)


def run_scan(
    paths: Sequence[str],
    config: ScanConfig,
    root: Path,
    *,
    cache_dir: Path | None,
    baseline: Counter[tuple[str, str, str, str]] | None,
    jobs: int = 1,
) -> ScanVerdict:
    """The scan with `baseline` applied: what fails, and what the baseline covered. Every
    entry point that scans (the plugin, `scan`, `check`) goes through here."""
    result = scan(paths, config, root=root, jobs=jobs, cache_dir=cache_dir)
    if baseline is None:
        return ScanVerdict(result, list(result.findings), list(result.errors), 0)
    outcome = baselines.compare(result.findings, baseline, config, result.scanned_paths)
    return ScanVerdict(
        result, outcome.new, sorted([*result.errors, *outcome.stale]), outcome.baselined,
        outcome,
    )
