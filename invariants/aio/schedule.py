"""The schedule record: every ready-order decision the virtual loop made, and its rendering.

A decision is a step at which more than one callback could legally run next. Option 0 is
always the FIFO one (the oldest lane head, or the oldest ready callback in reorder-all
mode), so a run whose every decision chose 0 is plain FIFO, and a counterexample reads as
"FIFO except: at t=…, ran X before Y".
"""

from __future__ import annotations

import json
import platform
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

# How many of the callbacks a decision overtook are named in the record (the count is
# always exact): a storm of thousands of independent lanes must not cost a label each.
OVERTAKEN_NAMED = 4


class Legality(StrEnum):
    """Which reorderings the loop may choose."""

    # FIFO among the callbacks one step scheduled (asyncio's call_soon promise); free
    # choice among lane heads and timer ties. Every schedule is one production can run.
    LANES = "lanes"
    # Any ready callback may run next. Finds more, but may report schedules production
    # cannot produce (a task resumed before the callback that one step scheduled earlier).
    REORDER_ALL = "reorder_all"


def format_time(us: int) -> str:
    """Virtual microseconds as milliseconds, exact: `1500` is `1.5 ms`, `2000` `2 ms`."""
    ms, rest = divmod(us, 1000)
    if rest == 0:
        return f"{ms} ms"
    return f"{ms}.{rest:03d}".rstrip("0") + " ms"


@dataclass(frozen=True, slots=True)
class Decision:
    """One choice among `options` ready callbacks at `step` (1-based: the callback that ran
    was the run's step-th), at virtual time `time_us`."""

    step: int
    time_us: int
    options: int
    chosen: int
    ran: str  # what ran: a task's name, or a callback's qualified name
    overtaken: tuple[str, ...] = ()  # the first of the options before `chosen`, FIFO order

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "step": self.step, "time_us": self.time_us, "options": self.options,
            "chosen": self.chosen, "ran": self.ran,
        }
        if self.overtaken:
            data["overtaken"] = list(self.overtaken)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        return cls(
            step=int(data["step"]), time_us=int(data["time_us"]),
            options=int(data["options"]), chosen=int(data["chosen"]), ran=str(data["ran"]),
            overtaken=tuple(str(item) for item in data.get("overtaken", ())),
        )


def python_version() -> str:
    return platform.python_version()


@dataclass(slots=True)
class Schedule:
    """A run's decisions, with the Python it ran on and the legality it chose under."""

    legality: Legality = Legality.LANES
    python: str = field(default_factory=python_version)
    decisions: list[Decision] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "legality": self.legality.value,
            "python": self.python,
            "decisions": [decision.to_json() for decision in self.decisions],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Schedule:
        return cls(
            legality=Legality(data["legality"]),
            python=str(data["python"]),
            decisions=[Decision.from_json(item) for item in data["decisions"]],
        )

    def dumps(self) -> str:
        """Canonical JSON: byte-identical for the same schedule in any process."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def loads(cls, text: str) -> Schedule:
        return cls.from_json(json.loads(text))

    def reorderings(self) -> list[Decision]:
        """The decisions that did not take the FIFO option."""
        return [decision for decision in self.decisions if decision.chosen]


def _names(labels: Sequence[str], count: int) -> str:
    text = ", ".join(labels)
    hidden = count - len(labels)
    if hidden > 0:
        text += f" and {hidden} more"
    return text


def render_schedule(schedule: Schedule | Iterable[Decision]) -> str:
    """"FIFO" or "FIFO except:" and one line per decision that overtook the FIFO order."""
    if isinstance(schedule, Schedule):
        decisions = schedule.decisions
        note = (
            " (reorder-all mode: production may not be able to run this schedule)"
            if schedule.legality is Legality.REORDER_ALL else ""
        )
    else:
        decisions, note = list(schedule), ""
    lines = [
        f"  at t={format_time(d.time_us)} (step {d.step}), ran {d.ran} before "
        f"{_names(d.overtaken, d.chosen)}"
        for d in decisions if d.chosen
    ]
    if not lines:
        return f"FIFO{note}"
    return f"FIFO{note} except:\n" + "\n".join(lines)
