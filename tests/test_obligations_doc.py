"""docs/dynamic-invariants.md holds each checker's obligations; the docstrings point there.

Under each `### INVn —` heading a paragraph opening `**Obligations**` names the monitor's
table (`<Monitor>.obligations`) and the capabilities the invariant needs (`the invariant
needs `x``, or `needs no adapter capability`). The bullet list after it has one bullet per
obligation, opening with its exact name in backticks, in the order of the monitor's
`obligations` (the order reports list them in); each says what it counts (`Counted per`),
what it reads (`Reads`) and, for an obligation an adapter's capabilities take out,
`Not applicable without `x`` (`obligation_needs`) or `not applicable with `x``
(`obligation_waived_by`). The module table near the top lists every module under
`invariants/checks/`. A doctored copy of the doc (a bullet dropped, a name misspelt, a
name the code lacks, a bullet moved to another section, a capability left out, a module
row dropped) fails the same checks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from invariants.checks import CHECKS
from invariants.checks.monitor import Monitor

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "dynamic-invariants.md"
CHECKS_DIR = ROOT / "invariants" / "checks"
INTRO = "**Obligations**"
_HEADING = re.compile(r"^#{1,6} ")
_INV_HEADING = re.compile(r"^### (INV\d+) — ")
_NAME = re.compile(r"^`([^`]+)`")
_NOT_APPLICABLE = re.compile(r"not applicable (without|with) `(\w+)`", re.IGNORECASE)
_NEEDS = re.compile(r"the invariant needs `(\w+)`")


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def inv_sections(text: str) -> dict[str, list[list[str]]]:
    """Check id -> the bodies (lines) of its `### INVn —` sections, each up to the next
    heading of any level (a `#` line inside a code fence is no heading)."""
    sections: dict[str, list[list[str]]] = {}
    current: list[str] | None = None
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and _HEADING.match(line):
            match = _INV_HEADING.match(line)
            current = None
            if match:
                current = []
                sections.setdefault(match.group(1), []).append(current)
            continue
        if current is not None:
            current.append(line)
    return sections


def section_lines(text: str, check_id: str) -> list[str]:
    """The body of `check_id`'s one section."""
    (body,) = inv_sections(text)[check_id]
    return body


def obligation_block(body: list[str]) -> tuple[str, list[str]] | None:
    """The `**Obligations**` paragraph and the bullets after it, whitespace collapsed."""
    starts = [i for i, line in enumerate(body) if line.startswith(INTRO)]
    if len(starts) != 1:
        return None
    intro: list[str] = []
    bullets: list[list[str]] = []
    for line in body[starts[0]:]:
        if line.startswith("* "):
            bullets.append([line[2:]])
        elif not line.strip():
            if bullets:
                break
        elif bullets and line.startswith("  "):
            bullets[-1].append(line)
        elif bullets:
            break
        else:
            intro.append(line)
    return " ".join(" ".join(intro).split()), [" ".join(" ".join(b).split()) for b in bullets]


def problems(text: str, check_id: str, monitor: type[Monitor]) -> list[str]:
    """What the doc's section of `check_id` gets wrong about `monitor` (empty: nothing)."""
    bodies = inv_sections(text).get(check_id, [])
    if len(bodies) != 1:
        return [f"{len(bodies)} '### {check_id} — ' headings, not one"]
    (body,) = bodies
    found: list[str] = []
    section = " ".join(" ".join(body).split())
    names = list(monitor.obligations)
    found.extend(
        f"{check_id}: obligation {name!r} is not named in its section"
        for name in names if name not in section
    )
    block = obligation_block(body)
    if block is None:
        return [*found, f"{check_id}: no single paragraph opening {INTRO}"]
    intro, bullets = block
    table = f"`{monitor.__name__}.obligations`"
    if table not in intro:
        found.append(f"{check_id}: the {INTRO} paragraph does not name {table}")
    needs = {capability.value for capability in monitor.needs}
    said = set(_NEEDS.findall(intro))
    if said != needs or (not needs) != ("needs no adapter capability" in intro):
        found.append(f"{check_id}: the {INTRO} paragraph says the invariant needs "
                     f"{sorted(said) or 'nothing'}, the monitor {sorted(needs) or 'nothing'}")
    listed = [m.group(1) if (m := _NAME.match(bullet)) else bullet[:40] for bullet in bullets]
    if listed != names:
        found.append(f"{check_id}: the bullets list {listed}, the monitor's obligations are "
                     f"{names}")
    for name, bullet in zip(listed, bullets, strict=True):
        for part in ("Counted per", "Reads"):
            if part not in bullet:
                found.append(f"{check_id}: {name!r} says nothing of {part!r}")
        stated = {(how.lower(), capability) for how, capability in _NOT_APPLICABLE.findall(bullet)}
        expected = set()
        if name in monitor.obligation_needs:
            expected.add(("without", monitor.obligation_needs[name].value))
        if name in monitor.obligation_waived_by:
            expected.add(("with", monitor.obligation_waived_by[name][0].value))
        if stated != expected:
            found.append(f"{check_id}: {name!r} is said to be not applicable "
                         f"{sorted(stated) or 'never'}, the monitor: {sorted(expected) or 'never'}")
    return found


