"""The plugin's command-line options and ini keys, and the rule that turns its items on.

The plugin is loaded in every pytest run once installed (the `pytest11` entry point), so
it always registers its options, ini keys, markers and fixtures, but collects harness items
only when asked to (see `wants_items`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.params import parse_assignments
from harness.settings import Overrides, rule_ids
from harness.shared_database import SharedDatabase, shared_database_spec

# Names `-p` may give that mean this plugin: the distribution's entry point, or the module.
PLUGIN_NAMES = frozenset({"harness", "harness.plugin"})


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "mesh-harness architecture invariants")
    group.addoption("--harness", action="store_true", dest="harness_enable", default=False,
                    help="collect the harness items (scan, invariants); also on with "
                         "an explicit `-p harness` or the `harness = true` ini key")
    group.addoption("--harness-path", action="append", dest="harness_paths", metavar="PATH",
                    default=None, help="file or directory to scan (repeatable; replaces "
                                       "[tool.harness] paths)")
    group.addoption("--harness-select", dest="harness_select", metavar="IDS", default=None,
                    help="comma-separated rule ids to run (replaces [tool.harness] select)")
    group.addoption("--harness-ignore", dest="harness_ignore", metavar="IDS", default=None,
                    help="comma-separated rule ids to skip (replaces [tool.harness] ignore)")
    group.addoption("--harness-baseline", dest="harness_baseline", metavar="FILE", default=None,
                    help="baseline of accepted findings (see `python -m harness scan`)")
    group.addoption("--harness-sarif", dest="harness_sarif", metavar="FILE", default=None,
                    help="write the scan's findings as SARIF 2.1.0 to FILE")
    group.addoption("--harness-adapter", action="append", dest="harness_adapters",
                    metavar="MODULE:FACTORY", default=None,
                    help="adapter factory of the mesh under test (repeatable; default: "
                         "the reference mesh)")
    group.addoption("--harness-profile", dest="harness_profile", metavar="NAME", default=None,
                    help="Hypothesis settings profile of the invariant items: ci, dev, fuzz "
                         "or one registered with settings.register_profile (default: ci)")
    group.addoption("--harness-invariants", dest="harness_invariants", metavar="IDS",
                    default=None, help="comma-separated invariants to run (INV1..INV7), "
                                       "or `none`")
    group.addoption("--harness-param", action="append", dest="harness_params",
                    metavar="KEY=VALUE", default=None,
                    help="a figure the checkers hold the mesh to, as in [tool.harness.params] "
                         "(repeatable; VALUE is a TOML value, e.g. response_timeout_ms=5000)")
    group.addoption("--harness-search-only", action="store_true", dest="harness_search_only",
                    default=False,
                    help="leave the seed scenarios out of the invariant runs: what the state "
                         "machines' drawn rules find alone")
    group.addoption("--harness-prove", action="store_const", const=True, dest="harness_prove",
                    default=None, help="also run one item per pre-fix mutant (the kill matrix)")
    group.addoption("--harness-shared-database", dest="harness_shared_database",
                    metavar="SPEC", default=None,
                    help="replay the examples fuzzing sessions saved in this database (a "
                         "directory or redis://host:port/db), read-only, before each invariant "
                         "(default: $HARNESS_SHARED_DATABASE, else none)")
    parser.addini("harness", type="bool", default=False,
                  help="collect the harness items in every run (as --harness)")
    parser.addini("harness_adapter", type="linelist", default=[],
                  help="adapter factories, one `module:factory` per line")
    parser.addini("harness_profile", type="string", default="",
                  help="Hypothesis settings profile of the invariant items")
    parser.addini("harness_sarif", type="string", default="",
                  help="write the scan's findings as SARIF to this file")
    parser.addini("harness_shared_database", type="string", default="",
                  help="shared example database the invariant items replay (a directory "
                       "or redis:// URL)")


def wants_items(config: pytest.Config) -> bool:
    """Harness items are collected when `--harness` is given, when `-p harness` is named
    explicitly (on the command line, in PYTEST_ADDOPTS or in `addopts`), or when the ini
    key `harness` is true. Being merely auto-loaded is not enough."""
    if config.getoption("harness_enable"):
        return True
    named = getattr(config.known_args_namespace, "plugins", None) or []
    if any(name in PLUGIN_NAMES for name in named):
        return True
    return bool(config.getini("harness"))


def _comma_list(value: str | None) -> list[str] | None:
    return None if value is None else value.split(",")


def _absolute(base: Path, value: str | None) -> Path | None:
    return None if not value else (base / value).absolute()


def _shared_database(config: pytest.Config, here: Path, ini_dir: Path) -> SharedDatabase | None:
    option: str | None = config.getoption("harness_shared_database")
    if option is not None:
        return shared_database_spec(option, "--harness-shared-database", here)
    ini: str = config.getini("harness_shared_database")
    if ini.strip():
        return shared_database_spec(ini, f"{config.inipath}: harness_shared_database", ini_dir)
    return None


def overrides_from(config: pytest.Config) -> Overrides:
    """The settings given as options or ini keys; option paths are relative to the
    invocation directory, ini paths to the ini file's directory."""
    here = config.invocation_params.dir
    ini_dir = config.inipath.parent if config.inipath is not None else config.rootpath
    select = _comma_list(config.getoption("harness_select"))
    ignore = _comma_list(config.getoption("harness_ignore"))
    invariants = _comma_list(config.getoption("harness_invariants"))
    paths: list[str] | None = config.getoption("harness_paths")
    adapters: list[str] | None = config.getoption("harness_adapters")
    ini_adapters: list[str] = config.getini("harness_adapter")
    sarif = _absolute(here, config.getoption("harness_sarif"))
    if sarif is None:
        sarif = _absolute(ini_dir, config.getini("harness_sarif"))
    return Overrides(
        paths=tuple(str((here / path).absolute()) for path in paths) if paths else None,
        select=rule_ids("--harness-select", select) if select is not None else None,
        ignore=rule_ids("--harness-ignore", ignore) if ignore is not None else None,
        baseline=_absolute(here, config.getoption("harness_baseline")),
        sarif=sarif,
        adapters=tuple(adapters or ini_adapters) or None,
        adapter_origin="--harness-adapter" if adapters else f"{config.inipath}: harness_adapter",
        profile=config.getoption("harness_profile") or config.getini("harness_profile") or None,
        invariants=tuple(invariants) if invariants is not None else None,
        prove=config.getoption("harness_prove"),
        shared_database=_shared_database(config, here, ini_dir),
        params=parse_assignments(config.getoption("harness_params") or [], "--harness-param"),
        search_only=bool(config.getoption("harness_search_only")),
    )
