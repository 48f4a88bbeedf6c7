"""`python -m harness scan`: the static architecture scan from the command line.

Exit codes: 0 clean; 1 findings or reported errors (malformed/unused suppressions, stale
baseline entries, an emit-site count other than `expected_emit_sites`); 2 usage or
configuration error, printed as one line naming the option, key or file; 3 no finding and
no other error, but files not analysed (`invariants.scan.problems.exit_status`).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from invariants.scan import baseline as baselines
from invariants.scan.cache import DEFAULT_DIR
from invariants.scan.config import ConfigError, ScanSettings, find_pyproject, load_settings
from invariants.scan.model import RULES, Finding, ScanConfig
from invariants.scan.problems import EMIT_SITE_COUNT, Problem, exit_status
from invariants.scan.report import inventory_json, inventory_text, to_json, to_text
from invariants.scan.runner import ScanResult, scan
from invariants.scan.sarif import to_sarif

PROG = "mesh-harness scan"


class UsageError(Exception):
    """A bad option or file; one line."""


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "scan",
        help="static architecture scan (MESH000-MESH006)",
        description="Scan Python sources for architecture-invariant violations. "
        "Exit 0 clean, 1 findings, 2 usage or configuration error.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="files or directories (default: `paths` from the configuration)")
    parser.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    parser.add_argument("--output", metavar="FILE", help="write the report here, not stdout")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="worker processes (0 = one per CPU)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    parser.add_argument("--baseline", metavar="FILE", help="baseline of accepted findings")
    parser.add_argument("--update-baseline", action="store_true",
                        help="drop stale baseline entries (creates the file if it is missing)")
    parser.add_argument("--inventory", action="store_true",
                        help="list every emit site with its guard status instead of findings")
    parser.add_argument("--select", metavar="IDS", help="comma-separated rule ids to run")
    parser.add_argument("--ignore", metavar="IDS", help="comma-separated rule ids to skip")
    parser.add_argument("--config", metavar="FILE",
                        help="pyproject.toml to read [tool.harness] from (default: nearest)")
    parser.set_defaults(func=run)


def _rule_ids(option: str, value: str) -> tuple[str, ...]:
    ids = tuple(part.strip().upper() for part in value.split(",") if part.strip())
    unknown = [rule for rule in ids if rule not in RULES]
    if unknown or not ids:
        raise UsageError(f"{option}: unknown rule id {(unknown or [value])[0]!r}")
    return ids


def _root_for(pyproject: Path | None, paths: Sequence[str]) -> Path:
    """The directory findings are reported relative to."""
    if pyproject is not None:
        return pyproject.parent.absolute()
    cwd = Path.cwd()
    if paths:
        first = Path(paths[0]).absolute()
        if not first.is_relative_to(cwd):
            return first if first.is_dir() else first.parent
    return cwd


def _settings(args: argparse.Namespace) -> tuple[ScanSettings, Path]:
    if args.config is not None:
        if not Path(args.config).is_file():
            raise UsageError(f"--config: {args.config}: no such file")
        pyproject: Path | None = Path(args.config)
    else:
        pyproject = find_pyproject(Path(args.paths[0]) if args.paths else Path.cwd())
    settings = load_settings(pyproject)
    config = settings.config
    if args.select is not None:
        config = dataclasses.replace(config, select=_rule_ids("--select", args.select))
    if args.ignore is not None:
        config = dataclasses.replace(config, ignore=_rule_ids("--ignore", args.ignore))
    root = _root_for(pyproject, args.paths)
    return dataclasses.replace(settings, config=config), root


def _emit(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--output: {output}: {exc.strerror or exc}") from exc


def _baseline_path(args: argparse.Namespace, settings: ScanSettings, root: Path) -> Path | None:
    """The baseline to use, checked before scanning so that a mistake fails fast."""
    if args.baseline is not None:
        path: Path | None = Path(args.baseline)
    else:
        path = root / settings.baseline if settings.baseline is not None else None
    if path is None and args.update_baseline:
        raise UsageError("--update-baseline needs --baseline FILE (or `baseline` in config)")
    if path is not None and not path.exists() and not args.update_baseline:
        raise UsageError(f"{path}: baseline not found (create it with --update-baseline)")
    return path


def _apply_baseline(
    args: argparse.Namespace,
    path: Path | None,
    known: Counter[baselines.Key] | None,
    config: ScanConfig,
    result: ScanResult,
) -> tuple[list[Finding], list[Problem], int]:
    """(findings that fail, stale-entry problems, count covered by the baseline)."""
    if path is None:
        return result.findings, [], 0
    if known is None:  # no file yet and --update-baseline: the explicit way to create one
        written = baselines.write_initial(path, result.findings)
        print(f"baseline: created {path} with {written} finding(s)", file=sys.stderr)
        return [], [], written
    outcome = baselines.compare(result.findings, known, config, result.scanned_paths)
    if args.update_baseline:
        removed = baselines.shrink(path, known, outcome)
        print(f"baseline: removed {removed} stale finding(s) from {path}", file=sys.stderr)
        return outcome.new, [], outcome.baselined
    return outcome.new, outcome.stale, outcome.baselined


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except (UsageError, ConfigError, baselines.BaselineError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.jobs < 0:
        raise UsageError(f"--jobs: must be 0 or more, got {args.jobs}")
    settings, root = _settings(args)
    config = settings.config
    cwd = Path.cwd()
    paths = [str((cwd / p).absolute()) for p in args.paths] if args.paths else list(config.paths)
    cache_dir = None if args.no_cache else root / (settings.cache_dir or DEFAULT_DIR)
    jobs = args.jobs or os.cpu_count() or 1
    baseline_path = None if args.inventory else _baseline_path(args, settings, root)
    known = baselines.load(baseline_path) if baseline_path and baseline_path.exists() else None
    result = scan(paths, config, root=root, jobs=jobs, cache_dir=cache_dir)

    if args.inventory:
        rendered = inventory_json(result) if args.format != "text" else inventory_text(result)
        _emit(rendered, args.output)
        return 1 if any(p.kind == EMIT_SITE_COUNT for p in result.errors) else 0

    findings, stale, baselined = _apply_baseline(args, baseline_path, known, config, result)
    errors = sorted([*result.errors, *stale])
    if args.format == "json":
        rendered = to_json(findings, errors, result.stats)
    elif args.format == "sarif":
        rendered = to_sarif(findings, errors, result.root)
    else:
        rendered = to_text(findings, errors, result.stats, baselined=baselined)
    _emit(rendered, args.output)
    return exit_status(bool(findings), errors)