def table_problems(text: str) -> list[str]:
    """The modules under invariants/checks/ the module table leaves out, and the paths in
    it that are not modules there."""
    named = {
        path
        for line in text.splitlines() if line.startswith("| `invariants/checks/")
        for path in re.findall(r"`(invariants/checks/[^`]+)`", line.split("|")[1])
    }
    modules = {f"invariants/checks/{p.name}" for p in CHECKS_DIR.glob("*.py")}
    return ([f"the module table leaves out {path}" for path in sorted(modules - named)]
            + [f"the module table names {path}, not a module" for path in sorted(named - modules)])


@pytest.mark.parametrize("check_id", sorted(CHECKS))
def test_the_section_lists_the_checkers_obligations(check_id: str) -> None:
    assert problems(doc_text(), check_id, CHECKS[check_id]) == []


def test_every_check_has_its_section_and_no_other_is_headed() -> None:
    assert set(inv_sections(doc_text())) == set(CHECKS)


def test_the_module_table_lists_the_checker_modules() -> None:
    assert table_problems(doc_text()) == []


def _doctored(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"the control's anchor {old!r} is not in the doc once"
    return text.replace(old, new)


def _resubbed(text: str, pattern: str, new: str) -> str:
    """`text` with the one match of `pattern` (which may span a line break) replaced."""
    doctored, count = re.subn(pattern, new, text)
    assert count == 1, f"the control's pattern {pattern!r} matches {count} times, not once"
    return doctored


def _bullet(text: str, name: str) -> str:
    """The whole bullet of obligation `name` (its line and the indented ones after it)."""
    match = re.search(rf"^\* `{re.escape(name)}`.*\n(?:  .*\n)*", text, re.MULTILINE)
    assert match is not None, name
    return match.group(0)


@pytest.mark.parametrize("check_id, doctor", [
    ("INV4", lambda t: _doctored(t, _bullet(t, "retry delays timed"), "")),
    ("INV3", lambda t: _doctored(t, "* `blocked turns held`", "* `blocked turn held`")),
    ("INV6", lambda t: _doctored(t, "* `drops checked against their key`",
                                 "* `drops checked against the key`")),
    ("INV1", lambda t: _doctored(
        t, _bullet(t, "failed DeliveryFailures left unanswered"),
        _bullet(t, "failed DeliveryFailures left unanswered")
        + "* `answers counted twice`: Counted per answer. Reads `FAILURE_EMITTED`.\n")),
    ("INV4", lambda t: _doctored(t, _bullet(t, "aggregate_next faults honoured"), _resubbed(
        _bullet(t, "aggregate_next faults honoured"),
        r" Not\s+applicable\s+without\s+`aggregate_faults`\.", ""))),
    ("INV2", lambda t: _resubbed(t, r"the\s+invariant\s+needs\s+`subscribe`",
                                 "the invariant needs no adapter capability")),
    ("INV7", lambda t: _doctored(t, "`AnswerOnce.obligations`", "`AnswerOnce`")),
])
def test_a_doctored_doc_fails(check_id: str, doctor: Callable[[str], str]) -> None:
    text = doc_text()
    assert problems(text, check_id, CHECKS[check_id]) == []
    assert problems(doctor(text), check_id, CHECKS[check_id]) != []


def test_a_bullet_moved_to_another_section_fails_both() -> None:
    text = doc_text()
    bullet = _bullet(text, "anonymous posts rejected once and dropped")
    moved = _doctored(text, bullet, "")
    moved = _doctored(moved, _bullet(moved, "closed subscriptions watched"),
                      _bullet(moved, "closed subscriptions watched") + bullet)
    assert problems(moved, "INV1", CHECKS["INV1"]) != []
    assert problems(moved, "INV2", CHECKS["INV2"]) != []


def test_a_name_missing_from_its_section_is_reported() -> None:
    """With a name misspelt wherever the section has it, the word-for-word check says so."""
    text = doc_text()
    body = "\n".join(section_lines(text, "INV5"))
    doctored_body = body.replace("requested stops completed", "requested stop completed")
    assert doctored_body != body
    found = problems(text.replace(body, doctored_body), "INV5", CHECKS["INV5"])
    assert any("is not named in its section" in problem for problem in found)


def test_a_dropped_module_row_fails() -> None:
    text = doc_text()
    row = next(line for line in text.splitlines()
               if line.startswith("| `invariants/checks/inv4_faults.py`"))
    assert table_problems(_doctored(text, row + "\n", "")) != []
