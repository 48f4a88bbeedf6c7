"""Watches: bounded subscriptions.

A watch is a task that sends a subscribe request and awaits its answer with
`asyncio.wait_for`; on a failure notice or a timeout it waits a doubling backoff and
tries again, at most `retries` times, then ends for good and sends nothing more. An
answer counts only for the request still pending: one landing after its attempt
timed out, or in a backoff, is ignored.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from relaycore.frames import RELAY_IDENTITY, Note, make_frame

if TYPE_CHECKING:
    from relaycore.relay import Relay


class WatchRefused(Exception):
    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


class Watch:
    def __init__(self, relay: Relay, watch_id: str, subscriber: str, target: str,
                 retries: int) -> None:
        if retries < 0:
            raise ValueError(f"watch {subscriber}->{target}: retries must be >= 0, got {retries}")
        self._relay = relay
        self.id = watch_id
        self.subscriber = subscriber
        self.target = target
        self.retries = retries
        self.attempt = 0
        self.outcome: str | None = None  # "answered" or the reason it terminated
        self.task: asyncio.Task[None] | None = None
        self._pending: tuple[str, asyncio.Future[None]] | None = None
        self._timed_out: tuple[str, int] | None = None  # the last request given up, and when

    async def run(self) -> None:
        relay, config = self._relay, self._relay.config
        last = "timeout"
        for attempt in range(self.retries + 1):
            if attempt:
                await asyncio.sleep(config.watch_backoff_delay_ms(attempt - 1) / 1000)
            self.attempt = attempt
            request_id = relay.next_id("d")
            answer: asyncio.Future[None] = relay.loop.create_future()
            self._pending = (request_id, answer)
            relay.tel("subscribe_attempt", hub=self.subscriber, subscription_id=self.id,
                      attempt=attempt, target=self.target, delivery_id=request_id)
            relay.switchboard.dispatch(make_frame(
                request_id, self.subscriber, self.target, "SubscribeRequest", "user",
                Note(key=self.id), RELAY_IDENTITY, sub=self.id))
            timeout_ms = config.watch_timeout_ms
            if "b01" in relay.bugs:
                timeout_ms *= attempt + 1  # a target slow to answer gets longer each time
            try:
                await asyncio.wait_for(answer, timeout_ms / 1000)
            except WatchRefused as refusal:
                last = refusal.error
            except TimeoutError:
                last = "timeout"
                self._timed_out = (request_id, relay.now_ms())
            else:
                self._end("answered")
                return
            finally:
                self._pending = None
            if self.outcome is not None:
                # Closed while its answer had already landed: `wait_for` then returns (or
                # raises) the answer and swallows the cancel, so the task must look.
                return
        self._end(f"retries_exhausted:{last}")

    def settle(self, request_id: str, error: str | None) -> bool:
        """An answer to `request_id`; False when no attempt is waiting for it."""
        bugs = self._relay.bugs
        if self._pending is None or self._pending[0] != request_id:
            if ("b12" in bugs and error is None
                    and self._timed_out == (request_id, self._relay.now_ms())):
                # An answer in its timeout's own millisecond is in time.
                self._end("answered")
                return True
            return False
        answer = self._pending[1]
        if answer.done() and "b08" not in bugs:
            return False
        if error is None:
            answer.set_result(None)
        else:
            answer.set_exception(WatchRefused(error))
        return True

    def close(self, reason: str) -> None:
        """End the watch from outside (the relay stopped); its task is cancelled."""
        if self.outcome is not None:
            return
        self._end(reason)
        if self._pending is not None:
            answer = self._pending[1]
            if answer.done() and not answer.cancelled():
                answer.exception()  # a refusal nobody will read now: mark it seen
        if self.task is not None:
            self.task.cancel()

    def _end(self, outcome: str) -> None:
        if self.outcome is not None:
            return
        self.outcome = outcome
        if outcome == "answered":
            self._relay.tel("subscribe_answered", hub=self.subscriber, subscription_id=self.id,
                            attempt=self.attempt, target=self.target)
        else:
            self._relay.tel("subscribe_terminated", hub=self.subscriber,
                            subscription_id=self.id, attempt=self.attempt, target=self.target,
                            reason=outcome)


class Watches:
    def __init__(self, relay: Relay) -> None:
        self._relay = relay
        self._open: dict[str, Watch] = {}

    def open(self, subscriber: str, target: str, retries: int) -> Watch:
        watch = Watch(self._relay, self._relay.next_id("s"), subscriber, target, retries)
        self._open[watch.id] = watch
        return watch

    def settle(self, request_id: str, error: str | None) -> None:
        for watch in list(self._open.values()):
            if watch.outcome is not None:
                del self._open[watch.id]
            elif watch.settle(request_id, error):
                return

    def close_all(self, reason: str) -> None:
        for watch in list(self._open.values()):
            watch.close(reason)
        self._open.clear()
