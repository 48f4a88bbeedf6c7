"""Team rules: the `Rule` records a repository registers in `[tool.harness] rules`.

Each entry is a `module:attribute` spec naming a record written against
`invariants.scan.api`, imported as every team module is (`invariants.team_modules`); the
code a scan reads is still never imported. Every problem with a spec is a `TeamRuleError`
naming it; the configuration loader adds the file and the key.

The records' source is hashed (every `.py` file of each rule module's top-level package, or
the module's own file), so editing a rule invalidates the scan cache.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from invariants import team_modules
from invariants.scan.model import ScanConfig, TeamRules
from invariants.scan.rules import registered
from invariants.scan.rules.spec import Rule
from invariants.team_modules import TeamModuleError

KEY = "rules"
# The built-in rules' prefix: a team's ids are its own.
RESERVED_PREFIX = "MESH"
# Upper-case letters (a team's prefix), then digits: ids are matched upper-cased everywhere.
_ID = re.compile(r"[A-Z][A-Z_]*[0-9]+")


class TeamRuleError(TeamModuleError):
    """A `rules` entry that cannot be used; the message names the spec."""


_EXAMPLE = "mymesh_rules.handlers:NO_BLOCKING_IN_HANDLER"


def specs_of(value: object) -> tuple[str, ...]:
    """The specs a `rules` value lists: a string or an array of strings."""
    try:
        return team_modules.specs_of(value)
    except TeamModuleError as exc:
        raise TeamRuleError(str(exc)) from None


def _record(spec: str, search: Sequence[Path]) -> tuple[ModuleType, Rule]:
    try:
        module, value = team_modules.load(spec, _EXAMPLE, search)
    except TeamModuleError as exc:
        raise TeamRuleError(str(exc)) from None
    if not isinstance(value, Rule):
        raise TeamRuleError(f"{spec!r}: is a {type(value).__name__}, not a rule record "
                            "(invariants.scan.api.Rule)")
    return module, value


def _check_id(spec: str, rule: Rule) -> None:
    if rule.id.upper().startswith(RESERVED_PREFIX):
        raise TeamRuleError(f"{spec!r}: rule id {rule.id!r} has the prefix {RESERVED_PREFIX}, "
                            "which is the harness's own: choose a prefix of your team's "
                            "(e.g. AIO001)")
    if not _ID.fullmatch(rule.id):
        raise TeamRuleError(f"{spec!r}: rule id {rule.id!r} must be upper-case letters, then "
                            "digits (e.g. AIO001)")


def _check_unique(specs: Sequence[str], records: Sequence[Rule]) -> None:
    """One id per rule and one rule per `[tool.harness]` key, the built-in ones included."""
    ids = {rule.id: "the harness's built-in rules" for rule in registered()}
    keys = {option.key: rule.id for rule in registered() for option in rule.options}
    keys.update({name: "the scan's own settings" for name in ScanConfig.__dataclass_fields__})
    for spec, rule in zip(specs, records, strict=True):
        if rule.id in ids:
            raise TeamRuleError(f"{spec!r}: duplicate rule id {rule.id!r} (also {ids[rule.id]})")
        ids[rule.id] = repr(spec)
        for option in rule.options:
            if option.key in keys:
                raise TeamRuleError(f"{spec!r}: option key {option.key!r} is taken "
                                    f"(by {keys[option.key]})")
            keys[option.key] = rule.id


def load(value: object, search: Sequence[Path] = ()) -> TeamRules:
    """The team rules a `rules` value registers, in the order given; `search`: the
    repository's directories to import them from first. Raises `TeamRuleError`."""
    specs = specs_of(value)
    modules: list[ModuleType] = []
    records: list[Rule] = []
    for spec in specs:
        module, record = _record(spec, search)
        _check_id(spec, record)
        modules.append(module)
        records.append(record)
    _check_unique(specs, records)
    fingerprint = team_modules.fingerprint(specs, modules) if specs else ""
    return TeamRules(specs, tuple(records), fingerprint, tuple(str(place) for place in search))
