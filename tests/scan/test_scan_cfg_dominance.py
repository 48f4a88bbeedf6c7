"""The per-function control-flow graph and dominance, one construct at a time.

Each case marks the statement under test with a call to `target()` and asks whether a
`d.may_answer()` true edge dominates it. Every guarded shape has an unguarded twin.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from invariants.scan.rules.mesh001.cfg import ENTRY, EXIT, build_cfg

GUARDS = ("may_answer",)


def guarded_deliveries(source: str) -> set[str] | None:
    """Deliveries proved answerable at the `target()` statement (None: unreachable)."""
    module = cst.parse_module(textwrap.dedent(source))
    function = module.body[0]
    assert isinstance(function, cst.FunctionDef)
    cfg = build_cfg(function, GUARDS)
    targets = [
        key
        for key in cfg.node_of
        for small in _smalls(function)
        if id(small) == key and "target()" in module.code_for_node(small)
    ]
    assert len(targets) == 1, "each case has one target() statement"
    facts = cfg.facts_at(targets[0])  # in every copy (a finally body has two)
    return None if facts is None else set(facts)


def _smalls(function: cst.FunctionDef) -> list[cst.BaseSmallStatement]:
    found: list[cst.BaseSmallStatement] = []

    class Smalls(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, cst.BaseSmallStatement):
                found.append(node)
            return True

    function.visit(Smalls())
    return found


GUARDED = {
    "if-true-branch": """
        def f(d):
            if d.may_answer():
                target()
        """,
    "early-return": """
        def f(d):
            if not d.may_answer():
                return
            target()
        """,
    "early-raise": """
        def f(d):
            if not d.may_answer():
                raise ValueError
            target()
        """,
    "function-form": """
        def f(d):
            if may_answer(d):
                target()
        """,
    "and-true-edge": """
        def f(d, x):
            if x and d.may_answer() and x:
                target()
        """,
    "not-or-false-edge": """
        def f(d, x):
            if not d.may_answer() or x:
                return
            target()
        """,
    "ifexp-in-condition": """
        def f(d, x):
            if (d.may_answer() if x else d.may_answer()):
                target()
        """,
    "elif-guard": """
        def f(d, x):
            if x:
                pass
            elif d.may_answer():
                target()
        """,
    "elif-chain-all-return": """
        def f(d, x, y):
            if not d.may_answer():
                return
            elif x:
                pass
            else:
                pass
            target()
        """,
    "while-condition": """
        def f(d):
            while d.may_answer():
                target()
        """,
    "loop-continue-guard": """
        def f(ds):
            for d in ds:
                if not d.may_answer():
                    continue
                target()
        """,
    "while-true-break": """
        def f(d):
            while True:
                if d.may_answer():
                    break
            target()
        """,
    "try-finally-after-guard": """
        def f(d):
            if not d.may_answer():
                return
            try:
                pass
            finally:
                target()
        """,
    "guard-in-try-body-then-else": """
        def f(d):
            try:
                if not d.may_answer():
                    return
            except OSError:
                return
            else:
                target()
        """,
    # `except*` handlers are wired as `except` handlers are (they cannot return)
    "star-guard-in-try-body-then-else": """
        def f(d):
            try:
                if not d.may_answer():
                    return
            except* OSError:
                raise
            else:
                target()
        """,
    "star-handler-after-guard": """
        def f(d):
            if not d.may_answer():
                return
            try:
                work()
            except* OSError:
                target()
        """,
    "with-body": """
        def f(d):
            if not d.may_answer():
                return
            with open_it():
                target()
        """,
    "match-case-guard": """
        def f(d, m):
            match m:
                case 1 if d.may_answer():
                    target()
        """,
    "assert": """
        def f(d):
            assert d.may_answer()
            target()
        """,
}

UNGUARDED = {
    "no-check": """
        def f(d):
            target()
        """,
    "or-true-edge": """
        def f(d, x):
            if d.may_answer() or x:
                target()
        """,
    "false-branch": """
        def f(d):
            if d.may_answer():
                pass
            else:
                target()
        """,
    "bare-call": """
        def f(d):
            d.may_answer()
            target()
        """,
    "after-if-without-return": """
        def f(d):
            if d.may_answer():
                pass
            target()
        """,
    "elif-other-branch": """
        def f(d, x):
            if d.may_answer():
                pass
            elif x:
                target()
        """,
    "loop-may-run-zero-times": """
        def f(d, xs):
            for x in xs:
                if not d.may_answer():
                    return
            target()
        """,
    "while-else-after-guard-in-body": """
        def f(d, x):
            while x:
                if not d.may_answer():
                    return
            else:
                target()
        """,
    "break-skips-guard": """
        def f(d, xs):
            for x in xs:
                if x:
                    break
                if not d.may_answer():
                    return
            else:
                return
            target()
        """,
    "handler-reached-from-before-guard": """
        def f(d):
            try:
                work()
                if not d.may_answer():
                    return
            except OSError:
                target()
        """,
    "star-handler-reached-from-before-guard": """
        def f(d):
            try:
                work()
                if not d.may_answer():
                    return
            except* OSError:
                target()
        """,
    "star-guard-in-one-handler-not-the-next": """
        def f(d):
            try:
                work()
            except* OSError:
                assert d.may_answer()
            except* ValueError:
                target()
        """,
    "finally-reached-from-before-guard": """
        def f(d):
            try:
                if not d.may_answer():
                    return
            finally:
                target()
        """,
    "match-other-case": """
        def f(d, m):
            match m:
                case 1:
                    if not d.may_answer():
                        return
                case _:
                    pass
            target()
        """,
    "ifexp-one-arm": """
        def f(d, x):
            if (d.may_answer() if x else True):
                target()
        """,
}


@pytest.mark.parametrize("source", GUARDED.values(), ids=GUARDED.keys())
def test_guarded_shapes_dominate_the_target(source: str) -> None:
    assert guarded_deliveries(source) == {"d"}


@pytest.mark.parametrize("source", UNGUARDED.values(), ids=UNGUARDED.keys())
def test_unguarded_shapes_do_not(source: str) -> None:
    assert guarded_deliveries(source) == set()


def test_guard_names_its_own_delivery() -> None:
    source = """
        def f(d, other):
            if other.may_answer() and may_answer(self.delivery):
                target()
        """
    assert guarded_deliveries(source) == {"other", "self.delivery"}


def test_code_after_return_is_unreachable() -> None:
    source = """
        def f(d):
            return
            target()
        """
    assert guarded_deliveries(source) is None


def test_every_node_reaches_exit_and_entry_reaches_every_statement() -> None:
    module = cst.parse_module(
        textwrap.dedent(GUARDED["try-finally-after-guard"] + GUARDED["match-case-guard"])
    )
    for function in module.body:
        assert isinstance(function, cst.FunctionDef)
        cfg = build_cfg(function, GUARDS)
        idom = cfg.idom()
        assert all(node in idom for node in cfg.node_of.values())
        assert ENTRY in cfg.graph and EXIT in cfg.graph
