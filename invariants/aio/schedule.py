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
# How a decision that held arrivals back names what it held (its `overtaken` is then the
# queued work they wait behind).
HELD = "held back "
# How a verdict on a timer as it lands (`lanes.Verdict`: the simulated network delivering,
# holding or dropping a segment) names what it decided: the text after it says it all.
VERDICT = "verdict: "


class Legality(StrEnum):
    """Which reorderings the loop may choose."""

    # Only what CPython's loop can run under some timing of the world outside it: the ready
    # queue strictly FIFO, the choices where due timers and calls from outside land in it
    # (invariants/aio/lanes.py).
    PRODUCTION = "production"
    # Any ready callback may run next. Finds more, but may report schedules production
    # cannot produce (a task resumed before the callback that one step scheduled earlier).
    REORDER_ALL = "reorder_all"


def format_time(us: int) -> str:
    """Virtual microseconds as milliseconds, exact: `1500` is `1.5 ms`, `2000` `2 ms`."""
    ms, rest = divmod(us, 1000)
    if rest == 0:
        return f"{ms} ms"
    return f"{ms}.{rest:03d}".rstrip("0") + " ms"


# Not frozen, read-only by convention (hashable all the same): a frozen dataclass's
# `__init__` sets each field through `object.__setattr__`, which made building the record
# most of what a choice cost, and the loop records one per choice (one per segment on a
# simulated network).
@dataclass(slots=True, unsafe_hash=True)
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
    def from_json(cls, data: object, where: str = "decision") -> Decision:
        """The decision `data` records; a `ValueError` naming `where` and what is missing
        or wrong if it is not one."""
        fields = _fields(data, where, required=_DECISION_KEYS, optional=("overtaken",))
        step, time_us, options, chosen = (
            _count(fields, key, where) for key in ("step", "time_us", "options", "chosen")
        )
        if step < 1:
            raise ValueError(f"{where}: 'step' must be >= 1, got {step}")
        if options < 2:
            raise ValueError(f"{where}: 'options' must be >= 2 (a choice), got {options}")
        if chosen >= options:
            raise ValueError(f"{where}: 'chosen' must be below 'options' ({options}), got {chosen}")
        overtaken = fields.get("overtaken", [])
        if not isinstance(overtaken, list) or not all(isinstance(i, str) for i in overtaken):
            raise ValueError(f"{where}: 'overtaken' must be a list of strings, got {overtaken!r}")
        return cls(step=step, time_us=time_us, options=options, chosen=chosen,
                   ran=_text(fields, "ran", where), overtaken=tuple(overtaken))


def python_version() -> str:
    return platform.python_version()


@dataclass(slots=True)
class Schedule:
    """A run's decisions, with the Python it ran on and the legality it chose under."""

    legality: Legality = Legality.PRODUCTION
    python: str = field(default_factory=python_version)
    decisions: list[Decision] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "legality": self.legality.value,
            "python": self.python,
            "decisions": [decision.to_json() for decision in self.decisions],
        }

    @classmethod
    def from_json(cls, data: object) -> Schedule:
        """The schedule `data` records (`to_json`'s shape); a `ValueError` naming what is
        missing or wrong if it is not one."""
        fields = _fields(data, "schedule", required=("legality", "python", "decisions"))
        legality = fields["legality"]
        if legality not in _LEGALITIES:
            raise ValueError(
                f"schedule: 'legality' must be one of {', '.join(map(repr, _LEGALITIES))}, "
                f"got {legality!r}"
            )
        decisions = fields["decisions"]
        if not isinstance(decisions, list):
            raise ValueError(f"schedule: 'decisions' must be a list, got {decisions!r}")
        return cls(
            legality=Legality(legality),
            python=_text(fields, "python", "schedule"),
            decisions=[
                Decision.from_json(item, f"schedule: decision {index}")
                for index, item in enumerate(decisions)
            ],
        )

    def dumps(self) -> str:
        """Canonical JSON: byte-identical for the same schedule in any process."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def loads(cls, text: str) -> Schedule:
        """The schedule `dumps` wrote; a `ValueError` (`json.JSONDecodeError` for text that
        is not JSON) naming what is wrong if it is not one."""
        return cls.from_json(json.loads(text))

    def reorderings(self) -> list[Decision]:
        """The decisions that did not take the FIFO option."""
        return [decision for decision in self.decisions if decision.chosen]


_DECISION_KEYS = ("step", "time_us", "options", "chosen", "ran")
_LEGALITIES = tuple(legality.value for legality in Legality)


def _fields(
    data: object, where: str, *, required: Sequence[str], optional: Sequence[str] = (),
) -> dict[str, Any]:
    """`data` as a JSON object with every `required` key and no key beyond `optional`."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a JSON object, got {data!r}")
    missing = [key for key in required if key not in data]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(map(repr, missing))}")
    unknown = sorted(str(key) for key in data if key not in (*required, *optional))
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}")
    return data


def _count(fields: dict[str, Any], key: str, where: str) -> int:
    value = fields[key]
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{where}: {key!r} must be an int >= 0, got {value!r}")
    return value


def _text(fields: dict[str, Any], key: str, where: str) -> str:
    value = fields[key]
    if not isinstance(value, str):
        raise ValueError(f"{where}: {key!r} must be a string, got {value!r}")
    return value


def _names(labels: Sequence[str], count: int) -> str:
    text = ", ".join(labels)
    hidden = count - len(labels)
    if hidden > 0:
        text += f" and {hidden} more"
    return text


def _reordering(decision: Decision) -> str:
    if decision.ran.startswith(VERDICT):
        return decision.ran.removeprefix(VERDICT)
    if decision.ran.startswith(HELD):
        behind = ", ".join(decision.overtaken) or "the queued work"
        return f"{decision.ran} behind {behind}"
    return f"ran {decision.ran} before {_names(decision.overtaken, decision.chosen)}"


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
    lines = [f"  at t={format_time(d.time_us)} (step {d.step}), {_reordering(d)}"
             for d in decisions if d.chosen]
    if not lines:
        return f"FIFO{note}"
    return f"FIFO{note} except:\n" + "\n".join(lines)
