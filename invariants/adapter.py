"""The adapter protocol: how a mesh under test joins the harness.

The state machines and trace checkers talk to a mesh only through `MeshAdapter`. The
reference mesh (`reference_impl.adapter.ReferenceAdapter`) is the first implementation;
another mesh joins by implementing the same small surface and emitting the trace events
of `invariants.trace`.

Every nondeterministic choice an adapter makes (which ready event runs next, whether an
injected fault fires) must be asked of the `Chooser` it was built with, so Hypothesis can
drive and shrink schedules. An adapter over a real, threaded mesh may ignore it.
"""

from __future__ import annotations

import dis
import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from invariants.trace import MessageClass, TraceEvent

# How a `why` starts for a choice at a virtual instant where a timeout fell due (a response
# timeout and a reply's hop, the reply and the wake-up of the task the timeout cancels), or
# where timers armed at different instants fell due together (a cooldown ending as a post
# lands): the races the harness most wants to explore live there. The harness's chooser
# spends a script of its own on these decisions, afresh at each instant (`tie_instant`),
# so they are explored however many choices come before.
TIMER_TIE = "timer tie"


def tie_instant(why: str) -> str:
    """The instant a timer tie's `why` names: its text before the first comma (the virtual
    loop's read `timer tie at t=100 ms, step 3: ...`). Ties whose `why` names no instant
    count as one instant."""
    return why.partition(",")[0]


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


# What a fault of the network does to a call: it may time out, or its connection die,
# whichever hubs it joins (the harness does not know which hubs share a node).
NETWORK_FAULTS = frozenset({FaultKind.PARTITION_NODE, FaultKind.ISOLATE_OUTBOUND,
                            FaultKind.HOLD_LINKS, FaultKind.CRASH_NODE})


@dataclass(frozen=True, slots=True)
class Fault:
    kind: FaultKind
    target: str
    duration_ms: int = 0
    count: int = 1  # how many calls REJECT_NEXT / TIMEOUT_NEXT / AGGREGATE_NEXT affect
    timeout_first: bool = True  # AGGREGATE_NEXT: the timeout before the rejection


class Capability(StrEnum):
    """A behaviour family an adapter may model. An adapter declares the ones its mesh has
    in a `capabilities` attribute; the obligations of one it lacks are reported as not
    applicable, never as passed. What each one enables is its record in `CAPABILITIES`."""

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


@dataclass(frozen=True)
class CapabilityInfo:
    """What declaring one capability enables, by name: the code that gates on it lives in
    the layers above (the plans, the adapter-check programs, the checkers), which this
    module must not import; `tests/conformance/test_capability_records.py` holds each
    record to what that code really gates, so the record cannot drift."""

    capability: Capability
    meaning: str  # what the mesh has when it declares it
    default: bool = False  # taken as declared by an adapter that declares nothing
    # Invariants applicable only with it (`Monitor.needs`), and single obligations of the
    # others (`Monitor.obligation_needs`), as (check id, obligation).
    checks: tuple[str, ...] = ()
    obligations: tuple[tuple[str, str], ...] = ()
    # Obligations declaring it makes not applicable (`Monitor.obligation_waived_by`).
    waives: tuple[tuple[str, str], ...] = ()
    # The state machines' rule families and routes only it lets them take
    # (`invariants.dynamic.plans.FAMILY_NEEDS`, `ROUTE_NEEDS`).
    families: tuple[str, ...] = ()
    routes: tuple[Route, ...] = ()
    # The `adapter-check` programs run only for it (`invariants.conformance.programs`).
    programs: tuple[str, ...] = ()
    # The functions that read it besides those tables, qualified by module.
    read_by: tuple[str, ...] = ()


_PLANS = "invariants.dynamic.plans"
_PROGRAMS = "invariants.conformance.programs"

