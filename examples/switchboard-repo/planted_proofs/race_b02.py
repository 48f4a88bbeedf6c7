"""b02 (race, INV6 cooldown): a key tripped at 0 ms is admitted again once its cooldown has
passed; a routed post of the key that lands in the very instant the cooldown ends is still
dropped, only when the schedule lands it before the timer the key's trip armed. Under FIFO the
older timer (armed at the trip) always lands first; direct posts never meet it (they arrive
at a drive's start, after every timer due then has run)."""

from __future__ import annotations

from _common import main, of, prove
from switchboard.figures import DEFAULT_FIGURES
from switchboard.harness_adapter import bug_b02, make

from invariants.adapter import MessageSpec, Route
from invariants.trace import EventKind

THRESHOLD = 8
UPDATE = MessageSpec("UpdateStream", diagnostic_key="stream/1")
COOLDOWN = DEFAULT_FIGURES.breaker_cooldown_ms
HOP = DEFAULT_FIGURES.hop_ms


def scenario(mesh):
    mesh.create_hub("h0", breaker_threshold=THRESHOLD)
    for _ in range(THRESHOLD + 1):  # the last one trips the key at 0 ms
        mesh.post("owner", "h0", UPDATE, route=Route.DIRECT)
    mesh.advance(COOLDOWN - HOP)
    late = mesh.post("owner", "h0", UPDATE, route=Route.MONOLITH)  # lands as the cooldown ends
    mesh.advance(100)
    return late


def detect(mesh, late):
    trips = of(mesh, EventKind.BREAKER_TRIPPED, hub="h0")
    for e in of(mesh, EventKind.DROPPED, delivery_id=late):
        if trips and e.time_ms >= trips[0].time_ms + COOLDOWN:
            return (f"{late} dropped at {e.time_ms} ms, {e.time_ms - trips[0].time_ms} ms after "
                    f"its key tripped (cooldown {COOLDOWN} ms)")
    return None


if __name__ == "__main__":
    main(prove("b02", bug_b02, scenario, detect, seeds=range(300), control=make))
