"""Every mutant applies to the reference and changes exactly its site; a mutant whose
target is missing (or found too often) fails loudly, naming the mutant and the file."""

from __future__ import annotations

import difflib
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from invariants.mutants.base import Mutant, MutantNotApplicable, Rewrite
from invariants.mutants.build import reference_root
from invariants.mutants.matrix import ALL_CHECKS, DYNAMIC_CHECKS
from invariants.mutants.patch import Patch
from invariants.mutants.registry import MUTANT_MODULES, MUTANTS, find_mutant, select_mutants

MAX_CHANGED_LINES = 8  # a mutant is one statement or expression, plus an import
# The per-mutant checks run by default on one mutant per check (the first that lists it, as
# the kill matrix's sample), every rewrite on its own tests; the other mutants in the slow tier.
SAMPLE = {next(m.id for m in MUTANTS if check in m.kills) for check in ALL_CHECKS
          if any(check in m.kills for m in MUTANTS)}
TIERED = [pytest.param(m, marks=() if m.id in SAMPLE else pytest.mark.slow) for m in MUTANTS]


def _source(mutant: Mutant) -> str:
    return (reference_root() / mutant.path).read_text(encoding="utf-8")


def _function_lines(source: str, qualified: str) -> range:
    """The line span of the function `qualified` ("Class.method" or "function")."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    positions = wrapper.resolve(PositionProvider)
    spans: list[range] = []

    class Finder(cst.CSTVisitor):
        def __init__(self) -> None:
            self.scope: list[str] = []

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            self.scope.append(node.name.value)

        def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
            self.scope.pop()

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            if ".".join([*self.scope, node.name.value]) == qualified:
                where = positions[node]
                spans.append(range(where.start.line, where.end.line + 1))

    wrapper.module.visit(Finder())
    assert len(spans) == 1, f"{qualified} defined {len(spans)} times"
    return spans[0]


def _changed_lines(before: str, after: str) -> tuple[list[tuple[int, str]], list[str]]:
    """(old line number and text of every removed or replaced line, or of the line an
    insertion follows; added lines)."""
    touched: list[tuple[int, str]] = []
    added: list[str] = []
    old, new = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            touched += [(n + 1, old[n]) for n in range(i1, i2)]
        else:  # a pure insertion after old line i1
            touched.append((i1, old[i1 - 1] if i1 else ""))
        added += new[j1:j2]
    return touched, added


def _outside(touched: list[tuple[int, str]], site: range) -> list[int]:
    """Changed lines that are neither in the site's function nor an import."""
    return [n for n, line in touched if n not in site and not line.lstrip().startswith("from ")]


def test_a_change_outside_the_site_is_noticed() -> None:
    """Negative control of the site check: a second edit in another function is caught."""
    m6 = find_mutant("M6")
    before = _source(m6)
    after = m6.apply(before).replace("def cancel(self)", "def cancel_now(self)")
    touched, _ = _changed_lines(before, after)
    site = _function_lines(before, m6.site)
    assert [line for n, line in touched if n in _outside(touched, site)] == [
        "    def cancel(self) -> None:"
    ]


@pytest.mark.parametrize("mutant", TIERED, ids=lambda m: m.id)
def test_codemod_changes_only_its_site(mutant: Mutant) -> None:
    before = _source(mutant)
    after = mutant.apply(before)
    touched, added = _changed_lines(before, after)
    removed = [line for _, line in touched]
    site = _function_lines(before, mutant.site)
    # The record says what the pre-fix shape writes and what it removes.
    produced, gone = mutant.writes, mutant.removes
    assert produced or gone, f"{mutant.name} describes neither what it writes nor removes"
    assert 0 < len(removed) + len(added) <= MAX_CHANGED_LINES, (removed, added)
    if gone:
        assert any(gone in line for line in removed), f"{gone!r} not removed"
        assert not any(gone in line for line in added)
    if produced:
        assert any(produced in line for line in added), f"{produced!r} not produced: {added}"
    outside = _outside(touched, site)
    assert not outside, f"lines outside {mutant.site} changed: {outside}"
    cst.parse_module(after)  # still valid Python


@pytest.mark.parametrize("mutant", TIERED, ids=lambda m: m.id)
def test_codemod_on_source_without_its_target_names_mutant_and_file(mutant: Mutant) -> None:
    other = "faults.py" if mutant.path == "constants.py" else "constants.py"  # not its file
    unrelated = (reference_root() / other).read_text(encoding="utf-8")
    with pytest.raises(MutantNotApplicable) as caught:
        mutant.apply(unrelated, filename=other)
    message = str(caught.value)
    assert mutant.name in message and other in message
    assert "found 0 time(s)" in message


