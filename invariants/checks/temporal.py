"""A team's invariant as named temporal obligations over the trace.

`invariant(check_id, title, *obligations)` makes a `Monitor` subclass from obligations,
each a record made by one combinator:

- `always(name, holds, on=...)`: every event `on` matches satisfies `holds`;
- `never(name, happens, on=...)`: no event `on` matches satisfies `happens`;
- `eventually(name, p, within_ms=...)`: some event of the run matches `p` (within
  `within_ms` of the run's first event, when given);
- `leads_to(name, p, q, within_ms=..., key=...)`: every `p` event is followed by a later
  `q` event (of the same key, when given; within `within_ms`, when given);
- `at_most(name, n, p, per_ms=..., key=...)`: no more than `n` `p` events (per key) in
  the run, or within any `per_ms` ms.

Predicates are plain functions of a `TraceEvent`; `happened` and `by` build the usual
ones. Each obligation's cases count as its evidence, as the built-in checkers' do. A
predicate or key is the team's code: what it raises propagates as it is.

"Within X ms" includes X: a `q` exactly at its deadline is in time (`Monitor.feed` asks
`overdue(t)` before it observes the events at `t`, and a deadline is passed only once
time is later than it), and `at_most`'s window holds the events at most `per_ms` apart.
"""

from __future__ import annotations

import heapq
import sys
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import ClassVar, cast

from invariants.checks.monitor import Monitor
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.checks.violation import Violation
from invariants.trace import CustomEventError, EventKind, TraceEvent, custom_event

Predicate = Callable[[TraceEvent], bool]
KeyOf = Callable[[TraceEvent], Hashable]

_EVENT_FIELDS = frozenset(f.name for f in fields(TraceEvent))
# What `happened` takes as `what`, not as a field to compare.
_NOT_COMPARED = frozenset({"kind", "custom", "data"})
_KINDS = {kind.value: kind for kind in EventKind}


def describe(event: TraceEvent) -> str:
    """An event in a few words: its kind (a custom event's name), delivery id and hub."""
    words = [f"custom {event.custom}" if event.custom is not None else event.kind.value]
    if event.delivery_id is not None:
        words.append(event.delivery_id)
    if event.hub is not None:
        words.append(f"at {event.hub}")
    return " ".join(words)


def _at(event: TraceEvent) -> str:
    return f"seq {event.seq} at {event.time_ms} ms ({describe(event)})"


def _reader(name: str) -> Callable[[TraceEvent], Hashable]:
    """How `name` is read off an event: its `TraceEvent` field, or its custom data value."""
    if name not in _EVENT_FIELDS:
        return lambda event: event.value(name)

    def read(event: TraceEvent) -> Hashable:
        found: Hashable = getattr(event, name)
        # A custom event sets only its seq, time, hub and name: a field it leaves unset is
        # read from its data (a team's own "target" or "attempt").
        if found is None and event.data is not None:
            return event.value(name)
        return found

    return read


class _Happened:
    """The predicate `happened` returns: a kind (or custom name) and fields to compare."""

    __slots__ = ("_custom", "_kind", "_shown", "_tests")

    def __init__(self, what: EventKind | str, expected: dict[str, object]) -> None:
        self._kind = what if isinstance(what, EventKind) else None
        self._custom = None if isinstance(what, EventKind) else what
        self._tests = tuple((_reader(name), value) for name, value in expected.items())
        shown = f"EventKind.{what.name}" if isinstance(what, EventKind) else repr(what)
        self._shown = ", ".join([shown, *(f"{k}={v!r}" for k, v in expected.items())])

    def __call__(self, event: TraceEvent) -> bool:
        if self._kind is not None:
            if event.kind is not self._kind:
                return False
        elif event.custom != self._custom:
            return False
        return all(read(event) == value for read, value in self._tests)

    def __repr__(self) -> str:
        return f"happened({self._shown})"


