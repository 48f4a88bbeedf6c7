"""Each pre-fix mutant's adapter factory under a `module:factory` name.

`invariants.fuzzing.mutant_adapters:M2` names mutant M2's factory wherever an adapter
spec is accepted (`--harness-adapter`, `python -m harness fuzz --adapter`), so a failure a
session found in a mutant can be replayed by the plugin against the same mutant. The
mutant is built on first use.
"""

from __future__ import annotations

from invariants.adapter import AdapterFactory


def __getattr__(name: str) -> AdapterFactory:
    if not (len(name) == 2 and name[0] == "M" and name[1].isdigit()):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from invariants.fuzzing.config import FuzzConfigError, mutant_factory

    try:
        return mutant_factory(name)
    except FuzzConfigError as exc:
        raise AttributeError(str(exc)) from None
