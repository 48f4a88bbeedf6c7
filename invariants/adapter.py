"""The adapter protocol: how a mesh under test joins the harness, and nothing else.

The state machines and trace checkers talk to a mesh only through `MeshAdapter`. The
reference mesh (`reference_impl.adapter.ReferenceAdapter`) is the first implementation;
another mesh joins by implementing the same small surface and emitting the trace events
of `invariants.trace`. What the harness itself does with an adapter lives above it: what
each capability enables (`invariants.capabilities`), calling it (`invariants.adapter_calls`).

Every nondeterministic choice an adapter makes (which ready event runs next, whether an
injected fault fires) must be asked of the `Chooser` it was built with, so Hypothesis can
drive and shrink schedules. An adapter over a real, threaded mesh may ignore it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from invariants.trace import MessageClass, TraceEvent

# How a `why` starts for a choice at a virtual instant where a timeout fell due (a response
# timeout and a reply's hop, the reply and the wake-up of the task the timeout cancels), or
# where timers armed at different instants fell due together (a cooldown ending as a post
# lands): the races the harness most wants to explore live there. The harness's chooser
# spends a script of its own on these decisions, afresh at each instant (the text before
# the first comma names it), so they are explored however many choices come before.
TIMER_TIE = "timer tie"
# How a decision that is the simulated network's verdict on a segment or datagram (deliver
# it now, hold it, lose it) starts its `why`: a fault of the network's, not an order.
NETWORK_VERDICT = "verdict"


class Chooser(Protocol):
    """Picks one of `options` alternatives (0-based). `why` names the decision; it starts
    with `TIMER_TIE` at an instant where a timeout fell due, or timers armed apart did."""

    def choose(self, options: int, why: str) -> int: ...


class FirstChooser:
    """Always the first alternative: the plain FIFO schedule."""

    def choose(self, options: int, why: str) -> int:
        return 0


class SeededChooser:
    """Seeded pseudo-random choices: the same seed gives the same schedule."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def choose(self, options: int, why: str) -> int:
        return self._random.randrange(options) if options > 1 else 0


class Route(StrEnum):
    """Which path a post takes to its target."""

    DIRECT = "direct"  # straight onto the target hub's intake (no router, not packaged)
    MONOLITH = "monolith"  # the in-process hierarchical router (packaged)
    GRAIN = "grain"  # the grain router: placement onto activations (packaged)


@dataclass(frozen=True, slots=True)
class MessageSpec:
    """An adapter-neutral description of a payload; the adapter maps it to its own type."""

    type_name: str
    message_class: MessageClass = MessageClass.USER
    diagnostic_key: str | None = None
    # Its handler raises (posted only to an adapter declaring RAISING_HANDLERS): the mesh
    # reports HANDLER_FAULTED and its hub goes on with the next message.
    handler_raises: bool = False


class FaultKind(StrEnum):
    REJECT_NEXT = "reject_next"  # next grain call to `target` is rejected (callee holds nothing)
    TIMEOUT_NEXT = "timeout_next"  # next grain call to `target` outlives the response timeout
    REMOVE_TARGET = "remove_target"  # `target` no longer exists
    BLOCK_HUB = "block_hub"  # `target` hub's turn is held for `duration_ms`
    SLOW_DESTINATION = "slow_destination"  # calls to `target` take `duration_ms` to run
    # The next grain call to `target` fails with an aggregate of a response timeout and a
    # rejection (two transports, one timed out): the callee received it and still holds it.
    # `timeout_first` says which of the two sits first in the aggregate.
    AGGREGATE_NEXT = "aggregate_next"
    # The network (an adapter declaring NETWORK), at the node that hosts `target`, for
    # `duration_ms` (then healed, released, or the node restarted and rebuilt):
    PARTITION_NODE = "partition_node"  # nothing crosses between it and every other node
    ISOLATE_OUTBOUND = "isolate_outbound"  # nothing it sends reaches another node
    HOLD_LINKS = "hold_links"  # every segment on its links waits, then all arrive
    CRASH_NODE = "crash_node"  # it goes down as a machine does, then restarts empty


@dataclass(frozen=True, slots=True)
class Fault:
    kind: FaultKind
    target: str
    duration_ms: int = 0
    count: int = 1  # how many calls REJECT_NEXT / TIMEOUT_NEXT / AGGREGATE_NEXT affect
    timeout_first: bool = True  # AGGREGATE_NEXT: the timeout before the rejection


