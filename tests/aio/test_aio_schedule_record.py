"""A malformed schedule recording is one `ValueError` naming what is missing or wrong;
the control: every recording `dumps` writes loads back to the same schedule."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from invariants.aio import Legality, Schedule, run
from invariants.aio.schedule import Decision

VALUES = ", ".join(repr(legality.value) for legality in Legality)


def _good() -> dict[str, Any]:
    decision = Decision(step=3, time_us=100_000, options=3, chosen=1, ran="Task-2",
                        overtaken=("Task-1",))
    return Schedule(decisions=[decision]).to_json()


def _without(key: str) -> dict[str, Any]:
    data = _good()
    del data[key]
    return data


def _decision(**changes: Any) -> dict[str, Any]:
    data = _good()
    entry = data["decisions"][0]
    for key, value in changes.items():
        if value is _DROP:
            del entry[key]
        else:
            entry[key] = value
    return data


_DROP = object()

MALFORMED: list[tuple[object, str]] = [
    ({}, "schedule: missing 'legality', 'python', 'decisions'"),
    (_without("decisions"), "schedule: missing 'decisions'"),
    ([], "schedule: expected a JSON object, got []"),
    ({**_good(), "extra": 1}, "schedule: unknown key(s) 'extra'"),
    ({**_good(), "legality": "bogus"},
     f"schedule: 'legality' must be one of {VALUES}, got 'bogus'"),
    ({**_good(), "python": 3.12}, "schedule: 'python' must be a string, got 3.12"),
    ({**_good(), "decisions": {}}, "schedule: 'decisions' must be a list, got {}"),
    ({**_good(), "decisions": [7]}, "schedule: decision 0: expected a JSON object, got 7"),
    (_decision(ran=_DROP), "schedule: decision 0: missing 'ran'"),
    (_decision(step="3"), "schedule: decision 0: 'step' must be an int >= 0, got '3'"),
    (_decision(time_us=-1), "schedule: decision 0: 'time_us' must be an int >= 0, got -1"),
    (_decision(chosen=True), "schedule: decision 0: 'chosen' must be an int >= 0, got True"),
    (_decision(step=0), "schedule: decision 0: 'step' must be >= 1, got 0"),
    (_decision(options=1, chosen=0),
     "schedule: decision 0: 'options' must be >= 2 (a choice), got 1"),
    (_decision(chosen=3), "schedule: decision 0: 'chosen' must be below 'options' (3), got 3"),
    (_decision(ran=None), "schedule: decision 0: 'ran' must be a string, got None"),
    (_decision(overtaken="Task-1"),
     "schedule: decision 0: 'overtaken' must be a list of strings, got 'Task-1'"),
    (_decision(overtake=["Task-1"]), "schedule: decision 0: unknown key(s) 'overtake'"),
]


@pytest.mark.parametrize(("data", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
def test_a_malformed_recording_is_one_line_naming_what_is_wrong(
    data: object, message: str,
) -> None:
    with pytest.raises(ValueError) as caught:
        Schedule.loads(json.dumps(data))
    assert str(caught.value) == message
    assert type(caught.value) is ValueError  # not a KeyError or TypeError escaping


def test_text_that_is_not_json_is_a_value_error_too() -> None:
    with pytest.raises(ValueError, match="Expecting value"):
        Schedule.loads("not json")


def test_a_bad_decision_alone_is_named_as_a_decision() -> None:
    with pytest.raises(ValueError, match=r"^decision: missing 'chosen'$"):
        Decision.from_json({"step": 1, "time_us": 0, "options": 2, "ran": "Task-1"})


def test_the_control_what_dumps_writes_loads_back() -> None:
    assert Schedule.loads(json.dumps(_good())).to_json() == _good()
    # A real recording, with every field a run writes.
    result = run(_many(), chooser=_Last())
    schedule = result.schedule
    assert schedule.decisions
    assert any(d.overtaken for d in schedule.decisions)
    assert Schedule.loads(schedule.dumps()) == schedule
    # A decision with nothing overtaken leaves the key out, and loads back.
    plain = Decision(step=1, time_us=0, options=2, chosen=0, ran="Task-1")
    assert "overtaken" not in plain.to_json()
    assert Decision.from_json(plain.to_json()) == plain


class _Last:
    """The last option each time: as far from FIFO as a chooser gets."""

    def choose(self, options: int, why: str) -> int:
        return options - 1


async def _many() -> None:
    async def sleeper(i: int) -> None:
        await asyncio.sleep(0.01)

    await asyncio.gather(*(asyncio.create_task(sleeper(i)) for i in range(8)))
