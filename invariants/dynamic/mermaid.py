"""Render a trace as a Mermaid sequenceDiagram: hubs as participants, messages as arrows.

Drops, sheds, rejections, faults and stop stages become notes; events a violation cites
are marked; consecutive look-alike events (a flood) collapse into one counted line; and
a long trace is cut in the middle with a note, so the diagram stays readable.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from invariants.trace import EventKind, TraceEvent

K = EventKind

# Kinds too frequent to draw one by one, and carrying nothing an arrow does not.
_QUIET = frozenset({
    K.ENQUEUED, K.LEG_STARTED, K.LEG_ENDED, K.SATURATION_CLEARED, K.HUB_CREATED,
})
_UNSAFE = re.compile(r"[;#:<>\"\n\r{}]")


@dataclass(frozen=True)
class _Line:
    kind: EventKind
    source: str
    target: str | None  # None: a note over `source`
    arrow: str
    label: str
    group: tuple[object, ...]  # events with equal groups in a row collapse
    seq: int
    time_ms: int
    marked: bool


def _text(value: object) -> str:
    return _UNSAFE.sub("_", str(value))


class _Renderer:
    def __init__(self, trace: Sequence[TraceEvent], marked: Collection[int]) -> None:
        self._trace = trace
        self._marked = set(marked)
        self._senders = {e.delivery_id: e.sender for e in trace if e.kind is K.POSTED}
        self._callees: dict[str | None, str | None] = {}  # delivery -> its last call's target
        self._participants: dict[str, str] = {}

    @property
    def participants(self) -> dict[str, str]:
        return self._participants

    def participant(self, name: str | None) -> str:
        key = name or "mesh"
        if key not in self._participants:
            self._participants[key] = f"P{len(self._participants)}"
        return self._participants[key]

    def lines(self) -> list[_Line]:
        out: list[_Line] = []
        for e in self._trace:
            line = self._line(e)
            if line is not None:
                out.append(line)
        return out

    def _line(self, e: TraceEvent) -> _Line | None:
        marked = e.seq in self._marked
        if e.kind in _QUIET and not marked:
            return None
        hub = e.hub or e.target or e.sender
        what = e.message_type or ""
        cls = f" {e.message_class.value}" if e.message_class else ""
        arrow_to: str | None = None
        arrow = "->>"
        match e.kind:
            case K.POSTED:
                source, arrow_to = e.sender or hub, e.target or hub
                label = f"{what}{cls} {e.delivery_id}"
            case K.ATTEMPT:
                source, arrow_to = hub, e.target
                self._callees[e.delivery_id] = e.target
                label = f"attempt {e.attempt} {e.delivery_id}"
            case K.ATTEMPT_FAILED:
                callee = e.target or self._callees.get(e.delivery_id)
                source, arrow_to, arrow = callee or hub, hub, "--x"
                label = f"{'timed out' if e.timed_out else e.error} {e.delivery_id}"
            case K.FAILURE_EMITTED:
                source, arrow_to, arrow = hub, self._senders.get(e.answers) or e.target, "-->>"
                label = f"DeliveryFailure {e.error} answers {e.answers}"
            case K.SUBSCRIBE_ATTEMPT:
                source, arrow_to = hub, e.target
                label = f"subscribe {e.subscription_id} attempt {e.attempt}"
            case K.CUSTOM:  # the mesh's own event: its name and fields
                source = hub
                label = " ".join([str(e.custom), *(f"{k} {v}" for k, v in e.data or ())])
            case _:
                source = hub
                label = self._note(e, what, cls)
        group = (e.kind, source, arrow_to, e.message_class, e.message_type, e.error, e.custom)
        return _Line(
            e.kind,
            self.participant(source),
            self.participant(arrow_to) if arrow_to is not None else None,
            arrow,
            _text(label),
            group,
            e.seq,
            e.time_ms,
            marked,
        )

    @staticmethod
    def _note(e: TraceEvent, what: str, cls: str) -> str:
        extra = " ".join(
            f"{name} {value}"
            for name, value in (
                ("id", e.delivery_id),
                ("sub", e.subscription_id),
                ("leg", e.leg_id),
                ("stage", e.stage),
                ("depth", e.depth),
                ("error", e.error),
                ("reason", e.reason),
                ("graceful", e.graceful),
                ("key", e.diagnostic_key),
            )
            if value is not None
        )
        return f"{e.kind.value.upper()} {what}{cls} {extra}".replace("  ", " ").strip()


def _collapse(lines: list[_Line]) -> list[tuple[_Line, int, _Line]]:
    """Runs of look-alike lines as (first, count, last); marked lines never merge."""
    runs: list[tuple[_Line, int, _Line]] = []
    for line in lines:
        if runs and not line.marked:
            first, count, _ = runs[-1]
            if not first.marked and first.group == line.group:
                runs[-1] = (first, count + 1, line)
                continue
        runs.append((line, 1, line))
    return runs


def _statement(first: _Line, count: int, last: _Line) -> list[str]:
    label = f"t={first.time_ms} seq {first.seq} {first.label}"
    if count > 1:
        label = (
            f"t={first.time_ms}..{last.time_ms} seq {first.seq}..{last.seq} "
            f"{first.label} x{count}"
        )
    if first.marked:
        label = "VIOLATION " + label
    body = (
        f"    Note over {first.source}: {label}"
        if first.target is None
        else f"    {first.source}{first.arrow}{first.target}: {label}"
    )
    if first.marked:
        return ["    rect rgb(255, 215, 215)", "    " + body, "    end"]
    return [body]


def render_sequence(
    trace: Sequence[TraceEvent],
    *,
    marked: Collection[int] = (),
    max_lines: int = 120,
    title: str | None = None,
) -> str:
    """The trace as Mermaid text. `marked`: seqs to highlight (a violation's events)."""
    renderer = _Renderer(trace, marked)
    runs = _collapse(renderer.lines())
    omitted_note: str | None = None
    if len(runs) > max_lines:
        head = max_lines * 2 // 3
        tail = max_lines - head
        cut = runs[head : len(runs) - tail]
        skipped_events = sum(count for _, count, _ in cut)
        omitted_note = (
            f"... {len(cut)} lines ({skipped_events} events, seq {cut[0][0].seq}..{cut[-1][2].seq})"
            f" omitted of {len(trace)} events ..."
        )
        runs = runs[:head] + runs[len(runs) - tail :]
    out = ["sequenceDiagram"]
    if title:
        out.append(f"    title {_text(title)}")
    participants = renderer.participants
    out.extend(f"    participant {pid} as {_text(name)}" for name, pid in participants.items())
    first_pid = next(iter(participants.values()), "P0")
    for index, (first, count, last) in enumerate(runs):
        if omitted_note is not None and index == max_lines * 2 // 3:
            out.append(f"    Note over {first_pid}: {_text(omitted_note)}")
        out.extend(_statement(first, count, last))
    if not runs:
        out.append("    Note over mesh: empty trace")
    return "\n".join(out) + "\n"
