"""Call sites and definitions for the MESH001 call graph: who calls what, whether the call
is guarded, and what each call may reach (a `targets` descriptor).

Definitions and imports come from the text (`textscan`) in every production file. A call
can only be guarded in a file that mentions a guard function; there the calls come from the
tree, with CFG dominance. Every other production file contributes its calls from the text
(all unguarded), which avoids a full tree visit of files that cannot guard anything.
Test files contribute nothing: tests call helpers directly on purpose.
"""

from __future__ import annotations

import libcst as cst

from invariants.scan.context import CallRecord, FileContext
from invariants.scan.names import dotted_name, last_part
from invariants.scan.rules.mesh001.emits import guard_covering, guards_at
from invariants.scan.rules.mesh001.keys import GUARD_FUNCTIONS
from invariants.scan.rules.mesh001.targets import Namer, target_name
from invariants.scan.rules.mesh001.textscan import blank_strings, calls, scopes


def reads_tree(ctx: FileContext) -> bool:
    """Only a production file that mentions a guard function has its calls read from the tree."""
    return not ctx.is_test and any(
        last_part(name) in ctx.text for name in GUARD_FUNCTIONS.of(ctx.config)
    )


def collect_call_sites(ctx: FileContext) -> None:
    if ctx.is_test:
        return
    code = blank_strings(ctx.text)
    found = scopes(code)
    namer = Namer(ctx.path, code, found)
    ctx.definitions.extend(namer.definitions)
    if reads_tree(ctx):
        _from_tree(ctx, namer)
        return
    for call in calls(code, found):
        scope = found[call.scope] if call.scope >= 0 else None
        symbol = scope.qualname if scope else ""
        method_of = scope.method_of if scope else None
        name = last_part(call.chain)
        if call.chain[0] == ".":
            receiver = "super" if call.super_receiver else "?"
            target: str | None = namer.on_expression(name, receiver, method_of)
        else:
            target = namer.chain(call.chain, symbol, method_of)
        if target is not None:
            ctx.call_site_at_line(call.line, symbol, target_name(target), target)


def _from_tree(ctx: FileContext, namer: Namer) -> None:
    seen: set[tuple[str, str, bool]] = set()
    for record in ctx.calls:
        func = record.node.func
        scopes = _scopes(record)
        symbol = ".".join(scope.name.value for scope in scopes)
        method_of = _method_of(scopes)
        chain = dotted_name(func)
        if chain is not None:
            name = last_part(chain)
            target = namer.chain(chain, symbol, method_of)
        elif isinstance(func, cst.Attribute):
            name = func.attr.value
            value = func.value
            is_super = (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Name)
                and value.func.value == "super"
                and not value.args  # `super(C, self)` may skip classes: any receiver
            )
            target = namer.on_expression(name, "super" if is_super else "?", method_of)
        else:
            continue  # `handlers[kind](d)`, `(lambda: x)()`: no name to follow
        if target is None:
            continue
        guards = guards_at(ctx, record)
        passed = [dotted_name(arg.value) for arg in record.node.args]
        receiver = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
        # `d.nack(error)` after `d.may_answer()`: the receiver is passed too (as self)
        guarded = receiver in guards or any(arg and guard_covering(arg, guards) for arg in passed)
        key = (symbol, target, guarded)
        if key not in seen:  # one site per (caller, target, guard status) is enough
            seen.add(key)
            ctx.call_site(record.node, symbol, target_name(target), guarded, target)


Definer = cst.FunctionDef | cst.ClassDef


def _scopes(record: CallRecord) -> list[Definer]:
    """The defs and classes the call runs in. A decorator runs where its def stands, so the
    call `@retry(limit())` belongs to the enclosing scope, as the text scan has it."""
    scopes: list[Definer] = []
    for node, inner in zip(record.ancestors, (*record.ancestors[1:], record.node), strict=True):
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and not isinstance(
            inner, cst.Decorator
        ):
            scopes.append(node)
    return scopes


def _method_of(scopes: list[Definer]) -> tuple[str, str] | None:
    """(class qualname, first parameter) of the method the call sits in, the innermost def
    directly in a class body (a closure inside a method sees the method's `self`)."""
    method_of: tuple[str, str] | None = None
    for index, scope in enumerate(scopes):
        if isinstance(scope, cst.ClassDef):
            method_of = None  # a class body binds no `self`
        elif index and isinstance(scopes[index - 1], cst.ClassDef):
            params = [*scope.params.posonly_params, *scope.params.params]
            qualname = ".".join(s.name.value for s in scopes[:index])
            static = any(dotted_name(d.decorator) == "staticmethod" for d in scope.decorators)
            method_of = (qualname, params[0].name.value) if params and not static else None
    return method_of
