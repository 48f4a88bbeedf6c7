"""The rule bodies: what each family of drawn steps does to the mesh.

`do_<family>` posts user, can-be-ignored, failure and anonymous traffic, floods with many
distinct keys, fans out and storms on one breaker key, subscribes, makes a call land as its
caller's wait ends, arms faults (rejections, timeouts, aggregate answers, blocked turns,
slowed destinations, removed targets) and stops the silo. `MeshMachine` supplies the
driving primitives they are written against (`mesh`,
`post`, `inject`, `advance_clock`, the judge), and `machine_class` wraps each body as a
rule of a check's machine.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import ClassVar

from invariants.adapter import Fault, FaultKind, MeshAdapter, MessageSpec, Route
from invariants.checks import CheckParams, StopAsked, Subscribed
from invariants.dynamic.judge import Judge
from invariants.trace import MessageClass

HEARTBEAT = MessageSpec("Heartbeat", MessageClass.IGNORABLE)
RAISING = MessageSpec("FaultingRequest", handler_raises=True)


class FamilyBodies:
    """Every family's body, over the primitives below (defined by `MeshMachine`)."""

    base_params: ClassVar[CheckParams]
    params: CheckParams  # the run's: the hubs' watermarks and breaker thresholds
    judge: Judge
    stopped: bool
    flood_keys: int
    bulk_steps: Counter[str]  # steps per bulk family

    @property
    def mesh(self) -> MeshAdapter:
        raise NotImplementedError

    def post(self, sender: str, target: str, spec: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        raise NotImplementedError

    def inject(self, fault: Fault) -> None:
        raise NotImplementedError

    def advance_clock(self, ms: int) -> None:
        raise NotImplementedError

    def do_user(self, sender: str, to: str, route: Route, count: int) -> None:
        for _ in range(count):
            self.post(sender, to, MessageSpec("Request"), route=route)

    def do_raising(self, sender: str, to: str) -> None:
        """A payload whose handler raises, then an ordinary one behind it, posted straight
        to the hub's intake: the hub must go on to the second."""
        self.post(sender, to, RAISING, route=Route.DIRECT)
        self.post(sender, to, MessageSpec("Request"), route=Route.DIRECT)

    def do_ignorable(self, sender: str, to: str, route: Route, count: int) -> None:
        for _ in range(count):
            self.post(sender, to, HEARTBEAT, route=route)

    def do_failure(self, sender: str, to: str, route: Route, lifecycle: bool) -> None:
        spec = (
            MessageSpec("ShutdownRequest", MessageClass.LIFECYCLE)
            if lifecycle
            else MessageSpec("DeliveryFailure", MessageClass.FAILURE)
        )
        self.post(sender, to, spec, route=route)

    def do_anonymous(self, sender: str, to: str, route: Route, message_class: str) -> None:
        spec = MessageSpec("UpdateStreamRequest", MessageClass(message_class))
        self.post(sender, to, spec, identity=None, route=route)

    def do_flood(self, to: str, count: int, route: Route) -> None:
        """Many distinct keys of can-be-ignored traffic (no single key trips the breaker),
        then a user-facing probe behind it, which must still be handled."""
        for _ in range(count):
            self.flood_keys += 1
            spec = MessageSpec("Heartbeat", MessageClass.IGNORABLE, f"path/{self.flood_keys}")
            self.post("flooder", to, spec, route=route)
        self.post("prober", to, MessageSpec("Probe"), route=route)
        # Lifecycle traffic is can-be-ignored too, and must never be shed: one behind the flood.
        self.post("prober", to, MessageSpec("ShutdownRequest", MessageClass.LIFECYCLE),
                  route=route)

    def past_threshold(self, hub: str) -> int:
        """One post more than `hub`'s breaker admits per key per window: a wrong key trips."""
        return self.params.threshold_at(hub) + 1

    def do_fanout(self, to: str, extra: int, route: Route = Route.DIRECT) -> None:
        """One sender, target and type about many payload identities, in one window."""
        self.bulk_steps["fanout"] += 1
        for i in range(self.past_threshold(to) + extra):
            spec = MessageSpec("CreateOrUpdateNode", MessageClass.USER, f"node/{i}")
            self.post("importer", to, spec, route=route)

    def do_storm(self, to: str, route: Route = Route.DIRECT, edges: bool = False) -> None:
        """One key ramping up to a storm. A fresh key filled to the threshold in its first
        window (none may be dropped) and, in that window, one post on the same target, type
        and identity from another sender (a key of its own: past the threshold only for a
        breaker that leaves the sender out). Then either (`edges` false) once the window and
        cooldown have passed, past the threshold again within one window, until the key
        trips; or (`edges`) one post as the first window closes (a new window: admitted),
        that window filled to the threshold and one post a millisecond before it closes
        (it trips). Its drops are legitimate; then one post 1 ms before the cooldown ends
        (still dropped) and one as it ends (admitted again). Either way the same number of
        posts: a shape costs posts, never a choice."""
        self.bulk_steps["storm"] += 1
        spec = MessageSpec("UpdateStream", MessageClass.USER, "stream/1")
        params = self.params
        window = params.breaker_window_ms
        for _ in range(params.threshold_at(to)):
            self.post("owner", to, spec, route=route)
        self.post("co-owner", to, spec, route=route)
        if edges:
            self.mesh.advance(window)
            self.post("owner", to, spec, route=route)
            for _ in range(params.threshold_at(to) - 1):
                self.post("owner", to, spec, route=route)
            self.mesh.advance(max(window - 1, 0))
            self.post("owner", to, spec, route=route)
        else:
            self.mesh.advance(window + params.breaker_cooldown_ms + 1)
            for _ in range(self.past_threshold(to)):
                self.post("owner", to, spec, route=route)
        self.mesh.advance(max(params.breaker_cooldown_ms - 1, 0))
        self.post("owner", to, spec, route=route)
        self.mesh.advance(1)
        self.post("owner", to, spec, route=route)

    def do_chatter(self, to: str, route: Route = Route.DIRECT) -> None:
        """One key of can-be-ignored traffic past the threshold in one window: the breaker
        must not count it (it may be shed past the watermark, never dropped as a storm)."""
        self.bulk_steps["chatter"] += 1
        spec = MessageSpec("Heartbeat", MessageClass.IGNORABLE, "path/chatter")
        for _ in range(self.past_threshold(to)):
            self.post("chatterer", to, spec, route=route)

    def do_tied_call(self, sender: str, to: str, wait: str, hop_ms: int, route: Route) -> None:
        """A call to `to` slowed by its caller's wait (`wait`: the response or the subscribe
        timeout) less `hop_ms`, so it is taken up in the instant the wait ends: its answer
        and the timeout fall due together, a timer tie the `ties` script then orders. Any
        slowdown and call may make one; drawn apart, they rarely meet."""
        params = self.base_params
        wait_ms = params.subscribe_timeout_ms if wait == "subscribe" else params.response_timeout_ms
        self.do_slow(to, max(wait_ms - hop_ms, 1))
        if wait == "subscribe":
            self.do_subscribe(sender, to)
        else:
            self.post(sender, to, MessageSpec("Request"), route=route)

    def do_subscribe(self, subscriber: str, to: str) -> None:
        retries = self.base_params.subscribe_retries
        sid = self.mesh.subscribe(subscriber, to, retries=retries)
        self.judge.tell(Subscribed(sid, subscriber, to, retries, self.mesh.now_ms(),
                                   self.judge.fed))

    def do_reject(self, to: str, count: int) -> None:
        self.inject(Fault(FaultKind.REJECT_NEXT, to, count=count))

    def do_timeout(self, to: str, count: int) -> None:
        self.inject(Fault(FaultKind.TIMEOUT_NEXT, to, count=count))

    def do_aggregate(self, to: str, count: int, timeout_first: bool) -> None:
        self.inject(Fault(FaultKind.AGGREGATE_NEXT, to, count=count,
                          timeout_first=timeout_first))

    def do_block(self, to: str, duration_ms: int) -> None:
        self.inject(Fault(FaultKind.BLOCK_HUB, to, duration_ms=duration_ms))

    def do_slow(self, to: str, duration_ms: int) -> None:
        self.inject(Fault(FaultKind.SLOW_DESTINATION, to, duration_ms=duration_ms))

    def do_remove(self, to: str) -> None:
        self.inject(Fault(FaultKind.REMOVE_TARGET, to))

    def do_stop(
        self,
        graceful: bool,
        racing: Sequence[tuple[str, Route]] = (),
        slow_ms: int = 0,
        give_up_ms: int | None = None,
    ) -> None:
        """Stop the silo; `racing` posts are sent in the same instant, so their legs (and
        the NACKs they cause) are in flight while the stop runs, and for `slow_ms` more
        when their targets are slowed by that much first (a hold that lasts, or outlives
        the stop budget). With `give_up_ms` (None: never), a graceful stop is given up on
        that much later: the host's shutdown timeout expires, a non-graceful stop request
        that ends any hold. At 0 ms it comes in the stop's own instant, before the mesh
        has run its first stage; later, mid-hold or once the stop is over."""
        if slow_ms:
            for to in dict.fromkeys(to for to, _route in racing):
                self.do_slow(to, slow_ms)
        for to, route in racing:
            self.post("client", to, MessageSpec("Request"), route=route)
        self.stopped = True
        self.judge.tell_in_place(self.mesh, StopAsked(graceful, self.mesh.now_ms(), 0))
        self.mesh.stop(graceful=graceful)
        if graceful and give_up_ms is not None:
            if give_up_ms:
                self.advance_clock(give_up_ms)
            self.judge.tell_in_place(self.mesh, StopAsked(False, self.mesh.now_ms(), 0))
            self.mesh.stop(graceful=False)
