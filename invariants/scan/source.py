"""Turn raw bytes into source text, or a reason (with position) why they cannot be scanned.

libcst's native parser crashes the process on very deep bracket nesting and slows down
super-linearly on very long operator chains and on long chains of calls, subscripts and
attribute lookups (`y()()…`, `.a().b()…` over many lines), so these are screened here,
cheaply, before it is called. Nothing here imports or executes the scanned code.
"""

from __future__ import annotations

import ast
import io
import itertools
import re
import tokenize
from dataclasses import dataclass

# CPython itself refuses more than 200 nested brackets; libcst segfaults near 2000.
MAX_BRACKET_DEPTH = 200
# libcst's parse time grows super-linearly with the operators of one expression.
MAX_OPERATORS_PER_LINE = 1500
_LONG_LINE = re.compile(rb"[^\n]{3000,}")
# On one long line: operators, and the links of a call/subscript/attribute chain.
_OPERATOR = re.compile(rb"[-+*/%&|^@<>]|[)\]][ \t]*[(\[.]|\w\.\w")
# libcst's parse time grows with the square of a trailer chain's length, over lines too.
MAX_TRAILER_CHAIN = 500
_TRAILER_LINK = re.compile(rb"[)\]][ \t]*[(\[.]|\n[ \t]*\.\w")
_TRAILERS = (ast.Call, ast.Subscript, ast.Attribute)
# A line that ends (or the next one starts) with an operator continues an expression.
# Two plain patterns: one alternation with anchors and word operators is ten times slower.
_OPERATOR_ENDS_LINE = re.compile(rb"[-+*/%&|^@][ \t]*\n")
_OPERATOR_STARTS_LINE = re.compile(rb"\n[ \t]*[-+*/%&|^@]")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"()[]{}")
_DEPTH_STEP = {ord("("): 1, ord("["): 1, ord("{"): 1, ord(")"): -1, ord("]"): -1, ord("}"): -1}


@dataclass(frozen=True, slots=True)
class SourceProblem:
    """Why a file cannot be scanned, and where (1-based line and column)."""

    message: str
    line: int = 1
    column: int = 1


def _line_of(data: bytes, offset: int) -> tuple[int, int]:
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - line_start + 1


def decode_source(source: bytes, max_bytes: int) -> str | SourceProblem:
    """The decoded text of `source`, or the first problem that keeps it from being parsed."""
    if len(source) > max_bytes:
        return SourceProblem(f"file is {len(source)} bytes, over max_file_bytes={max_bytes}")
    nul = source.find(b"\x00")
    if nul >= 0:
        line, column = _line_of(source, nul)
        return SourceProblem("source contains a NUL byte (binary file?)", line, column)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    except SyntaxError as exc:
        return SourceProblem(f"bad encoding declaration: {exc}")
    try:
        text = source.decode(encoding)
    except UnicodeDecodeError as exc:
        line, column = _line_of(source, exc.start)
        return SourceProblem(f"cannot decode as {encoding}: {exc.reason}", line, column)
    except LookupError:
        return SourceProblem(f"unknown encoding {encoding!r}")
    return _screen_nesting(source, text) or text


def _screen_nesting(source: bytes, text: str) -> SourceProblem | None:
    brackets = source.translate(None, _NOT_BRACKETS)
    if brackets:
        depth = max(itertools.accumulate(map(_DEPTH_STEP.__getitem__, brackets)))
        # Brackets inside strings can inflate the count; CPython's parser settles it.
        if depth > MAX_BRACKET_DEPTH:
            problem = cpython_syntax_problem(text)
            if problem is not None:
                return problem
    problem = _long_chain(source) or _long_trailer_chain(source, text)
    if problem is not None:
        return problem
    for match in _LONG_LINE.finditer(source):
        operators = len(_OPERATOR.findall(match.group()))
        if operators > MAX_OPERATORS_PER_LINE:
            line, _ = _line_of(source, match.start())
            return SourceProblem(
                f"expression too large to parse ({operators} operators on one line)", line
            )
    return None


def _long_chain(source: bytes) -> SourceProblem | None:
    """An expression continued over more lines than MAX_OPERATORS_PER_LINE, one operator per
    line (generated code): as slow for libcst as the same chain on one line."""
    ends = _OPERATOR_ENDS_LINE.findall(source)
    starts = _OPERATOR_STARTS_LINE.findall(source)
    if len(ends) + len(starts) <= MAX_OPERATORS_PER_LINE:
        return None  # the common case: too few to form a run, whatever their places
    # 1-based numbers of the lines that continue onto the next one
    lines = {source.count(b"\n", 0, m.start()) + 1 for m in _OPERATOR_ENDS_LINE.finditer(source)}
    lines |= {source.count(b"\n", 0, m.start()) + 1 for m in _OPERATOR_STARTS_LINE.finditer(source)}
    run_start, previous = 0, -1
    for line in sorted(lines):
        run_start = run_start if line == previous + 1 else line
        previous = line
        if line - run_start >= MAX_OPERATORS_PER_LINE:
            return SourceProblem(
                f"expression too large to parse (continued over {MAX_OPERATORS_PER_LINE}+ "
                "lines by operators)",
                run_start,
            )
    return None


def _long_trailer_chain(source: bytes, text: str) -> SourceProblem | None:
    """A chain of more than MAX_TRAILER_CHAIN calls, subscripts or attribute lookups, found
    on CPython's own tree (its parser is linear) when the file has that many links at all."""
    # Every two links of a call/subscript chain, or of one spread over lines, leave at least
    # one marker; a long chain of bare attributes stands on one long line (checked above).
    if len(_TRAILER_LINK.findall(source)) <= MAX_TRAILER_CHAIN // 2:
        return None  # the common case: too few markers in the whole file to form one chain
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None  # libcst reports the syntax error itself
    except (RecursionError, MemoryError):
        long_line = _LONG_LINE.search(source)  # the likeliest place of the chain
        line = _line_of(source, long_line.start())[0] if long_line else 1
        return SourceProblem("expression too deep to parse", line)
    inner = {
        id(node.func if isinstance(node, ast.Call) else node.value)
        for node in ast.walk(tree)
        if isinstance(node, _TRAILERS)
    }
    for node in ast.walk(tree):
        if not isinstance(node, _TRAILERS) or id(node) in inner:
            continue
        links = 0
        link: ast.expr = node
        while isinstance(link, _TRAILERS):
            links += 1
            link = link.func if isinstance(link, ast.Call) else link.value
        if links > MAX_TRAILER_CHAIN:
            return SourceProblem(
                f"expression too large to parse (a chain of {links} calls, subscripts or "
                "attribute lookups)",
                node.lineno,
            )
    return None


def cpython_syntax_problem(text: str) -> SourceProblem | None:
    """CPython's verdict on `text` (parse only, never compiled or run): its error places
    the position better than libcst's does."""
    try:
        ast.parse(text)
    except SyntaxError as exc:
        return SourceProblem(f"syntax error: {exc.msg}", exc.lineno or 1, exc.offset or 1)
    except (RecursionError, MemoryError, ValueError) as exc:
        return SourceProblem(f"cannot parse: {type(exc).__name__}: {exc}")
    return None
