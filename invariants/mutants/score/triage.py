"""The triage file, `harness-mutants.toml`: equivalent mutants, known blind spots and
exclusions, each with a reason.

    [[equivalent]]                      # a mutant no behaviour can tell from the original
    path = "hub.py"                     # relative to the mutated package
    function = "Hub.intake"             # the enclosing definition, "<module>" at top level
    operator = "core/ReplaceComparisonOperator_Lt_LtE"
    snippet = "if depth < self.watermark:"   # the mutated line; whitespace is ignored
    occurrence = 0                      # which of the identical mutants of that line
    reason = "depth never equals the watermark here: intake sheds at the watermark"

    [[blind]]                           # a real bug of the mesh that no check sees yet
    path = "breaker.py"                 # the same keys as [[equivalent]]
    ...
    reason = "what the mutant does that a check should catch"

    [[equivalent]]                      # a group: one reason for many mutants
    reason = "both sides are always Route members: `==` and `is` agree"
    [[equivalent.mutants]]              # each with the keys of an entry but the reason
    path = "adapter.py"
    function = "ReferenceAdapter.post"
    operator = "core/ReplaceComparisonOperator_Is_Eq"
    snippet = "if route is _DIRECT:"
    occurrence = 0

    [[exclude]]                         # code no check is meant to observe
    path = "cli.py"                     # globs; function and operator default to "*"
    function = "*"
    reason = "the command-line front end, never behind the adapter"

An `[[equivalent]]` or `[[blind]]` entry names exactly one mutant: path, function, operator
and snippet name a line's mutants, and `occurrence` picks one of them (0 for the first
Cosmic Ray makes, in its own order of occurrences, then 1, ...: the mutant's `rank`). A
group is a table with a `reason` and `mutants`, an array of such entries without one (as
above, or inline tables one a line: `mutants = [{ path = ..., occurrence = 0 }, ...]`):
each is an entry of the table with the group's reason, named by the group and its place in
it (`[[equivalent]] #3 mutant 2`). A triaged-equivalent mutant leaves the score's denominator;
a known-blind one is run and counted as a survivor like any other. An entry without a
reason or occurrence, an unknown key or a wrong type is an error naming the file, the entry
and the key; an entry that matches no mutant any more is reported stale.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from invariants.mutants.score.engine import EngineMutant, matches, normalise
from invariants.user_errors import UserError

FILENAME = "harness-mutants.toml"
EQUIVALENT = "equivalent"
BLIND = "blind"
EXCLUDE = "exclude"
_TABLES = (EQUIVALENT, BLIND, EXCLUDE)
_MUTANT_KEYS = ("path", "function", "operator", "snippet")
_GROUP = "mutants"  # a group's list of entries
_EXCLUDE_KEYS = ("path",)
_OPTIONAL_EXCLUDE = ("function", "operator")


class TriageError(UserError, ValueError):
    """A malformed triage file: one line naming the file, the entry and the key."""


@dataclass(frozen=True)
class Entry:
    """One `[[equivalent]]` or `[[blind]]` entry: exactly one mutant, with why."""

    path: str
    function: str
    operator: str
    snippet: str  # normalised
    occurrence: int  # the mutant's rank among those of this path, function, operator, snippet
    reason: str
    table: str = EQUIVALENT
    index: int = 0  # 1-based, in its table
    member: int = 0  # 1-based, in its group's `mutants`; 0 for an entry of its own

    @property
    def name(self) -> str:
        return _name(self.table, self.index, self.member)

    def matches(self, mutant: EngineMutant) -> bool:
        return mutant.key == (self.path, self.function, self.operator, self.snippet,
                              self.occurrence)

    def to_json(self) -> dict[str, str | int | None]:
        return {"table": self.table, "entry": self.index, "member": self.member or None,
                "path": self.path, "function": self.function, "operator": self.operator,
                "snippet": self.snippet, "occurrence": self.occurrence, "reason": self.reason}


def _name(table: str, index: int, member: int = 0) -> str:
    return f"[[{table}]] #{index}" + (f" mutant {member}" if member else "")



@dataclass(frozen=True)
class Exclusion:
    """Mutants left out of the run (globs over path, function, operator), with why."""

    path: str
    reason: str
    function: str = "*"
    operator: str = "*"

    def matches(self, mutant: EngineMutant) -> bool:
        return (
            matches(self.path, mutant.path)
            and matches(self.function, mutant.function)
            and matches(self.operator, mutant.operator)
        )

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "function": self.function, "operator": self.operator,
                "reason": self.reason}


@dataclass(frozen=True)
class Triage:
    source: Path | None
    equivalents: tuple[Entry, ...] = ()
    exclusions: tuple[Exclusion, ...] = ()
    blind: tuple[Entry, ...] = ()

    def equivalent(self, mutant: EngineMutant) -> Entry | None:
        return next((e for e in self.equivalents if e.matches(mutant)), None)

    def known_blind(self, mutant: EngineMutant) -> Entry | None:
        return next((e for e in self.blind if e.matches(mutant)), None)

    def excluded(self, mutant: EngineMutant) -> Exclusion | None:
        return next((e for e in self.exclusions if e.matches(mutant)), None)

    @property
    def entries(self) -> tuple[Entry, ...]:
        return (*self.equivalents, *self.blind)

    def stale(
        self, mutants: Iterable[EngineMutant], files: Iterable[str] | None = None
    ) -> list[Entry]:
        """Equivalent and blind entries that name no mutant the engine makes now. With
        `files` (the files the run enumerated), only the entries of those files are judged:
        an entry of a file the run did not mutate (`--mutate` one module) is not stale."""
        keys = {m.key for m in mutants}
        judged = None if files is None else set(files)
        return [
            e for e in self.entries
            if (judged is None or e.path in judged)
            and (e.path, e.function, e.operator, e.snippet, e.occurrence) not in keys
        ]

    def with_exclusions(self, extra: Sequence[Exclusion]) -> Triage:
        return Triage(self.source, self.equivalents, (*extra, *self.exclusions), self.blind)


def _text(where: str, entry: dict[str, object], key: str, *, required: bool) -> str | None:
    value = entry.get(key)
    if value is None:
        if required:
            raise TriageError(f"{where}: {key}: missing")
        return None
    if not isinstance(value, str) or not value.strip():
        raise TriageError(f"{where}: {key}: expected a non-empty string, got {value!r}")
    return value.strip()


def _occurrence(where: str, entry: dict[str, object]) -> int:
    value = entry.get("occurrence")
    if value is None:
        raise TriageError(
            f"{where}: occurrence: missing (an entry names one mutant: add `occurrence = N`, "
            "0 for the first of that line's mutants by this operator, 1 for the next; "
            "docs/mutation-score.md, 'Triage')"
        )
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TriageError(f"{where}: occurrence: expected an integer >= 0, got {value!r}")
    return value


def _entries(
    source: Path, data: dict[str, object], table: str
) -> list[tuple[int, str, dict[str, object]]]:
    raw = data.get(table, [])
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise TriageError(f"{source}: {table}: expected an array of tables ([[{table}]])")
    return [(index, f"{source}: {_name(table, index)}", item)
            for index, item in enumerate(raw, start=1)]


def _check_keys(where: str, entry: dict[str, object], allowed: Iterable[str]) -> None:
    known = set(allowed)
    unknown = sorted(set(entry) - known)
    if unknown:
        raise TriageError(f"{where}: {unknown[0]}: unknown key (known: {', '.join(sorted(known))})")


def _mutant_entries(source: Path, data: dict[str, object], table: str) -> tuple[Entry, ...]:
    found = []
    for index, where, item in _entries(source, data, table):
        if _GROUP not in item:  # an entry of its own
            _check_keys(where, item, (*_MUTANT_KEYS, "occurrence", "reason"))
            reason = str(_text(where, item, "reason", required=True))
            found.append(_entry(where, item, reason, table, index))
            continue
        _check_keys(where, item, (_GROUP, "reason"))
        reason = str(_text(where, item, "reason", required=True))
        members = item[_GROUP]
        if not isinstance(members, list) or not members or \
                not all(isinstance(member, dict) for member in members):
            raise TriageError(f"{where}: {_GROUP}: expected a non-empty array of tables "
                              "({ path = ..., function = ..., ... })")
        for number, member in enumerate(members, start=1):
            named = f"{source}: {_name(table, index, number)}"
            _check_keys(named, member, (*_MUTANT_KEYS, "occurrence"))
            found.append(_entry(named, member, reason, table, index, number))
    return tuple(found)


def _entry(where: str, raw: dict[str, object], reason: str, table: str, index: int,
           member: int = 0) -> Entry:
    """The entry `raw` (its keys checked) names, with `reason`."""
    fields = [_text(where, raw, key, required=True) for key in _MUTANT_KEYS]
    path, function, operator, snippet = (str(f) for f in fields)
    return Entry(path, function, operator, normalise(snippet), _occurrence(where, raw),
                 reason, table, index, member)


def _exclusions(source: Path, data: dict[str, object]) -> tuple[Exclusion, ...]:
    found = []
    for _index, where, entry in _entries(source, data, EXCLUDE):
        _check_keys(where, entry, (*_EXCLUDE_KEYS, *_OPTIONAL_EXCLUDE, "reason"))
        reason = str(_text(where, entry, "reason", required=True))
        path = str(_text(where, entry, "path", required=True))
        function = _text(where, entry, "function", required=False) or "*"
        operator = _text(where, entry, "operator", required=False) or "*"
        found.append(Exclusion(path, reason, function, operator))
    return tuple(found)


def _no_duplicates(entries: Iterable[Entry]) -> None:
    seen: dict[tuple[str, str, str, str, int], Entry] = {}
    for entry in entries:
        key = (entry.path, entry.function, entry.operator, entry.snippet, entry.occurrence)
        if key in seen:
            raise TriageError(f"{entry.name}: occurrence: {entry.occurrence} names the mutant "
                              f"{seen[key].name} names already")
        seen[key] = entry


def parse(source: Path, text: str) -> Triage:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TriageError(f"{source}: invalid TOML: {exc}") from None
    unknown = sorted(set(data) - set(_TABLES))
    if unknown:
        raise TriageError(f"{source}: {unknown[0]}: unknown table (known: {', '.join(_TABLES)})")
    equivalents = _mutant_entries(source, data, EQUIVALENT)
    blind = _mutant_entries(source, data, BLIND)
    try:
        _no_duplicates((*equivalents, *blind))
    except TriageError as exc:
        raise TriageError(f"{source}: {exc}") from None
    return Triage(source, equivalents, _exclusions(source, data), blind)


def load(path: Path | None) -> Triage:
    """The triage file at `path`; an empty triage when there is none."""
    if path is None or not path.exists():
        return Triage(None)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TriageError(f"{path}: cannot read: {exc}") from None
    return parse(path, text)
