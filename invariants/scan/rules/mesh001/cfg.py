"""A per-function control-flow graph built from libcst, and dominance on it (networkx).

Nodes are integers. Every statement gets a node; a condition is split into one test node
per operand so `and`/`or`/`not` and conditional expressions short-circuit as Python runs
them. A test node that checks `may_answer()` on a delivery gets a *fact* node on its true
edge: whatever that fact node dominates runs only when the delivery may be answered. A
variable bound once in the function, to a check (`ok = d.may_answer()`, or a walrus), tests
as the check itself: where it is read, its one binding has run.

A `finally` body is built twice: once on the way out of a clean try (it falls through to
what follows), once for a pending return or exception (it ends by finishing that, never
falling through). A statement of a finally body has a node in each copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from invariants.scan.names import suite_body
from invariants.scan.rules.mesh001.flags import guard_flags
from invariants.scan.rules.mesh001.guards import guard_call, guarded_delivery

if TYPE_CHECKING:  # networkx costs 0.15 s to import: only scans that build a graph pay
    import networkx as nx

ENTRY, EXIT = 0, 1


@dataclass(slots=True)
class _Loop:
    head: int
    breaks: list[int] = field(default_factory=list)


@dataclass(slots=True)
class FunctionCfg:
    graph: nx.DiGraph
    node_of: dict[int, int]  # id(statement) -> node
    fact_delivery: dict[int, str]  # fact node -> delivery it proves answerable
    fact_guard: dict[int, cst.Call]  # fact node -> the may_answer() call
    # id(statement) -> its other nodes (a statement of a finally body has two or more)
    copies: dict[int, list[int]] = field(default_factory=dict)
    _idom: dict[int, int] | None = None

    def idom(self) -> dict[int, int]:
        if self._idom is None:
            import networkx as nx

            self._idom = nx.immediate_dominators(self.graph, ENTRY)
        return self._idom

    def facts_at(self, statement: int) -> dict[str, cst.Call] | None:
        """Deliveries proved answerable wherever the statement `id` runs (in every copy);
        None when it is not in this graph or never reached."""
        nodes = [self.node_of[statement]] if statement in self.node_of else []
        found = [self.dominating_facts(n) for n in (*nodes, *self.copies.get(statement, ()))]
        reached = [facts for facts in found if facts is not None]
        if not reached:
            return None
        return {d: call for d, call in reached[0].items() if all(d in f for f in reached[1:])}

    def dominating_facts(self, node: int) -> dict[str, cst.Call] | None:
        """Deliveries proved answerable on every path to `node`; None if unreachable.

        The immediate-dominator chain finds a single dominating check. A delivery checked
        in several places (`a.may_answer() if x else a.may_answer()`) is proved when its
        fact nodes together cut `node` off from the entry.
        """
        idom = self.idom()
        if node not in idom:
            return None
        found: dict[str, cst.Call] = {}
        current = node
        while current != ENTRY:
            delivery = self.fact_delivery.get(current)
            if delivery is not None and delivery not in found:
                found[delivery] = self.fact_guard[current]
            current = idom[current]
        by_delivery: dict[str, list[int]] = {}
        for fact, delivery in self.fact_delivery.items():
            by_delivery.setdefault(delivery, []).append(fact)
        for delivery, facts in by_delivery.items():
            if delivery in found or len(facts) < 2 or node in facts:
                continue
            import networkx as nx

            without = nx.restricted_view(self.graph, facts, [])
            if not nx.has_path(without, ENTRY, node):
                found[delivery] = self.fact_guard[facts[0]]
        return found


class _Builder:
    def __init__(
        self, guard_functions: Sequence[str], flags: dict[str, tuple[str, cst.Call]]
    ) -> None:
        self.guard_functions = guard_functions
        self.flags = flags  # variable -> (delivery, check) it holds
        self.copies: dict[int, list[int]] = {}
        import networkx as nx

        self.graph: nx.DiGraph = nx.DiGraph()
        self.graph.add_nodes_from((ENTRY, EXIT))
        self.node_of: dict[int, int] = {}
        self.fact_delivery: dict[int, str] = {}
        self.fact_guard: dict[int, cst.Call] = {}
        self.loops: list[_Loop] = []
        # Where an exception raised here may land: the innermost try's handlers/finally.
        self.raise_targets: list[list[int]] = [[EXIT]]
        # Where `return` goes: the exit, or an enclosing finally first.
        self.return_targets: list[int] = [EXIT]

    def new(self, preds: Sequence[int]) -> int:
        node: int = self.graph.number_of_nodes()
        self.graph.add_node(node)
        self.link(preds, node)
        for target in self.raise_targets[-1]:
            self.graph.add_edge(node, target)
        return node

    def link(self, preds: Sequence[int], node: int | Sequence[int]) -> None:
        for target in [node] if isinstance(node, int) else node:
            for pred in preds:
                self.graph.add_edge(pred, target)

    # -- conditions ------------------------------------------------------------------
    def condition(
        self, expr: cst.BaseExpression, preds: Sequence[int]
    ) -> tuple[list[int], list[int]]:
        """Build the tests of `expr`; return (nodes leaving on true, nodes leaving on false)."""
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            true, false = self.condition(expr.expression, preds)
            return false, true
        if isinstance(expr, cst.BooleanOperation):
            left_true, left_false = self.condition(expr.left, preds)
            if isinstance(expr.operator, cst.And):
                right_true, right_false = self.condition(expr.right, left_true)
                return right_true, left_false + right_false
            right_true, right_false = self.condition(expr.right, left_false)
            return left_true + right_true, right_false
        if isinstance(expr, cst.IfExp):
            test_true, test_false = self.condition(expr.test, preds)
            body_true, body_false = self.condition(expr.body, test_true)
            else_true, else_false = self.condition(expr.orelse, test_false)
            return body_true + else_true, body_false + else_false
        if isinstance(expr, cst.NamedExpr):  # `(ok := test)` is worth its test
            return self.condition(expr.value, preds)
        test = self.new(preds)
        delivery = guarded_delivery(expr, self.guard_functions)
        call = guard_call(expr)
        if isinstance(expr, cst.Name) and expr.value in self.flags:
            delivery, call = self.flags[expr.value]
        if delivery is None:
            return [test], [test]
        fact = self.new([test])
        assert isinstance(call, cst.Call)
        self.fact_delivery[fact] = delivery
        self.fact_guard[fact] = call
        return [fact], [test]

    # -- statements ------------------------------------------------------------------
    def block(self, statements: Sequence[cst.BaseStatement], preds: list[int]) -> list[int]:
        for statement in statements:
            preds = self.statement(statement, preds)
        return preds

    def statement(self, statement: cst.BaseStatement, preds: list[int]) -> list[int]:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                preds = self.small(small, preds)
            return preds
        if isinstance(statement, cst.If):
            return self.if_(statement, preds)
        if isinstance(statement, cst.While):
            return self.while_(statement, preds)
        if isinstance(statement, cst.For):
            return self.for_(statement, preds)
        if isinstance(statement, (cst.Try, cst.TryStar)):
            return self.try_(statement, preds)
        if isinstance(statement, cst.With):
            head = self.new(preds)
            self.node_of[id(statement)] = head
            return self.block(suite_body(statement.body), [head])
        if isinstance(statement, cst.Match):
            return self.match(statement, preds)
        # Nested def/class: defining it is one step; its body is another function.
        node = self.new(preds)
        self.node_of[id(statement)] = node
        return [node]

    def small(self, small: cst.BaseSmallStatement, preds: list[int]) -> list[int]:
        node = self.new(preds)
        self.node_of[id(small)] = node
        if isinstance(small, cst.Return):
            self.graph.add_edge(node, self.return_targets[-1])
            return []
        if isinstance(small, cst.Raise):
            self.graph.add_edge(node, EXIT)
            return []
        if isinstance(small, cst.Break) and self.loops:
            self.loops[-1].breaks.append(node)
            return []
        if isinstance(small, cst.Continue) and self.loops:
            self.graph.add_edge(node, self.loops[-1].head)
            return []
        if isinstance(small, cst.Assert):
            true, false = self.condition(small.test, [node])
            self.link(false, EXIT)
            return true
        return [node]

    def if_(self, statement: cst.If, preds: list[int]) -> list[int]:
        head = self.new(preds)
        self.node_of[id(statement)] = head
        true, false = self.condition(statement.test, [head])
        exits = self.block(suite_body(statement.body), true)
        if isinstance(statement.orelse, cst.If):
            return exits + self.if_(statement.orelse, false)
        if statement.orelse is not None:
            return exits + self.block(suite_body(statement.orelse.body), false)
        return exits + false

    def while_(self, statement: cst.While, preds: list[int]) -> list[int]:
        head = self.new(preds)
        self.node_of[id(statement)] = head
        forever = isinstance(statement.test, cst.Name) and statement.test.value == "True"
        true, false = ([head], []) if forever else self.condition(statement.test, [head])
        return self.loop_body(statement, head, true, false)

    def for_(self, statement: cst.For, preds: list[int]) -> list[int]:
        head = self.new(preds)
        self.node_of[id(statement)] = head
        return self.loop_body(statement, head, [head], [head])

    def loop_body(
        self, statement: cst.For | cst.While, head: int, true: list[int], false: list[int]
    ) -> list[int]:
        loop = _Loop(head)
        self.loops.append(loop)
        self.link(self.block(suite_body(statement.body), true), head)
        self.loops.pop()
        exits = false
        if statement.orelse is not None:
            exits = self.block(suite_body(statement.orelse.body), false)
        return exits + loop.breaks

    def try_(self, statement: cst.Try | cst.TryStar, preds: list[int]) -> list[int]:
        final: int | None = None
        if statement.finalbody is not None:
            final = self.graph.number_of_nodes()
            self.graph.add_node(final)
            self.return_targets.append(final)
        handlers = []
        for _ in statement.handlers:
            node: int = self.graph.number_of_nodes()
            self.graph.add_node(node)
            handlers.append(node)
        # Every statement of the body may raise into each handler (and the finally).
        self.raise_targets.append(handlers + ([final] if final is not None else []))
        head = self.new(preds)
        self.node_of[id(statement)] = head
        exits = self.block(suite_body(statement.body), [head])
        self.raise_targets.pop()
        if final is not None:
            self.raise_targets.append([final])
        if statement.orelse is not None:
            exits = self.block(suite_body(statement.orelse.body), exits)
        bodies: list[cst.BaseSuite] = [handler.body for handler in statement.handlers]
        for handler_node, body in zip(handlers, bodies, strict=True):
            exits = exits + self.block(suite_body(body), [handler_node])
        if final is None:
            return exits
        self.raise_targets.pop()
        self.return_targets.pop()
        assert statement.finalbody is not None
        final_body = suite_body(statement.finalbody.body)
        # A pending return or exception: the finally ends by finishing it (the enclosing
        # finally or handlers, else the exit), never by falling through.
        placed = set(self.node_of)
        pending = self.block(final_body, [final])
        self.link(pending, [self.return_targets[-1], *self.raise_targets[-1]])
        if not exits:
            return []
        first_copy = {key: node for key, node in self.node_of.items() if key not in placed}
        after = self.block(final_body, [self.new(exits)])  # the clean way out: falls through
        for key, node in first_copy.items():
            self.copies.setdefault(key, []).append(node)
        return after

    def match(self, statement: cst.Match, preds: list[int]) -> list[int]:
        head = self.new(preds)
        self.node_of[id(statement)] = head
        exits: list[int] = []
        pending = [head]
        for case in statement.cases:
            test = self.new(pending)
            if case.guard is not None:
                true, false = self.condition(case.guard, [test])
            else:
                true, false = [test], [test]
            exits += self.block(suite_body(case.body), true)
            pending = [] if _irrefutable(case) else false
        return exits + pending


def _irrefutable(case: cst.MatchCase) -> bool:
    pattern = case.pattern
    return case.guard is None and isinstance(pattern, cst.MatchAs) and pattern.pattern is None


def build_cfg(function: cst.FunctionDef, guard_functions: Sequence[str]) -> FunctionCfg:
    builder = _Builder(guard_functions, guard_flags(function, guard_functions))
    exits = builder.block(suite_body(function.body), [ENTRY])
    builder.link(exits, EXIT)
    return FunctionCfg(
        builder.graph, builder.node_of, builder.fact_delivery, builder.fact_guard,
        builder.copies,
    )
