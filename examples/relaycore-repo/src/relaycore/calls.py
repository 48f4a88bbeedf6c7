"""Calls: request/reply deliveries to a node, each the work of one counted leg.

An attempt is a short-lived task that awaits the reply future under the response
timeout; a courier task asks placement about the callee and carries the call over
the callee's link. A refusal (the callee holds nothing) is re-sent with a capped
doubling delay scheduled by `call_later`, until the retries are spent. A timeout is
never re-sent: the callee has the call, or will, and still runs it. The leg ends with
the last attempt's outcome, and not before the callee has the call or refused it.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from relaycore.errors import (
    CallError,
    CallFailures,
    CallRefused,
    CallTimedOut,
    NoSuchNode,
    classify,
    is_resendable,
    timed_out,
)
from relaycore.frames import Frame
from relaycore.legs import Leg

if TYPE_CHECKING:
    from relaycore.relay import Relay

HUB = "calls"


class Verdict(enum.Enum):
    """What placement says about a call's callee."""

    PROCEED = "proceed"
    MISSING = "missing"
    REFUSE = "refuse"  # the activation refuses: nothing is held
    STALL = "stall"  # the activation takes the call but is wedged past the timeout
    STALL_TIMEOUT_FIRST = "stall, timeout first"  # the same, reported with a refusal
    STALL_REFUSAL_FIRST = "stall, refusal first"


Placement = Callable[[str], Awaitable[Verdict]]


async def open_placement(target: str) -> Verdict:
    """Production placement: every node takes its calls."""
    del target
    return Verdict.PROCEED


@dataclass(eq=False)
class _Call:
    frame: Frame
    leg: Leg
    attempt: int = 0
    deadline_ms: int = 0  # when the current attempt's caller gives up
    verdict: Verdict = Verdict.PROCEED
    reply: asyncio.Future[None] | None = None
    waiter: asyncio.Task[None] | None = None
    courier: asyncio.Task[None] | None = None
    wire: asyncio.Handle | None = None
    retry: asyncio.TimerHandle | None = None
    in_transit: bool = False  # the courier has not yet handed the call over
    given_up: bool = False  # answered, the leg waiting only for the hand-over
    closed: bool = False


