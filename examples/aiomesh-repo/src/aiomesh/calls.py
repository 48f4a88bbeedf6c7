"""Calls: request/response with correlation ids, a response timeout, and the retry ladder.

A call puts the request into the callee's work queue (its `Activation`) and waits for the
reply under `asyncio.timeout`. The callee runs each call it holds after its delay, applies
it (offers it to the target hub) and hands the reply to the waiter its correlation id
names, if one still waits: a caller that timed out has given up on that reply, not on the
work, which the callee still holds and still runs.

A refused call (Rejected, ShuttingDown) is sent again after min(BASE·2ⁿ, CAP) ms, at most
`RETRIES` times; a timed-out one never is, in the default at-most-once mode, where a reply
that came in the instant the wait ended is taken. In at-least-once mode a timed-out call
is sent again too, a reply in that instant or not, and the callee applies each delivery id
at most once.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from aiomesh.envelope import Envelope
from aiomesh.errors import (
    CallError,
    NotFound,
    Rejected,
    ResponseTimeout,
    ShuttingDown,
    classify,
    is_resendable,
    is_timeout,
    is_transient,
    name,
)
from aiomesh.legs import HOP_MS

if TYPE_CHECKING:
    from aiomesh.mesh import Mesh

RESPONSE_TIMEOUT_MS = 5_000
RETRIES = 4  # re-sends of a refused call: at most 5 calls
RETRY_BASE_MS = 100
RETRY_CAP_MS = 500


def retry_delay_ms(retry: int, *, capped: bool = True) -> int:
    delay = RETRY_BASE_MS << retry
    return min(delay, RETRY_CAP_MS) if capped else delay


class Activation:
    """The callee side of one hub: the calls it holds, each run after its delay."""

    def __init__(self, mesh: Mesh, address: str) -> None:
        self.mesh = mesh
        self.address = address
        self.held: dict[str, asyncio.Task[None]] = {}  # correlation id -> the held call
        self.applied: set[str] = set()  # delivery ids applied (at-least-once mode)
        self.closed = False  # deactivated: what it held was dropped, never run

    def accept(self, cid: str, env: Envelope, delay_ms: int) -> None:
        self.held[cid] = self.mesh.loop.create_task(self._run(cid, env, delay_ms), name=cid)

    async def _run(self, cid: str, env: Envelope, delay_ms: int) -> None:
        await asyncio.sleep(self.mesh.seconds(delay_ms))
        mesh = self.mesh
        del self.held[cid]
        waiter = mesh.calls.pending.get(cid)
        waiting = waiter is not None and not waiter.done()
        reply: BaseException | None = None
        if mesh.at_least_once and env.id in self.applied:
            pass  # a re-send of a delivery already applied: answer it, apply nothing
        elif (hub := mesh.hubs.get(self.address)) is None:
            reply = NotFound(self.address)
        else:
            if mesh.at_least_once and (waiting or "dedupe-after-reply" not in mesh.bugs):
                self.applied.add(env.id)
            if hub.offer(env) == "gated":
                reply = ShuttingDown(f"{self.address} is stopping")
        if waiter is not None and waiting:
            if reply is None:
                waiter.set_result("completed")
                if "forget-answered" in mesh.bugs:
                    self.applied.discard(env.id)  # its caller has the reply: no re-send
            else:
                waiter.set_exception(reply)

    def close(self) -> None:
        """The stop deactivates the callee: the calls it still holds are dropped."""
        self.closed = True
        for task in self.held.values():
            task.cancel()
        self.held.clear()


class Calls:
    def __init__(self, mesh: Mesh) -> None:
        self.mesh = mesh
        self.pending: dict[str, asyncio.Future[str]] = {}  # correlation id -> waiter

    def _may_resend(self, exc: BaseException) -> bool:
        if self.mesh.at_least_once or "resend-timeouts" in self.mesh.bugs:
            return is_transient(exc)
        return is_resendable(exc)

    async def deliver(self, env: Envelope) -> str:
        """Call the target until it takes the delivery or the ladder says stop; the
        leg's end: `completed` or `failed` (the sender was answered)."""
        mesh, attempt = self.mesh, 0
        capped = "uncapped-backoff" not in mesh.bugs
        while True:
            mesh.observer.attempt(hub="calls", delivery_id=env.id, target=env.target,
                                  attempt=attempt)
            try:
                return await self._call(env, attempt)
            except CallError as exc:
                failure: BaseException = exc
            except ExceptionGroup as group:  # two transports, both failed
                failure = group
            mesh.observer.attempt_failed(hub="calls", delivery_id=env.id, attempt=attempt,
                                         error=name(failure), timed_out=is_timeout(failure))
            if attempt < RETRIES and self._may_resend(failure):
                await asyncio.sleep(self.mesh.seconds(retry_delay_ms(attempt, capped=capped)))
                attempt += 1
                continue
            mesh.answers.report(env, classify(failure))
            return "failed"

    async def _call(self, env: Envelope, attempt: int) -> str:
        mesh, target = self.mesh, env.target
        faults = mesh.faults
        activation = mesh.activations.get(target)
        if faults.take_reject(target):
            await asyncio.sleep(self.mesh.seconds(HOP_MS))
            raise Rejected(f"{target}: no activation to take the call")
        if activation is None:
            await asyncio.sleep(self.mesh.seconds(HOP_MS))
            raise NotFound(target)
        aggregate = faults.take_aggregate(target)  # None, or: the timeout comes first
        late = aggregate is not None or faults.take_timeout(target)
        delay = RESPONSE_TIMEOUT_MS + HOP_MS if late else mesh.legs.delay_ms(target)
        cid = mesh.new_id("c")
        waiter: asyncio.Future[str] = mesh.loop.create_future()
        self.pending[cid] = waiter
        mesh.observer.call_received(hub=target, delivery_id=env.id, attempt=attempt)
        activation.accept(cid, env, delay)
        try:
            async with asyncio.timeout(self.mesh.seconds(RESPONSE_TIMEOUT_MS)):
                return await waiter
        except TimeoutError:
            # (a live callee that no longer holds the call has taken it up: the race)
            if ("resend-unheld-timeout" in mesh.bugs and cid not in activation.held
                    and not activation.closed):
                raise Rejected(f"{target}: the call is no longer held: lost") from None
            if not mesh.at_least_once and waiter.done() and not waiter.cancelled():
                return waiter.result()  # the reply came in the instant the wait ended
            timeout = ResponseTimeout(f"{target}: no reply in {RESPONSE_TIMEOUT_MS} ms")
            if aggregate is None:
                raise timeout from None
            refused = Rejected(f"{target}: refused on the second transport")
            members = [timeout, refused] if aggregate else [refused, timeout]
            raise ExceptionGroup(f"{target}: both transports failed", members) from None
        finally:
            del self.pending[cid]