class Capability(StrEnum):
    """A behaviour family an adapter may model. An adapter declares the ones its mesh has
    in a `capabilities` attribute (one its protocol shows, a method or a keyword, counts as
    declared); the obligations of one it lacks are reported as not applicable, never as
    passed. What each one enables: `docs/adapter.md#capabilities`."""

    GRAIN_ROUTER = "grain_router"  # Route.GRAIN, grain calls, REJECT_NEXT / TIMEOUT_NEXT
    SUBSCRIBE = "subscribe"  # bounded `subscribe`
    STOP_LIFECYCLE = "stop_lifecycle"  # `stop`, with its stages and the graceful hold
    # `set_envelope_roundtrip`: packaged envelopes go through the mesh's wire format (JSON)
    # and back before they are routed.
    ENVELOPE_ROUNDTRIP = "envelope_roundtrip"
    AGGREGATE_FAULTS = "aggregate_faults"  # FaultKind.AGGREGATE_NEXT
    # A grain call that timed out is sent again, and the callee de-duplicates the re-sends:
    # each delivery's effect is applied at most once (EFFECT_APPLIED says where and when).
    AT_LEAST_ONCE = "at_least_once"
    # The mesh starts the `why` of a choice at an instant where a timeout fell due (or
    # timers armed apart did) with `TIMER_TIE` (the virtual loop does, so every kit adapter
    # declares it): the state machines then draw a script for those choices of its own.
    TIMER_TIES = "timer_ties"
    # A `MessageSpec(handler_raises=True)` is handled by a handler that raises.
    RAISING_HANDLERS = "raising_handlers"
    # `create_hub(address, breaker_threshold=N)` sets that hub's per-key storm threshold:
    # the state machines then storm small thresholds, tens of posts instead of thousands.
    BREAKER_THRESHOLD = "breaker_threshold"
    # The mesh's nodes run on a simulated network (`invariants.aio.net`): the network
    # fault kinds are honoured at the node hosting their target.
    NETWORK = "network"


@runtime_checkable
class MeshAdapter(Protocol):
    """A mesh under test, driven in virtual (or real) time."""

    def create_hub(self, address: str, *, watermark: int | None = None) -> None:
        """Create a hub; `watermark` overrides the aggregate shed watermark."""

    def post(
        self,
        sender: str,
        target: str,
        message: MessageSpec,
        *,
        identity: str | None = "user",
        route: Route = Route.MONOLITH,
    ) -> str:
        """Post a delivery; returns its id. `identity=None` means no access context."""

    def subscribe(self, subscriber: str, target: str, *, retries: int = 5) -> str:
        """Start a bounded subscription; returns its id."""

    def inject(self, fault: Fault) -> None:
        """Arm a fault."""

    def advance(self, ms: int) -> None:
        """Run every event due within the next `ms` virtual milliseconds."""

    def run_until_idle(self, limit_ms: int) -> bool:
        """Run until nothing is scheduled or `limit_ms` elapsed; True when idle."""

    def stop(self, *, graceful: bool = True) -> None:
        """Begin the silo stop; `advance`/`run_until_idle` drive it to completion."""

    def now_ms(self) -> int:
        """The current virtual time."""

    def trace(self) -> Sequence[TraceEvent]:
        """Every event so far, in order."""


@runtime_checkable
class RoundTrippingAdapter(MeshAdapter, Protocol):
    """An adapter declaring `Capability.ENVELOPE_ROUNDTRIP` has this method too."""

    def set_envelope_roundtrip(self, on: bool) -> None:
        """From now on (`on`), every packaged envelope goes through the mesh's wire format
        and back before it is routed; the seed's "also after a JSON round trip"."""


class ConfigurableBreakerAdapter(MeshAdapter, Protocol):
    """An adapter declaring `Capability.BREAKER_THRESHOLD` takes a hub's threshold too."""

    def create_hub(self, address: str, *, watermark: int | None = None,
                   breaker_threshold: int | None = None) -> None:
        """Create a hub; `breaker_threshold` (None: the mesh's own) is how many posts of
        one breaker key a window admits there, the next one tripping the key."""


AdapterFactory = Callable[[Chooser], MeshAdapter]
