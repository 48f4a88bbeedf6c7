"""Examples per second under Hypothesis: the aiomesh example on the virtual loop, beside
the reference mesh (a discrete-event model), check by check.

    python benchmarks/aio_examples_rate.py [--examples N] [--checks INV1,INV2,...]

Each check's state machine runs `--examples` examples (default 200) of the `ci` profile,
derandomized, with no database, on the clean aiomesh mesh (`aiomesh.harness_adapter:make`,
its `[tool.harness.params]`) and on the reference mesh, interleaved in one run. Reported:
examples per CPU second (`time.process_time`, so other processes disturb it less) for
each, and the ratio aiomesh/reference. No goal: the figure says what a real asyncio mesh
costs per example, so a fuzzing budget can be sized.

A script, not a test: timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import settings as Settings

from harness.params import params_from
from invariants.checks import CHECK_IDS, CheckParams
from invariants.dynamic.profiles import profile
from invariants.dynamic.runner import run_invariant
from reference_impl.adapter import make_adapter

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "aiomesh-repo"


def _aiomesh() -> tuple[Callable[..., Any], CheckParams]:
    sys.path.insert(0, str(EXAMPLE / "src"))
    make: Callable[..., Any] = importlib.import_module("aiomesh.harness_adapter").make
    table = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))
    return make, params_from(table["tool"]["harness"]["params"], "aiomesh pyproject.toml")


def rate(check: str, factory: Callable[..., Any], params: CheckParams | None,
         examples: int) -> tuple[float, str]:
    """Examples per CPU second of one run, and its verdict."""
    settings = Settings(profile("ci"), max_examples=examples, database=None)
    started = time.process_time()
    outcome = run_invariant(check, factory, settings, params=params)
    spent = time.process_time() - started
    return outcome.examples / spent if spent else float("inf"), outcome.verdict


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--checks", default=",".join(CHECK_IDS))
    args = parser.parse_args(argv)
    aiomesh, aiomesh_params = _aiomesh()
    load = os.getloadavg()
    print(f"Python {platform.python_version()}, load average {load[0]:.2f}; "
          f"{args.examples} examples per check (ci profile)")
    print("| check | aiomesh ex/s | reference ex/s | aiomesh / reference |")
    print("|---|---|---|---|")
    for check in args.checks.split(","):
        real, real_verdict = rate(check, aiomesh, aiomesh_params, args.examples)
        model, model_verdict = rate(check, make_adapter, None, args.examples)
        verdicts = "" if real_verdict == model_verdict == "pass" else (
            f" ({real_verdict} / {model_verdict})")
        print(f"| {check} | {real:.0f} | {model:.0f} | {real / model:.2f}{verdicts} |",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
