"""Soundness of MESH001's dominance against execution: generated functions (if/elif,
while/for with break/continue/else, try/except/finally, return, short-circuit and
conditional conditions, guard flags `ok = d.may_answer()` and walrus tests) are run
under generated decisions. Whenever the analysis calls `target()` guarded, every run that
reaches it must have seen `d.may_answer()` come out true first. (These are the property's
own generated programs, not scanned code.)"""

from __future__ import annotations

import contextlib
import sys
import textwrap
from types import FrameType

import libcst as cst
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from libcst.metadata import MetadataWrapper, PositionProvider

from invariants.scan.rules.mesh001.cfg import build_cfg

conditions = st.recursive(
    st.sampled_from(["d.may_answer()", "c()", "ok", "(ok := d.may_answer())"]),
    lambda inner: st.one_of(
        inner.map(lambda x: f"not {x}"),
        st.tuples(inner, inner).map(lambda p: f"({p[0]} and {p[1]})"),
        st.tuples(inner, inner).map(lambda p: f"({p[0]} or {p[1]})"),
        st.tuples(inner, inner).map(lambda p: f"({p[0]} if c() else {p[1]})"),
    ),
    max_leaves=4,
)


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


@st.composite
def blocks(draw: st.DrawFn, depth: int = 0, in_loop: bool = False) -> list[str]:
    simple = ["pass", "target()", "ok = d.may_answer()", "return", "boom()"]
    simple += ["break", "continue"] if in_loop else []
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kinds = ["simple", "guard"] + (["if", "while", "for", "try"] if depth < 3 else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "simple":
            lines.append(draw(st.sampled_from(simple)))
        elif kind == "guard":  # the idiom itself, often enough to meet every construct
            lines += ["if not d.may_answer():", "    " + draw(st.sampled_from(simple[3:]))]
        elif kind == "if":
            lines += [f"if {draw(conditions)}:", *_indent(draw(blocks(depth + 1, in_loop)))]
            if draw(st.booleans()):
                lines += [f"elif {draw(conditions)}:", *_indent(draw(blocks(depth + 1, in_loop)))]
            if draw(st.booleans()):
                lines += ["else:", *_indent(draw(blocks(depth + 1, in_loop)))]
        elif kind in ("while", "for"):
            head = f"while {draw(conditions)}:" if kind == "while" else "for _ in range(2):"
            lines += [head, *_indent(draw(blocks(depth + 1, True)))]
            if draw(st.booleans()):
                lines += ["else:", *_indent(draw(blocks(depth + 1, in_loop)))]
        else:
            lines += ["try:", *_indent(draw(blocks(depth + 1, in_loop)))]
            lines += ["except Boom:", *_indent(draw(blocks(depth + 1, in_loop)))]
            if draw(st.booleans()):
                lines += ["finally:", *_indent(draw(blocks(depth + 1, in_loop)))]
    return lines


class Boom(Exception):
    pass


class Exhausted(Exception):
    """Ends a run that keeps deciding (a `while not c():` would never stop otherwise)."""


def static_guarded_targets(source: str) -> set[int]:
    """Line numbers of `target()` calls the analysis proves guarded on `d`."""
    module = cst.parse_module(source)
    function = module.body[0]
    assert isinstance(function, cst.FunctionDef)
    cfg = build_cfg(function, ("may_answer",))
    lines = source.splitlines()
    guarded: set[int] = set()
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    for node in positions:
        if isinstance(node, cst.Expr) and id(node) in cfg.node_of:
            line = positions[node].start.line
            if lines[line - 1].strip() == "target()":
                facts = cfg.facts_at(id(node))
                if facts is not None and "d" in facts:
                    guarded.add(line)
    return guarded


def reached_unproved(source: str, decisions: list[bool]) -> set[int]:
    """Run the function; lines of `target()` reached before any true may_answer()."""
    stream = iter(decisions)
    state = {"proved": False}
    bad: set[int] = set()
    steps = [0]

    def decide() -> bool:
        steps[0] += 1
        if steps[0] > 200:
            raise Exhausted
        return next(stream, False)

    class Delivery:
        def may_answer(self) -> bool:
            answer = decide()
            state["proved"] = state["proved"] or answer
            return answer

    def target() -> None:
        if not state["proved"]:
            bad.add(sys._getframe(1).f_lineno)

    def boom() -> None:
        if decide():
            raise Boom

    def bounded(frame: FrameType, event: str, arg: object) -> object:
        # `while ok:` decides nothing per round: count executed lines too, so every
        # generated program ends
        if frame.f_code.co_filename == "<generated>" and event == "line":
            steps[0] += 1
            if steps[0] > 2000:
                raise Exhausted
        return bounded

    namespace = {"c": decide, "target": target, "boom": boom, "Boom": Boom}
    exec(compile(source, "<generated>", "exec"), namespace)
    # An early end (also reading `ok` before it is bound): what ran still counts.
    previous = sys.gettrace()
    sys.settrace(bounded)
    try:
        with contextlib.suppress(Exhausted, Boom, NameError):
            namespace["f"](Delivery())
    finally:
        sys.settrace(previous)
    return bad


@settings(max_examples=150, deadline=None)
@given(blocks(), st.lists(st.booleans(), max_size=40))
# A raise before the guard reaches the handler and skips the guard: rare for the generator.
@example(
    [
        "try:",
        "    boom()",
        "    if not d.may_answer():",
        "        return",
        "except Boom:",
        "    pass",
        "target()",
    ],
    [True],
)
# An early return in a try with a finally guards what follows the try; an exception
# before the check goes through the finally and on out, never past it.
@example(
    ["try:", "    boom()", "    if not d.may_answer():", "        return", "finally:",
     "    pass", "target()"],
    [True],
)
@pytest.mark.slow
def test_guarded_means_every_run_checked_first(body: list[str], decisions: list[bool]) -> None:
    source = "def f(d):\n" + "\n".join(_indent(body)) + "\n"
    try:
        compile(source, "<generated>", "exec")
    except SyntaxError:
        return  # e.g. `continue` in a finally block on old grammars
    guarded = static_guarded_targets(source)
    assert not (guarded & reached_unproved(source, decisions)), textwrap.indent(source, "  ")


def test_a_loop_on_a_flag_ends() -> None:
    # `while ok:` with nothing decided inside: the line budget ends the run
    source = "def f(d):\n    ok = d.may_answer()\n    while ok:\n        target()\n"
    assert reached_unproved(source, [True]) == set()
    assert static_guarded_targets(source) == {4}


def test_the_oracle_catches_an_unguarded_target() -> None:
    # negative control for the checker itself
    source = "def f(d):\n    if d.may_answer() or c():\n        target()\n"
    assert reached_unproved(source, [False, True]) == {3}
    assert static_guarded_targets(source) == set()
    guarded = "def f(d):\n    if not d.may_answer():\n        return\n    target()\n"
    assert static_guarded_targets(guarded) == {4}
    assert reached_unproved(guarded, [True]) == set()
