"""The virtual loop's argument checks, in one place, so every entry point (`VirtualLoop`,
`run`, `AsyncMeshAdapter`) rejects a bad value with the same line: a `ValueError` (a
`TypeError` for a value of the wrong kind) naming the argument, what it takes and what it
got."""

from __future__ import annotations

from invariants.aio.schedule import Legality

LEGALITIES = ", ".join(repr(legality.value) for legality in Legality)


def step_budget(value: object) -> int | None:
    """A step budget is None (no bound) or a positive whole number of steps: with 0 no
    step could run at all."""
    if value is None:
        return None
    if not _is_whole(value):
        raise TypeError(
            f"step_budget must be a positive int or None (no bound), got {value!r}"
        )
    assert isinstance(value, int)
    if value < 1:
        raise ValueError(
            f"step_budget must be a positive int or None (no bound), got {value!r}"
        )
    return value


def legality(value: object) -> Legality:
    """A `Legality`, or its string value (`"lanes"`, `"reorder_all"`)."""
    if isinstance(value, Legality):
        return value
    if isinstance(value, str):
        try:
            return Legality(value)
        except ValueError:
            pass
    raise ValueError(f"legality must be one of {LEGALITIES} (a Legality), got {value!r}")


def whole(call: str, name: str, value: object, unit: str) -> int:
    """A whole non-negative count of `unit` (virtual time is integer microseconds: a
    fraction, an infinity or a bool is a mistake, not a duration)."""
    if not _is_whole(value):
        raise TypeError(
            f"{call}: {name} must be a whole number of {unit} (an int >= 0), got {value!r}"
        )
    assert isinstance(value, int)
    if value < 0:
        raise ValueError(f"{call}: {name} must be >= 0, got {value}")
    return value


def _is_whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
