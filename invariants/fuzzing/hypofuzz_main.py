"""`python -m invariants.fuzzing.hypofuzz_main [-n K] --no-dashboard -- PYTEST_ARGS`.

HypoFuzz's `hypothesis fuzz` command, run through the current interpreter so a session
uses the same environment as the harness (the `hypothesis` script may belong to another),
with fixes installed at import, so a worker started by `spawn` (which imports this module
again) has them too: the hub's early exit (`keep_hub_alive_until_workers_report`) and the
replay of a recorded choice sequence (`replay_alignment`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypofuzz.hypofuzz import FuzzWorkerHub

from invariants.fuzzing.replay_alignment import align_replayed_choices


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


def install_fixes() -> None:
    keep_hub_alive_until_workers_report()
    align_replayed_choices()


if __name__ in ("__main__", "__mp_main__"):  # the launcher, or a worker it spawned
    install_fixes()

if __name__ == "__main__":
    from hypofuzz.entrypoint import fuzz

    fuzz(prog_name="hypothesis fuzz")
