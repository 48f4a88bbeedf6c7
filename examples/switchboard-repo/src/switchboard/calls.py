"""Calls between hubs: request/response with correlation ids and a pending table.

Each attempt gets a correlation id and a future in the pending table, and its own response
timeout armed with `call_later`. The callee takes the call up and runs it (offers its parcel
to the target inbox), then answers. A refused call is sent again after a capped doubling
delay; a call that timed out never is: the callee took it and may still run it.

Timers of calls on the wire or held at a callee belong to the desk, not to the caller's leg:
a caller that gave up does not recall a request already sent. The stop drops them at its
detach stage.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from .chaos import Stall
from .errors import (
    CalleeClosing,
    CallRefused,
    CallTimedOut,
    NoSuchHub,
    classify,
    has_timeout,
    is_resendable,
    is_transient,
)
from .legs import Leg
from .parcels import Parcel

if TYPE_CHECKING:
    from collections.abc import Callable

    from .board import Switchboard

CALLDESK = "calldesk"


@dataclass(slots=True)
class _Pending:
    cid: str
    parcel: Parcel
    leg: Leg
    attempt: int
    future: asyncio.Future[None]
    refused: bool
    stall: Stall | None = None
    timer: asyncio.TimerHandle | None = field(default=None)


class CallDesk:
    def __init__(self, board: Switchboard) -> None:
        self.board = board
        self._pending: dict[str, _Pending] = {}
        self._wire: dict[str, asyncio.TimerHandle] = {}

    def call(self, parcel: Parcel) -> None:
        if self.board.closing:
            self.board.relay.refuse(parcel)
            return
        sealed = self.board.relay.package(parcel)
        leg = self.board.legs.start("route", sealed)
        self._attempt(leg, sealed, 0)

    def drop_detached(self) -> int:
        """Drop every call still on the wire or held by a callee (the stop's detach stage)."""
        dropped = len(self._wire)
        for timer in self._wire.values():
            timer.cancel()
        self._wire.clear()
        return dropped

    # The caller's side.

    def _attempt(self, leg: Leg, parcel: Parcel, attempt: int) -> None:
        board = self.board
        board.journal.note("call_sent", inbox=CALLDESK, parcel=parcel.id, target=parcel.target,
                           attempt=attempt, sender=parcel.sender, kind=parcel.kind,
                           klass=parcel.klass)
        refused = parcel.target in board.inboxes and board.faults.take_refusal(parcel.target)
        pending = _Pending(board.next_id("c"), parcel, leg, attempt, board.loop.create_future(),
                           refused)
        self._pending[pending.cid] = pending
        pending.future.add_done_callback(partial(self._settled, pending))
        leg.on_cut = partial(self._abandon, pending)
        pending.timer = board.later(board.figures.response_timeout_ms, self._expire, pending)
        hop = board.relay.hop_ms(parcel.sender, parcel.target)
        self._on_wire(f"{pending.cid}:out", hop, self._arrive, pending)

    def _expire(self, pending: _Pending) -> None:
        if pending.future.done():
            return
        timeout = CallTimedOut(f"no answer from {pending.parcel.target} in time")
        error: BaseException = timeout
        if pending.stall is not None and pending.stall.grouped:
            refusal = CallRefused(f"{pending.parcel.target} refused on the second lane")
            members = [timeout, refusal] if pending.stall.timeout_first else [refusal, timeout]
            error = ExceptionGroup("call failed on every lane", members)
        pending.future.set_exception(error)

    def _answer(self, pending: _Pending, error: Exception | None) -> None:
        if pending.future.done():
            return  # the caller gave up (or was cut): a late answer changes nothing
        if error is None:
            pending.future.set_result(None)
        else:
            pending.future.set_exception(error)

    def _settled(self, pending: _Pending, future: asyncio.Future[None]) -> None:
        self._pending.pop(pending.cid, None)
        if pending.timer is not None:
            pending.timer.cancel()
        if future.cancelled():
            return
        board, parcel, leg = self.board, pending.parcel, pending.leg
        error = future.exception()
        if error is None:
            board.legs.end(leg, "completed")
            return
        board.journal.note("call_failed", inbox=CALLDESK, parcel=parcel.id,
                           attempt=pending.attempt, error=type(error).__name__,
                           timed_out=has_timeout(error))
        if "b15" in board.bugs and is_transient(error) and (
                pending.attempt < board.figures.call_retries):
            delay = board.figures.call_retry_delay_ms(pending.attempt)
            leg.arm(board.later(delay, self._attempt, leg, parcel, pending.attempt + 1))
            return
        if is_resendable(error) and pending.attempt < board.figures.call_retries:
            delay = board.figures.call_retry_delay_ms(pending.attempt)
            leg.arm(board.later(delay, self._attempt, leg, parcel, pending.attempt + 1))
            return
        board.replies.bounce(parcel, classify(error), where=CALLDESK, local=False)
        board.legs.end(leg, "failed")

    def _abandon(self, pending: _Pending) -> None:
        self._pending.pop(pending.cid, None)
        if pending.timer is not None:
            pending.timer.cancel()
        if not pending.future.done():
            pending.future.cancel()

    # The callee's side.

    def _arrive(self, pending: _Pending) -> None:
        target = pending.parcel.target
        inbox = self.board.inboxes.get(target)
        if inbox is None:
            self._respond(pending, NoSuchHub(target))
        elif pending.refused:
            self._respond(pending, CallRefused(f"{target} refused the call"))
        elif not inbox.gate_open or ("b06" in self.board.bugs and inbox.paused()):
            self._respond(pending, CalleeClosing(f"{target} is closing"))
        else:
            self.board.journal.note("call_taken", inbox=target, parcel=pending.parcel.id,
                                    attempt=pending.attempt)
            pending.stall = self.board.faults.take_receipt_fault(target)
            if pending.stall is None:
                self._run(pending)
            else:  # the callee sits on it past the caller's patience, then still runs it
                self._on_wire(f"{pending.cid}:held", self.board.figures.response_timeout_ms,
                              self._run, pending)

    def _run(self, pending: _Pending) -> None:
        inbox = self.board.inboxes.get(pending.parcel.target)
        if inbox is not None:
            inbox.offer(pending.parcel)
        self._respond(pending, None)

    def _respond(self, pending: _Pending, error: Exception | None) -> None:
        parcel = pending.parcel
        hop = self.board.relay.hop_ms(parcel.target, parcel.sender)
        self._on_wire(f"{pending.cid}:back", hop, self._answer, pending, error)

    def _on_wire(self, key: str, delay_ms: int, callback: Callable[..., None],
                 *args: Any) -> None:
        self._wire[key] = self.board.later(delay_ms, self._wire_fired, key, callback, args)

    def _wire_fired(self, key: str, callback: Callable[..., None], args: tuple[Any, ...]) -> None:
        del self._wire[key]
        callback(*args)
