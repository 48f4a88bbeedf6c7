"""b17 (race, INV6 windows): a key's window opened at 0 ms closes at 1000 ms; a routed post of
the key that lands in that very instant opens the next window, and the key's next posts count
in it. Only when the schedule lands that post before the timer its first window armed does the
key's new window get lost, so that the next threshold + 1 posts in the same instant are all
admitted (a storm let through). Under FIFO the older timer always lands first; direct posts
never meet it (they arrive at a drive's start, after every timer due then has run)."""

from __future__ import annotations

from _common import main, of, prove
from switchboard.figures import DEFAULT_FIGURES
from switchboard.harness_adapter import bug_b17, make

from invariants.adapter import MessageSpec, Route
from invariants.trace import EventKind

THRESHOLD = 8
UPDATE = MessageSpec("UpdateStream", diagnostic_key="stream/1")
WINDOW = DEFAULT_FIGURES.breaker_window_ms
HOP = DEFAULT_FIGURES.hop_ms


def scenario(mesh):
    mesh.create_hub("h0", breaker_threshold=THRESHOLD)
    mesh.post("owner", "h0", UPDATE, route=Route.DIRECT)  # opens the key's window at 0 ms
    mesh.advance(WINDOW - HOP)
    edge = mesh.post("owner", "h0", UPDATE, route=Route.MONOLITH)  # lands as the window closes
    mesh.advance(HOP)
    storm = [mesh.post("owner", "h0", UPDATE, route=Route.DIRECT) for _ in range(THRESHOLD)]
    mesh.advance(10)
    return [edge, *storm]


def detect(mesh, posts):
    admitted = [e for e in of(mesh, EventKind.ENQUEUED, hub="h0") if e.delivery_id in posts]
    in_window = [e for e in admitted if WINDOW <= e.time_ms < 2 * WINDOW]
    if len(in_window) > THRESHOLD:
        return (f"{len(in_window)} posts of one key admitted in the window opened at "
                f"{WINDOW} ms (threshold {THRESHOLD})")
    return None


if __name__ == "__main__":
    main(prove("b17", bug_b17, scenario, detect, seeds=range(300), control=make))
