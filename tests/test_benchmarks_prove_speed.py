"""benchmarks/prove_speed.py's pure parts: the command, the matrix without seconds, the
reduction and the report, from made-up runs. Nothing here runs `prove` or a clock."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "prove_speed.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("prove_speed_benchmark", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


ps = _load()


def test_the_subset_or_the_full_matrix_with_each_sides_jobs() -> None:
    subset = ps.command(ps.parse_args([]), 1)
    assert subset[1:] == ["-m", "harness", "prove", "--format", "json", "--profile", "ci",
                          "--jobs", "1", "--mutant", "M1", "--mutant", "M3", "--mutant", "M9"]
    full = ps.command(ps.parse_args(["--full", "--jobs", "3"]), 3)
    assert "--mutant" not in full and full[-2:] == ["--jobs", "3"]
    assert ps.command(ps.parse_args(["--full"]), 2, every_cell=True)[-1] == "--every-cell"


def test_matrices_that_differ_only_in_seconds_are_the_same() -> None:
    def matrix(seconds: float, killed: bool = True) -> str:
        return json.dumps({"reference": {"INV2": "pass"}, "expected": {"M3": ["INV2"]},
                           "mutants": {"M3": {"INV2": {"killed": killed, "examples": 1,
                                                       "steps": 3, "seconds": seconds}}}})

    assert ps.canonical(matrix(0.4)) == ps.canonical(matrix(9.1))
    unreached = json.loads(matrix(0.0))
    unreached["mutants"]["M3"]["INV2"]["unreached"] = True  # guided: the same verdict
    assert ps.canonical(json.dumps(unreached)) == ps.canonical(matrix(0.4))
    assert ps.canonical(matrix(0.4)) != ps.canonical(matrix(0.4, killed=False))
    assert ps.canonical("Traceback ...") == ""


def test_the_report_gives_both_sides_and_their_ratios() -> None:
    serial = ps.summarize(1, [ps.Run(1, False, 180.0, 84.0, 0, "m"),
                              ps.Run(1, False, 200.0, 86.0, 0, "m")])
    parallel = ps.summarize(2, [ps.Run(2, False, 100.0, 90.0, 0, "m"),
                                ps.Run(2, False, 110.0, 92.0, 0, "m")])
    assert (serial.wall_min, serial.wall_median, serial.cpu_median) == (180.0, 190.0, 85.0)
    text = ps.report(serial, parallel, True, ("1.00", "2.00"))
    assert "jobs 2 / jobs 1 (medians): wall 0.55, cpu 1.07" in text
    assert text.endswith("same matrix in every run: yes")
    unguided = ps.summarize(2, [ps.Run(2, True, 210.0, 180.0, 0, "m")], every_cell=True)
    text = ps.report(None, parallel, False, ("1.00", "2.00"), unguided)
    assert "jobs 2 / jobs 2 --every-cell (medians): wall 0.50, cpu 0.51" in text
    assert text.endswith("same matrix in every run: NO")
