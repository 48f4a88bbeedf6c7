"""docs/adapter.md stays true: a section for every convention adapter-check names, the
adapter-check output it shows is what the example gives, the files it names exist."""

from __future__ import annotations

import re
from pathlib import Path

import tinymesh_repo

DOC = tinymesh_repo.ROOT / "docs" / "adapter.md"
CONFORMANCE = tinymesh_repo.ROOT / "invariants" / "conformance"


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^a-z0-9 -]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(text: str) -> set[str]:
    return {_slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, flags=re.MULTILINE)}


def test_every_convention_adapter_check_names_has_its_section() -> None:
    names = set()
    for source in CONFORMANCE.glob("*.py"):
        names |= set(re.findall(r'Broken\(\s*"([a-z-]+)"', source.read_text()))
    assert names >= {"event-order", "intake", "legs", "grain-calls", "subscribe", "posts",
                     "capabilities", "stop", "quiescence"}
    missing = names - _anchors(DOC.read_text())
    assert not missing, f"docs/adapter.md has no section for {sorted(missing)}"


def test_the_slug_rule_is_githubs() -> None:
    assert _slug("Grain calls") == "grain-calls"
    assert _slug("Figures: `[tool.harness.params]`") == "figures-toolharnessparams"


def test_the_adapter_check_output_shown_is_the_examples(tmp_path: Path) -> None:
    text = DOC.read_text()
    shown = text.split("On TinyMesh:\n\n```\n", 1)[1].split("```", 1)[0]
    result = tinymesh_repo.run(tinymesh_repo.copy_to(tmp_path), "harness", "adapter-check")
    assert result.stdout == shown


def test_the_files_it_names_exist_and_the_example_is_minimal() -> None:
    text = DOC.read_text()
    for path in set(re.findall(r"`((?:examples|tests|reference_impl|invariants)/[\w./-]+)`",
                                text)):
        assert (tinymesh_repo.ROOT / path).exists(), path
    adapter = tinymesh_repo.EXAMPLE / "src" / "tinymesh" / "harness_adapter.py"
    assert len(adapter.read_text().splitlines()) <= 170  # "about 150 lines"


def test_every_event_kind_and_field_is_documented() -> None:
    from dataclasses import fields

    from invariants.trace import EventKind, TraceEvent

    text = DOC.read_text()
    glance = text.split("## Every event at a glance", 1)[1].split("\n## ", 1)[0]
    missing = [k.name for k in EventKind if f"`{k.name}`" not in glance]
    assert not missing, f"not in the table of events: {missing}"
    table = text.split("## Fields", 1)[1].split("\n## ", 1)[0]
    undocumented = [f.name for f in fields(TraceEvent) if f"`{f.name}`" not in table]
    assert not undocumented, f"not in the table of fields: {undocumented}"


def test_every_link_of_the_two_guides_lands_on_a_section() -> None:
    docs = DOC.parent
    for guide in ("adapter.md", "adopting.md"):
        text = (docs / guide).read_text()
        for target, anchor in re.findall(r"\]\(([\w.-]*\.md)?#([\w-]+)\)", text):
            page = (docs / (target or guide)).read_text()
            assert anchor in _anchors(page), f"{guide}: {target or guide}#{anchor}"
