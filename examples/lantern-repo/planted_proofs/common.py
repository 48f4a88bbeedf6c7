"""Replays hand-written step programs on the harness (run_program) and states the verdicts."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
os.chdir(REPO)  # the figures come from this repository's [tool.harness.params]

from harness.settings import for_command
from invariants.adapter import FaultKind, Route  # noqa: F401
from invariants.dynamic.runner import run_program

from lantern import harness_adapter

OFF = {"anonymous": False, "block": False, "crash": False, "cut_call": False, "failure": False,
       "hold_links": False, "ignorable": False, "partition": False, "reject": False,
       "remove": False, "subscribe": False, "timeout": False, "slow": False}


def init(**overrides: Any) -> tuple[str, dict[str, Any]]:
    args: dict[str, Any] = {"watermarks": (None, None, None), "swarm": dict(OFF), "scenario": None,
                            "schedule": ("scripts",)}
    args.update(overrides)
    return ("init", args)


def advance(ms: int, schedule: list[int] | None = None, ties: list[int] | None = None
            ) -> tuple[str, dict[str, Any]]:
    return ("advance", {"ms": ms, "schedule": schedule or [], "ties": ties or []})


def judge(check: str, factory_name: str, program: list[tuple[str, dict[str, Any]]]) -> list[str]:
    factory = getattr(harness_adapter, factory_name)
    outcome = run_program(check, factory, program, params=for_command().params)
    if outcome.verdict == "error":
        raise RuntimeError(f"{factory_name}: the run raised:\n{outcome.failure_text}")
    return [f"{v.check_id}: {v.message}" for v in outcome.violations if v.check_id == check]


def prove(bug: str, check: str, shows: list, *, controls: dict[str, list]) -> bool:
    """`shows` violates `check` on bug_<bug>; each control program does not (named, on which factory)."""
    ok = True
    found = judge(check, f"bug_{bug}", shows)
    print(f"{bug}: {check} on bug_{bug}: {'VIOLATED' if found else 'not violated'}")
    for line in found[:2]:
        print("    " + line.splitlines()[0][:220])
    ok &= bool(found)
    clean = judge(check, "make", shows)
    print(f"{bug}: {check} on make, same program: {'VIOLATED' if clean else 'not violated'}")
    for line in clean[:2]:
        print("    " + line.splitlines()[0][:220])
    ok &= not clean
    for name, program in controls.items():
        seen = judge(check, f"bug_{bug}", program)
        print(f"{bug}: {check} on bug_{bug}, {name}: {'VIOLATED' if seen else 'not violated'}")
        for line in seen[:2]:
            print("    " + line.splitlines()[0][:220])
        ok &= not seen
    print(f"{bug}: {'PROVEN' if ok else 'NOT PROVEN'}")
    return ok
