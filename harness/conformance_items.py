"""Adapter-conformance items: one per adapter, before its invariants.

Each drives the adapter through `adapter-check`'s programs (one per capability it declares)
and fails when a trace breaks a convention the checkers read, one line per broken
convention naming the program, the event and the section of docs/adapter.md: an invariant
verdict on such an adapter could be a false one. The programs run twice in the process
with the same choices, and a trace that differs is a broken convention too. An exception
the adapter raises fails the item with its own traceback.
"""

from __future__ import annotations

from typing import Any

from harness.item_base import HarnessFailure, HarnessItem
from invariants.conformance.determinism import guarded
from invariants.conformance.programs import conformance, result_lines


def conformance_nodeid(adapter: str) -> str:
    return f"harness::adapter-check[{adapter}]"


class ConformanceItem(HarnessItem):
    def __init__(self, *, adapter: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.adapter = adapter
        self.add_marker("harness_conformance")

    def runtest(self) -> None:
        factory = self.run.factories[self.adapter]
        _declared, results = conformance(factory, self.run.settings.params)
        results = guarded(None, factory, results)  # in-process: no subprocess per item
        broken = sum(len(result.broken) for result in results)
        self.record(kind="conformance", adapter=self.adapter, programs=len(results),
                    broken=broken)
        lines = result_lines(results)
        self.add_report_section("call", "adapter-check", "\n".join(lines))
        if broken:
            raise HarnessFailure("\n".join([
                f"adapter {self.adapter} breaks {broken} convention(s) the checkers read "
                f"in {len(results)} program(s) (python -m harness adapter-check):", *lines]))
