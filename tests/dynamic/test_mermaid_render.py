"""The Mermaid renderer: arrows, notes, collapsed floods, marked violations, bounded size."""

import re

from dyn_traces import C, K, Trace

from invariants.dynamic.mermaid import render_sequence


def _flood_trace(n: int) -> Trace:
    t = Trace()
    t.add(K.POSTED, hub="h", delivery_id="d1", sender="client", target="h/x",
          message_type="Ping", message_class=C.USER)
    for i in range(n):
        t.add(K.SHED, hub="h/x", delivery_id=f"i{i}", message_class=C.IGNORABLE, depth=25)
    t.add(K.REJECTED, hub="h/x", delivery_id="d1")
    t.at(30).add(K.FAILURE_EMITTED, hub="h/x", answers="d1", error="Failed", delivery_id="f1")
    return t


def test_hubs_are_participants_and_messages_arrows() -> None:
    text = render_sequence(_flood_trace(1).events)
    lines = text.splitlines()
    assert lines[0] == "sequenceDiagram"
    assert "    participant P0 as client" in lines
    assert "    participant P1 as h/x" in lines
    assert "    P0->>P1: t=0 seq 0 Ping user d1" in lines
    assert "    P1-->>P0: t=30 seq 3 DeliveryFailure Failed answers d1" in lines
    assert "    Note over P1: t=0 seq 2 REJECTED id d1" in lines


def test_a_flood_collapses_into_one_counted_note() -> None:
    text = render_sequence(_flood_trace(200).events)
    assert "seq 1..200 SHED ignorable id i0 depth 25 x200" in text
    assert text.count("SHED") == 1


def test_marked_events_are_highlighted_and_never_merged() -> None:
    text = render_sequence(_flood_trace(5).events, marked={3})
    assert "    rect rgb(255, 215, 215)\n        Note over P1: VIOLATION t=0 seq 3 SHED" in text
    assert "seq 1..2 SHED" in text and "seq 4..5 SHED" in text


def test_long_trace_is_cut_in_the_middle_with_a_note() -> None:
    t = Trace()
    for i in range(500):
        t.at(i).add(K.POSTED, hub="h", delivery_id=f"d{i}", sender="a", target=f"h{i % 2}")
    text = render_sequence(t.events, max_lines=30)
    statements = [ln for ln in text.splitlines() if "->>" in ln]
    assert len(statements) == 30
    assert "... 470 lines (470 events, seq 20..489) omitted of 500 events ..." in text
    assert statements[-1].endswith("d499")


def test_labels_cannot_break_the_diagram_syntax() -> None:
    t = Trace()
    t.add(K.POSTED, hub="h", delivery_id="a;b#c:d", sender="x", target="y", message_type="T<x>")
    text = render_sequence(t.events)
    arrow = next(ln for ln in text.splitlines() if "->>" in ln)
    label = arrow.split(": ", 1)[1]
    assert not re.search(r"[;#:<>]", label)


def test_empty_trace_renders_a_valid_diagram() -> None:
    lines = render_sequence([]).splitlines()
    assert lines == ["sequenceDiagram", "    Note over mesh: empty trace"]


def test_a_failed_attempt_is_drawn_from_its_callee() -> None:
    t = Trace()
    t.add(K.ATTEMPT, hub="grain", delivery_id="d1", target="h0", attempt=0)
    t.add(K.ATTEMPT_FAILED, hub="grain", delivery_id="d1", timed_out=True)
    lines = render_sequence(t.events).splitlines()
    assert "    P0->>P1: t=0 seq 0 attempt 0 d1" in lines
    assert "    P1--xP0: t=0 seq 1 timed out d1" in lines


def test_a_custom_event_shows_its_name_and_fields() -> None:
    from invariants.trace import custom_event

    t = _flood_trace(1)
    events = [*t.events, custom_event(len(t.events), 30, "tiny.turn_started", hub="h/x",
                                      delivery_id="d1")]
    events.append(custom_event(len(events), 30, "tiny.turn_ended", hub="h/x"))
    text = render_sequence(events)
    assert "    Note over P1: t=30 seq 4 tiny.turn_started delivery_id d1" in text
    # Two events of different names never collapse into one line.
    assert "    Note over P1: t=30 seq 5 tiny.turn_ended" in text
