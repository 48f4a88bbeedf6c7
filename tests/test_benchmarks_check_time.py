"""benchmarks/check_time.py's pure parts: arguments, the mutant count, the reduction and the
report, from made-up timings. Nothing here runs `check`, git or a clock."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "check_time.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_time_benchmark", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


ct = _load()


def _runs(side: str, walls: list[float], cpus: list[float], mutants: int | None = 21,
          exit_code: int = 0) -> list[Any]:
    return [ct.Run(side, w, c, exit_code, mutants) for w, c in zip(walls, cpus, strict=True)]


def test_defaults() -> None:
    args = ct.parse_args([])
    assert (args.baseline, args.repeat, args.current_only, args.json) == (
        ct.DEFAULT_BASELINE, 3, False, None)


def test_options(tmp_path: Path) -> None:
    args = ct.parse_args(["--baseline", "HEAD~2", "--repeat", "5", "--current-only",
                          "--json", str(tmp_path / "out.json")])
    assert (args.baseline, args.repeat, args.current_only) == ("HEAD~2", 5, True)
    assert args.json == tmp_path / "out.json"


@pytest.mark.parametrize("repeat", ["0", "-1"])
def test_repeat_must_be_positive(repeat: str) -> None:
    with pytest.raises(SystemExit) as info:
        ct.parse_args(["--repeat", repeat])
    assert info.value.code == 2


def test_mutants_from_the_report() -> None:
    now = "3. Kill matrix: pass (21 of 21 mutants killed by every check that must kill them)"
    old = "3. Kill matrix: FAIL (7 of 8 mutants killed by every check that must kill them)"
    assert ct.mutants_run("1. Scan: pass\n" + now + "\n") == 21
    assert ct.mutants_run(old) == 8
    assert ct.mutants_run("3. Kill matrix: not run (--no-prove)") is None


def test_median_min_and_ratio() -> None:
    current = ct.summarize("current", "abc", _runs("current", [30.0, 20.0, 22.0],
                                                  [40.0, 36.0, 38.0]))
    assert (current.wall_min, current.wall_median) == (20.0, 22.0)
    assert (current.cpu_min, current.cpu_median) == (36.0, 38.0)
    even = ct.summarize("baseline", "def", _runs("baseline", [10.0, 12.0], [9.0, 13.0]))
    assert (even.wall_median, even.cpu_median) == (11.0, 11.0)
    assert ct.ratio(22.0, 11.0) == 2.0
    assert ct.ratio(1.0, 0.0) is None


def test_report_side_by_side() -> None:
    current = ct.summarize("current", "a" * 40, _runs("current", [24.0, 26.0], [30.0, 32.0]))
    baseline = ct.summarize("baseline", "b" * 40,
                            _runs("baseline", [8.0, 12.0], [10.0, 12.0], mutants=8,
                                  exit_code=1))
    text = ct.render([current, baseline], (3.5, 2.0, 1.0), (4.0, 2.5, 1.25), goal=25.0)
    lines = text.splitlines()
    assert lines[1].split()[:7] == ["current", "a" * 12, "2", "24.0s", "25.0s", "30.0s",
                                    "31.0s"]
    assert lines[1].split()[-2:] == ["0,0", "21"]
    assert lines[2].split()[-2:] == ["1,1", "8"]
    assert lines[3] == ("ratio current/baseline: wall 2.50 median, 3.00 min; "
                        "CPU 2.82 median, 3.00 min")
    assert lines[4].startswith("load average (1, 5, 15 min): before 3.50, 2.00, 1.00; "
                               "after 4.00, 2.50, 1.25; ")
    assert "<= 25 s on this machine: met (current median wall 25.0 s" in lines[5]


def test_report_current_only_goal_not_met() -> None:
    current = ct.summarize("current", "c" * 40, _runs("current", [31.0], [40.0], mutants=None))
    text = ct.render([current], (1.0, 1.0, 1.0), (1.0, 1.0, 1.0), goal=25.0)
    assert "ratio" not in text
    assert "not reported" in text
    assert ": NOT met (current median wall 31.0 s" in text


def test_json_report() -> None:
    runs = _runs("current", [20.0, 30.0], [20.0, 40.0]) + _runs("baseline", [10.0, 10.0],
                                                                [10.0, 10.0], mutants=8)
    summaries = [ct.summarize(side, side, [r for r in runs if r.side == side])
                 for side in ("current", "baseline")]
    data = ct.to_json(summaries, runs, (1.0, 2.0, 3.0), (1.0, 2.0, 3.0), goal=25.0)
    assert data["goal_met"] is True
    assert data["ratio"] == {"wall_median": 2.5, "wall_min": 2.0, "cpu_median": 3.0,
                             "cpu_min": 2.0}
    assert [s["mutants"] for s in data["summaries"]] == [(21, 21), (8, 8)]
    assert len(data["runs"]) == 4


def test_a_mesh_folder_inside_the_tree_names_the_goal() -> None:
    assert ct.parse_args([]).mesh == "."
    args = ct.parse_args(["--mesh", "examples/aiomesh-repo"])
    current = ct.summarize(ct.CURRENT, "abc", _runs(ct.CURRENT, [12.0], [22.0]))
    text = ct.render([current], (1.0, 1.0, 1.0), (1.0, 1.0, 1.0), mesh=args.mesh)
    assert "goal: check on examples/aiomesh-repo <= 10 s on this machine: NOT met" in text
    assert "goal: check on the reference mesh" in ct.render([current], (1.0,) * 3, (1.0,) * 3)


@pytest.mark.parametrize("mesh", ["/tmp/elsewhere", "../outside", "examples/../../x"])
def test_a_mesh_folder_outside_the_tree_is_a_usage_error(mesh: str) -> None:
    with pytest.raises(SystemExit) as exc:
        ct.parse_args(["--mesh", mesh])
    assert exc.value.code == 2
