"""Plain data shared by the scanner's parts: configuration, findings, emit sites.

The per-file analysis (`engine`) produces a `FileReport` from source bytes alone, so it
can be cached by content hash and run in worker processes; the rules' tree-level passes
(the MESH001 call graph) and the product layer (suppressions, baseline, output) consume it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from invariants.scan.problems import Problem

# An option value as the configuration holds it: names, or a count (None when unset).
OptionValue = tuple[str, ...] | int | None


class RuleOptions:
    """The rule options a configuration sets (see `options`); an unset key takes its rule's
    default. Immutable and hashable, so a `ScanConfig` can key a cache."""

    __slots__ = ("_items", "_values")

    def __init__(self, values: Mapping[str, OptionValue] | None = None) -> None:
        self._values: dict[str, OptionValue] = dict(values or {})
        self._items = tuple(sorted(self._values.items()))

    def get(self, key: str, default: OptionValue) -> OptionValue:
        return self._values.get(key, default)

    def items(self) -> tuple[tuple[str, OptionValue], ...]:
        return self._items

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RuleOptions) and self._items == other._items

    def __hash__(self) -> int:
        return hash(self._items)

    def __repr__(self) -> str:  # stable: part of the cache key (see `cache`)
        return f"RuleOptions({dict(self._items)!r})"

    def __reduce__(self) -> tuple[type[RuleOptions], tuple[dict[str, OptionValue]]]:
        return (RuleOptions, (dict(self._items),))


class TeamRules:
    """The rules a repository registers in `[tool.harness] rules` (`module:attribute`
    specs), loaded by `invariants.scan.team` from the `search` directories. Compared and
    hashed on the specs and a hash of their source, which its repr names: the
    configuration's repr keys the scan cache, so editing a team rule invalidates it."""

    __slots__ = ("fingerprint", "records", "search", "specs")

    def __init__(
        self, specs: tuple[str, ...] = (), records: tuple[Any, ...] = (), fingerprint: str = "",
        search: tuple[str, ...] = (),
    ) -> None:
        # `Rule` records (`invariants.scan.rules.spec`), which import this module: not
        # named here, so the configuration stays below the rules.
        self.specs = specs
        self.records = records
        self.fingerprint = fingerprint
        self.search = search

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TeamRules) and self.specs == other.specs
                and self.fingerprint == other.fingerprint)

    def __hash__(self) -> int:
        return hash((self.specs, self.fingerprint))

    def __repr__(self) -> str:  # stable: part of the cache key (see `cache`)
        return f"TeamRules({list(self.specs)!r}, {self.fingerprint!r})"

    def __reduce__(self) -> tuple[Callable[..., TeamRules], tuple[object, ...]]:
        # A process that was not forked from the loader's imports the rules again.
        return (_load_team_rules, (self.specs, self.search))


def _load_team_rules(specs: tuple[str, ...], search: tuple[str, ...]) -> TeamRules:
    if not specs:
        return TeamRules()
    # The loader sits above this module (it imports the rule registry): found by name.
    team = importlib.import_module("invariants.scan.team")
    loaded: TeamRules = team.load(list(specs), [Path(place) for place in search])
    return loaded


@dataclass(frozen=True, slots=True)
class ScanConfig:
    """What to scan and every name a rule matches on. Defaults need no configuration for the
    reference mesh.

    Loaded from `[tool.harness]` of the scanned repo's pyproject.toml (see `config`). The
    fields are the scan's own settings; each rule's keys live in `options`, declared by the
    rule's record (`rules/`), so a rule brings its configuration with it.
    """

    paths: tuple[str, ...] = (".",)
    exclude: tuple[str, ...] = (
        ".git/*", "*/.git/*", ".venv/*", "*/.venv/*", "build/*", "dist/*",
        "*/node_modules/*", "*/__pycache__/*",
    )
    test_globs: tuple[str, ...] = ("test_*.py", "*_test.py", "conftest.py")
    select: tuple[str, ...] | None = None  # None: every registered rule
    ignore: tuple[str, ...] = ()
    # Larger files are not analysed (a scan error): libcst's tree of a file costs about 300
    # bytes per source byte, so 1 MB keeps a worker's peak near 300 MB (docs/scanning.md).
    max_file_bytes: int = 1_000_000
    options: RuleOptions = field(default_factory=RuleOptions)
    # The team's own rules, run with the built-in ones (`rules.rules_of`).
    team_rules: TeamRules = field(default_factory=TeamRules)

    def enabled(self, rule: str) -> bool:
        return (self.select is None or rule in self.select) and rule not in self.ignore


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str  # "MESH001"
    path: str  # posix path relative to the scan root
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    message: str
    symbol: str  # enclosing qualified name, "" at module level
    snippet: str = ""  # the source line, stripped (for text output and the baseline key)


@dataclass(frozen=True, slots=True)
class EmitSite:
    """A DeliveryFailure construction, for MESH001 and the inventory."""

    path: str
    line: int
    column: int
    symbol: str  # enclosing function's qualified name
    guarded: bool  # dominated by a may_answer() true edge in its own function
    guard_line: int | None  # the guarding line, when guarded
    snippet: str = ""


@dataclass(frozen=True, slots=True)
class CallSite:
    """A call to a function by name, for the MESH001 call-graph pass."""

    path: str
    line: int
    caller: str  # qualified name of the calling function ("" = module level)
    callee: str  # the called name (last dotted component; the imported name for an alias)
    guarded: bool  # dominated by a may_answer() true edge in the caller
    # What the call may reach, resolved against the whole tree later (see `targets`):
    # "!mod:Qual.name" a definition of this file, "=a.b.name" an imported dotted name,
    # "@mod:Class.name" a self/cls call, ".name" any method, "*name" any function.
    target: str = ""


@dataclass(frozen=True, slots=True)
class Definition:
    """A function or class defined in a production file, for resolving call targets."""

    qualname: str  # "Router.nack", "nack", "outer.inner"
    is_class: bool
    bases: tuple[str, ...] = ()  # a class's bases, as call-target descriptors


@dataclass(slots=True)
class FileReport:
    """Everything the per-file analysis learned. Picklable and JSON-able for the cache."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    emit_sites: list[EmitSite] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    parsed: bool = True
    definitions: list[Definition] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)  # "not analysed" scan errors
    # libcst built the file's tree in this analysis (a rule needed it); never cached, so an
    # outcome served from the cache says False
    tree_built: bool = False
