"""The baseline: known findings accepted for now, so that only new ones fail.

An entry is keyed by (rule, path, enclosing qualified name, normalised source line) with a
count, never by line number: inserting or deleting lines around a finding keeps it matched.
A finding beyond its key's count is new and fails; an entry no finding uses any more is stale.
The baseline only shrinks: `update` lowers counts and drops stale entries, never adds. The one
way to create it is to write it where no baseline file exists yet (`write_initial`).

A rule id is checked where the rules are known: a built-in one (the MESH prefix) when the
file is loaded, a team rule's (`[tool.harness] rules`) when it is compared with a scan's
configuration. An entry of a rule no longer registered is stale there, so shrinking the
baseline drops it.

File format (JSON, sorted for stable diffs):
    {"version": 1, "entries": [{"rule", "path", "symbol", "snippet", "count"}, …]}
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from invariants.scan.config import ConfigError
from invariants.scan.model import Finding, ScanConfig
from invariants.scan.problems import STALE_BASELINE, Problem
from invariants.scan.rules import UnknownRule, rule_ids, rules_of
from invariants.scan.team import RESERVED_PREFIX

FORMAT_VERSION = 1

Key = tuple[str, str, str, str]  # rule, path, symbol, normalised snippet


class BaselineError(ConfigError):
    """An unreadable or malformed baseline file: one line naming the file. A baseline is a
    setting's file, so it is a configuration error wherever it is read (exit 2)."""


def normalise_snippet(snippet: str) -> str:
    """Whitespace-insensitive: re-indenting or re-spacing a line keeps its key."""
    return " ".join(snippet.split())


def key_of(finding: Finding) -> Key:
    return (finding.rule, finding.path, finding.symbol, normalise_snippet(finding.snippet))


@dataclass(frozen=True, slots=True)
class Outcome:
    new: list[Finding]  # not covered by the baseline: these fail
    baselined: int  # covered
    stale: list[Problem]  # entries (or parts of counts) that nothing matched any more
    remaining: Counter[Key]  # what the baseline should shrink to


def load(path: Path) -> Counter[Key]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path}: baseline is not valid JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
        raise BaselineError(
            f"{path}: baseline must be an object with \"version\": {FORMAT_VERSION}"
        )
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise BaselineError(f"{path}: baseline key \"entries\" must be an array")
    counts: Counter[Key] = Counter()
    for index, entry in enumerate(entries):
        fields = ("rule", "path", "symbol", "snippet")
        if (
            not isinstance(entry, dict)
            or not all(isinstance(entry.get(name), str) for name in fields)
            or not isinstance(entry.get("count"), int)
            or isinstance(entry.get("count"), bool)
            or entry["count"] < 1
        ):
            raise BaselineError(
                f"{path}: baseline entries[{index}] needs string rule/path/symbol/snippet "
                "and a positive integer count"
            )
        rule = _rule_id(entry["rule"], f"{path}: baseline entries[{index}]")
        key = (rule, entry["path"], entry["symbol"], normalise_snippet(entry["snippet"]))
        counts[key] += entry["count"]
    return counts


def _rule_id(written: str, origin: str) -> str:
    """A built-in rule's id, checked; another id is a team rule's, checked by `compare`."""
    rule = written.strip().upper()
    if not rule:
        raise BaselineError(f"{origin}: no rule id")
    if rule.startswith(RESERVED_PREFIX):
        try:
            rule_ids([written], origin)
        except UnknownRule as exc:
            raise BaselineError(str(exc)) from None
    return rule


def compare(
    findings: Sequence[Finding],
    baseline: Counter[Key],
    config: ScanConfig,
    scanned_paths: Iterable[str],
) -> Outcome:
    """Match findings against the baseline with multiplicity, in (path, line) order."""
    budget = Counter(baseline)
    used: Counter[Key] = Counter()
    new: list[Finding] = []
    for finding in sorted(findings, key=lambda f: (f.path, f.line, f.column, f.rule)):
        key = key_of(finding)
        if budget[key] > 0:
            budget[key] -= 1
            used[key] += 1
        else:
            new.append(finding)
    # An entry can only be judged stale when its rule ran and its file was scanned; an entry
    # of a rule the configuration does not register is stale wherever it is.
    scanned = set(scanned_paths)
    known = {rule.id for rule in rules_of(config)}
    stale: list[Problem] = []
    remaining: Counter[Key] = Counter()
    for key, count in sorted(baseline.items()):
        rule, path, symbol, snippet = key
        where = f" in {symbol}" if symbol else ""
        if rule not in known:
            stale.append(
                Problem(path, 0, STALE_BASELINE,
                        f"stale baseline entry: {rule}{where} `{snippet}`: no such rule (neither "
                        "built in nor in [tool.harness] rules)")
            )
            continue
        if not config.enabled(rule) or path not in scanned:
            remaining[key] = count
            continue
        if used[key]:
            remaining[key] = used[key]
        left = count - used[key]
        if left > 0:
            stale.append(
                Problem(path, 0, STALE_BASELINE,
                        f"stale baseline entry: {rule}{where} `{snippet}` ({left} no longer found)")
            )
    return Outcome(new, len(findings) - len(new), stale, remaining)


def _document(counts: Counter[Key]) -> str:
    entries = [
        {"rule": rule, "path": path, "symbol": symbol, "snippet": snippet, "count": count}
        for (rule, path, symbol, snippet), count in sorted(counts.items())
        if count > 0
    ]
    return json.dumps({"version": FORMAT_VERSION, "entries": entries}, indent=2) + "\n"


def _write(path: Path, counts: Counter[Key]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Write then rename: an interrupted update never leaves half a baseline.
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".baseline-", suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(_document(counts))
    os.replace(temporary, path)


def write_initial(path: Path, findings: Iterable[Finding]) -> int:
    """Create the baseline from the current findings; refuses to overwrite an existing file."""
    if path.exists():
        raise BaselineError(f"{path}: baseline already exists; it can only shrink")
    counts = Counter(key_of(finding) for finding in findings)
    _write(path, counts)
    return sum(counts.values())


def shrink(path: Path, baseline: Counter[Key], outcome: Outcome) -> int:
    """Rewrite `path` without its stale entries; returns how many findings were removed."""
    # `remaining` never exceeds `baseline` per key, so nothing can be added here.
    shrunk = Counter({key: min(count, baseline[key]) for key, count in outcome.remaining.items()})
    _write(path, shrunk)
    return sum(baseline.values()) - sum(shrunk.values())
