"""The workload: what each family of drawn steps does to a mesh.

`Workload` holds the families' bodies, one method a family, named as the family: post
user, can-be-ignored, failure and anonymous traffic, flood with many distinct keys, fan out
and storm on one breaker key, subscribe, make a call land as its caller's wait ends, arm
faults (rejections, timeouts, aggregate answers, blocked turns, slowed destinations,
removed targets, the network's), cut a node with a call across the cut, stop the silo,
and move the clock; and it replays seed scenarios (`play`). It acts only through its
`Driving` (the state machine, `invariants.dynamic.driver.MeshMachine`), whose primitives
keep the judge told of every post, fault, subscription and stop; which families a check's
machine has, as rules, is the plan's business (`invariants.dynamic.plans`).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Mapping, Sequence
from typing import Protocol

from invariants.adapter import Fault, FaultKind, MeshAdapter, MessageSpec, Route
from invariants.checks import CheckParams
from invariants.dynamic.chooser import ScriptedChooser
from invariants.dynamic.seed_programs import SEED_PROGRAMS, Program, resolved
from invariants.trace import EventKind, MessageClass

# Steps of each bulk family per run (thousands of posts each): one fan-out and one storm
# may share a run, so every run of INV6 meets both of its shapes.
MAX_BULK_STEPS = 1
BULK_FAMILIES = frozenset({"fanout", "storm", "chatter"})
# A post's arrival at its target's intake: one of these follows each offer.
_INTAKE = frozenset({EventKind.ENQUEUED, EventKind.REJECTED, EventKind.GATED,
                     EventKind.DROPPED, EventKind.SHED})
HEARTBEAT = MessageSpec("Heartbeat", MessageClass.IGNORABLE)
# What a burst mixes: a request, a control message, chatter.
BURST_MESSAGES: Mapping[str, MessageSpec] = {
    "user": MessageSpec("Request"),
    "lifecycle": MessageSpec("ShutdownRequest", MessageClass.LIFECYCLE),
    "ignorable": HEARTBEAT,
}
BURST_CLASSES: tuple[str, ...] = tuple(BURST_MESSAGES)
RAISING = MessageSpec("FaultingRequest", handler_raises=True)
# A rebuilt node meets again at most this many of the run's last posts to and from its hubs
# (`crash`): enough for a storm past a drawn breaker threshold in one instant, few enough to
# stay a step.
MAX_REPLAYED = 64


_Post = tuple[str, str, MessageSpec, str | None, Route]  # sender, target, spec, identity, route


def with_routes(program: Program, stand_ins: Mapping[Route, Route]) -> Program:
    """`program` with each route in `stand_ins` (its own and its racing posts') replaced."""
    if not stand_ins:
        return program

    def route(r: Route) -> Route:
        return stand_ins.get(r, r)

    steps = []
    for family, arguments in program:
        changed = dict(arguments)
        if "route" in changed:
            changed["route"] = route(changed["route"])
        if "racing" in changed:
            changed["racing"] = [(to, route(r)) for to, r in changed["racing"]]
        steps.append((family, changed))
    return tuple(steps)


class Driving(Protocol):
    """What the workload acts through: the mesh, the run's figures, and the primitives
    that tell the judge what the harness did."""

    chooser: ScriptedChooser
    params: CheckParams  # the run's figures (its drawn watermarks and thresholds)
    stopped: bool

    @property
    def base_params(self) -> CheckParams: ...  # the mesh's declared figures

    @property
    def stand_ins(self) -> Mapping[Route, Route]: ...  # routes the adapter lacks -> taken

    @property
    def mesh(self) -> MeshAdapter: ...

    def post(self, sender: str, target: str, spec: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str: ...

    def inject(self, fault: Fault) -> None: ...

    def subscribe_to(self, subscriber: str, to: str, retries: int) -> None: ...

    def stop_silo(self, *, graceful: bool) -> None: ...

    def advance_clock(self, ms: int) -> None: ...

    def hubs_sharing_node(self, hub: str) -> frozenset[str]: ...  # the run's, `hub` among them


class Workload:
    """The families' bodies, for one run of a machine (`driver`)."""

    def __init__(self, driver: Driving) -> None:
        self.driver = driver
        self.flood_keys = 0
        self.bulk_steps: Counter[str] = Counter()  # steps per bulk family
        # Posts through a router (delivery id -> when), from which the mesh's own hop is
        # read (`hop_ms`), and that hop once seen.
        self._routed: dict[str, int] = {}
        self._hop_ms: int | None = None
        # The run's last posts, for a rebuilt node to meet again (`crash`).
        self._posted: deque[_Post] = deque(maxlen=4 * MAX_REPLAYED)

    @property
    def mesh(self) -> MeshAdapter:
        return self.driver.mesh

    def post(self, sender: str, target: str, spec: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        delivery_id = self.driver.post(sender, target, spec, identity=identity, route=route)
        self._posted.append((sender, target, spec, identity, route))
        if route is not Route.DIRECT and self._hop_ms is None:
            self._routed[delivery_id] = self.mesh.now_ms()
        return delivery_id

    def advance(self, ms: int, schedule: list[int], ties: Sequence[int] = ()) -> None:
        self.driver.chooser.load(schedule, ties)
        self.driver.advance_clock(ms)

    def hop_ms(self) -> int:
        """The mesh's own hop: the least time a post through a router took to reach its
        target's intake from its last attempt, as the trace showed it (1 ms until one has
        been seen)."""
        if self._hop_ms is None and self._routed:
            # From the post, or its last attempt where a router made several (a refused
            # call re-sent after a backoff travels one hop, not the backoff too).
            sent_at = dict(self._routed)
            arrived = []
            for event in self.mesh.trace():
                if event.delivery_id not in sent_at:
                    continue
                if event.kind is EventKind.ATTEMPT:
                    sent_at[event.delivery_id] = event.time_ms
                elif event.kind in _INTAKE:
                    arrived.append(event.time_ms - sent_at[event.delivery_id])
            if any(ms > 0 for ms in arrived):
                self._hop_ms = min(ms for ms in arrived if ms > 0)
                self._routed.clear()
        return self._hop_ms or 1

    def hops_ms(self, hops: int) -> int:
        """`hops` of the mesh's own hops (`hop_ms`), in milliseconds (none: 0, the trace
        not read)."""
        return hops * self.hop_ms() if hops else 0

    def aim(self, timer: int, less_ms: int, schedule: list[int],
            ties: Sequence[int] = (), hops: int = 0) -> None:
        """Advance to `less_ms`, and `hops` of the mesh's own hops (`hop_ms`), before the
        instant one of the mesh's own armed timers falls due (the `timer`-th such instant,
        counted modulo how many there are; a plain 1 ms when none is armed that far ahead):
        the next step's work then lands as that timer fires, after that much travel (0: in
        its instant, once it has run). A race between a mesh's timer and the work landing
        with it needs them due together, which drawn durations rarely give and aiming
        always does, whatever the mesh's own numbers."""
        less_ms += hops * self.hop_ms() if hops else 0
        mesh = self.mesh
        now = mesh.now_ms()
        due = getattr(mesh, "timers_due_ms", None)
        instants = [t - less_ms for t in (due() if callable(due) else ()) if t - less_ms > now]
        self.advance(instants[timer % len(instants)] - now if instants else 1, schedule, ties)

    def play(self, name: str) -> None:
        """Replay a seed scenario's steps (its own `init` aside) on this run's hubs, so the
        known shapes are always among the runs and combine with the steps drawn after."""
        check_id, _, program = name.partition(":")
        steps = resolved(with_routes(SEED_PROGRAMS[check_id][program], self.driver.stand_ins),
                         self.driver.base_params)
        for family, arguments in steps:
            if family == "init" or (family == "stop" and self.driver.stopped):
                continue
            if family == "advance":
                self.driver.advance_clock(arguments["ms"])
            else:
                getattr(self, family)(**arguments)

    def user(self, sender: str, to: str, route: Route, count: int) -> None:
        for _ in range(count):
            self.post(sender, to, MessageSpec("Request"), route=route)

    def burst(self, sender: str, to: str, route: Route, classes: list[str]) -> None:
        """One sender's posts to one target on one route, back to back, of the classes
        drawn: the order a mesh promises its sender (INV7) covers every class, and a mesh
        that lets one class overtake another shows it only on such a mix."""
        for name in classes:
            self.post(sender, to, BURST_MESSAGES[name], route=route)

    def raising(self, sender: str, to: str) -> None:
        """A payload whose handler raises, then an ordinary one behind it, posted straight
        to the hub's intake: the hub must go on to the second."""
        self.post(sender, to, RAISING, route=Route.DIRECT)
        self.post(sender, to, MessageSpec("Request"), route=Route.DIRECT)

    def ignorable(self, sender: str, to: str, route: Route, count: int) -> None:
        for _ in range(count):
            self.post(sender, to, HEARTBEAT, route=route)

    def failure(self, sender: str, to: str, route: Route, lifecycle: bool) -> None:
        spec = (
            MessageSpec("ShutdownRequest", MessageClass.LIFECYCLE)
            if lifecycle
            else MessageSpec("DeliveryFailure", MessageClass.FAILURE)
        )
        self.post(sender, to, spec, route=route)

    def anonymous(self, sender: str, to: str, route: Route, message_class: str) -> None:
        spec = MessageSpec("UpdateStreamRequest", MessageClass(message_class))
        self.post(sender, to, spec, identity=None, route=route)

    def flood(self, to: str, count: int, route: Route) -> None:
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
        return self.driver.params.threshold_at(hub) + 1

    def fanout(self, to: str, extra: int, route: Route = Route.DIRECT) -> None:
        """One sender, target and type about many payload identities, in one window."""
        self.bulk_steps["fanout"] += 1
        for i in range(self.past_threshold(to) + extra):
            spec = MessageSpec("CreateOrUpdateNode", MessageClass.USER, f"node/{i}")
            self.post("importer", to, spec, route=route)

    def storm(self, to: str, route: Route = Route.DIRECT, edges: bool = False) -> None:
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
        params = self.driver.params
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

    def chatter(self, to: str, route: Route = Route.DIRECT) -> None:
        """One key of can-be-ignored traffic past the threshold in one window: the breaker
        must not count it (it may be shed past the watermark, never dropped as a storm)."""
        self.bulk_steps["chatter"] += 1
        spec = MessageSpec("Heartbeat", MessageClass.IGNORABLE, "path/chatter")
        for _ in range(self.past_threshold(to)):
            self.post("chatterer", to, spec, route=route)

    def tied_call(self, sender: str, to: str, wait: str, hop_ms: int, route: Route,
                     hops: int = 0) -> None:
        """A call to `to` slowed by its caller's wait (`wait`: the response or the subscribe
        timeout) less `hop_ms` and `hops` of the mesh's own hops (a request and its answer
        are two), so it is taken up in the instant the wait ends: its answer and the timeout
        fall due together, a timer tie the `ties` script then orders. Any slowdown and call
        may make one; drawn apart, they rarely meet."""
        params = self.driver.base_params
        wait_ms = params.subscribe_timeout_ms if wait == "subscribe" else params.response_timeout_ms
        travel = hop_ms + self.hops_ms(hops)
        self.slow(to, max(wait_ms - travel, 1))
        if wait == "subscribe":
            self.subscribe(sender, to)
        else:
            self.post(sender, to, MessageSpec("Request"), route=route)

    def subscribe(self, subscriber: str, to: str) -> None:
        retries = self.driver.base_params.subscribe_retries
        self.driver.subscribe_to(subscriber, to, retries)

    def reject(self, to: str, count: int) -> None:
        self.driver.inject(Fault(FaultKind.REJECT_NEXT, to, count=count))

    def timeout(self, to: str, count: int) -> None:
        self.driver.inject(Fault(FaultKind.TIMEOUT_NEXT, to, count=count))

    def aggregate(self, to: str, count: int, timeout_first: bool) -> None:
        self.driver.inject(Fault(FaultKind.AGGREGATE_NEXT, to, count=count,
                          timeout_first=timeout_first))

    def block(self, to: str, duration_ms: int) -> None:
        self.driver.inject(Fault(FaultKind.BLOCK_HUB, to, duration_ms=duration_ms))

    def slow(self, to: str, duration_ms: int) -> None:
        self.driver.inject(Fault(FaultKind.SLOW_DESTINATION, to, duration_ms=duration_ms))

    def remove(self, to: str) -> None:
        self.driver.inject(Fault(FaultKind.REMOVE_TARGET, to))

    # The network's faults (an adapter declaring NETWORK), at the node hosting `to`.

    def partition(self, to: str, duration_ms: int, one_way: bool) -> None:
        kind = FaultKind.ISOLATE_OUTBOUND if one_way else FaultKind.PARTITION_NODE
        self.driver.inject(Fault(kind, to, duration_ms=duration_ms))

    def hold_links(self, to: str, duration_ms: int) -> None:
        self.driver.inject(Fault(FaultKind.HOLD_LINKS, to, duration_ms=duration_ms))

    def crash(self, to: str, duration_ms: int, replay_after: str | None = None) -> None:
        """Crash the node hosting `to` for `duration_ms`. With `replay_after`, wait it out
        and post the run's last posts to and from the hubs on that node again (at most
        `MAX_REPLAYED`), as they were posted: two of the mesh's hops after the rebuild
        (`"rebuild"`: what it keeps for a while, a tripped key or a window, is still in
        force), or a response timeout after it (`"timeout"`: time for the node to rejoin).
        A node rebuilt after a crash must keep what the harness made of it (a hub removed,
        a hub's figures, the ids it gives) and nothing of its predecessor's state, and
        shows it only under traffic like the traffic it had before; drawn apart, a crash
        and that traffic after the rebuild rarely meet."""
        self.driver.inject(Fault(FaultKind.CRASH_NODE, to, duration_ms=duration_ms))
        if replay_after is None:
            return
        waits = {"rebuild": self.hops_ms(2), "timeout": self.driver.base_params.response_timeout_ms}
        if replay_after not in waits:
            raise ValueError(f"crash: replay_after must be None or one of {sorted(waits)}, "
                             f"got {replay_after!r}")
        on_node = self.driver.hubs_sharing_node(to)
        self.driver.advance_clock(duration_ms + waits[replay_after])
        again = [post for post in self._posted if post[0] in on_node or post[1] in on_node]
        for sender, target, spec, identity, route in again[-MAX_REPLAYED:]:
            self.post(sender, target, spec, identity=identity, route=route)

    def cut_call(self, sender: str, to: str, cut: FaultKind, duration_ms: int,
                 hops: int, route: Route) -> None:
        """A network fault (`cut`) at the node hosting `to` and a call from `sender` to `to`
        across it, in one step: with `hops` 0 the call is sent into the fault; else the
        fault comes that many of the mesh's own hops (`hop_ms`) after the call, so it meets
        the call on its way or its answer on the way back. Drawn apart, a fault and the
        traffic across it rarely meet (a mesh's INV7 search drew 11 partitions in 162
        examples, none followed by a post across the cut), as a slowdown and a call rarely
        met before `tied_call`."""
        fault = Fault(cut, to, duration_ms=duration_ms)
        if not hops:
            self.driver.inject(fault)
        self.post(sender, to, MessageSpec("Request"), route=route)
        if hops:
            self.driver.advance_clock(self.hops_ms(hops))
            self.driver.inject(fault)

    def stop(
        self,
        graceful: bool,
        racing: Sequence[tuple[str, Route]] = (),
        slow_ms: int = 0,
        give_up_ms: int | None = None,
        lead_hops: int = 0,
    ) -> None:
        """Stop the silo; `racing` posts are sent in the same instant, so their legs (and
        the NACKs they cause) are in flight while the stop runs, and for `slow_ms` more
        when their targets are slowed by that much first (a hold that lasts, or outlives
        the stop budget). With `lead_hops`, they are sent that many of the mesh's own hops
        (`hop_ms`) before the stop: a mesh that dispatches as its loop runs, not as it is
        posted to, has made them legs by then. With `give_up_ms` (None: never), a graceful
        stop is given up on that much later: the host's shutdown timeout expires, a
        non-graceful stop request that ends any hold. At 0 ms it comes in the stop's own
        instant, before the mesh has run its first stage; later, mid-hold or once the stop
        is over."""
        if slow_ms:
            for to in dict.fromkeys(to for to, _route in racing):
                self.slow(to, slow_ms)
        for to, route in racing:
            self.post("client", to, MessageSpec("Request"), route=route)
        if lead_hops and racing:
            self.driver.advance_clock(self.hops_ms(lead_hops))
        self.driver.stop_silo(graceful=graceful)
        if graceful and give_up_ms is not None:
            if give_up_ms:
                self.driver.advance_clock(give_up_ms)
            self.driver.stop_silo(graceful=False)
