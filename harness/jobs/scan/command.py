"""`python -m harness scan`: the static architecture scan from the command line.

Exit codes: 0 clean; 1 findings or reported errors (malformed/unused suppressions, stale
baseline entries, an emit-site count other than `expected_emit_sites`); 2 usage or
configuration error, printed as one line naming the option, key or file; 3 no finding and
no other error, but files not analysed (`invariants.scan.problems.exit_status`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.jobs import Command
from harness.scan_verdict import ScanVerdict, baseline_not_found, run_scan
from harness.settings import HarnessSettings, Overrides, for_command, rule_ids
from harness.workers import worker_count
from invariants.scan import baseline as baselines
from invariants.scan.cache import user_cache_dir
from invariants.scan.config import find_pyproject
from invariants.scan.problems import EMIT_SITE_COUNT, exit_status
from invariants.scan.report import inventory_json, inventory_text, to_json, to_text
from invariants.scan.sarif import to_sarif
from invariants.user_errors import UserError

PROG = "mesh-harness scan"


class UsageError(UserError):
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


def _settings(args: argparse.Namespace) -> tuple[HarnessSettings, Path]:
    if args.config is not None:
        if not Path(args.config).is_file():
            raise UsageError(f"--config: {args.config}: no such file")
        pyproject: Path | None = Path(args.config)
    else:
        pyproject = find_pyproject(Path(args.paths[0]) if args.paths else Path.cwd())
    root = _root_for(pyproject, args.paths)
    overrides = Overrides(
        select=None if args.select is None else rule_ids("--select", args.select.split(",")),
        ignore=None if args.ignore is None else rule_ids("--ignore", args.ignore.split(",")),
    )
    return for_command(root, overrides, pyproject=pyproject, environ={}), root


def _cache_dir(settings: HarnessSettings) -> Path | None:
    """The scan cache: next to the pyproject.toml the settings come from (or its
    `cache_dir`); with none, a scan names no project, and the root is only the tree it
    reads (site-packages, another checkout): the cache goes to the user's cache directory,
    never into that tree."""
    return settings.cache_dir if settings.pyproject is not None else user_cache_dir()


def _emit(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--output: {output}: {exc.strerror or exc}") from exc


def _baseline_path(args: argparse.Namespace, settings: HarnessSettings) -> Path | None:
    """The baseline to use, checked before scanning so that a mistake fails fast."""
    path = Path(args.baseline) if args.baseline is not None else settings.baseline
    if path is None and args.update_baseline:
        raise UsageError("--update-baseline needs --baseline FILE (or `baseline` in config)")
    if path is not None and not path.exists() and not args.update_baseline:
        raise baseline_not_found(path)
    return path


def _update_baseline(path: Path, verdict: ScanVerdict) -> ScanVerdict:
    """`--update-baseline`: create the file from the findings, or drop its stale entries;
    either way the findings it now covers no longer fail."""
    result = verdict.result
    if verdict.outcome is None:  # no file yet: the explicit way to create one
        written = baselines.write_initial(path, result.findings)
        print(f"baseline: created {path} with {written} finding(s)", file=sys.stderr)
        return ScanVerdict(result, [], list(result.errors), written)
    known = baselines.load(path)
    removed = baselines.shrink(path, known, verdict.outcome)
    print(f"baseline: removed {removed} stale finding(s) from {path}", file=sys.stderr)
    return ScanVerdict(result, verdict.outcome.new, list(result.errors), verdict.baselined)


def run(args: argparse.Namespace) -> int:
    """The scan; a `UsageError`, `ConfigError` or `BaselineError` goes up to `harness.cli`
    (one line, exit 2)."""
    if args.jobs < 0:
        raise UsageError(f"--jobs: must be 0 or more, got {args.jobs}")
    settings, root = _settings(args)
    config = settings.scan
    cwd = Path.cwd()
    paths = [str((cwd / p).absolute()) for p in args.paths] if args.paths else list(config.paths)
    cache_dir = None if args.no_cache else _cache_dir(settings)
    jobs = worker_count(args.jobs)
    baseline_path = None if args.inventory else _baseline_path(args, settings)
    known = baselines.load(baseline_path) if baseline_path and baseline_path.exists() else None
    verdict = run_scan(paths, config, root, cache_dir=cache_dir, baseline=known, jobs=jobs)
    result = verdict.result

    if args.inventory:
        rendered = inventory_json(result) if args.format != "text" else inventory_text(result)
        _emit(rendered, args.output)
        return 1 if any(p.kind == EMIT_SITE_COUNT for p in result.errors) else 0

    if args.update_baseline and baseline_path is not None:
        verdict = _update_baseline(baseline_path, verdict)
    findings, errors, baselined = verdict.findings, verdict.problems, verdict.baselined
    if args.format == "json":
        rendered = to_json(findings, errors, result.stats)
    elif args.format == "sarif":
        rendered = to_sarif(findings, errors, result.root, result.rules)
    else:
        rendered = to_text(findings, errors, result.stats, baselined=baselined)
    _emit(rendered, args.output)
    return exit_status(bool(findings), errors)


COMMAND = Command("scan", add_parser)
