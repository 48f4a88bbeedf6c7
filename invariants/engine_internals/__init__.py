"""The one place the harness reaches into Hypothesis' and HypoFuzz's private names.

Hypothesis keeps a state machine's rule swarm, its feature flags, its function digest and
its pytest skip exceptions in private modules and attributes; HypoFuzz has no public
Python interface at all, and the fuzzing sessions replace parts of its worker loop, its
provider and its coverage collector. Every such name is imported or looked up here, and
only here (`tests/test_engine_internals.py` holds every other module to that, and checks
the shape of each name on the installed versions):

- `hypothesis_private`: Hypothesis' private names (feature flags, `ConjectureData`,
  `function_digest`, the rules strategy of a state machine, the digest and seed hooks).
- `hypofuzz_database`: HypoFuzz's database (progress reports, worker ids, phases).
- `hypofuzz_private`: HypoFuzz's hub, worker loop, targets and collection, and the
  replacements the sessions make in them.
- `replay_alignment`: HypoFuzz's provider replaying a choice sequence in step with the
  test's draws.
- `coverage_scope`: HypoFuzz's coverage collector measuring the mesh, not the harness.

A name that a new release moved raises `InternalMoved` at import (or at first use, for
attributes set on instances), naming the name and the versions the harness is pinned to,
instead of an `AttributeError` deep inside a run or a replacement that silently does
nothing. Nothing here imports the rest of the harness.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

HYPOTHESIS_PIN = "hypothesis>=6.155.2,<6.156"
HYPOFUZZ_PIN = "hypofuzz>=25.11.1,<25.12"
SHAPE_TESTS = "tests/test_engine_internals.py"


class InternalMoved(RuntimeError):
    """A private Hypothesis or HypoFuzz name the harness uses is not where it was."""


def moved(name: str, pin: str, detail: str = "") -> InternalMoved:
    more = f" ({detail})" if detail else ""
    return InternalMoved(
        f"{name} is missing{more}: the harness uses this private name and is pinned to "
        f"{pin}; {SHAPE_TESTS} names what moved in the installed version")


@contextmanager
def private_imports(package: str, pin: str) -> Iterator[None]:
    """Imports of `package`'s private names: one that fails because a module or name moved
    raises `InternalMoved`; `package` itself not being installed stays an ImportError."""
    try:
        yield
    except ImportError as error:
        if isinstance(error, ModuleNotFoundError) and error.name == package:
            raise
        raise moved(error.name or package, pin, str(error)) from error


def private_attribute(owner: Any, name: str, pin: str) -> Any:
    """`owner.name`, or `InternalMoved` naming it."""
    try:
        return getattr(owner, name)
    except AttributeError:
        owner_name = getattr(owner, "__qualname__", None) or getattr(owner, "__name__", None)
        raise moved(f"{owner_name or type(owner).__qualname__}.{name}", pin) from None


def hypofuzz_installed() -> bool:
    """Whether HypoFuzz (the `fuzz` extra) can be imported."""
    try:
        import hypofuzz  # noqa: F401
    except ImportError:
        return False
    return True