def happened(what: EventKind | str, **fields: object) -> Predicate:
    """Events of kind `what` (an `EventKind`), or custom events named `what` (a str,
    "namespace.kind"), whose fields equal `fields`: a `TraceEvent` field, or for a name
    that is none (or one a custom event leaves unset), its custom data value."""
    if isinstance(what, EventKind):
        unknown = sorted(set(fields) - _EVENT_FIELDS)
        if unknown and what is not EventKind.CUSTOM:
            raise ValueError(f"happened(EventKind.{what.name}): a {what.value} event has no "
                             f"field {unknown[0]!r} (its fields are TraceEvent's; custom data "
                             "is only on custom events)")
    elif isinstance(what, str):
        try:  # custom_event states the one rule of custom names
            custom_event(0, 0, what)
        except CustomEventError as error:
            kind = _KINDS.get(what)
            hint = (f"; the harness's own kinds are EventKinds: EventKind.{kind.name}"
                    if kind else "")
            raise ValueError(f"happened({what!r}): not a custom event name ({error}){hint}"
                             ) from None
    else:
        raise TypeError(f"happened({what!r}): expected an EventKind or a custom event name "
                        f"(str), got {type(what).__name__}")
    compared = sorted(set(fields) & _NOT_COMPARED)
    if compared:
        raise ValueError(f"happened({what!r}): {compared[0]!r} is not compared as a field; "
                         "give the kind or custom name as `what`")
    return _Happened(what, fields)


class _By:
    """The key `by` returns."""

    __slots__ = ("_names", "_one", "_readers")

    def __init__(self, names: tuple[str, ...]) -> None:
        self._names = names
        self._readers = tuple(_reader(name) for name in names)
        self._one = self._readers[0] if len(names) == 1 else None

    def __call__(self, event: TraceEvent) -> Hashable:
        if self._one is not None:
            return self._one(event)
        return tuple(read(event) for read in self._readers)

    def __repr__(self) -> str:
        return f"by({', '.join(map(repr, self._names))})"


def by(*names: str) -> KeyOf:
    """An event's key: its field `names` (a `TraceEvent` field, else its custom data
    value), one value for one name, a tuple for several."""
    if not names:
        raise ValueError("by(): name at least one field")
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"by({name!r}): a field name is a str, got {type(name).__name__}")
        if not name.isidentifier():
            raise ValueError(f"by({name!r}): a field name is an identifier")
    return _By(names)


def _every(event: TraceEvent) -> bool:
    return True


def _label(predicate: Callable[[TraceEvent], object], otherwise: str) -> str:
    """A predicate as a cause names it: `happened`'s by its repr, a named function by its
    name (never by a repr holding an address, which would differ from run to run)."""
    if isinstance(predicate, _Happened):
        return repr(predicate)
    name = getattr(predicate, "__qualname__", "")
    return name if isinstance(name, str) and name and "<" not in name else otherwise


# Obligations and trackers --------------------------------------------------------------


@dataclass(frozen=True)
class Obligation(ABC):
    """One named obligation of a team invariant: `name` as the check's rows show it,
    `cause` the likely cause when a run never exercised it."""

    name: str
    cause: str

    @abstractmethod
    def tracker(self) -> Tracker:
        """Fresh state for one run."""


class Tracker(ABC):
    """One run's state of one obligation; it reports through the monitor: `exercised` per
    case, `flag` per safety violation."""

    @abstractmethod
    def observe(self, event: TraceEvent, monitor: Monitor) -> None:
        """Take one event."""

    def overdue(self, now_ms: int, monitor: Monitor) -> list[Violation]:
        """Deadlines passed by `now_ms` (one passed may be returned again on every later
        call: the invariant keeps each once per obligation)."""
        return []

    def unfinished(self, monitor: Monitor) -> list[Violation]:
        """What is still owed once the mesh is quiet (asked at the end of a run)."""
        return []


@dataclass(frozen=True)
class _Each(Obligation):
    """`always` and `never`: each event `on` matches is a case, broken where `test` is
    `broken_when`."""

    test: Predicate
    on: Predicate
    broken_when: bool

    def tracker(self) -> Tracker:
        return _EachTracker(self)


class _EachTracker(Tracker):
    def __init__(self, obligation: _Each) -> None:
        self._name = obligation.name
        self._test = obligation.test
        self._on = None if obligation.on is _every else obligation.on
        self._broken_when = obligation.broken_when

    def observe(self, event: TraceEvent, monitor: Monitor) -> None:
        if self._on is not None and not self._on(event):
            return
        if bool(self._test(event)) is self._broken_when:
            monitor.flag(f"{self._name}: {_at(event)} breaks it", event)
        else:
            monitor.exercised(self._name)


@dataclass(frozen=True)
class _Eventually(Obligation):
    p: Predicate
    within_ms: int | None

    def tracker(self) -> Tracker:
        return _EventuallyTracker(self)


