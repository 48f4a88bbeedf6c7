"""The kill matrix's coverage guidance (`invariants.mutants.guide`): where a mutant's change
can run (the bodies of the functions holding it, or at import), and a guided matrix that
gives the verdicts of the full one while it skips cells no run can tell apart."""

from __future__ import annotations

import pytest

from invariants.mutants.guide import Change, change_between
from invariants.mutants.matrix import prove

BEFORE = '''\
LIMIT = 3


class Box:
    def put(self, x, y=LIMIT):
        if x > y:
            return x

        def inner():
            return y

        return inner()

    def take(self):
        return 1
'''


def _change(after: str) -> Change:
    return change_between("m.py", BEFORE, after)


def test_a_change_in_a_body_runs_in_that_body_alone() -> None:
    changed = _change(BEFORE.replace("if x > y:", "if x >= y:"))
    assert changed == Change("m.py", ((6, 12),), at_import=False)
    assert changed.reached_by({"m.py": frozenset({12})})
    assert not changed.reached_by({"m.py": frozenset({15})})  # only `take` ran
    assert not changed.reached_by({"other.py": frozenset({6})})


def test_a_change_in_a_nested_function_is_matched_by_its_own_body() -> None:
    assert _change(BEFORE.replace("return y", "return -y")).bodies == ((10, 10),)


def test_an_inserted_statement_belongs_to_the_body_it_lands_in() -> None:
    # Inserted after the last line of `take`: no line of its own on the reference.
    after = BEFORE.replace("        return 1\n", "        print()\n        return 1\n")
    assert _change(after).bodies == ((15, 15),)
    appended = BEFORE + "        print()\n"  # after `return 1`, still in `take`'s body
    assert _change(appended) == Change("m.py", ((15, 15),), at_import=False)


def test_what_runs_at_import_is_reached_by_every_run() -> None:
    for after in (BEFORE.replace("LIMIT = 3", "LIMIT = 4"),  # a module constant
                  BEFORE.replace("y=LIMIT", "y=0"),  # a default value
                  BEFORE.replace("class Box:", "class Box(object):"),
                  BEFORE.replace("def take(self):", "def took(self):"),  # no such function
                  "def broken(:\n"):  # does not parse
        changed = _change(after)
        assert changed.at_import, after
        assert changed.reached_by({})


@pytest.mark.slow
def test_a_guided_matrix_gives_the_full_matrix_verdicts() -> None:
    """M22 changes code only the post paths run, M15 a constant of the retry ladder: on
    INV1 and INV4 the guided matrix skips the cells whose reference runs never reach their
    change, and every cell, run or skipped, has the full matrix's verdict and examples."""
    chosen = {"mutants": ["M15", "M22"], "checks": ["INV1", "INV4"]}
    guided = prove("ci", **chosen)
    full = prove("ci", **chosen, guided=False)
    assert guided.ok and full.ok
    skipped = {(m, c) for m, row in guided.mutants.items() for c, cell in row.items()
               if cell.unreached}
    assert ("M22", "INV1") in skipped and ("M15", "INV1") not in skipped
    assert not any(cell.unreached for row in full.mutants.values() for cell in row.values())
    for mutant, row in full.mutants.items():
        for check, cell in row.items():
            twin = guided.mutants[mutant][check]
            assert (twin.killed, twin.examples, twin.steps) == (
                cell.killed, cell.examples, cell.steps), (mutant, check)
    assert guided.mutants["M15"]["INV4"].killed  # a listed kill always runs
