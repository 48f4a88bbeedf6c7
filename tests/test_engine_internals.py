"""The engines' private names: each one the harness uses still has the shape it relies on,
and only `invariants.engine_internals` uses them.

- `test_private_name_keeps_its_shape[NAME]`: one test per private Hypothesis or HypoFuzz
  name (attribute present, callable, the parameters passed, the attributes read or set),
  resolved here from the engines themselves and not through the harness, so a release that
  moved a name fails the test named after it. The HypoFuzz ones skip where HypoFuzz (the
  `fuzz` extra) is not installed; the Hypothesis ones always run.
- `test_every_private_name_the_room_uses_has_a_shape_test`: the room, read with `ast`,
  names nothing the table below does not check.
- `test_no_module_outside_the_room_uses_engine_internals`: every module of `harness`,
  `invariants` and `reference_impl`, read with `ast` (never imported), imports no HypoFuzz
  module, no private Hypothesis module or name and touches none of the private attributes
  the room wraps; its negative control runs the same reader on sources that do.
- the room raises `InternalMoved` naming the name and the pinned versions, which are the
  ones pyproject.toml pins.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from invariants.engine_internals import HYPOFUZZ_PIN, HYPOTHESIS_PIN  # no engine imported

ROOT = Path(__file__).resolve().parents[1]
ROOM = "invariants.engine_internals"
ROOM_DIRECTORY = ROOT / "invariants" / "engine_internals"
SCANNED_PACKAGES = ("harness", "invariants", "reference_impl")

# Hypothesis modules that are private although no part of their name says so.
PRIVATE_HYPOTHESIS_MODULES = ("hypothesis.internal", "hypothesis.core", "hypothesis.utils",
                              "hypothesis.vendor")
# Private names in public Hypothesis modules.
PRIVATE_HYPOTHESIS_NAMES = {"hypothesis.control": {"current_build_context", "BuildContext"}}
# Private attributes of the engines' objects the room wraps, whatever object they are on.
PRIVATE_ATTRIBUTES = {
    "_rules_strategy", "_feature_flags", "_at_least_one_of", "_join", "_update_targets",
    "_switch_to_target", "_rebalance", "_execute_once", "_pop_choice", "_start_worker",
}
PINS = {"hypothesis": HYPOTHESIS_PIN, "hypofuzz": HYPOFUZZ_PIN}


# --- the reader: what a module's source uses of the engines' internals --------------------

def _private_module(module: str) -> bool:
    parts = module.split(".")
    if parts[0] == "hypofuzz":
        return True  # HypoFuzz has no public Python interface
    if parts[0] != "hypothesis" and not parts[0].startswith("_hypothesis"):
        return False
    return (any(part.startswith("_") for part in parts)
            or any(module == p or module.startswith(p + ".") for p in PRIVATE_HYPOTHESIS_MODULES))


def _engine(module: str) -> bool:
    top = module.split(".")[0]
    return top in ("hypothesis", "hypofuzz") or top.startswith("_hypothesis")


def engine_internal_uses(source: str) -> list[str]:
    """What `source` uses of HypoFuzz and of Hypothesis' private modules, names and
    attributes, one line each (`line N: ...`); empty for a module that uses none."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            found += [f"{where}: imports {a.name}" for a in node.names if _private_module(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            module = node.module
            if _private_module(module):
                found.append(f"{where}: imports from {module}")
                continue
            if not _engine(module):
                continue
            for alias in node.names:
                if (alias.name.startswith("_")
                        or alias.name in PRIVATE_HYPOTHESIS_NAMES.get(module, ())
                        or _private_module(f"{module}.{alias.name}")):
                    found.append(f"{where}: imports {module}.{alias.name}")
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_ATTRIBUTES:
            found.append(f"{where}: uses the attribute {node.attr}")
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and node.value.isidentifier() and node.value.startswith("_hypothesis")):
            found.append(f"{where}: uses the attribute {node.value}")  # getattr/setattr
        elif isinstance(node, ast.Call):
            found += _dynamic_uses(node, where)
    return found