@pytest.mark.parametrize("mutant", TIERED, ids=lambda m: m.id)
def test_codemod_does_not_apply_twice(mutant: Mutant) -> None:
    """Once mutated, the target is gone: a second application is an error, not a no-op."""
    once = mutant.apply(_source(mutant))
    with pytest.raises(MutantNotApplicable, match=mutant.id):
        mutant.apply(once)


REWRITES = [m for m in MUTANTS if isinstance(m, Rewrite)]


@pytest.mark.parametrize("mutant", REWRITES, ids=lambda m: m.id)
def test_the_walk_along_the_site_rewrites_what_the_whole_walk_does(mutant: Mutant) -> None:
    """A codemod walks only the path to its site; on the reference that gives the same
    code as matching every node of the module (a patch names no more than its site)."""
    source = _source(mutant)
    whole = mutant.codemod_for(mutant.path)
    assert mutant.apply(source) == whole.transform_module(cst.parse_module(source)).code
    assert whole.hits == mutant.expected_hits


def _one_line_change(before: str, after: str) -> tuple[str, str] | None:
    """The removed and the added line when `after` is `before` with one line replaced."""
    old, new = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    changed = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if len(changed) != 1:
        return None
    tag, i1, i2, j1, j2 = changed[0]
    if tag != "replace" or i2 - i1 != 1 or j2 - j1 != 1:
        return None
    return old[i1].strip(), new[j1].strip()


@pytest.mark.parametrize("mutant", REWRITES, ids=lambda m: m.id)
def test_a_rewrite_is_a_change_no_patch_says(mutant: Mutant) -> None:
    """A mutant that replaces one whole line of its site is a `Patch`: a codemod of its
    own is kept for an insertion, more lines, an import, or a line no node spans."""
    source = _source(mutant)
    after = mutant.apply(source)
    change = _one_line_change(source, after)
    if change is None:
        return
    patch = Patch(id=mutant.id, slug=mutant.slug, shape=mutant.shape, path=mutant.path,
                  site=mutant.site, before=change[0], after=change[1], kills=mutant.kills)
    try:
        patched = patch.apply(source)
    except MutantNotApplicable:
        return  # no node of the site is that line
    assert patched != after, f"{mutant.name} replaces one line: make it a Patch"


def test_control_a_one_line_rewrite_is_told_a_patch() -> None:
    """Negative control: a patch's own change, made by a codemod, is one a patch says."""
    m16 = find_mutant("M16")
    source = _source(m16)
    change = _one_line_change(source, m16.apply(source))
    assert change is not None
    patch = Patch(id="M0", slug="again", shape="", path=m16.path, site=m16.site,
                  before=change[0], after=change[1], kills=m16.kills)
    assert patch.apply(source) == m16.apply(source)


def test_a_target_outside_the_named_site_is_not_found() -> None:
    """Negative control of the walk along the site: M6's target in a class of another name
    is found by the whole walk and not by the mutant."""
    m6 = find_mutant("M6")
    elsewhere = (
        "class A:\n    def on_active_stop(self, done):\n        self.hold_until_drained(done)\n"
    )
    whole = m6.codemod_for(m6.path)
    whole.transform_module(cst.parse_module(elsewhere))
    assert whole.hits == 1
    with pytest.raises(MutantNotApplicable, match="found 0"):
        m6.apply(elsewhere)


def test_target_found_too_often_is_an_error() -> None:
    m6 = find_mutant("M6")
    doubled = (
        "class RoutingQuiescenceParticipant:\n"
        "    def on_active_stop(self, done):\n"
        "        self.hold_until_drained(done)\n"
        "        self.hold_until_drained(done)\n"
    )
    expected = r"found 2 time\(s\) in quiescence.py, expected 1"
    with pytest.raises(MutantNotApplicable, match=expected):
        m6.apply(doubled)


def test_a_second_read_of_the_identity_in_offer_is_an_error() -> None:
    """M18 rewrites the one identity read of `Hub.offer`: a second one (an intake path
    the codemod was not written for) fails loudly instead of being rewritten too."""
    doubled = (
        "class Hub:\n"
        "    def offer(self, delivery):\n"
        "        a = delivery.diagnostic_key\n"
        "        b = delivery.diagnostic_key\n"
    )
    with pytest.raises(MutantNotApplicable, match=r"M18 .* found 2 time\(s\) in hub.py"):
        find_mutant("M18").apply(doubled, filename="hub.py")