class _EventuallyTracker(Tracker):
    def __init__(self, obligation: _Eventually) -> None:
        self._o = obligation
        self._first: TraceEvent | None = None
        self._decided = False  # matched, or its deadline passed
        self._late: list[Violation] = []

    def observe(self, event: TraceEvent, monitor: Monitor) -> None:
        if self._decided:
            return
        if self._first is None:
            self._first = event
        if self._o.p(event):
            self._decided = True
            monitor.exercised(self._o.name)

    def overdue(self, now_ms: int, monitor: Monitor) -> list[Violation]:
        o, first = self._o, self._first
        if (not self._decided and o.within_ms is not None and first is not None
                and now_ms > first.time_ms + o.within_ms):
            self._decided = True
            self._late.append(monitor.violation(
                f"{o.name}: no match within {o.within_ms} ms of the run's first event, "
                f"{_at(first)}", first))
        return self._late

    def unfinished(self, monitor: Monitor) -> list[Violation]:
        if self._decided:
            return []
        anchor = () if self._o.within_ms is None or self._first is None else (self._first,)
        return [monitor.violation(
            f"{self._o.name}: the run went quiet at t={monitor.now_ms} ms without a match",
            *anchor)]


@dataclass(frozen=True)
class _LeadsTo(Obligation):
    p: Predicate
    q: Predicate
    within_ms: int | None
    key: KeyOf | None

    def tracker(self) -> Tracker:
        return _LeadsToTracker(self)


class _LeadsToTracker(Tracker):
    """Pending cases by number (in the order opened) and by key; their deadlines in a
    heap, a discharged case's entry left there until it reaches the top."""

    def __init__(self, obligation: _LeadsTo) -> None:
        self._o = obligation
        self._cases = 0
        self._open: dict[int, tuple[Hashable, TraceEvent]] = {}
        self._by_key: dict[Hashable, dict[int, None]] = {}
        self._deadlines: list[tuple[int, int]] = []  # (deadline, case number)
        self._late: list[Violation] = []

    def observe(self, event: TraceEvent, monitor: Monitor) -> None:
        o = self._o
        # Discharge first: an event matching both answers earlier cases, not its own.
        if self._open and o.q(event):
            pending = self._by_key.pop(None if o.key is None else o.key(event), None)
            if pending:
                for case in pending:
                    del self._open[case]
                monitor.exercised(o.name, len(pending))
        if o.p(event):
            key = None if o.key is None else o.key(event)
            case = self._cases = self._cases + 1
            self._open[case] = (key, event)
            self._by_key.setdefault(key, {})[case] = None
            if o.within_ms is not None:
                heapq.heappush(self._deadlines, (event.time_ms + o.within_ms, case))

    def overdue(self, now_ms: int, monitor: Monitor) -> list[Violation]:
        deadlines = self._deadlines
        while deadlines and deadlines[0][0] < now_ms:
            _, case = heapq.heappop(deadlines)
            opened = self._open.pop(case, None)
            if opened is None:
                continue  # discharged in time
            key, event = opened
            pending = self._by_key[key]
            del pending[case]
            if not pending:
                del self._by_key[key]
            self._late.append(monitor.violation(
                f"{self._o.name}: {_at(event)} was not followed by a match{self._of(key)} "
                f"within {self._o.within_ms} ms", event))
        return self._late

    def unfinished(self, monitor: Monitor) -> list[Violation]:
        return [
            monitor.violation(
                f"{self._o.name}: {_at(event)} was not followed by a match{self._of(key)}: "
                f"the run went quiet at t={monitor.now_ms} ms without one", event)
            for key, event in self._open.values()
        ]

    def _of(self, key: Hashable) -> str:
        return "" if self._o.key is None else f" for key {key!r}"


@dataclass(frozen=True)
class _AtMost(Obligation):
    n: int
    p: Predicate
    per_ms: int | None
    key: KeyOf | None

    def tracker(self) -> Tracker:
        return _AtMostTracker(self)


