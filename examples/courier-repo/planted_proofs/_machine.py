"""Proofs as step programs of the harness's own state machine (as a failing `check` prints
them): the machine records the harness facts itself and judges the run as `check` does.
`prove_program` runs one program on the bug's factory (must break `inv`) and on `make`
(must not), plus any controls (label, factory, program, must_break)."""
from __future__ import annotations

import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from courier import harness_adapter

from invariants.adapter import Route  # noqa: F401
from invariants.checks.params import with_figures
from invariants.dynamic.plans import machine_class
from invariants.dynamic.report import InvariantViolated

PARAMS = with_figures(tomllib.loads(
    (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
)["tool"]["harness"]["params"])


def run(inv: str, factory: Any, program: Callable[[Any], None],
        steps: tuple[str, ...] = ()) -> str | None:
    machine = machine_class(inv, factory, params=PARAMS, seed_scenarios=False, steps=steps)
    state = machine()
    try:
        program(state)
        state.teardown()
    except InvariantViolated as exc:
        return str(exc)
    return None


def prove_program(name: str, inv: str, program: Callable[[Any], None], *,
                  steps: tuple[str, ...] = (),
                  controls: list[tuple[str, Any, Callable[[Any], None], bool]] = ()) -> None:
    bug = getattr(harness_adapter, f"bug_{name}")
    runs = [("bug", bug, program, True), ("clean", harness_adapter.make, program, False),
            *controls]
    ok = True
    for label, factory, body, want in runs:
        found = run(inv, factory, body, steps)
        print(f"{name} {label}: {inv} {'VIOLATED' if found else 'holds'}")
        for line in (found or "").splitlines()[1:3]:
            print(f"    {line[:300]}")
        ok &= bool(found) == want
    print(f"{name}: {'PROVED' if ok else 'NOT PROVED'}")
    sys.exit(0 if ok else 1)
