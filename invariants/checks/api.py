"""The API a team writes its own trace invariants against: nothing else of the harness.

A team invariant is a checker over the trace, registered in `[tool.harness] invariants =
["mymesh_invariants.leases:LEASES"]` and then judged like INV1–INV7: on every run of every
machine, shrunk, reported with its obligations and their evidence. Write it either way:

- from the combinators (`invariant(check_id, title, *obligations)` with `always`,
  `never`, `eventually`, `leads_to`, `at_most`; `happened` and `by` build their
  predicates and keys), one obligation each;
- by hand, as the built-in ones are: a `Monitor` subclass with `check_id`, `title`,
  `obligations` (obligation -> the likely cause when a run never exercised it) and
  `observe(event)`, calling `self.exercised(obligation)` for each case it judged and
  `self.flag(text, *events)` for each violation; `overdue(now_ms)` for deadlines and
  `unfinished()` for what must have happened once the mesh is quiet.

Events are `TraceEvent`s: the harness's own kinds (`EventKind`, documented in
docs/adapter.md) and the mesh's own (`EventKind.CUSTOM`, made by `custom_event`, read with
`event.custom` and `event.value(name)`). docs/team-invariants.md walks through one.
"""

from __future__ import annotations

from invariants.checks.monitor import Monitor
from invariants.checks.temporal import (
    KeyOf,
    Obligation,
    Predicate,
    Tracker,
    always,
    at_most,
    by,
    eventually,
    happened,
    invariant,
    leads_to,
    never,
)
from invariants.checks.violation import Violation
from invariants.trace import EventKind, MessageClass, TraceEvent, custom_event

__all__ = [
    "EventKind",
    "KeyOf",
    "MessageClass",
    "Monitor",
    "Obligation",
    "Predicate",
    "TraceEvent",
    "Tracker",
    "Violation",
    "always",
    "at_most",
    "by",
    "custom_event",
    "eventually",
    "happened",
    "invariant",
    "leads_to",
    "never",
]
