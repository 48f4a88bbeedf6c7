"""Streams on the simulated network behave as on real loopback sockets: the same programs
give the same transcript (bytes, their order, ends of stream, errors) on `asyncio.run` with
127.0.0.1 and on the virtual loop, where no real socket is made; TCP's order holds however
the network delays segments; a fast writer against a slow reader is paused."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from functools import cache
from typing import Any

import pytest
from net_helpers import no_real_sockets
from net_programs import PROGRAMS, Place, Transcript, burst, flow, net_place, stock_place

from invariants.adapter import Chooser, SeededChooser
from invariants.aio.net import Network, run
from invariants.aio.net.tcp import Pipe

Program = Callable[[Place], Coroutine[Any, Any, Transcript]]


@cache
def on_stock(name: str) -> Transcript:
    return asyncio.run(PROGRAMS[name](stock_place()))


def on_network(program: Program, chooser: Chooser | None = None) -> tuple[Transcript, Any]:
    net = Network()
    with no_real_sockets():
        result = run(program(net_place(net)), network=net, chooser=chooser)
    return result.result, result.schedule


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_same_transcript_as_on_loopback_sockets(name: str) -> None:
    transcript, schedule = on_network(PROGRAMS[name])
    assert transcript == on_stock(name)
    assert schedule.reorderings() == []  # all-zero choices: a healthy network


def test_the_comparison_sees_a_program_that_differs() -> None:
    """Negative control: a transcript is no constant; the echo and the chat differ."""
    assert on_network(PROGRAMS["echo"])[0] != on_stock("chat")
    assert len(set(map(str, (on_stock(name) for name in PROGRAMS)))) == len(PROGRAMS)


@pytest.mark.parametrize("name", ["echo", "chat", "burst", "aborted", "refused", "flushed"])
def test_tcp_keeps_its_promises_whatever_the_network_decides(name: str) -> None:
    """Holds delay segments by up to 3 s, in every seeded run; the bytes, their order and
    the ends of stream are those of the loopback run."""
    held = 0
    for seed in range(4):
        transcript, schedule = on_network(PROGRAMS[name], SeededChooser(seed))
        assert transcript == on_stock(name), f"seed {seed}"
        held += sum("held" in decision.ran for decision in schedule.reorderings())
    assert held > 0  # the seeds did hold segments


def test_reassembly_is_what_keeps_the_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control: a receiver that hands segments over as they arrive, not in the
    order they were sent, loses the order under the same seeded holds."""
    def as_they_come(pipe: Pipe, segment: Any) -> None:
        pipe.conn.receive(pipe, segment)

    def outcome(seed: int) -> Transcript:
        try:
            return on_network(burst, SeededChooser(seed))[0]
        except OSError as exc:  # an end of stream ahead of data: the server reset the rest
            return [repr(exc)]

    monkeypatch.setattr(Pipe, "arrive", as_they_come)
    assert any(outcome(seed) != on_stock("burst") for seed in range(4))


FAST_WRITER = 16 << 20  # more than loopback's socket buffers take without a reader
SMALL_WRITE = 32 * 1024  # less than either side's buffers


@pytest.mark.parametrize("total", [FAST_WRITER, SMALL_WRITE])
def test_a_fast_writer_against_a_slow_reader_is_paused(total: int) -> None:
    """The writer is paused (drain waits) on both loops when the reader does not read, and
    not when what it writes fits the buffers (the negative control); no byte is lost."""
    stock = asyncio.run(flow(stock_place(), total))
    virtual, _schedule = on_network(lambda place: flow(place, total))
    assert virtual == stock
    assert stock == [f"writer paused: {total == FAST_WRITER}", "bytes intact: True"]
