"""Kill-matrix items (`--harness-prove`): one per pre-fix mutant of the reference mesh.

An item builds its mutant (a libcst codemod of a copy of the reference, imported in
isolation), then runs every check the mutant lists as one that must kill it: a static rule
kills it when the mutant's tree has a finding the reference's lacks; an invariant kills it
when its seed programs or its state machine find a violation. The item fails when one of
them does not, showing the mutant's diff and what each check found. The reference itself
is held to every check by the scan and invariant items.
"""

from __future__ import annotations

from typing import Any

from harness.item_base import HarnessFailure, HarnessItem
from invariants.mutants.base import MutantNotApplicable
from invariants.mutants.build import build_mutant
from invariants.mutants.matrix import (
    STATIC_CHECKS,
    Cell,
    StaticScan,
    dynamic_cell,
    reference_scan_config,
    scan_sources,
    static_cells,
)
from invariants.mutants.registry import find_mutant


def prove_nodeid(mutant_id: str) -> str:
    return f"harness::prove::{mutant_id}"


def _cell_line(check: str, cell: Cell) -> str:
    verdict = "killed" if cell.killed else "SURVIVED"
    detail = f" after {cell.examples} example(s)" if cell.killed and cell.examples else ""
    return f"  {check}: {verdict}{detail}" + (f": {cell.evidence}" if cell.evidence else "")


class MutantItem(HarnessItem):
    def __init__(self, *, mutant_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mutant_id = mutant_id
        self.add_marker("harness_prove")

    def runtest(self) -> None:
        mutant = find_mutant(self.mutant_id)
        try:
            build = build_mutant(mutant)
        except MutantNotApplicable as exc:
            self.record(kind="mutant", mutant=mutant.name, verdict="not applicable")
            raise HarnessFailure(f"{mutant.name}: {exc}") from None
        reference: StaticScan = self.run.reference_scan()
        static = [check for check in mutant.kills if check in STATIC_CHECKS]
        # The reference's names, not this repo's [tool.harness]: these are its mutants.
        config = reference_scan_config()
        # As the kill matrix scans it: the mutated module alone parsed, the rest cached.
        cells = static_cells(scan_sources(build.sources, config), reference, static)
        for check in mutant.kills:  # the run's profile, its shared database already in it
            if check not in STATIC_CHECKS:
                cells[check] = dynamic_cell(check, build.factory, self.run.profile,
                                             seeds_first=mutant.seeds)
        survived = [check for check in mutant.kills if not cells[check].killed]
        killers = [check for check in mutant.kills if cells[check].killed]
        detail = f"by {', '.join(killers)}" if killers else ""
        if survived:
            killed = f"; killed {detail}" if detail else ""
            detail = f"(missed by {', '.join(survived)}{killed})"
        self.record(kind="mutant", mutant=mutant.name,
                    verdict="survived" if survived else "killed", detail=detail)
        if survived:
            lines = [f"{mutant.name} ({mutant.shape}) survived {', '.join(survived)}:"]
            lines += [_cell_line(check, cells[check]) for check in mutant.kills]
            lines += ["", "The mutation:", build.diff.rstrip()]
            raise HarnessFailure("\n".join(lines))
