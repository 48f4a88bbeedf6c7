"""HypoFuzz's hub, worker loop, targets and collection, each named once, and the
replacements a fuzzing session makes in them (`invariants.fuzzing.sliced_worker` says
why).

- `FuzzWorker`, `FuzzWorkerHub`, `FuzzTarget`, `FailedFatally`, `HitShrinkTimeoutError`
  (`hypofuzz.hypofuzz`), `process_uuid` (`hypofuzz.utils`), `collect_tests`
  (`hypofuzz.collection`, as imported: the original, whatever replaces it later).
- `update_targets`, `switch_to_target`: the worker's private steps a worker loop takes.
- `execute_once`: `FuzzTarget._execute_once` as imported (the original).
- `replace_rebalance`, `replace_worker_class`, `replace_execute_once`,
  `replace_collect_tests`: the replacements, each of a name checked at import.
- `fuzz_main`: HypoFuzz's `hypothesis fuzz` command (imported only when run).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from invariants.engine_internals import HYPOFUZZ_PIN, private_attribute, private_imports

with private_imports("hypofuzz", HYPOFUZZ_PIN):
    import hypofuzz.collection as hypofuzz_collection
    import hypofuzz.hypofuzz as hypofuzz_core
    from hypofuzz.hypofuzz import (
        FailedFatally,
        FuzzTarget,
        FuzzWorker,
        FuzzWorkerHub,
        HitShrinkTimeoutError,
    )
    from hypofuzz.utils import process_uuid

__all__ = [
    "FailedFatally",
    "FuzzTarget",
    "FuzzWorker",
    "FuzzWorkerHub",
    "HitShrinkTimeoutError",
    "collect_tests",
    "execute_once",
    "fuzz_main",
    "process_uuid",
    "replace_collect_tests",
    "replace_execute_once",
    "replace_rebalance",
    "replace_worker_class",
    "switch_to_target",
    "update_targets",
]

# Checked once at import, kept as imported.
collect_tests: Callable[..., Any] = private_attribute(
    hypofuzz_collection, "collect_tests", HYPOFUZZ_PIN)
execute_once: Callable[..., None] = private_attribute(FuzzTarget, "_execute_once", HYPOFUZZ_PIN)
private_attribute(FuzzWorker, "_update_targets", HYPOFUZZ_PIN)
private_attribute(FuzzWorker, "_switch_to_target", HYPOFUZZ_PIN)
private_attribute(FuzzWorkerHub, "_rebalance", HYPOFUZZ_PIN)
private_attribute(hypofuzz_core, "FuzzWorker", HYPOFUZZ_PIN)


def update_targets(worker: FuzzWorker, nodeids: Sequence[str]) -> None:
    """Make `nodeids` the worker's tests (`FuzzWorker._update_targets`)."""
    worker._update_targets(nodeids)


def switch_to_target(worker: FuzzWorker, target: FuzzTarget) -> None:
    """Make `target` the test the worker runs next (`FuzzWorker._switch_to_target`)."""
    worker._switch_to_target(target)


def replace_rebalance(rebalance: Callable[[Any], None]) -> None:
    """`FuzzWorkerHub._rebalance`, the hub's assignment of tests to workers."""
    setattr(FuzzWorkerHub, "_rebalance", rebalance)  # noqa: B010 (a method, on purpose)


def replace_worker_class(worker_class: type[FuzzWorker]) -> None:
    """The class `_start_worker` makes each worker of (`hypofuzz.hypofuzz.FuzzWorker`)."""
    setattr(hypofuzz_core, "FuzzWorker", worker_class)  # noqa: B010 (read at each call)


def replace_execute_once(execute: Callable[..., None]) -> None:
    """`FuzzTarget._execute_once`, one execution of an example."""
    setattr(FuzzTarget, "_execute_once", execute)  # noqa: B010


def replace_collect_tests(collect: Callable[..., Any]) -> None:
    """`hypofuzz.collection.collect_tests`, the hub's collection (read at each call)."""
    setattr(hypofuzz_collection, "collect_tests", collect)  # noqa: B010


def fuzz_main(prog_name: str) -> None:
    """HypoFuzz's `hypothesis fuzz` command on this process's arguments."""
    with private_imports("hypofuzz", HYPOFUZZ_PIN):
        from hypofuzz.entrypoint import fuzz
    fuzz(prog_name=prog_name)


