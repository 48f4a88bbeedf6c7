"""The figures the checkers hold a mesh to, from `[tool.harness.params]` and the command line.

Every `CheckParams` field is a key: the seeds' numbers are the defaults, and another mesh
states its own (its timeouts, retry budget, breaker window, stop stages, the names of its
errors). A table key is validated against the field's type; a command-line `KEY=VALUE`
(`--harness-param`, `check --param`) is read as a TOML value (`30000`, `["Refused"]`,
`{h0 = 4}`), a bare word as a string. A table value names some entries and keeps the
others (`stop_stages = {Active = 300}` keeps the default `GrainDeactivation`). Every
problem is one line naming the key.
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
import typing
from collections.abc import Mapping, Sequence
from difflib import get_close_matches
from typing import Any

from invariants.checks import CheckParams
from invariants.scan.config import ConfigError

# Fields whose integers are labels, not counts or durations: a mesh may number its stop
# stages below zero (Orleans' last stage is -2**31).
_SIGNED = frozenset({"stop_stages"})


def _field_types() -> dict[str, object]:
    hints = typing.get_type_hints(CheckParams)
    return {f.name: hints[f.name] for f in dataclasses.fields(CheckParams)}


def _describe(kind: object) -> str:
    origin = typing.get_origin(kind)
    if kind is int:
        return "a non-negative integer"
    if kind is bool:
        return "true or false"
    if kind is str:
        return "a string"
    if origin in (frozenset, tuple, list, set):
        (item, *_) = typing.get_args(kind)
        return f"an array of {_describe(item).removeprefix('an ').removeprefix('a ')}s"
    if origin in (Mapping, dict):
        _, value = typing.get_args(kind)
        return f"a table of {_describe(value).removeprefix('an ').removeprefix('a ')}s"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(arg) for arg in typing.get_args(kind))
    return str(kind)


def _convert(kind: object, value: object, *, signed: bool = False) -> object:
    """`value` as `kind`; raises TypeError when it is not one."""
    origin = typing.get_origin(kind)
    if kind is type(None):
        if value is None:
            return None
        raise TypeError
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int) or (value < 0 and not signed):
            raise TypeError
        return value
    if kind is bool:
        if not isinstance(value, bool):
            raise TypeError
        return value
    if kind is str:
        if not isinstance(value, str) or not value.strip():
            raise TypeError
        return value.strip()
    if origin in (frozenset, tuple, list, set):
        if not isinstance(value, list):
            raise TypeError
        (item, *_) = typing.get_args(kind)
        items = [_convert(item, element, signed=signed) for element in value]
        return frozenset(items) if origin is frozenset else tuple(items)
    if origin in (Mapping, dict):
        if not isinstance(value, dict):
            raise TypeError
        key_kind, value_kind = typing.get_args(kind)
        return {_convert(key_kind, k): _convert(value_kind, v, signed=signed)
                for k, v in value.items()}
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(kind):
            try:
                return _convert(arg, value, signed=signed)
            except TypeError:
                continue
        raise TypeError
    raise TypeError


def params_from(values: Mapping[str, object], origin: str,
                base: CheckParams | None = None) -> CheckParams:
    """`base` (default: the seeds' figures) with `values` applied; one line per problem,
    `origin` naming where they came from (`/repo/pyproject.toml: [tool.harness.params]`)."""
    types_by_name = _field_types()
    base = base or CheckParams()
    changes: dict[str, object] = {}
    for key, value in values.items():
        kind = types_by_name.get(key)
        if kind is None:
            close = get_close_matches(key, types_by_name, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{origin} {key}: unknown parameter{hint}")
        signed = key in _SIGNED
        try:
            changes[key] = _convert(kind, value, signed=signed)
        except TypeError:
            wanted = _describe(kind).replace("non-negative ", "") if signed else _describe(kind)
            raise ConfigError(f"{origin} {key}: expected {wanted}, got {value!r}") from None
        table = changes[key]
        if isinstance(table, dict):  # a table names some entries: the rest stay
            changes[key] = {**getattr(base, key), **table}
    try:
        return dataclasses.replace(base, **changes)  # type: ignore[arg-type]
    except ValueError as exc:  # a field's own check across values
        raise ConfigError(f"{origin}: {exc}") from None


def parse_assignments(assignments: Sequence[str], origin: str) -> dict[str, object]:
    """`KEY=VALUE` strings as a table; VALUE is a TOML value, or else a bare string."""
    table: dict[str, object] = {}
    for assignment in assignments:
        key, sep, text = assignment.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"{origin}: expected KEY=VALUE, got {assignment!r}")
        try:
            table[key] = tomllib.loads(f"v = {text.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            table[key] = text.strip()
    return table


def add_param_option(parser: Any) -> None:
    """The jobs' `--param KEY=VALUE` option (repeatable), read by `parse_assignments`."""
    parser.add_argument("--param", action="append", metavar="KEY=VALUE", default=[],
                        help="a check parameter, as in [tool.harness.params] (repeatable)")