def _dynamic_uses(call: ast.Call, where: str) -> list[str]:
    """`importlib.import_module("hypofuzz...")`, `getattr(x, "_rebalance")` and the like:
    string arguments naming an engine's private module or attribute."""
    found = []
    for argument in call.args:
        if not (isinstance(argument, ast.Constant) and isinstance(argument.value, str)):
            continue
        value = argument.value
        if value in PRIVATE_ATTRIBUTES:
            found.append(f"{where}: uses the attribute {value}")
        elif all(p.isidentifier() for p in value.split(".")) and _private_module(value):
            found.append(f"{where}: imports {value}")
    return found


def _modules(*packages: str) -> Iterator[tuple[str, Path]]:
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def _in_room(module: str) -> bool:
    return module == ROOM or module.startswith(ROOM + ".")


def test_no_module_outside_the_room_uses_engine_internals() -> None:
    outside = [(m, p) for m, p in _modules(*SCANNED_PACKAGES) if not _in_room(m)]
    assert len(outside) > 100  # the packages were found
    uses = {m: engine_internal_uses(p.read_text(encoding="utf-8")) for m, p in outside}
    offenders = {m: u for m, u in uses.items() if u}
    assert not offenders, (
        f"only {ROOM} may use the engines' internals; import them from there: {offenders}")


@pytest.mark.parametrize(("source", "expected"), [
    ("import hypofuzz\n", "line 1: imports hypofuzz"),
    ("import hypofuzz.hypofuzz as core\n", "line 1: imports hypofuzz.hypofuzz"),
    ("from hypofuzz.database import HypofuzzDatabase\n", "imports from hypofuzz.database"),
    ("from hypothesis.internal.reflection import function_digest\n",
     "imports from hypothesis.internal.reflection"),
    ("from hypothesis.strategies._internal.featureflags import FeatureFlags\n",
     "imports from hypothesis.strategies._internal.featureflags"),
    ("from hypothesis.core import skip_exceptions_to_reraise\n", "imports from hypothesis.core"),
    ("from hypothesis import internal\n", "imports hypothesis.internal"),
    ("from hypothesis.stateful import _private\n", "imports hypothesis.stateful._private"),
    ("from hypothesis.control import current_build_context\n",
     "imports hypothesis.control.current_build_context"),
    ("import _hypothesis_globals\n", "imports _hypothesis_globals"),
    ("x = 1\ny = machine._rules_strategy\n", "line 2: uses the attribute _rules_strategy"),
    ("setattr(m, '_hypothesis_internal_add_digest', b'')\n",
     "uses the attribute _hypothesis_internal_add_digest"),
    ("import importlib\nimportlib.import_module('hypofuzz.coverage')\n",
     "line 2: imports hypofuzz.coverage"),
])
def test_the_reader_reports_an_engine_internal(source: str, expected: str) -> None:
    """Negative control: what the room check must catch, it reports."""
    assert any(expected in use for use in engine_internal_uses(source)), (
        engine_internal_uses(source))


def test_the_reader_passes_public_uses() -> None:
    source = ("from hypothesis import settings, strategies as st\n"
              "from hypothesis.stateful import RuleBasedStateMachine, rule\n"
              "from hypothesis.control import currently_in_test_context\n"
              "from hypothesis.database import BackgroundWriteDatabase\n"
              "from invariants.engine_internals.hypofuzz_private import FuzzWorker\n"
              "import hypothesis\n'''Mentions _hypothesis_internal_add_digest.'''\n"
              "self._state = None\n")
    assert engine_internal_uses(source) == []


def test_the_room_imports_nothing_above_it() -> None:
    """The room sits below `invariants.dynamic`: it imports only the `invariants` package
    itself (for its directory) and its own modules from the harness."""
    modules = list(_modules("invariants/engine_internals"))
    assert len(modules) >= 5
    for module, path in modules:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                top = name.split(".")[0]
                if top in SCANNED_PACKAGES:
                    assert name == "invariants" or _in_room(name), (
                        f"invariants.{module}: the room imports {name}")


# --- the shapes: each private name the room uses, resolved from the engines ---------------

