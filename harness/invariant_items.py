"""Dynamic-invariant items: one per invariant per adapter.

Each runs the invariant's state machine against meshes from the adapter's factory under
the run's Hypothesis profile; the adapter's selected items are judged together, as `check`
judges them (`harness.invariant_group`): each run judges the others' invariants too.
A failure shows the violations, the shrunk step program, the
reproduce blob and the failing run as a Mermaid sequence diagram; an exception raised by
the mesh or the adapter fails the item with its own traceback (as `--tb` asks), no
invariant verdict. An invariant about a capability the adapter does not declare is skipped
as not applicable, with the reason. Every item's report
carries the run's evidence (per obligation, the cases exercised) as a section; a run that
never exercised some obligation fails as "not exercised", naming the likely cause.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.invariant_group import judged
from harness.item_base import HarnessFailure, HarnessItem
from harness.rows.row import InvariantRow
from invariants.checks import CHECKS
from invariants.dynamic.report import obligation_lines


def invariant_nodeid(check_id: str, adapter: str) -> str:
    return f"harness::{check_id}[{adapter}]"


class InvariantItem(HarnessItem):
    def __init__(self, *, check_id: str, adapter: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check_id = check_id
        self.adapter = adapter
        self.add_marker("harness_invariant")

    def runtest(self) -> None:
        verdict = judged(self.config, self.adapter, self._selected_siblings(), self.check_id)
        outcome, row = verdict.outcome, verdict.row
        self.record(kind="invariant", check=self.check_id, adapter=self.adapter,
                    verdict=row.verdict, examples=row.examples, evidence=dict(row.counts))
        title = CHECKS[self.check_id].title
        if row.verdict == "not applicable":  # visible as a skip, never counted as pass
            pytest.skip(f"{title}: {(outcome.failure_text or '').splitlines()[0]}")
        self.add_report_section("call", "evidence", evidence_lines(row))
        if row.passed:
            return
        if row.verdict == "error" and outcome.error is not None:
            # The mesh's own exception, so pytest shows its traceback as --tb asks.
            self.add_report_section("call", "harness", f"{self.check_id} ({title}): the mesh "
                                    f"or adapter {self.adapter} raised")
            raise outcome.error
        if row.verdict == "violation":
            head = f"{self.check_id} ({title}) violated by {self.adapter}"
            head += f" after {row.examples} example(s)"
            example = row.counterexample
            if example is not None and example.found_by is not None:
                # Another selected invariant's run saw it (`harness.invariant_group`).
                raise HarnessFailure(f"{head}\n{row.evidence}\n{row.failure}".rstrip())
            if outcome.shrunk_steps is not None:  # None: the run's counts, not one example
                head += f"; shrunk to {outcome.shrunk_steps} step(s)"
        elif row.verdict == "not exercised":
            head = (f"{self.check_id} ({title}) not exercised by {self.adapter} in "
                    f"{row.examples} example(s): no verdict without a case to hold on")
            raise HarnessFailure(f"{head}\n{evidence_lines(row)}")
        else:
            head = f"{self.check_id} ({title}): the mesh or adapter {self.adapter} raised"
        raise HarnessFailure(f"{head}\n{outcome.failure_text or ''}".rstrip())

    def _selected_siblings(self) -> tuple[str, ...]:
        """The invariants selected on this item's adapter (itself among them), in order."""
        return tuple(item.check_id for item in self.session.items
                     if isinstance(item, InvariantItem) and item.adapter == self.adapter)


def evidence_lines(row: InvariantRow) -> str:
    """Per obligation, the cases the runs exercised (and the likely cause of a 0)."""
    lines = [f"{row.check_id} evidence ({row.examples} example(s)):"]
    lines += obligation_lines(row.counts, row.unexercised, row.inapplicable, "  ")
    return "\n".join(lines)
