"""The harness adapter: conformance, and what its trace says of a few fixed programs, on
the harness's virtual loop and simulated network (no wall clock)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("invariants")

from invariants.adapter import Fault, FaultKind, FirstChooser, MessageSpec, Route
from invariants.trace import EventKind, TraceEvent

from nodemesh.harness_adapter import GATEWAY, MESH, NODES, NodeMeshAdapter, make

REPO = Path(__file__).resolve().parent.parent
REQUEST = MessageSpec("Request")


def _adapter_check(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "src"), str(REPO / "tests")]))
    return subprocess.run([sys.executable, "-m", "harness", "adapter-check", *args], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=300, check=False)


def test_the_adapter_conforms() -> None:
    done = _adapter_check()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "conforms: 9 program(s), 0 broken convention(s)" in done.stdout
    assert "network" in done.stdout


def test_conformance_flags_a_node_that_is_not_rebuilt() -> None:
    # The negative control: restart_node that rebuilds nothing breaks the network program.
    done = _adapter_check("--adapter", "adapter_controls:make_never_rebuilt")
    assert done.returncode == 1
    assert "network: HANDLED" in done.stdout


def _mesh(*hubs: str) -> NodeMeshAdapter:
    adapter = make(FirstChooser())
    for hub in hubs:
        adapter.create_hub(hub)
    return adapter


def _story(adapter: NodeMeshAdapter, delivery: str) -> list[tuple[int, str, object]]:
    """The events of `delivery`, as (time, kind, what tells them apart)."""
    def detail(event: TraceEvent) -> object:
        if event.kind in (EventKind.ATTEMPT, EventKind.CALL_RECEIVED):
            return event.attempt
        if event.kind is EventKind.ATTEMPT_FAILED:
            return event.error
        return event.reason or event.hub
    return [(e.time_ms, e.kind.value, detail(e)) for e in adapter.trace()
            if e.delivery_id == delivery and e.kind is not EventKind.FAILURE_EMITTED]


def test_hubs_are_placed_round_robin_and_outside_senders_on_the_gateway() -> None:
    adapter = _mesh("h0", "h1", "h2", "h3")
    adapter.post("client", "h0", REQUEST)
    assert [adapter.node_of(hub) for hub in ("h0", "h1", "h2", "h3", "client")] == [
        "n1", "n2", "n3", "n1", GATEWAY]
    assert adapter.node_of("nowhere") in NODES  # a missing hub is addressed on a node


def test_a_grain_call_refused_once_is_sent_again_after_its_backoff() -> None:
    adapter = _mesh("alpha", "beta")
    adapter.inject(Fault(FaultKind.REJECT_NEXT, "beta"))
    delivery = adapter.post("client", "beta", REQUEST, route=Route.GRAIN)
    assert adapter.run_until_idle(60_000)
    assert _story(adapter, delivery) == [
        (0, "leg_started", "gw"), (0, "attempt", 0), (4, "attempt_failed", "Rejected"),
        (54, "attempt", 1), (55, "call_received", 1), (55, "posted", "beta"),
        (55, "enqueued", "beta"), (55, "handled", "beta"), (56, "leg_ended", "completed")]


def test_without_the_fault_the_grain_call_is_made_once() -> None:
    # The negative control of the story above: the rejection is the fault's doing.
    adapter = _mesh("alpha", "beta")
    delivery = adapter.post("client", "beta", REQUEST, route=Route.GRAIN)
    assert adapter.run_until_idle(60_000)
    assert [kind for _, kind, _ in _story(adapter, delivery)] == [
        "leg_started", "attempt", "call_received", "posted", "enqueued", "handled",
        "leg_ended"]


def test_a_timed_out_call_runs_at_the_callee_only_after_its_caller_gave_up() -> None:
    adapter = _mesh("alpha", "beta")
    adapter.inject(Fault(FaultKind.TIMEOUT_NEXT, "beta"))
    delivery = adapter.post("client", "beta", REQUEST, route=Route.GRAIN)
    assert adapter.run_until_idle(60_000)
    story = [(kind, what) for _, kind, what in _story(adapter, delivery)]
    assert story.index(("attempt_failed", "TimedOut")) < story.index(("posted", "beta"))
    assert [kind for kind, _ in story].count("attempt") == 1  # never sent again


def _stop_story(adapter: NodeMeshAdapter) -> list[tuple[int, str, object]]:
    stop_kinds = {EventKind.STOP_REQUESTED, EventKind.STOP_STAGE_ENTERED,
                  EventKind.STOP_STAGE_LEFT, EventKind.STOP_HOLD_STARTED,
                  EventKind.STOP_HOLD_RELEASED, EventKind.STOP_COMPLETED}
    return [(e.time_ms, e.kind.value, e.stage or e.reason) for e in adapter.trace()
            if e.kind in stop_kinds and e.hub == MESH]


def test_the_nodes_stops_are_told_as_one_stop_that_holds_until_the_leg_lands() -> None:
    adapter = _mesh("alpha", "beta")
    adapter.inject(Fault(FaultKind.SLOW_DESTINATION, "beta", duration_ms=1000))
    delivery = adapter.post("client", "beta", REQUEST)
    adapter.advance(10)
    adapter.stop(graceful=True)
    assert adapter.run_until_idle(60_000)
    assert _stop_story(adapter) == [
        (10, "stop_requested", None), (10, "stop_stage_entered", 30),
        (10, "stop_hold_started", None), (1004, "stop_hold_released", "drained"),
        (1004, "stop_stage_left", 30), (1004, "stop_stage_entered", 20),
        (1004, "stop_stage_left", 20), (1004, "stop_stage_entered", 10),
        (1004, "stop_stage_left", 10), (1004, "stop_completed", None)]
    # The request reached beta's node at 3 ms and was taken when its slowdown ended.
    assert _story(adapter, delivery)[-2:] == [(1003, "handled", "beta"),
                                              (1004, "leg_ended", "completed")]


def test_a_stop_given_up_on_is_released_at_once() -> None:
    # The negative control of the hold above: the host gives up at 500 ms.
    adapter = _mesh("alpha", "beta")
    adapter.inject(Fault(FaultKind.SLOW_DESTINATION, "beta", duration_ms=1000))
    delivery = adapter.post("client", "beta", REQUEST)
    adapter.advance(10)
    adapter.stop(graceful=True)
    adapter.advance(490)
    adapter.stop(graceful=False)
    assert adapter.run_until_idle(60_000)
    assert (500, "stop_hold_released", "cancelled") in _stop_story(adapter)
    assert (500, "leg_ended", "drained") in _story(adapter, delivery)


def test_a_crashed_node_is_rebuilt_with_its_hubs_and_new_ids() -> None:
    adapter = _mesh("alpha", "beta")
    before = adapter.post("beta", "alpha", REQUEST)
    adapter.advance(100)
    adapter.inject(Fault(FaultKind.CRASH_NODE, "beta", duration_ms=100))
    adapter.advance(200)
    after = adapter.post("beta", "alpha", REQUEST)
    to_beta = adapter.post("client", "beta", REQUEST)
    assert adapter.run_until_idle(60_000)
    assert (before, after) == ("n2.1", "n2@2.1")
    assert ("handled", "beta") in [(kind, what) for _, kind, what in _story(adapter, to_beta)]
