"""Dynamic-invariant items: one per invariant per adapter.

Each runs the invariant's state machine against meshes from the adapter's factory under
the run's Hypothesis profile. A failure shows the violations, the shrunk step program, the
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

from harness.item_base import HarnessFailure, HarnessItem
from invariants.checks import CHECKS
from invariants.dynamic.report import obligation_lines
from invariants.dynamic.runner import Outcome, run_invariant


def invariant_nodeid(check_id: str, adapter: str) -> str:
    return f"harness::{check_id}[{adapter}]"


class InvariantItem(HarnessItem):
    def __init__(self, *, check_id: str, adapter: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check_id = check_id
        self.adapter = adapter
        self.add_marker("harness_invariant")

    def runtest(self) -> None:
        factory = self.run.factories[self.adapter]
        outcome = run_invariant(self.check_id, factory, self.run.profile,
                                params=self.run.settings.params,
                                seed_scenarios=not self.run.settings.search_only,
                                bystanders=False)  # an item judges its own invariant
        self.record(kind="invariant", check=self.check_id, adapter=self.adapter,
                    verdict=outcome.verdict, examples=outcome.examples,
                    evidence=dict(outcome.evidence))
        title = CHECKS[self.check_id].title
        if outcome.verdict == "not applicable":  # visible as a skip, never counted as pass
            pytest.skip(f"{title}: {(outcome.failure_text or '').splitlines()[0]}")
        self.add_report_section("call", "evidence", evidence_lines(outcome))
        if outcome.passed:
            return
        if outcome.verdict == "error" and outcome.error is not None:
            # The mesh's own exception, so pytest shows its traceback as --tb asks.
            self.add_report_section("call", "harness", f"{self.check_id} ({title}): the mesh "
                                    f"or adapter {self.adapter} raised")
            raise outcome.error
        if outcome.verdict == "violation":
            head = f"{self.check_id} ({title}) violated by {self.adapter}"
            head += f" after {outcome.examples} example(s)"
            if outcome.shrunk_steps is not None:  # None: the run's counts, not one example
                head += f"; shrunk to {outcome.shrunk_steps} step(s)"
        elif outcome.verdict == "not exercised":
            head = (f"{self.check_id} ({title}) not exercised by {self.adapter} in "
                    f"{outcome.examples} example(s): no verdict without a case to hold on")
            raise HarnessFailure(f"{head}\n{evidence_lines(outcome)}")
        else:
            head = f"{self.check_id} ({title}): the mesh or adapter {self.adapter} raised"
        raise HarnessFailure(f"{head}\n{outcome.failure_text or ''}".rstrip())


def evidence_lines(outcome: Outcome) -> str:
    """Per obligation, the cases the run exercised (and the likely cause of a 0)."""
    lines = [f"{outcome.check_id} evidence ({outcome.examples} example(s)):"]
    lines += obligation_lines(outcome.evidence, outcome.unexercised, outcome.inapplicable, "  ")
    return "\n".join(lines)
