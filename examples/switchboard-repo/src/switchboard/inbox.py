"""An inbox: a hub's queue, its intake gates and its handlers (hubs are not tasks).

Intake order: teardown gate → badge check → per-key storm breaker → depth limit for
chatter → queue. A refused anonymous parcel is journalled once and dropped, never answered;
a throttled or shed one is dropped as "Ignored", never answered either.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING

from .breaker import StormBreaker, Verdict, breaker_key
from .parcels import NOT_COUNTED, SHEDDABLE, Klass, Note, Parcel, Undeliverable

if TYPE_CHECKING:
    from .board import Switchboard

Handler = Callable[[Parcel, Note | Undeliverable], None]


class Intake(Enum):
    QUEUED = "queued"
    GATED = "gated"
    REFUSED = "refused"
    THROTTLED = "throttled"
    SHED = "shed"


class Inbox:
    def __init__(self, board: Switchboard, address: str, watermark: int,
                 breaker: StormBreaker) -> None:
        self.board = board
        self.address = address
        self.watermark = watermark
        self.breaker = breaker
        self.queue: deque[Parcel] = deque()
        self.handlers: dict[str, Handler] = {}
        self.gate_open = True
        self.removed = False
        self.scheduled = False  # in the dispatcher's ring
        self.paused_until: int | None = None
        self.resume_timer: asyncio.TimerHandle | None = None
        self.shed_count = 0
        self.cooling: set[tuple[str, ...]] = set()

    def on(self, kind: str, handler: Handler) -> None:
        self.handlers[kind] = handler

    def paused(self) -> bool:
        return self.paused_until is not None and self.board.now_ms() < self.paused_until

    def runnable(self) -> bool:
        return bool(self.queue) and not self.removed and not self.paused()

    def offer(self, parcel: Parcel) -> Intake:
        journal = self.board.journal
        here = self.address
        klass = parcel.klass
        journal.note("offered", inbox=here, parcel=parcel.id, sender=parcel.sender,
                     target=parcel.target, kind=parcel.kind, klass=klass, topic=parcel.topic,
                     sealed=parcel.sealed, sub=parcel.subscription)
        if not self.gate_open:
            journal.note("gated", inbox=here, parcel=parcel.id)
            return Intake.GATED
        if parcel.badge is None and klass is not Klass.SYSTEM:
            journal.note("refused_anon", inbox=here, parcel=parcel.id, error="NoBadge")
            return Intake.REFUSED
        depth = len(self.queue)
        bugs = self.board.bugs
        if klass not in NOT_COUNTED:
            who = (parcel.badge or parcel.sender) if "b04" in bugs else parcel.sender
            key = breaker_key(who, parcel.target, parcel.kind, parcel.topic)
            if "b02" in bugs and key in self.cooling:
                verdict = Verdict.DROP
            else:
                verdict = self.breaker.admit(key, self.board.now_ms())
            if verdict is Verdict.TRIP:
                journal.note("tripped", inbox=here, parcel=parcel.id, sender=parcel.sender,
                             target=parcel.target, kind=parcel.kind, topic=parcel.topic)
                if "b02" in bugs:
                    self.cooling.add(key)
                    self.board.later(self.breaker.cooldown_ms, self.cooling.discard, key)
            if verdict is not Verdict.ADMIT:
                journal.note("throttled", inbox=here, parcel=parcel.id, depth=depth,
                             error="Ignored")
                return Intake.THROTTLED
        if klass in SHEDDABLE and depth >= self.watermark:
            self.shed_count += 1
            journal.note("shed", inbox=here, parcel=parcel.id, depth=depth,
                         watermark=self.watermark, error="Ignored")
            return Intake.SHED
        if "b08" in bugs and klass is Klass.CONTROL:
            self.queue.appendleft(parcel)
        else:
            self.queue.append(parcel)
        journal.note("queued", inbox=here, parcel=parcel.id, depth=depth + 1)
        self.board.dispatcher.ready(self)
        return Intake.QUEUED
