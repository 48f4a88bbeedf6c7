"""The terminal summary of a harness run, built from the results items attach to reports.

It reads only the reports (never the run state), so under pytest-xdist the controller,
which runs no item itself, summarises what the workers did.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from invariants.scan.rules import RULES


@dataclass
class Summary:
    scanned_files: int = 0
    failing_files: int = 0
    rules: Counter[str] = field(default_factory=Counter)
    scan_errors: int = 0
    tree: dict[str, object] = field(default_factory=dict)
    # adapter -> (programs run, conventions broken): its conformance item
    conformance: dict[str, tuple[int, int]] = field(default_factory=dict)
    # adapter -> check -> verdict, in the order seen
    invariants: dict[str, dict[str, str]] = field(default_factory=dict)
    mutants: list[Mapping[str, object]] = field(default_factory=list)

    def add(self, facts: Mapping[str, object]) -> None:
        kind = facts.get("kind")
        rules = facts.get("rules")
        if isinstance(rules, Mapping):
            self.rules.update({str(k): int(v) for k, v in rules.items()})
        errors = facts.get("errors")
        if isinstance(errors, int):
            self.scan_errors += errors
        if kind == "scan":
            self.scanned_files += 1
            if rules or errors:
                self.failing_files += 1
        elif kind == "scan-tree":
            self.tree = dict(facts)
        elif kind == "conformance":
            self.conformance[str(facts["adapter"])] = (_count(facts, "programs"),
                                                       _count(facts, "broken"))
        elif kind == "invariant":
            verdicts = self.invariants.setdefault(str(facts["adapter"]), {})
            verdicts[str(facts["check"])] = str(facts["verdict"])
        elif kind == "mutant":
            self.mutants.append(facts)

    def empty(self) -> bool:
        return not (self.scanned_files or self.tree or self.conformance or self.invariants
                    or self.mutants)

    def lines(self) -> list[str]:
        out: list[str] = []
        if self.scanned_files or self.tree:
            out += self._scan_lines()
        for adapter, (programs, broken) in self.conformance.items():
            state = f"{broken} broken convention(s)" if broken else "conforms"
            out.append(f"adapter-check on {adapter}: {state} ({programs} program(s))")
        for adapter, verdicts in self.invariants.items():
            out.append(_invariant_line(adapter, verdicts))
        if self.mutants:
            out += self._mutant_lines()
        return out

    def _scan_lines(self) -> list[str]:
        total = sum(self.rules.values())
        head = f"scan: {self.scanned_files} file(s), {total} finding(s)"
        if self.failing_files:
            head += f" in {self.failing_files} file(s)"
        if self.scan_errors:
            head += f", {self.scan_errors} error(s)"
        tree = self.tree
        if tree:
            head += (f"; {tree.get('suppressed', 0)} suppressed, {tree.get('baselined', 0)} "
                     f"baselined, {tree.get('cached', 0)} of {tree.get('files', 0)} from cache, "
                     f"{tree.get('emit_sites', 0)} emit site(s)")
        lines = [head]
        for rule in RULES:
            if self.rules[rule]:
                lines.append(f"  {rule} {RULES[rule]}: {self.rules[rule]}")
        for rule in sorted(set(self.rules) - set(RULES)):  # the team's rules
            if self.rules[rule]:
                lines.append(f"  {rule}: {self.rules[rule]}")
        return lines

    def _mutant_lines(self) -> list[str]:
        killed = sum(1 for row in self.mutants if row.get("verdict") == "killed")
        lines = [f"kill matrix: {killed} of {len(self.mutants)} mutant(s) killed"]
        for row in self.mutants:
            lines.append(f"  {row.get('mutant')}: {row.get('verdict')} {row.get('detail', '')}"
                         .rstrip())
        return lines


def _count(facts: Mapping[str, object], key: str) -> int:
    value = facts.get(key)
    return value if isinstance(value, int) else 0


def _invariant_line(adapter: str, verdicts: Mapping[str, str]) -> str:
    passed = [check for check, verdict in verdicts.items() if verdict == "pass"]
    moot = [check for check, verdict in verdicts.items() if verdict == "not applicable"]
    failed = [f"{check} ({verdict})" for check, verdict in verdicts.items()
              if verdict not in ("pass", "not applicable")]
    line = f"invariants on {adapter}: {len(passed)} passed, {len(failed)} failed"
    if moot:
        line += f", {len(moot)} not applicable ({', '.join(moot)})"
    return line + (f": {', '.join(failed)}" if failed else "")