# One record per capability, in the order of `Capability`.
CAPABILITIES: tuple[CapabilityInfo, ...] = (
    CapabilityInfo(
        Capability.GRAIN_ROUTER,
        "Route.GRAIN placement, grain calls, REJECT_NEXT / TIMEOUT_NEXT honoured",
        default=True,
        checks=("INV4",),
        families=("reject", "timeout"),
        routes=(Route.GRAIN,),
        programs=("grain", "fault-order", "zero-count"),
    ),
    CapabilityInfo(
        Capability.SUBSCRIBE,
        "a bounded `subscribe`",
        default=True,
        checks=("INV2",),
        families=("subscribe",),
        programs=("subscribe",),
    ),
    CapabilityInfo(
        Capability.STOP_LIFECYCLE,
        "`stop` with its stages and the graceful hold",
        default=True,
        checks=("INV5",),
        obligations=(
            ("INV2", "subscriptions in backoff ended with the silo"),
            ("INV7", "live targets never answered NotFound"),
        ),
        families=("stop",),
        programs=("stop", "give-up"),
    ),
    CapabilityInfo(
        Capability.ENVELOPE_ROUNDTRIP,
        "`set_envelope_roundtrip(on)`: packaged envelopes go through the mesh's wire "
        "format and back before they are routed",
        obligations=(("INV7", "round-tripped suppressed deliveries left unanswered"),),
        programs=("roundtrip",),
        # The plans' round trip, and seed programs with a round-tripped step.
        read_by=(f"{_PLANS}.within", f"{_PLANS}.program_runs_on"),
    ),
    CapabilityInfo(
        Capability.AGGREGATE_FAULTS,
        "AGGREGATE_NEXT: grain calls fail with an aggregate of a response timeout and a "
        "rejection; the callee received the call and still holds it",
        obligations=(
            ("INV4", "aggregates (timeout first) sent once"),
            ("INV4", "aggregates (rejection first) sent once"),
            ("INV4", "aggregate_next faults honoured"),
        ),
        families=("aggregate",),
        programs=("aggregate",),
        # fault-order and zero-count arm an aggregate too.
        read_by=(f"{_PROGRAMS}._fault_order_kinds",),
    ),
    CapabilityInfo(
        Capability.AT_LEAST_ONCE,
        "with a grain router: a timed-out grain call is sent again and the callee "
        "de-duplicates the re-sends, reporting each application as EFFECT_APPLIED",
        obligations=(("INV4", "delivery effects applied at most once"),),
        waives=(
            ("INV4", "timed-out deliveries sent once"),
            ("INV4", "aggregates (timeout first) sent once"),
            ("INV4", "aggregates (rejection first) sent once"),
            ("INV4", "timed-out deliveries answered as terminal"),
        ),
        # INV4 allows the re-sends; the grain program proves the effects applied once.
        read_by=(
            "invariants.checks.inv4_no_resend_after_timeout.NoResendAfterTimeout._resends",
            f"{_PROGRAMS}._grain_proves",
        ),
    ),
    CapabilityInfo(
        Capability.TIMER_TIES,
        "the mesh starts the `why` of a choice where a timeout (or timers armed apart) fell "
        "due with TIMER_TIE; "
        "the state machines draw a script of their own for those choices, and calls that "
        "land as their caller's wait ends",
        # The `ties` argument of `advance`, and the slowdowns that end on the mesh's waits;
        # every asyncio kit adapter declares it.
        families=("tied_call",),
        read_by=(
            f"{_PLANS}._advance_rule",
            f"{_PLANS}.machine_class",
            "invariants.aio.kit.AsyncMeshAdapter.__init_subclass__",
        ),
    ),
    CapabilityInfo(
        Capability.RAISING_HANDLERS,
        "a `MessageSpec(handler_raises=True)` is handled by a handler that raises: the mesh "
        "reports HANDLER_FAULTED and the hub goes on with its next message",
        obligations=(("INV7", "deliveries behind a raising handler handled"),
                     ("INV7", "handlers raised only where the harness asked")),
        families=("raising",),
        programs=("raising",),
    ),
    CapabilityInfo(
        Capability.BREAKER_THRESHOLD,
        "`create_hub(address, breaker_threshold=N)`: the hub's per-key storm breaker trips "
        "on the (N + 1)th post of a key in one window",
        programs=("breaker",),
        # The plans that storm draw each hub's threshold (`Plan.breakers`) only for it.
        read_by=(f"{_PLANS}.within",),
    ),
    CapabilityInfo(
        Capability.NETWORK,
        "the mesh's nodes talk over a simulated network: PARTITION_NODE, ISOLATE_OUTBOUND, "
        "HOLD_LINKS and CRASH_NODE are honoured at the node hosting their target",
        families=("partition", "hold_links", "crash"),
        programs=("network",),
    ),
)

