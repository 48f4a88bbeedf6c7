"""The result cache: hits are counted, changes re-analyse, corruption is ignored."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import scan_stand_in

from invariants.scan import analysis
from invariants.scan.cache import ResultCache, entry_key, outcome_from_json, outcome_to_json
from invariants.scan.model import (
    CallSite,
    Definition,
    EmitSite,
    FileReport,
    Finding,
    RuleOptions,
    ScanConfig,
)
from invariants.scan.outcome import FileOutcome
from invariants.scan.problems import Problem
from invariants.scan.runner import scan
from invariants.scan.suppress import Suppression


def sample() -> FileOutcome:
    report = FileReport(
        path="a/b.py",
        findings=[Finding("MESH004", "a/b.py", 3, 5, 4, "m", "C.f", "x.subscribe(h)")],
        emit_sites=[EmitSite("a/b.py", 7, 9, "f", True, 6, "DeliveryFailure(d)"),
                    EmitSite("a/b.py", 9, 9, "g", False, None, "")],
        calls=[CallSite("a/b.py", 12, "main", "f", False, "!a.b:f"),
               CallSite("a/b.py", 13, "C.g", "nack", True, "@a.b:C.nack")],
        parsed=True,
        definitions=[Definition("C", True, ("=pkg.Base", ".Mixin")), Definition("C.g", False)],
    )
    return FileOutcome(
        report,
        [Suppression("a/b.py", 3, ("MESH004", "MESH005"), "MEMO", "why")],
        [Problem("a/b.py", 4, "malformed-suppression", "bad")],
    )


def as_json(outcome: FileOutcome) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(json.dumps(outcome_to_json(outcome)))
    return decoded


def test_outcome_round_trips_through_json() -> None:
    assert outcome_from_json(as_json(sample())) == sample()


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d.pop("calls"),
        lambda d: d.update(extra=1),
        lambda d: d["findings"][0].__setitem__(2, "3"),  # line as a string
        lambda d: d["emit_sites"][0].__setitem__(4, 1),  # guarded as an integer
        lambda d: d["findings"][0].append("surplus"),
        lambda d: d["calls"][0].pop(),
        lambda d: d["suppressions"][0].__setitem__(2, "MESH004"),  # rules not a list
        lambda d: d["emit_sites"].__setitem__(0, {"line": 7}),
        lambda d: d.update(problems=None),
        lambda d: d.update(parsed="yes"),
        lambda d: d.pop("definitions"),
        lambda d: d["definitions"][0].__setitem__(2, "=pkg.Base"),  # bases not a list
        lambda d: d["definitions"][0][2].append(3),  # a base not a string
        lambda d: d["calls"][1].__setitem__(5, None),  # no target
    ],
)
def test_a_damaged_entry_does_not_decode(damage: object) -> None:
    data = as_json(sample())
    damage(data)  # type: ignore[operator]
    with pytest.raises(ValueError):
        outcome_from_json(data)


def test_key_depends_on_content_config_path_and_testness() -> None:
    base = entry_key("a.py", False, b"x = 1\n", ScanConfig())
    assert base == entry_key("a.py", False, b"x = 1\n", ScanConfig())
    assert base != entry_key("a.py", False, b"x = 2\n", ScanConfig())
    assert base != entry_key("b.py", False, b"x = 1\n", ScanConfig())
    assert base != entry_key("a.py", True, b"x = 1\n", ScanConfig())
    other_guard = ScanConfig(options=RuleOptions({"guard_functions": ("g",)}))
    assert base != entry_key("a.py", False, b"x = 1\n", other_guard)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    scan_stand_in.install(monkeypatch)
    for index in range(3):
        (tmp_path / f"m{index}.py").write_text(f"X{index} = []  # flag:MESH005\n")
    return tmp_path


def test_hits_are_counted_and_a_changed_file_is_reanalysed(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tree / ".harness-cache"
    cold = scan(["."], ScanConfig(), root=tree, cache_dir=cache)
    assert cold.stats.cached == 0 and len(cold.findings) == 3
    assert (cache / ".gitignore").read_text().endswith("*\n")

    warm = scan(["."], ScanConfig(), root=tree, cache_dir=cache)
    assert warm.stats.cached == 3 and warm.findings == cold.findings

    (tree / "m1.py").write_text("X1 = ()\n")
    log = tree / "analysed.log"  # analysis runs in a worker process: log to a file

    def counting(path: str, source: bytes, config: ScanConfig, *, is_test: bool) -> FileReport:
        with open(log, "a") as out:
            out.write(path + "\n")
        return scan_stand_in.analyze_source(path, source, config, is_test=is_test)

    monkeypatch.setattr(analysis, "analyze_source", counting)
    changed = scan(["."], ScanConfig(), root=tree, cache_dir=cache)
    assert log.read_text().splitlines() == ["m1.py"]
    assert changed.stats.cached == 2
    assert [f.path for f in changed.findings] == ["m0.py", "m2.py"]


def test_a_corrupt_entry_is_ignored_and_replaced(tree: Path) -> None:
    cache = tree / "cache"
    cold = scan(["."], ScanConfig(), root=tree, cache_dir=cache)
    entries = sorted((cache / "v1").rglob("*.json"))
    assert len(entries) == 3
    entries[0].write_text('{"key": "wrong", "outcome": {}}')
    entries[1].write_bytes(b"\x00garbage")
    again = scan(["."], ScanConfig(), root=tree, cache_dir=cache)
    assert again.findings == cold.findings and again.stats.cached == 1
    third = scan(["."], ScanConfig(), root=tree, cache_dir=cache)
    assert third.stats.cached == 3


def test_an_entry_with_forged_findings_under_another_key_is_not_used(tree: Path) -> None:
    # An entry copied to another key's file (as a stale sync might) is refused by its key.
    cache = ResultCache(tree / "cache")
    key = entry_key("m0.py", False, (tree / "m0.py").read_bytes(), ScanConfig())
    cache.put("0" * 64, sample())
    source = cache._entry("0" * 64)
    target = cache._entry(key)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())
    result = scan(["."], ScanConfig(), root=tree, cache_dir=tree / "cache")
    assert [f.rule for f in result.findings] == ["MESH005"] * 3


def test_a_config_change_misses(tree: Path) -> None:
    cache = tree / "cache"
    scan(["."], ScanConfig(), root=tree, cache_dir=cache)
    other = dataclasses.replace(ScanConfig(), ignore=("MESH005",))
    result = scan(["."], other, root=tree, cache_dir=cache)
    assert result.stats.cached == 0 and result.findings == []


def test_no_cache_writes_nothing(tree: Path) -> None:
    scan(["."], ScanConfig(), root=tree, cache_dir=None)
    assert not (tree / ".harness-cache").exists()
