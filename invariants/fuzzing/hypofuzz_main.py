"""`python -m invariants.fuzzing.hypofuzz_main [-n K] --no-dashboard -- PYTEST_ARGS`.

HypoFuzz's `hypothesis fuzz` command, run through the current interpreter so a session
uses the same environment as the harness (the `hypothesis` script may belong to another),
with one fix to its hub (`keep_hub_alive_until_workers_report`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypofuzz.hypofuzz import FuzzWorkerHub


def keep_hub_alive_until_workers_report() -> None:
    """Start each worker's list of still-valid tests with the tests it was given.

    The hub exits when every worker reports no valid test left (all failed), checked once
    a minute. A worker first reports after its first batch of 100 examples, so the hub
    reads the initial empty lists when the state machines' examples are slow (a batch can
    take minutes), exits, and its workers die at their next report. With the lists
    started, the hub exits only when every worker has really run out of tests.
    """
    if getattr(FuzzWorkerHub, "_harness_keeps_alive", False):
        return
    original: Callable[[Any], None] = FuzzWorkerHub._rebalance

    def rebalance(self: Any) -> None:
        first = not getattr(self, "_harness_rebalanced", False)
        original(self)
        if first:
            self._harness_rebalanced = True
            for state in self.shared_states:
                state["worker_state"]["valid_nodeids"] = list(state["hub_state"]["nodeids"])

    setattr(FuzzWorkerHub, "_rebalance", rebalance)  # noqa: B010 (a method, on purpose)
    setattr(FuzzWorkerHub, "_harness_keeps_alive", True)  # noqa: B010


if __name__ == "__main__":
    from hypofuzz.entrypoint import fuzz

    keep_hub_alive_until_workers_report()
    fuzz(prog_name="hypothesis fuzz")
