"""THE KILL MATRIX AS A TEST: in the `ci` profile every mutant is killed by every
check listed for it, and the reference passes every check; deterministically. The seed
scenarios are tried as fixed step programs, so the known shapes always run.

Each kill is proved once: the default run proves a sample (for each check a mutant exists
for, the first mutant listing it: its static rules through the matrix, the reference scanned
alike, and its dynamic kills as the matrix's cells for a mutant), the slow tier (`-m slow`)
the other mutants' through the whole matrix, with the reference's row of every check."""

from __future__ import annotations

import os
import subprocess
import sys

import jsonschema
import pytest

from invariants.dynamic.runner import run_program
from invariants.dynamic.seed_programs import SEED_PROGRAMS
from invariants.mutants.build import build_mutant
from invariants.mutants.matrix import (
    ALL_CHECKS,
    DYNAMIC_CHECKS,
    STATIC_CHECKS,
    Cell,
    Matrix,
    dynamic_cell,
    prove,
)
from invariants.mutants.patch import Patch
from invariants.mutants.registry import MUTANTS, find_mutant

MAX_SHRUNK_STEPS = 12
SAMPLE = tuple(dict.fromkeys(
    next(m.id for m in MUTANTS if check in m.kills)
    for check in ALL_CHECKS if any(check in m.kills for m in MUTANTS)
))
REST = tuple(m.id for m in MUTANTS if m.id not in SAMPLE)
EXPECTED_KILLS = [
    pytest.param(mutant.id, check, id=f"{mutant.id}-{check}",
                 marks=() if mutant.id in SAMPLE else pytest.mark.slow)
    for mutant in MUTANTS for check in mutant.kills
]


@pytest.fixture(scope="module")
def sample() -> Matrix:
    """The sample's static rules; its dynamic kills are `_cell_of`'s (the reference's runs
    of every invariant, whole-mesh searches, are the slow tier's)."""
    return prove("ci", SAMPLE, checks=STATIC_CHECKS, expected_only=True)


@pytest.fixture(scope="module")
def rest() -> Matrix:
    return prove("ci", REST, expected_only=True)


def _cell_of(request: pytest.FixtureRequest, mutant: str, check: str) -> Cell:
    if mutant in SAMPLE and check in DYNAMIC_CHECKS:  # the cell the matrix runs for a mutant
        record = find_mutant(mutant)
        return dynamic_cell(check, build_mutant(record).factory, "ci", seeds_first=record.seeds)
    matrix: Matrix = request.getfixturevalue("sample" if mutant in SAMPLE else "rest")
    return matrix.mutants[mutant][check]


def test_the_sample_and_the_rest_split_the_mutants_and_the_sample_has_every_check() -> None:
    assert sorted(SAMPLE + REST) == sorted(m.id for m in MUTANTS)
    assert not set(SAMPLE) & set(REST) and REST
    listed = {check for m in MUTANTS for check in m.kills}
    assert {check for m in MUTANTS if m.id in SAMPLE for check in m.kills} == listed
    assert set(DYNAMIC_CHECKS) <= listed


@pytest.mark.slow
def test_reference_passes_every_check(rest: Matrix) -> None:
    assert tuple(rest.reference) == ALL_CHECKS
    failing = {c: cell.evidence for c, cell in rest.reference.items() if cell.killed}
    assert failing == {}


def _own_seeds(mutant: str, check: str) -> list[str]:
    """The seed scenarios of `check` the mutant's record names, in its order."""
    return [seed for seed in find_mutant(mutant).seeds if seed in SEED_PROGRAMS[check]]


