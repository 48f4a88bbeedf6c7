"""Facts read from a file's text without parsing it: where functions and classes are
defined, what the file imports, and which names it calls, for the MESH001 call graph.

Everything works on *code*: the text with string literals and comments blanked out (line
count kept), except the replacement fields of f-strings, which are code and stay. Scopes
come from indentation; calls from a regex over the whole text, not a loop over lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# String literals (triple-quoted first) and comments, in one alternation so that a quote in
# a comment or a `#` in a string is read the way the tokenizer reads it. A prefix (r, b, f)
# does not change where a literal ends, so it is left out: the pattern then starts with a
# quote or `#`, which the regex engine finds twice as fast.
_TRIPLE_SINGLE = r"'''(?:[^'\\]|\\.|'(?!''))*'''"
_TRIPLE_DOUBLE = r'"""(?:[^"\\]|\\.|"(?!""))*"""'
_SINGLE = r"'(?:[^'\\\n]|\\.)*'"
_DOUBLE = r'"(?:[^"\\\n]|\\.)*"'
# DOTALL: a backslash escapes a newline too (`"""\` + newline starts many docstrings).
_STRINGS_AND_COMMENTS = re.compile(
    rf"{_TRIPLE_SINGLE}|{_TRIPLE_DOUBLE}|{_SINGLE}|{_DOUBLE}|#[^\n]*", re.DOTALL
)
_PREFIX_LETTERS = "rRbBuUfF"
_QUOTES = "'\""
_OPENERS, _CLOSERS = "([{", ")]}"


def blank_strings(text: str) -> str:
    """`text` with every literal an empty string and every comment gone, lines kept.

    An f-string's replacement fields are code (`f"{nack(d)}"` calls nack): they are kept,
    moved onto the literal's first line so that no kept text can look like a dedent.
    """
    return _STRINGS_AND_COMMENTS.sub(_blank, text)


def _blank(match: re.Match[str]) -> str:
    text = match.group()
    if text[0] == "#":
        return ""
    # Each newline of the literal starts a line with `"`, which never ends a scope: what
    # follows the literal on its last line (`""" % args`) must not read as a dedent.
    newlines = '\n"' * text.count("\n")
    if "{" not in text or not _is_fstring(match.string, match.start()):
        return '""' + newlines
    width = 3 if text[:3] in ("'''", '"""') else 1
    fields = replacement_fields(text[width : len(text) - width])
    # `;` between fields: `f"{a}{(b)}"` must not read as a call `a (b)`
    code = " ; ".join(blank_strings(field).replace("\n", " ") for field in fields)
    return f'"" {code} {newlines}' if code else '""' + newlines


def _is_fstring(text: str, quote: int) -> bool:
    """Whether the literal opening at `quote` has an f prefix (`f`, `rf`, `Fr`, ...)."""
    start = quote
    while start > 0 and quote - start < 3 and text[start - 1] in _PREFIX_LETTERS:
        start -= 1
    prefix = text[start:quote]
    if len(prefix) > 2 or (start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_")):
        return False  # a name that ends in f (`elif"x"` is not an f-string)
    return "f" in prefix or "F" in prefix


def replacement_fields(body: str) -> list[str]:
    """The `{...}` fields of an f-string body (conversion and format spec included; nested
    fields of a format spec stay inside their field). `{{` is a literal brace."""
    fields: list[str] = []
    start = body.find("{")
    while start >= 0:
        if body.startswith("{{", start):
            start = body.find("{", start + 2)
            continue
        depth, quote, end = 0, "", start + 1
        while end < len(body):
            char = body[end]
            if quote:
                quote = "" if char == quote else quote
            elif char in _QUOTES:
                quote = char
            elif char in _OPENERS:
                depth += 1
            elif char in _CLOSERS:
                if depth == 0:
                    break
                depth -= 1
            end += 1
        fields.append(body[start + 1 : end])  # an unclosed field keeps the rest: still code
        start = body.find("{", end + 1)
    return fields


# -- scopes ---------------------------------------------------------------------------------

# Patterns that start with a literal word are found at C speed; whether the word starts
# its line (after indentation, or `async`) is checked per match, which is rare.
_DEF = re.compile(r"def[ \t]++(\w++)[ \t]*+(\(?)")
_CLASS = re.compile(r"class[ \t]++(\w++)[ \t]*+(\(?)")
_FIRST_PARAMETER = re.compile(r"\s*(\w+)")
_CLASS_BASES = re.compile(r"[^()]*")
_BASE_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:[ \t]*\.[ \t]*\w+)*)(?![\w \t]*[=(.])")
_DEDENTS: dict[int, re.Pattern[str]] = {}


def _dedent(indent: int) -> re.Pattern[str]:
    """A line indented no deeper than `indent`. Neither a closing bracket (as in a multi-line
    `def f(\\n    a,\\n):` header) nor a line of a blanked literal (it starts with `"`, see
    `_blank`) ends a scope; blank lines never do."""
    pattern = _DEDENTS.get(indent)
    if pattern is None:
        pattern = re.compile(rf"\n(?=[ \t]{{0,{indent}}}[^ \t\f\r\n)\]}}\"])")
        _DEDENTS[indent] = pattern
    return pattern


@dataclass(frozen=True, slots=True)
class Scope:
    """A `def` or `class` and the text its body spans."""

    start: int  # offset of the header line
    end: int  # offset where the body ends
    parent: int  # index of the enclosing scope in `scopes()`, -1 at module level
    name_end: int  # offset just past the defined name: the body's calls start after it
    qualname: str
    is_class: bool
    bases: tuple[str, ...]  # a class's base expressions as written (dotted names)
    # (class qualname, first parameter) of the method this scope is or sits in, for
    # `self.m()`; None outside methods (and in class bodies, where `self` is not bound).
    method_of: tuple[str, str] | None


def scopes(code: str) -> list[Scope]:
    """Every def and class, in source order, each with the enclosing ones' names.

    A scope ends at the first later line indented no deeper than its header. Each open
    scope resumes its search where its last closed child ended (that child's body was
    deeper still), so every line is searched about once, whatever the nesting.
    """
    headers = _headers(code)
    ends = [len(code)] * len(headers)
    parents = [-1] * len(headers)
    resume: list[int] = []  # per open scope, where its search for a dedent goes on
    stack: list[int] = []  # indices of the open scopes, innermost last

    def close_until(limit: int, indent: int | None) -> None:
        """Close the open scopes that end before `limit`; a header there at `indent`
        closes every open scope at least as shallow."""
        while stack:
            top = stack[-1]
            depth = headers[top].indent
            found = _dedent(depth).search(code, resume[-1], limit)
            if found is None and (indent is None or indent > depth):
                resume[-1] = max(resume[-1], limit - 1)
                return
            ends[top] = found.start() if found else max(resume[-1], limit - 1)
            stack.pop()
            resume.pop()
            if resume:
                resume[-1] = ends[top]

    for index, match in enumerate(headers):
        close_until(match.start, match.indent)
        parents[index] = stack[-1] if stack else -1
        line_end = code.find("\n", match.name_end)
        stack.append(index)
        resume.append(line_end if line_end >= 0 else len(code))
    close_until(len(code), None)
    return _built(code, headers, ends, parents)


@dataclass(frozen=True, slots=True)
class _Header:
    start: int  # offset of its line
    indent: int
    is_class: bool
    name: str
    name_end: int
    paren: int  # offset of the `(` after the name, -1 when there is none


def _is_static(code: str, start: int) -> bool:
    """Whether the decorator lines right above the header at `start` hold @staticmethod."""
    while start > 0:
        above = code.rfind("\n", 0, start - 1) + 1
        line = code[above : start - 1].strip()
        if not line.startswith("@"):
            return False
        if line.startswith("@staticmethod"):
            return True
        start = above
    return False


def _statement_start(code: str, at: int) -> tuple[int, int] | None:
    """(line start, indentation) when only indentation precedes `at` on its line."""
    start = code.rfind("\n", 0, at) + 1
    before = code[start:at]
    return (start, len(before)) if before.strip(" \t") == "" else None


def _header_line(code: str, at: int) -> tuple[int, int] | None:
    """(line start, indentation) when only indentation, or `async`, precedes `at`."""
    start = code.rfind("\n", 0, at) + 1
    before = code[start:at]
    if before and (before[-1] not in " \t" or before.strip(" \t") not in ("", "async")):
        return None
    return start, len(before) - len(before.lstrip(" \t"))


def _headers(code: str) -> list[_Header]:
    found: list[_Header] = []
    for pattern, is_class in ((_DEF, False), (_CLASS, True)):
        for match in pattern.finditer(code):
            line = _header_line(code, match.start())
            if line is None:
                continue
            paren = match.start(2) if match.group(2) else -1
            found.append(_Header(*line, is_class, match.group(1), match.end(1), paren))
    found.sort(key=lambda header: header.start)
    return found


def _built(code: str, headers: list[_Header], ends: list[int], parents: list[int]) -> list[Scope]:
    found: list[Scope] = []
    for index, header in enumerate(headers):
        parent = found[parents[index]] if parents[index] >= 0 else None
        is_class = header.is_class
        qualname = f"{parent.qualname}.{header.name}" if parent else header.name
        bases: tuple[str, ...] = ()
        method_of = parent.method_of if parent else None
        if is_class:
            method_of = None
            if header.paren >= 0:
                listed = _CLASS_BASES.match(code, header.paren + 1)
                text = listed.group() if listed else ""
                bases = tuple(_squeeze(b) for b in _BASE_NAME.findall(text))
        elif parent is not None and parent.is_class:
            first = _FIRST_PARAMETER.match(code, header.paren + 1) if header.paren >= 0 else None
            static = _is_static(code, header.start)
            method_of = (parent.qualname, first.group(1)) if first and not static else None
        found.append(
            Scope(
                header.start, ends[index], parents[index], header.name_end, qualname, is_class,
                bases, method_of,
            )
        )
    return found


def _squeeze(dotted: str) -> str:
    return dotted.translate(_SPACE)


_SPACE = str.maketrans("", "", " \t\\\n")


# -- imports --------------------------------------------------------------------------------

_IMPORT = re.compile(r"import[ \t]++([^\n;]+)")
_FROM_IMPORT = re.compile(r"from[ \t]++(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n;]*)")
_ALIAS = re.compile(r"([\w.]+)(?:\s+as\s+(\w+))?")


def imports(code: str, package: str) -> dict[str, str]:
    """Local name -> absolute dotted name it is bound to, from every import in the file
    (function-level ones too: over-approximation only widens what a name may reach),
    relative imports resolved against `package`. A star import binds nothing known."""
    bound: dict[str, str] = {}
    for match in _IMPORT.finditer(code):
        if _statement_start(code, match.start()) is None:
            continue  # the `import` of `from x import y`, or part of a longer name
        for name, alias in _ALIAS.findall(match.group(1)):
            if alias:
                bound[alias] = name
            else:
                head = name.partition(".")[0]
                bound[head] = head  # `import a.b` binds `a`
    for match in _FROM_IMPORT.finditer(code):
        if _statement_start(code, match.start()) is None:
            continue
        dots, module, names = match.groups()
        base = _absolute(dots, module, package)
        for name, alias in _ALIAS.findall(names.strip("()")):
            bound[alias or name] = f"{base}.{name}" if base else name
    return bound


def _absolute(dots: str, module: str, package: str) -> str:
    if not dots:
        return module
    parts = package.split(".") if package else []
    parts = parts[: max(0, len(parts) - (len(dots) - 1))]
    return ".".join([*parts, module] if module else parts)


# -- calls ----------------------------------------------------------------------------------

# Calls are found on the text read backwards: there every match starts with a literal `(`,
# which the regex engine skips to at C speed (five times faster than a forward pattern that
# must try every position). Read backwards, a call is `(`, the dotted chain before it, and
# a dot before that when the receiver is an expression (`make().nack(`, `"".join(`).
# Space around a dot may hold backslash continuations (`\\` + newline, read backwards).
_SPACE_BACKWARDS = r"[ \t]*+(?:\n\\[ \t]*+)*+"
_CALL_BACKWARDS = re.compile(
    rf"\({_SPACE_BACKWARDS}(\w++(?:{_SPACE_BACKWARDS}\.{_SPACE_BACKWARDS}\w++)*+)({_SPACE_BACKWARDS}\.)?"
)
_SUPER_BACKWARDS = re.compile(r"[ \t]*+\)[ \t]*+\(repus(?!\w)")


@dataclass(frozen=True, slots=True)
class TextCall:
    line: int
    scope: int  # index of the innermost def/class holding the call, -1 at module level
    chain: str  # "nack", "self.nack", "a.b.nack"; ".nack" after an expression
    super_receiver: bool  # `super().nack(`


def calls(code: str, found: list[Scope]) -> list[TextCall]:
    """Every call by name, once per (scope, chain).

    The text is cut into runs that lie in one innermost scope (a header's name ends the run
    before it, so `def f(` is not a call), and each run is searched on its own.
    """
    result: list[TextCall] = []
    seen: set[tuple[int, str]] = set()
    backwards = code[::-1]
    size = len(code)
    cursor, cursor_line = 0, 1  # a known (offset, line) pair, moved to each new call

    def search(start: int, stop: int, scope: int) -> None:
        nonlocal cursor, cursor_line
        for match in _CALL_BACKWARDS.finditer(backwards, size - stop, size - start):
            chain = match.group(1)[::-1]
            expression = match.group(2) is not None
            is_super = (  # `super().nack(`, not `super().value.split(`
                expression
                and "." not in chain
                and _SUPER_BACKWARDS.match(backwards, match.end()) is not None
            )
            key = (scope, ("super." if is_super else "." if expression else "") + chain)
            if key in seen:
                continue
            seen.add(key)
            at = size - match.end(1)
            if at >= cursor:
                cursor_line += code.count("\n", cursor, at)
            else:
                cursor_line -= code.count("\n", at, cursor)
            cursor = at
            chain = _squeeze(chain)
            result.append(
                TextCall(cursor_line, scope, "." + chain if expression else chain, is_super)
            )

    stack: list[int] = []
    position = 0
    for index, scope in enumerate(found):
        while stack and found[stack[-1]].end <= scope.start:
            top = stack.pop()
            search(position, found[top].end, top)
            position = found[top].end
        search(position, scope.name_end, stack[-1] if stack else -1)
        stack.append(index)
        position = scope.name_end
    while stack:
        top = stack.pop()
        search(position, found[top].end, top)
        position = found[top].end
    search(position, len(code), -1)
    return result
