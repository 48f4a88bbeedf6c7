"""A hand-driven run of a courier adapter: explicit steps, explicit faults, an explicit
chooser; the trace judged by the named invariant's checker (invariants.checks.check)."""
from __future__ import annotations

import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from courier import harness_adapter

from invariants.adapter import Chooser, Fault, FaultKind, FirstChooser, MessageSpec, Route
from invariants.checks import check
from invariants.checks.harness_facts import Injected, NetworkHeld, Posted, StopAsked, Subscribed
from invariants.checks.params import with_figures
from invariants.trace import MessageClass

PARAMS = with_figures(tomllib.loads(
    (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
)["tool"]["harness"]["params"])


class Run:
    """One mesh, driven by hand; records the harness facts the driver would."""

    def __init__(self, factory: Callable[[Chooser], Any], chooser: Chooser | None = None):
        self.a = factory(chooser or FirstChooser())
        self.facts: list[Any] = []
        self.declared: dict[str, MessageClass] = {}

    def _seq(self) -> int:
        return len(self.a.trace())

    def hub(self, *names: str) -> None:
        for n in names:
            self.a.create_hub(n)

    def post(self, sender: str, target: str, type_name: str = "Req", *,
             cls: MessageClass = MessageClass.USER, identity: str | None = "user",
             route: Route = Route.MONOLITH, key: str | None = None) -> str:
        spec = MessageSpec(type_name, cls, key)
        seq, now = self._seq(), self.a.now_ms()
        d = self.a.post(sender, target, spec, identity=identity, route=route)
        self.declared[d] = cls
        self.facts.append(Posted(d, sender, target, type_name, cls, key, identity, route,
                                 now, seq))
        return d

    def subscribe(self, subscriber: str, target: str, retries: int = 3) -> str:
        seq, now = self._seq(), self.a.now_ms()
        sid = self.a.subscribe(subscriber, target, retries=retries)
        self.facts.append(Subscribed(sid, subscriber, target, retries, now, seq))
        return sid

    def inject(self, kind: FaultKind, target: str, duration_ms: int = 0, count: int = 1) -> None:
        seq, now = self._seq(), self.a.now_ms()
        self.a.inject(Fault(kind, target, duration_ms=duration_ms, count=count))
        self.facts.append(Injected(kind, target, count, duration_ms, now, seq))
        if kind.value in ("partition_node", "isolate_outbound", "hold_links", "crash_node"):
            self.facts.append(NetworkHeld(now, seq))

    def stop(self, graceful: bool = True) -> None:
        seq, now = self._seq(), self.a.now_ms()
        self.a.stop(graceful=graceful)
        self.facts.append(StopAsked(graceful, now, seq))

    def advance(self, ms: int) -> None:
        self.a.advance(ms)

    def finish(self) -> None:
        assert self.a.run_until_idle(600_000), "the mesh did not go quiet"

    def violations(self, inv: str) -> list[str]:
        vs = check(inv, self.a.trace(), PARAMS, now_ms=self.a.now_ms(), final=True,
                   declared=self.declared, facts=self.facts,
                   capabilities=frozenset(self.a.capabilities))
        return [v.message for v in vs]


def prove(name: str, inv: str, scenario: Callable[[Run], None], *,
          chooser: Callable[[], Chooser] = FirstChooser,
          healthy: Callable[[Run], None] | None = None) -> None:
    """The scenario on the bug's factory (must violate `inv`) and on `make` (must not);
    with `healthy`, the same workload without the network fault on the bug's factory."""
    bug = getattr(harness_adapter, f"bug_{name}")
    runs = [("bug", bug, scenario, True), ("clean", harness_adapter.make, scenario, False)]
    if healthy is not None:
        runs.append(("bug, healthy FIFO network", bug, healthy, False))
    ok = True
    for label, factory, body, want in runs:
        run = Run(factory, chooser())
        body(run)
        run.finish()
        found = run.violations(inv)
        print(f"{name} {label}: {inv} {'VIOLATED' if found else 'holds'}")
        for msg in found[:2]:
            print(f"    {msg[:300]}")
        ok &= bool(found) == want
    print(f"{name}: {'PROVED' if ok else 'NOT PROVED'}")
    sys.exit(0 if ok else 1)


class Deviate:
    """FIFO, except that once armed the next decision with 2+ options takes option 1."""

    def __init__(self) -> None:
        self.armed = False
        self.taken: list[str] = []

    def choose(self, options: int, why: str) -> int:
        if self.armed and options >= 2:
            self.armed = False
            self.taken.append(why)
            return 1
        return 0