@pytest.mark.parametrize(("mutant", "check"), EXPECTED_KILLS)
def test_mutant_is_killed_by_listed_check(
    request: pytest.FixtureRequest, mutant: str, check: str
) -> None:
    """Each kill is proved here once: a dynamic one by the mutant's first own seed program
    (its cell runs them first), failing only that check, with a full failure report."""
    cell = _cell_of(request, mutant, check)
    assert cell.killed, f"{mutant} survived {check}"
    if check not in DYNAMIC_CHECKS:
        assert check in cell.evidence
        return
    assert cell.examples >= 1 and 1 <= cell.steps <= MAX_SHRUNK_STEPS, cell
    outcome = cell.outcome
    assert outcome is not None and outcome.verdict == "violation", cell
    assert (outcome.seed_program, cell.examples) == (_own_seeds(mutant, check)[0], 1), cell
    assert {v.check_id for v in outcome.violations} == {check}
    _assert_full_report(check, outcome.failure_text or "", outcome.diagram or "")


def _assert_full_report(check: str, text: str, diagram: str) -> None:
    assert f"{check} violated" in text
    assert f"state = {check}Machine()" in text and "state.init(" in text
    assert "state.teardown()" in text
    assert "```mermaid\nsequenceDiagram" in text
    assert "VIOLATION" in diagram


@pytest.mark.parametrize("tier", ["sample", pytest.param("rest", marks=pytest.mark.slow)])
def test_matrix_is_clean_and_its_json_has_the_documented_shape(
    request: pytest.FixtureRequest, tier: str
) -> None:
    matrix: Matrix = request.getfixturevalue(tier)
    assert matrix.errors == [] and matrix.missing_kills() == [] and matrix.ok
    cell = {
        "type": "object",
        "properties": {
            "killed": {"type": "boolean"},
            "examples": {"type": "integer", "minimum": 0},
            "steps": {"type": "integer", "minimum": 0},
            "seconds": {"type": "number", "minimum": 0},
        },
        "required": ["killed", "examples", "steps", "seconds"],
        "additionalProperties": False,
    }
    checks = {"type": "string", "enum": list(ALL_CHECKS)}
    schema = {
        "type": "object",
        "properties": {
            "reference": {"type": "object", "propertyNames": checks,
                          "additionalProperties": {"enum": ["pass", "fail"]}},
            "mutants": {"type": "object", "additionalProperties": {
                "type": "object", "propertyNames": checks, "additionalProperties": cell}},
            "expected": {"type": "object",
                         "additionalProperties": {"type": "array", "items": checks}},
        },
        "required": ["reference", "mutants", "expected"],
        "additionalProperties": False,
    }
    data = matrix.to_json()
    jsonschema.validate(data, schema)
    chosen = SAMPLE if tier == "sample" else REST
    assert data["expected"] == {m.id: [c for c in m.kills if c in matrix.checks]
                                for m in MUTANTS if m.id in chosen}
    assert set(data["reference"].values()) == {"pass"}


# The seed scenarios that must catch each mutant (its record's `seeds`), as fixed step
# programs of its dynamic kill: the first is its matrix cell's kill, the others run here.
SEED_KILLS = [
    (mutant.id, check, seed)
    for mutant in MUTANTS
    for check in mutant.kills if check in DYNAMIC_CHECKS
    for seed in _own_seeds(mutant.id, check)[1:]
]


def test_every_mutant_a_check_kills_names_its_seed_scenarios() -> None:
    for mutant in MUTANTS:
        dynamic = [check for check in mutant.kills if check in DYNAMIC_CHECKS]
        if not dynamic:
            assert not mutant.seeds, mutant.name
            continue
        assert mutant.seeds, f"{mutant.name} names no seed scenario that catches it"
        for seed in mutant.seeds:
            assert any(seed in SEED_PROGRAMS[check] for check in dynamic), (
                f"{mutant.name}: no seed scenario {seed!r} of {', '.join(dynamic)}")


@pytest.mark.parametrize(("mutant", "check", "seed"), SEED_KILLS,
                         ids=[f"{m}-{s}" for m, _, s in SEED_KILLS])
def test_seed_program_catches_its_mutant(mutant: str, check: str, seed: str) -> None:
    """A mutant's other seed scenarios catch it alike, failing only that check."""
    outcome = run_program(check, build_mutant(find_mutant(mutant)).factory,
                          SEED_PROGRAMS[check][seed])
    assert outcome.verdict == "violation", outcome.failure_text
    assert {v.check_id for v in outcome.violations} == {check}


