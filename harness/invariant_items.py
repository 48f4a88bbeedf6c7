"""Dynamic-invariant items: one per invariant per adapter.

Each runs the invariant's state machine against meshes from the adapter's factory under
the run's Hypothesis profile. A failure shows the violations, the shrunk step program, the
reproduce blob and the failing run as a Mermaid sequence diagram; an exception raised by
the mesh or the adapter is reported as such (no invariant verdict).
"""

from __future__ import annotations

from typing import Any

from harness.item_base import HarnessFailure, HarnessItem
from invariants.checks import CHECKS
from invariants.dynamic.runner import run_invariant


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
                                params=self.run.settings.params)
        self.record(kind="invariant", check=self.check_id, adapter=self.adapter,
                    verdict=outcome.verdict, examples=outcome.examples)
        if outcome.passed:
            return
        title = CHECKS[self.check_id].title
        if outcome.verdict == "violation":
            head = f"{self.check_id} ({title}) violated by {self.adapter}"
            head += (f" after {outcome.examples} example(s); "
                     f"shrunk to {outcome.shrunk_steps} step(s)")
        else:
            head = f"{self.check_id} ({title}): the mesh or adapter {self.adapter} raised"
        raise HarnessFailure(f"{head}\n{outcome.failure_text or ''}".rstrip())
