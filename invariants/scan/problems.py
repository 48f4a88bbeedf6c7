"""Problems a scan reports beside findings: the "errors" list of every output format.

Findings are defects in the scanned code, each under a rule; these are defects in how the
scan is set up or annotated (a malformed or unused suppression, a stale baseline entry, an
emit-site count that differs from `expected_emit_sites`). Each one fails the scan (exit 1).
"""

from __future__ import annotations

from dataclasses import dataclass

# The kinds, stable strings used in JSON and SARIF output.
MALFORMED_SUPPRESSION = "malformed-suppression"
UNUSED_SUPPRESSION = "unused-suppression"
STALE_BASELINE = "stale-baseline"
EMIT_SITE_COUNT = "emit-site-count"


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    path: str  # posix, relative to the scan root ("" when not tied to a file)
    line: int  # 1-based, 0 when not tied to a line
    kind: str
    message: str

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "path": self.path, "line": self.line, "message": self.message}
