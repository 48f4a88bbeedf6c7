"""adapter-check's determinism guard: every conformance program run twice in the process and
once per hash seed in a subprocess; a trace that depends on a module-level counter or on
the iteration order of a set of strings is a broken convention naming the first event
where the runs part, and the reference adapter and TinyMesh are not flagged."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from nondeterministic_adapters import module_counter, set_order

from harness.cli import main
from invariants.adapter import AdapterFactory
from invariants.adapter_spec import load_factory
from invariants.conformance.determinism import first_difference, guarded
from invariants.conformance.programs import conformance
from reference_impl.adapter import make_adapter

TINYMESH_SRC = Path(__file__).resolve().parents[2] / "examples" / "tinymesh-repo" / "src"


def _determinism_lines(spec: str | None, factory: AdapterFactory) -> list[str]:
    _, results = conformance(factory)
    return [b.line(r.program) for r in guarded(spec, factory, results) for b in r.broken
            if b.convention == "determinism"]


@pytest.fixture
def tinymesh_on_path() -> Iterator[None]:
    """The example's `tinymesh` importable for the test, and forgotten after it: other
    tests import a `tinymesh` of their own (the plugin tests' sample repository)."""
    sys.path.insert(0, str(TINYMESH_SRC))
    try:
        yield
    finally:
        sys.path.remove(str(TINYMESH_SRC))
        for name in [name for name in sys.modules if name.split(".")[0] == "tinymesh"]:
            del sys.modules[name]


def test_the_reference_adapter_is_deterministic() -> None:
    assert _determinism_lines("reference_impl.adapter:make_adapter", make_adapter) == []


@pytest.mark.usefixtures("tinymesh_on_path")
def test_tinymesh_is_deterministic() -> None:
    spec = "tinymesh.harness_adapter:make"
    assert _determinism_lines(spec, load_factory(spec, "test")) == []


def test_a_trace_in_set_order_differs_across_hash_seeds_and_is_flagged() -> None:
    lines = _determinism_lines("nondeterministic_adapters:set_order", set_order)
    assert lines, "the hubs' set order differs under PYTHONHASHSEED=1 and 2"
    first = lines[0]
    assert first.startswith("intake: seq 0 HUB_CREATED: run in two processes under "
                            "PYTHONHASHSEED=1 and 2, the traces part at event 0: seed 1 {")
    assert '"hub":"beta"' in first and '"hub":"alpha"' in first
    assert first.endswith("(docs/adapter.md#determinism)")
    assert "\n" not in first
    # One process, one hash seed: run twice there it is the same.
    assert _determinism_lines(None, set_order) == []


def test_a_module_level_counter_is_flagged_on_the_second_run_in_process() -> None:
    lines = _determinism_lines(None, module_counter)
    assert lines
    assert lines[0].startswith("intake: seq 3 LEG_STARTED: run twice in one process with the "
                               "same choices, the traces part at event 3: first run {")
    assert lines[0].count('"delivery_id":"m') == 2  # numbered on, not from 1 again


def test_the_command_prints_the_break_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["adapter-check", "--adapter", "nondeterministic_adapters:set_order"])
    out = capsys.readouterr().out
    assert code == 1
    assert "    intake: seq 0 HUB_CREATED: run in two processes under PYTHONHASHSEED=1 and 2" in out
    assert "  does not conform:" in out


def test_the_first_difference_counts_a_trace_that_ends_early() -> None:
    assert first_difference(["a", "b"], ["a", "b"]) is None
    assert first_difference(["a", "b"], ["a", "c"]) == 1
    assert first_difference(["a", "b"], ["a"]) == 1



def test_an_adapter_exiting_in_the_hash_seed_run_is_an_adapter_error() -> None:
    """The runs under other hash seeds (`program_traces`, in the child process) go through
    the adapter boundary too: a `SystemExit` there is the adapter's error, not a child that
    ended quietly with nothing to compare."""
    from invariants.adapter import Chooser
    from invariants.adapter_calls import AdapterExited
    from invariants.conformance.determinism import program_traces
    from reference_impl.adapter import ReferenceAdapter

    made: list[int] = []

    def exits_in_its_first_program(chooser: Chooser) -> ReferenceAdapter:
        made.append(1)
        if len(made) > 1:  # the capability probe passes; the first program's mesh exits
            raise SystemExit(0)
        return ReferenceAdapter(chooser)

    with pytest.raises(AdapterExited, match="in conformance program 'intake'"):
        program_traces(exits_in_its_first_program)
