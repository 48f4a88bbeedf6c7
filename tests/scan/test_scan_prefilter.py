"""The text prefilter changes no result: every file analysed with the prefilter gives the same
report as with every file parsed by libcst and every check run (`prefilter=False`), on a
corpus that exercises every rule: each rule's examples as production and as test code,
near misses (the watched names only in comments and strings), and the reference mesh. The
negative control shows the prefilter does skip the libcst parse. MESH005, which reads
CPython's `ast`, is held to its former reading of libcst's tree, kept here as the oracle."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import libcst as cst
import pytest

from invariants.scan.context import FileContext
from invariants.scan.engine import analyze_source, tree_passes
from invariants.scan.model import FileReport, Finding, ScanConfig
from invariants.scan.rules import registered
from invariants.scan.rules.mesh005_module_mutable_state import (
    EXEMPT_NAMES,
    MUTABLE_CALLS,
    check,
)
from invariants.scan.rules.walk import shared_statements
from invariants.scan.runner import finding_order, scan
from invariants.scan.source import cpython_verdict

CONFIG = ScanConfig()
REFERENCE = Path(__file__).resolve().parents[2] / "reference_impl"

# Every name a rule's prefilter looks for, written where no rule may find it.
NEAR_MISSES = {
    "comments.py": (
        "# DeliveryFailure(d) unless d.may_answer(); deliver(m) again after TimeoutError\n"
        "# asyncio.create_task(pump()) and subscribe(topic); time.sleep(1)\n"
        "# if isinstance(m.message, DeliveryFailure) or m.can_be_ignored: retry\n"
        "ANSWERS = ('DeliveryFailure', 'may_answer', 'deliver(', 'create_task(')\n"
        "HELP = '''CACHE = {} and QUEUE = deque() at module level'''\n"
    ),
    "test_comments.py": "# time.sleep(0.5) and asyncio.sleep(1)\nDELAY = 'sleep(2)'\n",
    "local_state.py": (
        "from collections import deque as dq\n"
        "import collections as c\n"
        "__all__ = ['Hub']\n"
        "LIMITS = (1, 2)\n"
        "def make():\n    cache = {}\n    seen = dq()\n    return cache, seen, dict()\n"
        "class Hub:\n    __slots__ = ['a']\n    def start(self):\n        self.q = c.deque()\n"
    ),
}

# Calls under another name: the prefilters must look for the imported name, not the call.
ALIASED = {
    "aliased.py": (
        "from mesh import deliver as push, DeliveryFailure as Nack\n"
        "from asyncio import create_task as spawn\n\n"
        "def again(m):\n    for _ in range(3):\n        try:\n            return push(m)\n"
        "        except TimeoutError:\n            continue\n\n"
        "def fail(d):\n    spawn(d.pump())\n    return Nack(d)\n"
    ),
    "test_aliased.py": "from time import sleep as nap\n\ndef test_x():\n    nap(1)\n",
}

# Shapes MESH005's positions and messages must get right, as libcst placed them.
MUTABLE_SHAPES = {
    "shapes.py": (
        "from collections import deque as dq, OrderedDict\n"
        "import collections as c\n"
        "NAME = 'caf\u00e9'; CACHE = {}\n"
        "(WRAPPED) = [\n    1,\n]\n"
        "A = B = set()\n"
        "a, b = [], []\n"
        "QUEUE = dq()\nORDER: dict[str, int] = c.OrderedDict()\nPLAIN = OrderedDict()\n"
        "SQUARES = {n: n * n for n in range(3)}\n"
        "__slots__: list[str] = []\n"
        "if NAME:\n    class Inner:\n        class Deeper:\n            seen = {1}\n"
        "try:\n    X = list()\nexcept* ValueError:\n    Y = []\nelse:\n    Z = []\n"
        "match NAME:\n    case 'x':\n        M = {}\n"
        "with open(NAME) as f:\n    W = (\n        # a comment\n        [] )\n"
        "for i in range(2):\n    F = []\nelse:\n    G = {}\n"
    ),
    "line_ends.py": "X = 1\rCACHE = {}\r\n\fSEEN = []\nif X:\n\tT = set()\n",
}


def corpus() -> list[tuple[str, str, bool]]:
    """(path, source, is_test) of every file the comparison analyses."""
    files: list[tuple[str, str, bool]] = []
    for rule in registered():
        examples = [*rule.valid, *(source for source, _ in rule.invalid)]
        for index, source in enumerate(examples):
            name = f"{rule.id.lower()}_{index}.py"
            files += [(f"src/{name}", source, False), (f"tests/test_{name}", source, True)]
    for name, source in {**NEAR_MISSES, **ALIASED, **MUTABLE_SHAPES}.items():
        files.append((f"src/{name}", source, name.startswith("test_")))
    for path in sorted(REFERENCE.rglob("*.py")):
        files.append((f"ref/{path.relative_to(REFERENCE)}", path.read_text(), False))
    return files


def analysed(prefilter: bool) -> list[FileReport]:
    return [
        analyze_source(path, source.encode(), CONFIG, is_test=is_test, prefilter=prefilter)
        for path, source, is_test in corpus()
    ]


def ordered(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=finding_order)


def comparable(report: FileReport) -> FileReport:
    return dataclasses.replace(report, findings=ordered(report.findings), tree_built=False)


def test_the_corpus_exercises_every_rule() -> None:
    reports = analysed(prefilter=False)
    rules = {f.rule for r in reports for f in r.findings}
    rules |= {f.rule for f in tree_passes(reports, CONFIG).findings}
    assert rules >= {rule.id for rule in registered()} - {"MESH000"}


def test_aliased_calls_are_found() -> None:
    reports = {r.path: r for r in analysed(prefilter=True)}
    rules = [(f.rule, f.line) for f in reports["src/aliased.py"].findings]
    assert ("MESH003", 7) in rules and ("MESH004", 12) in rules
    assert [(f.rule, f.line) for f in reports["src/test_aliased.py"].findings] == [("MESH006", 4)]


def test_prefiltered_reports_are_those_of_a_full_parse() -> None:
    full, filtered = analysed(prefilter=False), analysed(prefilter=True)
    assert [comparable(r) for r in filtered] == [comparable(r) for r in full]
    whole_tree = [tree_passes(reports, CONFIG) for reports in (full, filtered)]
    assert ordered(whole_tree[0].findings) == ordered(whole_tree[1].findings)
    assert sorted(whole_tree[0].problems) == sorted(whole_tree[1].problems)


@pytest.mark.slow
def test_the_prefilter_skips_libcst_where_no_rule_needs_the_tree() -> None:
    reports = {r.path: r for r in analysed(prefilter=True)}
    # The prefilters read text: a name in a comment is enough to parse the file.
    assert reports["src/comments.py"].tree_built
    assert not reports["src/local_state.py"].tree_built  # MESH005 reads CPython's ast
    assert not reports["src/mesh005_0.py"].tree_built
    assert not reports["tests/test_mesh004_0.py"].tree_built  # MESH004: production only
    assert reports["src/aliased.py"].tree_built and reports["src/test_aliased.py"].tree_built
    skipped = [path for path, report in reports.items() if not report.tree_built]
    parsed = [path for path, report in reports.items() if report.tree_built]
    assert skipped and parsed  # the negative control: both kinds are in the corpus
    assert all(r.tree_built for r in analysed(prefilter=False) if r.parsed)


@pytest.mark.slow
def test_scan_stats_count_the_files_libcst_parsed(tmp_path: Path) -> None:
    for path, source, _ in corpus():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(source)
    result = scan(["."], CONFIG, root=tmp_path, jobs=1, cache_dir=None)
    reports = analysed(prefilter=True)
    assert result.stats.files == len(reports)
    assert result.stats.cst_parsed == sum(r.tree_built for r in reports)
    assert 0 < result.stats.cst_parsed < result.stats.files


def libcst_mesh005(path: str, source: str) -> list[Finding]:
    """MESH005 as it read libcst's tree before it read CPython's: the oracle."""
    ctx = FileContext(path, source, CONFIG, False)
    ctx.attach(cst.parse_module(source))
    for statement, symbol in shared_statements(ctx.module.body):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not isinstance(small, (cst.Assign, cst.AnnAssign)):
                continue
            kind = _libcst_kind(ctx, small.value)
            targets = small.targets if isinstance(small, cst.Assign) else [small]
            names = [t.target.value if isinstance(t.target, cst.Name) else "<target>"
                     for t in targets]
            if kind is None or all(name in EXEMPT_NAMES for name in names):
                continue
            where = f"class {symbol}" if symbol else "module"
            ctx.report(
                "MESH005", small,
                f"{', '.join(names)} is a {where}-level mutable {kind}, shared by every caller: "
                "use a tuple/frozenset or instance state, or allow-list it with a tag and reason",
                symbol,
            )
    report = FileReport(path)
    ctx.finish(report)
    return ordered(report.findings)


_LIBCST_DISPLAYS = (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)


def _libcst_kind(ctx: FileContext, value: cst.BaseExpression | None) -> str | None:
    if isinstance(value, _LIBCST_DISPLAYS):
        return type(value).__name__.lower().replace("comp", " comprehension")
    if isinstance(value, cst.Call):
        name = ctx.name_of(value.func)
        last = name.rpartition(".")[2] if name is not None else None
        if last in MUTABLE_CALLS:
            return f"{last}()"
    return None


def ast_mesh005(path: str, source: str) -> list[Finding]:
    ctx = FileContext(path, source, CONFIG, False)
    check(ctx)
    report = FileReport(path)
    ctx.finish(report)
    return ordered(report.findings)


@pytest.mark.parametrize("name", [*MUTABLE_SHAPES, *NEAR_MISSES])
def test_mesh005_on_the_ast_places_findings_as_on_libcst(name: str) -> None:
    source = {**MUTABLE_SHAPES, **NEAR_MISSES}[name]
    assert ast_mesh005(name, source) == libcst_mesh005(name, source)


def test_mesh005_shapes_are_found() -> None:
    found = ast_mesh005("shapes.py", MUTABLE_SHAPES["shapes.py"])
    assert len(found) == 15
    assert (found[0].line, found[0].column) == (3, 16)  # characters after "NAME = 'café'; "
    assert (found[1].line, found[1].end_line) == (4, 6)


def test_mesh005_on_the_reference_mesh_and_examples_as_on_libcst() -> None:
    for path, source, is_test in corpus():
        if not is_test and cpython_verdict(source.encode(), path) is None:
            assert ast_mesh005(path, source) == libcst_mesh005(path, source), path