def resolve(dotted: str) -> Any:
    """The object `dotted` names (module path, then attributes); fails naming what moved."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for index, attribute in enumerate(parts[split:], start=split):
            if not hasattr(found, attribute):
                pytest.fail(f"{'.'.join(parts[:index + 1])} moved or is gone "
                            f"(the harness is pinned to {PINS[parts[0]]})")
            found = getattr(found, attribute)
        return found
    pytest.fail(f"{parts[0]} is not importable")


def _parameters(function: Callable[..., Any], *names: str) -> None:
    assert callable(function), f"{function!r} is not callable"
    have = set(inspect.signature(function).parameters)
    missing = set(names) - have
    assert not missing, f"{function.__qualname__} lost parameter(s) {sorted(missing)}: {have}"


def _reads(owner: Any, *texts: str) -> None:
    source = inspect.getsource(owner)
    for text in texts:
        assert text in source, f"{owner.__qualname__} no longer reads {text!r}"


class _Machine:
    """A one-rule state machine class (made lazily: Hypothesis' stateful module)."""

    @staticmethod
    def make() -> type[Any]:
        from hypothesis.stateful import RuleBasedStateMachine, rule

        class OneRule(RuleBasedStateMachine):
            @rule()
            def step(self) -> None:
                pass

        return OneRule


def _feature_strategy() -> None:
    from hypothesis.strategies import SearchStrategy

    name = "hypothesis.strategies._internal.featureflags.FeatureStrategy"
    strategy = resolve(name)
    assert issubclass(strategy, SearchStrategy)
    _parameters(strategy.__init__, "at_least_one_of")
    _parameters(resolve(f"{name}.do_draw"), "data")
    made = strategy(at_least_one_of=["a"])
    assert getattr(made, "_at_least_one_of", None) == frozenset({"a"}), (
        f"{name} no longer keeps _at_least_one_of")


def _rules_strategy() -> None:
    machine = _Machine.make()()
    strategy = getattr(machine, "_rules_strategy", None)
    assert strategy is not None, "RuleBasedStateMachine() no longer sets _rules_strategy"
    assert hasattr(strategy, "enabled_rules_strategy"), (
        f"{type(strategy).__qualname__} no longer has enabled_rules_strategy")
    assert [r.function.__name__ for r in strategy.rules] == ["step"]
    # The replacement `keep_on` makes is read where the run's flags are drawn.
    _reads(type(strategy).do_draw, "self.enabled_rules_strategy")


def _add_digest() -> None:
    from hypothesis.stateful import get_state_machine_test

    digest = resolve("hypothesis.internal.reflection.function_digest")
    machine = _Machine.make()

    def key() -> bytes:
        return bytes(digest(get_state_machine_test(machine).hypothesis.inner_test))

    unkeyed = key()
    machine._hypothesis_internal_add_digest = b"mesh"  # type: ignore[attr-defined]
    assert key() != unkeyed, "function_digest no longer reads _hypothesis_internal_add_digest"


def _use_seed() -> None:
    from hypothesis.stateful import get_state_machine_test

    machine = _Machine.make()
    machine._hypothesis_internal_use_seed = 1234  # type: ignore[attr-defined]
    test = get_state_machine_test(machine)
    assert getattr(test, "_hypothesis_internal_use_seed", None) == 1234, (
        "get_state_machine_test no longer copies _hypothesis_internal_use_seed")


def _current_build_context() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    context = resolve("hypothesis.control.current_build_context")
    data_class = resolve("hypothesis.internal.conjecture.data.ConjectureData")
    seen: list[int] = []

    @settings(max_examples=1, database=None)
    @given(st.integers())
    def test(_: int) -> None:
        data = context().data
        assert isinstance(data, data_class)
        seen.append(len(data.nodes))

    test()
    assert seen and seen[0] >= 1  # the integer drawn is a choice made so far


def _skip_exceptions() -> None:
    skips = resolve("hypothesis.core.skip_exceptions_to_reraise")()
    assert isinstance(skips, tuple) and all(issubclass(s, BaseException) for s in skips)
    assert pytest.skip.Exception in skips


def _hypofuzz_database() -> None:
    from hypothesis.database import InMemoryExampleDatabase

    database = resolve("hypofuzz.database.HypofuzzDatabase")(InMemoryExampleDatabase())
    assert list(database.reports.fetch(b"key")) == []
    database.worker_uuids.save(b"worker")
    fields = {f.name for f in dataclasses.fields(resolve("hypofuzz.database.Report"))}
    missing = {"timestamp", "behaviors", "fingerprints", "worker_uuid"} - fields
    assert not missing, f"hypofuzz.database.Report lost {sorted(missing)}"


def _fuzz_worker() -> None:
    name = "hypofuzz.hypofuzz.FuzzWorker"
    worker = resolve(name)
    _parameters(worker.__init__, "pytest_args", "shared_state")
    _parameters(resolve(f"{name}._update_targets"), "nodeids")
    _parameters(resolve(f"{name}._switch_to_target"), "target")
    _parameters(resolve(f"{name}.on_event"), "listener_event")
    assert callable(resolve(f"{name}.start"))
    resolve(f"{name}.valid_targets")
    assert isinstance(inspect.getattr_static(worker, "valid_targets"), property)
    _reads(worker, "self.targets", "self.shared_state", "self.pytest_args")
    # `replace_worker_class`: the class each worker is made of is read at each start.
    _reads(resolve("hypofuzz.hypofuzz._start_worker"), "FuzzWorker(")


def _fuzz_worker_hub() -> None:
    hub = resolve("hypofuzz.hypofuzz.FuzzWorkerHub")
    _parameters(hub.__init__, "nodeids", "pytest_args", "n_processes")
    rebalance = resolve("hypofuzz.hypofuzz.FuzzWorkerHub._rebalance")
    assert list(inspect.signature(rebalance).parameters) == ["self"]
    _reads(hub, "self.nodeids", "self.n_processes", "self.shared_states",
           "self._rebalance()", '["hub_state"]', '["worker_state"]')


def _fuzz_target() -> None:
    name = "hypofuzz.hypofuzz.FuzzTarget"
    target = resolve(name)
    _parameters(resolve(f"{name}._execute_once"), "self", "data")
    assert callable(resolve(f"{name}.run_one"))
    resolve(f"{name}.has_found_failure")
    assert isinstance(inspect.getattr_static(target, "has_found_failure"), property)
    _reads(target.__init__, "self.random", "self.provider", "self.skipped_dynamically",
           "self.nodeid")


def _exception(dotted: str) -> Callable[[], None]:
    def check() -> None:
        assert issubclass(resolve(dotted), Exception)
    return check


def _collect_tests() -> None:
    _parameters(resolve("hypofuzz.collection.collect_tests"), "args", "debug")
    result = resolve("hypofuzz.collection.CollectionResult")
    assert "fuzz_targets" in inspect.get_annotations(result)
    # `replace_collect_tests`: the hub's collection looks it up when it runs.
    _reads(resolve("hypofuzz.entrypoint"), "from hypofuzz.collection import collect_tests")


def _pop_choice() -> None:
    provider = resolve("hypofuzz.provider.HypofuzzProvider")
    pop_choice = resolve("hypofuzz.provider.HypofuzzProvider._pop_choice")
    _parameters(pop_choice, "self", "choice_type", "constraints")
    _reads(provider.__init__, "self._state")
    _reads(pop_choice, "self._state.choice_index", "self._state.choices")
    assert "choice_index" in {f.name for f in
                              dataclasses.fields(resolve("hypofuzz.provider.State"))}


def _coverage() -> None:
    _parameters(resolve("hypofuzz.coverage.should_trace"), "fname")
    trace = resolve("hypofuzz.coverage.CoverageCollector.trace_pre_312")
    _parameters(trace, "self", "frame", "event", "arg")
    _reads(trace, "should_trace(")  # the module's filter, looked up at each call


def _fuzz_command() -> None:
    command = resolve("hypofuzz.entrypoint.fuzz")
    assert callable(command) and callable(getattr(command, "main", None))
    assert {p.name for p in command.params} >= {"numprocesses", "dashboard"}


SHAPES: dict[str, Callable[[], None]] = {
    # Hypothesis: the rule swarm, a machine's key and seed, what a run reads.
    "hypothesis.strategies._internal.featureflags.FeatureFlags": lambda: _parameters(
        resolve("hypothesis.strategies._internal.featureflags.FeatureFlags").__init__,
        "data", "enabled", "at_least_one_of"),
    "hypothesis.strategies._internal.featureflags.FeatureStrategy": _feature_strategy,
    "hypothesis.strategies._internal.featureflags.FeatureStrategy._at_least_one_of":
        _feature_strategy,
    "hypothesis.stateful.RuleBasedStateMachine._rules_strategy": _rules_strategy,
    "hypothesis.internal.conjecture.data.ConjectureData": lambda: _reads(
        resolve("hypothesis.internal.conjecture.data.ConjectureData"), "self.nodes"),
    "hypothesis.internal.reflection.function_digest": lambda: _parameters(
        resolve("hypothesis.internal.reflection.function_digest"), "function"),
    "hypothesis.internal.reflection._hypothesis_internal_add_digest": _add_digest,
    "hypothesis.stateful._hypothesis_internal_use_seed": _use_seed,
    "hypothesis.control.current_build_context": _current_build_context,
    "hypothesis.core.skip_exceptions_to_reraise": _skip_exceptions,
    "hypothesis.database.BackgroundWriteDatabase._join": lambda: _parameters(
        resolve("hypothesis.database.BackgroundWriteDatabase._join"), "timeout"),
    # HypoFuzz: its database, hub, worker loop, targets, collection, provider, coverage.
    "hypofuzz.database.HypofuzzDatabase": _hypofuzz_database,
    "hypofuzz.database.Phase": lambda: resolve("hypofuzz.database.Phase.SHRINK"),
    "hypofuzz.hypofuzz.FuzzWorker": _fuzz_worker,
    "hypofuzz.hypofuzz.FuzzWorker._update_targets": _fuzz_worker,
    "hypofuzz.hypofuzz.FuzzWorker._switch_to_target": _fuzz_worker,
    "hypofuzz.hypofuzz.FuzzWorkerHub": _fuzz_worker_hub,
    "hypofuzz.hypofuzz.FuzzWorkerHub._rebalance": _fuzz_worker_hub,
    "hypofuzz.hypofuzz.FuzzTarget": _fuzz_target,
    "hypofuzz.hypofuzz.FuzzTarget._execute_once": _fuzz_target,
    "hypofuzz.hypofuzz.FailedFatally": _exception("hypofuzz.hypofuzz.FailedFatally"),
    "hypofuzz.hypofuzz.HitShrinkTimeoutError": _exception(
        "hypofuzz.hypofuzz.HitShrinkTimeoutError"),
    "hypofuzz.utils.process_uuid": lambda: isinstance(
        resolve("hypofuzz.utils.process_uuid"), str) or pytest.fail("process_uuid: not a str"),
    "hypofuzz.collection.collect_tests": _collect_tests,
    "hypofuzz.provider.HypofuzzProvider._pop_choice": _pop_choice,
    "hypofuzz.provider.HypofuzzProvider._state": _pop_choice,
    "hypofuzz.provider.State.choice_index": _pop_choice,
    "hypofuzz.coverage.should_trace": _coverage,
    "hypofuzz.coverage.CoverageCollector.trace_pre_312": _coverage,
    "hypofuzz.entrypoint.fuzz": _fuzz_command,
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_private_name_keeps_its_shape(name: str) -> None:
    if name.startswith("hypofuzz."):
        pytest.importorskip("hypofuzz", reason="needs the fuzz extra: pip install -e '.[fuzz]'")
    SHAPES[name]()


def _room_private_names() -> set[str]:
    """What the room names of the engines' privates: each name imported from a private
    module or from HypoFuzz, each attribute looked up with `private_attribute`, set with
    `setattr` or read as an underscore attribute."""
    names: set[str] = set()
    for _module, path in _modules("invariants/engine_internals"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and _engine(node.module):
                names |= {f"{node.module}.{a.name}" for a in node.names
                          if engine_internal_uses(f"from {node.module} import {a.name}\n")}
            elif isinstance(node, ast.Import):
                names |= {a.name for a in node.names if _private_module(a.name)}
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not (
                    node.attr.startswith("__")):
                names.add(f"*.{node.attr}")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id in ("private_attribute", "setattr")
                  and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)):
                names.add(f"*.{node.args[1].value}")
        names |= {f"*.{v}" for v in _string_constants(path) if v.startswith("_hypothesis")}
    return names


def _string_constants(path: Path) -> set[str]:
    return {n.value for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.isidentifier()}


# Attributes the room looks up that the shape of their owner checks (the room's own marks,
# `_harness_*`, are not the engines' names).
CHECKED_WITH_THEIR_OWNER = {"enabled_rules_strategy", "do_draw", "CoverageCollector"}


def test_every_private_name_the_room_uses_has_a_shape_test() -> None:
    used = _room_private_names()
    assert "hypofuzz.hypofuzz.FuzzWorker" in used  # the reader found the room's names
    modules = {name.rsplit(".", 1)[0] for name in SHAPES}
    unchecked = []
    for name in sorted(used):
        if name.startswith("*."):
            attribute = name[2:]
            if attribute in CHECKED_WITH_THEIR_OWNER or attribute.startswith("_harness"):
                continue
            if not any(key.endswith("." + attribute) for key in SHAPES):
                unchecked.append(name)
        elif name not in SHAPES and name not in modules and not any(
                key.startswith(name + ".") for key in SHAPES):
            unchecked.append(name)
    assert not unchecked, f"add a shape check to SHAPES for each of {unchecked}"
    # What the room wraps, the reader looks for outside it (`_state` is too common a name).
    policed = {n[2:] for n in used if n.startswith("*._")} - {"_state"}
    unpoliced = sorted(a for a in policed if a not in PRIVATE_ATTRIBUTES
                       and not a.startswith(("_harness", "_hypothesis")))
    assert not unpoliced, f"add {unpoliced} to PRIVATE_ATTRIBUTES"


def test_the_room_names_the_pins_of_pyproject() -> None:
    """The versions the room's errors name are the ones pyproject.toml pins."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert HYPOTHESIS_PIN in project["dependencies"]
    assert HYPOFUZZ_PIN in project["optional-dependencies"]["fuzz"]


# --- the room's own error ------------------------------------------------------------------

def test_the_room_names_a_missing_attribute_and_the_pin() -> None:
    from invariants.engine_internals import HYPOTHESIS_PIN, InternalMoved, private_attribute

    class Holder:
        pass

    with pytest.raises(InternalMoved, match=r"Holder\._gone is missing.*hypothesis>=6\.155\.2"):
        private_attribute(Holder, "_gone", HYPOTHESIS_PIN)
    assert private_attribute(Holder, "__name__", HYPOTHESIS_PIN) == "Holder"


def test_the_room_names_a_missing_import_and_the_pin() -> None:
    from invariants.engine_internals import HYPOFUZZ_PIN, InternalMoved, private_imports

    with (pytest.raises(InternalMoved, match=r"hypothesis\.internal\.gone.*hypofuzz>=25\.11"),
          private_imports("hypothesis", HYPOFUZZ_PIN)):
        importlib.import_module("hypothesis.internal.gone")
    with (pytest.raises(InternalMoved, match=r"cannot import name 'gone'"),
          private_imports("hypothesis", HYPOFUZZ_PIN)):
        from hypothesis.internal.reflection import gone  # type: ignore[attr-defined]  # noqa: F401
    # The engine not installed at all stays an ImportError (the `fuzz` extra's skips).
    with (pytest.raises(ModuleNotFoundError) as raised,
          private_imports("not_an_engine_here", HYPOFUZZ_PIN)):
        importlib.import_module("not_an_engine_here.sub")
    assert not isinstance(raised.value, InternalMoved)


def test_a_moved_rule_swarm_is_named() -> None:
    from invariants.engine_internals import InternalMoved
    from invariants.engine_internals.hypothesis_private import rules_strategy

    machine = _Machine.make()()
    del machine._rules_strategy.enabled_rules_strategy
    with pytest.raises(InternalMoved, match=r"RuleStrategy\.enabled_rules_strategy is missing"):
        rules_strategy(machine)
    del machine._rules_strategy
    with pytest.raises(InternalMoved, match=r"_rules_strategy is missing.*hypothesis>="):
        rules_strategy(machine)
