"""The relay: nodes, their links, the routers, the watches and the stop on one event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from relaycore.answers import Answers
from relaycore.breaker import StormBreaker
from relaycore.calls import CallRouter, Placement, open_placement
from relaycore.config import RelayConfig
from relaycore.frames import Frame, Note, Path, make_frame
from relaycore.legs import Gauge
from relaycore.link import Link
from relaycore.node import RelayNode
from relaycore.shutdown import Shutdown
from relaycore.switchboard import Switchboard
from relaycore.telemetry import Telemetry, quiet
from relaycore.watch import Watch, Watches

# Switches for variants of the relay under test, each off by default (`Relay(bugs=...)`).
KNOWN_BUGS = frozenset(f"b{n:02d}" for n in range(1, 18))


class Relay:
    def __init__(self, loop: asyncio.AbstractEventLoop, config: RelayConfig | None = None, *,
                 telemetry: Telemetry = quiet, placement: Placement = open_placement,
                 bugs: Iterable[str] = ()) -> None:
        self.loop = loop
        self.config = config or RelayConfig()
        self.tel = telemetry
        self.bugs = frozenset(bugs)
        unknown = sorted(self.bugs - KNOWN_BUGS)
        if unknown:
            raise ValueError(f"Relay: unknown bug switch(es) {unknown}")
        self.nodes: dict[str, RelayNode] = {}
        self.sealed = False  # the stop closed every intake gate
        self.stopped = False  # past the stop's last stage: nothing is answered any more
        self._counters: dict[str, int] = {}
        self._downlinks: dict[str, Link] = {}
        self._extra_latency_ms: dict[str, int] = {}
        self.gauge = Gauge(self)
        self.answers = Answers(self)
        self.switchboard = Switchboard(self)
        self.calls = CallRouter(self, placement)
        self.watches = Watches(self)
        self.shutdown = Shutdown(self)

    # Identity and time.

    def next_id(self, prefix: str) -> str:
        self._counters[prefix] = self._counters.get(prefix, 0) + 1
        return f"{prefix}{self._counters[prefix]}"

    def now_ms(self) -> int:
        return round(self.loop.time() * 1000)

    # Nodes and links.

    def add_node(self, address: str, *, watermark: int | None = None,
                 breaker_threshold: int | None = None) -> RelayNode:
        """Create the node at `address`, or reconfigure the one there."""
        if not address:
            raise ValueError("add_node: the address must not be empty")
        if watermark is not None and watermark < 1:
            raise ValueError(f"add_node({address!r}): watermark must be >= 1, got {watermark}")
        config = self.config
        threshold = config.breaker_threshold if breaker_threshold is None else breaker_threshold
        mark = config.watermark if watermark is None else watermark
        node = self.nodes.get(address)
        if node is None:
            breaker = StormBreaker(threshold, config.breaker_window_ms,
                                   config.breaker_cooldown_ms, config.breaker_max_keys,
                                   bugs=self.bugs)
            node = RelayNode(self, address, mark, breaker)
            node.gate_open = not self.sealed
            self.nodes[address] = node
            node.connection_made(Link(self.loop, self.switchboard, lambda: 0))
            self._downlinks[address] = Link(self.loop, node, lambda: self._latency_ms(address))
        else:
            node.watermark = mark
            node.breaker.threshold = threshold
        self.tel("hub_created", hub=address, watermark=mark)
        return node

    def ensure_node(self, address: str) -> RelayNode:
        node = self.nodes.get(address)
        return node if node is not None else self.add_node(address)

    def remove_node(self, address: str) -> None:
        node = self.nodes.pop(address, None)
        link = self._downlinks.pop(address, None)
        if link is not None:
            link.close()
        if node is not None:
            node.connection_lost(None)

    def downlink(self, address: str) -> Link | None:
        return self._downlinks.get(address)

    def shape_link(self, address: str, extra_ms: int) -> None:
        """Every frame to `address` takes `extra_ms` longer (a slow destination)."""
        self._extra_latency_ms[address] = extra_ms

    def _latency_ms(self, address: str) -> int:
        return self.config.link_ms + self._extra_latency_ms.get(address, 0)

    # Sending.

    def submit(self, frame: Frame, path: Path) -> None:
        """Send a frame: straight onto its node's intake, routed, or as a call."""
        if path == "routed":
            self.switchboard.dispatch(frame)
        elif path == "call":
            self.calls.dispatch(frame)
        else:
            self.hand_over(frame, where=frame["src"])

    def hand_over(self, frame: Frame, *, where: str) -> None:
        """Straight onto the destination's intake, no router; a missing one is answered."""
        node = self.nodes.get(frame["dst"])
        if node is None:
            self.answers.answer(frame, "NotFound", where=where, local=True)
        else:
            node.data_received(frame)

    def post(self, sender: str, target: str, type_name: str, *, cls: str = "user",
             key: str | None = None, identity: str | None = "app",
             path: Path = "routed") -> str:
        """Send a note from `sender` (its node made on first use); returns the frame's id."""
        self.ensure_node(sender)
        frame = make_frame(self.next_id("d"), sender, target, type_name, cls,
                           Note(cls=cls, key=key), identity)
        self.submit(frame, path)
        return str(frame["id"])

    def open_watch(self, subscriber: str, target: str, retries: int | None = None) -> Watch:
        """A watch not yet running: start `watch.run()` as a task and keep it in `watch.task`."""
        self.ensure_node(subscriber)
        return self.watches.open(subscriber, target,
                                 self.config.watch_retries if retries is None else retries)

    def watch(self, subscriber: str, target: str, retries: int | None = None) -> Watch:
        watch = self.open_watch(subscriber, target, retries)
        watch.task = self.loop.create_task(watch.run())
        return watch

    async def stop(self, graceful: bool = True) -> None:
        if self.shutdown.begin(graceful):
            await self.shutdown.stages()

    # What the stop's stages do.

    def drop_held_calls(self) -> None:
        for node in self.nodes.values():
            node.drop_held_calls()

    def seal_nodes(self) -> None:
        self.sealed = True
        for node in self.nodes.values():
            node.gate_open = False

    def cut_everything(self) -> None:
        self.stopped = True
        self.gauge.cut_all()
        self.watches.close_all("silo_stopped")
