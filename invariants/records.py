"""The one loader of every registry: rules, checkers, mutants, commands.

A registry is a tuple of module paths, in order; each module defines its record under one
attribute name (`RULE`, `check`, `MUTANT`, `COMMAND`) beside the code it describes. Adding
a thing is its module plus its line in the registry.

Beside the layers, like `invariants.user_errors`: it imports nothing of the project, and
every layer may load a registry with it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import TypeVar

Record = TypeVar("Record")


def load_one(module: str, attribute: str, kind: type[Record]) -> Record:
    """The record `module` defines as `attribute`; a missing one, or one of another type,
    is a `TypeError` naming the module."""
    record = getattr(importlib.import_module(module), attribute, None)
    if not isinstance(record, kind):
        raise TypeError(f"{module}: {attribute} must be a {kind.__qualname__} record")
    return record


def load(modules: Iterable[str], attribute: str, kind: type[Record]) -> tuple[Record, ...]:
    """The record of each module, in the order given."""
    return tuple(load_one(module, attribute, kind) for module in modules)
