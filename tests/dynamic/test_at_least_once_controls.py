"""The at-least-once obligation on running meshes: M2 resend-timeouts (a timed-out call
sent again) behind an adapter that declares at least once fails "delivery effects applied
at most once" when its callee applies every run, and passes when it applies each delivery
once; over the reference, which never re-sends, nothing is applied twice either. And
adapter-check holds a declared at-least-once adapter to reporting EFFECT_APPLIED."""

from __future__ import annotations

import pytest
from at_least_once_meshes import applied_each_run
from mutant_controls import mutant_factory

from invariants.adapter import AdapterFactory, Capability, Chooser, MeshAdapter
from invariants.checks.inv4_no_resend_after_timeout import APPLIED_ONCE, SENT_ONCE
from invariants.conformance.programs import conformance
from invariants.dynamic.runner import run_program
from invariants.dynamic.seed_programs import SEED_PROGRAMS
from reference_impl.adapter import ReferenceAdapter, make_adapter

PROGRAMS = ("timeout", "one-timeout")


@pytest.mark.parametrize("program", PROGRAMS)
def test_a_resend_applied_twice_fails_the_new_obligation(program: str) -> None:
    factory = applied_each_run(mutant_factory("M2"), dedupe=False)
    outcome = run_program("INV4", factory, SEED_PROGRAMS["INV4"][program], name=program)
    assert outcome.verdict == "violation", outcome.failure_text
    assert outcome.failure_text is not None
    assert "effect applied again" in outcome.failure_text
    assert "re-sent after a timed-out attempt" not in outcome.failure_text


@pytest.mark.parametrize("program", PROGRAMS)
def test_a_resend_deduplicated_passes_it_with_evidence(program: str) -> None:
    factory = applied_each_run(mutant_factory("M2"), dedupe=True)
    outcome = run_program("INV4", factory, SEED_PROGRAMS["INV4"][program], name=program)
    assert outcome.verdict == "pass", outcome.failure_text
    assert outcome.evidence[APPLIED_ONCE] >= 1
    assert outcome.evidence[SENT_ONCE] == 0


def test_the_same_mutant_without_the_capability_still_fails_inv4() -> None:
    outcome = run_program("INV4", mutant_factory("M2"), SEED_PROGRAMS["INV4"]["timeout"])
    assert outcome.verdict == "violation"
    assert outcome.failure_text is not None
    assert "re-sent after a timed-out attempt" in outcome.failure_text


def test_the_reference_declared_at_least_once_passes_every_inv4_seed() -> None:
    factory = applied_each_run(make_adapter, dedupe=False)
    for name, program in SEED_PROGRAMS["INV4"].items():
        outcome = run_program("INV4", factory, program, name=name)
        assert outcome.verdict == "pass", outcome.failure_text


class _DeclaresOnly(ReferenceAdapter):
    # at least once, with no EFFECT_APPLIED (and no network: the reference has none)
    capabilities = frozenset(Capability) - {Capability.NETWORK}


def _declares_only(chooser: Chooser) -> MeshAdapter:
    return _DeclaresOnly(chooser)


def _broken_lines(factory: AdapterFactory) -> list[str]:
    _, results = conformance(factory)
    return [b.line(r.program) for r in results for b in r.broken]


def test_an_at_least_once_adapter_reporting_its_applications_conforms() -> None:
    assert _broken_lines(applied_each_run(make_adapter, dedupe=True)) == []


def test_a_declaration_without_effect_applied_is_a_broken_convention() -> None:
    (line,) = _broken_lines(_declares_only)
    assert line.startswith("grain: ")
    assert "declares at least once, but the callee never reported applying" in line
    assert line.endswith("(docs/adapter.md#capabilities)")
