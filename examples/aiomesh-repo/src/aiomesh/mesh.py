"""The mesh: hubs, the router's legs, calls, answers, subscriptions and the stop.

Everything runs on one asyncio event loop and reads time only from it. A mesh owns all
of its state: two meshes in one process share nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field

from aiomesh.answers import Answers
from aiomesh.bugs import checked
from aiomesh.calls import Activation, Calls
from aiomesh.envelope import DeliveryFailure, Envelope, Message
from aiomesh.hub import WATERMARK, Hub
from aiomesh.legs import Legs
from aiomesh.observer import Observer
from aiomesh.shutdown import Shutdown
from aiomesh.subscribe import RETRIES, Subscription

ROUTES = ("direct", "routed", "call")
FAULTING = "FaultingRequest"  # its handler raises: the hub notes it and goes on


class HandlerFault(RuntimeError):
    """Raised by the handler of a FaultingRequest."""


@dataclass
class Faults:
    """Test faults, spent in call order: the next `n` calls to a target are refused, or
    outlive the response timeout (the callee still holds them), or fail on two
    transports at once (`True`: the timeout first in the group)."""

    rejects: dict[str, int] = field(default_factory=dict)
    timeouts: dict[str, int] = field(default_factory=dict)
    aggregates: dict[str, list[bool]] = field(default_factory=dict)

    def take_reject(self, target: str) -> bool:
        return self._take(self.rejects, target)

    def take_timeout(self, target: str) -> bool:
        return self._take(self.timeouts, target)

    def take_aggregate(self, target: str) -> bool | None:
        armed = self.aggregates.get(target)
        return armed.pop(0) if armed else None

    @staticmethod
    def _take(counts: dict[str, int], target: str) -> bool:
        left = counts.get(target, 0)
        if left <= 0:
            return False
        counts[target] = left - 1
        return True


class Mesh:
    def __init__(self, *, observer: Observer | None = None, bugs: Iterable[str] = (),
                 at_least_once: bool = False, watermark: int = WATERMARK,
                 seconds_per_ms: float = 0.001,
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        """`seconds_per_ms`: how many loop seconds one of the mesh's milliseconds lasts
        (every figure of the mesh is in milliseconds; a demo on a real clock may shrink
        them all at once)."""
        if seconds_per_ms <= 0:
            raise ValueError(f"seconds_per_ms must be > 0, got {seconds_per_ms}")
        self.seconds_per_ms = seconds_per_ms
        self.loop = loop if loop is not None else asyncio.get_running_loop()
        self.observer = observer if observer is not None else Observer()
        self.bugs = checked(bugs)
        self.at_least_once = at_least_once  # re-send timed-out calls; apply each once
        self.watermark = watermark
        self._t0 = self.loop.time()
        self._ids: dict[str, int] = {}
        self.hubs: dict[str, Hub] = {}
        self.activations: dict[str, Activation] = {}
        self.subscriptions: dict[str, Subscription] = {}
        self.faults = Faults()
        self.legs = Legs(self)
        self.calls = Calls(self)
        self.answers = Answers(self)
        self.shutdown = Shutdown(self)
        self.closing = False  # the stop has begun: nothing new is dispatched
        self.stopped = False

    def now_ms(self) -> int:
        """The mesh's time in its milliseconds, read off the loop's clock."""
        return round((self.loop.time() - self._t0) / self.seconds_per_ms)

    def seconds(self, ms: int) -> float:
        """A duration in the mesh's milliseconds, in loop seconds."""
        return ms * self.seconds_per_ms

    def new_id(self, prefix: str) -> str:
        n = self._ids[prefix] = self._ids.get(prefix, 0) + 1
        return f"{prefix}{n}"

    # What a user of the mesh does -------------------------------------------------------

    def hub(self, address: str, *, watermark: int | None = None,
            breaker_threshold: int | None = None) -> Hub:
        """The hub at `address`, created on first use."""
        hub = self.hubs.get(address)
        if hub is None:
            hub = self.hubs[address] = Hub(self, address, watermark or self.watermark,
                                           breaker_threshold)
            self.activations[address] = Activation(self, address)
            self.observer.hub_created(hub=address, watermark=hub.watermark)
        return hub

    def post(self, sender: str, target: str, message: Message | DeliveryFailure, *,
             identity: str | None = "user", route: str = "routed") -> str:
        """Send `message`; `direct` to the target's intake, `routed` through the router,
        `call` as a call to the target's activation. Returns the delivery id."""
        if route not in ROUTES:
            raise ValueError(f"route must be one of {ROUTES}, got {route!r}")
        self.hub(sender)  # answers come back to the sender's own hub
        env = Envelope(self.new_id("d"), sender, target, identity, message)
        if route != "direct":
            self.legs.dispatch(env, call=route == "call")
        elif (hub := self.hubs.get(target)) is not None:
            hub.offer(env)
        else:
            self.answers.report(env, "NotFound")
        return env.id

    def subscribe(self, subscriber: str, target: str, retries: int = RETRIES) -> str:
        self.hub(subscriber)
        sid = self.new_id("s")
        subscription = self.subscriptions[sid] = Subscription(self, sid, subscriber, target,
                                                              retries)
        if self.closing:
            subscription.end()
        return sid

    def stop(self, *, graceful: bool = True) -> None:
        self.shutdown.request(graceful)

    async def stopped_event(self) -> None:
        """Wait until a requested stop has completed."""
        if self.shutdown.task is not None:
            await self.shutdown.task

    # Operator controls and test faults ---------------------------------------------------

    def block(self, address: str, ms: int) -> None:
        if (hub := self.hubs.get(address)) is not None:
            hub.block(ms)

    def slow_down(self, address: str, ms: int) -> None:
        self.legs.slow[address] = ms

    def remove(self, address: str) -> None:
        hub = self.hubs.pop(address, None)
        if hub is not None:
            hub.close()
        activation = self.activations.pop(address, None)
        if activation is not None:
            activation.close()

    async def aclose(self) -> None:
        """Cancel everything still running (after a stop, or instead of one)."""
        tasks = [hub.task for hub in self.hubs.values()]
        for hub in self.hubs.values():
            hub.close()
        for activation in self.activations.values():
            tasks.extend(activation.held.values())
            activation.close()
        for subscription in self.subscriptions.values():
            if not subscription.task.done():
                subscription.task.cancel()
                tasks.append(subscription.task)
        tasks.extend(self.legs.tasks)
        self.legs.close()
        await asyncio.gather(*tasks, return_exceptions=True)

    # Handlers ---------------------------------------------------------------------------

    def acknowledge(self, env: Envelope) -> None:
        """A subscription's request was taken into its target's queue: that answers it."""
        if (subscription := self.subscriptions.get(env.subscription or "")) is not None:
            subscription.answered(env.id)

    def handle(self, hub: Hub, env: Envelope) -> None:
        """One turn: a failure fails the subscription attempt it answers; whatever it is,
        its handler applied it."""
        body = env.body
        if isinstance(body, DeliveryFailure):
            for subscription in self.subscriptions.values():
                subscription.failed(body.answers, body.error)
        hub.effects[env.id] = hub.effects.get(env.id, 0) + 1
        if isinstance(body, Message) and body.type_name == FAULTING:
            raise HandlerFault(f"handler of {env.id} at {hub.address} failed")
