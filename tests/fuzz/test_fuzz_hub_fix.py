"""The hub fix: a worker's list of valid tests starts with its tests, not empty."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("hypofuzz", reason="needs the fuzz extra: pip install -e '.[fuzz]'")

from hypofuzz.hypofuzz import FuzzWorkerHub

from invariants.fuzzing.hypofuzz_main import keep_hub_alive_until_workers_report

NODES = ["t.py::TestINV1::runTest", "t.py::TestINV2::runTest", "t.py::TestINV3::runTest"]


def _hub() -> Any:
    hub: Any = FuzzWorkerHub(nodeids=NODES, pytest_args=[], n_processes=2)
    hub.shared_states = [
        {"hub_state": {}, "worker_state": {"valid_nodeids": []}} for _ in range(2)
    ]
    return hub


def _idle(hub: Any) -> bool:
    """HypoFuzz's own exit condition: no worker has a valid test."""
    return all(not state["worker_state"]["valid_nodeids"] for state in hub.shared_states)


def test_the_first_assignment_counts_as_valid_until_workers_report(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    control = _hub()
    control._rebalance()
    assert _idle(control)  # unfixed: the hub would exit at its first check

    monkeypatch.setattr(FuzzWorkerHub, "_rebalance", FuzzWorkerHub._rebalance)
    monkeypatch.delattr(FuzzWorkerHub, "_harness_keeps_alive", raising=False)
    keep_hub_alive_until_workers_report()
    hub = _hub()
    hub._rebalance()
    assert not _idle(hub)
    for state in hub.shared_states:
        assert sorted(state["worker_state"]["valid_nodeids"]) == sorted(
            state["hub_state"]["nodeids"]
        )
    # Later rebalances leave the workers' own reports alone: when all report none, it exits.
    for state in hub.shared_states:
        state["worker_state"]["valid_nodeids"] = []
    hub._rebalance()
    assert _idle(hub)
