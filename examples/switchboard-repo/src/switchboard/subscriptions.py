"""Bounded subscriptions: a small state machine each, driven by `call_later` callbacks.

An attempt sends a SubscribeRequest through the relay and arms its timeout. The first
acknowledgement of the attempt's own request answers the subscription; an Undeliverable
answering that request, or the timeout, fails the attempt. A failed attempt is retried
after an exponential backoff until the retries are spent, then the subscription ends for
good and sends nothing more. Anything that arrives for a request it no longer waits on is
ignored.
"""

from __future__ import annotations

import asyncio
from enum import Enum
from typing import TYPE_CHECKING

from .parcels import Klass, Note, Parcel
from .replies import SERVICE_BADGE

if TYPE_CHECKING:
    from .board import Switchboard

SUBSCRIBE = "SubscribeRequest"
ACK = "SubscribeAck"


class State(Enum):
    WAITING = "waiting"    # a request is out
    BACKOFF = "backoff"    # the last attempt failed; a retry is armed
    ANSWERED = "answered"
    ENDED = "ended"


class Subscription:
    __slots__ = (
        "attempt",
        "id",
        "request",
        "retries",
        "state",
        "subscriber",
        "target",
        "timer",
    )

    def __init__(self, sub_id: str, subscriber: str, target: str, retries: int) -> None:
        self.id = sub_id
        self.subscriber = subscriber
        self.target = target
        self.retries = retries
        self.attempt = -1
        self.request: str | None = None
        self.state = State.BACKOFF
        self.timer: asyncio.TimerHandle | None = None

    @property
    def open(self) -> bool:
        return self.state in (State.WAITING, State.BACKOFF)


class SubscriptionDesk:
    def __init__(self, board: Switchboard) -> None:
        self.board = board
        self._subs: dict[str, Subscription] = {}
        self._by_request: dict[str, Subscription] = {}

    def open(self, subscriber: str, target: str, retries: int) -> str:
        if retries < 0:
            raise ValueError(f"subscribe({subscriber!r}, {target!r}): retries must be >= 0")
        sub = Subscription(self.board.next_id("s"), subscriber, target, retries)
        self._subs[sub.id] = sub
        self._try(sub)
        return sub.id

    def state_of(self, sub_id: str) -> State:
        return self._subs[sub_id].state

    def on_ack(self, request_id: str | None) -> None:
        sub = self._waiting_on(request_id)
        if sub is None:
            return
        if "b12" in self.board.bugs:
            self.board.loop.call_soon(self._settle, sub)
            return
        self._disarm(sub)
        sub.state = State.ANSWERED
        self.board.journal.note("sub_ok", inbox=sub.subscriber, sub=sub.id, attempt=sub.attempt)

    def _settle(self, sub: Subscription) -> None:
        sub.state = State.ANSWERED
        self.board.journal.note("sub_ok", inbox=sub.subscriber, sub=sub.id, attempt=sub.attempt)

    def on_undeliverable(self, request_id: str, error: str) -> None:
        sub = self._waiting_on(request_id)
        if sub is not None:
            self._failed(sub, error)

    def end_all(self, why: str) -> None:
        for sub in self._subs.values():
            if sub.open:
                self._end(sub, why)

    def _waiting_on(self, request_id: str | None) -> Subscription | None:
        sub = self._by_request.get(request_id or "")
        if sub is None or sub.state is not State.WAITING or sub.request != request_id:
            return None
        return sub

    def _try(self, sub: Subscription) -> None:
        board = self.board
        sub.attempt += 1
        request = Parcel(board.next_id("p"), sub.subscriber, sub.target, SERVICE_BADGE,
                         Note(SUBSCRIBE, Klass.REQUEST), subscription=sub.id)
        sub.request = request.id
        sub.state = State.WAITING
        self._by_request[request.id] = sub
        board.journal.note("sub_try", inbox=sub.subscriber, sub=sub.id, attempt=sub.attempt,
                           target=sub.target, parcel=request.id)
        sub.timer = board.later(board.figures.subscribe_timeout_ms, self._timed_out, sub,
                                request.id)
        board.relay.dispatch(request)

    def _timed_out(self, sub: Subscription, request_id: str) -> None:
        if sub.state is State.WAITING and sub.request == request_id:
            self._failed(sub, "timeout")

    def _failed(self, sub: Subscription, cause: str) -> None:
        self._disarm(sub)
        if sub.attempt < sub.retries:
            sub.state = State.BACKOFF
            upcoming = sub.attempt if "b01" in self.board.bugs else sub.attempt + 1
            delay = self.board.figures.subscribe_backoff_before(upcoming)
            sub.timer = self.board.later(delay, self._try, sub)
            return
        self._end(sub, f"retries_exhausted:{cause}")

    def _end(self, sub: Subscription, why: str) -> None:
        if "b09" not in self.board.bugs:
            self._disarm(sub)
        sub.state = State.ENDED
        self.board.journal.note("sub_gave_up", inbox=sub.subscriber, sub=sub.id,
                                attempt=sub.attempt, why=why)

    def _disarm(self, sub: Subscription) -> None:
        if sub.timer is not None:
            sub.timer.cancel()
            sub.timer = None
        if sub.request is not None:
            self._by_request.pop(sub.request, None)