class _AtMostTracker(Tracker):
    """Per key, the last `n` matches still in the window: a match with `n` before it
    there is one too many."""

    def __init__(self, obligation: _AtMost) -> None:
        self._o = obligation
        self._recent: dict[Hashable, deque[TraceEvent]] = {}
        self._window = ("in the run" if obligation.per_ms is None
                        else f"within {obligation.per_ms} ms")

    def observe(self, event: TraceEvent, monitor: Monitor) -> None:
        o = self._o
        if not o.p(event):
            return
        key = None if o.key is None else o.key(event)
        recent = self._recent.get(key)
        if recent is None:
            recent = self._recent[key] = deque(maxlen=o.n)
        if o.per_ms is not None:
            while recent and event.time_ms - recent[0].time_ms > o.per_ms:
                recent.popleft()
        if len(recent) >= o.n:
            before = ", ".join(f"seq {e.seq} at {e.time_ms} ms" for e in recent)
            keyed = "" if o.key is None else f" for key {key!r}"
            monitor.flag(
                f"{o.name}: {_at(event)} is match {o.n + 1} {self._window}{keyed}, more than "
                f"{o.n}" + (f" (after {before})" if before else ""), *recent, event)
        else:
            monitor.exercised(o.name)
        recent.append(event)


# The combinators: definition-time checks, then the record ------------------------------


def _named(combinator: str, name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{combinator}({name!r}): an obligation's name is a str, got "
                        f"{type(name).__name__}")
    if not name.strip():
        raise ValueError(f"{combinator}({name!r}): an obligation's name is not empty")
    return name


def _callable(combinator: str, name: str, role: str, value: object) -> None:
    if not callable(value):
        raise TypeError(f"{combinator}({name!r}): `{role}` is not callable (got "
                        f"{type(value).__name__} {value!r}); pass a function of a TraceEvent")


