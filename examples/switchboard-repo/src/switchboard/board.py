"""The switchboard: inboxes, the dispatcher, the relay, calls, subscriptions and the stop,
on one event loop.

Three ways to send: `post_direct` (straight onto the target inbox, not sealed), `send`
(through the relay, as a counted leg) and `call` (request/response through the call desk,
as a counted leg). Parcels a hub's handlers send go the same ways.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

from .breaker import StormBreaker
from .calls import CallDesk
from .chaos import CallFaults
from .dispatcher import Dispatcher
from .figures import DEFAULT_FIGURES, Figures
from .inbox import Handler, Inbox
from .journal import Journal
from .legs import LegGauge
from .parcels import Note, Parcel, Undeliverable
from .relay import Relay
from .replies import SERVICE_BADGE, ReplyDesk
from .shutdown import Shutdown
from .subscriptions import ACK, SUBSCRIBE, SubscriptionDesk

NO_LINKS: Mapping[tuple[str, str], int] = MappingProxyType({})


class Switchboard:
    def __init__(self, loop: asyncio.AbstractEventLoop, *, figures: Figures = DEFAULT_FIGURES,
                 latency: Mapping[tuple[str, str], int] = NO_LINKS,
                 journal: Journal | None = None, bugs: Iterable[str] = ()) -> None:
        self.loop = loop
        self.figures = figures
        self.bugs: frozenset[str] = frozenset(bugs)
        self.journal = journal if journal is not None else Journal()
        self.inboxes: dict[str, Inbox] = {}
        self._ids: dict[str, int] = {}
        self.dispatcher = Dispatcher(self)
        self.legs = LegGauge(self)
        self.relay = Relay(self, latency)
        self.replies = ReplyDesk(self)
        self.calls = CallDesk(self)
        self.subscriptions = SubscriptionDesk(self)
        self.faults = CallFaults()
        self.shutdown: Shutdown | None = None
        self.stopped = False
        self._sealed = False
        self._dispatcher_task: asyncio.Task[None] | None = None

    # Clock and ids.

    def now_ms(self) -> int:
        return round(self.loop.time() * 1000)

    def later(self, delay_ms: int, callback: Callable[..., None],
              *args: Any) -> asyncio.TimerHandle:
        return self.loop.call_later(delay_ms / 1000, callback, *args)

    def next_id(self, prefix: str) -> str:
        number = self._ids.get(prefix, 0) + 1
        self._ids[prefix] = number
        return f"{prefix}{number}"

    # Lifecycle.

    def start(self) -> None:
        """Start the dispatcher (call once, from the loop's thread)."""
        if self._dispatcher_task is None:
            self._dispatcher_task = self.loop.create_task(self.dispatcher.run(),
                                                          name="switchboard-dispatcher")

    @property
    def closing(self) -> bool:
        """True from the moment a stop is asked for: new dispatches are refused."""
        return self.shutdown is not None

    def begin_stop(self, *, graceful: bool = True) -> asyncio.Task[None]:
        """Ask for the stop; asking again non-gracefully is the host giving up on it."""
        if self.shutdown is not None:
            if not graceful:
                self.shutdown.give_up()
            assert self.shutdown.task is not None
            return self.shutdown.task
        self.shutdown = Shutdown(self, graceful=graceful)
        self.journal.note("stop_asked", inbox="switchboard", graceful=graceful,
                          depth=len(self.legs))
        self.shutdown.task = self.loop.create_task(self.shutdown.run(), name="switchboard-stop")
        return self.shutdown.task

    async def stop(self, *, graceful: bool = True) -> None:
        await self.begin_stop(graceful=graceful)

    async def aclose(self) -> None:
        """After the stop: end the dispatcher task (queued parcels are not served)."""
        task, self._dispatcher_task = self._dispatcher_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def seal_inboxes(self) -> None:
        self._sealed = True
        for inbox in self.inboxes.values():
            inbox.gate_open = False

    # Inboxes.

    def open_inbox(self, address: str, *, watermark: int | None = None,
                   breaker_threshold: int | None = None) -> Inbox:
        """Make (or re-configure) the inbox at `address`."""
        if not address:
            raise ValueError("open_inbox: the address must not be empty")
        if watermark is not None and watermark < 1:
            raise ValueError(f"open_inbox({address!r}): watermark must be >= 1, not {watermark}")
        figures = self.figures
        breaker = StormBreaker(breaker_threshold or figures.breaker_threshold,
                               figures.breaker_window_ms, figures.breaker_cooldown_ms,
                               figures.breaker_max_keys, bugs=self.bugs, later=self.later)
        inbox = self.inboxes.get(address)
        if inbox is None:
            inbox = Inbox(self, address, watermark or figures.watermark, breaker)
            inbox.gate_open = not self._sealed
            inbox.on(SUBSCRIBE, self._on_subscribe)
            inbox.on(ACK, self._on_ack)
            self.inboxes[address] = inbox
        else:
            inbox.watermark = watermark or inbox.watermark
            if breaker_threshold is not None:
                inbox.breaker = breaker
        self.journal.note("inbox_opened", inbox=address, watermark=inbox.watermark)
        return inbox

    def ensure_inbox(self, address: str) -> Inbox:
        return self.inboxes.get(address) or self.open_inbox(address)

    def remove_inbox(self, address: str) -> None:
        inbox = self.inboxes.pop(address, None)
        if inbox is None:
            return
        inbox.removed = True
        inbox.queue.clear()
        if inbox.resume_timer is not None:
            inbox.resume_timer.cancel()

    def pause(self, address: str, duration_ms: int) -> None:
        """Hold `address`'s turns for `duration_ms`; overlapping pauses end with the latest."""
        inbox = self.inboxes.get(address)
        if inbox is None or duration_ms <= 0:
            return
        until = self.now_ms() + duration_ms
        if "b03" not in self.bugs and inbox.paused_until is not None and (
                inbox.paused_until >= until):
            return
        inbox.paused_until = until
        if inbox.resume_timer is not None:
            inbox.resume_timer.cancel()
        inbox.resume_timer = self.later(duration_ms, self._resume, inbox)

    def _resume(self, inbox: Inbox) -> None:
        inbox.paused_until = None
        inbox.resume_timer = None
        self.dispatcher.ready(inbox)

    # Sending.

    def post_direct(self, parcel: Parcel) -> None:
        inbox = self.inboxes.get(parcel.target)
        if inbox is None:
            self.replies.bounce(parcel, "NotFound", where=parcel.sender, local=self.closing)
            return
        if "b11" in self.bugs and inbox.paused():
            assert inbox.paused_until is not None
            self.later(inbox.paused_until - self.now_ms(), self.post_direct, parcel)
            return
        inbox.offer(parcel)

    def send(self, parcel: Parcel) -> None:
        self.relay.dispatch(parcel)

    def call(self, parcel: Parcel) -> None:
        self.calls.call(parcel)

    def subscribe(self, subscriber: str, target: str, *, retries: int | None = None) -> str:
        chosen = self.figures.subscribe_retries if retries is None else retries
        return self.subscriptions.open(subscriber, target, chosen)

    # Handlers every inbox has.

    def default_handler(self, kind: str) -> Handler:
        return self._on_undeliverable if kind == "Undeliverable" else _ignore

    def _on_subscribe(self, parcel: Parcel, body: Note | Undeliverable) -> None:
        ack = Parcel(self.next_id("p"), parcel.target, parcel.sender, SERVICE_BADGE,
                     Note(ACK, ref=parcel.id))
        self.send(ack)

    def _on_ack(self, parcel: Parcel, body: Note | Undeliverable) -> None:
        if isinstance(body, Note):
            self.subscriptions.on_ack(body.ref)

    def _on_undeliverable(self, parcel: Parcel, body: Note | Undeliverable) -> None:
        if isinstance(body, Undeliverable):
            self.subscriptions.on_undeliverable(body.answers, body.error)


def _ignore(parcel: Parcel, body: Note | Undeliverable) -> None:
    """Ordinary traffic needs no more than being served."""
