"""The aiomesh example in its two modes under INV4, in process: the default mesh (at most
once) and `Mesh(at_least_once=True)`, whose adapter declares at least once and reports each
application at the callee, both pass; the planted `dedupe-after-reply` (a delivery recorded
as applied only while its caller still waits, so a re-send after a timeout is applied
again) fails "delivery effects applied at most once"."""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from harness.params import params_from
from invariants.adapter import Capability, FirstChooser
from invariants.capabilities import capabilities_of
from invariants.checks import CheckParams
from invariants.checks.inv4_no_resend_after_timeout import APPLIED_ONCE, SENT_ONCE, TO_BUDGET
from invariants.conformance.programs import conformance
from invariants.dynamic.runner import run_invariant, run_program
from invariants.dynamic.seed_programs import SEED_PROGRAMS

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "aiomesh-repo"


@pytest.fixture(scope="module")
def adapter_module() -> Iterator[ModuleType]:
    sys.path.insert(0, str(EXAMPLE / "src"))
    try:
        import aiomesh.harness_adapter as module

        yield module
    finally:
        sys.path.remove(str(EXAMPLE / "src"))


@pytest.fixture(scope="module")
def params() -> CheckParams:
    with (EXAMPLE / "pyproject.toml").open("rb") as handle:
        table = tomllib.load(handle)["tool"]["harness"]["params"]
    return params_from(table, "aiomesh-repo/pyproject.toml: [tool.harness.params]")


def _inv4(module: ModuleType, params: CheckParams, *, bugs: tuple[str, ...] = (),
          at_least_once: bool) -> dict[str, tuple[str, str | None, dict[str, int]]]:
    def factory(chooser: object) -> object:
        return module.AioMeshAdapter(chooser, bugs=bugs, at_least_once=at_least_once)

    results = {}
    for name in ("timeout", "one-timeout"):
        outcome = run_program("INV4", factory, SEED_PROGRAMS["INV4"][name],  # type: ignore[arg-type]
                              params=params, name=name)
        results[name] = (outcome.verdict, outcome.failure_text, outcome.evidence)
    return results


def test_the_at_most_once_mesh_passes_and_declares_no_at_least_once(
    adapter_module: ModuleType, params: CheckParams
) -> None:
    assert Capability.AT_LEAST_ONCE not in capabilities_of(adapter_module.make(FirstChooser()))
    for verdict, text, evidence in _inv4(adapter_module, params, at_least_once=False).values():
        assert verdict == "pass", text
        assert evidence[SENT_ONCE] >= 1


def test_the_at_least_once_mesh_passes_the_new_obligation_with_evidence(
    adapter_module: ModuleType, params: CheckParams
) -> None:
    mesh = adapter_module.AioMeshAdapter(FirstChooser(), at_least_once=True)
    assert Capability.AT_LEAST_ONCE in capabilities_of(mesh)
    for verdict, text, evidence in _inv4(adapter_module, params, at_least_once=True).values():
        assert verdict == "pass", text
        assert evidence[APPLIED_ONCE] >= 1


def test_dedupe_after_reply_fails_it(adapter_module: ModuleType, params: CheckParams) -> None:
    results = _inv4(adapter_module, params, bugs=("dedupe-after-reply",), at_least_once=True)
    for verdict, text, _ in results.values():
        assert verdict == "violation"
        assert text is not None and "effect applied again" in text, text


def test_the_at_least_once_adapter_conforms(adapter_module: ModuleType,
                                            params: CheckParams) -> None:
    def factory(chooser: object) -> object:
        return adapter_module.AioMeshAdapter(chooser, at_least_once=True)

    _, results = conformance(factory, params)  # type: ignore[arg-type]
    assert [b.line(r.program) for r in results for b in r.broken] == []


def test_the_at_least_once_mesh_passes_inv4_under_the_ci_profile(
    adapter_module: ModuleType, params: CheckParams
) -> None:
    def factory(chooser: object) -> object:
        return adapter_module.AioMeshAdapter(chooser, at_least_once=True)

    outcome = run_invariant("INV4", factory, "ci", params=params)  # type: ignore[arg-type]
    assert outcome.verdict == "pass", outcome.failure_text
    assert outcome.evidence[APPLIED_ONCE] > 0
    assert outcome.evidence[TO_BUDGET] > 0  # the rest of INV4 still holds it
    assert SENT_ONCE in outcome.inapplicable
