"""Problems a scan reports beside findings: the "errors" list of every output format.

Findings are defects in the scanned code, each under a rule; these are defects in how the
scan is set up or annotated (a malformed or unused suppression, a stale baseline entry, an
emit-site count that differs from `expected_emit_sites`, a file not analysed). Each one fails
the scan: exit 1, or exit 3 when every error is a file not analysed and there is no finding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# The kinds, stable strings used in JSON and SARIF output.
MALFORMED_SUPPRESSION = "malformed-suppression"
UNUSED_SUPPRESSION = "unused-suppression"
STALE_BASELINE = "stale-baseline"
EMIT_SITE_COUNT = "emit-site-count"
# A file CPython accepts that the scan could not analyse (libcst refused it, a screen
# for libcst's slow shapes did, or a rule gave up on it): never a MESH000 finding.
NOT_ANALYSED = "not-analysed"
# A team rule (`[tool.harness] rules`) that raised on a file, or in its whole-tree pass: the
# rule's defect, with its traceback, never a finding; the other rules and files still ran.
RULE_ERROR = "rule-error"


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    path: str  # posix, relative to the scan root ("" when not tied to a file)
    line: int  # 1-based, 0 when not tied to a line
    kind: str
    message: str

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "path": self.path, "line": self.line, "message": self.message}


# The scan's exit status when every error is a file not analysed and nothing was found: the
# scanned code may be fine, but part of it went unchecked.
NOT_ANALYSED_EXIT = 3


def exit_status(has_findings: bool, errors: Sequence[Problem]) -> int:
    """0 clean; 1 findings or errors; 3 only files not analysed (see docs/scanning.md)."""
    if has_findings or any(problem.kind != NOT_ANALYSED for problem in errors):
        return 1
    return NOT_ANALYSED_EXIT if errors else 0
