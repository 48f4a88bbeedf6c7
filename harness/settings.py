"""What a harness run is asked to do, merged from three places: the one settings path.

Every entry point (the plugin, `check`, `scan`, `prove`, `fuzz`, `adapter-check`) reads
`[tool.harness]` here, once per run, so a bad key or value is the same one line from each
of them.

Precedence, highest first: command-line options (`--harness-*`), pytest ini keys
(`harness_*` in `[tool.pytest.ini_options]`), then `[tool.harness]` in the repo's
pyproject.toml, then the defaults (scan the whole repo, the reference mesh's adapter, the
`ci` profile, every invariant, no prove; the shared database alone also falls back to the
`HARNESS_SHARED_DATABASE` environment variable before its default, none).

The scanner owns most of `[tool.harness]` (see `invariants.scan.config`), `rules` too:
the team's own rule records, imported from the repository (its pytest `pythonpath`, then
its root, as the team's tests would import them), so a bad one is the same one line from
every entry point. The keys read here are the plugin's own: `adapter`, `profile`,
`invariants` (the built-in ids it selects, and the team's own invariants it registers,
imported as its rules are), `prove`, `sarif`, `shared_database`, `params`, and
`mutate_paths` (what `prove --mutate` mutates). Every problem is a `ConfigError` of one
line naming the file and the key.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.params import params_from
from harness.shared_database import SharedDatabase, environment_database, shared_database_spec
from invariants.adapter_spec import REFERENCE_ADAPTER, AdapterSpecError, split_spec
from invariants.checks import CHECK_IDS, DEFAULT_PARAMS, CheckParams, UnknownCheck, check_ids
from invariants.checks import team as team_checkers
from invariants.scan.cache import DEFAULT_DIR
from invariants.scan.config import (
    ConfigError,
    ScanSettings,
    find_pyproject,
    settings_from_table,
)
from invariants.scan.model import ScanConfig
from invariants.scan.rules import UnknownRule
from invariants.scan.rules import rule_ids as known_rule_ids
from invariants.step_budget import step_budgets

DEFAULT_PROFILE = "ci"

# Keys of [tool.harness] this module reads; `hypothesis_profile` and `sarif_output` are
# accepted spellings of `profile` and `sarif`. The scanner skips them: they are passed to it
# as `other_keys`, and its own OTHER_KEYS lists them too, for a scan configuration loaded
# without this module (`invariants.scan.config.load_config`).
PLUGIN_KEYS: frozenset[str] = frozenset(
    {"adapter", "profile", "hypothesis_profile", "invariants", "prove", "sarif", "sarif_output",
     "shared_database", "params", "mutate_paths"}
)
_SYNONYMS = {"hypothesis_profile": "profile", "sarif_output": "sarif"}


@dataclass(frozen=True)
class Overrides:
    """Settings given on the command line or in ini keys; None = not given.

    Paths are absolute already (relative ones are resolved against the invocation directory
    by whoever builds this).
    """

    paths: tuple[str, ...] | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    baseline: Path | None = None
    sarif: Path | None = None
    adapters: tuple[str, ...] | None = None
    adapter_origin: str = "--harness-adapter"  # where `adapters` came from, for errors
    profile: str | None = None
    # As given: normalised once the table has registered the team's invariants
    invariants: tuple[str, ...] | None = None
    invariants_origin: str = "--harness-invariants"
    prove: bool | None = None
    shared_database: SharedDatabase | None = None  # checked, with where it was given
    params: Mapping[str, object] | None = None  # KEY=VALUE pairs, parsed (`--harness-param`)
    params_origin: str = "--harness-param"
    search_only: bool = False  # leave the seed scenarios out: what search finds alone


@dataclass(frozen=True)
class HarnessSettings:
    root: Path  # the scan root: the pyproject's directory, or the rootdir without one
    pyproject: Path | None
    scan: ScanConfig
    paths: tuple[str, ...]  # relative to `root`, or absolute
    baseline: Path | None
    cache_dir: Path
    sarif: Path | None
    adapters: tuple[str, ...]
    adapter_origin: str  # the option or key the adapters came from, for error lines
    profile: str
    invariants: tuple[str, ...]
    prove: bool
    shared_database: SharedDatabase | None = None  # replayed read-only by every profile
    params: CheckParams = DEFAULT_PARAMS  # the figures the checkers hold the mesh to
    configured: bool = False  # the pyproject has a [tool.harness] table: a repo of its own
    search_only: bool = False  # the dynamic runs leave the seed scenarios out
    import_paths: tuple[Path, ...] = ()  # the repo's pytest `pythonpath`, absolute
    # What `prove --mutate` mutates (absolute); None: the bundled reference mesh.
    mutate_paths: tuple[Path, ...] | None = None
    # The team's own invariants, as `invariants` names them (`module:attribute`), loaded
    # and registered already: what a worker process that reads no settings loads again.
    team_invariants: tuple[str, ...] = ()


@dataclass(frozen=True)
class _PluginTable:
    adapters: tuple[str, ...] | None = None
    adapter_key: str = "adapter"
    profile: str | None = None
    invariants: tuple[str, ...] | None = None
    prove: bool | None = None
    sarif: str | None = None
    shared_database: SharedDatabase | None = None
    params: CheckParams = DEFAULT_PARAMS
    mutate_paths: tuple[str, ...] | None = None
    team_invariants: tuple[str, ...] = ()


def _fail(source: Path, key: str, problem: str) -> ConfigError:
    return ConfigError(f"{source}: [tool.harness] {key}: {problem}")


def rule_ids(origin: str, values: Sequence[str]) -> tuple[str, ...]:
    """Rule ids, upper-cased; an unknown one (or none at all) is a `ConfigError` naming
    `origin`."""
    try:
        return known_rule_ids(values, origin, required=True)
    except UnknownRule as exc:
        raise ConfigError(str(exc)) from None


def invariant_ids(origin: str, values: Sequence[str]) -> tuple[str, ...]:
    """Invariant ids in the given order; `none` alone selects no invariant."""
    try:
        return check_ids(values, origin)
    except UnknownCheck as exc:
        raise ConfigError(str(exc)) from None


def known_profile(name: str, origin: str) -> str:
    """`name` when it is one of the harness's profiles; else a `ConfigError` naming `origin`."""
    from invariants.dynamic.profiles import PROFILES  # Hypothesis: only for the jobs that run

    if name not in PROFILES:
        known = ", ".join(sorted(PROFILES))
        raise ConfigError(f"{origin}: unknown profile {name!r} (known: {known})")
    return name


