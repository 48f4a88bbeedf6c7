"""The clean mesh on its own: what it promises beyond the planted bugs' scenarios."""

from __future__ import annotations

import ast
import asyncio
import os
import subprocess
import sys
from pathlib import Path

import scenarios as s
from aiomesh import Kind, Mesh, Message, Recorder
from aiomesh.shutdown import BUDGET_MS, DETACHING, SERVING
from ordering import prefer

SRC = Path(__file__).resolve().parents[1] / "src"


def _notes(program: s.Program, **mesh_args: object) -> list[tuple[int, str, dict]]:
    kept: list[tuple[int, str, dict]] = []

    async def keep(mesh: Mesh, notes: Recorder) -> s.Measures:
        measures = await program(mesh, notes)
        kept.extend((n.at_ms, n.kind, n.fields) for n in notes.notes)
        return measures
    s.play(keep, **mesh_args)
    return kept


def test_the_same_program_gives_the_same_record() -> None:
    for program in (s.stop_with_leg_in_flight, s.subscribe_to_nowhere, s.call_refused):
        assert _notes(program) == _notes(program)


def test_two_meshes_share_nothing() -> None:
    async def two(mesh: Mesh, notes: Recorder) -> s.Measures:
        other = Mesh()
        other.hub("a")
        ids = (mesh.post("a", "b", Message("Order")), other.post("a", "b", Message("Order")))
        await s.ms(10)
        await other.aclose()
        return {"ids": ids, "hubs": sorted(mesh.hubs), "other": sorted(other.hubs)}
    assert s.play(two) == {"ids": ("d1", "d1"), "hubs": ["a"], "other": ["a"]}


async def _idle_stop(mesh: Mesh, notes: Recorder) -> s.Measures:
    mesh.hub("a")
    mesh.stop()
    await mesh.stopped_event()
    stages = [(n.kind, n["stage"]) for n in notes.notes if n.kind.startswith("stop_stage")]
    return {"held": bool(notes.of("stop_hold_started")), "stages": stages,
            "completed": bool(notes.of("stop_completed"))}


def test_a_stop_with_nothing_in_flight_holds_nothing() -> None:
    measures = s.play(_idle_stop)
    assert measures["held"] is False and measures["completed"] is True
    assert [stage for _, stage in measures["stages"]] == [SERVING, SERVING, DETACHING,
                                                          DETACHING, 10, 10]


async def _budget(mesh: Mesh, notes: Recorder) -> s.Measures:
    mesh.hub("a")
    mesh.hub("b")
    mesh.slow_down("b", 60_000)
    first = mesh.post("a", "b", Message("Order"))
    second = mesh.post("a", "b", Message("Order"))
    await s.ms(10)
    mesh.stop()
    await mesh.stopped_event()
    released = notes.of("stop_hold_released")[0]
    return {"reason": released["reason"],
            "held_ms": released.at_ms - notes.of("stop_hold_started")[0].at_ms,
            "residual": [n["delivery_id"] for n in notes.of("residual_leg")],
            "expected": [first, second],
            "cut": len(notes.of("leg_ended", reason="drained"))}


def test_a_hold_past_its_budget_names_the_residual_legs_oldest_first() -> None:
    measures = s.play(_budget)
    assert measures["reason"] == "budget" and measures["held_ms"] == BUDGET_MS
    assert measures["residual"] == measures["expected"] and measures["cut"] == 2


async def _non_graceful(mesh: Mesh, notes: Recorder) -> s.Measures:
    mesh.hub("a")
    mesh.hub("b")
    mesh.slow_down("b", 500)
    mesh.post("a", "b", Message("Order"))
    await s.ms(10)
    mesh.stop(graceful=False)
    await mesh.stopped_event()
    return {"graceful": notes.of("stop_requested")[0]["graceful"],
            "held": bool(notes.of("stop_hold_started")),
            "cut": len(notes.of("leg_ended", reason="drained"))}


def test_a_non_graceful_stop_holds_nothing() -> None:
    assert s.play(_non_graceful) == {"graceful": False, "held": False, "cut": 1}


async def _after_stop(mesh: Mesh, notes: Recorder) -> s.Measures:
    mesh.hub("a")
    mesh.hub("b")
    live = mesh.subscribe("a", "b")
    await s.ms(10)
    mesh.stop()
    refused = mesh.post("a", "b", Message("Order"))
    late = mesh.subscribe("a", "b")
    await mesh.stopped_event()
    answer = notes.of("failure_emitted", answers=refused)
    return {"answered": bool(notes.of("subscribe_answered", subscription_id=live)),
            "refused": bool(notes.of("dispatch_refused", delivery_id=refused)),
            "answer": answer[0]["error"] if answer else None,
            "late": [n["reason"] for n in notes.of("subscribe_terminated",
                                                   subscription_id=late)]}


def test_after_the_stop_began_dispatches_are_refused_and_answered() -> None:
    assert s.play(_after_stop) == {"answered": True, "refused": True,
                                   "answer": "ShuttingDown", "late": ["silo_stopped"]}


def _aggregate(timeout_first: bool) -> s.Program:
    async def program(mesh: Mesh, notes: Recorder) -> s.Measures:
        mesh.hub("a")
        mesh.hub("b")
        mesh.faults.aggregates["b"] = [timeout_first]
        d = mesh.post("a", "b", Message("Charge"), route="call")
        await s.ms(30_000)
        failed = notes.of("attempt_failed", delivery_id=d)
        return {"attempts": len(notes.of("attempt", delivery_id=d)),
                "timed_out": [n["timed_out"] for n in failed],
                "applied": mesh.hubs["b"].effects.get(d, 0)}
    return program


