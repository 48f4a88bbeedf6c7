"""The triage file, `harness-mutants.toml`: equivalent mutants and exclusions, each with a reason.

    [[equivalent]]                      # a mutant no behaviour can tell from the original
    path = "hub.py"                     # relative to the mutated package
    function = "Hub.intake"             # the enclosing definition, "<module>" at top level
    operator = "core/ReplaceComparisonOperator_Lt_LtE"
    snippet = "if depth < self.watermark:"   # the mutated line; whitespace is ignored
    reason = "depth never equals the watermark here: intake sheds at the watermark"

    [[exclude]]                         # code no check is meant to observe
    path = "cli.py"                     # globs; function and operator default to "*"
    function = "*"
    reason = "the command-line front end, never behind the adapter"

Entries name a mutant by what it changes, never by a line number, like the scan baseline.
An entry without a reason, an unknown key or a wrong type is an error naming the file, the
entry and the key; an equivalent entry that matches no mutant any more is reported stale.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from invariants.mutants.score.engine import EngineMutant, matches, normalise
from invariants.user_errors import UserError

FILENAME = "harness-mutants.toml"
_EQUIVALENT_KEYS = ("path", "function", "operator", "snippet")
_EXCLUDE_KEYS = ("path",)
_OPTIONAL_EXCLUDE = ("function", "operator")


class TriageError(UserError, ValueError):
    """A malformed triage file: one line naming the file, the entry and the key."""


@dataclass(frozen=True)
class Equivalent:
    path: str
    function: str
    operator: str
    snippet: str  # normalised
    reason: str

    def matches(self, mutant: EngineMutant) -> bool:
        return (mutant.path, mutant.function, mutant.operator, mutant.snippet) == (
            self.path, self.function, self.operator, self.snippet
        )

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "function": self.function, "operator": self.operator,
                "snippet": self.snippet, "reason": self.reason}


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
    equivalents: tuple[Equivalent, ...] = ()
    exclusions: tuple[Exclusion, ...] = ()

    def equivalent(self, mutant: EngineMutant) -> Equivalent | None:
        return next((e for e in self.equivalents if e.matches(mutant)), None)

    def excluded(self, mutant: EngineMutant) -> Exclusion | None:
        return next((e for e in self.exclusions if e.matches(mutant)), None)

    def stale(
        self, mutants: Iterable[EngineMutant], files: Iterable[str] | None = None
    ) -> list[Equivalent]:
        """Equivalent entries that name no mutant the engine makes now. With `files` (the
        files the run enumerated), only the entries of those files are judged: an entry of
        a file the run did not mutate (`--mutate` one module) is not stale."""
        keys = {(m.path, m.function, m.operator, m.snippet) for m in mutants}
        judged = None if files is None else set(files)
        return [
            e for e in self.equivalents
            if (judged is None or e.path in judged)
            and (e.path, e.function, e.operator, e.snippet) not in keys
        ]

    def with_exclusions(self, extra: Sequence[Exclusion]) -> Triage:
        return Triage(self.source, self.equivalents, (*extra, *self.exclusions))


def _text(where: str, entry: dict[str, object], key: str, *, required: bool) -> str | None:
    value = entry.get(key)
    if value is None:
        if required:
            raise TriageError(f"{where}: {key}: missing")
        return None
    if not isinstance(value, str) or not value.strip():
        raise TriageError(f"{where}: {key}: expected a non-empty string, got {value!r}")
    return value.strip()


def _entries(
    source: Path, data: dict[str, object], table: str
) -> list[tuple[str, dict[str, object]]]:
    raw = data.get(table, [])
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise TriageError(f"{source}: {table}: expected an array of tables ([[{table}]])")
    return [(f"{source}: [[{table}]] #{index}", item) for index, item in enumerate(raw, start=1)]


def _check_keys(where: str, entry: dict[str, object], allowed: Iterable[str]) -> None:
    known = set(allowed) | {"reason"}
    unknown = sorted(set(entry) - known)
    if unknown:
        raise TriageError(f"{where}: {unknown[0]}: unknown key (known: {', '.join(sorted(known))})")


def parse(source: Path, text: str) -> Triage:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TriageError(f"{source}: invalid TOML: {exc}") from None
    unknown = sorted(set(data) - {"equivalent", "exclude"})
    if unknown:
        raise TriageError(f"{source}: {unknown[0]}: unknown table (known: equivalent, exclude)")
    equivalents = []
    for where, entry in _entries(source, data, "equivalent"):
        _check_keys(where, entry, _EQUIVALENT_KEYS)
        reason = str(_text(where, entry, "reason", required=True))
        fields = [_text(where, entry, key, required=True) for key in _EQUIVALENT_KEYS]
        path, function, operator, snippet = (str(f) for f in fields)
        equivalents.append(Equivalent(path, function, operator, normalise(snippet), reason))
    exclusions = []
    for where, entry in _entries(source, data, "exclude"):
        _check_keys(where, entry, (*_EXCLUDE_KEYS, *_OPTIONAL_EXCLUDE))
        reason = str(_text(where, entry, "reason", required=True))
        path = str(_text(where, entry, "path", required=True))
        function = _text(where, entry, "function", required=False) or "*"
        operator = _text(where, entry, "operator", required=False) or "*"
        exclusions.append(Exclusion(path, reason, function, operator))
    return Triage(source, tuple(equivalents), tuple(exclusions))


def load(path: Path | None) -> Triage:
    """The triage file at `path`; an empty triage when there is none."""
    if path is None or not path.exists():
        return Triage(None)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TriageError(f"{path}: cannot read: {exc}") from None
    return parse(path, text)
