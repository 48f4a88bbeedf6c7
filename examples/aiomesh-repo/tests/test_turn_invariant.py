"""TURN1, aiomesh's own trace invariant (aiomesh_invariants/turns.py), on the traces the
harness adapter makes: it holds on the clean mesh, every obligation exercised, and fails
on the planted bug `turn-awaits-flush`, which the built-in invariants pass; a synthetic
trace shows its third obligation failing too. Runs on the harness's virtual loop in FIFO
order, a few milliseconds each."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path

from aiomesh.harness_adapter import BUG_FACTORIES, AioMeshAdapter, make
from aiomesh.hub import FLUSH_MS, JOURNAL_BATCH
from aiomesh_invariants.turns import CHECK_ID, HUB_TURNS

from invariants.adapter import Chooser, FirstChooser, MessageSpec, Route
from invariants.checks.api import EventKind, Monitor, TraceEvent, custom_event

REPO = Path(__file__).resolve().parents[1]
Factory = Callable[[Chooser], AioMeshAdapter]
FLUSHING = BUG_FACTORIES["turn-awaits-flush"]


def _trace(factory: Factory, messages: int = 2 * JOURNAL_BATCH) -> Sequence[TraceEvent]:
    """`messages` posts from a to b in one instant, run until the mesh is quiet."""
    adapter = factory(FirstChooser())
    adapter.create_hub("a")
    adapter.create_hub("b")
    for i in range(messages):
        adapter.post("a", "b", MessageSpec("Order", diagnostic_key=f"o/{i}"), route=Route.DIRECT)
    assert adapter.run_until_idle(10_000)
    return adapter.trace()


def _judge(trace: Sequence[TraceEvent]) -> Monitor:
    monitor = HUB_TURNS()
    monitor.feed(trace)
    return monitor


def test_the_mesh_reports_each_turn_around_its_handling() -> None:
    trace = _trace(make, messages=2)
    at_b = [(e.custom or e.kind.value, e.delivery_id or e.value("delivery_id"))
            for e in trace if e.hub == "b" and e.kind in (EventKind.CUSTOM, EventKind.HANDLED)]
    assert at_b == [("aiomesh.turn_started", "d1"), ("handled", "d1"),
                    ("aiomesh.turn_ended", "d1"), ("aiomesh.turn_started", "d2"),
                    ("handled", "d2"), ("aiomesh.turn_ended", "d2")]


def test_turn1_holds_on_the_clean_mesh_with_every_obligation_exercised() -> None:
    monitor = _judge(_trace(make))
    assert monitor.violations(final=True) == []
    assert dict(monitor.evidence) == dict.fromkeys(HUB_TURNS.obligations, 2 * JOURNAL_BATCH)


def test_turn1_fails_on_the_planted_flush() -> None:
    found = _judge(_trace(FLUSHING)).violations(final=True)
    assert {v.check_id for v in found} == {CHECK_ID}
    # the turns that filled a batch (the 16th and 32nd delivery): each late, and the
    # message each handled with it
    started = [v.message for v in found if "ends in the instant it began" in v.message]
    handled = [v.message for v in found if "every message a hub handles" in v.message]
    assert len(started) == len(handled) == 2, found
    assert f"for key ('b', 'd{JOURNAL_BATCH}') within 0 ms" in started[0]
    assert f"(handled d{JOURNAL_BATCH} at b)" in handled[0]
    assert not [v for v in found if "one of its turns is open" in v.message]


def _built_in_findings(trace: Sequence[TraceEvent]) -> dict[str, int]:
    from invariants.checks import CHECKS

    found: dict[str, int] = {}
    for check_id in ("INV1", "INV2", "INV3", "INV4", "INV5", "INV6", "INV7"):
        monitor = CHECKS[check_id]()
        monitor.feed(trace)
        if violations := monitor.violations(final=True):
            found[check_id] = len(violations)
    return found


def test_the_built_in_invariants_miss_the_planted_flush() -> None:
    # The run's trace as the built-in checkers see it: FLUSH_MS of virtual time taken
    # twice, which breaks none of their rules (`check` on the bug's factory shows it over
    # the whole search; README.md).
    trace = _trace(FLUSHING)
    assert max(e.time_ms for e in trace) == 2 * FLUSH_MS
    assert _built_in_findings(trace) == {}
    # the control: judged the same way, a bug they do catch is caught
    adapter = BUG_FACTORIES["nack-rejected"](FirstChooser())
    adapter.create_hub("a")
    adapter.create_hub("b")
    adapter.post("a", "b", MessageSpec("Order"), identity=None, route=Route.DIRECT)
    assert adapter.run_until_idle(10_000)
    assert _built_in_findings(adapter.trace()) == {"INV1": 1}


def _turn(seq: int, time_ms: int, what: str, delivery_id: str) -> TraceEvent:
    return custom_event(seq, time_ms, f"aiomesh.turn_{what}", hub="b", delivery_id=delivery_id)


def test_turn1_fails_on_two_turns_of_one_hub_open_at_once() -> None:
    # Overlapping turns taking no time: only the third obligation sees them.
    overlapping = [_turn(0, 5, "started", "d1"), _turn(1, 5, "started", "d2"),
                   _turn(2, 5, "ended", "d1"), _turn(3, 5, "ended", "d2")]
    found = _judge(overlapping).violations(final=True)
    assert [v.message.split(":")[0] for v in found] == [
        "a hub begins no turn while one of its turns is open"]
    assert "seq 1 at 5 ms opens another for 'b' while the one opened at seq 0" in found[0].message
    # the control: the same turns one after the other
    one_by_one = [_turn(0, 5, "started", "d1"), _turn(1, 5, "ended", "d1"),
                  _turn(2, 5, "started", "d2"), _turn(3, 5, "ended", "d2")]
    assert _judge(one_by_one).violations(final=True) == []


def test_a_turn_that_never_ends_fails_once_the_run_is_quiet() -> None:
    found = _judge([_turn(0, 5, "started", "d1")]).violations(final=True)
    assert len(found) == 1 and "the run went quiet" in found[0].message


def test_pyproject_registers_it() -> None:
    with (REPO / "pyproject.toml").open("rb") as handle:
        table = tomllib.load(handle)["tool"]["harness"]
    assert table["invariants"] == ["aiomesh_invariants.turns:HUB_TURNS"]
    assert HUB_TURNS.check_id == CHECK_ID == "TURN1"