def _strings(source: Path, key: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise _fail(source, key, f"expected a string or an array of strings, got {value!r}")


def _string(source: Path, key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(source, key, f"expected a non-empty string, got {value!r}")
    return value.strip()


def _invariants(origin: str, entries: Sequence[str], search: Sequence[Path]) -> tuple[str, ...]:
    """The invariants an `invariants` value selects: the built-in ids it names (`none`, or
    an empty list, for none of them; all of them when it lists only team invariants), then
    the team's own its `module:attribute` entries register (`invariants.checks.team`)."""
    team: list[str] = []
    for spec in team_specs(entries):
        try:
            team.append(team_checkers.load(spec, search).check_id)
        except team_checkers.TeamInvariantError as exc:
            raise ConfigError(f"{origin}: {exc}") from None
    ids = [entry for entry in entries if not team_checkers.is_spec(entry)]
    builtin = invariant_ids(origin, ids) if ids or not team else CHECK_IDS
    return tuple(dict.fromkeys((*builtin, *team)))


def team_specs(entries: Sequence[str]) -> tuple[str, ...]:
    """The `module:attribute` entries of an `invariants` value: the team's own checkers."""
    return tuple(dict.fromkeys(entry.strip() for entry in entries
                               if team_checkers.is_spec(entry)))


def _plugin_table(
    table: Mapping[str, object], source: Path, search: Sequence[Path] = ()
) -> _PluginTable:
    seen: dict[str, str] = {}
    values: dict[str, object] = {}
    for key, value in table.items():
        if key not in PLUGIN_KEYS:
            continue
        name = _SYNONYMS.get(key, key)
        if name in seen:
            raise _fail(source, key, f"given twice (also as {seen[name]!r})")
        seen[name] = key
        if name == "adapter":
            specs = _strings(source, key, value)
            if not specs:
                raise _fail(source, key, "expected at least one 'module:factory'")
            for spec in specs:
                try:
                    split_spec(spec, f"{source}: [tool.harness] {key}")
                except AdapterSpecError as exc:
                    raise ConfigError(str(exc)) from None
            values["adapters"] = tuple(spec.strip() for spec in specs)
            values["adapter_key"] = key
        elif name == "invariants":
            entries = _strings(source, key, value)
            values["invariants"] = _invariants(f"{source}: [tool.harness] {key}", entries, search)
            values["team_invariants"] = team_specs(entries)
        elif name == "shared_database":
            # Relative to the pyproject's directory, like every path of the table.
            values[name] = shared_database_spec(
                _string(source, key, value), f"{source}: [tool.harness] {key}", source.parent
            )
        elif name == "params":
            if not isinstance(value, dict):
                raise _fail(source, key, f"expected a table ([tool.harness.params]), got {value!r}")
            values["params"] = params_from(value, f"{source}: [tool.harness.params]")
        elif name == "mutate_paths":
            paths = _strings(source, key, value)
            if not paths or not all(path.strip() for path in paths):
                raise _fail(source, key, f"expected non-empty paths, got {value!r}")
            missing = [path for path in paths if not (source.parent / path.strip()).exists()]
            if missing:
                raise _fail(source, key, f"{missing[0]!r}: no such file or directory "
                            f"(paths are relative to {source.parent})")
            values[name] = tuple(path.strip() for path in paths)
        elif name == "prove":
            if not isinstance(value, bool):
                raise _fail(source, key, f"expected true or false, got {value!r}")
            values["prove"] = value
        else:
            values[name] = _string(source, key, value)
    return _PluginTable(**values)  # type: ignore[arg-type]  # validated per key above


def _read_toml(pyproject: Path) -> Mapping[str, object]:
    try:
        return tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{pyproject}: cannot read: {exc.strerror or exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{pyproject}: invalid TOML: {exc}") from exc


def _harness_table(pyproject: Path, data: Mapping[str, object]) -> Mapping[str, object]:
    """`[tool.harness]` of the parsed `pyproject` (empty when it has none)."""
    tool = data.get("tool", {})
    table = tool.get("harness", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.harness] must be a table")
    return table


def _pytest_pythonpath(pyproject: Path, data: Mapping[str, object]) -> tuple[Path, ...]:
    """The directories `[tool.pytest.ini_options] pythonpath` names, absolute: where the
    repository's own tests import its mesh from. The jobs outside pytest (`check`,
    `adapter-check`) import the adapter from there too, as the plugin does."""
    tool = data.get("tool", {})
    pytest_table = tool.get("pytest", {}) if isinstance(tool, dict) else {}
    options = pytest_table.get("ini_options", {}) if isinstance(pytest_table, dict) else {}
    entries = options.get("pythonpath", []) if isinstance(options, dict) else []
    if isinstance(entries, str):
        entries = entries.split()
    if not isinstance(entries, list):
        return ()
    return tuple(pyproject.parent / entry for entry in entries if isinstance(entry, str))


def importing_from(settings: HarnessSettings) -> None:
    """Put the repository's pytest `pythonpath` on `sys.path` (first, as pytest does)."""
    for directory in reversed(settings.import_paths):
        if str(directory) not in sys.path:
            sys.path.insert(0, str(directory))


def for_command(
    start: Path | None = None,
    overrides: Overrides | None = None,
    *,
    pyproject: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> HarnessSettings:
    """The settings of a `python -m harness` job: `pyproject` when given, else the nearest
    pyproject.toml at or above `start` (default: the working directory)."""
    here = (start or Path.cwd()).absolute()
    found = pyproject if pyproject is not None else find_pyproject(here)
    rootdir = here if here.is_dir() else here.parent
    return resolve(found, rootdir, overrides or Overrides(), environ)


def resolve(
    pyproject: Path | None,
    rootdir: Path,
    overrides: Overrides,
    environ: Mapping[str, str] | None = None,
) -> HarnessSettings:
    """The settings of a run; raises `ConfigError` (one line) on any bad key or value.
    `environ` (default `os.environ`) is read for `HARNESS_SHARED_DATABASE`, only when no
    option, ini key or `[tool.harness]` key names a shared database, and for the step
    budgets, checked here so a bad one is this one line from every entry point, not a
    failed step."""
    _check_step_budgets(environ)
    read = _read_pyproject(pyproject)
    table = read.table
    root = pyproject.parent.absolute() if pyproject is not None else rootdir.absolute()
    config = _scan_config(read.scan.config, overrides)
    return HarnessSettings(
        root=root,
        pyproject=pyproject,
        scan=config,
        paths=overrides.paths if overrides.paths is not None else config.paths,
        baseline=_under_root(root, overrides.baseline, read.scan.baseline),
        cache_dir=root / (read.scan.cache_dir or DEFAULT_DIR),
        sarif=_under_root(root, overrides.sarif, table.sarif),
        adapters=overrides.adapters or table.adapters or (REFERENCE_ADAPTER,),
        adapter_origin=_adapter_origin(pyproject, table, overrides),
        profile=overrides.profile or table.profile or DEFAULT_PROFILE,
        invariants=(
            invariant_ids(overrides.invariants_origin, overrides.invariants)
            if overrides.invariants is not None
            else table.invariants if table.invariants is not None
            else CHECK_IDS
        ),
        prove=overrides.prove if overrides.prove is not None else bool(table.prove),
        shared_database=_shared_database(overrides, table, environ),
        params=_params(overrides, table),
        configured=bool(read.harness),
        import_paths=_pytest_pythonpath(pyproject, read.data) if pyproject is not None else (),
        search_only=overrides.search_only,
        mutate_paths=(
            tuple(root / path for path in table.mutate_paths)
            if table.mutate_paths is not None else None
        ),
        team_invariants=table.team_invariants,
    )


def _check_step_budgets(environ: Mapping[str, str] | None) -> None:
    # Each run resolves its budgets where its steps run (forked matrix workers and the
    # conformance programs' subprocesses inherit the environment, not these settings).
    step_budgets(environ)


@dataclass(frozen=True)
class _Pyproject:
    """What the one read of the pyproject gives (all empty without one)."""

    data: Mapping[str, object]  # the whole file
    harness: Mapping[str, object]  # its [tool.harness]
    scan: ScanSettings  # the scanner's keys of it
    table: _PluginTable  # the plugin's keys of it


def _read_pyproject(pyproject: Path | None) -> _Pyproject:
    if pyproject is None:
        return _Pyproject({}, {}, ScanSettings(config=ScanConfig(), source=None), _PluginTable())
    data = _read_toml(pyproject)  # the one read of the file
    raw = _harness_table(pyproject, data)
    # team rules (`rules`) and invariants import from where the repository's own tests
    # import its code
    search = (*_pytest_pythonpath(pyproject, data), pyproject.parent)
    scan = settings_from_table(raw, pyproject, other_keys=PLUGIN_KEYS, search=search)
    return _Pyproject(data, raw, scan, _plugin_table(raw, pyproject, search))


def _scan_config(config: ScanConfig, overrides: Overrides) -> ScanConfig:
    """The table's scan configuration with the rules the options select or ignore."""
    if overrides.select is not None:
        config = dataclasses.replace(config, select=overrides.select)
    if overrides.ignore is not None:
        config = dataclasses.replace(config, ignore=overrides.ignore)
    return config


def _under_root(root: Path, given: Path | None, configured: str | None) -> Path | None:
    """The path an option gives (absolute already), else the table's, relative to `root`."""
    if given is None and configured is not None:
        return root / configured
    return given


def _adapter_origin(pyproject: Path | None, table: _PluginTable, overrides: Overrides) -> str:
    """Where the adapters came from, for error lines."""
    if overrides.adapters:
        return overrides.adapter_origin
    if table.adapters:
        return f"{pyproject}: [tool.harness] {table.adapter_key}"
    return "the default adapter"


def _shared_database(
    overrides: Overrides, table: _PluginTable, environ: Mapping[str, str] | None
) -> SharedDatabase | None:
    """The option's or key's shared database; only without either, the environment's."""
    return (
        overrides.shared_database or table.shared_database
        or environment_database(os.environ if environ is None else environ, Path.cwd())
    )


def _params(overrides: Overrides, table: _PluginTable) -> CheckParams:
    """The table's figures, with the options' KEY=VALUE pairs over them."""
    if overrides.params:
        return params_from(overrides.params, overrides.params_origin, table.params)
    return table.params
