"""One record per capability (`invariants.capabilities.CAPABILITIES`) says what it
enables, and the gates are read from it: the state machines' families and routes, the
`adapter-check` programs, an invariant's applicability. Held here: every name a record
gives is real, an adapter without the capability is spared each thing its record names
(and only those), a capability the protocol shows is taken as declared, and the doc
lists each record."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from invariants.adapter import Capability, FirstChooser
from invariants.capabilities import (
    CAPABILITIES,
    DEFAULT_CAPABILITIES,
    RECORDS,
    capabilities_of,
)
from invariants.checks import CHECKS
from invariants.conformance.programs import PROGRAMS, conformance
from invariants.dynamic.plans import FAMILIES, machine_class
from reference_impl.adapter import ReferenceAdapter

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "adapter.md"
ids = [capability.value for capability in Capability]


def test_one_record_per_capability_in_its_order() -> None:
    assert [info.capability for info in CAPABILITIES] == list(Capability)
    assert {c for c, info in RECORDS.items() if info.default} == DEFAULT_CAPABILITIES


@pytest.mark.parametrize("capability", list(Capability), ids=ids)
def test_every_name_a_record_gives_is_real(capability: Capability) -> None:
    info = RECORDS[capability]
    assert set(info.families) <= set(FAMILIES)
    assert set(info.programs) <= {program.name for program in PROGRAMS}
    assert set(info.checks) <= set(CHECKS)
    for check_id, name in (*info.obligations, *info.waives):
        assert name in CHECKS[check_id].obligations, (check_id, name)
    assert bool(info.waives) == bool(info.waive_reason)


def _without(capability: Capability) -> type[ReferenceAdapter]:
    """The reference mesh, declaring every capability it models but `capability` (and
    not showing it: a method or keyword that would is hidden)."""
    declared = ReferenceAdapter.capabilities - {capability}
    namespace: dict[str, object] = {"capabilities": declared}
    if capability is Capability.ENVELOPE_ROUNDTRIP:
        namespace["set_envelope_roundtrip"] = None
    if capability is Capability.BREAKER_THRESHOLD:
        def create_hub(self: ReferenceAdapter, address: str, *,
                       watermark: int | None = None) -> None:
            ReferenceAdapter.create_hub(self, address, watermark=watermark)
        namespace["create_hub"] = create_hub
    return type(f"Without{capability.name}", (ReferenceAdapter,), namespace)


MODELLED = sorted(ReferenceAdapter.capabilities, key=list(Capability).index)


@pytest.mark.parametrize("capability", MODELLED, ids=[c.value for c in MODELLED])
def test_an_adapter_without_it_is_spared_what_its_record_names(capability: Capability) -> None:
    info = RECORDS[capability]
    adapter = _without(capability)
    assert capabilities_of(adapter(FirstChooser())) == ReferenceAdapter.capabilities - {
        capability}
    everything = {"INV2", "INV4", "INV5", "INV7"}
    drawn = {name for check_id in everything
             for name in vars(machine_class(check_id, adapter))}
    assert not set(info.families) & drawn
    # the control: the reference, which declares it, is drawn every one of them
    assert set(info.families) <= {name for check_id in everything
                                  for name in vars(machine_class(check_id, ReferenceAdapter))}
    _, results = conformance(adapter)
    ran = {result.program for result in results}
    assert not set(info.programs) & ran
    assert ran | set(info.programs) == {p.name for p in PROGRAMS if p.needs in (
        None, *(ReferenceAdapter.capabilities))}
    for check_id in info.checks:
        assert not CHECKS[check_id].needs <= capabilities_of(adapter(FirstChooser()))
    declared = capabilities_of(adapter(FirstChooser()))
    for check_id, name in info.obligations:
        assert name in CHECKS[check_id].inapplicable(declared), (check_id, name)
        assert name not in CHECKS[check_id].inapplicable(ReferenceAdapter.capabilities)


def test_the_at_least_once_record_waives_what_it_names() -> None:
    info = RECORDS[Capability.AT_LEAST_ONCE]
    declared = ReferenceAdapter.capabilities | {Capability.AT_LEAST_ONCE}
    for check_id, name in info.waives:
        assert CHECKS[check_id].inapplicable(declared)[name].endswith(info.waive_reason)
        assert name not in CHECKS[check_id].inapplicable(ReferenceAdapter.capabilities)


class _Shows:
    """An adapter that declares nothing and shows what its protocol shows."""

    def create_hub(self, address: str, *, watermark: int | None = None,
                   breaker_threshold: int | None = None) -> None: ...

    def set_envelope_roundtrip(self, on: bool) -> None: ...

    network = object()


class _ShowsNothing:
    def create_hub(self, address: str, *, watermark: int | None = None) -> None: ...

    network = None


def test_a_capability_the_protocol_shows_is_taken_as_declared() -> None:
    shown = {Capability.ENVELOPE_ROUNDTRIP, Capability.BREAKER_THRESHOLD, Capability.NETWORK}
    assert capabilities_of(_Shows()) == DEFAULT_CAPABILITIES | shown
    assert capabilities_of(_ShowsNothing()) == DEFAULT_CAPABILITIES  # the control


def _doc_rows() -> dict[str, str]:
    section = DOC.read_text(encoding="utf-8").split("## Capabilities\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| (.*) \|$", section, re.MULTILINE)
    return dict(rows)


def test_the_doc_lists_every_capability_with_what_it_gates() -> None:
    rows = _doc_rows()
    assert sorted(rows) == sorted(info.capability.value for info in CAPABILITIES)
    for info in CAPABILITIES:
        row = rows[info.capability.value]
        for check_id in {*info.checks, *(c for c, _ in (*info.obligations, *info.waives))}:
            assert check_id in row, (info.capability, check_id)
        for _, obligation in (*info.obligations, *info.waives):
            assert f'"{obligation}"' in row, (info.capability, obligation)


def test_the_doc_names_the_families_the_state_machines_leave_out() -> None:
    section = DOC.read_text(encoding="utf-8").split("## Capabilities\n", 1)[1]
    left_out = re.search(r"leave out the rule families \(([^)]*)\)", section)
    assert left_out is not None
    named = re.findall(r"`(\w+)`", left_out.group(1))
    assert sorted(named) == sorted(f for info in CAPABILITIES for f in info.families)


def test_the_doc_runs_each_adapter_check_program_for_its_capability() -> None:
    text = DOC.read_text(encoding="utf-8")
    runs_for = dict(re.findall(r"^\| `([\w-]+)` \| (every adapter|`\w+`) \|", text, re.M))
    expected = {program: f"`{info.capability.value}`"
                for info in CAPABILITIES for program in info.programs}
    assert runs_for == {p.name: expected.get(p.name, "every adapter") for p in PROGRAMS}
