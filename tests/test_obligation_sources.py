"""docs/dynamic-invariants.md, "Where each obligation comes from": where each obligation of
the built-in checkers comes from.

The section's table has one row per obligation (`| INVn | `name` | source |`), none missing,
none extra, none twice. Each source is one of four forms: `seed <file>: "<quote>"`, the quote
word for word in that seed file (whitespace normalised, since the seed files wrap their
lines); `policy: `key`[, `key`] (default: ...)`, every key a field of `CheckParams`;
`policy, no key yet: <the design>`; or `the mesh's account: <why>`. A doctored copy of the doc
(a row dropped or repeated, a sentence misquoted, a file that is no seed, an unknown key, a
source of no known form) fails the same checks.

The seed files live beside the project (`../shared/seeds/`, SPEC.md): where they are absent
the quotes cannot be read against them and that one test skips, saying so; every other check,
and the controls of the quote check itself (against the quotes' own text), still run.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import NamedTuple

import pytest

from invariants.checks import CHECK_RECORDS, CheckParams

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "dynamic-invariants.md"
SEEDS = ROOT.parent / "shared" / "seeds"
HEADING = "## Where each obligation comes from"

_ROW = re.compile(r"^\| (INV\d+) \| `([^`]+)` \| (.+) \|$")
_SEED = re.compile(r'^seed (\d{3}_[0-9a-f]{16}\.txt): "(.+)"$')
_POLICY = re.compile(r"^policy: (`\w+`(?:, `\w+`)*) \(default: .+\)$")
_NO_KEY = re.compile(r"^policy, no key yet: \S.*$")
_ACCOUNT = re.compile(r"^the mesh's account: \S.*$")


class Row(NamedTuple):
    check_id: str
    obligation: str
    source: str


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def section(text: str) -> list[str]:
    """The lines of the one section under HEADING, up to the next `## ` heading."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line == HEADING]
    assert len(starts) == 1, f"{len(starts)} '{HEADING}' headings, not one"
    body: list[str] = []
    for line in lines[starts[0] + 1:]:
        if line.startswith("## "):
            break
        body.append(line)
    return body


def rows(text: str) -> tuple[list[Row], list[str]]:
    """The table's rows, and the table lines that are no row of the expected shape."""
    found: list[Row] = []
    unread: list[str] = []
    for line in section(text):
        if not line.startswith("|") or line.startswith(("| invariant |", "|---")):
            continue
        match = _ROW.match(line)
        if match is None or "|" in match.group(3):
            unread.append(line)
        else:
            found.append(Row(*match.groups()))
    return found, unread


def expected() -> set[tuple[str, str]]:
    """(check id, obligation) of every built-in checker."""
    return {(record.id, name) for record in CHECK_RECORDS if record.id.startswith("INV")
            for name in record.monitor.obligations}


def row_problems(text: str) -> list[str]:
    """Obligations with no row, rows of no obligation, rows twice, lines not read."""
    found, unread = rows(text)
    listed = Counter((row.check_id, row.obligation) for row in found)
    wanted = expected()
    return (
        [f"no row for {cid} {name!r}" for cid, name in sorted(wanted - set(listed))]
        + [f"a row for {cid} {name!r}, which is no obligation" for cid, name
           in sorted(set(listed) - wanted)]
        + [f"{count} rows for {cid} {name!r}" for (cid, name), count in sorted(listed.items())
           if count > 1]
        + [f"not a row of the table: {line!r}" for line in unread]
    )


def form_problems(text: str) -> list[str]:
    """Sources of no known form, and policy keys that are not `CheckParams` fields."""
    keys = {each.name for each in fields(CheckParams)}
    found: list[str] = []
    for row in rows(text)[0]:
        policy = _POLICY.match(row.source)
        if policy is not None:
            found.extend(f"{row.check_id} {row.obligation!r}: {key!r} is no CheckParams field"
                         for key in re.findall(r"`(\w+)`", policy.group(1)) if key not in keys)
        elif not any(form.match(row.source) for form in (_SEED, _NO_KEY, _ACCOUNT)):
            found.append(f"{row.check_id} {row.obligation!r}: a source of no known form: "
                         f"{row.source!r}")
    return found


def _normal(text: str) -> str:
    return " ".join(text.split())


def cited(text: str) -> list[tuple[Row, str, str]]:
    """Each seed row with the file it cites and its quote."""
    return [(row, match.group(1), match.group(2)) for row in rows(text)[0]
            if (match := _SEED.match(row.source)) is not None]


def quote_problems(text: str, seeds: Mapping[str, str]) -> list[str]:
    """Seed rows citing a file that is no seed, or quoting what their file does not say;
    `seeds` maps each seed file's name to its text."""
    normal = {name: _normal(body) for name, body in seeds.items()}
    found: list[str] = []
    for row, name, quote in cited(text):
        if name not in normal:
            found.append(f"{row.check_id} {row.obligation!r} cites {name}, not a seed file")
        elif _normal(quote) not in normal[name]:
            found.append(f"{row.check_id} {row.obligation!r}: {name} does not say {quote!r}")
    return found


def seed_files() -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(SEEDS.glob("*.txt"))}


def quoted_only(text: str) -> dict[str, str]:
    """Stand-in seeds that say exactly what the doc quotes from each: the quote check's own
    controls need no seed files."""
    by_file: dict[str, list[str]] = {}
    for _row, name, quote in cited(text):
        by_file.setdefault(name, []).append(quote)
    return {name: "\n".join(quotes) for name, quotes in by_file.items()}


