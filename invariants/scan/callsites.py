"""Call sites for the MESH001 call graph: who calls what, and whether the call is guarded.

A call can only be guarded in a file that mentions a guard function; there the calls come
from the tree, with CFG dominance. Every other production file contributes its calls from
a cheap line scan (all unguarded) over the text with string literals and comments blanked
out, which avoids a full tree visit of files that cannot guard anything. Test files
contribute no callers: tests call helpers directly on purpose.
"""

from __future__ import annotations

import keyword
import re

from invariants.scan.context import FileContext
from invariants.scan.names import dotted_name, last_part, source_lines
from invariants.scan.rules.mesh001_unguarded_emit import guard_covering, guards_at

_DEF = re.compile(r"(?:async\s+)?(?:def|class)\s+(\w+)")
_CALL = re.compile(r"(\w+)\s*\(")
# String literals (triple-quoted first) and comments, in one alternation so that a quote in
# a comment or a `#` in a string is read the way the tokenizer reads it.
_TRIPLE_SINGLE = r"'''(?:[^'\\]|\\.|'(?!''))*'''"
_TRIPLE_DOUBLE = r'"""(?:[^"\\]|\\.|"(?!""))*"""'
_SINGLE = r"'(?:[^'\\\n]|\\.)*'"
_DOUBLE = r'"(?:[^"\\\n]|\\.)*"'
_STRINGS_AND_COMMENTS = re.compile(
    rf"[rRbBuUfF]{{0,2}}(?:{_TRIPLE_SINGLE}|{_TRIPLE_DOUBLE}|{_SINGLE}|{_DOUBLE})|#[^\n]*"
)
_NOT_CALLS = frozenset(keyword.kwlist) | {"print", "super", "isinstance", "len", "str", "int"}


def collect_call_sites(ctx: FileContext) -> None:
    if ctx.is_test:
        return
    if any(last_part(name) in ctx.text for name in ctx.config.guard_functions):
        _from_tree(ctx)
    else:
        _from_lines(ctx)


def _from_tree(ctx: FileContext) -> None:
    seen: set[tuple[str, str, bool]] = set()
    for record in ctx.calls:
        func = dotted_name(record.node.func)
        if func is None:
            continue
        callee = last_part(func)
        guards = guards_at(ctx, record)
        passed = [dotted_name(arg.value) for arg in record.node.args]
        guarded = any(name and guard_covering(name, guards) for name in passed)
        key = (record.symbol, callee, guarded)
        if key not in seen:  # one site per (caller, callee, guard status) is enough
            seen.add(key)
            ctx.call_site(record.node, record.symbol, callee, guarded)


def _from_lines(ctx: FileContext) -> None:
    scopes: list[tuple[int, str]] = []  # (indent, name) of the enclosing defs/classes
    seen: set[tuple[str, str]] = set()
    code = _STRINGS_AND_COMMENTS.sub(_blank, ctx.text)
    for number, line in enumerate(source_lines(code), start=1):
        body = line.lstrip()
        if "(" not in body and not body.startswith("class "):
            continue  # no call here, and not a scope that a later call needs
        indent = len(line) - len(body)
        while scopes and scopes[-1][0] >= indent:
            scopes.pop()
        caller = ".".join(name for _, name in scopes)
        definition = _DEF.match(body)
        if definition is not None:
            scopes.append((indent, definition.group(1)))
            body = body[definition.end() :]
        for callee in _CALL.findall(body):
            if callee in _NOT_CALLS or (caller, callee) in seen:
                continue
            seen.add((caller, callee))
            ctx.call_site_at_line(number, caller, callee)


def _blank(match: re.Match[str]) -> str:
    """A literal or comment becomes an empty string that keeps the line count."""
    text = match.group()
    return ("" if text.startswith("#") else '""') + "\n" * text.count("\n")
