"""What each adapter capability enables: one record each, the source every gate is read from.

An adapter declares what its mesh models (`MeshAdapter.capabilities`), or shows it through
the protocol: a `set_envelope_roundtrip` method, a `breaker_threshold` keyword of
`create_hub`, a `network`. `capabilities_of(adapter)` is both. Each `CapabilityInfo` names,
by name, what only that capability lets run: the invariants and obligations (their
`Monitor` reads `gates_of(check_id)`), the state machines' rule families and routes
(`family_needs`, `route_needs`) and the `adapter-check` programs (`program_needs`). So the
layers above derive their gates from here, and a record cannot drift from them.

The harness's own: an adapter needs none of it (`invariants.adapter` is its surface).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from invariants.adapter import Capability, FaultKind, Route

# What a fault of the network does to a call: it may time out, or its connection die,
# whichever hubs it joins (the harness does not know which hubs share a node).
NETWORK_FAULTS = frozenset({FaultKind.PARTITION_NODE, FaultKind.ISOLATE_OUTBOUND,
                            FaultKind.HOLD_LINKS, FaultKind.CRASH_NODE})


def _has_roundtrip(adapter: object) -> bool:
    return callable(getattr(adapter, "set_envelope_roundtrip", None))


def _takes_breaker_threshold(adapter: object) -> bool:
    create_hub = getattr(adapter, "create_hub", None)
    try:
        return create_hub is not None and \
            "breaker_threshold" in inspect.signature(create_hub).parameters
    except (TypeError, ValueError):  # no signature to read (a builtin, a C callable)
        return False


def _has_network(adapter: object) -> bool:
    return getattr(adapter, "network", None) is not None


@dataclass(frozen=True)
class CapabilityInfo:
    """What one capability enables, by name (the code that gates on it reads this)."""

    capability: Capability
    meaning: str  # what the mesh has when it declares it
    default: bool = False  # taken as declared by an adapter that declares nothing
    # The protocol showing it (a method, a keyword): taken as declared where it does.
    shown_by: Callable[[object], bool] | None = None
    # Invariants applicable only with it, and single obligations of the others, as
    # (check id, obligation).
    checks: tuple[str, ...] = ()
    obligations: tuple[tuple[str, str], ...] = ()
    # Obligations declaring it makes not applicable, and why.
    waives: tuple[tuple[str, str], ...] = ()
    waive_reason: str = ""
    # The state machines' rule families and routes only it lets them take.
    families: tuple[str, ...] = ()
    routes: tuple[Route, ...] = ()
    # The `adapter-check` programs run only for it.
    programs: tuple[str, ...] = ()


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
        shown_by=_has_roundtrip,
        obligations=(("INV7", "round-tripped suppressed deliveries left unanswered"),),
        programs=("roundtrip",),
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
        waive_reason="a re-send after a timeout is its contract, held to "
        "'delivery effects applied at most once' instead",
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
        shown_by=_takes_breaker_threshold,
        programs=("breaker",),
    ),
    CapabilityInfo(
        Capability.NETWORK,
        "the mesh's nodes talk over a simulated network: PARTITION_NODE, ISOLATE_OUTBOUND, "
        "HOLD_LINKS and CRASH_NODE are honoured at the node hosting their target",
        shown_by=_has_network,
        families=("partition", "hold_links", "crash", "cut_call"),
        programs=("network",),
    ),
)

RECORDS: Mapping[Capability, CapabilityInfo] = MappingProxyType(
    {info.capability: info for info in CAPABILITIES})

# What an adapter that declares nothing is taken to model: the protocol's first surface
# (the later, optional methods and fault kinds must be declared, or shown, to be driven).
DEFAULT_CAPABILITIES: frozenset[Capability] = frozenset(
    info.capability for info in CAPABILITIES if info.default
)


def capabilities_of(adapter: object) -> frozenset[Capability]:
    """What `adapter` models: what it declares (its `capabilities` attribute; none: the
    protocol's first surface) and what its protocol shows."""
    declared = getattr(adapter, "capabilities", None)
    found = (DEFAULT_CAPABILITIES if declared is None
             else frozenset(Capability(item) for item in declared))
    shown = {info.capability for info in CAPABILITIES
             if info.shown_by is not None and info.shown_by(adapter)}
    return found | shown


# The gates, derived.

def family_needs() -> dict[str, Capability]:
    """Rule family -> the capability without which the state machines never draw it."""
    return {family: info.capability for info in CAPABILITIES for family in info.families}


def route_needs() -> dict[Route, Capability]:
    """Route -> the capability without which no post takes it."""
    return {route: info.capability for info in CAPABILITIES for route in info.routes}


def program_needs() -> dict[str, Capability]:
    """`adapter-check` program -> the capability it is run for (the rest run for all)."""
    return {program: info.capability for info in CAPABILITIES for program in info.programs}


@dataclass(frozen=True)
class Gates:
    """What one invariant needs: capabilities for all of it, one for single obligations,
    and the capabilities that waive obligations (with why)."""

    needs: frozenset[Capability]
    obligation_needs: Mapping[str, Capability]
    waived_by: Mapping[str, tuple[Capability, str]]


def gates_of(check_id: str) -> Gates:
    """The gates of invariant `check_id` (none for an invariant no record names)."""
    return Gates(
        frozenset(info.capability for info in CAPABILITIES if check_id in info.checks),
        MappingProxyType({name: info.capability for info in CAPABILITIES
                          for check, name in info.obligations if check == check_id}),
        MappingProxyType({name: (info.capability, info.waive_reason) for info in CAPABILITIES
                          for check, name in info.waives if check == check_id}),
    )
