"""A hub: the intake's gates, then a queue its pump task serves one message per turn.

Intake order: the stopping gate, the identity guard, the per-key breaker, the aggregate
watermark, the queue. A rejected post is noted once and dropped, never answered; a
dropped or shed one is Ignored, never failed, so nobody is answered either.

A turn (`turn_started` .. `turn_ended`, the mesh's own events) takes no time: the pump
hands the message to the synchronous handler and only then waits for the next one.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from aiomesh.breaker import Breaker
from aiomesh.envelope import SHEDDABLE, Envelope, Kind, RawJson, unpack

if TYPE_CHECKING:
    from aiomesh.mesh import Mesh

WATERMARK = 1_000  # queue depth from which sheddable traffic is shed
# The planted bug `turn-awaits-flush` journals what a hub applies and flushes the journal
# every JOURNAL_BATCH messages, awaiting the flush (FLUSH_MS) in the turn that filled it.
# The clean mesh keeps no journal and never waits in a turn.
JOURNAL_BATCH = 16
FLUSH_MS = 2


class Hub:
    def __init__(self, mesh: Mesh, address: str, watermark: int = WATERMARK,
                 breaker_threshold: int | None = None) -> None:
        self.mesh = mesh
        self.address = address
        self.watermark = watermark
        self.breaker = Breaker(mesh) if breaker_threshold is None else Breaker(
            mesh, breaker_threshold)
        self.queue: asyncio.Queue[Envelope] = asyncio.Queue()
        self.closed = False  # the stop closes the gate
        self.effects: dict[str, int] = {}  # delivery id -> times its handler applied it
        self.shed_count = 0
        self._open = asyncio.Event()
        self._open.set()
        self._taken: Envelope | None = None  # taken from the queue, its turn held
        self._block_end = -1
        self._release: asyncio.TimerHandle | None = None
        self.task = mesh.loop.create_task(self._pump(), name=f"hub {address}")

    def offer(self, env: Envelope) -> str:
        """The intake: the verdict is `enqueued`, `gated`, `rejected`, `dropped` or `shed`."""
        obs, hub = self.mesh.observer, self.address
        arrived_packaged = isinstance(env.body, RawJson)
        env = unpack(env)
        body = env.body
        assert not isinstance(body, RawJson)
        obs.posted(hub=hub, delivery_id=env.id, sender=env.sender, target=env.target,
                   message_type=body.type_name, message_class=body.kind,
                   diagnostic_key=body.key, packaged=arrived_packaged,
                   subscription_id=env.subscription)
        if self.closed:
            obs.gated(hub=hub, delivery_id=env.id)
            return "gated"
        if env.identity is None and body.kind is not Kind.SYSTEM:
            obs.rejected(hub=hub, delivery_id=env.id, error="NoIdentity")
            if "nack-rejected" in self.mesh.bugs:
                self.mesh.answers.report(env, "Rejected")
            return "rejected"
        depth = self.depth
        breaker = self.breaker
        verdict = breaker.admit(breaker.key(env.sender, env.target, body.type_name, body.key),
                                body.kind)
        if verdict == "trip":
            obs.breaker_tripped(hub=hub, delivery_id=env.id, sender=env.sender,
                                target=env.target, message_type=body.type_name,
                                diagnostic_key=body.key)
        if verdict != "pass":
            obs.dropped(hub=hub, delivery_id=env.id, depth=depth, error="Ignored")
            return "dropped"
        if depth >= self.watermark and self._sheddable(body.kind):
            self.shed_count += 1
            obs.shed(hub=hub, delivery_id=env.id, depth=depth, watermark=self.watermark,
                     error="Ignored")
            return "shed"
        self.queue.put_nowait(env)
        obs.enqueued(hub=hub, delivery_id=env.id, depth=self.depth)
        if env.subscription is not None:
            self.mesh.acknowledge(env)
        return "enqueued"

    @property
    def depth(self) -> int:
        """What waits for a turn: the queue, and a message whose turn is held."""
        return self.queue.qsize() + (self._taken is not None)

    def _sheddable(self, kind: Kind) -> bool:
        bugs = self.mesh.bugs
        if "no-watermark" in bugs:
            return False
        return "shed-anything" in bugs or kind in SHEDDABLE

    def block(self, ms: int) -> None:
        """Hold the hub's turn for `ms`; overlapping holds last until the latest ends."""
        self.mesh.observer.turn_blocked(hub=self.address)
        self._open.clear()
        end = self.mesh.now_ms() + ms
        if end > self._block_end:
            self._block_end = end
            if self._release is not None:
                self._release.cancel()
            self._release = self.mesh.loop.call_later(self.mesh.seconds(ms), self._released)

    def _released(self) -> None:
        self._release = None
        self.mesh.observer.turn_released(hub=self.address)
        self._open.set()

    def close(self) -> None:
        """The hub leaves the mesh: its pump ends, whatever is queued is gone."""
        self.task.cancel()
        self.breaker.close()
        if self._release is not None:
            self._release.cancel()

    async def _pump(self) -> None:
        while True:
            env = self._taken = await self.queue.get()
            await self._open.wait()
            self._taken = None
            body = env.body
            assert not isinstance(body, RawJson)
            # A turn takes no time: it starts and ends in one step of the pump, and only
            # then does the pump wait for the next message.
            self.mesh.observer.turn_started(hub=self.address, delivery_id=env.id)
            self.mesh.observer.handled(hub=self.address, delivery_id=env.id,
                                       message_type=body.type_name)
            try:
                self._handle(env)
                if ("turn-awaits-flush" in self.mesh.bugs
                        and len(self.effects) % JOURNAL_BATCH == 0):
                    await asyncio.sleep(self.mesh.seconds(FLUSH_MS))
            finally:  # a handler that kills the pump still ends its turn
                self.mesh.observer.turn_ended(hub=self.address, delivery_id=env.id)

    def _handle(self, env: Envelope) -> None:
        try:
            self.mesh.handle(self, env)
        except Exception as exc:  # a faulting handler is noted; the pump goes on
            if "pump-dies-on-fault" in self.mesh.bugs:
                raise
            self.mesh.observer.handler_faulted(hub=self.address, delivery_id=env.id,
                                               error=type(exc).__name__)
