"""Where the fuzz target module is, found without importing it (importing it configures
Hypothesis for a session)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

TARGETS_MODULE = "invariants.fuzzing.targets"


def targets_file() -> Path:
    spec = importlib.util.find_spec(TARGETS_MODULE)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"cannot find {TARGETS_MODULE}")
    return Path(spec.origin)
