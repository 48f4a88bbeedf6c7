"""Every run judges every check the adapter admits: its own for the verdict, the others as
bystanders, whose first violation is recorded with a program that replays it and whose
evidence is summed, without changing the run's own search.

`RaisesOnFanOut` (bystander_meshes.py) has a bug INV7 judges and only INV6's plan drives;
the clean reference is the control, where no bystander records anything."""

from __future__ import annotations

from bystander_meshes import RaisesOnFanOut
from hypothesis import settings as Settings

from invariants.adapter import AdapterFactory, Capability
from invariants.dynamic.profiles import profile
from invariants.dynamic.runner import Outcome, run_invariant, run_program
from reference_impl.adapter import ReferenceAdapter, make_adapter

SMALL = Settings(profile("ci"), max_examples=5)  # derandomized: the same programs each time


def _search(check_id: str, factory: AdapterFactory, *, bystanders: bool = True) -> Outcome:
    return run_invariant(check_id, factory, SMALL, seed_scenarios=False, bystanders=bystanders)


def test_inv7s_own_run_is_blind_to_the_bug() -> None:
    outcome = _search("INV7", RaisesOnFanOut)
    assert outcome.verdict == "pass"
    assert all(step != "fanout" for seen in outcome.bystanders.values()
               for step, _ in seen.program or ())


def test_inv6s_run_records_inv7s_violation_with_a_program_that_replays_it() -> None:
    outcome = _search("INV6", RaisesOnFanOut)
    assert outcome.verdict == "pass"  # the bystander's violation is not INV6's
    seen = outcome.bystanders["INV7"]
    assert seen.violation is not None
    assert seen.violation.startswith("INV7 violated:")
    assert "raised HandlerFault, though the harness posted no payload that raises" \
        in seen.violation
    assert seen.program is not None
    assert seen.program[0][0] == "init" and "fanout" in [step for step, _ in seen.program]
    replayed = run_program("INV7", RaisesOnFanOut, seen.program)
    assert replayed.verdict == "violation"
    assert "though the harness posted no payload that raises" in str(replayed.violations[0])
    # Only INV7 was broken: no other bystander recorded a violation.
    assert [c for c, s in outcome.bystanders.items() if s.violation] == ["INV7"]


def test_a_seed_program_records_what_its_bystanders_see() -> None:
    outcome = run_invariant("INV6", RaisesOnFanOut, Settings(SMALL, max_examples=1))
    seen = outcome.bystanders["INV7"]
    assert seen.violation is not None and seen.program is not None
    assert run_program("INV7", RaisesOnFanOut, seen.program).verdict == "violation"
    assert seen.example == 1  # INV6's first seed program fans out


def test_a_sighting_names_the_example_it_came_in() -> None:
    # The search's examples are the same each time (derandomized): the sighting's example
    # is the first that shows it, so a run that stops one example short sees nothing.
    first = _search("INV6", RaisesOnFanOut).bystanders["INV7"].example
    assert first is not None and first > 1
    shorter = run_invariant("INV6", RaisesOnFanOut, Settings(SMALL, max_examples=first - 1),
                            seed_scenarios=False)
    assert shorter.bystanders["INV7"].violation is None
    assert shorter.bystanders["INV7"].example is None
    exact = run_invariant("INV6", RaisesOnFanOut, Settings(SMALL, max_examples=first),
                          seed_scenarios=False)
    assert exact.bystanders["INV7"].example == first


def test_the_clean_reference_records_no_bystander_violation() -> None:
    for check_id in ("INV6", "INV7"):
        outcome = _search(check_id, make_adapter)
        assert outcome.verdict == "pass"
        assert outcome.bystanders, check_id
        assert all(seen.violation is None and seen.program is None
                   for seen in outcome.bystanders.values()), check_id
        # Their evidence is harvested: the other checks saw cases of their obligations.
        assert sum(sum(seen.evidence.values()) for seen in outcome.bystanders.values()) > 0


def test_bystanders_leave_the_runs_own_search_as_it_was() -> None:
    watched = _search("INV6", RaisesOnFanOut)
    alone = _search("INV6", RaisesOnFanOut, bystanders=False)
    assert alone.bystanders == {}
    assert (watched.verdict, watched.examples, watched.evidence, watched.behaviours) == (
        alone.verdict, alone.examples, alone.evidence, alone.behaviours)


class _NoSubscribe(ReferenceAdapter):
    capabilities = ReferenceAdapter.capabilities - {Capability.SUBSCRIBE}


def test_a_run_judges_as_bystanders_only_the_checks_the_adapter_admits() -> None:
    assert set(_search("INV1", make_adapter).bystanders) == {
        "INV2", "INV3", "INV4", "INV5", "INV6", "INV7"}
    # INV2 needs subscribe: on an adapter without it, no run judges INV2.
    assert set(_search("INV1", _NoSubscribe).bystanders) == {
        "INV3", "INV4", "INV5", "INV6", "INV7"}
