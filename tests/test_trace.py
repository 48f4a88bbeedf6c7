"""The trace format: canonical JSON lines that round-trip exactly."""

import json

import pytest

from invariants.trace import (
    EventKind,
    MessageClass,
    TraceEvent,
    digest,
    dump_jsonl,
)


def load_jsonl(text: str) -> list[TraceEvent]:
    """The events of canonical JSON lines (what `dump_jsonl` writes)."""
    return [TraceEvent.from_json(json.loads(line)) for line in text.splitlines() if line]


def _events() -> list[TraceEvent]:
    return [
        TraceEvent(0, 0, EventKind.POSTED, hub="a", delivery_id="d1",
                   message_class=MessageClass.USER, message_type="Ping"),
        TraceEvent(1, 250, EventKind.FAILURE_EMITTED, hub="a", answers="d1", error="NotFound"),
    ]


def test_round_trip_is_exact() -> None:
    text = dump_jsonl(_events())
    assert load_jsonl(text) == _events()
    assert dump_jsonl(load_jsonl(text)) == text


def test_canonical_form_leaves_out_empty_fields_and_sorts_keys() -> None:
    first = dump_jsonl(_events()).splitlines()[0]
    assert first == (
        '{"delivery_id":"d1","hub":"a","kind":"posted","message_class":"user",'
        '"message_type":"Ping","seq":0,"time_ms":0}'
    )


def test_digest_changes_with_any_field() -> None:
    changed = [_events()[0], TraceEvent(1, 251, EventKind.FAILURE_EMITTED, hub="a",
                                        answers="d1", error="NotFound")]
    assert digest(_events()) != digest(changed)


def test_unknown_field_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown fields"):
        TraceEvent.from_json({"seq": 0, "time_ms": 0, "kind": "posted", "colour": "red"})


def test_only_ignorable_traffic_is_sheddable() -> None:
    assert [c for c in MessageClass if c.sheddable] == [MessageClass.IGNORABLE]
    assert not MessageClass.USER.suppresses_answer
    assert MessageClass.FAILURE.suppresses_answer
