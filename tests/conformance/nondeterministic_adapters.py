"""Reference adapters whose traces depend on something besides the harness's choices, for
adapter-check's determinism guard (importable by spec, so its subprocesses load them too).

- `set_order`: the hubs asked for are created together, at the first step after them, in
  the iteration order of a set of their names, which varies with PYTHONHASHSEED;
- `module_counter`: delivery ids numbered by a module-level counter, so a mesh made later
  in the same process names its deliveries otherwise.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from invariants.adapter import Capability, Chooser, MessageSpec, Route
from invariants.trace import TraceEvent
from reference_impl.adapter import ReferenceAdapter

_IDS = itertools.count(1)


class _SetOrder(ReferenceAdapter):
    # Its hubs are made later, with the mesh's own breaker threshold.
    capabilities = ReferenceAdapter.capabilities - {Capability.BREAKER_THRESHOLD}

    def __init__(self, chooser: Chooser | None = None) -> None:
        super().__init__(chooser)
        self._asked: set[str] = set()

    def create_hub(self, address: str, *, watermark: int | None = None) -> None:
        self._asked.add(address)

    def _flush(self) -> None:
        for address in self._asked:  # set order: the hash seed's
            super().create_hub(address)
        self._asked.clear()

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        self._flush()
        return super().post(sender, target, message, identity=identity, route=route)

    def subscribe(self, subscriber: str, target: str, *, retries: int = 5) -> str:
        self._flush()
        return super().subscribe(subscriber, target, retries=retries)

    def __getattribute__(self, name: str) -> Any:
        if name in ("inject", "stop", "advance", "run_until_idle", "set_envelope_roundtrip"):
            object.__getattribute__(self, "_flush")()
        return object.__getattribute__(self, name)


class _ModuleCounter(ReferenceAdapter):
    def __init__(self, chooser: Chooser | None = None) -> None:
        super().__init__(chooser)
        self._names: dict[str, str] = {}

    def _name(self, inner: str | None) -> str | None:
        if inner is None:
            return None
        if inner not in self._names:
            self._names[inner] = f"m{next(_IDS)}"
        return self._names[inner]

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        did = super().post(sender, target, message, identity=identity, route=route)
        return self._name(did) or did

    def trace(self) -> Sequence[TraceEvent]:
        return [replace(e, delivery_id=self._name(e.delivery_id), answers=self._name(e.answers))
                for e in super().trace()]


def set_order(chooser: Chooser) -> ReferenceAdapter:
    return _SetOrder(chooser)


def module_counter(chooser: Chooser) -> ReferenceAdapter:
    return _ModuleCounter(chooser)