@pytest.mark.slow
def test_a_mutants_own_seeds_run_first_and_kill_it_alike() -> None:
    """M43's seed is INV6's fourth program: run first, it ends the cell at one program
    with the violation it finds in the check's own order."""
    mutant = find_mutant("M43")
    factory = build_mutant(mutant).factory
    in_order = dynamic_cell("INV6", factory, "ci")
    own_first = dynamic_cell("INV6", factory, "ci", seeds_first=mutant.seeds)
    assert list(SEED_PROGRAMS["INV6"]).index(mutant.seeds[0]) >= 1
    assert in_order.killed and own_first.killed
    assert (in_order.examples, own_first.examples) == (
        list(SEED_PROGRAMS["INV6"]).index(mutant.seeds[0]) + 1, 1)
    assert own_first.evidence == in_order.evidence


@pytest.mark.slow
def test_seeds_first_leave_a_passing_run_as_it_was() -> None:
    """On the reference every program runs whatever the order: the same evidence."""
    from reference_impl.adapter import make_adapter

    last = list(SEED_PROGRAMS["INV5"])[-1]
    in_order = dynamic_cell("INV5", make_adapter, "ci")
    reordered = dynamic_cell("INV5", make_adapter, "ci", seeds_first=(last, "no-such-seed"))
    assert not in_order.killed and not reordered.killed
    assert in_order.outcome is not None and reordered.outcome is not None
    assert in_order.outcome.evidence == reordered.outcome.evidence
    assert in_order.examples == reordered.examples


@pytest.mark.slow
def test_dynamic_kill_is_deterministic() -> None:
    """The drawn rules alone (no seed scenarios): the search itself repeats exactly."""
    factory = build_mutant(find_mutant("M3")).factory
    first = dynamic_cell("INV2", factory, "ci", seed_scenarios=False)
    second = dynamic_cell("INV2", factory, "ci", seed_scenarios=False)
    assert first.killed and second.killed and first.steps <= MAX_SHRUNK_STEPS
    assert (first.examples, first.steps, first.evidence) == (
        second.examples, second.steps, second.evidence)


@pytest.mark.slow
def test_dynamic_kill_is_the_same_in_other_processes() -> None:
    """Same profile, same counterexample, whatever the process's hash seed."""
    script = (
        "from invariants.mutants.build import build_mutant\n"
        "from invariants.mutants.matrix import dynamic_cell\n"
        "from invariants.mutants.registry import find_mutant\n"
        "factory = build_mutant(find_mutant('M3')).factory\n"
        "cell = dynamic_cell('INV2', factory, 'ci', seed_scenarios=False)\n"
        "print(cell.killed, cell.examples, cell.steps, cell.evidence)\n"
    )
    outputs = set()
    for hash_seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              env=env, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1 and next(iter(outputs)).startswith("True ")


# The same bound, written the other way round.
EQUIVALENT = Patch(
    id="M0", slug="equivalent-bound", shape="the retry bound written the other way round",
    path="subscribe.py", site="BoundedSubscription._retry_or_terminate",
    before="self.attempt < self.retries", after="self.retries > self.attempt",
    kills=("INV2", "MESH004"),
)


def test_an_equivalent_mutant_survives_and_the_matrix_says_so() -> None:
    """Negative control of the matrix itself: a rewrite that changes nothing is not killed,
    and a kill it claims is reported missing."""
    result = prove("ci", [EQUIVALENT], checks=["MESH004", "INV2"], expected_only=True)
    cells = result.mutants["M0"]
    assert not cells["INV2"].killed and not cells["MESH004"].killed
    assert cells["INV2"].examples > 1 and cells["INV2"].steps == 0
    assert result.missing_kills() == [("M0", "INV2"), ("M0", "MESH004")]
    assert not result.ok
