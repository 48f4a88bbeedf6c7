"""Reliable messages over UDP: each node's `PeerLink`.

Every data datagram carries the sender's name (`src`), its boot number (`sb`, which grows
with every start of the node), a sequence number (`seq`) and the boot it is meant for
(`db`: the receiver's incarnation as the sender knows it, or None before it heard from
it). The receiver acknowledges every copy and hands each (src, sb, seq) up once. The
sender retransmits on a timer until acknowledged; a message meant for an incarnation the
receiver no longer is (it restarted) is acknowledged as stale, and the sender abandons it,
as it abandons whatever it still had in flight to a peer it learns has restarted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pigeon.settings import Settings


@dataclass
class Outgoing:
    peer: str
    seq: int
    dst_boot: int | None
    payload: dict[str, Any]
    sent_at: float
    tries: int = 0
    timer: asyncio.TimerHandle | None = None
    on_acked: Callable[[], None] | None = None


@dataclass
class PeerState:
    boot: int | None = None
    seen: dict[int, set[int]] = field(default_factory=dict)  # boot -> seqs handed up


class PeerLink(asyncio.DatagramProtocol):
    def __init__(self, name: str, boot: int, port: int,
                 peers: Mapping[str, tuple[str, int]], settings: Settings,
                 deliver: Callable[[str, dict[str, Any]], None],
                 abandoned: Callable[[str, dict[str, Any]], None]) -> None:
        self.name = name
        self.boot = boot
        self.port = port
        self.peer_addrs = dict(peers)
        self.settings = settings
        self.deliver = deliver
        self.abandoned = abandoned
        self.transport: asyncio.DatagramTransport | None = None
        self.resolved: dict[str, tuple[str, int]] = {}
        self.peers: dict[str, PeerState] = {p: PeerState() for p in sorted(peers)}
        self.outgoing: dict[tuple[str, int], Outgoing] = {}
        self.next_seq = 0
        self.closed = False
        self.seq_seen: set[int] = set()
        self.peer_restarted: Callable[[str], None] | None = None

    # Setting up and tearing down.

    async def open(self, bind_host: str | None) -> None:
        loop = asyncio.get_running_loop()
        for peer in sorted(self.peer_addrs):
            host, port = self.peer_addrs[peer]
            infos = await loop.getaddrinfo(host, port, type=2)  # SOCK_DGRAM
            self.resolved[peer] = (infos[0][4][0], port)
        await loop.create_datagram_endpoint(lambda: self, local_addr=(bind_host or "0.0.0.0",
                                                                      self.port))

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for out in list(self.outgoing.values()):
            if out.timer is not None:
                out.timer.cancel()
        self.outgoing.clear()
        if self.transport is not None:
            self.transport.close()

    def in_flight_to(self, peer: str) -> list[Outgoing]:
        return [o for o in self.outgoing.values() if o.peer == peer]

    # Sending.

    def send(self, peer: str, payload: dict[str, Any],
             on_acked: Callable[[], None] | None = None) -> Outgoing | None:
        if self.closed:
            return None
        self.next_seq += 1
        out = Outgoing(peer, self.next_seq, self.peers[peer].boot, payload,
                       asyncio.get_running_loop().time(), on_acked=on_acked)
        self.outgoing[(peer, out.seq)] = out
        self._transmit(out)
        return out

    def forget(self, out: Outgoing) -> None:
        """Stop retransmitting `out` (its sender no longer needs it)."""
        if self.outgoing.pop((out.peer, out.seq), None) is not None and out.timer:
            out.timer.cancel()

    def _transmit(self, out: Outgoing) -> None:
        if self.closed or (out.peer, out.seq) not in self.outgoing:
            return
        out.tries += 1
        if self.settings.has("retransmit-cap") and out.tries > 10:
            self.outgoing.pop((out.peer, out.seq), None)
            return
        self._raw(out.peer, {"t": "data", "src": self.name, "sb": self.boot, "seq": out.seq,
                             "db": out.dst_boot, "p": out.payload})
        loop = asyncio.get_running_loop()
        out.timer = loop.call_later(self.settings.retransmit_ms / 1000, self._transmit, out)

    def _raw(self, peer: str, message: dict[str, Any]) -> None:
        if self.transport is None or self.closed:
            return
        self.transport.sendto(json.dumps(message, sort_keys=True).encode(),
                              self.resolved[peer])

    # Receiving.

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        if self.closed:
            return
        message = json.loads(data)
        src = message["src"]
        if src not in self.peers:
            return
        if message["t"] == "ack":
            self._acked(src, message)
            return
        # Every copy is acknowledged, so a lost acknowledgement costs one retransmission.
        stale = message["db"] is not None and message["db"] != self.boot
        self._raw(src, {"t": "ack", "src": self.name, "seq": message["seq"],
                        "ab": message["sb"], "rb": self.boot, "stale": stale})
        self._learn_boot(src, message["sb"])
        if stale or message["sb"] != self.peers[src].boot:
            return
        if self.settings.has("seq-only-dedupe"):
            if message["seq"] in self.seq_seen:
                return
            self.seq_seen.add(message["seq"])
        else:
            seen = self.peers[src].seen.setdefault(message["sb"], set())
            if message["seq"] in seen:
                return
            if not self.settings.has("late-dedupe"):
                seen.add(message["seq"])
            else:
                # Mark it seen once its handler has run (the handler may still refuse it).
                asyncio.get_running_loop().call_later(0.002, seen.add, message["seq"])
        self.deliver(src, message["p"])

    def _acked(self, src: str, message: dict[str, Any]) -> None:
        if message["ab"] != self.boot:
            return
        self._learn_boot(src, message["rb"])
        out = self.outgoing.pop((src, message["seq"]), None)
        if out is None:
            return
        if out.timer is not None:
            out.timer.cancel()
        if message["stale"]:
            self.abandoned(src, out.payload)
        elif out.on_acked is not None:
            out.on_acked()

    def _learn_boot(self, peer: str, boot: int) -> None:
        state = self.peers[peer]
        if state.boot is not None and boot <= state.boot:
            return
        had = state.boot
        state.boot = boot
        if had is None:
            for out in self.in_flight_to(peer):
                if out.dst_boot is None:
                    out.dst_boot = boot
            return
        # The peer restarted: what was meant for its previous life is lost with it.
        for out in sorted(self.in_flight_to(peer), key=lambda o: o.seq):
            self.forget(out)
        if self.peer_restarted is not None:
            self.peer_restarted(peer)
