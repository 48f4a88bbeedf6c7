"""A `Patch` replaces the one node of its site whose code is `before`: an expression, a
keyword argument, a simple statement or the line that opens a block; an empty `after`
removes the statement. Anything but one such node in the site, or an `after` that cannot
stand in its place, is one line naming the mutant."""

from __future__ import annotations

import difflib
import itertools

import libcst as cst
import pytest

from invariants.mutants.base import MutantNotApplicable
from invariants.mutants.patch import Patch

SOURCE = '''\
class Hub:
    def turn(self, queue):
        delivery = queue.popleft()  # the oldest first
        self.emit("handled", depth=len(queue), late=False)
        if queue:
            self.arm()
        elif self.idle:
            self.rest()
        a = 1; b = 2
        for item in queue:
            self.done(item)

    def other(self, queue):
        delivery = queue.popleft()
'''


def _patch(before: str, after: str, site: str = "Hub.turn") -> Patch:
    return Patch(id="M0", slug="trial", shape="a trial patch", path="hub.py", site=site,
                 before=before, after=after, kills=("INV7",))


def _applied(before: str, after: str, site: str = "Hub.turn") -> str:
    return _patch(before, after, site).apply(SOURCE)


def _changed(mutated: str) -> list[tuple[str, str]]:
    """(old, new) of each line that differs; a line that went is paired with ""."""
    old, new = SOURCE.splitlines(), mutated.splitlines()
    pairs: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            gone, came = (line.strip() for line in old[i1:i2]), (x.strip() for x in new[j1:j2])
            pairs += itertools.zip_longest(gone, came, fillvalue="")
    return pairs


@pytest.mark.parametrize(
    ("before", "after", "changed"),
    [
        ("len(queue)", "len(queue) - 1",  # an expression
         ('self.emit("handled", depth=len(queue), late=False)',
          'self.emit("handled", depth=len(queue) - 1, late=False)')),
        ("late=False", "late=True",  # a keyword argument, its comma kept
         ('self.emit("handled", depth=len(queue), late=False)',
          'self.emit("handled", depth=len(queue), late=True)')),
        ("delivery = queue.popleft()", "delivery = queue.pop()",  # a statement, its comment
         ("delivery = queue.popleft()  # the oldest first",
          "delivery = queue.pop()  # the oldest first")),
        ("b = 2", "b = 3", ("a = 1; b = 2", "a = 1; b = 3")),  # one of a line's statements
        ("if queue:", "if len(queue) > 1:", ("if queue:", "if len(queue) > 1:")),  # opener
        ("elif self.idle:", "elif not self.idle:", ("elif self.idle:", "elif not self.idle:")),
        ("for item in queue:", "for item in reversed(queue):",
         ("for item in queue:", "for item in reversed(queue):")),
    ],
)
def test_the_node_whose_code_is_before_is_replaced_and_nothing_else(
    before: str, after: str, changed: tuple[str, str]
) -> None:
    assert _changed(_applied(before, after)) == [changed]


def test_an_empty_after_removes_the_statement_with_its_block() -> None:
    assert _changed(_applied("for item in queue:", "")) == [
        ("for item in queue:", ""), ("self.done(item)", "")]
    assert _changed(_applied("if queue:", "")) == [
        ("if queue:", ""), ("self.arm()", ""), ("elif self.idle:", ""), ("self.rest()", "")]
    assert _changed(_applied("delivery = queue.popleft()", "")) == [
        ("delivery = queue.popleft()  # the oldest first", "")]


def test_the_outermost_node_is_the_one_counted() -> None:
    """`self.arm()` is a statement and the call it holds: one node, replaced once."""
    assert _changed(_applied("self.arm()", "self.disarm()")) == [("self.arm()", "self.disarm()")]


def test_a_stale_before_is_one_line_naming_the_mutant_and_the_file() -> None:
    with pytest.raises(MutantNotApplicable) as caught:
        _patch("delivery = queue.popleft(0)", "delivery = queue.pop()").apply(
            SOURCE, filename="hub.py")
    message = str(caught.value)
    assert message == (
        "mutant M0 trial: target `delivery = queue.popleft(0)` in Hub.turn found 0 time(s) "
        "in hub.py, expected 1; the reference code changed, update its `before`")


def test_before_twice_in_the_site_is_an_error_and_a_block_is_searched_too() -> None:
    doubled = SOURCE.replace("            self.arm()\n", "            self.arm()\n" * 2)
    with pytest.raises(MutantNotApplicable, match=r"M0 trial: .* found 2 time\(s\)"):
        _patch("self.arm()", "pass").apply(doubled)
    nested = SOURCE.replace("            self.arm()\n", "            if queue:\n"
                            "                self.arm()\n")
    with pytest.raises(MutantNotApplicable, match=r"found 2 time\(s\)"):
        _patch("if queue:", "if not queue:").apply(nested)


def test_only_the_site_is_searched() -> None:
    """`delivery = queue.popleft()` stands in `Hub.other` too; each site finds its own,
    and a site without it finds nothing (the control: a whole-module walk finds both)."""
    assert _changed(_applied("delivery = queue.popleft()", "delivery = None",
                             site="Hub.other")) == [("delivery = queue.popleft()",
                                                     "delivery = None")]
    with pytest.raises(MutantNotApplicable, match="found 0"):
        _patch("delivery = queue.popleft()", "delivery = None", site="Hub.gone").apply(SOURCE)
    whole = _patch("delivery = queue.popleft()", "delivery = None").codemod_for("hub.py")
    whole.transform_module(cst.parse_module(SOURCE))
    assert whole.hits == 2


@pytest.mark.parametrize(
    ("before", "after", "why"),
    [
        ("len(queue)", "x = 1", "it does not parse"),
        ("len(queue)", "", "an empty `after` removes a statement only"),
        ("delivery = queue.popleft()", "a = 1; b = 2", "it is not one simple statement"),
        ("if queue:", "while queue:", "it does not open the `if queue:` statement"),
        ("if queue:", "elif queue:", "an `elif` line is patched by an `elif` line only"),
    ],
)
def test_an_after_that_cannot_stand_there_is_one_line_naming_the_mutant(
    before: str, after: str, why: str
) -> None:
    with pytest.raises(MutantNotApplicable) as caught:
        _applied(before, after)
    assert str(caught.value) == (
        f"mutant M0 trial: `{after}` cannot replace `{before}` in Hub.turn: {why}")


@pytest.mark.parametrize(("before", "after"), [("", "x"), ("a\nb", "x"), ("x", " y")])
def test_a_patch_is_one_line_each_side(before: str, after: str) -> None:
    with pytest.raises(ValueError, match=r"^mutant M0 trial: (before|after) must be one line"):
        _patch(before, after)


def test_what_it_writes_and_removes_follows_from_before_and_after() -> None:
    swap = _patch("delivery = queue.popleft()", "delivery = queue.pop()")
    assert (swap.target, swap.removes, swap.writes) == (
        "delivery = queue.popleft()", "delivery = queue.popleft()", "delivery = queue.pop()")
    longer = _patch("if queue:", "if queue or self.idle:")
    assert (longer.removes, longer.writes) == ("if queue:", "if queue or self.idle:")
    grown = _patch("len(queue)", "len(queue) - 1")  # an insertion removes nothing to look for
    assert grown.removes == "" and grown.expected_hits == 1
