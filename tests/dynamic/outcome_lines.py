"""An outcome in one line, for an assertion's message."""

from __future__ import annotations

from invariants.dynamic.runner import Outcome


def summary_line(outcome: Outcome) -> str:
    steps = "-" if outcome.shrunk_steps is None else str(outcome.shrunk_steps)
    line = (
        f"{outcome.check_id}: {outcome.verdict} examples={outcome.examples} "
        f"steps={steps} seconds={outcome.seconds:.2f}"
    )
    evidence = "; ".join(f"{name}: {count}" for name, count in outcome.evidence.items())
    return line + (f" evidence: {evidence}" if evidence else "")
