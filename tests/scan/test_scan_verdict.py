"""MESH000 is the running interpreter's verdict: a file is a parse error exactly when
`compile(source, path, "exec", dont_inherit=True)` rejects it, with CPython's message and
position. A file CPython accepts that libcst (or its screens) refuses is "not analysed", a
scan error, never a finding. CPython is the oracle here; nothing is ever executed."""

from __future__ import annotations

import json
import random
import sysconfig
import warnings
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings

from invariants.scan.engine import analyze_source
from invariants.scan.model import FileReport, ScanConfig

CONFIG = ScanConfig()


def analyze(source: bytes) -> FileReport:
    return analyze_source("pkg/mod.py", source, CONFIG, is_test=False)


def cpython(source: bytes) -> SyntaxError | ValueError | None:
    """The oracle: what compile() says (warnings are never errors)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(source, "pkg/mod.py", "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            return exc
    return None


def mesh000(report: FileReport) -> list[str]:
    return [f.message for f in report.findings if f.rule == "MESH000"]


def agrees(source: bytes) -> bool:
    """MESH000 exactly when CPython rejects; else analysed or "not analysed", no MESH000."""
    rejected = cpython(source) is not None
    report = analyze(source)
    if rejected:
        return len(mesh000(report)) == 1 and not report.parsed
    return mesh000(report) == []


# -- explicit shapes ------------------------------------------------------------------------

ACCEPTED_BUT_NOT_BY_LIBCST = {
    "tab-after-spaces indentation": b"if 1:\n if 1:\n\t x\n y\n",
    "invalid UTF-8 in a comment": b"x = 1  # \xff\xfe\n",
    "coding comment after a lone CR": b"#\rx = 1 # coding=e\n",
}


@pytest.mark.parametrize(
    "source", ACCEPTED_BUT_NOT_BY_LIBCST.values(), ids=list(ACCEPTED_BUT_NOT_BY_LIBCST)
)
def test_accepted_by_cpython_is_never_mesh000(source: bytes) -> None:
    assert cpython(source) is None
    report = analyze(source)
    assert mesh000(report) == []
    if not report.parsed:  # libcst refused it: a scan error says so
        [problem] = report.problems
        assert problem.kind == "not-analysed" and problem.message.startswith("not analysed: ")


def test_a_file_cpython_accepts_is_analysed_when_libcst_can_read_it() -> None:
    # invalid UTF-8 in a comment and a lone CR: the rules still run on the rest
    report = analyze(b"#\rCACHE = {}  # \xff\n")
    assert report.parsed and [(f.rule, f.line) for f in report.findings] == [("MESH005", 2)]


REJECTED = {
    "break outside loop": (b"x = 1\nbreak\n", "'break' outside loop", 2, 1),
    "nonlocal at module level": (b"nonlocal x\n", "nonlocal declaration not allowed", 1, 1),
    "duplicate argument": (b"def f(a, a):\n    pass\n", "duplicate argument 'a'", 1, 10),
    "late __future__": (b"x = 1\nfrom __future__ import annotations\n", "__future__", 2, 1),
    "unknown __future__": (b"from __future__ import braces\n", "not a chance", 1, 1),
    "bare starred": (b"*a\n", "starred", 1, 1),
    "3.12-only syntax": (b"type X = int\n", "invalid syntax", 1, 6),
    "two BOMs": (b"\xef\xbb\xbf\xef\xbb\xbfx = 1\n", "U+FEFF", 1, 1),
    "bad named escape": (b"s = '\\N'\n", "unicodeescape", 1, 9),
    "backslash continuation at EOF": (b"x = 1\n\\", "unexpected EOF", 2, 2),
    "python 2 print": (b"import os\n\nprint 'hello'\n", "Missing parentheses", 3, 1),
}


@pytest.mark.parametrize(
    ("source", "words", "line", "column"), REJECTED.values(), ids=list(REJECTED)
)
def test_rejected_by_cpython_is_mesh000_with_its_message(
    source: bytes, words: str, line: int, column: int
) -> None:
    oracle = cpython(source)
    assert isinstance(oracle, SyntaxError)
    report = analyze(source)
    [finding] = report.findings
    assert finding.rule == "MESH000" and not report.parsed
    assert finding.message == f"syntax error: {oracle.msg}" and words in finding.message
    assert (finding.line, finding.column) == (oracle.lineno, oracle.offset) == (line, column)


def test_escape_warnings_never_become_errors() -> None:
    source = b"import re\nPATTERN = '\\d+'\nCACHE = {}\n"  # an invalid escape: a warning only
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as under `python -W error`
        report = analyze(source)
    assert report.parsed and [f.rule for f in report.findings] == ["MESH005"]
    # negative control: under the same filter, compile() without suppression would refuse it
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(SyntaxError):
            compile(source, "x.py", "exec", dont_inherit=True)


def test_accepted_shape_with_continuation_before_eof_is_not_mesh000() -> None:
    assert agrees(b"x = 1 \\\n\n") and mesh000(analyze(b"x = 1 \\\n\n")) == []


# -- properties, CPython as the oracle ------------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_generated_sources_agree_with_cpython(text: str) -> None:
    assert agrees(text.encode("utf-8", "surrogatepass"))


def stdlib_sample(count: int, seed: int) -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.glob("*.py") if p.stat().st_size < 60_000)
    return random.Random(seed).sample(files, min(count, len(files)))


def mutate(source: bytes, rng: random.Random) -> bytes:
    """A few random byte edits: replace, insert or delete, some of them bytes that matter to
    Python's grammar (brackets, colons, quotes, indentation, encodings)."""
    data = bytearray(source)
    alphabet = b"()[]{}:'\"\\\t \n\r#=*@\xff\xef\xbb\xbf\x00abc0"
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(data) + 1)
        action = rng.randrange(3)
        if action == 0 and at < len(data):
            data[at] = rng.choice(alphabet)
        elif action == 1:
            data[at:at] = bytes([rng.choice(alphabet)])
        elif at < len(data):
            del data[at]
    return bytes(data)


@pytest.mark.parametrize("seed", range(4))
def test_mutated_stdlib_modules_agree_with_cpython(seed: int) -> None:
    rng = random.Random(seed)
    disagreements = []
    checked = rejected = 0
    for path in stdlib_sample(10, seed):
        mutated = mutate(path.read_bytes(), rng)
        checked += 1
        rejected += cpython(mutated) is not None
        if not agrees(mutated):
            disagreements.append(path.name)
    assert disagreements == [] and checked == 10
    assert rejected > 0  # the mutations do produce rejected files: the check has teeth


# -- the command's exit status --------------------------------------------------------------


def test_not_analysed_file_exits_3_and_is_no_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    # CPython accepts it; libcst, which MESH004 needs for a file that starts a task, does not
    (tmp_path / "mixed.py").write_bytes(b"if 1:\n if 1:\n\t create_task(x)\n y\n")
    monkeypatch.chdir(tmp_path)
    assert main(["scan", "--no-cache", "--format", "json", "."]) == 3
    document = json.loads(capsys.readouterr().out)
    assert document["findings"] == []
    assert [e["kind"] for e in document["errors"]] == ["not-analysed"]
    # with a finding as well, the finding decides: exit 1
    (tmp_path / "state.py").write_text("CACHE = {}\n")
    assert main(["scan", "--no-cache", "--format", "json", "."]) == 1
    capsys.readouterr()
    # negative control: without the unanalysable file, a clean tree exits 0
    (tmp_path / "mixed.py").unlink()
    (tmp_path / "state.py").write_text("CACHE = ()\n")
    assert main(["scan", "--no-cache", "--format", "json", "."]) == 0
