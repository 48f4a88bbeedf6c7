"""`python -m reference_impl trace --scenario NAME --seed N [--digest|--summary]`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from invariants.trace import digest, dump_jsonl
from reference_impl.scenarios import SCENARIOS, run_scenario


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m reference_impl",
                                     description="Run a reference-mesh scenario.")
    commands = parser.add_subparsers(dest="command", required=True)
    trace = commands.add_parser("trace", help="print a scenario's trace as JSON lines")
    trace.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    trace.add_argument("--seed", type=int, default=0)
    output = trace.add_mutually_exclusive_group()
    output.add_argument("--digest", action="store_true", help="only the sha256 of the trace")
    output.add_argument("--summary", action="store_true", help="one JSON object of figures")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run = run_scenario(args.scenario, args.seed)
    if args.digest:
        print(digest(run.trace))
    elif args.summary:
        print(json.dumps({"scenario": run.name, "seed": run.seed, **run.summary},
                         sort_keys=True))
    else:
        sys.stdout.write(dump_jsonl(run.trace))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
