"""Inline suppressions: `# harness: allow[MESH005] MEMO: reason`.

Grammar (inside a comment): `harness: allow[RULE, …] [TAG:] reason`. A reason is required;
for a rule whose record lists `suppression_tags` (MESH005) the tag must be one of them. A
suppression silences the listed rules' findings whose first or last line carries the
comment. A malformed directive, and a listed (enabled) rule that silences nothing, are
reported as problems, so stale comments cannot pile up.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from invariants.scan.model import Finding, ScanConfig
from invariants.scan.problems import MALFORMED_SUPPRESSION, UNUSED_SUPPRESSION, Problem
from invariants.scan.rules import UnknownRule, registered, rule_ids

if TYPE_CHECKING:
    from invariants.scan.rules.spec import Rule

_MARKER = re.compile(r"#\s*harness\s*:\s*(?P<body>.*)$")
_ALLOW = re.compile(r"allow\[(?P<rules>[^\]]*)\]\s*(?P<rest>.*)$")
_TAG = re.compile(r"(?P<tag>[A-Z][A-Z0-9_]*)\s*:\s*(?P<reason>.*)$")


@dataclass(frozen=True, slots=True)
class Suppression:
    path: str
    line: int
    rules: tuple[str, ...]
    tag: str | None
    reason: str


def _comments(source: bytes) -> list[tuple[int, str]]:
    """(line, text) of every comment; a plain line scan when the file does not tokenize."""
    try:
        tokens = tokenize.tokenize(io.BytesIO(source).readline)
        return [(tok.start[0], tok.string) for tok in tokens if tok.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, ValueError):
        text = source.decode("utf-8", errors="replace")
        return [
            (number, line[line.index("#"):])
            for number, line in enumerate(text.splitlines(), start=1)
            if "#" in line
        ]


def parse_directive(
    path: str, line: int, comment: str, rules: Sequence[Rule] | None = None
) -> Suppression | Problem | None:
    """The suppression a comment states, a problem when it is malformed, None if it has none.
    `rules`: the rules it may name (default: the built-in ones; a scan's are `rules_of`)."""
    known = registered() if rules is None else rules
    marker = _MARKER.search(comment)
    if marker is None:
        return None

    def bad(why: str) -> Problem:
        return Problem(path, line, MALFORMED_SUPPRESSION, f"malformed suppression: {why}")

    allow = _ALLOW.match(marker.group("body").strip())
    if allow is None:
        return bad("expected 'harness: allow[RULE] reason'")
    try:
        listed = rule_ids(allow.group("rules").split(","), rules=known)
    except UnknownRule as exc:
        return bad(f"unknown rule id {exc.rule!r}")
    if not listed:
        return bad("no rule id in allow[...]")
    rest = allow.group("rest").strip()
    tagged = _TAG.match(rest)
    tag, reason = (tagged.group("tag"), tagged.group("reason").strip()) if tagged else (None, rest)
    for record in known:
        if record.suppression_tags and record.id in listed and tag not in record.suppression_tags:
            tags = ", ".join(record.suppression_tags)
            return bad(f"{record.id} needs a tag, one of {tags}: 'TAG: reason'")
    if not reason:
        return bad("a reason is required after the rule id (and tag)")
    return Suppression(path, line, listed, tag, reason)


def extract(
    path: str, source: bytes, rules: Sequence[Rule] | None = None
) -> tuple[list[Suppression], list[Problem]]:
    """Every suppression in `source`, and every malformed one as a problem (`rules`: the
    rules a directive may name, see `parse_directive`)."""
    if b"harness" not in source:  # the cheap prefilter: most files have no directive
        return [], []
    suppressions: list[Suppression] = []
    problems: list[Problem] = []
    for line, comment in _comments(source):
        parsed = parse_directive(path, line, comment, rules)
        if isinstance(parsed, Suppression):
            suppressions.append(parsed)
        elif isinstance(parsed, Problem):
            problems.append(parsed)
    return suppressions, problems


@dataclass(slots=True)
class Applied:
    kept: list[Finding]
    suppressed: int
    unused: list[Problem]


def apply(
    findings: Sequence[Finding], suppressions: Iterable[Suppression], config: ScanConfig
) -> Applied:
    """Drop suppressed findings; report each enabled rule of a suppression that matched nothing."""
    by_line: dict[tuple[str, int], list[Suppression]] = {}
    for item in suppressions:
        by_line.setdefault((item.path, item.line), []).append(item)
    used: set[tuple[str, int, str]] = set()
    kept: list[Finding] = []
    for finding in findings:
        matched = False
        for line in {finding.line, finding.end_line}:
            for item in by_line.get((finding.path, line), ()):
                if finding.rule in item.rules:
                    used.add((item.path, item.line, finding.rule))
                    matched = True
        if not matched:
            kept.append(finding)
    unused: list[Problem] = []
    for (path, line), items in sorted(by_line.items()):
        idle = [
            rule
            for item in items
            for rule in item.rules
            if config.enabled(rule) and (path, line, rule) not in used
        ]
        if idle:
            unused.append(
                Problem(path, line, UNUSED_SUPPRESSION,
                        f"unused suppression: no {', '.join(idle)} finding on this line")
            )
    return Applied(kept, len(findings) - len(kept), unused)
