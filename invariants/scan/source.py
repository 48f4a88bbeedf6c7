"""From raw bytes to the text libcst parses: CPython's verdict first, then libcst's screens.

MESH000 is the running interpreter's verdict: a file is a parse error exactly when
`compile()` rejects it (`cpython_verdict`), with CPython's message and position. compile()
only translates the source to bytecode; nothing here imports or executes the scanned code.

A file CPython accepts may still be beyond libcst: its native parser slows down
super-linearly on very long operator chains and on long chains of calls, subscripts and
attribute lookups (`y()()…`, `.a().b()…` over many lines), so these are screened here,
cheaply, before it is called (`screen`). Such a file is "not analysed", a scan error, and
never a finding.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings
from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class SourceProblem:
    """Why a file cannot be scanned, and where (1-based line and column)."""

    message: str
    line: int = 1
    column: int = 1


def _line_of(data: bytes, offset: int) -> tuple[int, int]:
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - line_start + 1


def cpython_verdict(source: bytes, path: str) -> SourceProblem | None:
    """Why the running interpreter refuses `source`, or None when it compiles. Warnings
    (an invalid escape is a SyntaxWarning or DeprecationWarning) are never errors here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(source, path, "exec", dont_inherit=True)
        except SyntaxError as exc:
            return _nul_problem(source) or SourceProblem(
                f"syntax error: {exc.msg}", max(exc.lineno or 1, 1), max(exc.offset or 1, 1)
            )
        except ValueError as exc:  # NUL bytes, on some versions
            return _nul_problem(source) or SourceProblem(f"cannot compile: {exc}")
        except (RecursionError, MemoryError) as exc:  # an import would fail the same way
            long_line = _LONG_LINE.search(source)  # the likeliest place of the culprit
            line = _line_of(source, long_line.start())[0] if long_line else 1
            return SourceProblem(f"cannot compile: {type(exc).__name__}: {exc}", line)
    return None


def _nul_problem(source: bytes) -> SourceProblem | None:
    """CPython's NUL-byte error has no position; this one does."""
    nul = source.find(b"\x00")
    if nul < 0:
        return None
    line, column = _line_of(source, nul)
    return SourceProblem("source contains a NUL byte (binary file?)", line, column)


def source_text(source: bytes) -> str:
    """The text of a file CPython accepted, decoded the way CPython read it. Where the
    tokenize module disagrees (a coding comment after a lone CR, which CPython reads as a
    line break; invalid UTF-8 in a comment, which CPython never decodes) CPython's reading
    wins: UTF-8, and undecodable bytes (only ever in comments) replaced."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return source.decode("utf-8-sig", "replace")


def screen(source: bytes) -> SourceProblem | None:
    """Why libcst should not be handed a file CPython accepted, or None."""
    problem = _long_chain(source) or _long_trailer_chain(source)
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


def _long_trailer_chain(source: bytes) -> SourceProblem | None:
    """A chain of more than MAX_TRAILER_CHAIN calls, subscripts or attribute lookups, found
    on CPython's own tree (its parser is linear) when the file has that many links at all."""
    # Every two links of a call/subscript chain, or of one spread over lines, leave at least
    # one marker; a long chain of bare attributes stands on one long line (checked above).
    if len(_TRAILER_LINK.findall(source)) <= MAX_TRAILER_CHAIN // 2:
        return None  # the common case: too few markers in the whole file to form one chain
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None  # not reached: CPython accepted the file
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
