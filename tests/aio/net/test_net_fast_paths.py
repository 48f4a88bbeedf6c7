"""What the network's fast paths keep: a segment bigger than one read still comes in
reads of asyncio's size; a chooser that reads `why` is told every verdict, while the
stock choosers that never read it are handed "" (their schedule the same); a recorded
decision is still a value."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from net_helpers import no_real_sockets
from net_programs import PROGRAMS, net_place

from invariants.adapter import FirstChooser
from invariants.aio.net import Network, run, streams
from invariants.aio.schedule import Decision

KIB = 1024


def reads(window: int, size: int) -> list[int]:
    """The sizes of the reads a protocol gets for one write of `size` bytes on a network
    whose TCP window is `window` bytes (the bytes checked intact)."""
    net = Network(window=window)
    sent = bytes(range(256)) * (size // 256)

    class Sizes(asyncio.Protocol):
        def __init__(self) -> None:
            self.got = bytearray()
            self.sizes: list[int] = []
            self.done = asyncio.get_running_loop().create_future()

        def data_received(self, data: bytes) -> None:
            self.sizes.append(len(data))
            self.got += data

        def eof_received(self) -> None:
            self.done.set_result(None)

    async def main() -> list[int]:
        protocol = Sizes()
        loop = asyncio.get_running_loop()

        async def serve() -> asyncio.Server:
            return await loop.create_server(lambda: protocol, None, 80)

        async def client() -> None:
            _reader, writer = await asyncio.open_connection("srv", 80)
            writer.write(sent)
            writer.write_eof()
            await protocol.done
            writer.close()

        server = await net.host("srv").create_task(serve())
        await net.host("cli").create_task(client())
        server.close()
        assert bytes(protocol.got) == sent
        return protocol.sizes

    with no_real_sockets():
        sizes: list[int] = run(main(), network=net).result
    return sizes


def test_a_segment_bigger_than_one_read_comes_in_reads_of_asyncios_size() -> None:
    assert reads(window=1024 * KIB, size=300 * KIB) == [
        streams.MAX_READ, 300 * KIB - streams.MAX_READ]
    assert reads(window=64 * KIB, size=100 * KIB) == [64 * KIB, 36 * KIB]  # one read a segment


def test_the_read_size_check_bites(monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control: with reads as big as the segment, the 300 KiB come in one."""
    monkeypatch.setattr(streams, "MAX_READ", 1024 * KIB)
    assert reads(window=1024 * KIB, size=300 * KIB) == [300 * KIB]


class Reading(FirstChooser):
    """FirstChooser's picks, from a class that reads `why` (as any subclass may)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def choose(self, options: int, why: str) -> int:
        self.asked.append(why)
        return super().choose(options, why)


def test_a_chooser_that_reads_why_is_told_every_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def echo(chooser: FirstChooser) -> str:
        net = Network()
        with no_real_sockets():
            return run(PROGRAMS["echo"](net_place(net)), network=net,
                       chooser=chooser).schedule.dumps()

    reading = Reading()
    told = echo(reading)
    verdicts = [why for why in reading.asked if why.startswith("verdict at t=")]
    assert all(reading.asked) and verdicts
    assert any("delivered segment cli→srv (4 bytes) after 1 ms; or held segment cli→srv"
               in why for why in verdicts)

    handed: list[str] = []

    def first(self: FirstChooser, options: int, why: str) -> int:
        handed.append(why)
        return 0

    monkeypatch.setattr(FirstChooser, "choose", first)
    assert echo(FirstChooser()) == told  # the same choices, the same record
    assert handed == [""] * len(reading.asked)  # the control: nothing formatted for it


def test_a_decision_is_still_a_value() -> None:
    decision = Decision(step=3, time_us=1000, options=3, chosen=0, ran="verdict: delivered")
    same = replace(decision)
    assert same == decision and hash(same) == hash(decision)
    assert len({decision, same}) == 1
    other = replace(decision, chosen=1)
    assert other != decision and len({decision, other}) == 2  # the control
