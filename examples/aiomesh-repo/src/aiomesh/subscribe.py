"""A bounded subscribe: the first answer, a timeout per attempt, a few retries, then an end.

Each attempt sends a `Subscribe` request (a routed leg) and waits, at most `TIMEOUT_MS`,
for the target hub to take it into its queue (that is the answer) or for a
DeliveryFailure answering it. A failed attempt
is retried after `BACKOFF_MS`, doubled for each retry after the first, at most `retries`
times (never more than `MAX_RETRIES`); then the subscription ends with its last error and
sends nothing more. The stop ends every open subscription.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from aiomesh.envelope import MESH_IDENTITY, Envelope, Message
from aiomesh.errors import DeliveryFailed

if TYPE_CHECKING:
    from aiomesh.mesh import Mesh

RETRIES = 3
MAX_RETRIES = 5
TIMEOUT_MS = 1_500
BACKOFF_MS = 200  # before the first retry, doubled for each one after


def backoff_ms(retry: int) -> int:
    """The wait before retry number `retry` (1 = the first)."""
    return BACKOFF_MS << (retry - 1)


class Subscription:
    def __init__(self, mesh: Mesh, sid: str, subscriber: str, target: str,
                 retries: int = RETRIES) -> None:
        self.mesh = mesh
        self.id = sid
        self.subscriber = subscriber
        self.target = target
        self.retries = min(max(retries, 0), MAX_RETRIES)
        self.failures = 0
        self.attempt = -1
        self.request: str | None = None  # the request of the attempt now waiting
        self._waiter: asyncio.Future[None] | None = None
        self.done = False
        self.task = mesh.loop.create_task(self._run(), name=sid)

    async def _run(self) -> None:
        mesh = self.mesh
        while not self.done:
            self.attempt += 1
            env = Envelope(mesh.new_id("d"), self.subscriber, self.target, MESH_IDENTITY,
                           Message("Subscribe"), subscription=self.id)
            self.request = env.id
            self._waiter = waiter = mesh.loop.create_future()
            mesh.observer.subscribe_attempt(hub=self.subscriber, subscription_id=self.id,
                                            attempt=self.attempt, target=self.target,
                                            delivery_id=env.id)
            mesh.legs.dispatch(env)
            try:
                async with asyncio.timeout(self.mesh.seconds(TIMEOUT_MS)):
                    await waiter
            except TimeoutError:
                cause = "timeout"
            except DeliveryFailed as failed:
                cause = failed.error
            else:
                self._end("subscribe_answered")
                return
            self.request = None  # that attempt is over: a late answer to it is ignored
            if not ("unbounded-resubscribe" in mesh.bugs and cause == "NotFound"):
                self.failures += 1
            if self.failures > self.retries:
                self._end("subscribe_terminated", f"retries_exhausted:{cause}")
                return
            await asyncio.sleep(self.mesh.seconds(backoff_ms(self.attempt + 1)))

    def answered(self, request: str) -> None:
        """The target hub took this subscription's request into its queue."""
        if request != self.request:
            return  # an answer to an attempt already given up
        if "late-answer-resets-budget" in self.mesh.bugs:
            self.failures = 0  # the target answers: count its failures afresh
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def failed(self, request: str, error: str) -> None:
        """A DeliveryFailure answering this subscription's request reached the subscriber."""
        if request == self.request and self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(DeliveryFailed(error))

    def end(self) -> None:
        """The mesh stopped: the subscription ends here, whatever it was waiting for."""
        if not self.done:
            self._end("subscribe_terminated", "silo_stopped")
            self.task.cancel()

    def _end(self, kind: str, reason: str | None = None) -> None:
        self.done = True
        self.request = None
        getattr(self.mesh.observer, kind)(hub=self.subscriber, subscription_id=self.id,
                                          attempt=max(self.attempt, 0), reason=reason)
