"""Shared by the proofs: replay a hand-written step program on the harness's own state machine."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import tomllib
from dataclasses import fields, replace

from ferry import harness_adapter

from invariants.checks.params import CheckParams
from invariants.dynamic.runner import run_program


def _params() -> CheckParams:
    """The figures of pyproject.toml's [tool.harness.params], as `check` reads them."""
    with open(os.path.join(os.path.dirname(__file__), "..", "pyproject.toml"), "rb") as fh:
        table = tomllib.load(fh)["tool"]["harness"]["params"]
    names = {f.name for f in fields(CheckParams)}
    values = {k: (tuple(v) if isinstance(v, list) else v) for k, v in table.items() if k in names}
    return replace(CheckParams(), **values)


PARAMS = _params()
INIT = ("init", {"watermarks": (None, None, None), "swarm": {}, "scenario": None})


def violated(check: str, factory, program, init=None) -> tuple[bool, str]:
    start = ("init", {**INIT[1], **(init or {})})
    outcome = run_program(check, factory, (start, *program), params=PARAMS, bystanders=False)
    text = "\n".join(str(v) for v in (outcome.violations or ()))
    failure = (outcome.failure_text or "")[:2000]
    return outcome.verdict == "violation", text or failure or outcome.verdict


def prove(name: str, check: str, program, healthy=None, init=None, healthy_init=None) -> None:
    """Violated on the bug's factory; not on `make`; for a network bug not on a healthy network."""
    bug = getattr(harness_adapter, f"bug_{name}")
    ok = True
    hit, text = violated(check, bug, program, init)
    print(f"{name} on bug_{name}: {'violated' if hit else 'NOT violated'}\n  {text[:600]}")
    ok &= hit
    clean, text = violated(check, harness_adapter.make, program, init)
    print(f"{name} on make: {'VIOLATED' if clean else 'not violated'}"
          + (f"\n  {text[:600]}" if clean else ""))
    ok &= not clean
    if healthy is not None:
        again, text = violated(check, bug, healthy, {**(init or {}), **(healthy_init or {})})
        verdict = "VIOLATED" if again else "not violated"
        print(f"{name} on bug_{name}, healthy FIFO network: {verdict}"
              + (f"\n  {text[:600]}" if again else ""))
        ok &= not again
    if not ok:
        print(f"{name} NOT proven")
        sys.exit(1)
    print(f"{name} proven")
