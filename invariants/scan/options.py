"""Rule options: the `[tool.harness]` keys a rule declares in its record, with default,
type and help. The configuration loader validates a key with the option's `parse`; a rule
reads its value with `of(config)`, which falls back to the default when the key is unset.
"""

from __future__ import annotations

from dataclasses import dataclass

from invariants.scan.model import ScanConfig
from invariants.user_errors import UserError


class OptionError(UserError, ValueError):
    """A value of the wrong shape; the loader prefixes the file and the key."""


def parse_names(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise OptionError(f"expected an array of strings, got {value!r}")
    return tuple(value)


def parse_count(value: object, minimum: int) -> int:
    # bool is an int subclass; `true` is never a count.
    if not isinstance(value, int) or isinstance(value, bool):
        raise OptionError(f"expected an integer, got {value!r}")
    if value < minimum:
        raise OptionError(f"must be at least {minimum}, got {value}")
    return value


@dataclass(frozen=True, slots=True)
class Names:
    """An array of names (dotted, matched as each rule documents)."""

    key: str
    default: tuple[str, ...]

    def of(self, config: ScanConfig) -> tuple[str, ...]:
        value = config.options.get(self.key, self.default)
        return value if isinstance(value, tuple) else self.default

    def parse(self, value: object) -> tuple[str, ...]:
        return parse_names(value)


@dataclass(frozen=True, slots=True)
class Count:
    """A whole number; `default` None means "not set" (no check)."""

    key: str
    default: int | None
    minimum: int = 0

    def of(self, config: ScanConfig) -> int | None:
        value = config.options.get(self.key, self.default)
        return value if isinstance(value, int) else self.default

    def parse(self, value: object) -> int:
        return parse_count(value, self.minimum)


Option = Names | Count