def test_a_timeout_anywhere_in_an_aggregate_is_not_re_sent() -> None:
    for timeout_first in (True, False):
        assert s.play(_aggregate(timeout_first)) == {"attempts": 1, "timed_out": [True],
                                                     "applied": 1}


async def _blocked_turn(mesh: Mesh, notes: Recorder) -> s.Measures:
    mesh.hub("a")
    mesh.hub("h")
    mesh.block("h", 300)
    await s.ms(100)
    mesh.block("h", 500)  # ends at 600, after the first
    d = mesh.post("a", "h", Message("Order"), route="direct")
    await s.ms(1_000)
    return {"handled_at": notes.of("handled", delivery_id=d)[0].at_ms,
            "released": [n.at_ms for n in notes.of("turn_released")]}


def test_overlapping_blocks_hold_the_turn_until_the_latest_ends() -> None:
    assert s.play(_blocked_turn) == {"handled_at": 600, "released": [600]}


def test_each_turn_starts_and_ends_in_one_instant_a_raising_handlers_too() -> None:
    async def program(mesh: Mesh, notes: Recorder) -> s.Measures:
        measures = await s.request_behind_a_raising_handler(mesh, notes)
        turns = [(n.kind, n["delivery_id"], n.at_ms) for n in notes.notes
                 if n.kind in ("turn_started", "turn_ended")]
        return {**measures, "turns": turns}
    # d1 raises, d2 is queued behind it
    both = [("turn_started", "d1", 0), ("turn_ended", "d1", 0)]
    assert s.play(program) == {"faulted": 1, "handled_behind": 1, "turns": [
        *both, ("turn_started", "d2", 0), ("turn_ended", "d2", 0)]}
    # a pump the raising handler kills still ends that turn, and takes no other
    assert s.play(program, bugs={"pump-dies-on-fault"}) == {
        "faulted": 0, "handled_behind": 0, "turns": both}


def test_the_identity_guard_lets_system_traffic_through() -> None:
    async def program(mesh: Mesh, notes: Recorder) -> s.Measures:
        mesh.hub("a")
        mesh.hub("b")
        d = mesh.post("a", "b", Message("Ping", Kind.SYSTEM), identity=None, route="direct")
        await s.ms(10)
        return {"handled": bool(notes.of("handled", delivery_id=d))}
    assert s.play(program) == {"handled": True}


def test_the_mesh_runs_on_the_stock_loop_and_imports_nothing_outside_the_stdlib() -> None:
    code = ("import sys, aiomesh.__main__ as m; lines = m.asyncio.run(m.demo()); "
            "print(lines[-1]); "
            "print(sorted({n.split('.')[0] for n in sys.modules} & {'invariants', 'harness'}))")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2].endswith("all as expected")
    assert done.stdout.splitlines()[-1] == "[]"


def test_no_clock_but_the_loop_and_no_random_numbers() -> None:
    banned = {"time", "random", "datetime", "threading", "secrets"}
    for path in sorted((SRC / "aiomesh").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [(node.module or "").split(".")[0]]
            else:
                continue
            assert not banned & set(names), f"{path.name}:{node.lineno} imports {names}"


async def _retry_as_the_last_leg_lands(mesh: Mesh, notes: Recorder) -> s.Measures:
    """A subscription to a missing hub retries at 202 ms (its first attempt failed at 2 ms);
    a stop at 201 ms holds for one leg, which lands at 202 ms: the retry is refused, and its
    NACK starts a leg in that same instant."""
    mesh.hub("a")
    mesh.hub("b")
    mesh.subscribe("a", "x")
    await s.ms(201)
    d = mesh.post("a", "b", Message("Order"))
    mesh.stop()
    await mesh.stopped_event()
    landed = s.index(notes, "leg_ended", delivery_id=d)
    asked = s.index(notes, "stop_requested")
    nack = next(i for i, n in enumerate(notes.notes)
                if i > asked and n.kind == "leg_started" and n["leg_kind"] == "nack")
    detaching = s.index(notes, "stop_stage_entered", stage=DETACHING)
    return {"nack_after_landing": landed < nack, "nack_before_detaching": nack < detaching,
            "in_flight_at_detaching": notes.notes[detaching]["depth"]}


def test_a_nack_started_as_the_last_leg_lands_is_held_for() -> None:
    # FIFO runs the retry (its timer is the older) before the landing: the NACK's leg is
    # already in flight when the last racing leg lands.
    assert s.play(_retry_as_the_last_leg_lands) == {
        "nack_after_landing": False, "nack_before_detaching": True,
        "in_flight_at_detaching": 0}
    # The other order: the leg lands (the hold is released), then the retry starts its
    # NACK before the stop goes on. The hold waits for that leg too.
    landing_first = prefer("sleep:leg", "step:leg", "sleep:s", "step:s1")
    assert s.play(_retry_as_the_last_leg_lands, pick=landing_first) == {
        "nack_after_landing": True, "nack_before_detaching": True,
        "in_flight_at_detaching": 0}


def test_the_ordering_loop_breaks_a_timer_tie_as_asked() -> None:
    from ordering import prefer, run

    async def two() -> list[str]:
        order: list[str] = []

        async def at(name: str) -> None:
            await asyncio.sleep(1.999)
            order.append(name)
        await asyncio.gather(asyncio.create_task(at("x"), name="x"),
                             asyncio.create_task(at("y"), name="y"))
        return order
    assert run(two()) == ["x", "y"]
    assert run(two(), prefer("sleep:y")) == ["y", "x"]
