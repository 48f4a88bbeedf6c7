"""Load the scanner's configuration from `[tool.harness]` in the scanned repo's pyproject.toml.

Keys are the `ScanConfig` field names (`paths`, `test_globs`, …), the options each rule
record declares (`expected_emit_sites`, `guard_functions`, …) and `rules`, the team's own
rule records (`module:attribute`, loaded first: their ids and options are then known to
`select`, `ignore` and the other keys; see `invariants.scan.team`), in snake_case. A kebab-case
spelling is rejected with a hint, so a typo can never silently fall back to a
default. Keys owned by other parts of the harness (the pytest plugin, the dynamic checks) are
listed in `OTHER_KEYS` and skipped here; the scan command's own settings (`baseline`,
`cache_dir`) are returned beside the `ScanConfig`.
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path

from invariants.scan import team
from invariants.scan.model import OptionValue, RuleOptions, ScanConfig, TeamRules
from invariants.scan.options import OptionError, parse_count, parse_names
from invariants.scan.rules import UnknownRule, option_table, registered, rule_ids
from invariants.scan.rules.spec import Rule
from invariants.user_errors import UserError

# Keys of `[tool.harness]` that belong to other parts of the harness, not to the scanner:
# every key `harness.settings.PLUGIN_KEYS` reads (a test holds the two together).
OTHER_KEYS: frozenset[str] = frozenset(
    {"adapter", "profile", "hypothesis_profile", "invariants", "prove", "sarif", "sarif_output",
     "shared_database", "params", "mutate_paths"}
)

# The scan command's own settings, which are not per-file analysis options.
COMMAND_KEYS: frozenset[str] = frozenset({"baseline", "cache_dir"})

_RULE_LIST_KEYS = frozenset({"select", "ignore"})
_POSITIVE_KEYS = frozenset({"max_file_bytes"})  # every other integer key may be 0


class ConfigError(UserError):
    """A configuration problem, reported as one line naming the file and the key."""


@dataclass(frozen=True, slots=True)
class ScanSettings:
    """What `[tool.harness]` says: the analysis options plus the command's own settings."""

    config: ScanConfig
    source: Path | None  # the pyproject.toml read, None when defaults were used
    baseline: str | None = None  # relative to the directory of `source`
    cache_dir: str | None = None


def _field_types() -> dict[str, str]:
    return {f.name: str(f.type) for f in dataclasses.fields(ScanConfig)
            if f.name not in ("options", "team_rules")}


def _fail(source: Path, key: str, problem: str) -> ConfigError:
    return ConfigError(f"{source}: [tool.harness] {key}: {problem}")


def _field_value(key: str, kind: str, value: object, rules: Sequence[Rule]) -> object:
    """A `ScanConfig` field's value; raises OptionError (UnknownRule for a rule list)."""
    if kind.startswith("tuple[str, ...]"):
        names = parse_names(value)
        return rule_ids(names, rules=rules) if key in _RULE_LIST_KEYS else names
    if kind == "int":
        return parse_count(value, minimum=int(key in _POSITIVE_KEYS))
    # a field type without a loader rule: refuse rather than guess
    raise OptionError("not configurable from pyproject.toml")


def _command_setting(source: Path, key: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise _fail(source, key, f"expected a non-empty string, got {value!r}")
    return value


def _team_rules(table: Mapping[str, object], source: Path, search: Sequence[Path]) -> TeamRules:
    if team.KEY not in table:
        return TeamRules()
    try:
        return team.load(table[team.KEY], search)
    except team.TeamRuleError as exc:
        raise _fail(source, team.KEY, str(exc)) from None


def settings_from_table(
    table: Mapping[str, object], source: Path, *, other_keys: Iterable[str] = (),
    search: Sequence[Path] | None = None,
) -> ScanSettings:
    """Validate a `[tool.harness]` table; every problem names `source` and the key. `search`:
    the directories team rule modules are imported from first (default: `source`'s)."""
    types = _field_types()
    team_rules = _team_rules(table, source, (source.parent,) if search is None else search)
    rules = (*registered(), *team_rules.records)
    rule_options = option_table(rules)
    skipped = OTHER_KEYS | frozenset(other_keys)
    values: dict[str, object] = {}
    options: dict[str, OptionValue] = {}
    command: dict[str, str] = {}
    for key, value in table.items():
        if key in skipped or key == team.KEY:
            continue
        try:
            if key in COMMAND_KEYS:
                command[key] = _command_setting(source, key, value)
            elif key in types:
                values[key] = _field_value(key, types[key], value, rules)
            elif key in rule_options:
                options[key] = rule_options[key][1].parse(value)
            else:
                every = [*types, *COMMAND_KEYS, *rule_options, *skipped, team.KEY]
                close = get_close_matches(key.replace("-", "_"), every, n=1, cutoff=0.75)
                raise OptionError(f"unknown key (did you mean {close[0]!r}?)" if close else
                                  "unknown key")
        except (OptionError, UnknownRule) as exc:
            raise _fail(source, key, str(exc)) from None
    config = ScanConfig(**values, options=RuleOptions(options),  # type: ignore[arg-type]
                        team_rules=team_rules)
    return ScanSettings(
        config=config,
        source=source,
        baseline=command.get("baseline"),
        cache_dir=command.get("cache_dir"),
    )


def load_settings(pyproject: Path | None, *, other_keys: Iterable[str] = ()) -> ScanSettings:
    """Read `[tool.harness]` from `pyproject`; defaults when it is None or has no such table."""
    if pyproject is None:
        return ScanSettings(config=ScanConfig(), source=None)
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{pyproject}: cannot read: {exc.strerror or exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{pyproject}: invalid TOML: {exc}") from exc
    tool = data.get("tool", {})
    table = tool.get("harness", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.harness] must be a table")
    search = (*pytest_pythonpath(pyproject, data), pyproject.parent)
    return settings_from_table(table, pyproject, other_keys=other_keys, search=search)


def pytest_pythonpath(pyproject: Path, data: Mapping[str, object]) -> tuple[Path, ...]:
    """The directories `[tool.pytest.ini_options] pythonpath` of the parsed `pyproject`
    names, absolute: where the repository imports its own modules from (team rules too)."""
    tool = data.get("tool", {})
    pytest_table = tool.get("pytest", {}) if isinstance(tool, dict) else {}
    options = pytest_table.get("ini_options", {}) if isinstance(pytest_table, dict) else {}
    entries = options.get("pythonpath", []) if isinstance(options, dict) else []
    if isinstance(entries, str):
        entries = entries.split()
    if not isinstance(entries, list):
        return ()
    return tuple(pyproject.parent / entry for entry in entries if isinstance(entry, str))


def load_config(pyproject: Path | None, *, other_keys: Iterable[str] = ()) -> ScanConfig:
    """The `ScanConfig` of `pyproject` (see `load_settings`)."""
    return load_settings(pyproject, other_keys=other_keys).config


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml in `start` or one of its ancestors."""
    here = start.resolve()
    if here.is_file():
        here = here.parent
    for directory in (here, *here.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None
