"""An invariant's row: its verdict on one adapter, with the evidence, the counterexample and
what its run saw of the other checks, as `check` reports it and a `pytest -p harness` item
shows it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.rows.counterexample import Counterexample
from invariants.dynamic.runner import Bystander


@dataclass(frozen=True)
class InvariantRow:
    check_id: str
    passed: bool
    examples: int
    seconds: float  # for people; never part of a verdict
    evidence: str = ""  # the first violation, the error, or why it was not exercised
    verdict: str = ""  # the runner's verdict ("pass", "violation", "not exercised", "error")
    counts: Mapping[str, int] = field(default_factory=dict)  # obligation -> cases exercised
    unexercised: Mapping[str, str] = field(default_factory=dict)  # obligation -> likely cause
    adapter: str = ""  # the adapter spec, where more than one is judged
    traceback: str = ""  # "error": the mesh's exception as Python prints it
    failure: str = ""  # the failure text under the row: program, diagram, schedule, blob
    # Obligations of an optional capability the adapter lacks -> why (listed, not passed).
    inapplicable: Mapping[str, str] = field(default_factory=dict)
    counterexample: Counterexample | None = None  # the failing example, as fields
    # What the row's run saw of the other checks it judged as a bystander (merged away).
    bystanders: Mapping[str, Bystander] = field(default_factory=dict, repr=False)
    # The cases the other invariants' runs gave this one's obligations (included in
    # `counts`): the run's check id -> obligation -> cases, those above 0.
    borrowed: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