def test_one_row_per_obligation_of_every_checker() -> None:
    assert row_problems(doc_text()) == []
    assert len(rows(doc_text())[0]) == len(expected())


def test_every_source_has_a_known_form_and_every_key_is_a_param() -> None:
    assert form_problems(doc_text()) == []


def test_every_quote_is_in_the_seed_it_cites() -> None:
    seeds = seed_files()
    if not seeds:
        pytest.skip(f"no seed files at {SEEDS}: the quotes cannot be read against them")
    assert quote_problems(doc_text(), seeds) == []


def test_the_section_sits_after_the_invariants() -> None:
    text = doc_text()
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    at = headings.index(HEADING)
    assert headings[at - 1] == "## The invariants"
    assert headings[at + 1].startswith("## Verdicts carry their evidence")


def _doctored(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"the control's anchor {old!r} is not in the doc once"
    return text.replace(old, new)


def _row_line(text: str, obligation: str) -> str:
    (line,) = [each for each in section(text) if f"| `{obligation}` |" in each]
    return line


@pytest.mark.parametrize("doctor", [
    pytest.param(lambda t: _doctored(t, _row_line(t, "retry delays timed") + "\n", ""),
                 id="row dropped"),
    pytest.param(lambda t: _doctored(t, _row_line(t, "blocked turns held"),
                                     _row_line(t, "blocked turns held") + "\n"
                                     + _row_line(t, "blocked turns held")),
                 id="row twice"),
    pytest.param(lambda t: _doctored(t, "| `drops checked against their key` |",
                                     "| `drops checked against the key` |"),
                 id="name misspelt"),
    pytest.param(lambda t: _doctored(t, "| INV3 | `blocked turns held` |",
                                     "| INV4 | `blocked turns held` |"),
                 id="row under another invariant"),
    pytest.param(lambda t: _doctored(t, _row_line(t, "blocked turns held"),
                                     _row_line(t, "blocked turns held").replace(
                                         " | the mesh's", " | the | mesh's")),
                 id="row with a stray cell"),
])
def test_a_doctored_table_fails_the_row_check(doctor: Callable[[str], str]) -> None:
    text = doc_text()
    assert row_problems(text) == []
    assert row_problems(doctor(text)) != []


@pytest.mark.parametrize("doctor", [
    pytest.param(lambda t: _doctored(t, "policy: `breaker_cooldown_ms` (default:",
                                     "policy: `breaker_cooldown` (default:"),
                 id="unknown key"),
    pytest.param(lambda t: _doctored(t, "`ordered_routes`, `order_across_classes` (default:",
                                     "`ordered_routes`, `order_across_class` (default:"),
                 id="second key unknown"),
    pytest.param(lambda t: _doctored(t, "policy: `breaker_windows` (default:",
                                     "policy: breaker_windows (default:"),
                 id="key not in backticks"),
    pytest.param(lambda t: _doctored(t, "| the mesh's account: the `block_hub`",
                                     "| conformance: the `block_hub`"),
                 id="source of no known form"),
])
def test_a_doctored_table_fails_the_form_check(doctor: Callable[[str], str]) -> None:
    text = doc_text()
    assert form_problems(text) == []
    assert form_problems(doctor(text)) != []


_QUOTE_DOCTORS = [
    pytest.param(lambda t: _doctored(t, '"cancelled token: no hold"',
                                     '"cancelled token: no wait"'), id="misquoted"),
    pytest.param(lambda t: _doctored(
        t, 'seed 001_4b2e7663ebdb701f.txt: "cancelled token: no hold"',
        'seed 002_4b2e7663ebdb701f.txt: "cancelled token: no hold"'), id="no such seed"),
    pytest.param(lambda t: _doctored(
        t, 'seed 001_4b2e7663ebdb701f.txt: "cancelled token: no hold"',
        'seed 000_d256eee1d7a2b377.txt: "cancelled token: no hold"'), id="another seed's"),
]


@pytest.mark.parametrize("doctor", _QUOTE_DOCTORS)
def test_a_doctored_quote_fails_against_the_seeds(doctor: Callable[[str], str]) -> None:
    seeds = seed_files()
    if not seeds:
        pytest.skip(f"no seed files at {SEEDS}: the quotes cannot be read against them")
    text = doc_text()
    assert quote_problems(text, seeds) == []
    assert quote_problems(doctor(text), seeds) != []


@pytest.mark.parametrize("doctor", _QUOTE_DOCTORS)
def test_a_doctored_quote_fails_against_what_the_doc_quotes(doctor: Callable[[str], str]) -> None:
    text = doc_text()
    stand_in = quoted_only(text)
    assert quote_problems(text, stand_in) == []
    assert quote_problems(doctor(text), stand_in) != []


def test_line_breaks_in_a_seed_do_not_hide_a_quote() -> None:
    """The seeds wrap their lines: a quote across a line break is still found."""
    row = '| INV5 | `stops given up before Active not held` | seed 001_4b2e7663ebdb701f.txt: ' \
        '"cancelled token: no hold" |'
    text = f"{HEADING}\n\n| invariant | obligation | source |\n|---|---|---|\n{row}\n"
    seeds = {"001_4b2e7663ebdb701f.txt": "test\tcancelled\n  token:   no hold"}
    assert quote_problems(text, seeds) == []
    assert quote_problems(text, {"001_4b2e7663ebdb701f.txt": "cancelled token: no"}) != []
