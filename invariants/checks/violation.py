"""A broken invariant, stated with the trace events that show it."""

from __future__ import annotations

from dataclasses import dataclass

from invariants.trace import TraceEvent


@dataclass(frozen=True, slots=True)
class Violation:
    """One counterexample: which check, what went wrong, and the events that prove it."""

    check_id: str
    message: str
    events: tuple[TraceEvent, ...] = ()

    @property
    def seqs(self) -> tuple[int, ...]:
        return tuple(e.seq for e in self.events)

    def __str__(self) -> str:
        where = ", ".join(f"seq {e.seq} @ {e.time_ms} ms ({e.kind.value})" for e in self.events)
        return f"{self.check_id}: {self.message}" + (f" [{where}]" if where else "")


def describe(violations: list[Violation], limit: int = 20) -> str:
    """Several violations as text, one per line, bounded so a flood stays readable."""
    lines = [str(v) for v in violations[:limit]]
    if len(violations) > limit:
        lines.append(f"... and {len(violations) - limit} more")
    return "\n".join(lines)