def _count(combinator: str, name: str, role: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{combinator}({name!r}): `{role}` is an int, got "
                        f"{type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"{combinator}({name!r}): `{role}` is {value}; it must be >= 0")


def _cause(combinator: str, name: str, cause: object, default: str) -> str:
    if cause is None:
        return default
    if not isinstance(cause, str) or not cause.strip():
        raise TypeError(f"{combinator}({name!r}): `cause` is a non-empty str, got {cause!r}")
    return cause


def _each(combinator: str, name: str, test_role: str, test: Predicate, on: Predicate,
          cause: str | None, broken_when: bool) -> Obligation:
    name = _named(combinator, name)
    _callable(combinator, name, test_role, test)
    _callable(combinator, name, "on", on)
    default = ("the run had no event" if on is _every
               else f"no event matched {_label(on, 'its `on` predicate')} (does the mesh "
               "emit it, and does the plan reach it?)")
    return _Each(name, _cause(combinator, name, cause, default), test, on, broken_when)


def always(name: str, holds: Predicate, *, on: Predicate = _every,
           cause: str | None = None) -> Obligation:
    """Each event `on` matches is a case; one where `holds` is false is a violation."""
    return _each("always", name, "holds", holds, on, cause, broken_when=False)


def never(name: str, happens: Predicate, *, on: Predicate = _every,
          cause: str | None = None) -> Obligation:
    """Each event `on` matches is a case; one where `happens` is true is a violation."""
    return _each("never", name, "happens", happens, on, cause, broken_when=True)


def eventually(name: str, p: Predicate, *, within_ms: int | None = None,
               cause: str | None = None) -> Obligation:
    """Some event of the run matches `p`: the run's one case. None by the end of the
    quiet phase is a violation; with `within_ms`, none by the first event's time plus
    `within_ms` is one as soon as time passes it."""
    name = _named("eventually", name)
    _callable("eventually", name, "p", p)
    if within_ms is not None:
        _count("eventually", name, "within_ms", within_ms)
    default = (f"no event matched {_label(p, 'its predicate')} (does the mesh emit it, and "
               "does the plan reach it?)")
    return _Eventually(name, _cause("eventually", name, cause, default), p, within_ms)


def leads_to(name: str, p: Predicate, q: Predicate, *, within_ms: int | None = None,
             key: KeyOf | None = None, cause: str | None = None) -> Obligation:
    """Each `p` event opens a case (under `key(event)` when `key` is given); a later `q`
    event (of the same key) discharges every case pending under its key, one exercised
    case each. A case still pending when time passes its opening plus `within_ms` is a
    violation, and so is every case pending once the run is quiet."""
    name = _named("leads_to", name)
    _callable("leads_to", name, "p", p)
    _callable("leads_to", name, "q", q)
    if within_ms is not None:
        _count("leads_to", name, "within_ms", within_ms)
    if key is not None:
        _callable("leads_to", name, "key", key)
    default = (f"no event matched {_label(p, 'its trigger `p`')} followed by one matching "
               f"{_label(q, 'its answer `q`')}" + (" of its key" if key is not None else "")
               + " (does the mesh emit them, and does the plan reach them?)")
    return _LeadsTo(name, _cause("leads_to", name, cause, default), p, q, within_ms, key)


def at_most(name: str, n: int, p: Predicate, *, per_ms: int | None = None,
            key: KeyOf | None = None, cause: str | None = None) -> Obligation:
    """Each `p` event is a case; one that makes more than `n` (per key) in the run, or
    with `per_ms` within any `per_ms` ms (the first and last at most `per_ms` apart), is
    a violation naming them (at most `n` + 1 events)."""
    name = _named("at_most", name)
    _count("at_most", name, "n", n)
    _callable("at_most", name, "p", p)
    if per_ms is not None:
        _count("at_most", name, "per_ms", per_ms)
    if key is not None:
        _callable("at_most", name, "key", key)
    default = (f"no event matched {_label(p, 'its predicate')} (does the mesh emit it, and "
               "does the plan reach it?)")
    return _AtMost(name, _cause("at_most", name, cause, default), n, p, per_ms, key)


# The invariant ---------------------------------------------------------------------------


class _Temporal(Monitor):
    """A monitor of obligations: one tracker each, every event to each in turn."""

    temporal: ClassVar[tuple[Obligation, ...]] = ()

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self._trackers = tuple(obligation.tracker() for obligation in self.temporal)
        self._observers = tuple(tracker.observe for tracker in self._trackers)
        # Passed deadlines, each kept once per obligation: the base monitor's latch keys
        # one by its opening event alone, which two obligations may share.
        self._passed: list[Violation] = []
        self._passed_keys: set[tuple[int, tuple[TraceEvent, ...] | str]] = set()

    def observe(self, event: TraceEvent) -> None:
        for observe in self._observers:
            observe(event, self)

    def overdue(self, now_ms: int) -> list[Violation]:
        for index, tracker in enumerate(self._trackers):
            for violation in tracker.overdue(now_ms, self):
                key = (index, violation.events or violation.message)
                if key not in self._passed_keys:
                    self._passed_keys.add(key)
                    self._passed.append(violation)
        return list(self._passed)

    def unfinished(self) -> list[Violation]:
        return [v for tracker in self._trackers for v in tracker.unfinished(self)]

    def violations(self, *, now_ms: int | None = None, final: bool = False) -> list[Violation]:
        # Every deadline passed is kept here (asked mid-run too: virtual time never goes
        # back, so a deadline passed by now is decided), hence no second latch.
        now = self.now_ms if now_ms is None else max(now_ms, self.now_ms)
        found = [*self._found, *self.overdue(now)]
        if final:
            found.extend(self.unfinished())
        return found


def invariant(check_id: str, title: str, *obligations: Obligation) -> type[Monitor]:
    """A checker of `obligations`: a `Monitor` subclass named `check_id`, whose
    `obligations` are theirs (name -> cause) and `temporal` the records themselves."""
    for role, value in (("check id", check_id), ("title", title)):
        if not isinstance(value, str):
            raise TypeError(f"invariant({check_id!r}): the {role} is a str, got "
                            f"{type(value).__name__}")
        if not value.strip():
            raise ValueError(f"invariant({check_id!r}): the {role} is empty")
    if not obligations:
        raise ValueError(f"invariant({check_id!r}): no obligations; give it at least one "
                         "(always, never, eventually, leads_to, at_most)")
    seen: set[str] = set()
    for place, obligation in enumerate(obligations, start=1):
        if not isinstance(obligation, Obligation):
            raise TypeError(
                f"invariant({check_id!r}): obligation {place} is {type(obligation).__name__} "
                f"{obligation!r}, not an Obligation (made by always, never, eventually, "
                "leads_to, at_most; several are passed as separate arguments)")
        if obligation.name in seen:
            raise ValueError(f"invariant({check_id!r}): two obligations are named "
                             f"{obligation.name!r}; each needs a name of its own")
        seen.add(obligation.name)
    made = type(check_id, (_Temporal,), {
        # The module that made it, as a class statement there would say (an error names it).
        "__module__": sys._getframe(1).f_globals.get("__name__", __name__),
        "__qualname__": check_id,
        "__doc__": f"{check_id}: {title} (made by `invariant` from its obligations).",
        "check_id": check_id,
        "title": title,
        "obligations": MappingProxyType({o.name: o.cause for o in obligations}),
        "temporal": tuple(obligations),
    })
    return cast("type[Monitor]", made)
