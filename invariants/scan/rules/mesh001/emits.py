"""MESH001, per file: every emit site (a DeliveryFailure construction) with its guard status:
dominance in the function's control-flow graph, plus `and`/`or`/conditional-expression
guards inside one statement. The findings come from the tree pass (`tree`), which may still
clear an unguarded site whose every caller is guarded."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import libcst as cst

from invariants.scan.context import CallRecord, FileContext
from invariants.scan.deep import run_deep
from invariants.scan.names import dotted_name, last_part, matches_last
from invariants.scan.rules.mesh001.cfg import FunctionCfg, build_cfg
from invariants.scan.rules.mesh001.guards import facts_on_the_way
from invariants.scan.rules.mesh001.keys import EMIT_CONSTRUCTORS, GUARD_FUNCTIONS

RULE_ID = "MESH001"


def applies(ctx: FileContext) -> bool:
    # Tests build failures to feed a mesh; emit sites are a property of production code.
    return not ctx.is_test


def prefilter(ctx: FileContext) -> bool:
    """An emit site is a call whose (alias-expanded) last name is a constructor's: the name
    is in the text, at the call or in the import that renames it."""
    return any(last_part(name) in ctx.text for name in EMIT_CONSTRUCTORS.of(ctx.config))


def cfg_of(
    ctx: FileContext, function: cst.FunctionDef, guards: Sequence[str] | None = None
) -> FunctionCfg:
    """The function's control-flow graph, with fact nodes for checks by `guards` (default:
    MESH001's `guard_functions`), built once per file."""
    names = tuple(GUARD_FUNCTIONS.of(ctx.config) if guards is None else guards)

    def build() -> FunctionCfg:
        return run_deep(lambda: build_cfg(function, names))

    return ctx.memo(("MESH001-cfg", names, id(function)), build)


# The keywords that name the delivery a failure answers: the usual name, and the reference
# `DeliveryFailure`'s own parameter (`DeliveryFailure(answers=d.id, error=...)`).
ANSWERED_KEYWORDS = frozenset({"delivery", "answers"})


def answered_delivery(call: cst.Call) -> str | None:
    """The delivery a failure answers: `delivery=` or `answers=`, else the first positional
    argument."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ANSWERED_KEYWORDS:
            return dotted_name(arg.value)
    for arg in call.args:
        if arg.keyword is None and arg.star == "":
            return dotted_name(arg.value)
    return None


def guards_at(
    ctx: FileContext, record: CallRecord, guards: Sequence[str] | None = None
) -> dict[str, cst.Call]:
    """Deliveries proved answerable wherever `record` runs (empty outside functions), by
    checks of `guards` (default: MESH001's `guard_functions`)."""
    names = tuple(GUARD_FUNCTIONS.of(ctx.config) if guards is None else guards)
    function = record.function
    statement = record.statement
    known: dict[str, cst.Call] = {}
    if statement is not None:
        inside = record.ancestors[record.ancestors.index(statement) + 1 :]
        known.update(facts_on_the_way(inside, record.node, names))
    if function is None or statement is None:
        return known
    cfg = cfg_of(ctx, function, names)
    if id(statement) not in cfg.node_of:  # a decorator or default argument: runs outside
        return known
    known = {**(cfg.facts_at(id(statement)) or {}), **known}
    # A closure runs only after its `def` has: what guards the def guards its body.
    nested = [n for n in record.ancestors if isinstance(n, cst.FunctionDef)]
    for inner, outer in itertools.pairwise(reversed(nested)):
        outer_cfg = cfg_of(ctx, outer, names)
        if id(inner) not in outer_cfg.node_of:
            break
        known = {**(outer_cfg.facts_at(id(inner)) or {}), **known}
    return known


def check(ctx: FileContext) -> None:
    constructors = EMIT_CONSTRUCTORS.of(ctx.config)
    for record in ctx.calls:
        name = ctx.name_of(record.node.func)
        if name is None or not matches_last(name, constructors):
            continue
        delivery = answered_delivery(record.node)
        guard = guard_covering(delivery, guards_at(ctx, record)) if delivery is not None else None
        ctx.emit_site(record.node, record.symbol, guard)


def guard_covering(delivery: str, guards: dict[str, cst.Call]) -> cst.Call | None:
    """The check on `d` also covers a failure built from `d.id` (the id it answers)."""
    name = delivery
    while name not in guards:
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return guards[name]
