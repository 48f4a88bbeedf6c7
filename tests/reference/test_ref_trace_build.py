"""`build_event` (the fast constructor the trace recorder reads records with) makes exactly
the `TraceEvent` the dataclass's own constructor makes, field for field."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import astuple, fields
from typing import Any

import pytest

from invariants.trace import EventKind, MessageClass, TraceEvent, canonical_line
from reference_impl.trace_build import FIELD_ORDER, build_event


def _distinct_values() -> tuple[Any, ...]:
    """A value per field, each different from every other, so a field stored in the wrong
    slot shows (neither constructor checks types: three bool fields could not differ)."""
    values: list[Any] = []
    for field in fields(TraceEvent):
        if field.name == "kind":
            values.append(EventKind.POSTED)
        elif field.name == "message_class":
            values.append(MessageClass.IGNORABLE)
        elif field.name == "data":
            values.append((("data", "value"),))
        else:
            values.append(f"{field.name}-value")
    return tuple(values)


def _mismatches(build: Callable[..., TraceEvent], values: tuple[Any, ...]) -> list[str]:
    built, reference = build(*values), TraceEvent(*values)
    wrong = [f.name for f in fields(TraceEvent)
             if getattr(built, f.name) != getattr(reference, f.name)]
    if built != reference or hash(built) != hash(reference):
        wrong.append("==/hash")
    return wrong


def test_field_order_is_the_dataclass_order() -> None:
    assert tuple(f.name for f in fields(TraceEvent)) == FIELD_ORDER


def test_build_event_equals_the_dataclass_constructor_field_for_field() -> None:
    values = _distinct_values()
    assert len(set(map(str, values))) == len(values)  # every field tells itself apart
    assert _mismatches(build_event, values) == []
    built = build_event(*values)
    assert type(built) is TraceEvent
    assert astuple(built) == values
    assert canonical_line(built) == canonical_line(TraceEvent(*values))
    with pytest.raises(AttributeError):  # frozen, like any TraceEvent
        built.hub = "elsewhere"  # type: ignore[misc]


def test_a_builder_with_two_slots_swapped_is_caught() -> None:
    """Negative control: the check above fails a builder that stores `sender` into
    `target` and back."""

    def swapped(*values: Any) -> TraceEvent:
        event = build_event(*values)
        set_sender = vars(TraceEvent)["sender"].__set__
        set_target = vars(TraceEvent)["target"].__set__
        sender, target = event.sender, event.target
        set_sender(event, target)
        set_target(event, sender)
        return event

    assert _mismatches(swapped, _distinct_values()) == ["sender", "target", "==/hash"]


def test_build_event_takes_every_field_and_no_more() -> None:
    values = _distinct_values()
    with pytest.raises(TypeError):  # a custom event's two fields may go (the reference has none)
        build_event(*values[:-3])
    with pytest.raises(TypeError):
        build_event(*values, None)
