"""`python -m harness adapter-check`: the adapter conformance check, from the command line.

Drives the adapter (`--adapter`, else `[tool.harness] adapter`, else the reference mesh's)
through one short fixed program per capability it declares and validates each trace
against the conventions of `docs/adapter.md`: one line per broken convention, naming the
program, the event and the section. Exit 0 when it conforms, 1 when a convention is
broken or the adapter raised (its traceback on stderr), 2 on a usage or configuration error.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from harness.jobs import Command, add_adapter_option
from harness.params import add_param_option, parse_assignments
from harness.settings import Overrides, for_command, importing_from
from invariants.adapter import Capability
from invariants.adapter_calls import AdapterExited, MeshHung
from invariants.adapter_spec import load_factory
from invariants.capabilities import DEFAULT_CAPABILITIES
from invariants.conformance.determinism import guarded
from invariants.conformance.programs import PROGRAMS, conformance, result_lines
from invariants.dynamic.report import HIDDEN_PACKAGES, own_traceback

PROG = "mesh-harness adapter-check"


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "adapter-check",
        help="check that an adapter's traces keep the conventions the checkers read",
        description="Drive the adapter through a short fixed program per declared "
        "capability and validate its traces against docs/adapter.md. Exit 0 conforms, "
        "1 a convention is broken or the adapter raised, 2 usage or configuration error.",
    )
    add_adapter_option(parser)
    add_param_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    overrides = Overrides(
        adapters=(args.adapter,) if args.adapter else None,
        adapter_origin="--adapter",
        params=parse_assignments(args.param, "--param"),
        params_origin="--param",
    )
    settings = for_command(overrides=overrides)  # a bad setting or spec: exit 2 (harness.cli)
    importing_from(settings)
    specs = settings.adapters
    factories = {spec: load_factory(spec, settings.adapter_origin) for spec in specs}
    ok = True
    for spec, factory in factories.items():
        ok = _check_one(spec, factory, settings.params) and ok
    return 0 if ok else 1


def _check_one(spec: str, factory: Any, params: Any) -> bool:
    print(f"{PROG}: {spec}")
    try:
        declared, results = conformance(factory, params)
        results = guarded(spec, factory, results)
    except MeshHung as exc:  # the harness's verdict on a step: no code of the mesh's to show
        print(f"  {exc}", flush=True)
        return False
    except Exception as exc:  # the adapter or its mesh raised: its traceback, then one line
        print(own_traceback(exc, (*HIDDEN_PACKAGES, "harness")), end="", file=sys.stderr)
        line = str(exc) if isinstance(exc, AdapterExited) else (
            f"the adapter raised {type(exc).__name__}: {exc}")
        print(f"  {line}", flush=True)
        return False
    print(f"  capabilities: {_capabilities(declared)}")
    for line in result_lines(results):
        print(line)
    broken = sum(len(result.broken) for result in results)
    skipped = [p.name for p in PROGRAMS if p.needs is not None and p.needs not in declared]
    if skipped:
        print(f"  not applicable (not declared): {', '.join(skipped)}")
    verdict = "conforms" if not broken else "does not conform"
    print(f"  {verdict}: {len(results)} program(s), {broken} broken convention(s)")
    return broken == 0


def _capabilities(declared: frozenset[Capability]) -> str:
    names = ", ".join(sorted(c.value for c in declared)) or "none"
    return f"{names} (by default)" if declared == DEFAULT_CAPABILITIES else names


COMMAND = Command("adapter-check", add_parser)
