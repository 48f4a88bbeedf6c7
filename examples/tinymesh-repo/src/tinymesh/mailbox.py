"""A mailbox: the intake's gates, then a queue served one letter per turn."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from tinymesh.breaker import StormBreaker, breaker_key
from tinymesh.clock import Timer
from tinymesh.letters import Blob, Kind, Letter, unpack

if TYPE_CHECKING:
    from tinymesh.mesh import TinyMesh

SPILL_AT = 500  # queue depth from which chatter is spilled
SPILLABLE = frozenset({Kind.CHATTER})


class Mailbox:
    def __init__(self, mesh: TinyMesh, address: str, spill_at: int = SPILL_AT,
                 storm_threshold: int | None = None) -> None:
        self.mesh = mesh
        self.address = address
        self.spill_at = spill_at
        self.breaker = StormBreaker() if storm_threshold is None else StormBreaker(storm_threshold)
        self.queue: deque[Letter] = deque()
        self.closed = False  # the stop's detach stage closes the gate
        self.paused_until = -1
        self._turn: Timer | None = None  # the next turn, while one is scheduled
        self._resume: Timer | None = None
        self.spilled = 0

    def offer(self, letter: Letter) -> None:
        """Intake: gate, identity, storm breaker, watermark, queue."""
        log, now = self.mesh.log, self.mesh.clock.now
        arrived_packaged = isinstance(letter.body, Blob)
        letter = unpack(letter)
        body = letter.body
        assert not isinstance(body, Blob)
        log.write(now, "offered", box=self.address, letter=letter.id, sender=letter.sender,
                  target=letter.target, subject=body.subject, kind=body.kind, topic=body.topic,
                  blob=arrived_packaged, watch=letter.watch)
        if self.closed:
            log.write(now, "closed_out", box=self.address, letter=letter.id)
            return
        if letter.caller is None and body.kind is not Kind.SYSTEM:
            # Refusal is terminal: noted once, dropped, never answered.
            log.write(now, "refused", box=self.address, letter=letter.id, error="CalleeRefused")
            return
        depth = len(self.queue)
        key = breaker_key(letter.sender, letter.target, body.subject, body.topic)
        verdict = self.breaker.admit(key, body.kind, now)
        if verdict == "trip":
            log.write(now, "tripped", box=self.address, letter=letter.id, sender=letter.sender,
                      target=letter.target, subject=body.subject, topic=body.topic)
        if verdict != "pass":
            # Dropped and spilled letters are Ignored, never failed: nobody is answered.
            log.write(now, "muted", box=self.address, letter=letter.id, depth=depth,
                      error="Ignored")
            return
        if body.kind in SPILLABLE and depth >= self.spill_at:
            self.spilled += 1
            log.write(now, "spilled", box=self.address, letter=letter.id, depth=depth,
                      spill_at=self.spill_at, error="Ignored")
            return
        self.queue.append(letter)
        log.write(now, "queued", box=self.address, letter=letter.id, depth=len(self.queue))
        self._schedule_turn()

    def pause(self, ms: int) -> None:
        clock = self.mesh.clock
        self.paused_until = max(self.paused_until, clock.now + ms)
        self.mesh.log.write(clock.now, "paused", box=self.address)
        self._resume = clock.after(ms, self._resumed)

    def _resumed(self) -> None:
        clock = self.mesh.clock
        if clock.now < self.paused_until:
            return  # a longer pause came later
        self.mesh.log.write(clock.now, "resumed", box=self.address)
        self._schedule_turn()

    def _schedule_turn(self) -> None:
        if self._turn is None and self.queue and self.mesh.clock.now >= self.paused_until:
            self._turn = self.mesh.clock.after(0, self._take_turn)

    def _take_turn(self) -> None:
        self._turn = None
        if self.mesh.clock.now < self.paused_until or not self.queue:
            return
        letter = self.queue.popleft()
        self.mesh.log.write(self.mesh.clock.now, "served", box=self.address, letter=letter.id,
                            subject=getattr(letter.body, "subject", None))
        self.mesh.on_served(letter)
        self._schedule_turn()
