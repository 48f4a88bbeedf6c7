"""The record every rule module fills in (one per rule, the way Fixit keeps a rule and its
examples together): identity, summary, options, checks and examples. Everything that lists
rules (the slug table, SARIF, the configuration keys, the examples-as-tests) reads these
records from the registry (`rules/__init__.py`), never a table of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from invariants.scan.model import FileReport, Finding, ScanConfig
from invariants.scan.options import Option
from invariants.scan.problems import Problem

if TYPE_CHECKING:  # the context imports libcst; the record itself needs only the type
    from invariants.scan.context import FileContext

# An invalid example: its source and the lines the rule must report, in order.
InvalidExample = tuple[str, tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class TreeResult:
    """What a whole-tree pass adds: findings, and problems for the scan's `errors`."""

    findings: list[Finding] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Rule:
    id: str  # "MESH001"
    slug: str  # "unguarded-failure-emit"
    summary: str  # one line, for SARIF and listings
    # Whether the rule concerns the file at all (test or production code), from its path and
    # the configuration; the tree is not built yet.
    applies: Callable[[FileContext], bool]
    check: Callable[[FileContext], None]
    valid: tuple[str, ...]
    invalid: tuple[InvalidExample, ...]
    options: tuple[Option, ...] = ()  # its `[tool.harness]` keys
    examples_are_tests: bool = False  # analyse the examples as test files
    # From the text alone: False when `check` cannot report anything in this file (the
    # names it looks for are absent). It must never say False where `check` would report:
    # a file no rule's check and no collector needs is never parsed by libcst.
    prefilter: Callable[[FileContext], bool] | None = None
    # Whether `check` reads libcst's tree (`ctx.module`, `ctx.calls`); False for a rule that
    # reads the text alone, or CPython's `ast` of it, and places findings with `report_at`.
    reads_tree: bool = True
    # Per-file facts for a whole-tree pass, run on every file while the rule is enabled
    # (whatever `applies` says), after every rule's `check`.
    collect: Callable[[FileContext], None] | None = None
    # From the text alone: does `collect` read this file's tree? None: it always does.
    # A file no rule applies to and no collector needs the tree of is never parsed by libcst.
    collect_reads_tree: Callable[[FileContext], bool] | None = None
    # Run once over every file's report; findings of a disabled rule are dropped later.
    tree_pass: Callable[[Sequence[FileReport], ScanConfig], TreeResult] | None = None
    # Tags a suppression of this rule must carry (`allow[MESH005] MEMO: reason`).
    suppression_tags: tuple[str, ...] = ()
