"""benchmarks/speed_report.py's pure parts: arguments, each script's options, reading the
scripts' JSON into the table's rows and judging them, the verdict comparison and the
table, from handmade JSON. Nothing here runs a benchmark, git or a clock."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

_BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _load() -> ModuleType:
    # The script imports its sibling check_time.py, as it does when run from benchmarks/.
    sys.path.insert(0, str(_BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location("speed_report_benchmark",
                                                      _BENCHMARKS / "speed_report.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(_BENCHMARKS))
    return module


sr = _load()


def _outcome(figure: str, data: dict[str, Any] | None, exit_code: int = 0) -> Any:
    return sr.Outcome(figure, ("python", f"benchmarks/{sr.SCRIPTS[figure]}"), exit_code,
                      1.0, 1.0, data)


def _check(wall: float) -> dict[str, Any]:
    return {"summaries": [{"side": "current", "runs": 3, "wall_median": wall,
                           "cpu_median": 15.2}]}


def _mutation(seconds: float, kills: list[tuple[str, str]], survived: list[str],
              blind: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"seconds": seconds, "cpu_seconds": 2 * seconds, "score": 0.9, "total": 10,
            "killed": len(kills),
            "kills": [{"id": m, "check": check, "phase": "dynamic"} for m, check in kills],
            "survived": [{"id": m} for m in survived], "blind": [{"id": m} for m in blind],
            "timeouts": [], "incompetent": [], "equivalent": []}


def test_defaults_run_every_figure_in_full() -> None:
    args = sr.parse_args([])
    assert (args.skip, args.quick, args.baseline, args.json) == ([], False, None, None)


def test_skip_takes_known_names_only() -> None:
    assert sr.parse_args(["--skip", "mutate", "fuzz"]).skip == ["mutate", "fuzz"]
    with pytest.raises(SystemExit) as info:
        sr.parse_args(["--skip", "check", "lint"])
    assert info.value.code == 2


def test_a_baseline_needs_the_mutation_figure() -> None:
    assert sr.parse_args(["--baseline", "HEAD~1"]).baseline == "HEAD~1"
    with pytest.raises(SystemExit) as info:
        sr.parse_args(["--baseline", "HEAD~1", "--skip", "mutate"])
    assert info.value.code == 2


def test_saved_verdicts_replace_a_baseline_run() -> None:
    assert sr.parse_args(["--mutations-against", "run.json"]).mutations_against == Path("run.json")
    for wrong in (["--mutations-against", "run.json", "--skip", "mutate"],
                  ["--mutations-against", "run.json", "--baseline", "HEAD~1"]):
        with pytest.raises(SystemExit) as info:
            sr.parse_args(wrong)
        assert info.value.code == 2


def test_full_and_quick_options_of_each_script() -> None:
    assert sr.script_options("check", False) == ["--current-only", "--jobs", "0",
                                                 "--repeat", "3"]
    assert sr.script_options("check", True)[-1] == "1"
    assert sr.script_options("prove", False) == ["--jobs", "2", "--parallel-only", "--full"]
    assert "--full" not in sr.script_options("prove", True)
    assert sr.script_options("mutate", False) == ["--jobs", "2"]
    assert sr.script_options("mutate", True) == ["--jobs", "2", "--sample", "6", "--seed", "1"]
    assert sr.script_options("fuzz", True)[:4] == ["--skip-reference", "--skip-mutants",
                                                   "--startup", "1"]
    assert sr.script_options("scan", True) == ["--limit", "20", "--repeat", "1"]
    assert sr.script_options("scan", False) == []
    assert set(sr.SCRIPTS) == set(sr.FIGURES)


def test_read_json_wants_an_object(tmp_path: Path) -> None:
    good, bad, listed = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    good.write_text('{"x": 1}', encoding="utf-8")
    bad.write_text("Traceback ...", encoding="utf-8")
    listed.write_text("[1]", encoding="utf-8")
    assert sr.read_json(good) == {"x": 1}
    assert sr.read_json(bad) is None
    assert sr.read_json(listed) is None
    assert sr.read_json(tmp_path / "absent.json") is None


def test_check_against_its_goal() -> None:
    met = sr.figure_row("check", _outcome("check", _check(9.1)), True)
    assert (met.met, met.measured) == (True, "wall 9.1 s median of 3 (CPU 15.2 s)")
    assert sr.figure_row("check", _outcome("check", _check(10.5)), True).met is False


def test_prove_is_judged_on_the_full_matrix_only() -> None:
    data = {"summaries": [{"jobs": 2, "wall_median": 146.0, "cpu_median": 282.0}],
            "same_matrix": True}
    full = sr.figure_row("prove", _outcome("prove", data), True)
    assert (full.figure, full.met) == ("prove (2 jobs)", True)
    assert full.measured == "wall 146.0 s, CPU 282.0 s"
    assert sr.figure_row("prove", _outcome("prove", data), False).met is None
    slow = {**data, "summaries": [{"jobs": 2, "wall_median": 190.0, "cpu_median": 300.0}],
            "same_matrix": False}
    row = sr.figure_row("prove", _outcome("prove", slow, exit_code=1), True)
    assert row.met is False
    assert "matrices DIFFER" in row.measured and "script exited 1" in row.note


def test_mutation_figures_and_goal() -> None:
    data = _mutation(520.0, [("cr-1", "INV2"), ("cr-2", "INV5")], ["cr-3"], ("cr-4",))
    row = sr.figure_row("mutate", _outcome("mutate", data), True)
    assert row.met is True
    assert row.measured == ("wall 520 s, CPU 1040 s; 10 mutants, score 0.9000, killed 2, "
                            "survived 2")
    assert sr.figure_row("mutate", _outcome("mutate", _mutation(700.0, [], [])), True).met \
        is False
    assert sr.figure_row("mutate", _outcome("mutate", data), False).met is None


def test_fuzz_worker_startup_is_the_sum_of_the_worker_phases() -> None:
    phases = {"hub imports": 0.5, "hub collection": 1.4, "fork": 0.0,
              "worker collection": 0.1, "worker database": 0.2, "first example": 1.0}
    data: dict[str, Any] = {"startup": {"sessions": 3, "box_started_median": 2.9,
                                        "phases": {k: {"median": v} for k, v in phases.items()}}}
    row = sr.figure_row("fuzz", _outcome("fuzz", data), True)
    assert row.met is True
    assert row.measured == "per worker 1.30 s (median of 3); whole start-up 2.90 s"
    data["startup"]["phases"]["first example"]["median"] = 2.5
    assert sr.figure_row("fuzz", _outcome("fuzz", data), True).met is False
    del data["startup"]["phases"]["first example"]
    missing = sr.figure_row("fuzz", _outcome("fuzz", data), True)
    assert missing.met is None and "first example missing" in missing.measured


def test_scan_must_meet_its_goal_on_every_corpus() -> None:
    corpora = [{"name": "/lib/python3.11", "files": 900, "ratio": 0.82},
               {"name": "/lib/python3.11 (140 files)", "files": 140, "ratio": 1.04}]
    data = {"limit": None, "cold_goal": 1.0, "corpora": corpora}
    row = sr.figure_row("scan", _outcome("scan", data), True)
    assert row.measured == "large 0.82x (900 files); small 1.04x (140 files)"
    assert (row.met, row.note) == (False, "")
    corpora[1]["ratio"] = 0.97
    assert sr.figure_row("scan", _outcome("scan", data), True).met is True


def test_no_json_or_another_shape_is_not_judged() -> None:
    none = sr.figure_row("check", _outcome("check", None, exit_code=1), True)
    assert (none.met, none.measured) == (None, "no figures (exit 1)")
    other = sr.figure_row("check", _outcome("check", {"runs": []}), True)
    assert other.met is None and other.measured.startswith("unreadable JSON (KeyError")


def test_failures_name_each_script() -> None:
    outcomes = [_outcome("check", _check(9.0)), _outcome("prove", None, exit_code=1),
                _outcome("scan", None)]
    assert sr.failures(outcomes) == ["prove (prove_speed.py): exit 1",
                                     "scan (scan_speed.py): no JSON"]


def test_verdicts_compared_per_mutant() -> None:
    current = _mutation(1.0, [("cr-1", "INV2"), ("cr-2", "INV3"), ("cr-5", "INV1")],
                        ["cr-3"])
    baseline = _mutation(1.0, [("cr-1", "INV2"), ("cr-2", "INV6"), ("cr-3", "INV4")],
                         [], ("cr-5",))
    baseline["equivalent"] = [{"id": "cr-9"}]
    comparison = sr.compare_verdicts(current, baseline)
    assert comparison["compared"] == 4
    assert comparison["other_status"] == [
        {"id": "cr-3", "current": ["survived", ""],
         "baseline": ["killed", "INV4 (dynamic)"]},
        {"id": "cr-5", "current": ["killed", "INV1 (dynamic)"], "baseline": ["survived", ""]},
    ]
    assert comparison["other_check"] == [
        {"id": "cr-2", "current": "INV3 (dynamic)", "baseline": "INV6 (dynamic)"}]
    assert (comparison["only_current"], comparison["only_baseline"]) == (0, 1)
    text = sr.comparison_text(comparison, "a" * 40)
    assert "4 mutants in both runs, 2 with another status, 1 killed by another check" in text
    assert "  cr-3: current survived, baseline killed INV4 (dynamic)" in text
    same = sr.compare_verdicts(current, current)
    assert (same["other_status"], same["other_check"]) == ([], [])
    assert "(the same verdicts)" in sr.comparison_text(same, "b" * 40)
    json.dumps(comparison)  # the report's --json writes it as it is


def test_the_table_and_the_load() -> None:
    rows = [sr.Row("check", "wall 9.1 s", "<= 10 s wall", True),
            sr.Row("prove (2 jobs)", "wall 50.0 s", "<= 180 s wall", None, "a subset"),
            sr.Row("scan cold/libcst", "large 1.10x", "<= 1.0x", False)]
    lines = sr.render(rows, (2.0, 1.5, 1.0), (2.5, 1.75, 1.25)).splitlines()
    assert lines[0].split() == ["figure", "measured", "goal", "verdict"]
    assert lines[1].endswith("  met") and lines[1].startswith("check ")
    assert lines[2].endswith("  n/a (a subset)")
    assert lines[3].endswith("  NOT met")
    assert len({line.index("goal") if i == 0 else line.index("<=")
                for i, line in enumerate(lines[:4])}) == 1  # the goal column lines up
    assert lines[4].startswith("load average (1, 5, 15 min): before 2.00, 1.50, 1.00; "
                               "after 2.50, 1.75, 1.25; ")
