"""Every field of a finding: position, end line, enclosing symbol, snippet, message."""

from __future__ import annotations

import textwrap
from pathlib import Path

from invariants.scan.engine import analyze_source
from invariants.scan.model import RuleOptions, ScanConfig
from invariants.scan.runner import scan

SOURCE = textwrap.dedent(
    """\
    import asyncio

    ROUTES = {
        "a": 1,
    }


    class Node:
        pending = []

        class Inner:
            def start(self, stream):
                def later():
                    stream.subscribe(
                        self.on_item,
                    )
                return later


    def route(d):
        if type(d.message).can_be_ignored:
            return
    """
)


def test_fields_of_each_finding() -> None:
    report = analyze_source("pkg/node.py", SOURCE.encode(), ScanConfig(), is_test=False)
    got = {
        (f.rule, f.line, f.column, f.end_line, f.symbol, f.snippet) for f in report.findings
    }
    assert got == {
        ("MESH005", 3, 1, 5, "", "ROUTES = {"),
        ("MESH005", 9, 5, 9, "Node", "pending = []"),
        ("MESH004", 14, 17, 16, "Node.Inner.start.later", "stream.subscribe("),
        ("MESH002", 21, 8, 21, "route", "if type(d.message).can_be_ignored:"),
    }
    messages = {f.rule: f.message for f in report.findings}
    assert "serialized text, not a DeliveryFailure" in messages["MESH002"]
    assert "may_answer()" in messages["MESH002"]
    assert "subscribe()" in messages["MESH004"]
    assert "ROUTES" in messages["MESH005"] or "pending" in messages["MESH005"]


def test_form_feeds_and_crlf_do_not_shift_lines_or_snippets() -> None:
    source = b"import os\r\n\x0c\r\n# section\x0c break\r\nCACHE = {}\r\n"
    report = analyze_source("pkg/ff.py", source, ScanConfig(), is_test=False)
    [finding] = report.findings
    assert (finding.line, finding.snippet) == (4, "CACHE = {}")


def test_messages_speak_the_configured_vocabulary(tmp_path: Path) -> None:
    names = RuleOptions({"emit_constructors": ("Bounce",), "guard_functions": ("can_reply",),
                         "exemption_types": ("Bounce",)})
    source = "def reply(d):\n    return Bounce(d.id)\n"
    (tmp_path / "m.py").write_text(source, encoding="utf-8")
    [ours] = scan(["m.py"], ScanConfig(options=names), root=tmp_path, cache_dir=None).findings
    defaults = scan(["m.py"], ScanConfig(), root=tmp_path, cache_dir=None).findings
    assert ours.message.startswith("Bounce built without a can_reply() check")
    assert defaults == []  # the control: by default a Bounce is no failure answer at all
    route = SOURCE.replace("can_be_ignored", "kind")
    report = analyze_source("pkg/node.py", route.encode(), ScanConfig(options=RuleOptions({
        **dict(names.items()), "exemption_attributes": ("kind",)})), is_test=False)
    [mesh002] = [f for f in report.findings if f.rule == "MESH002"]
    assert "not a Bounce" in mesh002.message and "call can_reply() on" in mesh002.message
