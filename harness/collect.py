"""The harness collector of a session: scan files, the scan tree, the team rules' examples,
each adapter's conformance and invariants, mutants.

Its items are a pure function of the settings and the files on disk, in a fixed order, so
every pytest-xdist worker collects exactly the same items.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.conformance_items import ConformanceItem, conformance_nodeid
from harness.invariant_items import InvariantItem, invariant_nodeid
from harness.item_base import HarnessItem
from harness.run_key import RUN_KEY
from harness.run_state import HarnessRun
from harness.scan_items import (
    EXAMPLE_NODEID,
    TREE_NODEID,
    RuleExampleItem,
    ScanFileItem,
    ScanTreeItem,
    scan_nodeid,
)
from invariants.scan.examples import examples


class HarnessCollector(pytest.Collector):
    """The parent of every harness item; collected through pytest's own protocol so
    reports, counts and `pytest_itemcollected` see the items like any other."""

    def collect(self) -> list[HarnessItem]:
        return build_items(self, self.config.stash[RUN_KEY])


def harness_items(session: pytest.Session) -> list[pytest.Item]:
    collector = HarnessCollector.from_parent(
        session, name="harness", nodeid="harness", path=session.config.rootpath
    )
    return list(session.genitems(collector))


def build_items(parent: pytest.Collector, run: HarnessRun) -> list[HarnessItem]:
    rootdir = parent.config.rootpath
    items: list[HarnessItem] = []
    for file in run.discovery().files:
        location = Path(file.location)
        items.append(ScanFileItem.from_parent(
            parent, name=f"{file.path}::scan", nodeid=scan_nodeid(location, rootdir, file.path),
            path=location, label=f"scan {file.path}", scan_path=file.path,
        ))
    items.append(ScanTreeItem.from_parent(
        parent, name="scan", nodeid=TREE_NODEID, path=run.settings.root, label="scan (tree)",
    ))
    for rule in run.settings.scan.team_rules.records:  # the built-in ones: the project's tests
        for example in examples(rule):
            items.append(RuleExampleItem.from_parent(
                parent, name=f"rule-example[{example.name}]",
                nodeid=EXAMPLE_NODEID.format(example.name), path=run.settings.root,
                label=f"rule example {example.name}", example=example,
            ))
    for adapter in run.settings.adapters:
        if run.settings.invariants:  # the conventions those verdicts read, first
            items.append(ConformanceItem.from_parent(
                parent, name=f"adapter-check[{adapter}]", nodeid=conformance_nodeid(adapter),
                path=run.settings.root, label=f"adapter-check {adapter}", adapter=adapter,
            ))
        for check_id in run.settings.invariants:
            items.append(InvariantItem.from_parent(
                parent, name=f"{check_id}[{adapter}]", nodeid=invariant_nodeid(check_id, adapter),
                path=run.settings.root, label=f"{check_id} on {adapter}",
                check_id=check_id, adapter=adapter,
            ))
    if run.settings.prove:
        from harness.prove_items import MutantItem, prove_nodeid  # prove mode only
        from invariants.mutants.registry import MUTANTS

        for mutant in MUTANTS:
            items.append(MutantItem.from_parent(
                parent, name=f"prove::{mutant.id}", nodeid=prove_nodeid(mutant.id),
                path=run.settings.root, label=f"prove {mutant.name}",
                mutant_id=mutant.id,
            ))
    return items