class CallRouter:
    def __init__(self, relay: Relay, placement: Placement) -> None:
        self._relay = relay
        self._placement = placement
        self._calls: dict[str, _Call] = {}

    def dispatch(self, frame: Frame) -> None:
        board = self._relay.switchboard
        frame = board.prepare(frame)
        if board.closing:
            board.refuse(frame, where=HUB)
            return
        call = _Call(frame, self._relay.gauge.open("route", frame, HUB))
        if "b16" not in self._relay.bugs:
            call.leg.cut = partial(self._cut, call)
        self._calls[frame["id"]] = call
        self.send_attempt(call, 0)

    def send_attempt(self, call: _Call, attempt: int) -> None:
        call.retry = None
        call.attempt = attempt
        sent = "b11" in self._relay.bugs  # reported as it is sent, not as it starts
        if sent:
            self._report_attempt(call, attempt)
        call.waiter = self._relay.loop.create_task(self._attempt(call, attempt, reported=sent))

    def settle(self, reply: Frame) -> None:
        """A callee's reply frame: resolves the attempt still waiting for it."""
        call = self._calls.get(reply["id"])
        if call is None or call.attempt != reply["attempt"] or call.reply is None:
            return
        if call.reply.done():
            return
        refused = reply.get("refused")
        if refused is None:
            call.reply.set_result(None)
        else:  # the callee took nothing
            call.reply.set_exception(CallRefused(f"{call.frame['dst']}: {refused}"))

    def _report_attempt(self, call: _Call, attempt: int) -> None:
        frame = call.frame
        self._relay.tel("attempt", hub=HUB, delivery_id=frame["id"], target=frame["dst"],
                        attempt=attempt, sender=frame["src"], message_type=frame["type"],
                        message_class=frame["cls"])

    async def _attempt(self, call: _Call, attempt: int, *, reported: bool = False) -> None:
        relay = self._relay
        if not reported:
            self._report_attempt(call, attempt)
        if call.leg.cut is None and call.leg.open:  # dispatch left the cut to the attempt
            call.leg.cut = partial(self._cut, call)
        call.deadline_ms = relay.now_ms() + relay.config.call_timeout_ms
        reply: asyncio.Future[None] = relay.loop.create_future()
        call.reply = reply
        call.in_transit = True
        call.courier = relay.loop.create_task(self._carry(call, attempt, reply))
        failure: BaseException | None = None
        try:
            async with asyncio.timeout(relay.config.call_timeout_ms / 1000):
                await reply
        except TimeoutError:
            # A reply that landed on the deadline still counts.
            if reply.done() and not reply.cancelled():
                failure = reply.exception()
            else:
                failure = self._timed_out(call)
                if ("b14" in relay.bugs and call.verdict is Verdict.PROCEED and not call.closed
                        and attempt < relay.config.call_retries):
                    # No wedged activation: the call was lost on its way, so send it again.
                    relay.tel("attempt_failed", hub=HUB, delivery_id=call.frame["id"],
                              attempt=attempt, error=type(failure).__name__,
                              timed_out=timed_out(failure))
                    delay_ms = relay.config.call_retry_delay_ms(attempt)
                    call.retry = relay.loop.call_later(delay_ms / 1000, self.send_attempt, call,
                                                       attempt + 1)
                    return
        except CallError as exc:
            failure = exc
        self._settled(call, attempt, failure)

    def _settled(self, call: _Call, attempt: int, failure: BaseException | None) -> None:
        if call.closed:
            return
        if failure is None:
            self._finish(call, "completed")
            return
        relay, config = self._relay, self._relay.config
        relay.tel("attempt_failed", hub=HUB, delivery_id=call.frame["id"], attempt=attempt,
                  error=type(failure).__name__, timed_out=timed_out(failure))
        if is_resendable(failure) and attempt < config.call_retries:
            retry = attempt + 1 if "b13" in relay.bugs else attempt
            delay_ms = config.call_retry_delay_ms(retry)
            call.retry = relay.loop.call_later(delay_ms / 1000, self.send_attempt, call,
                                               attempt + 1)
            return
        if "b09" in relay.bugs and isinstance(failure, NoSuchNode):
            relay.answers.bounce(call.frame, "NotFound", where=HUB)
        else:
            relay.answers.answer(call.frame, classify(failure), where=HUB, local=False)
        if call.in_transit:
            call.given_up = True
        else:
            self._finish(call, "failed")

    def _timed_out(self, call: _Call) -> BaseException:
        target, timeout_ms = call.frame["dst"], self._relay.config.call_timeout_ms
        timeout = CallTimedOut(f"no reply from {target} within {timeout_ms} ms")
        refusal = CallRefused(f"{target} refused the call on the second transport")
        if call.verdict is Verdict.STALL_TIMEOUT_FIRST:
            return CallFailures("the call failed on both transports", [timeout, refusal])
        if call.verdict is Verdict.STALL_REFUSAL_FIRST:
            return CallFailures("the call failed on both transports", [refusal, timeout])
        return timeout

    async def _carry(self, call: _Call, attempt: int, reply: asyncio.Future[None]) -> None:
        target = call.frame["dst"]
        verdict = await self._placement(target)
        link = self._relay.downlink(target)
        if verdict is Verdict.MISSING or link is None:
            self._refused(call, reply, NoSuchNode(f"no node at {target}"))
            return
        if verdict is Verdict.REFUSE:
            self._refused(call, reply, CallRefused(f"{target} refused the call"))
            return
        call.verdict = verdict
        stall_ms = 0 if verdict is Verdict.PROCEED else self._relay.config.call_timeout_ms
        message = {"kind": "call", "frame": call.frame, "attempt": attempt, "stall_ms": stall_ms,
                   "deadline_ms": call.deadline_ms}
        call.wire = link.write(message, landed=partial(self._handed_over, call),
                               lost=partial(self._lost, call, reply, target),
                               latency_ms=self._relay.config.link_ms)

    def _refused(self, call: _Call, reply: asyncio.Future[None], exc: CallError) -> None:
        call.in_transit = False
        if not reply.done():
            reply.set_exception(exc)
        elif call.given_up:
            self._finish(call, "failed")

    def _handed_over(self, call: _Call) -> None:
        call.wire = None
        call.in_transit = False
        if call.given_up:
            self._finish(call, "failed")

    def _lost(self, call: _Call, reply: asyncio.Future[None], target: str) -> None:
        call.wire = None
        call.in_transit = False
        if not reply.done():
            reply.set_exception(NoSuchNode(f"{target} went away"))
        elif call.given_up:
            self._finish(call, "failed")

    def _finish(self, call: _Call, reason: str) -> None:
        if call.closed:
            return
        call.closed = True
        del self._calls[call.frame["id"]]
        self._relay.gauge.close(call.leg, reason)

    def _cut(self, call: _Call) -> None:
        """The stop's last stage: nothing of this call may run any more."""
        call.closed = True
        self._calls.pop(call.frame["id"], None)
        for handle in (call.waiter, call.courier, call.wire, call.retry):
            if handle is not None:
                handle.cancel()
        if call.reply is not None and call.reply.done() and not call.reply.cancelled():
            call.reply.exception()  # a refusal nobody will read now: mark it seen
