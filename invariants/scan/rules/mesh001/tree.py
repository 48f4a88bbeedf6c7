"""MESH001's whole-tree pass: the call-graph verdict on unguarded emit sites, and the
emit-site canary (`expected_emit_sites`), which fails the scan when the count differs."""

from __future__ import annotations

from collections.abc import Sequence

from invariants.scan.model import FileReport, ScanConfig
from invariants.scan.problems import EMIT_SITE_COUNT, Problem
from invariants.scan.rules.mesh001.callgraph import resolve_emit_sites
from invariants.scan.rules.mesh001.keys import EXPECTED_EMIT_SITES
from invariants.scan.rules.spec import TreeResult


def _canary(reports: Sequence[FileReport], config: ScanConfig) -> list[Problem]:
    expected = EXPECTED_EMIT_SITES.of(config)
    found = sum(len(report.emit_sites) for report in reports)
    if expected is None or expected == found:
        return []
    return [
        Problem("", 0, EMIT_SITE_COUNT,
                f"found {found} emit sites, expected_emit_sites = {expected}: "
                "the emit matcher or the code changed; check the inventory (--inventory)")
    ]


def tree_pass(reports: Sequence[FileReport], config: ScanConfig) -> TreeResult:
    return TreeResult(resolve_emit_sites(reports, config), _canary(reports, config))
