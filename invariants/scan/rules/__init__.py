"""The rule registry: one line per rule module, in id order. Each module defines `RULE`,
its record (`spec.Rule`) with its examples; adding a rule is its file plus its line here
(loaded by `invariants.records`, as every registry is).

Consumers call `registered()` (or the tables below) when they need the rules, not at
import time, so a test can swap `ALL_RULES` for a registry with a rule of its own. A scan
runs `rules_of(config)`: these, then the team's own rules its configuration registers
(`[tool.harness] rules`, see `invariants.scan.team`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from invariants import records
from invariants.scan.model import ScanConfig
from invariants.scan.options import Option
from invariants.scan.rules.spec import Rule
from invariants.user_errors import UserError

RULE_MODULES: tuple[str, ...] = (
    "invariants.scan.rules.mesh000_parse_error",
    "invariants.scan.rules.mesh001",
    "invariants.scan.rules.mesh002_payload_type_exemption",
    "invariants.scan.rules.mesh003_resend_after_timeout",
    "invariants.scan.rules.mesh004_detached_subscription",
    "invariants.scan.rules.mesh005_module_mutable_state",
    "invariants.scan.rules.mesh006_fixed_sleep_in_test",
)


def load(modules: Iterable[str]) -> tuple[Rule, ...]:
    """The `RULE` record of each module, in the order given."""
    return records.load(modules, "RULE", Rule)


ALL_RULES: tuple[Rule, ...] = load(RULE_MODULES)


def registered() -> tuple[Rule, ...]:
    return ALL_RULES


def rules_of(config: ScanConfig) -> tuple[Rule, ...]:
    """Every rule a scan with `config` knows: the built-in ones, then the team's."""
    return (*ALL_RULES, *config.team_rules.records)


def rule_table() -> Mapping[str, str]:
    """id -> slug, in id order."""
    return {rule.id: rule.slug for rule in ALL_RULES}


class _RuleTable(Mapping[str, str]):
    """Rule id -> slug of every registered rule, read from the registry each time it is
    used, so a registry a test swaps in shows everywhere at once."""

    def __getitem__(self, rule: str) -> str:
        return rule_table()[rule]

    def __iter__(self) -> Iterator[str]:
        return iter(rule_table())

    def __len__(self) -> int:
        return len(rule_table())

    def __repr__(self) -> str:
        return repr(dict(rule_table()))


RULES: Mapping[str, str] = _RuleTable()


class UnknownRule(UserError, ValueError):
    """A rule id no registered rule has; `rule` is the id as it was written, `origin` where
    it came from (the message's prefix when given), `known` the ids it was checked against
    (default: the built-in rules)."""

    def __init__(
        self, rule: str, origin: str | None = None, known: Iterable[str] | None = None
    ) -> None:
        listed = ", ".join(RULES if known is None else known)
        unknown = f"unknown rule id {rule!r} (known: {listed})"
        super().__init__(f"{origin}: {unknown}" if origin else unknown)
        self.rule = rule
        self.origin = origin


def rule_ids(values: Iterable[str], origin: str | None = None, *, required: bool = False,
             rules: Iterable[Rule] | None = None) -> tuple[str, ...]:
    """The rule ids `values` name, stripped and upper-cased (`mesh001` is MESH001), blanks
    left out, in the order given; an unknown one raises `UnknownRule` naming it as written
    and `origin`, and so does none at all when one is `required` (naming the values).
    `rules`: the rules to know (default: the built-in ones; a scan's are `rules_of`).

    The one check of a rule id, wherever one is given: `--select`/`--ignore` (and their
    `--harness-*` and ini spellings), `[tool.harness] select`/`ignore`, a suppression's
    `allow[...]` and a baseline entry; each entry point only gives the error its type."""
    values = list(values)
    known = list(RULES) if rules is None else [rule.id for rule in rules]
    ids: list[str] = []
    for value in values:
        written = value.strip()
        if not written:
            continue
        if written.upper() not in known:
            raise UnknownRule(written, origin, known)
        ids.append(written.upper())
    if required and not ids:
        raise UnknownRule(",".join(values), origin, known)
    return tuple(ids)


def option_table(rules: Iterable[Rule] | None = None) -> Mapping[str, tuple[Rule, Option]]:
    """Every rule option by its `[tool.harness]` key, with the rule declaring it (of the
    built-in rules, or of `rules`)."""
    chosen = ALL_RULES if rules is None else rules
    return {option.key: (rule, option) for rule in chosen for option in rule.options}