# What an adapter that declares nothing is taken to model: the protocol's first surface
# (the later, optional methods and fault kinds must be declared to be driven).
DEFAULT_CAPABILITIES: frozenset[Capability] = frozenset(
    info.capability for info in CAPABILITIES if info.default
)


def capabilities_of(adapter: object) -> frozenset[Capability]:
    """The capabilities `adapter` declares (its `capabilities` attribute), else all."""
    declared = getattr(adapter, "capabilities", None)
    if declared is None:
        return DEFAULT_CAPABILITIES
    return frozenset(Capability(item) for item in declared)


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


class ClockError(Exception):
    """The adapter's virtual clock did not move as the harness asked: every timing verdict
    would read a wrong clock, so the run stops with this instead of judging."""


class MeshHung(Exception):
    """A step the harness asked of the mesh did not return within its budget: of CPU
    time (it computed without end) or of wall-clock time (it blocked)."""


AdapterFactory = Callable[[Chooser], MeshAdapter]

# A factory may name its mesh itself, where its module and name do not tell meshes apart
# (a `functools.partial`, one closure made for several meshes, a pre-fix mutant's build).
MESH_ID_ATTRIBUTE = "harness_mesh_id"


def factory_name(factory: AdapterFactory) -> str:
    """What names the mesh a factory makes: its `harness_mesh_id` where it sets one, else
    its `module:qualified name` (what an adapter spec names)."""
    own = getattr(factory, MESH_ID_ATTRIBUTE, None)
    if isinstance(own, str) and own.strip():
        return own.strip()
    module = str(getattr(factory, "__module__", None) or type(factory).__module__)
    name = str(getattr(factory, "__qualname__", None) or type(factory).__qualname__)
    return f"{module}:{name}"


class AdapterExited(Exception):
    """The adapter (its factory or a step) raised `SystemExit`, or a `KeyboardInterrupt`
    of its own: an error of the adapter, shown with the adapter's traceback (its cause),
    never the end of the run, its exit code or an interrupt."""


_RAISE = dis.opmap["RAISE_VARARGS"]


def _signalled(exc: KeyboardInterrupt) -> bool:
    """Whether `exc` is a real interrupt (a signal: the terminal's Ctrl-C, a SIGTERM), not
    one the adapter raised itself. With the harness's handlers installed
    (`invariants.interrupts`) a signal is recorded as it arrives; without them, Python's
    default SIGINT handler raises wherever the interpreter is, never at a `raise`."""
    from invariants import interrupts

    if isinstance(exc, interrupts.Terminated) or interrupts.received() is not None:
        return True
    tb = exc.__traceback__
    if tb is None:
        return True
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code.co_code
    return not (0 <= tb.tb_lasti < len(code) and code[tb.tb_lasti] == _RAISE)


@contextmanager
def calling_adapter(name: str, where: str) -> Iterator[None]:
    """The harness calling into the adapter `name` (`where`: "from its factory", "in step
    'init'"): a `SystemExit` it raises, or a `KeyboardInterrupt` it raises itself, becomes
    an `AdapterExited` naming it, raised from the original; a real interrupt, and every
    other exception, passes through as it is."""
    try:
        yield
    except (SystemExit, KeyboardInterrupt) as exc:
        if isinstance(exc, KeyboardInterrupt) and _signalled(exc):
            raise
        raise AdapterExited(
            f"the adapter {name} raised {exc!r} {where}: an adapter reports an error by "
            "raising an exception, never by ending the run"
        ) from exc