def test_an_uncapped_or_differently_capped_delay_is_not_the_target() -> None:
    """M15 drops the 3 s cap only where the reference writes it."""
    uncapped = "def retry_delay_ms(retry):\n    return RETRY_BASE_DELAY_MS * (1 << retry)\n"
    other_cap = "def retry_delay_ms(retry):\n    return min(250 * (1 << retry), 5000)\n"
    for source in (uncapped, other_cap):
        with pytest.raises(MutantNotApplicable, match=r"M15 uncapped-retry-delay.*found 0"):
            find_mutant("M15").apply(source, filename="constants.py")


def test_budget_and_bound_codemods_match_inside_their_function_only() -> None:
    """The same comparison, timer, call or delay elsewhere is left alone (M16, M17,
    M20-M24, M26)."""
    elsewhere = {
        "M16": "def deliver(self, attempt):\n    return attempt < self.router.retries\n",
        "M17": "def cancel(self):\n    self.timer.after(self.budget_ms, self._budget_spent)\n",
        "M20": "def start(self):\n    return self.attempt < self.retries\n",
        "M21": "def admit(self, depth):\n    return depth >= self.watermark\n",
        "M22": "def copy(self):\n    return dict(self.properties)\n",
        "M23": "def members(exc, queue):\n    queue.extend(exc.exceptions)\n",
        "M24": "def start(self):\n    return self.first_delay_ms * (1 << self.attempt)\n",
        "M26": "def trip(self, now_ms):\n    return now_ms + self.cooldown_ms\n",
    }
    for mutant_id, source in elsewhere.items():
        with pytest.raises(MutantNotApplicable, match=rf"{mutant_id} .*found 0"):
            find_mutant(mutant_id).apply(source)


def test_target_outside_its_function_is_not_mutated() -> None:
    """The codemods match inside the named function only."""
    m6 = find_mutant("M6")
    elsewhere = "class A:\n    def stop(self, done):\n        self.hold_until_drained(done)\n"
    with pytest.raises(MutantNotApplicable, match="found 0"):
        m6.apply(elsewhere)


def test_unparsable_source_is_reported_with_the_file() -> None:
    with pytest.raises(MutantNotApplicable, match=r"M2 resend-timeouts: cannot parse grain.py"):
        find_mutant("M2").apply("def broken(:\n", filename="grain.py")


def test_every_mutant_has_a_module_a_distinct_rewrite_and_its_kills() -> None:
    # Numbered from M1 without a gap or a repeat, each from its own `mN_slug` module.
    assert [m.id for m in MUTANTS] == [f"M{i}" for i in range(1, len(MUTANTS) + 1)]
    assert list(MUTANT_MODULES) == [
        f"invariants.mutants.catalogue.{m.id.lower()}_{m.slug.replace('-', '_')}"
        for m in MUTANTS
    ]
    # Each is killed by at least one known check, and every invariant has a mutant its
    # negative control.
    for mutant in MUTANTS:
        assert mutant.kills, f"{mutant.name} names no check that kills it"
        assert len(set(mutant.kills)) == len(mutant.kills), mutant.name
        assert set(mutant.kills) <= set(ALL_CHECKS), mutant.name
    assert {check for m in MUTANTS for check in m.kills} >= set(DYNAMIC_CHECKS)
    assert len({m.slug for m in MUTANTS}) == len(MUTANTS)
    assert all(isinstance(m, Patch | Rewrite) for m in MUTANTS)
    assert len({m.codemod for m in REWRITES}) == len(REWRITES)
    # Two mutants may rewrite one function (M1 and M13 the same guard), never alike.
    assert len({(m.path, m.apply(_source(m))) for m in MUTANTS}) == len(MUTANTS)
    for mutant in MUTANTS:
        assert Path(reference_root(), mutant.path).is_file()


def test_mutants_are_found_by_id_or_slug_and_unknown_names_are_clear() -> None:
    assert find_mutant("m2") is find_mutant("resend-timeouts") is find_mutant("M2 resend-timeouts")
    assert [m.id for m in select_mutants(["M3", "no-stop-hold"])] == ["M3", "M6"]
    with pytest.raises(ValueError, match=r"unknown mutant 'M99' \(known: M1 payload-type-guard"):
        find_mutant("M99")
